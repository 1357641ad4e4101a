// Probe of the local node: CPUs, memory, NUMA and caches through hwloc; GPUs through the CUDA driver
// API, loaded at run time so that streammap runs (and reports zero GPUs) on nodes without a driver.
#ifndef STREAMMAP_NODE_PROBE_H
#define STREAMMAP_NODE_PROBE_H

#include "streammap/Cluster.h"

#include <string>
#include <vector>

namespace dispar::streammap {

struct ProbeOptions {
  std::string hostName;        // empty: localHostName()
  std::string cudaDriverPath;  // empty: $DISPAR_CUDA_DRIVER when set, else "libcuda.so.1"
};

struct ProbeResult {
  NodeInfo node;                      // source Probe, status Up, lastHeartbeat = probe time
  std::vector<std::string> warnings;  // resources that could not be probed; the rest is still filled in
};

ProbeResult probeLocalNode(const ProbeOptions& options);

/// Records a CPU quota of `limit` CPUs (a cgroup's, dispar_lang/CpuQuota.h) on a node whose topology has
/// more cores: as many cores as can run at once (the limit rounded up), each at the share of a core the
/// limit leaves it, so that cores x speed is the limit. No change when the limit is not below the cores.
void applyCpuLimit(NodeInfo& node, double limit);

/// This machine's host name (gethostname), or "localhost" when it has none.
std::string localHostName();

}  // namespace dispar::streammap

#endif
