// The mapping problem: an RTG and the usable nodes of a cluster, flattened into arrays the mappers
// and the cost model index directly.
#ifndef STREAMMAP_MAPPING_PROBLEM_H
#define STREAMMAP_MAPPING_PROBLEM_H

#include "dispar_lang/Rtg.h"
#include "streammap/Cluster.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dispar::streammap {

/// Network bandwidth of a node whose description names none: 10 Gbit/s.
inline constexpr double kDefaultBandwidthBytesPerSec = 1.25e9;

/// The per-message latencies of a node whose description states none (the cluster file's
/// `network.thread_latency_s`, `rank_latency_s` and `latency_s`), in seconds:
/// - between two instances of one rank (an in-memory queue and a thread woken) and between two ranks of
///   one node (an MPI message through shared memory), measured through the runtime on the 2-core
///   development machine: bench/grouping's 4-stage loop takes 11.9 us a turn of 4 hops inside one rank
///   (3 us a hop, its work negligible) and 22.5 us cut into two ranks (two hops 5.3 us dearer each);
/// - on a node's network link, beyond the rank latency (a message between two nodes crosses both
///   nodes' links, as in `streammap simulate`'s platform, which takes its links' latency from here):
///   InfiniBand's order (QDR: 1.3 us end to end).
inline constexpr double kDefaultThreadLatencySeconds = 3e-6;
inline constexpr double kDefaultRankLatencySeconds = 8e-6;
inline constexpr double kDefaultNetworkLatencySeconds = 1.5e-6;

struct ProblemVertex {
  lang::Requirement type = lang::Requirement::CO;
  double cost = 1.0;
  bool usesNodeCores = false;  // shares its loops with its node's CPU cores (split_for; RTG "node_cores")
  double hostCost = 0;         // a CG vertex's cost on a CPU (host fallback), when measured there; 0: its cost
};

struct ProblemNode {
  int clusterIndex = 0;  // index into Cluster::nodes
  std::string host;
  int cores = 1;  // at least 1
  int gpus = 0;
  double cpuSpeed = 1.0;  // per core
  double gpuSpeed = 0.0;  // mean relative speed of its GPUs (estimateGpuSpeed); 0 without GPUs
  double bandwidth = kDefaultBandwidthBytesPerSec;
  std::vector<double> gpuSpeeds;                        // per usable GPU, in the node's GPU order
  std::vector<int> gpuIndices;                          // per usable GPU: its CUDA device ordinal (GpuInfo::index)
  double latency = kDefaultNetworkLatencySeconds;       // a message on the node's network link
  double rankLatency = kDefaultRankLatencySeconds;      // a message between two ranks of this node
  double threadLatency = kDefaultThreadLatencySeconds;  // a message between two instances of one rank
  bool hasGpu() const { return gpus > 0; }
};

/// One end of an edge as seen from a vertex.
struct Neighbour {
  int vertex = 0;
  double bytes = 0;
};

struct MappingProblem {
  std::vector<ProblemVertex> vertices;  // by rank
  std::vector<ProblemNode> nodes;       // usable (up) nodes, in host order
  double totalEdgeBytes = 0;
  bool allowHostFallback = false;  // a CG vertex may run on the CPU of a node without a GPU
  /// Host fallback without --allow-host-fallback: the cluster has no GPU at all (a laptop, CI), so the
  /// GPU VNODEs run their kernels on the host path, as the docs promise, with one warning.
  bool hostFallbackForNoGpu = false;
  /// What buildProblem decided about the cluster that the user should read (GPUs the binary cannot run
  /// on); printed with map's warnings and --explain.
  std::vector<std::string> notes;
  /// One MPI rank per instance (--rank-per-instance, and always on the SMPI target): ranks beyond a
  /// node's cores share them whether they compute or wait, since MPI's blocking calls poll.
  bool rankPerInstance = false;

  /// Neighbours of vertex v in both arc directions (CSR layout: offsets has vertices + 1 entries).
  std::vector<int> adjacencyOffsets;
  std::vector<Neighbour> adjacency;
  std::vector<char> hasIncoming;  // by vertex: some arc (other than a self-loop) ends at it
  /// Feedback loops: per vertex the loop it is on (its strongly connected component, when that has two or
  /// more vertices), else -1; per loop the messages in flight around it (the largest initial(N) of its
  /// arcs, at least 1; its vertex count where every arc has its reverse, a symmetric exchange whose
  /// members write before they read). A loop's messages go around one after another: its period is at
  /// least the time of all its vertices and hops over its tokens (RankGroups charges the hops its
  /// grouping cuts).
  std::vector<int> loopOf;
  std::vector<double> loopTokens;
  int loopCount() const { return static_cast<int>(loopTokens.size()); }
  /// Vertex v's loop, or -1 (also for a problem built without loops, as tests build them).
  int loopOfVertex(int v) const { return loopOf.empty() ? -1 : loopOf[v]; }
  /// Per loop: whether its instances form one ring, each with one successor on the loop (a feedback loop,
  /// a 2-instance exchange). A turn of a ring passes every instance and arc once, so the cost model charges
  /// its loop(l) term (CostModel.h); a loop with branches inside (a farm fed back, a stencil) is not
  /// charged, since the sum over its instances would overstate a turn whose branches run side by side.
  std::vector<char> loopIsRing;
  /// The ring v is on (a loop the cost model charges), or -1.
  int ringOf(int v) const {
    const int loop = loopOfVertex(v);
    return loop >= 0 && loopIsRing[loop] ? loop : -1;
  }

  int vertexCount() const { return static_cast<int>(vertices.size()); }
  int nodeCount() const { return static_cast<int>(nodes.size()); }
  const Neighbour* neighboursBegin(int v) const { return adjacency.data() + adjacencyOffsets[v]; }
  const Neighbour* neighboursEnd(int v) const { return adjacency.data() + adjacencyOffsets[v + 1]; }
  bool anyGpuNode() const;
  /// The share of a core each rank of node n gets with `instances` instances there: 1, or cores /
  /// instances when one rank per instance outnumbers the cores; returned as its inverse (>= 1).
  double oversubscription(int n, int instances) const {
    return rankPerInstance && instances > nodes[n].cores ? static_cast<double>(instances) / nodes[n].cores : 1.0;
  }
  /// Seconds one message takes from an instance on node a to one on node b: in one rank (sameRank, so
  /// a == b) a's thread latency; between two ranks of one node its rank latency; between nodes the larger
  /// rank latency of the two (the same MPI path) and both nodes' link latencies.
  double hopSeconds(int a, int b, bool sameRank) const {
    if (a == b) return sameRank ? nodes[a].threadLatency : nodes[a].rankLatency;
    return std::max(nodes[a].rankLatency, nodes[b].rankLatency) + nodes[a].latency + nodes[b].latency;
  }
  /// May vertex v run on node n at all?
  bool allowed(int v, int n) const {
    return vertices[v].type == lang::Requirement::CO || nodes[n].hasGpu() || allowHostFallback;
  }
  /// Does vertex v use node n's GPU (CG on a node with GPUs)?
  bool onGpu(int v, int n) const { return vertices[v].type == lang::Requirement::CG && nodes[n].hasGpu(); }
  /// Vertex v's weight on node n, in the bucket (GPU or CPU) onGpu picks: its cost, except for a vertex
  /// that shares its loops with its node's cores (split_for) placed on a GPU: it runs at the GPU's and
  /// (cores - 1) cores' combined speed, so it weighs cost * gpuSpeed / (gpuSpeed + (cores - 1) * cpuSpeed)
  /// on the GPU. The cores it borrows are not charged to the CPU term: split_for measures their rate as
  /// it runs and gives them only what they do beside the node's other work (docs/streammap.md).
  double weightOn(int v, int n) const {
    const ProblemVertex& vertex = vertices[v];
    if (vertex.type == lang::Requirement::CG && !nodes[n].hasGpu() && vertex.hostCost > 0) return vertex.hostCost;
    if (!vertex.usesNodeCores || !onGpu(v, n)) return vertex.cost;
    const ProblemNode& node = nodes[n];
    return vertex.cost * node.gpuSpeed / (node.gpuSpeed + (node.cores - 1) * node.cpuSpeed);
  }
};

/// Whether a binary built for `cudaArchs` (its RTG's) runs on `gpu`: the one definition map, check and
/// run use, so that map never places GPU work where check then refuses it. A binary that records no
/// architectures, or a GPU whose compute capability no probe recorded (a scheduler's count), counts as
/// runnable: the runtime checks those at start-up.
bool binaryRunsOn(const std::vector<std::string>& cudaArchs, const GpuInfo& gpu);

/// Bytes one message of an edge carries: its volume, or its element size when the volume is null.
double edgeBytes(const lang::RtgEdge& edge);

/// Builds the problem from an RTG and a cluster. Down and drained nodes are left out. `hostCosts`, when
/// given, holds per vertex its cost on a CPU (MeasuredCosts.h); else that is its RTG cost. A GPU the binary
/// cannot run on (binaryRunsOn) is not a GPU for this problem. Fails (false, `error` set) on an empty or
/// down-only cluster, and on a CG vertex with no usable GPU anywhere unless `allowHostFallback` or the
/// cluster has no GPU at all (then hostFallbackForNoGpu).
bool buildProblem(const lang::Rtg& rtg, const Cluster& cluster, bool allowHostFallback, MappingProblem& out,
                  std::string& error, const std::vector<double>* hostCosts = nullptr);

}  // namespace dispar::streammap

#endif
