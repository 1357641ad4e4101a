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
  ::dispar::hostk::SharedRef<float[kTaps]> sTaps = ::dispar::hostk::sharedVariable<float[kTaps]>();
  if (::dispar::hostk::threadIdx().x < kTaps) sTaps[::dispar::hostk::threadIdx().x] = taps[::dispar::hostk::threadIdx().x];
  ::dispar::hostk::syncthreads();
  int i = ::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < kTaps; ++k) acc += sTaps[k] * ::dispar::hostk::__ldg(&in[i + kTaps - 1 - k]);
  out[i] = acc;
}

// The thread-loop form, exactly as disparcc emits it for the kernel above (--emit-cpp; kTaps is 64):
// the clone is one block, each segment between barriers a loop over its threads.
void host_fir(const float* __restrict__ in, float* __restrict__ out, const float* __restrict__ taps, int n) { ::dispar::hostk::SharedRef<float[64]> sTaps = ::dispar::hostk::sharedVariable<float[64]>(); ::dispar::hostk::forEachThread([&] {
  
  if (::dispar::hostk::threadIdx().x < kTaps) sTaps[::dispar::hostk::threadIdx().x] = taps[::dispar::hostk::threadIdx().x];
  }); ::dispar::hostk::forEachThread([&] { 
  int i = ::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < kTaps; ++k) acc += sTaps[k] * ::dispar::hostk::__ldg(&in[i + kTaps - 1 - k]);
  out[i] = acc;
 }); }

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
    launchFailed |= ::dispar::hostk::launchThreadLoops(blocks, kThreadsPerBlock, 0, &host_fir, in.data(), loopsOut.data(),
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
  std::printf("  ratio hostk/OpenMP  %.2fx (target: at most 2x); fibers %.2fx\n", loops / openmp, fibers / openmp);
  return 0;
}
