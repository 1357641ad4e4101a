// The cluster description's JSON form (docs/streammap.md, "Cluster description").
#ifndef STREAMMAP_CLUSTER_JSON_H
#define STREAMMAP_CLUSTER_JSON_H

#include "streammap/Cluster.h"

#include <cstdint>
#include <string>

namespace dispar::streammap {

/// Deterministic (nodes sorted by host), two-space indented, newline at end.
std::string writeClusterJson(const Cluster& cluster);

/// Parses a description; on failure returns false and sets `error` to a message naming the offending
/// field (e.g. "nodes[2].gpus[0].compute_capability: expected \"MAJOR.MINOR\"") or JSON line/column.
bool parseClusterJson(const std::string& text, Cluster& out, std::string& error);

/// writeClusterJson plus read-only fields that parseClusterJson accepts and ignores: with `now` set
/// (unix seconds), each node with a heartbeat gets "heartbeat_age_s".
std::string writeClusterJson(const Cluster& cluster, std::int64_t now);

/// Reads and parses a cluster description file; errors start with the file name.
bool readClusterJsonFile(const std::string& path, Cluster& out, std::string& error);

}  // namespace dispar::streammap

#endif
