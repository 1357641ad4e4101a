#include "LaunchLog.h"

#include "Trace.h"

#include <algorithm>

namespace dispar::gpu::detail {

namespace {
thread_local LaunchLog* currentLog = nullptr;
}  // namespace

LaunchLog* currentLaunchLog() noexcept { return currentLog; }
void setCurrentLaunchLog(LaunchLog* log) noexcept { currentLog = log; }

// A profile must never fail a launch: what cannot be recorded (out of memory) is dropped.
void recordHostLaunch(LaunchLog* log, const char* kernel, const char* site, double seconds) noexcept {
  try {
    log->addHost(kernel, site, seconds);
  } catch (...) {
  }
}

void recordDeviceLaunch(LaunchLog* log, const char* kernel, const char* site, void* start, void* stop,
                        EventSecondsFn seconds) noexcept {
  try {
    log->addDevice(kernel, site, start, stop, seconds);
  } catch (...) {
    seconds(start, stop);  // frees the events
  }
}

void recordLibraryCall(LaunchLog* log, const char* function, double seconds) noexcept {
  log->addLibraryCall(function, seconds);
}

LaunchLog::~LaunchLog() { resolve(pending_.size()); }

void LaunchLog::addLibraryCall(const char* function, double seconds) noexcept {
  if (trace_ != nullptr) trace_->libraryCall(function, rt::profileClockSeconds() - seconds, seconds);
}

LaunchLog::Site& LaunchLog::site(const char* kernel, const char* where, const char* device, std::size_t* index) {
  const auto [it, added] = index_.try_emplace({where, kernel, device}, sites_.size());
  if (added) sites_.push_back(Site{kernel, where, device, 0, 0});
  if (index != nullptr) *index = it->second;
  return sites_[it->second];
}

void LaunchLog::addHost(const char* kernel, const char* where, double seconds) {
  Site& s = site(kernel, where, "host-path");
  ++s.launches;
  s.seconds += seconds;
  if (trace_ != nullptr) trace_->kernel(kernel, rt::profileClockSeconds() - seconds, seconds);
}

void LaunchLog::addDevice(const char* kernel, const char* where, void* start, void* stop, EventSecondsFn seconds) {
  std::size_t index = 0;
  ++site(kernel, where, "gpu", &index).launches;
  // The GPU's time of the launch starts, on the trace, when the host queued it (no GPU clock is read).
  pending_.push_back(Pending{index, start, stop, seconds, kernel, trace_ != nullptr ? rt::profileClockSeconds() : 0});
  if (pending_.size() > kMostPending) resolve(pending_.size() - kMostPending / 2);
}

void LaunchLog::resolve(std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const double seconds = pending_[i].seconds(pending_[i].start, pending_[i].stop);
    sites_[pending_[i].site].seconds += seconds;
    if (trace_ != nullptr) {
      // The default stream runs launches one after another: one starts when queued or when the one
      // before it ended, whichever is later.
      const double start = std::max(pending_[i].hostStart, streamFree_);
      streamFree_ = start + seconds;
      trace_->kernel(pending_[i].kernel, start, seconds);
    }
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(count));
}

std::vector<LaunchLog::Site> LaunchLog::finish() {
  resolve(pending_.size());
  return sites_;
}

}  // namespace dispar::gpu::detail
