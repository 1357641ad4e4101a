// The two halves of the node probe, kept apart because they fail independently: a node without a
// CUDA driver still has CPUs, and a node where hwloc fails still has GPUs.
#ifndef STREAMMAP_LIB_PROBES_H
#define STREAMMAP_LIB_PROBES_H

#include "streammap/Cluster.h"

#include <string>
#include <vector>

namespace dispar::streammap {

/// Enumerates CUDA devices through the driver library at `driverPath`. A library that cannot be
/// loaded is only worth a warning when the path was asked for explicitly (`explicitPath`): the
/// default libcuda.so.1 is simply absent on CPU-only nodes.
void probeCudaGpus(const std::string& driverPath, bool explicitPath, std::vector<GpuInfo>& gpus,
                   std::vector<std::string>& warnings);

/// Fills the CPU, memory, NUMA and cache fields of `node` and the NUMA locality of its GPUs (by PCI bus
/// id). Returns false with `warning` set when hwloc could not give a topology.
bool probeHwlocTopology(NodeInfo& node, std::string& warning);

}  // namespace dispar::streammap

#endif
