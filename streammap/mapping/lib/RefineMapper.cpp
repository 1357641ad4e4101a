#include "streammap/RefineMapper.h"

#include "streammap/CostModel.h"
#include "streammap/PaperMapper.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <utility>

namespace dispar::streammap {

namespace {

// Search limits. Small instances get exhaustive neighbourhoods and extra starts; large ones bounded
// candidate lists and passes, so that the work stays linear in the input.
constexpr int kAllNodesCandidateLimit = 64;  // up to this many nodes, every node is a move candidate
constexpr int kLeastLoadedCandidates = 4;    // otherwise: this many least-loaded allowed nodes ...
constexpr int kRandomGpuCandidates = 2;      // ... and, for a CG vertex, this many random GPU nodes
constexpr int kSwapVertexLimit = 400;        // swaps are tried up to this many vertices
constexpr long kRandomStartLimit = 4096;     // vertices x nodes up to which random starts are added
constexpr int kRandomStarts = 8;
constexpr int kSmallPasses = 100;  // automatic pass limit up to kLargeVertices
constexpr int kLargeVertices = 20000;
constexpr int kLargePasses = 3;

// Is (score, touched) an improvement over (current, currentTouched)? The touched-node term lets the
// search lower one of several equal bottlenecks, which the period alone cannot see.
bool improves(const Score& current, double currentTouched, const Score& score, double touched) {
  if (!nearlyEqual(score.period, current.period)) return score.period < current.period;
  if (!nearlyEqual(touched, currentTouched)) return touched < currentTouched;
  return !nearlyEqual(score.crossBytes, current.crossBytes) && score.crossBytes < current.crossBytes;
}

bool trialLess(const Score& a, double ta, const Score& b, double tb) { return improves(b, tb, a, ta); }

std::vector<int> gpuNodes(const MappingProblem& p) {
  std::vector<int> nodes;
  for (int n = 0; n < p.nodeCount(); ++n)
    if (p.nodes[n].hasGpu()) nodes.push_back(n);
  return nodes;
}

class LocalSearch {
 public:
  LocalSearch(const MappingProblem& p, std::vector<int> start, SplitMix64& rng)
      : p_(p), cost_(p, std::move(start)), rng_(rng), gpuNodes_(gpuNodes(p)) {}

  void run(int maxPasses) {
    const bool swaps = p_.vertexCount() <= kSwapVertexLimit;
    for (int pass = 0; pass < maxPasses; ++pass) {
      bool improved = movePass();
      if (!improved && swaps) improved = swapPass();
      if (!improved) break;
    }
  }

  const std::vector<int>& assignment() const { return cost_.assignment(); }
  Score score() const { return cost_.score(); }

 private:
  double touchedNow(int a, int b) const { return std::max(cost_.nodeValue(a), cost_.nodeValue(b)); }

  bool movePass() {
    bool improved = false;
    std::vector<int> candidates;
    for (int v = 0; v < p_.vertexCount(); ++v) {
      const int from = cost_.assignment()[v];
      collectCandidates(v, candidates);
      const Score current = cost_.score();
      int best = -1;
      Score bestScore;
      double bestTouched = 0;
      for (int to : candidates) {
        if (to == from || !p_.allowed(v, to)) continue;
        double touched = 0;
        const Score s = cost_.scoreAfterMove(v, to, &touched);
        if (!improves(current, touchedNow(from, to), s, touched)) continue;
        if (best < 0 || trialLess(s, touched, bestScore, bestTouched)) {
          best = to;
          bestScore = s;
          bestTouched = touched;
        }
      }
      if (best >= 0) {
        cost_.move(v, best);
        improved = true;
      }
    }
    return improved;
  }

  bool swapPass() {
    bool improved = false;
    for (int u = 0; u < p_.vertexCount(); ++u) {
      const Score current = cost_.score();
      int best = -1;
      Score bestScore;
      double bestTouched = 0;
      const int a = cost_.assignment()[u];
      for (int v = u + 1; v < p_.vertexCount(); ++v) {
        const int b = cost_.assignment()[v];
        if (a == b || !p_.allowed(u, b) || !p_.allowed(v, a)) continue;
        double touched = 0;
        const Score s = cost_.scoreAfterSwap(u, v, &touched);
        if (!improves(current, touchedNow(a, b), s, touched)) continue;
        if (best < 0 || trialLess(s, touched, bestScore, bestTouched)) {
          best = v;
          bestScore = s;
          bestTouched = touched;
        }
      }
      if (best >= 0) {
        cost_.swap(u, best);
        improved = true;
      }
    }
    return improved;
  }

  void collectCandidates(int v, std::vector<int>& out) {
    out.clear();
    if (p_.nodeCount() <= kAllNodesCandidateLimit) {
      out.resize(p_.nodeCount());
      std::iota(out.begin(), out.end(), 0);
      return;
    }
    for (const Neighbour* it = p_.neighboursBegin(v); it != p_.neighboursEnd(v); ++it)
      out.push_back(cost_.assignment()[it->vertex]);
    // The least-loaded nodes that may run v: GPU nodes for a CG vertex (without host fallback).
    const bool gpuOnly = p_.vertices[v].type == lang::Requirement::CG && !p_.allowHostFallback;
    int found = 0;
    for (const auto& entry : gpuOnly ? cost_.gpuNodesByValue() : cost_.nodesByValue()) {
      if (found++ == kLeastLoadedCandidates) break;
      out.push_back(entry.second);
    }
    // And a few random GPU nodes, so that a CG vertex can reach a fast GPU that is not least loaded.
    if (p_.vertices[v].type == lang::Requirement::CG && !gpuNodes_.empty())
      for (int i = 0; i < kRandomGpuCandidates; ++i) out.push_back(gpuNodes_[rng_.below(gpuNodes_.size())]);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }

  const MappingProblem& p_;
  IncrementalCost cost_;
  SplitMix64& rng_;
  std::vector<int> gpuNodes_;
};

std::vector<int> randomPlacement(const MappingProblem& p, SplitMix64& rng) {
  std::vector<int> gpus = gpuNodes(p);
  std::vector<int> nodeOf(p.vertexCount());
  for (int v = 0; v < p.vertexCount(); ++v) {
    const bool gpuOnly = p.vertices[v].type == lang::Requirement::CG && !p.allowHostFallback && !gpus.empty();
    nodeOf[v] = gpuOnly ? gpus[rng.below(gpus.size())] : static_cast<int>(rng.below(p.nodeCount()));
  }
  return nodeOf;
}

}  // namespace

std::vector<int> greedyPlacement(const MappingProblem& p) {
  const int nodeCount = p.nodeCount();
  std::vector<double> cpuSum(nodeCount, 0), cpuMax(nodeCount, 0), gpuSum(nodeCount, 0), gpuMax(nodeCount, 0),
      netBytes(nodeCount, 0), netMessages(nodeCount, 0), value(nodeCount, 0);
  using ValueSet = std::set<std::pair<double, int>>;
  ValueSet byValue, gpuByValue;
  std::vector<ValueSet::iterator> byValueAt(nodeCount), gpuByValueAt(nodeCount);  // each node's entry
  for (int n = 0; n < nodeCount; ++n) {
    byValueAt[n] = byValue.emplace_hint(byValue.end(), 0.0, n);
    if (p.nodes[n].hasGpu()) gpuByValueAt[n] = gpuByValue.emplace_hint(gpuByValue.end(), 0.0, n);
  }
  // The cost model's node term (nodeCostOf) with v added, its crossing edges `extraBytes` and `extraMessages`.
  auto valueWith = [&](int n, int v, double extraBytes, double extraMessages) {
    const double w = p.weightOn(v, n);
    const bool gpu = p.onGpu(v, n);
    return nodeCostOf(p.nodes[n], cpuSum[n] + (gpu ? 0 : w), gpu ? cpuMax[n] : std::max(cpuMax[n], w),
                      gpuSum[n] + (gpu ? w : 0), gpu ? std::max(gpuMax[n], w) : gpuMax[n], netBytes[n] + extraBytes,
                      netMessages[n] + extraMessages)
        .value();
  };
  auto refresh = [&](int n) {
    const double now =
        nodeCostOf(p.nodes[n], cpuSum[n], cpuMax[n], gpuSum[n], gpuMax[n], netBytes[n], netMessages[n]).value();
    if (now == value[n]) return;
    value[n] = now;
    // Re-insert through the node's own entry (no search for it), with its old place as the hint.
    byValueAt[n] = byValue.emplace_hint(byValue.erase(byValueAt[n]), now, n);
    if (p.nodes[n].hasGpu()) gpuByValueAt[n] = gpuByValue.emplace_hint(gpuByValue.erase(gpuByValueAt[n]), now, n);
  };

  std::vector<int> order(p.vertexCount());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p.vertices[a].cost > p.vertices[b].cost; });
  std::vector<int> nodeOf(p.vertexCount(), -1);
  std::vector<int> candidates;
  for (int v : order) {
    candidates.clear();
    if (nodeCount <= kAllNodesCandidateLimit) {
      for (int n = 0; n < nodeCount; ++n) candidates.push_back(n);
    } else {
      for (const Neighbour* it = p.neighboursBegin(v); it != p.neighboursEnd(v); ++it)
        if (nodeOf[it->vertex] >= 0) candidates.push_back(nodeOf[it->vertex]);
      const bool gpuOnly = p.vertices[v].type == lang::Requirement::CG && !gpuByValue.empty();
      int taken = 0;
      for (const auto& entry : gpuOnly ? gpuByValue : byValue) {
        if (taken++ == kLeastLoadedCandidates) break;
        candidates.push_back(entry.second);
      }
    }
    int best = -1;
    double bestValue = 0, bestCross = 0;
    for (int n : candidates) {
      if (!p.allowed(v, n)) continue;
      double cross = 0, messages = 0;
      for (const Neighbour* it = p.neighboursBegin(v); it != p.neighboursEnd(v); ++it)
        if (nodeOf[it->vertex] >= 0 && nodeOf[it->vertex] != n) {
          cross += it->bytes;
          messages += 1;
        }
      const double after = valueWith(n, v, cross, messages);
      const bool better = best < 0 || (!nearlyEqual(after, bestValue)   ? after < bestValue
                                       : !nearlyEqual(cross, bestCross) ? cross < bestCross
                                                                        : n < best);
      if (better) {
        best = n;
        bestValue = after;
        bestCross = cross;
      }
    }
    const double w = p.weightOn(v, best);
    if (p.onGpu(v, best)) {
      gpuSum[best] += w;
      gpuMax[best] = std::max(gpuMax[best], w);
    } else {
      cpuSum[best] += w;
      cpuMax[best] = std::max(cpuMax[best], w);
    }
    nodeOf[v] = best;
    for (const Neighbour* it = p.neighboursBegin(v); it != p.neighboursEnd(v); ++it) {
      const int c = nodeOf[it->vertex];
      if (c < 0 || c == best || it->vertex == v) continue;
      for (const int end : {best, c}) {
        netBytes[end] += it->bytes;
        netMessages[end] += 1;
      }
      refresh(c);
    }
    refresh(best);
  }
  return nodeOf;
}

std::vector<int> roundRobinPlacement(const MappingProblem& p) {
  std::vector<int> nodeOf(p.vertexCount());
  int n = 0, used = 0;
  for (int v = 0; v < p.vertexCount(); ++v) {
    if (used == p.nodes[n].cores) {
      n = (n + 1) % p.nodeCount();
      used = 0;
    }
    int host = n;
    for (int tried = 0; tried < p.nodeCount() && !p.allowed(v, host); ++tried) host = (host + 1) % p.nodeCount();
    nodeOf[v] = host;
    if (host == n) ++used;
  }
  return nodeOf;
}

MappingResult mapRefine(const MappingProblem& problem, const MappingResult& paper, const RefineOptions& options) {
  const int passes = options.maxPasses > 0                     ? options.maxPasses
                     : problem.vertexCount() <= kLargeVertices ? kSmallPasses
                                                               : kLargePasses;
  SplitMix64 rng(options.seed);
  std::vector<std::vector<int>> starts;
  starts.push_back(paper.nodeOf);  // first: ties keep the paper-started result
  starts.push_back(greedyPlacement(problem));
  const std::vector<int> roundRobin = roundRobinPlacement(problem);
  starts.push_back(roundRobin);
  // Large instances: search from the best start only, to keep the work bounded.
  if (problem.vertexCount() > kLargeVertices) {
    std::size_t best = 0;
    Score bestStart = evaluate(problem, starts[0]).score;
    for (std::size_t i = 1; i < starts.size(); ++i) {
      const Score s = evaluate(problem, starts[i]).score;
      if (scoreLess(s, bestStart)) best = i, bestStart = s;
    }
    starts = {starts[best]};
  }
  if (static_cast<long>(problem.vertexCount()) * problem.nodeCount() <= kRandomStartLimit)
    for (int i = 0; i < kRandomStarts; ++i) starts.push_back(randomPlacement(problem, rng));

  std::vector<int> best;
  Score bestScore;
  for (std::vector<int>& start : starts) {
    LocalSearch search(problem, std::move(start), rng);
    search.run(passes);
    if (best.empty() || scoreLess(search.score(), bestScore)) {
      best = search.assignment();
      bestScore = search.score();
    }
  }

  // The guarantee, whatever the search did with ties: never worse than the paper's mapping or mpiexec's.
  for (const std::vector<int>* baseline : {&paper.nodeOf, &roundRobin}) {
    const Score s = evaluate(problem, *baseline).score;
    if (scoreLess(s, bestScore)) best = *baseline, bestScore = s;
  }

  MappingResult result;
  result.nodeOf = std::move(best);
  result.placements.resize(problem.vertexCount());
  result.visitOrder = paper.visitOrder;
  result.slots = paper.slots;
  for (int v = 0; v < problem.vertexCount(); ++v)
    result.placements[v].rule =
        result.nodeOf[v] == paper.nodeOf[v] ? PlacementRule::PaperKept : PlacementRule::LocalSearch;
  return result;
}

}  // namespace dispar::streammap
