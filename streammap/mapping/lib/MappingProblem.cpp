#include "streammap/MappingProblem.h"

#include "dispar/gpu/CudaArch.h"
#include "dispar_lang/ComputeCapability.h"
#include "streammap/GpuSpeed.h"
#include "streammap/NumberFormat.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

namespace dispar::streammap {

bool binaryRunsOn(const std::vector<std::string>& cudaArchs, const GpuInfo& gpu) {
  return cudaArchs.empty() || gpu.ccMajor <= 0 || gpu::anyArchRunsOn(cudaArchs, gpu.ccMajor, gpu.ccMinor);
}

double edgeBytes(const lang::RtgEdge& edge) {
  return static_cast<double>(edge.volume ? *edge.volume : edge.elementBytes);
}

namespace {

// The cost model adds times (cost / speed) and bytes / bandwidth in doubles. Every node's time is at
// most the sum of all costs over the slowest speed, and its network time at most all bytes over the
// lowest bandwidth: refusing inputs whose bounds overflow keeps every prediction finite.
bool checkMagnitudes(const MappingProblem& p, std::string& error) {
  double totalCost = 0;
  for (const ProblemVertex& v : p.vertices) totalCost += std::max(v.cost, v.hostCost);
  double slowest = p.nodes[0].cpuSpeed, leastBandwidth = p.nodes[0].bandwidth;
  const std::string* slowestHost = &p.nodes[0].host;
  const std::string* leastBandwidthHost = slowestHost;
  for (const ProblemNode& n : p.nodes) {
    std::vector<double> speeds = n.gpuSpeeds;
    speeds.push_back(n.cpuSpeed);
    if (n.hasGpu()) speeds.push_back(n.gpuSpeed);
    for (double speed : speeds)
      if (speed < slowest) {
        slowest = speed;
        slowestHost = &n.host;
      }
    if (n.bandwidth < leastBandwidth) {
      leastBandwidth = n.bandwidth;
      leastBandwidthHost = &n.host;
    }
  }
  if (!std::isfinite(totalCost)) {
    error = "costs too large: the vertices' costs add up to more than the largest double (" +
            formatNumber(std::numeric_limits<double>::max()) + "); scale the costs down";
    return false;
  }
  if (!std::isfinite(totalCost / slowest)) {
    error = "costs too large: the vertices' costs add up to " + formatNumber(totalCost) +
            ", which over the slowest speed (" + formatNumber(slowest) + ", " + *slowestHost +
            ") overflows the predicted period; scale the costs down";
    return false;
  }
  if (!std::isfinite(p.totalEdgeBytes / leastBandwidth)) {
    error = "volumes too large: the edges carry " + formatNumber(p.totalEdgeBytes) +
            " bytes, which over the lowest bandwidth (" + formatNumber(leastBandwidth) + " bytes/s, " +
            *leastBandwidthHost + ") overflows the predicted period";
    return false;
  }
  return true;
}

}  // namespace

bool MappingProblem::anyGpuNode() const {
  return std::any_of(nodes.begin(), nodes.end(), [](const ProblemNode& n) { return n.hasGpu(); });
}

namespace {

// The strongly connected components of the arcs (Tarjan's algorithm, iterative: a chain of 60,000
// stages must not exhaust the stack); those of two or more vertices are the loops.
void findLoops(const lang::Rtg& rtg, MappingProblem& p) {
  const int n = p.vertexCount();
  std::vector<int> offsets(n + 1, 0), targets;
  for (const lang::RtgEdge& e : rtg.edges)
    if (e.from != e.to) ++offsets[e.from + 1];
  for (int v = 0; v < n; ++v) offsets[v + 1] += offsets[v];
  targets.resize(offsets[n]);
  std::vector<int> fill(offsets.begin(), offsets.end() - 1);
  for (const lang::RtgEdge& e : rtg.edges)
    if (e.from != e.to) targets[fill[e.from]++] = e.to;

  std::vector<int> index(n, -1), low(n, 0), component(n, -1), stack, next(n, 0);
  std::vector<char> onStack(n, 0);
  std::vector<int> sizes;
  int counter = 0;
  for (int root = 0; root < n; ++root) {
    if (index[root] >= 0) continue;
    std::vector<int> path = {root};
    index[root] = low[root] = counter++;
    stack.push_back(root);
    onStack[root] = 1;
    while (!path.empty()) {
      const int v = path.back();
      if (next[v] < offsets[v + 1] - offsets[v]) {
        const int w = targets[offsets[v] + next[v]++];
        if (index[w] < 0) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          onStack[w] = 1;
          path.push_back(w);
        } else if (onStack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      path.pop_back();
      if (!path.empty()) low[path.back()] = std::min(low[path.back()], low[v]);
      if (low[v] != index[v]) continue;
      const int id = static_cast<int>(sizes.size());
      int size = 0;
      for (int w = -1; w != v;) {
        w = stack.back();
        stack.pop_back();
        onStack[w] = 0;
        component[w] = id;
        ++size;
      }
      sizes.push_back(size);
    }
  }
  std::vector<int> loopOfComponent(sizes.size(), -1);
  p.loopOf.assign(n, -1);
  p.loopTokens.clear();
  for (int v = 0; v < n; ++v) {
    const int c = component[v];
    if (sizes[c] < 2) continue;
    if (loopOfComponent[c] < 0) {
      loopOfComponent[c] = p.loopCount();
      p.loopTokens.push_back(1);
    }
    p.loopOf[v] = loopOfComponent[c];
  }
  // A loop whose every arc has its reverse in the loop is a symmetric exchange (a halo, a stencil, an
  // all-to-all among peers), not a ring: two neighbours that both read first would deadlock, so its
  // instances write before they read and all compute at once, each a message in flight.
  std::set<std::pair<int, int>> arcs;
  std::vector<int> members(p.loopCount(), 0);
  std::vector<char> symmetric(p.loopCount(), 1);
  for (int v = 0; v < n; ++v)
    if (p.loopOf[v] >= 0) ++members[p.loopOf[v]];
  for (const lang::RtgEdge& e : rtg.edges)
    if (e.from != e.to && p.loopOf[e.from] >= 0 && p.loopOf[e.from] == p.loopOf[e.to]) {
      p.loopTokens[p.loopOf[e.from]] = std::max(p.loopTokens[p.loopOf[e.from]], static_cast<double>(e.initial));
      arcs.emplace(e.from, e.to);
    }
  for (const auto& [from, to] : arcs)
    if (!arcs.count({to, from})) symmetric[p.loopOf[from]] = 0;
  for (int loop = 0; loop < p.loopCount(); ++loop)
    if (symmetric[loop]) p.loopTokens[loop] = std::max(p.loopTokens[loop], static_cast<double>(members[loop]));
  // A ring: every instance has one successor on the loop (arcs is a set, so parallel pipes count once).
  std::vector<int> successors(n, 0);
  for (const auto& arc : arcs) ++successors[arc.first];
  p.loopIsRing.assign(p.loopCount(), 1);
  for (int v = 0; v < n; ++v)
    if (p.loopOf[v] >= 0 && successors[v] != 1) p.loopIsRing[p.loopOf[v]] = 0;
}

}  // namespace

bool buildProblem(const lang::Rtg& rtg, const Cluster& cluster, bool allowHostFallback, MappingProblem& out,
                  std::string& error, const std::vector<double>* hostCosts) {
  MappingProblem p;
  p.allowHostFallback = allowHostFallback;
  const int vertexCount = static_cast<int>(rtg.vertices.size());
  if (vertexCount == 0) {
    error = "rtg has no vertices: nothing to map";
    return false;
  }
  bool anyCg = false;
  for (int i = 0; i < vertexCount; ++i) {
    const lang::RtgVertex& v = rtg.vertices[i];
    if (v.id != i || v.rank != i) {
      error = "rtg vertices[" + std::to_string(i) + "]: id " + std::to_string(v.id) + " and rank " +
              std::to_string(v.rank) + " must both equal " + std::to_string(i);
      return false;
    }
    if (!(v.cost > 0) || !std::isfinite(v.cost)) {
      error = "rtg vertices[" + std::to_string(i) + "].cost: must be a positive finite number";
      return false;
    }
    // A CG vertex's cost is its GPU work; on a CPU its host path takes kReferenceGpuSpeedupOverCore
    // times longer, unless measured there (hostCosts).
    const double hostCost = hostCosts != nullptr && static_cast<std::size_t>(i) < hostCosts->size()
                                ? (*hostCosts)[static_cast<std::size_t>(i)]
                            : v.type == lang::Requirement::CG ? v.cost * kReferenceGpuSpeedupOverCore
                                                              : v.cost;
    if (!(hostCost > 0) || !std::isfinite(hostCost)) {
      error = "vertices[" + std::to_string(i) + "]: " +
              (std::isinf(hostCost) && v.type == lang::Requirement::CG
                   ? "costs too large: cost " + formatNumber(v.cost) + " on a CPU's host path is " +
                         formatNumber(kReferenceGpuSpeedupOverCore) + " times that, more than the largest double"
                   : std::string("the cost on a CPU must be a positive finite number"));
      return false;
    }
    p.vertices.push_back(ProblemVertex{v.type, v.cost, v.usesNodeCores, hostCost});
    anyCg = anyCg || v.type == lang::Requirement::CG;
  }

  bool anyNode = false, anyGpuInCluster = false;
  std::vector<std::string> unrunnable;  // GPUs of up nodes the binary has no architecture for
  for (std::size_t i = 0; i < cluster.nodes.size(); ++i) {
    const NodeInfo& info = cluster.nodes[i];
    anyNode = true;
    anyGpuInCluster = anyGpuInCluster || !info.gpus.empty();
    if (info.status != NodeStatus::Up) continue;
    ProblemNode n;
    n.clusterIndex = static_cast<int>(i);
    n.host = info.host;
    n.cores = std::max(1, info.cores);
    n.cpuSpeed = info.cpuSpeed > 0 ? info.cpuSpeed : 1.0;
    n.bandwidth = info.bandwidthBytesPerSec && *info.bandwidthBytesPerSec > 0 ? *info.bandwidthBytesPerSec
                                                                              : kDefaultBandwidthBytesPerSec;
    n.latency = info.latencySeconds.value_or(kDefaultNetworkLatencySeconds);
    n.rankLatency = info.rankLatencySeconds.value_or(kDefaultRankLatencySeconds);
    n.threadLatency = info.threadLatencySeconds.value_or(kDefaultThreadLatencySeconds);
    double speedSum = 0;
    for (const GpuInfo& g : info.gpus) {
      if (!binaryRunsOn(rtg.cudaArchs, g)) {
        unrunnable.push_back(info.host + " gpu " + std::to_string(g.index) + " (" + g.name + ", compute capability " +
                             lang::formatComputeCapability(g.ccMajor, g.ccMinor) + ")");
        continue;
      }
      n.gpuSpeeds.push_back(estimateGpuSpeed(g));
      n.gpuIndices.push_back(g.index);
      speedSum += n.gpuSpeeds.back();
    }
    n.gpus = static_cast<int>(n.gpuSpeeds.size());
    n.gpuSpeed = n.gpus ? speedSum / n.gpus : 0.0;
    p.nodes.push_back(std::move(n));
  }
  std::sort(p.nodes.begin(), p.nodes.end(), [](const ProblemNode& a, const ProblemNode& b) { return a.host < b.host; });
  if (p.nodes.empty()) {
    error = anyNode ? "cluster has no usable node: every node is down or drained" : "cluster is empty: no nodes";
    return false;
  }
  std::string archList;
  for (std::size_t i = 0; i < rtg.cudaArchs.size(); ++i) archList += (i ? ", " : "") + rtg.cudaArchs[i];
  if (anyCg && !unrunnable.empty()) {
    std::string gpus;
    for (std::size_t i = 0; i < unrunnable.size() && i < 3; ++i) gpus += (i ? ", " : "") + unrunnable[i];
    if (unrunnable.size() > 3) gpus += ", ... (" + std::to_string(unrunnable.size()) + " in all)";
    p.notes.push_back("note: not a GPU for this binary (built for " + archList +
                      "; disparcc --cuda-arch adds one): " + gpus);
  }
  if (anyCg && !p.anyGpuNode() && !allowHostFallback) {
    if (!anyGpuInCluster) {
      // A cluster without any GPU (a laptop, the demo, CI): the host path is the only way to run the
      // program, and the docs promise it runs there.
      p.allowHostFallback = true;
      p.hostFallbackForNoGpu = true;
    } else {
      int first = 0;
      while (rtg.vertices[first].type != lang::Requirement::CG) ++first;
      const std::string why = unrunnable.empty()
                                  ? ""
                                  : " the binary runs on (built for " + archList +
                                        "; rebuild with disparcc --cuda-arch for " + unrunnable.front() + ")";
      error = "vertex " + std::to_string(first) + " (vnode '" + rtg.vertices[first].vnode +
              "') needs a GPU (CG) but no usable node has one" + why + "; use --allow-host-fallback to run it on a CPU";
      return false;
    }
  }

  // Adjacency in both arc directions; self-loops never cross nodes and are left out.
  std::vector<int> degree(vertexCount + 1, 0);
  for (std::size_t i = 0; i < rtg.edges.size(); ++i) {
    const lang::RtgEdge& e = rtg.edges[i];
    if (e.from < 0 || e.from >= vertexCount || e.to < 0 || e.to >= vertexCount) {
      error = "rtg edges[" + std::to_string(i) + "]: dangling edge " + std::to_string(e.from) + " -> " +
              std::to_string(e.to) + " (vertices are 0.." + std::to_string(vertexCount - 1) + ")";
      return false;
    }
    if (e.from == e.to) continue;
    ++degree[e.from];
    ++degree[e.to];
    p.totalEdgeBytes += edgeBytes(e);
  }
  p.hasIncoming.assign(vertexCount, 0);
  for (const lang::RtgEdge& e : rtg.edges)
    if (e.from != e.to) p.hasIncoming[e.to] = 1;
  p.adjacencyOffsets.assign(vertexCount + 1, 0);
  for (int v = 0; v < vertexCount; ++v) p.adjacencyOffsets[v + 1] = p.adjacencyOffsets[v] + degree[v];
  p.adjacency.resize(p.adjacencyOffsets[vertexCount]);
  std::vector<int> fill(p.adjacencyOffsets.begin(), p.adjacencyOffsets.end() - 1);
  for (const lang::RtgEdge& e : rtg.edges) {
    if (e.from == e.to) continue;
    p.adjacency[fill[e.from]++] = Neighbour{e.to, edgeBytes(e)};
    p.adjacency[fill[e.to]++] = Neighbour{e.from, edgeBytes(e)};
  }
  if (!checkMagnitudes(p, error)) return false;
  findLoops(rtg, p);
  // Neighbours in rank order: the paper mapper's "adjacent vertex" choices follow it.
  for (int v = 0; v < vertexCount; ++v)
    std::stable_sort(p.adjacency.begin() + p.adjacencyOffsets[v], p.adjacency.begin() + p.adjacencyOffsets[v + 1],
                     [](const Neighbour& a, const Neighbour& b) { return a.vertex < b.vertex; });
  out = std::move(p);
  return true;
}

}  // namespace dispar::streammap
