// The one rule for how much CPU a process has: its affinity mask's cores, limited by its cgroup's CPU quota
// (a container's `--cpus`, a batch system's limit, a node of tests/cluster's emulated cluster). A process
// limited to half a CPU runs half as fast however many cores its affinity allows, and a process that
// spins on cores it does not have takes that time from the work. The runtime sizes its waiting and its
// split_for threads by it, and `streammap --discover` records a limited node by it.
#ifndef DISPAR_LANG_CPU_QUOTA_H
#define DISPAR_LANG_CPU_QUOTA_H

#include <optional>
#include <string>

namespace dispar::lang {

/// The CPU time per second of wall time the calling process may use, by the tightest quota of its cgroup
/// and the cgroup's ancestors (cgroup v2's cpu.max, v1's cpu.cfs_quota_us / cpu.cfs_period_us), or
/// nullopt when none is set or none can be read.
std::optional<double> cgroupCpuLimit();

/// The same, from explicit files, for tests: `procCgroup` as /proc/self/cgroup reads, `mountInfo` as
/// /proc/self/mountinfo, and `root` prefixed to every path read from them.
std::optional<double> cgroupCpuLimit(const std::string& procCgroup, const std::string& mountInfo,
                                     const std::string& root);

/// The cores the calling process can use at once: its affinity mask's count, no more than its cgroup
/// limit rounded up, at least 1.
unsigned usableCores();

}  // namespace dispar::lang

#endif
