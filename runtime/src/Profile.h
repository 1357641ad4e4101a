// Run profiles (docs/runtime.md, "Run profiles"): with DISPAR_PROFILE=FILE every instance measures the
// time its body spends outside its ports (compute), blocked in reads and blocked in writes, and every
// output port counts its messages and bytes; at the end rank 0 gathers every rank's records and writes
// one "dispar-profile" file. A rank whose VNODE fails writes what it has, marked incomplete.
#ifndef DISPAR_RUNTIME_PROFILE_H
#define DISPAR_RUNTIME_PROFILE_H

#include <dispar/runtime.h>

#include "dispar_lang/RunProfile.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dispar::rt {

/// Time one instance's thread spent inside its ports, by direction, and the CPU time it used there.
/// Written by that thread only; read at the end, or by a failing thread while others still run (hence
/// atomics).
struct PortWaits {
  std::atomic<double> read{0};
  std::atomic<double> write{0};
  bool measureCpu = false;  // set before the body starts: the CPU time in ports is measured (an oversubscribed node)
  // The CPU time in ports (PortWaitTimer): the calls' time on their core before they waited, and their
  // waits, whose CPU time is read from the thread's clock in one wait of kWaitSample.
  std::atomic<double> running{0};
  std::atomic<double> waitWall{0};
  std::atomic<double> sampledWaitWall{0};
  std::atomic<double> sampledWaitCpu{0};
  std::uint64_t waits = 0;
  // Every one of the first kExactWaits waits is measured (a short run's few waits are too few to sample),
  // then one in kWaitSample.
  static constexpr std::uint64_t kExactWaits = 256;
  static constexpr std::uint64_t kWaitSample = 8;

  /// The CPU time spent in ports: the waits' wall time at the CPU share the sampled waits had.
  double cpuInPorts() const {
    const double sampledWall = sampledWaitWall.load();
    const double share = sampledWall > 0 ? std::min(1.0, sampledWaitCpu.load() / sampledWall) : 1.0;
    return running.load() + waitWall.load() * share;
  }
};

/// One instance's line of the profile, and one call site's split_for rates: the file's own records
/// (dispar_lang/RunProfile.h, the format's one writer and reader).
using InstanceProfile = lang::ProfiledInstance;
using SplitSiteProfile = lang::ProfiledSplitSite;
using KernelProfile = lang::ProfiledKernel;

/// The CPU time of a body's compute on an oversubscribed node: the thread's CPU time (`cpuSeconds`) less
/// the CPU time its port calls are estimated to have used (PortWaits::cpuInPorts), no more than the body's
/// wall time outside its ports (`computeSeconds`). The port share is sampled: where the samples overstate
/// it (a sampled wait that spun while most of them slept), the difference is not a measurement (at or
/// below zero, which the history refuses); the wall time outside the ports, as a node that is not
/// oversubscribed measures it, then stands, no more than the thread's CPU time.
inline double computeCpuSeconds(double cpuSeconds, double cpuInPorts, double computeSeconds) {
  const double estimate = cpuSeconds - cpuInPorts;
  if (estimate > 0) return std::min(estimate, computeSeconds);
  return std::max(0.0, std::min(computeSeconds, cpuSeconds));
}

/// The calling thread's CPU time so far, in seconds.
double threadCpuSeconds();

/// Whether a rank's thread CPU clock is its own. Not on the SMPI target: SimGrid runs every rank on one
/// thread, whose CPU clock is the whole simulator's; a profile there measures no port CPU time and takes
/// `cpu_s` as the simulated compute.
#ifdef DISPAR_TARGET_SMPI
inline constexpr bool kRankOwnsThreadCpuClock = false;
#else
inline constexpr bool kRankOwnsThreadCpuClock = true;
#endif

/// The clock a profile's times are read from, in seconds from an arbitrary origin: steady time, and on
/// the SMPI target the simulated time (MPI_Wtime), so that the profile of a simulated run describes the
/// simulated cluster rather than the simulator, which runs every rank in turn in one process.
double profileClockSeconds();

/// Sets `line`'s read and write waits from `waits` and its compute time: the body's time since
/// `bodyStart` (profileClockSeconds()) outside its ports.
void recordBodyTimes(InstanceProfile& line, const PortWaits& waits, double bodyStart);

/// The model name of this machine's CPU ("/proc/cpuinfo"'s first "model name"), for profiles of
/// instances that ran on the CPU; "CPU" when the system does not say.
const std::string& cpuModel();

/// A pipe's traffic, summed over its writer instances.
struct PipeTraffic {
  std::uint64_t messages = 0, bytes = 0;
};

/// DISPAR_PROFILE, or empty when profiling is off.
std::string profilePath();

/// The profile's JSON text. `failure`: empty for a complete profile; else why it is partial. `wallSeconds`:
/// the run's wall time, when known.
std::string profileJson(const ProgramSpec& program, const std::vector<InstanceProfile>& instances,
                        const std::vector<PipeTraffic>& pipes, const std::vector<KernelProfile>& kernels,
                        const std::vector<SplitSiteProfile>& splitSites, const std::string& failure,
                        std::optional<double> wallSeconds = std::nullopt);

/// Collective over MPI_COMM_WORLD: gathers every rank's instances and pipe traffic on rank 0, which
/// writes `path` (through a temporary beside it, renamed). False with `error` on rank 0 when it cannot.
/// `runStart`: profileClockSeconds() when the run began, for the profile's wall time (rank 0's).
bool gatherProfile(const std::string& path, const ProgramSpec& program, const std::vector<InstanceProfile>& mine,
                   const std::vector<PipeTraffic>& myPipes, const std::vector<KernelProfile>& myKernels,
                   const std::vector<SplitSiteProfile>& mySplitSites, int rank, double runStart, std::string& error);

/// Writes `text` to `path` through a temporary beside it.
bool writeProfileFile(const std::string& path, const std::string& text, std::string& error);
/// As writeProfileFile, for the file `variable` (DISPAR_PROFILE, DISPAR_TRACE) names; `what` ("profile")
/// for its errors.
bool writeResultFile(const char* variable, const char* what, const std::string& path, const std::string& text,
                     std::string& error);

/// Adds the time from its construction to its destruction to `slot` (read or write) when profiling, and
/// the thread's CPU time meanwhile to `cpu` when that is measured too. The thread's CPU clock is a system
/// call (about 0.5 µs, two per call: as much as a fine-grained port call itself), so it is read only in
/// calls that wait (noteWait(), from the runtime's waiting primitives), and there in one wait of
/// PortWaits::kWaitSample: until its first wait a call runs on its core (its wall time is its CPU time),
/// and the waits' CPU share is the sampled waits' (PortWaits::cpuInPorts).
class PortWaitTimer {
 public:
  PortWaitTimer(std::atomic<double>* slot, PortWaits* cpu) : slot_(slot), cpu_(cpu) {
    if (slot_ == nullptr) return;
    start_ = profileClockSeconds();
    if (cpu_ != nullptr) enclosing_ = std::exchange(active(), this);
  }
  ~PortWaitTimer() {
    if (slot_ == nullptr) return;
    const double end = profileClockSeconds();
    slot_->store(slot_->load(std::memory_order_relaxed) + (end - start_), std::memory_order_relaxed);
    if (cpu_ == nullptr) return;
    active() = enclosing_;
    const auto add = [](std::atomic<double>& to, double seconds) {
      to.store(to.load(std::memory_order_relaxed) + seconds, std::memory_order_relaxed);
    };
    if (waitStart_ < 0) {
      add(cpu_->running, end - start_);
      return;
    }
    add(cpu_->running, waitStart_ - start_);
    add(cpu_->waitWall, end - waitStart_);
    if (waitCpuStart_ >= 0) {
      add(cpu_->sampledWaitWall, end - waitStart_);
      add(cpu_->sampledWaitCpu, threadCpuSeconds() - waitCpuStart_);
    }
  }
  PortWaitTimer(const PortWaitTimer&) = delete;
  PortWaitTimer& operator=(const PortWaitTimer&) = delete;

  /// The call is about to wait (the first time counts).
  void waits() {
    if (waitStart_ >= 0) return;
    waitStart_ = profileClockSeconds();
    const std::uint64_t wait = cpu_->waits++;
    if (wait < PortWaits::kExactWaits || wait % PortWaits::kWaitSample == 0) waitCpuStart_ = threadCpuSeconds();
  }
  /// The timer measuring CPU time in the port call this thread is in, if any.
  static PortWaitTimer*& active();

 private:
  std::atomic<double>* slot_;
  PortWaits* cpu_;
  PortWaitTimer* enclosing_ = nullptr;
  double start_ = 0;
  double waitStart_ = -1;
  double waitCpuStart_ = -1;
};

/// Called by the runtime's waiting primitives before they yield, sleep or block (see PortWaitTimer).
inline void noteWait() {
  if (PortWaitTimer* timer = PortWaitTimer::active()) timer->waits();
}

}  // namespace dispar::rt

#endif  // DISPAR_RUNTIME_PROFILE_H
