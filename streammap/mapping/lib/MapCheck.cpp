#include "streammap/MapCheck.h"

#include "dispar_lang/ComputeCapability.h"
#include "streammap/AtomicFiles.h"
#include "streammap/ClusterDigest.h"
#include "streammap/ClusterJson.h"
#include "streammap/MappingProblem.h"
#include "streammap/ResourceDb.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace dispar::streammap {

namespace {

// "rank 3 (lowpass[0], demod[0])": a rank and the instances it runs (`first`..`last` of record.ranks).
std::string rankLabel(const std::vector<RankRecord>& entries, std::size_t first, std::size_t last) {
  std::string label = "rank " + std::to_string(entries[first].rank) + " (";
  for (std::size_t i = first; i < last; ++i)
    label += (i > first ? ", " : "") + entries[i].vnode + "[" + std::to_string(entries[i].replica) + "]";
  return label + ")";
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& s : items) text += (text.empty() ? "" : ", ") + s;
  return text;
}

}  // namespace

bool loadClusterSource(const ClusterSource& source, Cluster& out, std::string& error) {
  if (source.kind == ClusterSource::Kind::Database)
    return loadClusterFromDatabase(source.path, source.ttlSeconds, out, error);
  std::string text;
  if (!readFile(source.path, text, error)) return false;
  if (!parseClusterJson(text, out, error)) {
    error = source.path + ": " + error;
    return false;
  }
  return true;
}

CheckReport checkMapping(const MapRecord& record, const Cluster& current) {
  CheckReport report;
  if (clusterDigest(current) != record.clusterDigest) {
    report.changes = describeClusterChanges(record.cluster, current);
    if (report.changes.empty()) report.changes.push_back("resource digest differs from the mapping's");
  }
  std::map<std::string, const NodeInfo*> nodes;
  for (const NodeInfo& n : current.nodes) nodes[n.host] = &n;

  std::map<std::pair<std::string, int>, std::uint64_t> memoryOnDevice;
  bool gpuRanks = false;
  std::set<std::string> unknownGpus;
  // Per rank: its host and its GPU are the rank's (lang::checkRankLayout); memory is per instance.
  const std::vector<RankRecord>& entries = record.ranks;
  for (std::size_t first = 0, last = 0; first < entries.size(); first = last) {
    last = first;
    while (last < entries.size() && entries[last].rank == entries[first].rank) ++last;
    const RankRecord& k = entries[first];
    const std::string label = rankLabel(entries, first, last);
    auto it = nodes.find(k.host);
    if (it == nodes.end()) {
      report.problems.push_back(label + ": host " + k.host + " is no longer in the cluster");
      continue;
    }
    const NodeInfo& node = *it->second;
    if (node.status != NodeStatus::Up) {
      report.problems.push_back(label + ": host " + k.host + " is " + nodeStatusName(node.status));
      continue;
    }
    // The rank's GPU instances (all on its one device).
    std::size_t gpuFirst = last, gpuInstances = 0;
    for (std::size_t i = first; i < last; ++i)
      if (entries[i].mode == "gpu") {
        gpuFirst = std::min(gpuFirst, i);
        ++gpuInstances;
      }
    if (gpuInstances == 0) continue;
    gpuRanks = true;
    const std::optional<int> device = entries[gpuFirst].device;
    const std::string gpuLabel =
        gpuInstances == last - first ? label : "rank " + std::to_string(k.rank) + " (its GPU instances)";
    const GpuInfo* gpu = nullptr;
    for (const GpuInfo& g : node.gpus)
      if (device && g.index == *device) gpu = &g;
    if (!gpu) {
      report.problems.push_back(gpuLabel + ": " + k.host + " has no gpu " +
                                (device ? std::to_string(*device) : std::string("(none recorded)")));
      continue;
    }
    const std::string where = k.host + " gpu " + std::to_string(gpu->index) + " (" + gpu->name +
                              ", compute capability " + lang::formatComputeCapability(gpu->ccMajor, gpu->ccMinor) + ")";
    // A GPU known only by a scheduler's count (Slurm's "gpu:4") has no compute capability or memory on
    // record: those checks wait for the runtime's, at start-up.
    const bool capabilityKnown = gpu->ccMajor > 0;
    if (!capabilityKnown && !record.cudaArchs.empty())
      unknownGpus.insert(k.host + " gpu " + std::to_string(gpu->index));
    if (!binaryRunsOn(record.cudaArchs, *gpu))
      report.problems.push_back(gpuLabel + ": none of the binary's CUDA architectures (" + joined(record.cudaArchs) +
                                ") runs on " + where);
    for (std::size_t i = first; i < last; ++i) {
      const RankRecord& instance = entries[i];
      if (instance.mode != "gpu" || !instance.memory) continue;
      if (gpu->memoryBytes == 0) {
        unknownGpus.insert(k.host + " gpu " + std::to_string(gpu->index));
        continue;
      }
      if (*instance.memory > gpu->memoryBytes)
        report.problems.push_back(rankLabel(entries, i, i + 1) + ": needs " + std::to_string(*instance.memory) +
                                  " bytes of device memory, " + where + " has " + std::to_string(gpu->memoryBytes));
      memoryOnDevice[{k.host, gpu->index}] += *instance.memory;
    }
  }
  for (const auto& [device, bytes] : memoryOnDevice) {
    const NodeInfo& node = *nodes[device.first];
    for (const GpuInfo& g : node.gpus)
      if (g.index == device.second && g.memoryBytes > 0 && bytes > g.memoryBytes)
        report.problems.push_back(device.first + " gpu " + std::to_string(g.index) +
                                  ": the instances mapped to it need " + std::to_string(bytes) +
                                  " bytes of device memory together, it has " + std::to_string(g.memoryBytes));
  }
  for (const std::string& g : unknownGpus)
    report.notes.push_back(g + ": model unknown (no probe recorded it): architecture and memory checked at start-up");
  if (gpuRanks && record.cudaArchs.empty())
    report.notes.push_back(
        "the rtg records no CUDA architectures (built without device code?): architectures not checked");
  return report;
}

}  // namespace dispar::streammap
