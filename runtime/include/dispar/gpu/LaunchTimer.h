// Kernel launch sites in run profiles (docs/runtime.md, "Run profiles"): StreamCC puts a LaunchTimer
// temporary in front of every kernel launch it lowers, so that it lives until the launch and its check
// are done. Without DISPAR_PROFILE it costs one thread-local read. On the host path it times the launch
// (the kernel runs during it); on a GPU it records a CUDA event before and after the launch on the
// default stream, resolved when the instance ends (the GPU's time, not the launch call's). On the SMPI
// target it also charges the launch to the simulated host's GPU (dispar/smpi/SimulatedGpu.h).
#ifndef DISPAR_GPU_LAUNCHTIMER_H
#define DISPAR_GPU_LAUNCHTIMER_H

#include <dispar/dispar.h>

#include <chrono>

#if defined(__CUDACC__) || defined(__CUDA_RUNTIME_H__)
#include <cuda_runtime.h>
#endif
#ifdef DISPAR_TARGET_SMPI
#include <dispar/smpi/SimulatedGpu.h>
#endif

namespace dispar::gpu {

namespace detail {

/// The launch sites of the instance the calling thread runs; null when not profiling (runtime).
class LaunchLog;
LaunchLog* currentLaunchLog() noexcept;
void recordHostLaunch(LaunchLog* log, const char* kernel, const char* site, double seconds) noexcept;
/// Seconds between two recorded events, waiting for the second; frees both (0 when they failed).
using EventSecondsFn = double (*)(void* start, void* stop);
void recordDeviceLaunch(LaunchLog* log, const char* kernel, const char* site, void* start, void* stop,
                        EventSecondsFn seconds) noexcept;
void recordLibraryCall(LaunchLog* log, const char* function, double seconds) noexcept;

#if defined(__CUDACC__) || defined(__CUDA_RUNTIME_H__)
inline double eventSeconds(void* start, void* stop) {
  float milliseconds = 0;
  const auto first = static_cast<cudaEvent_t>(start), second = static_cast<cudaEvent_t>(stop);
  const bool timed =
      cudaEventSynchronize(second) == cudaSuccess && cudaEventElapsedTime(&milliseconds, first, second) == cudaSuccess;
  cudaEventDestroy(first);
  cudaEventDestroy(second);
  return timed ? milliseconds / 1000.0 : 0.0;
}
#endif

}  // namespace detail

class LaunchTimer {
 public:
  LaunchTimer(const char* kernel, const char* site) noexcept
      : log_(detail::currentLaunchLog()), kernel_(kernel), site_(site) {
    if (log_ == nullptr) return;
#if defined(__CUDACC__) || defined(__CUDA_RUNTIME_H__)
    if (!::dispar::gpu::onHost()) {
      cudaEvent_t start = nullptr;
      if (cudaEventCreate(&start) == cudaSuccess && cudaEventRecord(start, 0) == cudaSuccess) start_ = start;
      return;
    }
#endif
    hostStart_ = std::chrono::steady_clock::now();
  }
  ~LaunchTimer() {
    // Read before a simulated GPU runs the kernel, which lets the other simulated ranks run.
    const auto hostEnd = log_ != nullptr ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
#ifdef DISPAR_TARGET_SMPI
    simulated_.finish();  // before the log reads the clock
#endif
    if (log_ == nullptr) return;
#if defined(__CUDACC__) || defined(__CUDA_RUNTIME_H__)
    if (start_ != nullptr) {
      cudaEvent_t stop = nullptr;
      if (cudaEventCreate(&stop) == cudaSuccess && cudaEventRecord(stop, 0) == cudaSuccess)
        detail::recordDeviceLaunch(log_, kernel_, site_, start_, stop, &detail::eventSeconds);
      else
        cudaEventDestroy(static_cast<cudaEvent_t>(start_));
      return;
    }
#endif
    const double seconds = std::chrono::duration<double>(hostEnd - hostStart_).count();
    detail::recordHostLaunch(log_, kernel_, site_, seconds);
  }
  LaunchTimer(const LaunchTimer&) = delete;
  LaunchTimer& operator=(const LaunchTimer&) = delete;

 private:
  detail::LaunchLog* log_;
  const char* kernel_;
  const char* site_;
  void* start_ = nullptr;
  std::chrono::steady_clock::time_point hostStart_;
#ifdef DISPAR_TARGET_SMPI
  // A member: constructed before the constructor's body, so that it spans the whole launch; finished
  // first thing in the destructor, so that the log's clock (MPI_Wtime under SMPI) is read after it.
  smpi::SimulatedKernel simulated_;
#endif
};

/// A cuBLAS or cuFFT call in a run trace (docs/runtime.md, "Run traces"): StreamCC puts one in front of
/// every such call of a CG VNODE (`((void)LibraryCallTimer("cublasSgemm", "app.dsp:41:3"), cublasSgemm)(...)`),
/// a temporary that lives until the call is done. It times the call on the host: on the host path the
/// library's work, on a GPU its queuing (the work runs after). Without DISPAR_PROFILE or DISPAR_TRACE it
/// costs one thread-local read.
class LibraryCallTimer {
 public:
  LibraryCallTimer(const char* function, const char* /*site*/) noexcept
      : log_(detail::currentLaunchLog()), function_(function) {
    if (log_ != nullptr) start_ = std::chrono::steady_clock::now();
  }
  ~LibraryCallTimer() {
    if (log_ != nullptr)
      detail::recordLibraryCall(log_, function_,
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  LibraryCallTimer(const LibraryCallTimer&) = delete;
  LibraryCallTimer& operator=(const LibraryCallTimer&) = delete;

 private:
  detail::LaunchLog* log_;
  const char* function_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace dispar::gpu

#endif  // DISPAR_GPU_LAUNCHTIMER_H
