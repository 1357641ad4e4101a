// `streammap check`: is a mapping still valid for the current resources and for the binary?
#ifndef STREAMMAP_MAP_CHECK_H
#define STREAMMAP_MAP_CHECK_H

#include "streammap/Cluster.h"
#include "streammap/MapFile.h"

#include <string>
#include <vector>

namespace dispar::streammap {

struct CheckReport {
  std::vector<std::string> changes;   // what differs from the snapshot the mapping used
  std::vector<std::string> problems;  // why a rank cannot run where it was mapped
  std::vector<std::string> notes;     // what could not be checked, and why
  bool ok() const { return changes.empty() && problems.empty(); }
};

/// Compares the mapping with `current`: the resource digest (and, when it differs, the changes in
/// words), every rank's host (up), every GPU rank's device (present, one of the binary's CUDA
/// architectures runs on it, the declared memory of the ranks sharing it fits).
CheckReport checkMapping(const MapRecord& record, const Cluster& current);

/// Reads the cluster a source names: the resource database or a cluster description file.
bool loadClusterSource(const ClusterSource& source, Cluster& out, std::string& error);

}  // namespace dispar::streammap

#endif
