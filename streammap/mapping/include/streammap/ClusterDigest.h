// The resource snapshot a mapping was made from: a canonical text of the cluster's mapping-relevant
// fields, its digest, and a description of what changed between two snapshots.
#ifndef STREAMMAP_CLUSTER_DIGEST_H
#define STREAMMAP_CLUSTER_DIGEST_H

#include "streammap/Cluster.h"

#include <string>
#include <vector>

namespace dispar::streammap {

/// One line per node in host order: host, status, cores, CPU speed, bandwidth, and per GPU its index,
/// name, compute capability, memory, SMs, clock and measured rate. Heartbeats, record source, threads,
/// caches and NUMA layout are left out: they do not change a mapping.
std::string canonicalClusterText(const Cluster& cluster);

/// "fnv1a64:" and 16 hex digits of the FNV-1a hash of `text` (change detection, not security).
std::string textDigest(const std::string& text);

/// textDigest of canonicalClusterText.
std::string clusterDigest(const Cluster& cluster);

/// What differs, per node, in words: "node2: up -> down", "node1: gpu 1 (NVIDIA A100) gone",
/// "node3: gone", "node4: new". Empty when the mapping-relevant fields are equal.
std::vector<std::string> describeClusterChanges(const Cluster& before, const Cluster& now);

}  // namespace dispar::streammap

#endif
