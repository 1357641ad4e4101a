// FIR filter, 64 taps, frames of 1M samples: the host clone of the CUDA kernel (blocks of 256 threads,
// taps staged in shared memory, one __syncthreads) on dispar_hostk, against the same arithmetic as an
// OpenMP `parallel for`. The clone is run in both host forms: thread loops, which disparcc emits for
// this kernel (its barrier is a top-level statement), and fibers, which every kernel can use. Prints
// the times (best of several frames) and each form's ratio to OpenMP.
#include <dispar/hostk.h>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

constexpr int kTaps = 64;
constexpr int kFrameSamples = 1 << 20;
constexpr int kThreadsPerBlock = 256;
constexpr int kFrames = 15;

// `in` holds kTaps - 1 samples of history before the frame: out[i] = sum_k taps[k] * in[i + kTaps - 1 - k].
//
// __global__ void fir(const float* __restrict__ in, float* __restrict__ out, const float* __restrict__ taps, int n) {
//   __shared__ float sTaps[kTaps];
//   if (threadIdx.x < kTaps) sTaps[threadIdx.x] = taps[threadIdx.x];
//   __syncthreads();
//   int i = blockIdx.x * blockDim.x + threadIdx.x;
//   if (i >= n) return;
//   float acc = 0.0f;
//   for (int k = 0; k < kTaps; ++k) acc += sTaps[k] * __ldg(&in[i + kTaps - 1 - k]);
//   out[i] = acc;
// }
//
// The fiber form (Kernel.h): the clone is one CUDA thread; __syncthreads switches fibers.
void host_fir_fibers(const float* __restrict__ in, float* __restrict__ out, const float* __restrict__ taps, int n) {
  ::dispar::hostk::SharedRef<float[kTaps]> sTaps = ::dispar::hostk::sharedVariable<float[kTaps]>([] {});
  if (::dispar::hostk::threadIdx().x < kTaps)
    sTaps[::dispar::hostk::threadIdx().x] = taps[::dispar::hostk::threadIdx().x];
  ::dispar::hostk::syncthreads();
  int i = ::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < kTaps; ++k) acc += sTaps[k] * ::dispar::hostk::__ldg(&in[i + kTaps - 1 - k]);
  out[i] = acc;
}

// The thread-loop form, exactly as disparcc emits it for the kernel above (--emit-cpp; kTaps is 64):
// the clone is one block, each segment between barriers a loop over its threads.
void host_fir(const float* __restrict__ in, float* __restrict__ out, const float* __restrict__ taps, int n) {
  ::dispar::hostk::SharedRef<float[64]> sTaps = ::dispar::hostk::sharedVariable<float[64]>([] {});
  ::dispar::hostk::forEachThreadBelow<false>(static_cast<unsigned int>(kTaps),
                                             [&](const ::dispar::hostk::LoopThread dispar_thread) {
                                               if (dispar_thread.idx.x < kTaps)
                                                 sTaps[dispar_thread.idx.x] = taps[dispar_thread.idx.x];
                                             });
  ::dispar::hostk::forEachThread<false>([&](const ::dispar::hostk::LoopThread dispar_thread) {
    int i = ::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + dispar_thread.idx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int k = 0; k < kTaps; ++k) acc += sTaps[k] * ::dispar::hostk::__ldg(&in[i + kTaps - 1 - k]);
    out[i] = acc;
  });
}

// A second kernel: a tree reduction, whose barrier sits in a loop that every thread runs alike (thread
// loops run that loop once per block around its segments; `t` is recomputed from the loop index in each
// segment, and the `if (t < half)` segment loops over the first `half` threads only).
//
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
void host_blockSums_fibers(const int* in, long long* out) {
  ::dispar::hostk::SharedRef<long long[256]> sums = ::dispar::hostk::sharedVariable<long long[256]>([] {});
  unsigned t = ::dispar::hostk::threadIdx().x;
  sums[t] = in[::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + t];
  ::dispar::hostk::syncthreads();
  for (unsigned half = ::dispar::hostk::blockDim().x / 2; half > 0; half >>= 1) {
    if (t < half) sums[t] += sums[t + half];
    ::dispar::hostk::syncthreads();
  }
  if (t == 0) out[::dispar::hostk::blockIdx().x] = sums[0];
}

// As disparcc emits it.
void host_blockSums(const int* in, long long* out) {
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

// The same tree, block by block, as plain OpenMP.
void openmpBlockSums(const int* in, long long* out, int blocks) {
#pragma omp parallel for schedule(static)
  for (int b = 0; b < blocks; ++b) {
    long long sums[256];
    for (int t = 0; t < 256; ++t) sums[t] = in[b * 256 + t];
    for (int half = 128; half > 0; half >>= 1)
      for (int t = 0; t < half; ++t) sums[t] += sums[t + half];
    out[b] = sums[0];
  }
}

void openmpFir(const float* __restrict__ in, float* __restrict__ out, const float* __restrict__ taps, int n) {
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; ++i) {
    float acc = 0.0f;
    for (int k = 0; k < kTaps; ++k) acc += taps[k] * in[i + kTaps - 1 - k];
    out[i] = acc;
  }
}

template <class Run>
double bestSeconds(Run run) {
  double best = 1e30;
  for (int frame = 0; frame < kFrames; ++frame) {
    const auto start = std::chrono::steady_clock::now();
    run();
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    best = std::min(best, elapsed.count());
  }
  return best;
}

}  // namespace

int main() {
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> in(kFrameSamples + kTaps - 1), taps(kTaps);
  for (float& v : in) v = dist(gen);
  for (float& v : taps) v = dist(gen);
  std::vector<float> loopsOut(kFrameSamples, 0.0f), fibersOut(kFrameSamples, 0.0f), openmpOut(kFrameSamples, 0.0f);
  const int blocks = (kFrameSamples + kThreadsPerBlock - 1) / kThreadsPerBlock;

  bool launchFailed = false;
  const double loops = bestSeconds([&] {
    launchFailed |=
        ::dispar::hostk::launchThreadLoops(blocks, kThreadsPerBlock, 0, &host_fir, in.data(), loopsOut.data(),
                                           taps.data(), kFrameSamples) != ::dispar::hostk::cudaSuccess;
  });
  const double fibers = bestSeconds([&] {
    launchFailed |= ::dispar::hostk::launch(blocks, kThreadsPerBlock, 0, &host_fir_fibers, in.data(), fibersOut.data(),
                                            taps.data(), kFrameSamples) != ::dispar::hostk::cudaSuccess;
  });
  const double openmp = bestSeconds([&] { openmpFir(in.data(), openmpOut.data(), taps.data(), kFrameSamples); });
  if (launchFailed) {
    std::fprintf(stderr, "host_kernels: error: a hostk launch failed\n");
    return 1;
  }
  for (int i = 0; i < kFrameSamples; ++i)
    if (loopsOut[i] != openmpOut[i] || fibersOut[i] != openmpOut[i]) {
      std::fprintf(stderr, "host_kernels: error: sample %d differs: thread loops %g, fibers %g, openmp %g\n", i,
                   loopsOut[i], fibersOut[i], openmpOut[i]);
      return 1;
    }

  const char* hostThreads = std::getenv("DISPAR_HOST_THREADS");
  std::printf("FIR %d taps, frame of %d samples, blocks of %d threads, best of %d frames\n", kTaps, kFrameSamples,
              kThreadsPerBlock, kFrames);
  std::printf("  OpenMP threads      %d\n", omp_get_max_threads());
  std::printf("  hostk threads       %s\n", hostThreads ? hostThreads : "hardware_concurrency (default)");
  std::printf("  hostk thread loops  %9.3f ms  %8.1f Msamples/s  (the form disparcc emits for this kernel)\n",
              loops * 1e3, kFrameSamples / loops / 1e6);
  std::printf("  hostk fibers        %9.3f ms  %8.1f Msamples/s  (the general form)\n", fibers * 1e3,
              kFrameSamples / fibers / 1e6);
  std::printf("  OpenMP              %9.3f ms  %8.1f Msamples/s\n", openmp * 1e3, kFrameSamples / openmp / 1e6);
  std::printf("  ratio hostk/OpenMP  %.2fx (target: at most 1.2x); fibers %.2fx\n", loops / openmp, fibers / openmp);

  // The reduction: same input size, one sum per block of 256.
  std::vector<int> values(kFrameSamples);
  for (int i = 0; i < kFrameSamples; ++i) values[i] = int((unsigned(i) * 2654435761u >> 9) % 1000u);
  std::vector<long long> loopSums(blocks), fiberSums(blocks), openmpSums(blocks);
  const double sumLoops = bestSeconds([&] {
    launchFailed |= ::dispar::hostk::launchThreadLoops(blocks, kThreadsPerBlock, 0, &host_blockSums, values.data(),
                                                       loopSums.data()) != ::dispar::hostk::cudaSuccess;
  });
  const double sumFibers = bestSeconds([&] {
    launchFailed |= ::dispar::hostk::launch(blocks, kThreadsPerBlock, 0, &host_blockSums_fibers, values.data(),
                                            fiberSums.data()) != ::dispar::hostk::cudaSuccess;
  });
  const double sumOpenmp = bestSeconds([&] { openmpBlockSums(values.data(), openmpSums.data(), blocks); });
  if (launchFailed || loopSums != openmpSums || fiberSums != openmpSums) {
    std::fprintf(stderr, "host_kernels: error: the block sums differ or a launch failed\n");
    return 1;
  }
  std::printf("tree reduction, %d blocks of %d threads (barrier in a loop), best of %d\n", blocks, kThreadsPerBlock,
              kFrames);
  std::printf("  hostk thread loops  %9.3f ms\n  hostk fibers        %9.3f ms\n  OpenMP (same tree)  %9.3f ms\n",
              sumLoops * 1e3, sumFibers * 1e3, sumOpenmp * 1e3);
  std::printf("  ratio hostk/OpenMP  %.2fx (target: at most 4x); fibers %.2fx\n", sumLoops / sumOpenmp,
              sumFibers / sumOpenmp);
  return 0;
}
