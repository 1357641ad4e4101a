// Hand-written host clones, exactly as StreamCC emits them, each checked against a plain CPU
// computation. The CUDA source of every kernel is quoted above its clone.
#include "HostKernelTestSupport.h"

#include <dispar/hostk.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

namespace {

namespace hk = ::dispar::hostk;

// Several host threads even on a small machine, so blocks really run concurrently: always, whatever the
// caller's environment says (a DISPAR_HOST_THREADS=1 left from a benchmark would silently make these
// tests sequential and their concurrency checks vacuous).
const bool kSeveralHostThreads = (setenv("DISPAR_HOST_THREADS", "4", /*overwrite=*/1), true);

using ::dispar::testing::randomFloats;

// __global__ void reduceSum(const float* in, float* out, int n) {
//   __shared__ float partial[256];
//   unsigned tid = threadIdx.x;
//   unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
//   partial[tid] = i < n ? in[i] : 0.0f;
//   __syncthreads();
//   for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
//     if (tid < s) partial[tid] += partial[tid + s];
//     __syncthreads();
//   }
//   if (tid == 0) out[blockIdx.x] = partial[0];
// }
void host_reduceSum(const float* in, float* out, int n) {
  ::dispar::hostk::SharedRef<float[256]> partial = ::dispar::hostk::sharedVariable<float[256]>([] {});
  unsigned tid = ::dispar::hostk::threadIdx().x;
  unsigned i = ::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x;
  partial[tid] = i < static_cast<unsigned>(n) ? in[i] : 0.0f;
  ::dispar::hostk::syncthreads();
  for (unsigned s = ::dispar::hostk::blockDim().x / 2; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    ::dispar::hostk::syncthreads();
  }
  if (tid == 0) out[::dispar::hostk::blockIdx().x] = partial[0];
}

TEST(HostKernels, TreeReductionWithSharedMemoryAndBarriers) {
  const int n = 100000;
  const unsigned threads = 256;
  const unsigned blocks = (n + threads - 1) / threads;
  const std::vector<float> in = randomFloats(n, 1);
  std::vector<float> partials(blocks, 0.0f);
  ASSERT_EQ(hk::launch(blocks, threads, 0, &host_reduceSum, in.data(), partials.data(), n), hk::cudaSuccess);
  for (unsigned b = 0; b < blocks; ++b) {
    // The same tree, sequentially.
    std::vector<float> tree(threads, 0.0f);
    for (unsigned t = 0; t < threads; ++t)
      tree[t] = b * threads + t < static_cast<unsigned>(n) ? in[b * threads + t] : 0.0f;
    for (unsigned s = threads / 2; s > 0; s >>= 1)
      for (unsigned t = 0; t < s; ++t) tree[t] += tree[t + s];
    ASSERT_EQ(partials[b], tree[0]) << "block " << b;
  }
}

// __global__ void histogram(const unsigned* values, int n, int* bins, unsigned long long* ullBins,
//                           float* weights) {
//   for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
//     unsigned bin = values[i] % 64;
//     atomicAdd(&bins[bin], 1);
//     atomicAdd(&ullBins[bin], 1ull << 33);
//     atomicAdd(&weights[bin], 0.5f);
//   }
// }
void host_histogram(const unsigned* values, int n, int* bins, unsigned long long* ullBins, float* weights) {
  for (int i = ::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x; i < n;
       i += ::dispar::hostk::blockDim().x * ::dispar::hostk::gridDim().x) {
    unsigned bin = values[i] % 64;
    ::dispar::hostk::atomicAdd(&bins[bin], 1);
    ::dispar::hostk::atomicAdd(&ullBins[bin], 1ull << 33);
    ::dispar::hostk::atomicAdd(&weights[bin], 0.5f);
  }
}

TEST(HostKernels, HistogramWithAtomicsAcrossConcurrentBlocks) {
  const int n = 200000;
  std::mt19937 gen(7);
  std::vector<unsigned> values(n);
  for (unsigned& v : values) v = gen();
  std::vector<int> bins(64, 0);
  std::vector<unsigned long long> ullBins(64, 0);
  std::vector<float> weights(64, 0.0f);
  ASSERT_EQ(hk::launch(hk::dim3(97), hk::dim3(128), 0, &host_histogram, values.data(), n, bins.data(), ullBins.data(),
                       weights.data()),
            hk::cudaSuccess);
  std::vector<int> expected(64, 0);
  for (unsigned v : values) ++expected[v % 64];
  for (int b = 0; b < 64; ++b) {
    EXPECT_EQ(bins[b], expected[b]) << "bin " << b;
    EXPECT_EQ(ullBins[b], static_cast<unsigned long long>(expected[b]) << 33) << "bin " << b;
    EXPECT_EQ(weights[b], 0.5f * expected[b]) << "bin " << b;  // exact: multiples of 0.5 below 2^24
  }
}

// __global__ void transpose(const float* in, float* out, int width, int height) {
//   __shared__ float tile[16][17];
//   int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
//   if (x < width && y < height) tile[threadIdx.y][threadIdx.x] = in[y * width + x];
//   __syncthreads();
//   x = blockIdx.y * 16 + threadIdx.x; y = blockIdx.x * 16 + threadIdx.y;
//   if (x < height && y < width) out[y * height + x] = tile[threadIdx.x][threadIdx.y];
// }
void host_transpose(const float* in, float* out, int width, int height) {
  ::dispar::hostk::SharedRef<float[16][17]> tile = ::dispar::hostk::sharedVariable<float[16][17]>([] {});
  int x = ::dispar::hostk::blockIdx().x * 16 + ::dispar::hostk::threadIdx().x,
      y = ::dispar::hostk::blockIdx().y * 16 + ::dispar::hostk::threadIdx().y;
  if (x < width && y < height) tile[::dispar::hostk::threadIdx().y][::dispar::hostk::threadIdx().x] = in[y * width + x];
  ::dispar::hostk::syncthreads();
  x = ::dispar::hostk::blockIdx().y * 16 + ::dispar::hostk::threadIdx().x;
  y = ::dispar::hostk::blockIdx().x * 16 + ::dispar::hostk::threadIdx().y;
  if (x < height && y < width)
    out[y * height + x] = tile[::dispar::hostk::threadIdx().x][::dispar::hostk::threadIdx().y];
}

TEST(HostKernels, MatrixTransposeThroughSharedTile2D) {
  const int width = 75, height = 53;
  const std::vector<float> in = randomFloats(width * height, 3);
  std::vector<float> out(width * height, -99.0f);
  const hk::dim3 block(16, 16);
  const hk::dim3 grid((width + 15) / 16, (height + 15) / 16);
  ASSERT_EQ(hk::launch(grid, block, 0, &host_transpose, in.data(), out.data(), width, height), hk::cudaSuccess);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) ASSERT_EQ(out[x * height + y], in[y * width + x]) << x << "," << y;
}

// __global__ void index3d(int* ids, int nx, int ny, int nz) {
//   int x = blockIdx.x * blockDim.x + threadIdx.x;
//   int y = blockIdx.y * blockDim.y + threadIdx.y;
//   int z = blockIdx.z * blockDim.z + threadIdx.z;
//   if (x < nx && y < ny && z < nz) atomicAdd(&ids[(z * ny + y) * nx + x], (z * ny + y) * nx + x + 1);
// }
void host_index3d(int* ids, int nx, int ny, int nz) {
  int x = ::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x;
  int y = ::dispar::hostk::blockIdx().y * ::dispar::hostk::blockDim().y + ::dispar::hostk::threadIdx().y;
  int z = ::dispar::hostk::blockIdx().z * ::dispar::hostk::blockDim().z + ::dispar::hostk::threadIdx().z;
  if (x < nx && y < ny && z < nz) ::dispar::hostk::atomicAdd(&ids[(z * ny + y) * nx + x], (z * ny + y) * nx + x + 1);
}

TEST(HostKernels, ThreeDimensionalIndexingCoversEveryCellOnce) {
  const int nx = 19, ny = 11, nz = 7;
  std::vector<int> ids(nx * ny * nz, 0);
  const hk::dim3 block(4, 3, 2);
  const hk::dim3 grid((nx + 3) / 4, (ny + 2) / 3, (nz + 1) / 2);
  ASSERT_EQ(hk::launch(grid, block, 0, &host_index3d, ids.data(), nx, ny, nz), hk::cudaSuccess);
  for (int i = 0; i < nx * ny * nz; ++i) ASSERT_EQ(ids[i], i + 1) << "cell " << i;
}

// __global__ void stencil7(const float* in, float* out, int n) {   // 3-D 7-point stencil, interior only
//   int x = blockIdx.x * blockDim.x + threadIdx.x, y = ..., z = ...;
//   if (x < 1 || y < 1 || z < 1 || x >= n - 1 || y >= n - 1 || z >= n - 1) return;
//   int i = (z * n + y) * n + x;
//   out[i] = in[i - 1] + in[i + 1] + in[i - n] + in[i + n] + in[i - n * n] + in[i + n * n] - 6 * in[i];
// }
void host_stencil7(const float* in, float* out, int n) {
  int x = ::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x;
  int y = ::dispar::hostk::blockIdx().y * ::dispar::hostk::blockDim().y + ::dispar::hostk::threadIdx().y;
  int z = ::dispar::hostk::blockIdx().z * ::dispar::hostk::blockDim().z + ::dispar::hostk::threadIdx().z;
  if (x < 1 || y < 1 || z < 1 || x >= n - 1 || y >= n - 1 || z >= n - 1) return;
  int i = (z * n + y) * n + x;
  out[i] = in[i - 1] + in[i + 1] + in[i - n] + in[i + n] + in[i - n * n] + in[i + n * n] - 6 * in[i];
}

TEST(HostKernels, ThreeDimensionalStencil) {
  const int n = 18;
  const std::vector<float> in = randomFloats(n * n * n, 5);
  std::vector<float> out(n * n * n, 0.0f);
  ASSERT_EQ(hk::launch(hk::dim3(3, 3, 5), hk::dim3(8, 8, 4), 0, &host_stencil7, in.data(), out.data(), n),
            hk::cudaSuccess);
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const int i = (z * n + y) * n + x;
        float expected = 0.0f;
        if (x >= 1 && y >= 1 && z >= 1 && x < n - 1 && y < n - 1 && z < n - 1)
          expected = in[i - 1] + in[i + 1] + in[i - n] + in[i + n] + in[i - n * n] + in[i + n * n] - 6 * in[i];
        ASSERT_EQ(out[i], expected) << x << "," << y << "," << z;
      }
}

// __global__ void reverseBlock(int* data) {
//   extern __shared__ int buffer[];
//   int t = threadIdx.x, base = blockIdx.x * blockDim.x;
//   buffer[t] = data[base + t];
//   __syncthreads();
//   data[base + t] = buffer[blockDim.x - 1 - t];
// }
void host_reverseBlock(int* data) {
  int* buffer = ::dispar::hostk::dynamicShared<int>();
  int t = ::dispar::hostk::threadIdx().x, base = ::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x;
  buffer[t] = data[base + t];
  ::dispar::hostk::syncthreads();
  data[base + t] = buffer[::dispar::hostk::blockDim().x - 1 - t];
}

TEST(HostKernels, DynamicSharedMemoryIsPrivateToEachBlock) {
  const unsigned threads = 300, blocks = 40;
  std::vector<int> data(threads * blocks);
  std::iota(data.begin(), data.end(), 0);
  ASSERT_EQ(hk::launch(blocks, threads, threads * sizeof(int), &host_reverseBlock, data.data()), hk::cudaSuccess);
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < threads; ++t)
      ASSERT_EQ(data[b * threads + t], static_cast<int>(b * threads + threads - 1 - t)) << b << "," << t;
}

// __global__ void alignedDynamic(unsigned long long* misaligned) {
//   extern __shared__ double4 raw[];   (any type: the base is 16-byte aligned)
//   if (reinterpret_cast<uintptr_t>(raw) % 16 != 0) atomicAdd(misaligned, 1ull);
// }
void host_alignedDynamic(unsigned long long* misaligned) {
  double* raw = ::dispar::hostk::dynamicShared<double>();
  if (reinterpret_cast<std::uintptr_t>(raw) % 16 != 0) ::dispar::hostk::atomicAdd(misaligned, 1ull);
}

TEST(HostKernels, DynamicSharedMemoryIsSixteenByteAligned) {
  unsigned long long misaligned = 0;
  ASSERT_EQ(hk::launch(8, 32, 24, &host_alignedDynamic, &misaligned), hk::cudaSuccess);
  EXPECT_EQ(misaligned, 0u);
}

// __device__ double atomicMaxDouble(double* address, double val) {
//   unsigned long long* bits = (unsigned long long*)address;
//   unsigned long long old = *bits, assumed;
//   do {
//     assumed = old;
//     if (__longlong_as_double(assumed) >= val) break;
//     old = atomicCAS(bits, assumed, __double_as_longlong(val));
//   } while (assumed != old);
//   return __longlong_as_double(old);
// }
// __global__ void maxKernel(const double* values, int n, double* result) {
//   int i = blockIdx.x * blockDim.x + threadIdx.x;
//   if (i < n) atomicMaxDouble(result, values[i]);
// }
double host_atomicMaxDouble(double* address, double val) {
  unsigned long long* bits = (unsigned long long*)address;
  unsigned long long old = *bits, assumed;
  do {
    assumed = old;
    if (::dispar::hostk::__longlong_as_double(assumed) >= val) break;
    old = ::dispar::hostk::atomicCAS(bits, assumed, (unsigned long long)::dispar::hostk::__double_as_longlong(val));
  } while (assumed != old);
  return ::dispar::hostk::__longlong_as_double(old);
}
void host_maxKernel(const double* values, int n, double* result) {
  int i = ::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x;
  if (i < n) host_atomicMaxDouble(result, values[i]);
}

TEST(HostKernels, CustomAtomicMaxOnDoubleWithAtomicCAS) {
  const int n = 50000;
  std::mt19937 gen(11);
  std::uniform_real_distribution<double> dist(-1e6, 1e6);
  std::vector<double> values(n);
  for (double& v : values) v = dist(gen);
  double result = -1e300;
  ASSERT_EQ(hk::launch((n + 127) / 128, 128, 0, &host_maxKernel, values.data(), n, &result), hk::cudaSuccess);
  EXPECT_EQ(result, *std::max_element(values.begin(), values.end()));
}

// __global__ void fir(const float* in, float* out, const float* taps, int n, int numTaps) {
//   __shared__ float sTaps[64];
//   if (threadIdx.x < numTaps) sTaps[threadIdx.x] = taps[threadIdx.x];
//   __syncthreads();
//   int i = blockIdx.x * blockDim.x + threadIdx.x;
//   if (i >= n) return;
//   float acc = 0.0f;
//   for (int k = 0; k < numTaps; ++k) if (i - k >= 0) acc += sTaps[k] * in[i - k];
//   out[i] = acc;
// }
void host_fir(const float* in, float* out, const float* taps, int n, int numTaps) {
  ::dispar::hostk::SharedRef<float[64]> sTaps = ::dispar::hostk::sharedVariable<float[64]>([] {});
  if (::dispar::hostk::threadIdx().x < static_cast<unsigned>(numTaps))
    sTaps[::dispar::hostk::threadIdx().x] = taps[::dispar::hostk::threadIdx().x];
  ::dispar::hostk::syncthreads();
  int i = ::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < numTaps; ++k)
    if (i - k >= 0) acc += sTaps[k] * in[i - k];
  out[i] = acc;
}

TEST(HostKernels, FirFilterWithTapsInSharedMemory) {
  const int n = 20000, numTaps = 64;
  const std::vector<float> in = randomFloats(n, 13), taps = randomFloats(numTaps, 17);
  std::vector<float> out(n, 0.0f);
  ASSERT_EQ(hk::launch((n + 255) / 256, 256, 0, &host_fir, in.data(), out.data(), taps.data(), n, numTaps),
            hk::cudaSuccess);
  const std::vector<float> expected = ::dispar::testing::referenceFir(in, taps);
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], expected[i]) << "sample " << i;
}

// __global__ void neighbours(int* out, int rounds) {
//   __shared__ int value[512];
//   int t = threadIdx.x, n = blockDim.x;
//   value[t] = t;
//   for (int r = 0; r < rounds; ++r) {
//     __syncthreads();                       // everyone has written this round's value
//     int next = value[(t + 1) % n] + 1;     // read the neighbour's
//     __syncthreads();                       // everyone has read before anyone overwrites
//     value[t] = next;
//   }
//   out[blockIdx.x * n + t] = value[t];
// }
void host_neighbours(int* out, int rounds) {
  ::dispar::hostk::SharedRef<int[512]> value = ::dispar::hostk::sharedVariable<int[512]>([] {});
  int t = ::dispar::hostk::threadIdx().x, n = ::dispar::hostk::blockDim().x;
  value[t] = t;
  for (int r = 0; r < rounds; ++r) {
    ::dispar::hostk::syncthreads();
    int next = value[(t + 1) % n] + 1;
    ::dispar::hostk::syncthreads();
    value[t] = next;
  }
  out[::dispar::hostk::blockIdx().x * n + t] = value[t];
}

TEST(HostKernels, BarrierOrdersWritesBeforeNeighbourReads) {
  // Without a real barrier, thread t would read (t+1)'s value before (t+1) wrote it.
  const int n = 500, rounds = 7, blocks = 6;
  std::vector<int> out(n * blocks, -1);
  ASSERT_EQ(hk::launch(blocks, n, 0, &host_neighbours, out.data(), rounds), hk::cudaSuccess);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < n; ++t) ASSERT_EQ(out[b * n + t], (t + rounds) % n + rounds) << b << "," << t;
}

// __global__ void earlyExit(const int* keep, int* sums) {
//   __shared__ int total;
//   if (threadIdx.x == 0) total = 0;
//   __syncthreads();
//   if (!keep[threadIdx.x]) return;          // exited threads no longer count at barriers
//   atomicAdd(&total, 1);
//   __syncthreads();
//   if (threadIdx.x == blockDim.x - 1) sums[blockIdx.x] = total;
// }
void host_earlyExit(const int* keep, int* sums) {
  ::dispar::hostk::SharedRef<int> total = ::dispar::hostk::sharedVariable<int>([] {});
  if (::dispar::hostk::threadIdx().x == 0) total = 0;
  ::dispar::hostk::syncthreads();
  if (!keep[::dispar::hostk::threadIdx().x]) return;
  ::dispar::hostk::atomicAdd(&total, 1);
  ::dispar::hostk::syncthreads();
  if (::dispar::hostk::threadIdx().x == ::dispar::hostk::blockDim().x - 1) sums[::dispar::hostk::blockIdx().x] = total;
}

TEST(HostKernels, EarlyExitThreadsAreReleasedFromBarriers) {
  const unsigned n = 128, blocks = 9;
  std::vector<int> keep(n);
  for (unsigned t = 0; t < n; ++t) keep[t] = (t % 3 != 0) || t == n - 1;
  std::vector<int> sums(blocks, -1);
  ASSERT_EQ(hk::launch(blocks, n, 0, &host_earlyExit, keep.data(), sums.data()), hk::cudaSuccess);
  const int kept = std::accumulate(keep.begin(), keep.end(), 0);
  for (unsigned b = 0; b < blocks; ++b) EXPECT_EQ(sums[b], kept) << "block " << b;
}

// __global__ void votes(const int* flags, int* results) {
//   int f = flags[blockIdx.x * blockDim.x + threadIdx.x];
//   int c = __syncthreads_count(f), a = __syncthreads_and(f), o = __syncthreads_or(f);
//   if (threadIdx.x == 0) { results[3 * blockIdx.x] = c; results[3 * blockIdx.x + 1] = a; results[3 * blockIdx.x + 2] =
//   o; }
// }
void host_votes(const int* flags, int* results) {
  int f = flags[::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x];
  int c = ::dispar::hostk::syncthreadsCount(f), a = ::dispar::hostk::syncthreadsAnd(f),
      o = ::dispar::hostk::syncthreadsOr(f);
  if (::dispar::hostk::threadIdx().x == 0) {
    results[3 * ::dispar::hostk::blockIdx().x] = c;
    results[3 * ::dispar::hostk::blockIdx().x + 1] = a;
    results[3 * ::dispar::hostk::blockIdx().x + 2] = o;
  }
}

TEST(HostKernels, SyncthreadsCountAndOr) {
  const unsigned n = 64;
  std::vector<int> flags(3 * n, 0);
  for (unsigned t = 0; t < n; ++t) flags[t] = t % 4 == 0;  // block 0: some
  for (unsigned t = 0; t < n; ++t) flags[n + t] = 1;       // block 1: all
  std::vector<int> results(9, -1);                         // block 2: none
  ASSERT_EQ(hk::launch(3, n, 0, &host_votes, flags.data(), results.data()), hk::cudaSuccess);
  EXPECT_EQ(results, (std::vector<int>{16, 0, 1, 64, 1, 1, 0, 0, 0}));
}

// __global__ void twoArrays(int* out) {
//   __shared__ char tag[3];
//   __shared__ double sums[2][32];
//   int t = threadIdx.x;
//   if (t < 3) tag[t] = 'a' + t;
//   sums[t % 2][t / 2] = t;
//   __syncthreads();
//   out[blockIdx.x * blockDim.x + t] = tag[t % 3] + (int)sums[(t + 1) % 2][(t / 2 + 1) % 32];
// }
void host_twoArrays(int* out) {
  ::dispar::hostk::SharedRef<char[3]> tag = ::dispar::hostk::sharedVariable<char[3]>([] {});
  ::dispar::hostk::SharedRef<double[2][32]> sums = ::dispar::hostk::sharedVariable<double[2][32]>([] {});
  int t = ::dispar::hostk::threadIdx().x;
  if (t < 3) tag[t] = 'a' + t;
  sums[t % 2][t / 2] = t;
  ::dispar::hostk::syncthreads();
  out[::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + t] =
      tag[t % 3] + (int)sums[(t + 1) % 2][(t / 2 + 1) % 32];
}

TEST(HostKernels, SeveralSharedDeclarationsGetDistinctAlignedStorage) {
  const int n = 64, blocks = 5;
  std::vector<int> out(n * blocks, 0);
  ASSERT_EQ(hk::launch(blocks, n, 0, &host_twoArrays, out.data()), hk::cudaSuccess);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < n; ++t) {
      const int row = (t + 1) % 2, col = (t / 2 + 1) % 32;
      ASSERT_EQ(out[b * n + t], 'a' + t % 3 + (col * 2 + row)) << b << "," << t;
    }
}

// A kernel without barriers runs many threads per fiber; the indices must still be right.
void host_writeIds(unsigned* ids) {
  const unsigned linear =
      (::dispar::hostk::threadIdx().z * ::dispar::hostk::blockDim().y + ::dispar::hostk::threadIdx().y) *
          ::dispar::hostk::blockDim().x +
      ::dispar::hostk::threadIdx().x;
  const unsigned block =
      (::dispar::hostk::blockIdx().z * ::dispar::hostk::gridDim().y + ::dispar::hostk::blockIdx().y) *
          ::dispar::hostk::gridDim().x +
      ::dispar::hostk::blockIdx().x;
  ids[block * ::dispar::hostk::blockDim().volume() + linear] = block * 100000 + linear;
}

TEST(HostKernels, ThreadAndBlockIndicesWithoutBarriers) {
  const hk::dim3 grid(3, 2, 4), block(5, 4, 3);
  std::vector<unsigned> ids(grid.volume() * block.volume(), ~0u);
  ASSERT_EQ(hk::launch(grid, block, 0, &host_writeIds, ids.data()), hk::cudaSuccess);
  for (unsigned b = 0; b < grid.volume(); ++b)
    for (unsigned t = 0; t < block.volume(); ++t) ASSERT_EQ(ids[b * block.volume() + t], b * 100000 + t);
}

TEST(HostKernels, AtomicsReturnTheOldValue) {
  int i = 5;
  EXPECT_EQ(hk::atomicAdd(&i, 3), 5);
  EXPECT_EQ(hk::atomicSub(&i, 2), 8);
  EXPECT_EQ(hk::atomicExch(&i, 42), 6);
  EXPECT_EQ(hk::atomicMin(&i, 7), 42);
  EXPECT_EQ(hk::atomicMax(&i, 9), 7);
  EXPECT_EQ(hk::atomicCAS(&i, 1, 2), 9);  // no swap
  EXPECT_EQ(hk::atomicCAS(&i, 9, 2), 9);  // swap
  EXPECT_EQ(i, 2);
  unsigned u = 3;
  EXPECT_EQ(hk::atomicInc(&u, 3), 3u);
  EXPECT_EQ(u, 0u);
  EXPECT_EQ(hk::atomicDec(&u, 5), 0u);
  EXPECT_EQ(u, 5u);
  float f = 1.5f;
  EXPECT_EQ(hk::atomicAdd(&f, 2.0f), 1.5f);
  EXPECT_EQ(hk::atomicMax(&f, -1.0f), 3.5f);
  EXPECT_EQ(f, 3.5f);
  double d = 2.0;
  EXPECT_EQ(hk::atomicExch(&d, 4.0), 2.0);
  EXPECT_EQ(hk::atomicMin(&d, 1.0), 4.0);
  EXPECT_EQ(d, 1.0);
}

TEST(HostKernels, MathIntrinsics) {
  EXPECT_FLOAT_EQ(hk::__expf(1.0f), std::exp(1.0f));
  EXPECT_FLOAT_EQ(hk::rsqrtf(4.0f), 0.5f);
  EXPECT_EQ(hk::__saturatef(1.5f), 1.0f);
  EXPECT_EQ(hk::__saturatef(-0.5f), 0.0f);
  EXPECT_EQ(hk::__saturatef(std::nanf("")), 0.0f);
  EXPECT_EQ(hk::__float2int_rn(2.5f), 2);
  EXPECT_EQ(hk::__float2int_rn(3.5f), 4);
  EXPECT_EQ(hk::__float2int_rn(-1.5f), -2);
  EXPECT_EQ(hk::__fdividef(1.0f, 4.0f), 0.25f);
  EXPECT_EQ(hk::min(3, 4u), 3u);
  EXPECT_EQ(hk::max(2.0f, 3.0), 3.0);
  EXPECT_EQ(hk::__popc(0xf0f0u), 8);
  EXPECT_EQ(hk::__clz(1), 31);
  EXPECT_EQ(hk::__brev(1u), 0x80000000u);
  EXPECT_EQ(hk::__mul24(-3, 5), -15);
  EXPECT_EQ(hk::__umulhi(0x80000000u, 4u), 2u);
  const float value = 7.25f;
  EXPECT_EQ(hk::__ldg(&value), 7.25f);
  EXPECT_EQ(hk::__float2int_rd(-1.5f), -2);
  EXPECT_EQ(hk::__float2int_ru(-1.5f), -1);
  EXPECT_EQ(hk::__float2int_rd(3e9f), 2147483647);  // saturates, as on the GPU
  EXPECT_EQ(hk::__double2int_rz(-2.75), -2);
  EXPECT_EQ(hk::__mul64hi(-1, 1), -1);
  EXPECT_EQ(hk::__umul64hi(0x8000000000000000ull, 4ull), 2ull);
}

// The CUDA math functions the C library lacks, against values computed elsewhere (mpmath, 30 digits).
TEST(HostKernels, MathFunctionsBeyondTheCLibrary) {
  EXPECT_EQ(hk::sinpi(1.0), 0.0);
  EXPECT_EQ(hk::sinpi(-3.0), 0.0);
  EXPECT_EQ(hk::sinpif(0.5f), 1.0f);
  EXPECT_NEAR(hk::sinpi(1.0 / 6.0), 0.5, 1e-15);
  EXPECT_EQ(hk::cospif(0.5f), 0.0f);
  EXPECT_EQ(hk::cospi(2.0), 1.0);
  float s = 0, c = 0;
  hk::sincospif(0.25f, &s, &c);
  EXPECT_FLOAT_EQ(s, 0.70710678f);
  EXPECT_FLOAT_EQ(c, 0.70710678f);
  EXPECT_FLOAT_EQ(hk::rcbrtf(8.0f), 0.5f);
  EXPECT_NEAR(hk::normcdf(1.0), 0.841344746068542948585232545632, 1e-15);
  EXPECT_NEAR(hk::normcdfinv(0.975), 1.95996398454005385560443064983, 1e-13);
  EXPECT_NEAR(hk::erfinv(0.5), 0.476936276204469873381418353643, 1e-15);
  EXPECT_NEAR(hk::erfinv(0.9), 1.16308715367667416284409543405, 1e-14);
  EXPECT_NEAR(hk::erfinv(-0.999999), -3.4589107372754987775324488036, 1e-12);
  EXPECT_NEAR(hk::erfinv(1e-9), 8.86226925452758069076720718138e-10, 1e-24);
  EXPECT_NEAR(hk::erfcinv(1e-10), 4.57282496738948527874104367314, 1e-12);
  EXPECT_NEAR(hk::erfcinv(1.5), -0.476936276204469873381418353643, 1e-15);
  EXPECT_FLOAT_EQ(hk::erfcinvf(0.5f), 0.47693628f);
  EXPECT_EQ(hk::erfinv(1.0), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(hk::erfinv(1.5)));
  EXPECT_TRUE(std::isnan(hk::sinpif(INFINITY)));
}

TEST(HostKernels, ScopedAtomicsAreTheDeviceWideOperation) {
  int counter = 5;
  EXPECT_EQ(hk::atomicAdd_block(&counter, 2), 5);
  EXPECT_EQ(hk::atomicAdd_system(&counter, 3), 7);
  unsigned wrap = 4;
  EXPECT_EQ(hk::atomicInc_block(&wrap, 4u), 4u);
  EXPECT_EQ(wrap, 0u);
  float best = 1.0f;
  EXPECT_EQ(hk::atomicMax_system(&best, 2.5f), 1.0f);
  EXPECT_EQ(hk::atomicCAS_block(&counter, 10, 1), 10);
  EXPECT_EQ(counter, 1);
}

}  // namespace
