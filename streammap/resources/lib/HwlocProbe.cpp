// CPU, memory, NUMA and cache topology through hwloc.
#include "Probes.h"

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

namespace dispar::streammap {

namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* topology) const { hwloc_topology_destroy(topology); }
};
using Topology = std::unique_ptr<hwloc_topology, TopologyDeleter>;

// Checked hwloc call: hwloc reports failure as -1 with errno set.
#define DISPAR_HWLOC_CHECK(call, warning)                                                                              \
  ((call) == 0 ? true                                                                                                  \
               : ((warning) = std::string(#call) + " failed at " + __FILE__ + ":" + std::to_string(__LINE__) + ": " +  \
                              std::strerror(errno),                                                                    \
                  false))

int countOf(hwloc_topology_t topology, hwloc_obj_type_t type) {
  int n = hwloc_get_nbobjs_by_type(topology, type);
  return n > 0 ? n : 0;
}

int numaNodeOfPciDevice(hwloc_topology_t topology, const std::string& busId) {
  hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(topology, busId.c_str());
  if (!pci) return -1;
  hwloc_obj_t parent = hwloc_get_non_io_ancestor_obj(topology, pci);
  if (!parent || !parent->nodeset) return -1;
  // A device attached below one NUMA node's locality; several means the locality is not one node.
  if (hwloc_bitmap_weight(parent->nodeset) != 1) return -1;
  return hwloc_bitmap_first(parent->nodeset);
}

}  // namespace

bool probeHwlocTopology(NodeInfo& node, std::string& warning) {
  hwloc_topology_t raw = nullptr;
  if (!DISPAR_HWLOC_CHECK(hwloc_topology_init(&raw), warning)) return false;
  Topology topology(raw);
  // PCI discovery costs time; only GPUs need it (for their NUMA locality).
  if (!node.gpus.empty() &&
      !DISPAR_HWLOC_CHECK(hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT), warning))
    return false;
  if (!DISPAR_HWLOC_CHECK(hwloc_topology_load(raw), warning)) return false;

  node.sockets = std::max(1, countOf(raw, HWLOC_OBJ_PACKAGE));
  node.threads = std::max(1, countOf(raw, HWLOC_OBJ_PU));
  node.cores = std::max(1, countOf(raw, HWLOC_OBJ_CORE));
  if (countOf(raw, HWLOC_OBJ_CORE) == 0) node.cores = node.threads;  // hwloc saw no core level
  node.memoryBytes = hwloc_get_root_obj(raw)->total_memory;

  node.numa.clear();
  for (hwloc_obj_t numa = hwloc_get_next_obj_by_type(raw, HWLOC_OBJ_NUMANODE, nullptr); numa;
       numa = hwloc_get_next_obj_by_type(raw, HWLOC_OBJ_NUMANODE, numa))
    node.numa.push_back({static_cast<int>(numa->os_index), numa->attr->numanode.local_memory});
  std::sort(node.numa.begin(), node.numa.end(), [](const NumaInfo& a, const NumaInfo& b) { return a.index < b.index; });

  // Data and unified caches, grouped by (level, size); instruction caches do not hold data.
  std::map<std::pair<int, std::uint64_t>, int> caches;
  for (hwloc_obj_type_t type :
       {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE}) {
    for (hwloc_obj_t cache = hwloc_get_next_obj_by_type(raw, type, nullptr); cache;
         cache = hwloc_get_next_obj_by_type(raw, type, cache))
      ++caches[{static_cast<int>(cache->attr->cache.depth), cache->attr->cache.size}];
  }
  node.caches.clear();
  for (const auto& [key, count] : caches) node.caches.push_back({key.first, key.second, count});

  for (GpuInfo& gpu : node.gpus) gpu.numaNode = numaNodeOfPciDevice(raw, gpu.pciBusId);
  return true;
}

}  // namespace dispar::streammap
