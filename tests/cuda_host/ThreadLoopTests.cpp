// Thread-loop clones (Kernel.h: forEachThread, PerThread, exitThread, launchThreadLoops), written as
// the frontend emits them for kernels whose barriers are top-level statements, each checked against a
// plain CPU computation and, where it matters, against the fiber form of the same kernel.
#include "HostKernelTestSupport.h"

// An emitted clone may bind a slot in a segment that only writes it (`auto& left = ...set(...)`).
#pragma GCC diagnostic ignored "-Wunused-variable"

#include <dispar/hostk.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

namespace {

namespace hk = ::dispar::hostk;

// Several host threads whatever the caller's environment says (see KernelTests.cpp).
const bool kSeveralHostThreads = (setenv("DISPAR_HOST_THREADS", "4", /*overwrite=*/1), true);

using ::dispar::testing::randomFloats;

// __global__ void fir(const float* in, float* out, const float* taps, int n, int numTaps) {
//   __shared__ float sTaps[64];
//   for (int k = threadIdx.x; k < numTaps; k += blockDim.x) sTaps[k] = taps[k];
//   __syncthreads();
//   int i = blockIdx.x * blockDim.x + threadIdx.x;
//   if (i >= n) return;
//   float acc = 0.0f;
//   for (int k = 0; k < numTaps; ++k) if (i - k >= 0) acc += sTaps[k] * in[i - k];
//   out[i] = acc;
// }
void host_fir(const float* in, float* out, const float* taps, int n, int numTaps) {
  ::dispar::hostk::SharedRef<float[64]> sTaps = ::dispar::hostk::sharedVariable<float[64]>([] {});
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    for (int k = ::dispar::hostk::threadIdx().x; k < numTaps; k += ::dispar::hostk::blockDim().x) sTaps[k] = taps[k];
  });
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    int i = ::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int k = 0; k < numTaps; ++k)
      if (i - k >= 0) acc += sTaps[k] * in[i - k];
    out[i] = acc;
  });
}

TEST(ThreadLoops, FirFilterWithTapsInSharedMemory) {
  const int n = 20000, numTaps = 64;
  const std::vector<float> in = randomFloats(n, 13), taps = randomFloats(numTaps, 17);
  std::vector<float> out(n, 0.0f);
  ASSERT_EQ(hk::launchThreadLoops((n + 255) / 256, 256, 0, &host_fir, in.data(), out.data(), taps.data(), n, numTaps),
            hk::cudaSuccess);
  const std::vector<float> expected = ::dispar::testing::referenceFir(in, taps);
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], expected[i]) << "sample " << i;
}

// __global__ void rotate(const int* in, int* out) {
//   __shared__ int tile[8][8];
//   int x = threadIdx.x, y = threadIdx.y;     (one declaration each, as thread loops need)
//   int value = in[(blockIdx.x * 8 + y) * 8 + x];
//   tile[y][x] = value;
//   __syncthreads();
//   int left = tile[y][(x + 7) % 8];          (the neighbour's value: needs the barrier)
//   __syncthreads();
//   tile[y][x] = left + value;                (everyone read before anyone overwrites)
//   __syncthreads();
//   out[(blockIdx.x * 8 + y) * 8 + x] = tile[(y + 1) % 8][x] * 1000 + x * 10 + y;
// }
void host_rotate(const int* in, int* out) {
  ::dispar::hostk::SharedRef<int[8][8]> tile = ::dispar::hostk::sharedVariable<int[8][8]>([] {});
  ::dispar::hostk::PerThread<int> dispar_carried_x;
  ::dispar::hostk::PerThread<int> dispar_carried_y;
  ::dispar::hostk::PerThread<int> dispar_carried_value;
  ::dispar::hostk::PerThread<int> dispar_carried_left;
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    auto& x = dispar_carried_x.set(dispar_thread, ::dispar::hostk::threadIdx().x);
    auto& y = dispar_carried_y.set(dispar_thread, ::dispar::hostk::threadIdx().y);
    auto& value = dispar_carried_value.set(dispar_thread, in[(::dispar::hostk::blockIdx().x * 8 + y) * 8 + x]);
    tile[y][x] = value;
  });
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    auto& x = dispar_carried_x[dispar_thread];
    auto& y = dispar_carried_y[dispar_thread];
    auto& left = dispar_carried_left.set(dispar_thread, tile[y][(x + 7) % 8]);
  });
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    auto& x = dispar_carried_x[dispar_thread];
    auto& y = dispar_carried_y[dispar_thread];
    auto& value = dispar_carried_value[dispar_thread];
    auto& left = dispar_carried_left[dispar_thread];
    tile[y][x] = left + value;
  });
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    auto& x = dispar_carried_x[dispar_thread];
    auto& y = dispar_carried_y[dispar_thread];
    out[(::dispar::hostk::blockIdx().x * 8 + y) * 8 + x] = tile[(y + 1) % 8][x] * 1000 + x * 10 + y;
  });
}

TEST(ThreadLoops, ValuesLiveAcrossBarriersArePerThreadIn2DBlocks) {
  const unsigned blocks = 5;
  std::vector<int> in(blocks * 64), out(blocks * 64, -1);
  std::iota(in.begin(), in.end(), 3);
  ASSERT_EQ(hk::launchThreadLoops(blocks, hk::dim3(8, 8), 0, &host_rotate, in.data(), out.data()), hk::cudaSuccess);
  for (unsigned b = 0; b < blocks; ++b)
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 8; ++x) {
        auto at = [&](int xx, int yy) { return in[(b * 8 + yy) * 8 + xx]; };
        const int below = (y + 1) % 8;
        const int expected = (at((x + 7) % 8, below) + at(x, below)) * 1000 + x * 10 + y;
        ASSERT_EQ(out[(b * 8 + y) * 8 + x], expected) << "block " << b << " thread " << x << "," << y;
      }
}

// __global__ void earlyExit(const int* keep, int* sums) {
//   __shared__ int total;
//   if (threadIdx.x == 0) total = 0;
//   __syncthreads();
//   if (!keep[threadIdx.x]) return;          // exited threads take no part in later segments
//   atomicAdd(&total, 1);
//   __syncthreads();
//   if (threadIdx.x == blockDim.x - 1) sums[blockIdx.x] = total;
//   if (!keep[threadIdx.x]) sums[blockIdx.x] = -1000;   // never: this thread returned
// }
void host_earlyExit(const int* keep, int* sums) {
  ::dispar::hostk::SharedRef<int> total = ::dispar::hostk::sharedVariable<int>([] {});
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    if (::dispar::hostk::threadIdx().x == 0) total = 0;
  });
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    if (!keep[::dispar::hostk::threadIdx().x]) return ::dispar::hostk::exitThread(dispar_thread);
    ::dispar::hostk::atomicAdd(&total, 1);
  });
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    if (::dispar::hostk::threadIdx().x == ::dispar::hostk::blockDim().x - 1)
      sums[::dispar::hostk::blockIdx().x] = total;
    if (!keep[::dispar::hostk::threadIdx().x]) sums[::dispar::hostk::blockIdx().x] = -1000;
  });
}

TEST(ThreadLoops, ThreadsThatReturnSkipLaterSegments) {
  const unsigned n = 128, blocks = 9;
  std::vector<int> keep(n);
  for (unsigned t = 0; t < n; ++t) keep[t] = (t % 3 != 0) || t == n - 1;
  std::vector<int> sums(blocks, -1);
  ASSERT_EQ(hk::launchThreadLoops(blocks, n, 0, &host_earlyExit, keep.data(), sums.data()), hk::cudaSuccess);
  const int kept = std::accumulate(keep.begin(), keep.end(), 0);
  for (unsigned b = 0; b < blocks; ++b) EXPECT_EQ(sums[b], kept) << "block " << b;
}

// __global__ void order(unsigned* out) {
//   __shared__ unsigned next;
//   if (threadIdx.x + threadIdx.y + threadIdx.z == 0) next = 0;
//   __syncthreads();
//   unsigned linear = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
//   out[blockIdx.x * blockDim.x * blockDim.y * blockDim.z + linear] = next++;   (one at a time on the host)
// }
void host_order(unsigned* out) {
  ::dispar::hostk::SharedRef<unsigned> next = ::dispar::hostk::sharedVariable<unsigned>([] {});
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    if (::dispar::hostk::threadIdx().x + ::dispar::hostk::threadIdx().y + ::dispar::hostk::threadIdx().z == 0) next = 0;
  });
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    unsigned linear =
        (::dispar::hostk::threadIdx().z * ::dispar::hostk::blockDim().y + ::dispar::hostk::threadIdx().y) *
            ::dispar::hostk::blockDim().x +
        ::dispar::hostk::threadIdx().x;
    out[::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x * ::dispar::hostk::blockDim().y *
            ::dispar::hostk::blockDim().z +
        linear] = next++;
  });
}

TEST(ThreadLoops, EveryThreadOf3DBlockRunsOnceWithItsOwnIndex) {
  // Each thread writes how many threads ran before it: the loop visits every (x, y, z) exactly once.
  const hk::dim3 shape(5, 3, 2);
  const unsigned blocks = 4, volume = 5 * 3 * 2;
  std::vector<unsigned> out(blocks * volume, 9999);
  ASSERT_EQ(hk::launchThreadLoops(blocks, shape, 0, &host_order, out.data()), hk::cudaSuccess);
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned i = 0; i < volume; ++i) ASSERT_EQ(out[b * volume + i], i) << "block " << b;
}

// __global__ void failing(int* marks) {
//   marks[blockIdx.x * blockDim.x + threadIdx.x] = 1;
//   __syncthreads();
//   if (blockIdx.x == 2 && threadIdx.x == 5) throw std::runtime_error("bad sample");   (host code only)
//   __syncthreads();
//   marks[blockIdx.x * blockDim.x + threadIdx.x] = 2;
// }
void host_failing(int* marks) {
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    marks[::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x] = 1;
  });
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    if (::dispar::hostk::blockIdx().x == 2 && ::dispar::hostk::threadIdx().x == 5)
      throw std::runtime_error("bad sample");
  });
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    marks[::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x] = 2;
  });
}

TEST(ThreadLoops, AThrowingThreadFailsTheLaunchAndStopsItsBlock) {
  const unsigned threads = 16, blocks = 3;
  std::vector<int> marks(threads * blocks, 0);
  testing::internal::CaptureStderr();
  EXPECT_EQ(hk::launchThreadLoops(blocks, threads, 0, &host_failing, marks.data()), hk::cudaErrorLaunchFailure);
  const std::string errors = testing::internal::GetCapturedStderr();
  EXPECT_NE(errors.find("block (2,0,0) thread (5,0,0): bad sample"), std::string::npos) << errors;
  EXPECT_EQ(hk::cudaGetLastError(), hk::cudaErrorLaunchFailure);
  for (unsigned t = 0; t < threads; ++t) EXPECT_EQ(marks[2 * threads + t], 1) << "block 2 ran past the failure";
}

// A tree reduction: the barrier is in a loop every thread runs alike, which runs once per block.
// __global__ void reduce(const int* in, long long* out) {
//   __shared__ long long sums[256];
//   unsigned t = threadIdx.x;
//   sums[t] = in[blockIdx.x * blockDim.x + t];
//   __syncthreads();
//   for (unsigned half = blockDim.x / 2; half > 0; half >>= 1) {
//     if (t < half) sums[t] += sums[t + half];
//     __syncthreads();
//   }
//   if (t == 0) out[blockIdx.x] = sums[0];
// }
void host_reduce(const int* in, long long* out) {
  ::dispar::hostk::SharedRef<long long[256]> sums = ::dispar::hostk::sharedVariable<long long[256]>([] {});
  ::dispar::hostk::PerThread<unsigned int> dispar_carried_t;
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    auto& t = dispar_carried_t.set(dispar_thread, ::dispar::hostk::threadIdx().x);
    sums[t] = in[::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + t];
  });
  for (unsigned half = ::dispar::hostk::blockDim().x / 2; half > 0; half >>= 1) {
    ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
      auto& t = dispar_carried_t[dispar_thread];
      if (t < half) sums[t] += sums[t + half];
    });
  }
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    auto& t = dispar_carried_t[dispar_thread];
    if (t == 0) out[::dispar::hostk::blockIdx().x] = sums[0];
  });
}

TEST(ThreadLoops, TreeReductionWithTheBarrierInAUniformLoop) {
  const unsigned blocks = 33;
  std::vector<int> in(blocks * 256);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = int((i * 2654435761u >> 9) % 1000u);
  std::vector<long long> out(blocks, -1);
  ASSERT_EQ(hk::launchThreadLoops(blocks, 256, 0, &host_reduce, in.data(), out.data()), hk::cudaSuccess);
  for (unsigned b = 0; b < blocks; ++b)
    EXPECT_EQ(out[b], std::accumulate(in.begin() + b * 256, in.begin() + (b + 1) * 256, 0LL)) << "block " << b;
}

// Many values live across a barrier in big blocks: more per-thread storage than one scratch chunk.
void host_manySlots(double* out) {
  ::dispar::hostk::PerThread<double> slots[12];
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    for (int k = 0; k < 12; ++k)
      slots[k].set(dispar_thread, ::dispar::hostk::threadIdx().x * 100.0 + k + ::dispar::hostk::blockIdx().x * 1e6);
  });
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    double sum = 0;
    for (int k = 0; k < 12; ++k) sum += slots[k][dispar_thread];
    out[::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x] = sum;
  });
}

TEST(ThreadLoops, PerThreadStorageGrowsWithoutMovingEarlierSlots) {
  const unsigned threads = 1024, blocks = 3;  // 12 doubles x 1024 threads = 96 KiB a block
  std::vector<double> out(threads * blocks, -1.0);
  ASSERT_EQ(hk::launchThreadLoops(blocks, threads, 0, &host_manySlots, out.data()), hk::cudaSuccess);
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < threads; ++t)
      ASSERT_EQ(out[b * threads + t], 12 * (t * 100.0 + b * 1e6) + 66) << "block " << b << " thread " << t;
}

// The same reduction in both forms gives the same bits.
// __global__ void blockMax(const float* in, float* out) {
//   __shared__ float values[256];
//   unsigned t = threadIdx.x;
//   values[t] = in[blockIdx.x * 256 + t];
//   __syncthreads();
//   if (t == 0) { float m = values[0]; for (int i = 1; i < 256; ++i) m = fmaxf(m, values[i]); out[blockIdx.x] = m; }
// }
void host_blockMax_fibers(const float* in, float* out) {
  ::dispar::hostk::SharedRef<float[256]> values = ::dispar::hostk::sharedVariable<float[256]>([] {});
  unsigned t = ::dispar::hostk::threadIdx().x;
  values[t] = in[::dispar::hostk::blockIdx().x * 256 + t];
  ::dispar::hostk::syncthreads();
  if (t == 0) {
    float m = values[0];
    for (int i = 1; i < 256; ++i) m = std::fmax(m, values[i]);
    out[::dispar::hostk::blockIdx().x] = m;
  }
}
void host_blockMax_loops(const float* in, float* out) {
  ::dispar::hostk::SharedRef<float[256]> values = ::dispar::hostk::sharedVariable<float[256]>([] {});
  ::dispar::hostk::PerThread<unsigned int> dispar_carried_t;
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    auto& t = dispar_carried_t.set(dispar_thread, ::dispar::hostk::threadIdx().x);
    values[t] = in[::dispar::hostk::blockIdx().x * 256 + t];
  });
  ::dispar::hostk::forEachThread([&](const ::dispar::hostk::LoopThread dispar_thread) {
    auto& t = dispar_carried_t[dispar_thread];
    if (t == 0) {
      float m = values[0];
      for (int i = 1; i < 256; ++i) m = std::fmax(m, values[i]);
      out[::dispar::hostk::blockIdx().x] = m;
    }
  });
}

// The compact form disparcc emits when it can (ThreadLoops.h): threadIdx is the segment's loop
// variable (the context is not kept: forEachThread<false>), `t` is recomputed in each segment rather than
// kept per thread, and the segments that are `if (t < half) ...` alone loop only up to `half`.
// __global__ void blockSums(const int* in, long long* out) {
//   __shared__ long long sums[256];
//   unsigned t = threadIdx.x;
//   sums[t] = in[blockIdx.x * blockDim.x + t];
//   __syncthreads();
//   for (unsigned half = blockDim.x / 2; half > 0; half >>= 1) {
//     if (t < half) sums[t] += sums[t + half];
//     __syncthreads();
//   }
//   if (t == 0) out[blockIdx.x] = sums[0];
// }
void host_blockSumsCompact(const int* in, long long* out) {
  ::dispar::hostk::SharedRef<long long[256]> sums = ::dispar::hostk::sharedVariable<long long[256]>([] {});
  ::dispar::hostk::forEachThread<false>([&](const ::dispar::hostk::LoopThread dispar_thread) {
    unsigned t = dispar_thread.idx.x;
    sums[t] = in[::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + t];
  });
  for (unsigned half = ::dispar::hostk::blockDim().x / 2; half > 0; half >>= 1) {
    ::dispar::hostk::forEachThreadBelow<false>(static_cast<unsigned int>(half),
                                               [&](const ::dispar::hostk::LoopThread dispar_thread) {
                                                 const unsigned int t = dispar_thread.idx.x;
                                                 if (t < half) sums[t] += sums[t + half];
                                               });
  }
  ::dispar::hostk::forEachThread<false>([&](const ::dispar::hostk::LoopThread dispar_thread) {
    const unsigned int t = dispar_thread.idx.x;
    if (t == 0) out[::dispar::hostk::blockIdx().x] = sums[0];
  });
}

TEST(ThreadLoops, CompactFormWithLoopIndexRecomputedLocalsAndBoundedSegments) {
  for (unsigned threads : {256u, 64u, 1u, 100u}) {  // 100: the halves are not powers of two
    const unsigned blocks = 7;
    std::vector<int> in(blocks * threads);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = int((i * 2654435761u >> 9) % 1000u);
    std::vector<long long> out(blocks, -1);
    ASSERT_EQ(hk::launchThreadLoops(blocks, threads, 0, &host_blockSumsCompact, in.data(), out.data()),
              hk::cudaSuccess);
    for (unsigned b = 0; b < blocks; ++b) {
      // The same tree, sequentially (with 100 threads it drops elements, as the CUDA kernel would).
      std::vector<long long> sums(in.begin() + b * threads, in.begin() + (b + 1) * threads);
      for (unsigned half = threads / 2; half > 0; half >>= 1)
        for (unsigned t = 0; t < half; ++t) sums[t] += sums[t + half];
      EXPECT_EQ(out[b], sums[0]) << threads << " threads, block " << b;
    }
  }
}

void host_signedBound(int* out, int limit) {
  ::dispar::hostk::forEachThreadBelow<false>(static_cast<int>(limit),
                                             [&](const ::dispar::hostk::LoopThread dispar_thread) {
                                               if (static_cast<int>(dispar_thread.idx.x) < limit)
                                                 out[dispar_thread.idx.x + ::dispar::hostk::blockIdx().x * 8] = 1;
                                             });
}

TEST(ThreadLoops, BoundedSegmentsWithNegativeAndOversizedSignedBounds) {
  for (int limit : {-3, 0, 5, 8, 1000}) {
    std::vector<int> out(16, 0);
    ASSERT_EQ(hk::launchThreadLoops(2, 8, 0, &host_signedBound, out.data(), limit), hk::cudaSuccess);
    for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], i % 8 < limit ? 1 : 0) << "limit " << limit << " index " << i;
  }
}

TEST(ThreadLoops, SameResultsAsFibers) {
  const unsigned blocks = 40;
  const std::vector<float> in = randomFloats(blocks * 256, 5);
  std::vector<float> fibers(blocks, 0.0f), loops(blocks, 1.0f);
  ASSERT_EQ(hk::launch(blocks, 256, 0, &host_blockMax_fibers, in.data(), fibers.data()), hk::cudaSuccess);
  ASSERT_EQ(hk::launchThreadLoops(blocks, 256, 0, &host_blockMax_loops, in.data(), loops.data()), hk::cudaSuccess);
  EXPECT_EQ(fibers, loops);
  for (unsigned b = 0; b < blocks; ++b) {
    float m = in[b * 256];
    for (int i = 1; i < 256; ++i) m = std::max(m, in[b * 256 + i]);
    EXPECT_EQ(loops[b], m);
  }
}

// Grid loops (forEachGridThread): a kernel without barriers or shared memory, run once per run of blocks.
// Every thread of every shape of grid and block runs exactly once, with its own indices, whatever runs of
// blocks the host threads take (several host threads here: runs start and end inside rows of the grid).
// __global__ void stamp(unsigned* seen, unsigned long long* where, int count) {
//   unsigned bx = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
//   unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
//   int id = bx * (blockDim.x * blockDim.y * blockDim.z) + t;
//   if (id < count) { seen[id] += 1; where[id] = ...; }
// }
void host_stamp(unsigned* seen, unsigned long long* where, int count) {
  ::dispar::hostk::forEachGridThread<false>(
      [=](const ::dispar::hostk::LoopBlockShape& dispar_block, const ::dispar::hostk::LoopThread dispar_thread) {
        const hk::uint3 b = dispar_block.blockIdx, t = dispar_thread.idx;
        const hk::dim3 g = dispar_block.gridDim, d = dispar_block.blockDim;
        const unsigned block = b.x + g.x * (b.y + g.y * b.z);
        const unsigned thread = t.x + d.x * (t.y + d.y * t.z);
        const int id = static_cast<int>(block * (d.x * d.y * d.z) + thread);
        if (id < count) {
          seen[id] += 1;
          where[id] = ((b.z * 1000ull + b.y) * 1000ull + b.x) * 1000000000ull + (t.z * 1000ull + t.y) * 1000ull + t.x;
        }
      });
}

TEST(GridLoops, EveryThreadOfEveryShapeRunsOnceWithItsOwnIndices) {
  const struct {
    hk::dim3 grid, block;
  } shapes[] = {{hk::dim3(97), hk::dim3(64)},
                {hk::dim3(7, 5), hk::dim3(32, 8)},
                {hk::dim3(3, 4, 5), hk::dim3(4, 3, 2)},
                {hk::dim3(1), hk::dim3(1)},
                {hk::dim3(1000), hk::dim3(3)}};
  for (const auto& shape : shapes) {
    const int count = static_cast<int>(shape.grid.volume() * shape.block.volume());
    std::vector<unsigned> seen(count, 0);
    std::vector<unsigned long long> where(count, 0);
    ASSERT_EQ(hk::launchGridLoops(shape.grid, shape.block, 0, &host_stamp, seen.data(), where.data(), count),
              hk::cudaSuccess);
    for (int id = 0; id < count; ++id) {
      ASSERT_EQ(seen[id], 1u) << "thread " << id << " of grid " << shape.grid.x << "x" << shape.grid.y;
      const unsigned long long threads = shape.block.volume();
      const unsigned long long block = id / threads, thread = id % threads;
      const unsigned long long bx = block % shape.grid.x, by = block / shape.grid.x % shape.grid.y,
                               bz = block / shape.grid.x / shape.grid.y;
      const unsigned long long tx = thread % shape.block.x, ty = thread / shape.block.x % shape.block.y,
                               tz = thread / shape.block.x / shape.block.y;
      ASSERT_EQ(where[id], ((bz * 1000 + by) * 1000 + bx) * 1000000000ull + (tz * 1000 + ty) * 1000 + tx) << id;
    }
  }
}

// A device function reads the running thread's context (UpdatesContext): it follows the grid loop.
// __device__ unsigned flat() { return blockIdx.y * 1000 + blockIdx.x * 10 + threadIdx.y; }
// __global__ void viaFunction(unsigned* out) { out[...] = flat(); }   (1-D and 2-D blocks)
unsigned flat() {
  return ::dispar::hostk::blockIdx().y * 1000 + ::dispar::hostk::blockIdx().x * 10 + ::dispar::hostk::threadIdx().y;
}
void host_viaFunction(unsigned* out) {
  ::dispar::hostk::forEachGridThread<true>([=](const ::dispar::hostk::LoopBlockShape& dispar_block,
                                               const ::dispar::hostk::LoopThread dispar_thread) {
    const unsigned block = dispar_block.blockIdx.x + dispar_block.gridDim.x * dispar_block.blockIdx.y;
    out[block * dispar_block.blockDim.volume() + dispar_thread.idx.x + dispar_block.blockDim.x * dispar_thread.idx.y] =
        flat();
  });
}

TEST(GridLoops, CodeReadingTheThreadsContextSeesEachThread) {
  for (const hk::dim3 block : {hk::dim3(8), hk::dim3(4, 2)}) {
    const hk::dim3 grid(5, 3);
    std::vector<unsigned> out(grid.volume() * block.volume(), 0);
    ASSERT_EQ(hk::launchGridLoops(grid, block, 0, &host_viaFunction, out.data()), hk::cudaSuccess);
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx)
        for (unsigned t = 0; t < block.volume(); ++t)
          ASSERT_EQ(out[(bx + grid.x * by) * block.volume() + t], by * 1000 + bx * 10 + t / block.x)
              << bx << "," << by << " thread " << t;
  }
}

// __global__ void failingGrid(int* marks) {
//   if (blockIdx.x == 2 && blockIdx.y == 1 && threadIdx.x == 5 && threadIdx.y == blockDim.y - 1) throw ...;
//   (host code only)
//   marks[...] = 1;
// }
void host_failingGrid(int* marks) {
  ::dispar::hostk::forEachGridThread<false>(
      [=](const ::dispar::hostk::LoopBlockShape& dispar_block, const ::dispar::hostk::LoopThread dispar_thread) {
        if (dispar_block.blockIdx.x == 2 && dispar_block.blockIdx.y == 1 && dispar_thread.idx.x == 5 &&
            dispar_thread.idx.y == dispar_block.blockDim.y - 1)
          throw std::runtime_error("bad sample");
        marks[0] = 1;
      });
}

TEST(GridLoops, AThrowingThreadFailsTheLaunchNamingItsBlockAndThread) {
  for (const hk::dim3 block : {hk::dim3(16, 2), hk::dim3(16)}) {
    int mark = 0;
    testing::internal::CaptureStderr();
    EXPECT_EQ(hk::launchGridLoops(hk::dim3(4, 3), block, 0, &host_failingGrid, &mark), hk::cudaErrorLaunchFailure);
    const std::string errors = testing::internal::GetCapturedStderr();
    const std::string thread = block.y == 2 ? "thread (5,1,0)" : "thread (5,0,0)";
    EXPECT_NE(errors.find("block (2,1,0) " + thread + ": bad sample"), std::string::npos) << errors;
    EXPECT_EQ(hk::cudaGetLastError(), hk::cudaErrorLaunchFailure);
  }
}

// Rows of the grid longer than an int: the loops fall back to unsigned indices (the int-indexed loop
// would overflow). Two blocks at x = 3,000,000 of blocks of 1,024 threads, past 2^31 threads into the row.
TEST(GridLoops, RowsLongerThanAnIntKeepUnsignedIndices) {
  std::vector<unsigned> global;
  auto segment = [&global](const hk::LoopBlockShape& block, const hk::LoopThread thread) {
    global.push_back(block.blockIdx.x * block.blockDim.x + thread.idx.x);
  };
  const hk::dim3 grid(3000002), blockShape(1024);
  hk::LoopBlockShape where{hk::uint3{3000000, 0, 0}, blockShape, grid};
  hk::detail::ThreadContext context{};
  hk::LoopBlockShape failed{};
  hk::LoopThread failedThread{};
  hk::detail::gridRowOneDimensional<false, false>(segment, where, context, 3000000, 3000002, failed, failedThread);
  ASSERT_EQ(global.size(), 2048u);
  for (unsigned i = 0; i < 2048; ++i) ASSERT_EQ(global[i], 3000000u * 1024u + i) << i;
}

}  // namespace
