// Run profiles (docs/runtime.md, "Run profiles"): with DISPAR_PROFILE=FILE every instance measures the
// time its body spends outside its ports (compute), blocked in reads and blocked in writes, and every
// output port counts its messages and bytes; at the end rank 0 gathers every rank's records and writes
// one "dispar-profile" file. A rank whose VNODE fails writes what it has, marked incomplete.
#ifndef DISPAR_RUNTIME_PROFILE_H
#define DISPAR_RUNTIME_PROFILE_H

#include <dispar/runtime.h>

#include "dispar_lang/RunProfile.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace dispar::rt {

/// Time one instance's thread spent inside its ports, by direction, and the CPU time it used there.
/// Written by that thread only; read at the end, or by a failing thread while others still run (hence
/// atomics).
struct PortWaits {
  std::atomic<double> read{0};
  std::atomic<double> write{0};
  std::atomic<double> cpu{0};
  bool measureCpu = false;  // set before the body starts: `cpu` is measured (an oversubscribed node)
};

/// One instance's line of the profile, and one call site's split_for rates: the file's own records
/// (dispar_lang/RunProfile.h, the format's one writer and reader).
using InstanceProfile = lang::ProfiledInstance;
using SplitSiteProfile = lang::ProfiledSplitSite;
using KernelProfile = lang::ProfiledKernel;

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

/// Adds the time from its construction to its destruction to `slot` (read or write) when profiling, and
/// the thread's CPU time meanwhile to `cpuSlot` when that is measured too.
class PortWaitTimer {
 public:
  PortWaitTimer(std::atomic<double>* slot, std::atomic<double>* cpuSlot) : slot_(slot), cpuSlot_(cpuSlot) {
    if (slot_ == nullptr) return;
    start_ = profileClockSeconds();
    if (cpuSlot_ != nullptr) cpuStart_ = threadCpuSeconds();
  }
  ~PortWaitTimer() {
    if (slot_ == nullptr) return;
    const double seconds = profileClockSeconds() - start_;
    slot_->store(slot_->load(std::memory_order_relaxed) + seconds, std::memory_order_relaxed);
    if (cpuSlot_ == nullptr) return;
    const double cpu = threadCpuSeconds() - cpuStart_;
    cpuSlot_->store(cpuSlot_->load(std::memory_order_relaxed) + cpu, std::memory_order_relaxed);
  }
  PortWaitTimer(const PortWaitTimer&) = delete;
  PortWaitTimer& operator=(const PortWaitTimer&) = delete;

 private:
  std::atomic<double>* slot_;
  std::atomic<double>* cpuSlot_;
  double start_ = 0;
  double cpuStart_ = 0;
};

}  // namespace dispar::rt

#endif  // DISPAR_RUNTIME_PROFILE_H
