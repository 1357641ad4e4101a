// The kernel launch sites one instance profiled (LaunchTimer.h; docs/runtime.md, "Run profiles").
#ifndef DISPAR_RUNTIME_LAUNCHLOG_H
#define DISPAR_RUNTIME_LAUNCHLOG_H

#include <dispar/gpu/LaunchTimer.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace dispar::rt {
class InstanceTrace;
}

namespace dispar::gpu::detail {

class LaunchLog {
 public:
  struct Site {
    std::string kernel, site, device;  // device: "gpu" or "host-path"
    std::uint64_t launches = 0;
    double seconds = 0;
  };

  LaunchLog() = default;
  ~LaunchLog();
  LaunchLog(const LaunchLog&) = delete;
  LaunchLog& operator=(const LaunchLog&) = delete;

  void addHost(const char* kernel, const char* site, double seconds);
  /// A cuBLAS or cuFFT call of `seconds` that ended now: traced only (profiles time kernels, not calls).
  void addLibraryCall(const char* function, double seconds) noexcept;
  void addDevice(const char* kernel, const char* site, void* start, void* stop, EventSecondsFn seconds);
  /// Waits for the GPU launches still timing; the sites in the order of their first launch.
  std::vector<Site> finish();
  /// Run traces: every launch becomes a kernel span of `trace` as well (nullptr: not tracing).
  void traceInto(rt::InstanceTrace* trace) { trace_ = trace; }

 private:
  struct Pending {
    std::size_t site;
    void* start;
    void* stop;
    EventSecondsFn seconds;
    const char* kernel;  // for the trace
    double hostStart;    // when the launch was recorded on the host (the trace's clock)
  };
  /// Pending GPU launches beyond this many are resolved oldest first (their events freed).
  static constexpr std::size_t kMostPending = 256;
  Site& site(const char* kernel, const char* where, const char* device, std::size_t* index = nullptr);
  void resolve(std::size_t count);

  std::vector<Site> sites_;
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> index_;
  std::vector<Pending> pending_;
  rt::InstanceTrace* trace_ = nullptr;
  double streamFree_ = 0;  // the trace's estimate of when the GPU's default stream ends its last launch
};

/// Makes `log` the calling thread's launch log (null: not profiling).
void setCurrentLaunchLog(LaunchLog* log) noexcept;

}  // namespace dispar::gpu::detail

#endif
