// The mapper's cost model (docs/streammap.md, "The cost model").
//
// A vertex v of cost w on node n takes t_v = w / s, s being n's GPU speed for a CG vertex on a node with
// GPUs and n's CPU speed otherwise. Per node:
//   cpu(n) = max(max t_v, sum t_v / cores(n))   over the vertices on n's CPU; with one rank per instance
//            (--rank-per-instance) and R > cores(n) instances on n: max t_v * R / cores(n) (every rank
//            shares the cores, computing or polling in a blocking MPI call)
//   gpu(n) = max(max t_v, sum t_v / gpus(n))    over the vertices on n's GPUs
//   net(n) = sum over edges with exactly one end on n of bytes / bandwidth(n) + latency(n): a message per
//            edge and period, each paying the node's network latency
// Per ring l (a feedback loop whose instances each have one successor on it, MappingProblem::loopIsRing),
// its messages go around one after another:
//   loop(l) = (sum of its t_v + sum over its arcs of the hop's latency) / tokens(l)
//            a hop inside a rank costs the node's thread latency, between ranks of a node its rank
//            latency, between nodes both plus the network's (MappingProblem::hopSeconds); without a
//            RankLayout every instance is its own rank
// With ranks that run several instances (RankLayout), each rank r on n adds two terms:
//   cpu(n) >= sum of r's CPU t_v / c_r   (r's threads share the c_r cores it is bound to, dealRankCores)
//   gpu(n) >= sum of r's GPU t_v         (r's GPU instances share the one GPU of the rank)
// A rank of one instance adds t_v, which the max t_v terms already hold: one rank per instance is the
// model above, unchanged.
// The predicted period is the maximum over nodes of cpu, gpu and net and over rings of loop; lower is
// better, ties broken by the total bytes crossing nodes.
#ifndef STREAMMAP_COST_MODEL_H
#define STREAMMAP_COST_MODEL_H

#include "streammap/MappingProblem.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

namespace dispar::streammap {

/// One-line statement of the model, printed with every mapping.
extern const char* const kCostModelSummary;

struct NodeCost {
  double cpu = 0;
  double gpu = 0;
  double net = 0;
  double value() const;
  /// "cpu", "gpu" or "net": the term that attains value().
  const char* dominantTerm() const;
};

/// The cost of a node from its loads: cpu = max(largest CPU vertex, CPU sum / cores) / CPU speed, gpu
/// likewise over its GPUs (0 without GPUs), net = crossing bytes / bandwidth + crossing messages x latency.
NodeCost nodeCostOf(const ProblemNode& node, double cpuSum, double cpuMax, double gpuSum, double gpuMax,
                    double netBytes, double netMessages, double oversubscription = 1.0);

struct Score {
  double period = 0;
  double crossBytes = 0;
};

/// (period, crossing bytes) lexicographic comparison, with a relative tolerance on each.
bool scoreLess(const Score& a, const Score& b);
bool nearlyEqual(double a, double b);

/// Time vertex v takes on node n.
double vertexTime(const MappingProblem& p, int v, int n);

struct Evaluation {
  Score score;
  std::vector<NodeCost> nodes;  // per problem node
  std::vector<double> loops;    // per feedback loop: loop(l), the period it allows (0 for a loop not a ring)
};

/// loop(l) for every feedback loop of an assignment (0 where it is not a ring); `rankOf` (per vertex its rank) decides
/// which hops stay inside a rank, and without it every instance is its own rank.
std::vector<double> loopPeriods(const MappingProblem& p, const std::vector<int>& nodeOf,
                                const std::vector<int>* rankOf = nullptr);

/// Evaluates a complete assignment from scratch, one rank per instance.
Evaluation evaluate(const MappingProblem& p, const std::vector<int>& nodeOf);

/// The MPI ranks of a mapping: which instances (vertices) each runs, all on one node. Built by
/// groupRanks (RankGroups.h); ranks are numbered in the order of their first instance, so that one rank
/// per instance numbers rank v = vertex v.
struct RankLayout {
  std::vector<int> rankOf;                // per vertex: its rank
  std::vector<std::vector<int>> members;  // per rank: its vertices, ascending
  std::vector<int> nodeOf;                // per rank: its problem node
  std::vector<int> cores;                 // per rank: the cores it is bound to (dealRankCores)
  int rankCount() const { return static_cast<int>(members.size()); }
};

/// One rank per vertex (the paper's layout), cores dealt.
RankLayout singletonRanks(const MappingProblem& p, const std::vector<int>& nodeOf);

/// Builds the layout of `groups` (per node, lists of vertices; every vertex in exactly one), numbering
/// ranks by their first vertex, and deals the cores.
RankLayout rankLayoutOf(const MappingProblem& p, const std::vector<int>& nodeOf, std::vector<std::vector<int>> groups);

/// Deals each node's cores to its ranks (layout.cores). Where a node has at least as many cores as
/// ranks, every rank gets one and each remaining core goes to the rank with the largest CPU load per
/// core (sum of its CPU instances' costs / its cores; ties: more instances per core, then the lower
/// rank), never more cores than the rank has instances (threads): a rank of one instance keeps one core.
/// Where ranks outnumber cores, every rank counts one core (they time-share the node's cores, which the
/// node's sum / cores term prices).
void dealRankCores(const MappingProblem& p, RankLayout& layout);
/// The same rule for one node of `nodeCores` cores: per rank its CPU load (sum of its CPU instances'
/// costs) and its instances; returns the cores of each.
std::vector<int> dealCores(int nodeCores, const std::vector<double>& cpuLoad, const std::vector<int>& instances);

/// The rank terms of the model for rank r of `layout` on its node: sum of its CPU instances' t_v over
/// its cores, and sum of its GPU instances' t_v (they share one GPU).
NodeCost rankCost(const MappingProblem& p, const RankLayout& layout, int r);

/// Evaluates an assignment whose instances run in the ranks of `layout`: evaluate(p, nodeOf) with every
/// rank's terms (rankCost) added to its node's.
Evaluation evaluate(const MappingProblem& p, const std::vector<int>& nodeOf, const RankLayout& layout);

/// Per-node sums of an assignment, updated move by move; a move or a swap touches only its two nodes
/// (an edge's crossing status changes only for edges whose ends are on them), so evaluating one costs
/// O(degree + log nodes).
class IncrementalCost {
 public:
  IncrementalCost(const MappingProblem& p, std::vector<int> nodeOf);

  const std::vector<int>& assignment() const { return nodeOf_; }
  Score score() const;
  NodeCost nodeCost(int n) const;

  /// Score after moving v to node `to` (nothing changes). `touchedMax` receives the larger of the
  /// two touched nodes' values after the move.
  Score scoreAfterMove(int v, int to, double* touchedMax = nullptr) const;
  /// Score after exchanging the nodes of u and v (on different nodes).
  Score scoreAfterSwap(int u, int v, double* touchedMax = nullptr) const;
  void move(int v, int to);
  void swap(int u, int v);

  /// Value of node n now.
  double nodeValue(int n) const { return values_[n]; }
  /// Nodes in increasing value order (for picking the least-loaded candidates).
  const std::set<std::pair<double, int>>& nodesByValue() const { return byValue_; }
  /// The nodes with GPUs, in increasing value order.
  const std::set<std::pair<double, int>>& gpuNodesByValue() const { return gpuByValue_; }
  /// The ring whose loop(l) sets the period, or -1 where a node's term does.
  int bottleneckLoop() const;

 private:
  // One node's instance costs, ascending. A move needs the largest and the one below it; a node holds
  // few instances, so a sorted vector does it without the tree's allocation per insert.
  class SortedCosts {
   public:
    void insert(double w) { values_.insert(std::upper_bound(values_.begin(), values_.end(), w), w); }
    void erase(double w) { values_.erase(std::lower_bound(values_.begin(), values_.end(), w)); }  // one w, present
    bool empty() const { return values_.empty(); }
    std::size_t size() const { return values_.size(); }
    double largest() const { return values_.back(); }
    double secondLargest() const { return values_[values_.size() - 2]; }

   private:
    std::vector<double> values_;
  };
  struct Load {
    double cpuSum = 0, gpuSum = 0;  // sum of t_v x speed, i.e. of costs
    SortedCosts cpuCosts, gpuCosts;
    double netBytes = 0, netMessages = 0;
  };
  struct Delta {
    int node;
    double cpuSum, gpuSum, cpuMax, gpuMax, netBytes, netMessages;
    int instances;
  };
  // A feedback loop's time per turn after a move: loop `loop` (or -1: none) at `seconds`.
  struct LoopChange {
    int loop = -1;
    double seconds = 0;
  };
  NodeCost costOf(int n, const Delta& d) const;
  double maxCost(const SortedCosts& costs, double removed, double added) const;
  double maxExcept(int a, int b) const;
  double loopMaxExcept(int a, int b) const;
  void setValue(int n);
  void removeVertex(int v);
  void addVertex(int v, int n);
  // How v's loop's time per turn changes when v goes from node `from` to `to` (nothing changes), with
  // `partner` (or -1) going the other way in a swap.
  double loopDelta(int v, int from, int to, int partner) const;
  void setLoopSeconds(int loop, double seconds);
  Score evaluatePair(const Delta& da, const Delta& db, double crossDelta, LoopChange first, LoopChange second,
                     double* touchedMax) const;

  const MappingProblem& p_;
  std::vector<int> nodeOf_;
  std::vector<Load> loads_;
  std::vector<double> values_;
  using ValueSet = std::set<std::pair<double, int>>;
  ValueSet byValue_, gpuByValue_;
  std::vector<ValueSet::iterator> byValueAt_, gpuByValueAt_;  // each node's entry, for O(1) erase
  std::vector<double> loopSeconds_;                           // per loop: its instances' and hops' time a turn
  ValueSet loopsByValue_;                                     // (loop(l), l)
  std::vector<ValueSet::iterator> loopAt_;
  double crossBytes_ = 0;
};

}  // namespace dispar::streammap

#endif
