#include "streammap/NodeProbe.h"

#include "Probes.h"

#include <unistd.h>

#include <climits>
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
  return result;
}

}  // namespace dispar::streammap
