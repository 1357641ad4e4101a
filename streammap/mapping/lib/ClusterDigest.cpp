#include "streammap/ClusterDigest.h"

#include "dispar_lang/ComputeCapability.h"
#include "streammap/NumberFormat.h"

#include <cinttypes>
#include <cstdio>
#include <map>

namespace dispar::streammap {

namespace {

std::string number(double x) {
  std::string text;
  appendDigestNumber(text, x);
  return text;
}

std::string gpuLabel(const GpuInfo& g) { return "gpu " + std::to_string(g.index) + " (" + g.name + ")"; }

std::string capability(const GpuInfo& g) { return lang::formatComputeCapability(g.ccMajor, g.ccMinor); }

}  // namespace

std::string canonicalClusterText(const Cluster& cluster) {
  std::map<std::string, const NodeInfo*> byHost;  // host order, whatever the input order
  for (const NodeInfo& n : cluster.nodes) byHost[n.host] = &n;
  std::string text;
  for (const auto& [host, n] : byHost) {
    text += host + "|" + nodeStatusName(n->status) + "|cores=" + std::to_string(n->cores) +
            "|cpu_speed=" + number(n->cpuSpeed) +
            "|bandwidth=" + (n->bandwidthBytesPerSec ? number(*n->bandwidthBytesPerSec) : std::string("default"));
    for (const GpuInfo& g : n->gpus)
      text += "|gpu" + std::to_string(g.index) + "=" + g.name + "," + capability(g) + "," +
              std::to_string(g.memoryBytes) + "," + std::to_string(g.multiprocessors) + "," +
              std::to_string(g.clockKHz) + "," + (g.measuredRate ? number(*g.measuredRate) : std::string("none"));
    text += "\n";
  }
  return text;
}

std::string textDigest(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "fnv1a64:%016" PRIx64, hash);
  return buffer;
}

std::string clusterDigest(const Cluster& cluster) { return textDigest(canonicalClusterText(cluster)); }

std::vector<std::string> describeClusterChanges(const Cluster& before, const Cluster& now) {
  std::map<std::string, const NodeInfo*> old, cur;
  for (const NodeInfo& n : before.nodes) old[n.host] = &n;
  for (const NodeInfo& n : now.nodes) cur[n.host] = &n;
  std::vector<std::string> changes;
  for (const auto& [host, a] : old) {
    auto it = cur.find(host);
    if (it == cur.end()) {
      changes.push_back(host + ": gone");
      continue;
    }
    const NodeInfo* b = it->second;
    auto note = [&](const std::string& what) { changes.push_back(host + ": " + what); };
    if (a->status != b->status) note(std::string(nodeStatusName(a->status)) + " -> " + nodeStatusName(b->status));
    if (a->cores != b->cores) note("cores " + std::to_string(a->cores) + " -> " + std::to_string(b->cores));
    if (a->cpuSpeed != b->cpuSpeed) note("cpu speed " + number(a->cpuSpeed) + " -> " + number(b->cpuSpeed));
    if (a->bandwidthBytesPerSec != b->bandwidthBytesPerSec) note("network bandwidth changed");
    std::map<int, const GpuInfo*> oldGpus, curGpus;
    for (const GpuInfo& g : a->gpus) oldGpus[g.index] = &g;
    for (const GpuInfo& g : b->gpus) curGpus[g.index] = &g;
    for (const auto& [index, g] : oldGpus) {
      auto found = curGpus.find(index);
      if (found == curGpus.end()) {
        note(gpuLabel(*g) + " gone");
        continue;
      }
      const GpuInfo* h = found->second;
      if (g->name != h->name) note(gpuLabel(*g) + " replaced by " + h->name);
      if (g->ccMajor != h->ccMajor || g->ccMinor != h->ccMinor)
        note(gpuLabel(*g) + " compute capability " + capability(*g) + " -> " + capability(*h));
      if (g->memoryBytes != h->memoryBytes)
        note(gpuLabel(*g) + " memory " + std::to_string(g->memoryBytes) + " -> " + std::to_string(h->memoryBytes) +
             " bytes");
      if (g->multiprocessors != h->multiprocessors || g->clockKHz != h->clockKHz || g->measuredRate != h->measuredRate)
        note(gpuLabel(*g) + " speed figures changed");
    }
    for (const auto& [index, h] : curGpus)
      if (!oldGpus.count(index)) note(gpuLabel(*h) + " new");
  }
  for (const auto& [host, b] : cur)
    if (!old.count(host)) changes.push_back(host + ": new (" + nodeStatusName(b->status) + ")");
  return changes;
}

}  // namespace dispar::streammap
