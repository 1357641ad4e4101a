// The cluster description's JSON form (docs/streammap.md, "Cluster description").
#ifndef STREAMMAP_CLUSTER_JSON_H
#define STREAMMAP_CLUSTER_JSON_H

#include "streammap/Cluster.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace dispar::lang {
class JsonLayoutWriter;
}  // namespace dispar::lang

namespace dispar::streammap {

/// About what one node takes in a written description, GPUs included: what writers reserve.
inline constexpr std::size_t kWrittenNodeBytes = 1024;

/// Deterministic (nodes sorted by host), two-space indented, newline at end.
std::string writeClusterJson(const Cluster& cluster);

/// The same description written into `json` as the member `key` of the object open there: a map.json
/// embeds it without a second 10 MB string for 10,000 nodes.
void writeClusterJson(lang::JsonLayoutWriter& json, const char* key, const Cluster& cluster);

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
