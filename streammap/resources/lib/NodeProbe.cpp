#include "streammap/NodeProbe.h"

#include "Probes.h"

#include <dispar_lang/CpuQuota.h>

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <ctime>

namespace dispar::streammap {

namespace {

constexpr const char* kDefaultCudaDriver = "libcuda.so.1";

// Without hwloc: the operating system's processor and memory counts, so that the node is still usable.
void fillWithoutTopology(NodeInfo& node) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  long pages = sysconf(_SC_PHYS_PAGES);
  long pageSize = sysconf(_SC_PAGESIZE);
  node.sockets = 1;
  node.threads = node.cores = cpus > 0 ? static_cast<int>(cpus) : 1;
  node.memoryBytes =
      pages > 0 && pageSize > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(pageSize) : 0;
}

}  // namespace

void applyCpuLimit(NodeInfo& node, double limit) {
  if (!(limit > 0) || limit >= node.cores) return;
  // As many cores as the quota lets run at once, each at the share of a core the quota leaves it: the
  // node's capacity (cores x speed) is the quota.
  const int cores = std::max(1, static_cast<int>(std::ceil(limit - 1e-9)));
  const int threadsPerCore = std::max(1, node.threads / std::max(1, node.cores));
  node.cpuSpeed *= limit / cores;
  node.cores = cores;
  node.threads = std::min(node.threads, cores * threadsPerCore);
  node.sockets = std::min(node.sockets, cores);
}

std::string localHostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0 || !name[0]) return "localhost";
  return name;
}

ProbeResult probeLocalNode(const ProbeOptions& options) {
  ProbeResult result;
  NodeInfo& node = result.node;
  node.host = options.hostName.empty() ? localHostName() : options.hostName;
  node.source = RecordSource::Probe;
  node.status = NodeStatus::Up;
  node.lastHeartbeat = static_cast<std::int64_t>(std::time(nullptr));

  std::string driver = options.cudaDriverPath;
  bool explicitDriver = !driver.empty();
  if (driver.empty()) {
    const char* env = std::getenv("DISPAR_CUDA_DRIVER");
    explicitDriver = env && *env;
    driver = explicitDriver ? env : kDefaultCudaDriver;
  }
  probeCudaGpus(driver, explicitDriver, node.gpus, result.warnings);

  std::string warning;
  if (!probeHwlocTopology(node, warning)) {
    result.warnings.push_back("no hwloc topology (" + warning +
                              "); recording the operating system's processor and memory counts");
    fillWithoutTopology(node);
  }
  // A container's or a batch system's CPU quota (dispar_lang/CpuQuota.h): what the node can really run.
  if (const std::optional<double> limit = lang::cgroupCpuLimit()) applyCpuLimit(node, *limit);
  return result;
}

}  // namespace dispar::streammap
