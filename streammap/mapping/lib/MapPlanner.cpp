#include "streammap/MapPlanner.h"

#include "streammap/ClusterDigest.h"
#include "streammap/NumberFormat.h"
#include "streammap/PaperMapper.h"
#include "streammap/RefineMapper.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <optional>
#include <set>

namespace dispar::streammap {

namespace {

constexpr int kExplainCandidateLimit = 256;  // nodes weighed per vertex by --explain on large clusters
constexpr int kWarningExamples = 5;          // hosts or vertices named in one warning

std::string formatBytes(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.0f", x);
  return buffer;
}

// "fir[1]": a VNODE instance as the program names it.
std::string instanceName(const lang::Rtg& rtg, int v) {
  return rtg.vertices[v].vnode + "[" + std::to_string(rtg.vertices[v].replica) + "]";
}

// "a[0], b[0], c[0]" (the first three instances of feedback loop `loop`, "and N more" beyond).
std::string loopName(const lang::Rtg& rtg, const MappingProblem& p, int loop) {
  std::string names;
  int count = 0;
  for (int v = 0; v < p.vertexCount(); ++v) {
    if (p.loopOfVertex(v) != loop) continue;
    if (count < 3) names += (count ? ", " : "") + instanceName(rtg, v);
    ++count;
  }
  if (count > 3) names += " and " + std::to_string(count - 3) + " more";
  return names;
}

// "rank 4 (fir[1], CG)": the instance and the rank that runs it.
std::string vertexLabel(const lang::Rtg& rtg, const RankLayout& ranks, int v) {
  return "rank " + std::to_string(ranks.rankOf[v]) + " (" + instanceName(rtg, v) + ", " +
         lang::requirementName(rtg.vertices[v].type) + ")";
}

void addOversubscriptionWarnings(const MappingOutcome& o, std::vector<std::string>& warnings) {
  const MappingProblem& p = o.problem;
  if (o.result.oversubscribed > 0)
    warnings.push_back("warning: " + std::to_string(p.vertexCount()) + " vertices for " +
                       std::to_string(o.result.slots) +
                       " slots (cores of CPU-only nodes + CPU-GPU pairs of GPU nodes): oversubscribed by " +
                       std::to_string(o.result.oversubscribed) + " (placed by steps 5-6)");
  std::vector<int> ranksOn(p.nodeCount(), 0);
  for (int n : o.ranks.nodeOf) ++ranksOn[n];
  long excess = 0;
  int nodes = 0;
  std::string examples;
  for (int n = 0; n < p.nodeCount(); ++n) {
    if (ranksOn[n] <= p.nodes[n].cores) continue;
    excess += ranksOn[n] - p.nodes[n].cores;
    if (nodes++ < kWarningExamples)
      examples += (examples.empty() ? "" : ", ") + p.nodes[n].host + ": " + std::to_string(ranksOn[n]) + " ranks on " +
                  std::to_string(p.nodes[n].cores) + " cores";
  }
  if (nodes > 0)
    warnings.push_back("warning: " + std::to_string(excess) + " more ranks than cores on " + std::to_string(nodes) +
                       " node(s) (" + examples + (nodes > kWarningExamples ? ", ..." : "") + ")");
}

void addFallbackWarnings(const lang::Rtg& rtg, const MappingOutcome& o, std::vector<std::string>& warnings) {
  int count = 0;
  std::string examples;
  for (int v = 0; v < o.problem.vertexCount(); ++v) {
    const int n = o.result.nodeOf[v];
    if (o.problem.vertices[v].type != lang::Requirement::CG || o.problem.onGpu(v, n)) continue;
    if (count++ < kWarningExamples)
      examples += (examples.empty() ? "" : ", ") + vertexLabel(rtg, o.ranks, v) + " on " + o.problem.nodes[n].host;
  }
  if (count > 0)
    warnings.push_back("warning: " + std::string(o.problem.hostFallbackForNoGpu ? "the cluster has no GPU: " : "") +
                       std::to_string(count) + " CG vertex(es) run on a CPU (host-fallback): " + examples +
                       (count > kWarningExamples ? ", ..." : ""));
}

// buildProblem bounds the inputs so that predictions stay finite; this is the last line before files
// are written, since JSON has no inf or nan.
bool checkFinite(const MappingOutcome& o, std::string& error) {
  bool finite = std::isfinite(o.evaluation.score.period) && std::isfinite(o.evaluation.score.crossBytes);
  for (const NodeCost& c : o.evaluation.nodes)
    finite = finite && std::isfinite(c.cpu) && std::isfinite(c.gpu) && std::isfinite(c.net);
  for (int v = 0; finite && v < o.problem.vertexCount(); ++v)
    finite = std::isfinite(vertexTime(o.problem, v, o.result.nodeOf[v]));
  if (!finite)
    error = "the predicted period is not a finite number (costs, speeds or volumes too large); nothing written";
  return finite;
}

}  // namespace

const char* algorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::Paper: return "paper";
    case Algorithm::RoundRobin: return "round-robin";
    case Algorithm::Refine: break;
  }
  return "refine";
}

const char* rankMode(const MappingProblem& problem, int v, int n) {
  if (problem.onGpu(v, n)) return "gpu";
  return problem.vertices[v].type == lang::Requirement::CG ? "host-fallback" : "cpu";
}

std::vector<int> assignDevices(const MappingProblem& p, const RankLayout& ranks) {
  std::vector<int> device(p.vertexCount(), -1);
  // Per rank: the cost of its GPU instances (the order) and their weight (what its GPU carries).
  std::vector<double> cost(ranks.rankCount(), 0), weight(ranks.rankCount(), 0);
  std::vector<int> order;
  for (int r = 0; r < ranks.rankCount(); ++r) {
    const int n = ranks.nodeOf[r];
    for (int v : ranks.members[r])
      if (p.onGpu(v, n)) {
        cost[r] += p.vertices[v].cost;
        weight[r] += p.weightOn(v, n);
      }
    if (weight[r] > 0 || cost[r] > 0) order.push_back(r);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return cost[a] > cost[b]; });
  std::map<int, std::vector<double>> predicted;  // node -> time so far per GPU
  for (int r : order) {
    const int n = ranks.nodeOf[r];
    const std::vector<double>& speeds = p.nodes[n].gpuSpeeds;
    std::vector<double>& load = predicted[n];
    if (load.empty()) load.assign(speeds.size(), 0.0);
    const double w = weight[r];
    int best = 0;
    for (int g = 1; g < static_cast<int>(speeds.size()); ++g)
      if (load[g] + w / speeds[g] < load[best] + w / speeds[best]) best = g;
    load[best] += w / speeds[best];
    for (int v : ranks.members[r])
      if (p.onGpu(v, n)) device[v] = p.nodes[n].gpuIndices[best];
  }
  return device;
}

namespace {

// The mapping of `problem` by the settings' algorithm, seed and passes; for refine, also the paper's
// mapping it started from, which placeAsRanks checks it against again on the ranks.
struct Placed {
  MappingResult result;
  std::optional<MappingResult> paper;
};

MappingResult roundRobinResult(const MappingProblem& problem) {
  MappingResult roundRobin;
  roundRobin.nodeOf = roundRobinPlacement(problem);
  roundRobin.placements.resize(roundRobin.nodeOf.size());
  return roundRobin;
}

Placed mapWith(const MappingProblem& problem, const MapSettings& settings) {
  Placed placed;
  if (settings.algorithm == Algorithm::RoundRobin) {
    placed.result = roundRobinResult(problem);
    return placed;
  }
  PaperOptions paperOptions;
  paperOptions.seed = settings.seed;
  MappingResult paper = mapPaper(problem, paperOptions);
  if (settings.algorithm == Algorithm::Paper) {
    placed.result = std::move(paper);
    return placed;
  }
  RefineOptions refineOptions;
  refineOptions.maxPasses = settings.maxPasses;
  refineOptions.seed = settings.seed.value_or(0);
  placed.result = mapRefine(problem, paper, refineOptions);
  placed.result.oversubscribed = 0;  // the paper's slot accounting does not apply to refine's result
  placed.paper = std::move(paper);
  return placed;
}

// A placement by the settings' algorithm, as the ranks it runs as, and their evaluation.
struct RankedPlacement {
  MappingResult result;
  RankLayout ranks;
  Evaluation evaluation;
  std::string note;  // refine's placement gave way to a baseline's: why
};

// Refine is never worse than the paper's mapping or mpiexec's on the instances' placement; ranks of
// several instances (one GPU per rank, a rank's instances sharing its cores) can change that, so the
// guarantee is checked again on the ranks each would run as. Fails as groupRanks does.
bool placeAsRanks(const MappingProblem& problem, const MapSettings& settings, RankedPlacement& out,
                  std::string& error) {
  Placed placed = mapWith(problem, settings);
  out.result = std::move(placed.result);
  // A rank's instances are on one node by construction.
  if (!groupRanks(problem, out.result.nodeOf, settings.ranks, out.ranks, error)) return false;
  out.evaluation = evaluate(problem, out.result.nodeOf, out.ranks);
  // Ranks of one instance each add no term to the placement's evaluation, and grouping a baseline can
  // only raise its period: mapRefine's own check then holds for the ranks too.
  if (!placed.paper || out.ranks.rankCount() == problem.vertexCount()) return true;
  const double refinedPeriod = out.evaluation.score.period;
  const auto consider = [&](const char* name, MappingResult baseline) {
    RankLayout ranks;
    std::string baselineError;  // a --ranks count out of this placement's range: not a candidate
    if (!groupRanks(problem, baseline.nodeOf, settings.ranks, ranks, baselineError)) return;
    Evaluation evaluation = evaluate(problem, baseline.nodeOf, ranks);
    if (!scoreLess(evaluation.score, out.evaluation.score)) return;
    out.note = std::string("note: refine's placement, as ranks, predicts period ") + formatNumber(refinedPeriod) +
               "; " + name + " mapping, as ranks, predicts " + formatNumber(evaluation.score.period) + ": it is kept";
    out.result = std::move(baseline);
    out.ranks = std::move(ranks);
    out.evaluation = std::move(evaluation);
  };
  consider("the paper's", std::move(*placed.paper));
  consider("round-robin's", roundRobinResult(problem));
  return true;
}

// Instances up to this many vertices are mapped a second time, with host fallback, to see whether it pays.
constexpr int kFallbackAdviceVertexLimit = 20000;
// ... and the advice is given when it lowers the predicted period by at least this share.
constexpr double kFallbackAdviceGain = 0.10;

// Without host fallback every CG vertex waits for a GPU, even where the node's CPUs would finish it
// sooner on the host path (mpiexec's own placement does that): say so when it would pay, with the figures.
void addFallbackAdvice(const lang::Rtg& rtg, const Cluster& cluster, const MapSettings& settings, MappingOutcome& o) {
  if (o.problem.vertexCount() > kFallbackAdviceVertexLimit) return;
  bool cpuOnlyNode = false, cg = false;
  for (const ProblemNode& node : o.problem.nodes) cpuOnlyNode = cpuOnlyNode || !node.hasGpu();
  for (const ProblemVertex& vertex : o.problem.vertices) cg = cg || vertex.type == lang::Requirement::CG;
  if (!cpuOnlyNode || !cg) return;
  MappingProblem fallback;
  std::string error;
  if (!buildProblem(rtg, cluster, true, fallback, error, settings.costs ? &settings.costs->hostCosts : nullptr)) return;
  fallback.rankPerInstance = o.problem.rankPerInstance;
  RankedPlacement mapped;
  if (!placeAsRanks(fallback, settings, mapped, error)) return;  // --ranks out of its range there
  const double with = mapped.evaluation.score.period, without = o.evaluation.score.period;
  if (!(with < (1 - kFallbackAdviceGain) * without)) return;
  int onCpu = 0;
  for (int v = 0; v < fallback.vertexCount(); ++v)
    onCpu += fallback.vertices[v].type == lang::Requirement::CG && !fallback.nodes[mapped.result.nodeOf[v]].hasGpu();
  o.warnings.push_back("note: with --allow-host-fallback the predicted period would be " + formatNumber(with) +
                       " instead of " + formatNumber(without) + ", running " + std::to_string(onCpu) +
                       " CG vertex(es) on the host path of CPU-only nodes");
}

}  // namespace

namespace {

// The reader instances of each pipe the mapping may deal on demand (RtgEdge::mayDealOnDemand), by pipe
// name.
struct DemandPool {
  std::string pipe;
  std::vector<int> readers;
};

std::vector<DemandPool> demandPools(const lang::Rtg& rtg) {
  std::map<std::string, std::set<int>> readers;
  for (const lang::RtgEdge& e : rtg.edges)
    if (e.mayDealOnDemand) readers[e.pipe].insert(e.to);
  std::vector<DemandPool> pools;
  for (const auto& [pipe, instances] : readers)
    if (instances.size() >= 2) pools.push_back(DemandPool{pipe, std::vector<int>(instances.begin(), instances.end())});
  return pools;
}

// Whether `pool` is dealt on demand where `nodeOf` puts its readers: their predicted times differ by more
// than kDemandSpeedRatio (round robin would pace them all at the slowest). `fastest` and `slowest`
// receive the two readers.
bool dealtOnDemand(const MappingProblem& p, const DemandPool& pool, const std::vector<int>& nodeOf,
                   int* fastest = nullptr, int* slowest = nullptr) {
  int fast = pool.readers.front(), slow = fast;
  for (const int v : pool.readers) {
    if (vertexTime(p, v, nodeOf[v]) < vertexTime(p, fast, nodeOf[fast])) fast = v;
    if (vertexTime(p, v, nodeOf[v]) > vertexTime(p, slow, nodeOf[slow])) slow = v;
  }
  if (fastest) *fastest = fast;
  if (slowest) *slowest = slow;
  return vertexTime(p, slow, nodeOf[slow]) > kDemandSpeedRatio * vertexTime(p, fast, nodeOf[fast]);
}

// The problem as it runs under `nodeOf` with the pools dealt on demand there: each reader takes the
// stream's messages in proportion to its rate (1 / its time), so its weight is its cost times its share of
// the pool (R x its rate / the pool's summed rates), and every reader's time is the pool's: R / summed rates.
// Its messages in and out scale with its share too: a replica behind a slow link that takes a third of
// the items carries a third of the bytes (bench/cluster: paper's mappings ran up to 1.5x faster than
// round-robin's where both put a full stream's bytes on a slow link, one as a dealt replica, the other
// as a single reader). `dealt` is a copy of `p` whose pools' readers' costs and edges' bytes are
// rewritten here (nothing else differs), so that the spread's many tries copy the problem once.
void dealInto(const MappingProblem& p, const std::vector<DemandPool>& pools, const std::vector<int>& nodeOf,
              MappingProblem& dealt) {
  std::vector<double> shareOf(static_cast<std::size_t>(p.vertexCount()), 1.0);
  for (const DemandPool& pool : pools) {
    const bool onDemand = dealtOnDemand(p, pool, nodeOf);
    double rates = 0;
    for (const int v : pool.readers) rates += 1 / vertexTime(p, v, nodeOf[v]);
    for (const int v : pool.readers) {
      const double share =
          onDemand ? static_cast<double>(pool.readers.size()) / vertexTime(p, v, nodeOf[v]) / rates : 1.0;
      dealt.vertices[v].cost = p.vertices[v].cost * share;
      dealt.vertices[v].hostCost = p.vertices[v].hostCost * share;
      shareOf[static_cast<std::size_t>(v)] = share;
    }
  }
  for (int v = 0; v < p.vertexCount(); ++v)
    for (int k = p.adjacencyOffsets[v]; k < p.adjacencyOffsets[v + 1]; ++k) {
      const Neighbour& edge = p.adjacency[static_cast<std::size_t>(k)];
      dealt.adjacency[static_cast<std::size_t>(k)].bytes =
          edge.bytes * shareOf[static_cast<std::size_t>(v)] * shareOf[static_cast<std::size_t>(edge.vertex)];
    }
}

MappingProblem asDealt(const MappingProblem& p, const std::vector<DemandPool>& pools, const std::vector<int>& nodeOf) {
  MappingProblem dealt = p;
  dealInto(p, pools, nodeOf, dealt);
  return dealt;
}

// The evaluation of `nodeOf` as it runs (pools dealt on demand where they would be), grouped into ranks
// by `policy`; false where the policy cannot group it (a --ranks count below its nodes). `dealt`: a copy
// of `p`, its pools' costs rewritten here (dealInto).
bool evaluateDealt(const MappingProblem& p, const std::vector<DemandPool>& pools, const std::vector<int>& nodeOf,
                   const RankPolicy& policy, MappingProblem& dealt, RankLayout& layout, Evaluation& evaluation) {
  dealInto(p, pools, nodeOf, dealt);
  std::string ignored;
  if (!groupRanks(dealt, nodeOf, policy, layout, ignored)) return false;
  evaluation = evaluate(dealt, nodeOf, layout);
  return true;
}

// Spreading tries every reader on every node, each try a whole evaluation: only up to these sizes (beyond
// them the local search's placement stands, pools priced as round robin).
constexpr int kSpreadNodeLimit = 256;
constexpr int kSpreadVertexLimit = 5000;

// Spreads pools over resources of unequal speed where dealing them on demand there beats the placement
// (docs/streammap.md, "Demand by default"): the placement's cost model prices a pool as round robin,
// where a fast and a slow resource pace both replicas at the slow one's rate, so it packs replicas onto
// the fastest resource; on demand each takes work at its own rate, and the slow resource adds its rate.
// Moves one reader at a time to the node that lowers the period as it runs (asDealt) most, while one does.
void spreadDemandPools(const std::vector<DemandPool>& pools, const MapSettings& settings, MappingOutcome& o) {
  const MappingProblem& p = o.problem;
  const RankPolicy& policy = settings.ranks;
  if (pools.empty() || p.nodeCount() > kSpreadNodeLimit || p.vertexCount() > kSpreadVertexLimit) return;
  std::vector<int> nodeOf = o.result.nodeOf;
  MappingProblem dealt = p;
  RankLayout layout;
  Evaluation best;
  if (!evaluateDealt(p, pools, nodeOf, policy, dealt, layout, best)) return;
  bool moved = false;
  for (const DemandPool& pool : pools)
    for (std::size_t step = 0; step < pool.readers.size(); ++step) {
      int bestVertex = -1, bestNode = -1;
      RankLayout bestLayout;
      Evaluation bestMove;
      for (const int v : pool.readers)
        for (int n = 0; n < p.nodeCount(); ++n) {
          if (n == nodeOf[v] || !p.allowed(v, n)) continue;
          std::vector<int> candidate = nodeOf;
          candidate[v] = n;
          RankLayout candidateLayout;
          Evaluation evaluation;
          if (!evaluateDealt(p, pools, candidate, policy, dealt, candidateLayout, evaluation)) continue;
          if (!scoreLess(evaluation.score, bestVertex < 0 ? best.score : bestMove.score)) continue;
          bestVertex = v;
          bestNode = n;
          bestLayout = std::move(candidateLayout);
          bestMove = std::move(evaluation);
        }
      if (bestVertex < 0) break;
      nodeOf[bestVertex] = bestNode;
      layout = std::move(bestLayout);
      best = std::move(bestMove);
      moved = true;
    }
  std::vector<Placement> placements = o.result.placements;
  if (moved) {
    // The other instances were placed around the packed readers: the local search places them again around
    // the spread ones (each reader weighing its share as it now is), and its result is kept where it runs
    // faster, its pools dealt as they then are.
    MappingResult start;
    start.nodeOf = nodeOf;
    start.placements = placements;
    RefineOptions options;
    options.maxPasses = settings.maxPasses;
    options.seed = settings.seed.value_or(0);
    dealInto(p, pools, nodeOf, dealt);
    MappingResult again = mapRefine(dealt, start, options);
    RankLayout againLayout;
    Evaluation againEvaluation;
    if (evaluateDealt(p, pools, again.nodeOf, policy, dealt, againLayout, againEvaluation) &&
        scoreLess(againEvaluation.score, best.score)) {
      nodeOf = std::move(again.nodeOf);
      placements = std::move(again.placements);
      layout = std::move(againLayout);
      best = std::move(againEvaluation);
    }
    for (const DemandPool& pool : pools)
      for (const int v : pool.readers)
        if (nodeOf[v] != o.result.nodeOf[v]) placements[v] = Placement{PlacementRule::DemandSpread, -1, -1};
  }
  if (!moved &&
      !std::any_of(pools.begin(), pools.end(), [&](const DemandPool& pool) { return dealtOnDemand(p, pool, nodeOf); }))
    return;  // round robin everywhere: the placement's own evaluation stands
  o.result.nodeOf = std::move(nodeOf);
  o.result.placements = std::move(placements);
  o.ranks = std::move(layout);
  o.evaluation = std::move(best);
}

// The paper's and round-robin's placements are priced as round robin; where the mapping deals a pool of
// theirs on demand (chooseDemandPipes), the program runs it so, and their predicted period says so too
// (bench/cluster measured paper's mappings 20 % faster than round-robin's where both predicted the same).
void priceAsDealt(const std::vector<DemandPool>& pools, MappingOutcome& o) {
  const MappingProblem& p = o.problem;
  if (std::none_of(pools.begin(), pools.end(),
                   [&](const DemandPool& pool) { return dealtOnDemand(p, pool, o.result.nodeOf); }))
    return;
  const MappingProblem dealt = asDealt(p, pools, o.result.nodeOf);
  RankLayout layout = rankLayoutOf(dealt, o.result.nodeOf, o.ranks.members);
  o.evaluation = evaluate(dealt, o.result.nodeOf, layout);
  o.ranks = std::move(layout);
}

// The pools dealt on demand where the mapping put their readers (dealtOnDemand), each said in a note.
void chooseDemandPipes(const lang::Rtg& rtg, const std::vector<DemandPool>& pools, MappingOutcome& o) {
  for (const DemandPool& pool : pools) {
    int fastest = -1, slowest = -1;
    if (!dealtOnDemand(o.problem, pool, o.result.nodeOf, &fastest, &slowest)) continue;
    o.demandPipes.push_back(pool.pipe);
    const auto time = [&](int v) { return vertexTime(o.problem, v, o.result.nodeOf[v]); };
    const auto where = [&](int v) {
      return instanceName(rtg, v) + " " + formatNumber(time(v)) + " on " + o.problem.nodes[o.result.nodeOf[v]].host;
    };
    o.warnings.push_back("note: pipe '" + pool.pipe +
                         "' is dealt on demand: its reader replicas' predicted times differ " +
                         formatNumber(time(slowest) / time(fastest)) + "x (" + where(fastest) + ", " + where(slowest) +
                         "), and round robin would pace them all at the slowest; split(rr) in its communication "
                         "clause keeps round robin");
  }
}

/// MapSettings::previous: keeps its placement in `o` unless `o`'s predicted period is kRemapGain shorter
/// under the same costs. False (nothing kept) also where it does not fit this problem: another set of
/// instances, a host no longer usable, a rank over two nodes, a CG instance whose node cannot run it.
bool keepPrevious(const lang::Rtg& rtg, const std::vector<lang::MapRank>& previous,
                  const std::vector<DemandPool>& pools, MappingOutcome& o) {
  const MappingProblem& p = o.problem;
  if (previous.size() != rtg.vertices.size()) return false;
  std::map<std::string, int> nodeOfHost;
  for (int n = 0; n < p.nodeCount(); ++n) nodeOfHost[p.nodes[n].host] = n;
  std::map<std::pair<std::string, int>, const lang::MapRank*> entryOf;
  for (const lang::MapRank& entry : previous) entryOf[{entry.vnode, entry.replica}] = &entry;
  std::vector<int> nodeOf(p.vertexCount(), -1), device(p.vertexCount(), -1);
  std::map<int, std::vector<int>> members;  // by the previous rank number
  for (int v = 0; v < p.vertexCount(); ++v) {
    const auto entry = entryOf.find({rtg.vertices[v].vnode, rtg.vertices[v].replica});
    if (entry == entryOf.end()) return false;
    const auto node = nodeOfHost.find(entry->second->host);
    if (node == nodeOfHost.end() || !p.allowed(v, node->second)) return false;
    nodeOf[v] = node->second;
    if (p.onGpu(v, node->second)) {
      if (!entry->second->device) return false;
      device[v] = *entry->second->device;
    }
    members[entry->second->rank].push_back(v);
  }
  std::vector<std::vector<int>> groups;
  for (auto& [rank, vertices] : members) {
    for (int v : vertices)
      if (nodeOf[v] != nodeOf[vertices.front()]) return false;
    groups.push_back(std::move(vertices));
  }
  const MappingProblem dealt = asDealt(p, pools, nodeOf);  // as it runs, as the new one is priced
  RankLayout layout = rankLayoutOf(dealt, nodeOf, std::move(groups));
  Evaluation kept = evaluate(dealt, nodeOf, layout);
  if (o.evaluation.score.period < kept.score.period * (1 - kRemapGain)) return false;
  o.result.nodeOf = std::move(nodeOf);
  o.result.placements.assign(p.vertexCount(), Placement{PlacementRule::PreviousKept, -1, -1});
  o.ranks = std::move(layout);
  o.evaluation = std::move(kept);
  o.device = std::move(device);
  return true;
}

}  // namespace

bool planMapping(const lang::Rtg& rtg, const Cluster& cluster, const MapSettings& settings, MappingOutcome& out,
                 std::string& error) {
  MappingOutcome o;
  if (!buildProblem(rtg, cluster, settings.allowHostFallback, o.problem, error,
                    settings.costs ? &settings.costs->hostCosts : nullptr))
    return false;
  o.problem.rankPerInstance = settings.ranks.kind == RankPolicy::Kind::PerInstance;
  o.warnings = o.problem.notes;
  RankedPlacement placed;
  if (!placeAsRanks(o.problem, settings, placed, error)) return false;
  o.result = std::move(placed.result);
  o.ranks = std::move(placed.ranks);
  o.evaluation = std::move(placed.evaluation);
  if (!placed.note.empty()) o.warnings.push_back(std::move(placed.note));
  const std::vector<DemandPool> pools = demandPools(rtg);
  if (settings.algorithm == Algorithm::Refine)
    spreadDemandPools(pools, settings, o);
  else
    priceAsDealt(pools, o);
  if (!checkFinite(o, error)) return false;
  if (settings.previous == nullptr || !keepPrevious(rtg, *settings.previous, pools, o))
    o.device = assignDevices(o.problem, o.ranks);
  addOversubscriptionWarnings(o, o.warnings);
  addFallbackWarnings(rtg, o, o.warnings);
  if (!settings.allowHostFallback && settings.algorithm == Algorithm::Refine)
    addFallbackAdvice(rtg, cluster, settings, o);
  chooseDemandPipes(rtg, pools, o);
  out = std::move(o);
  return true;
}

namespace {

// One line per rank of several instances: why its node has fewer ranks than instances, and what joins
// these instances (the heaviest pipe between them), or that they were joined to balance the load.
void explainRanks(const lang::Rtg& rtg, const MappingOutcome& o, const RankPolicy& policy,
                  std::vector<std::string>& lines) {
  const MappingProblem& p = o.problem;
  std::vector<int> instancesOn(p.nodeCount(), 0), ranksOn(p.nodeCount(), 0);
  for (int n : o.result.nodeOf) ++instancesOn[n];
  for (int n : o.ranks.nodeOf) ++ranksOn[n];
  for (int r = 0; r < o.ranks.rankCount(); ++r) {
    const std::vector<int>& members = o.ranks.members[r];
    if (members.size() < 2) continue;
    const int n = o.ranks.nodeOf[r];
    std::string line = "rank " + std::to_string(r) + " = {";
    for (std::size_t i = 0; i < members.size(); ++i) line += (i ? ", " : "") + instanceName(rtg, members[i]);
    line += "} on " + p.nodes[n].host + ": ";
    if (policy.kind == RankPolicy::Kind::Exact)
      line += "--ranks " + std::to_string(policy.count) + " gives " + p.nodes[n].host + " " +
              std::to_string(ranksOn[n]) + " ranks for " + std::to_string(instancesOn[n]) + " instances";
    else
      line += "node " + p.nodes[n].host + " has " + std::to_string(p.nodes[n].cores) + " cores for " +
              std::to_string(instancesOn[n]) + " instances";
    const lang::RtgEdge* heaviest = nullptr;
    int inside = 0;
    double insideBytes = 0;
    for (const lang::RtgEdge& e : rtg.edges) {
      if (e.from == e.to || o.ranks.rankOf[e.from] != r || o.ranks.rankOf[e.to] != r) continue;
      ++inside;
      insideBytes += edgeBytes(e);
      if (heaviest == nullptr || edgeBytes(e) > edgeBytes(*heaviest)) heaviest = &e;
    }
    const NodeCost load = rankCost(p, o.ranks, r);
    if (heaviest != nullptr) {
      line +=
          "; pipe '" + heaviest->pipe + "' carries " + formatBytes(edgeBytes(*heaviest)) + " B/message between them";
      if (inside > 1)
        line += " (" + std::to_string(inside) + " pipes inside the rank, " + formatBytes(insideBytes) + " B in all)";
    } else {
      line += "; no pipe joins them: grouped to balance the load";
    }
    line += "; rank cpu " + formatNumber(load.cpu) + " on " + std::to_string(o.ranks.cores[r]) + " core" +
            (o.ranks.cores[r] == 1 ? "" : "s") + ", gpu " + formatNumber(load.gpu);
    lines.push_back(std::move(line));
  }
}

// One line per feedback loop: its turn's time, where its hops go, and the period it allows (the cost
// model's loop(l)).
void explainLoops(const lang::Rtg& rtg, const MappingOutcome& o, std::vector<std::string>& lines) {
  const MappingProblem& p = o.problem;
  const std::vector<int>& nodeOf = o.result.nodeOf;
  for (int loop = 0; loop < p.loopCount(); ++loop) {
    int inRank = 0, betweenRanks = 0, betweenNodes = 0;
    double hops = 0;
    for (int v = 0; v < p.vertexCount(); ++v) {
      if (p.loopOfVertex(v) != loop) continue;
      for (const Neighbour* it = p.neighboursBegin(v); it != p.neighboursEnd(v); ++it) {
        const int u = it->vertex;
        if (u < v || p.loopOfVertex(u) != loop) continue;
        const bool sameRank = o.ranks.rankOf[u] == o.ranks.rankOf[v];
        hops += p.hopSeconds(nodeOf[v], nodeOf[u], sameRank);
        ++(sameRank ? inRank : nodeOf[u] == nodeOf[v] ? betweenRanks : betweenNodes);
      }
    }
    if (!p.loopIsRing[loop]) {
      lines.push_back("feedback loop through " + loopName(rtg, p, loop) +
                      ": branches inside (not a ring), so no loop(l) term; the node terms price it");
      continue;
    }
    lines.push_back("feedback loop through " + loopName(rtg, p, loop) + ": " + formatNumber(p.loopTokens[loop]) +
                    " message(s) in flight; its arcs hop " + std::to_string(inRank) + " time(s) inside a rank, " +
                    std::to_string(betweenRanks) + " between ranks of a node, " + std::to_string(betweenNodes) +
                    " between nodes (" + formatNumber(hops) +
                    " s a turn); loop(l) = " + formatNumber(o.evaluation.loops[loop]) +
                    (o.evaluation.loops[loop] >= o.evaluation.score.period ? ", which sets the period" : ""));
  }
}

}  // namespace

std::vector<std::string> explainMapping(const lang::Rtg& rtg, const MappingOutcome& o, const MapSettings& settings) {
  const MappingProblem& p = o.problem;
  const Algorithm algorithm = settings.algorithm;
  // Runner-ups are priced as the program runs: pipes dealt on demand weigh each reader by its share as
  // it is now (a move would change the shares a little; the predicted period prices them exactly).
  const MappingProblem dealt = asDealt(p, demandPools(rtg), o.result.nodeOf);
  IncrementalCost cost(dealt, o.result.nodeOf);
  const Score now = cost.score();
  std::vector<std::string> lines;
  // "; cost 0.012 from the history (...)": where the cost it is placed with came from.
  const auto costSource = [&](int v, int n) -> std::string {
    if (settings.costs == nullptr) return "";
    const VertexCosts& costs = settings.costs->vertices[static_cast<std::size_t>(v)];
    return "; cost " + describeCost(p.onGpu(v, n) || p.vertices[v].type == lang::Requirement::CO
                                        ? costs.primary(p.vertices[v].type)
                                        : costs.onCpu);
  };
  for (int v = 0; v < p.vertexCount(); ++v) {
    const int n = o.result.nodeOf[v];
    const Placement& how = o.result.placements[v];
    std::string line = vertexLabel(rtg, o.ranks, v) + " -> " + p.nodes[n].host + ": ";
    if (algorithm == Algorithm::RoundRobin) {
      lines.push_back(std::move(line) + "round-robin: the next free core in host order" +
                      (p.allowed(v, n) && !p.nodes[n].hasGpu() && p.vertices[v].type == lang::Requirement::CG
                           ? " (host fallback)"
                           : "") +
                      costSource(v, n));
      continue;
    }
    if (algorithm == Algorithm::Paper) {
      line += placementRuleName(how.rule);
      if (how.viaVertex >= 0) line += " (rank " + std::to_string(o.ranks.rankOf[how.viaVertex]) + ")";
      line += "; runner-up " + (how.runnerUp >= 0 ? p.nodes[how.runnerUp].host : std::string("none"));
      lines.push_back(std::move(line) + costSource(v, n));
      continue;
    }
    // Refine: weigh every other allowed node (the least-valued ones on large clusters).
    std::vector<int> candidates;
    if (p.nodeCount() <= kExplainCandidateLimit) {
      candidates.resize(p.nodeCount());
      std::iota(candidates.begin(), candidates.end(), 0);
    } else {
      for (const auto& entry : cost.nodesByValue()) {
        if (static_cast<int>(candidates.size()) == kExplainCandidateLimit) break;
        candidates.push_back(entry.second);
      }
    }
    int runnerUp = -1;
    Score runnerScore;
    for (int b : candidates) {
      if (b == n || !p.allowed(v, b)) continue;
      const Score s = cost.scoreAfterMove(v, b);
      if (runnerUp < 0 || scoreLess(s, runnerScore)) {
        runnerUp = b;
        runnerScore = s;
      }
    }
    const bool withCores = p.vertices[v].usesNodeCores && p.onGpu(v, n) && p.nodes[n].cores > 1;
    line += std::string(placementRuleName(how.rule)) + "; t=" + formatNumber(vertexTime(p, v, n)) + " (" +
            rankMode(p, v, n) +
            (withCores ? " and " + std::to_string(p.nodes[n].cores - 1) + " cores through split_for" : std::string()) +
            ")";
    if (runnerUp < 0) {
      line += "; runner-up none (no other node may run it)";
    } else if (!nearlyEqual(runnerScore.period, now.period)) {
      // Which node and term would set the period after the move.
      cost.move(v, runnerUp);
      const int top = cost.nodesByValue().rbegin()->second;
      const int loop = cost.bottleneckLoop();
      const std::string term = loop >= 0 ? "the feedback loop through " + loopName(rtg, p, loop)
                                         : std::string(cost.nodeCost(top).dominantTerm()) + " of " + p.nodes[top].host;
      cost.move(v, n);
      line += "; runner-up " + p.nodes[runnerUp].host + " would make the period " + formatNumber(runnerScore.period) +
              " (" + term + ") vs " + formatNumber(now.period);
    } else {
      line += "; runner-up " + p.nodes[runnerUp].host + " gives the same period, crossing bytes " +
              formatNumber(runnerScore.crossBytes) + " vs " + formatNumber(now.crossBytes);
    }
    lines.push_back(std::move(line) + costSource(v, n));
  }
  if (settings.costs != nullptr) {
    std::map<std::string, std::set<std::string>> measuredPipes;  // origin -> pipes
    for (std::size_t e = 0; e < rtg.edges.size(); ++e)
      if (!settings.costs->edgeOrigins[e].empty())
        measuredPipes[settings.costs->edgeOrigins[e]].insert(rtg.edges[e].pipe);
    for (const auto& [origin, pipes] : measuredPipes) {
      std::string names;
      for (const std::string& pipe : pipes) names += (names.empty() ? "'" : ", '") + pipe + "'";
      lines.push_back("bytes per message from the " + origin + ": pipe(s) " + names);
    }
  }
  explainRanks(rtg, o, settings.ranks, lines);
  explainLoops(rtg, o, lines);
  return lines;
}

MapRecord makeMapRecord(const lang::Rtg& rtg, const Cluster& cluster, const MappingOutcome& o,
                        const MapSettings& settings) {
  const MappingProblem& p = o.problem;
  MapRecord r;
  r.program = rtg.program;
  r.algorithm = algorithmName(settings.algorithm);
  r.seed = settings.seed;
  r.clusterDigest = clusterDigest(cluster);
  r.cluster = cluster;
  r.cudaArchs = rtg.cudaArchs;
  r.mpi = rtg.mpi;
  r.costModel = kCostModelSummary;
  r.demandPipes = o.demandPipes;
  r.period = o.evaluation.score.period;
  r.crossBytes = o.evaluation.score.crossBytes;
  std::vector<char> used(p.nodeCount(), 0);
  for (int n : o.result.nodeOf) used[n] = 1;
  for (int n = 0; n < p.nodeCount(); ++n)
    if (used[n])
      r.nodes.push_back(NodePrediction{p.nodes[n].host, o.evaluation.nodes[n].cpu, o.evaluation.nodes[n].gpu,
                                       o.evaluation.nodes[n].net});
  // One entry per instance, by rank, and within a rank in program order (RankLayout keeps members
  // ascending, and vertices are in program order).
  r.ranks.reserve(rtg.vertices.size());
  for (int rank = 0; rank < o.ranks.rankCount(); ++rank)
    for (int v : o.ranks.members[rank]) {
      const lang::RtgVertex& vertex = rtg.vertices[v];
      const int n = o.result.nodeOf[v];
      RankRecord k;
      k.rank = rank;
      k.vnode = vertex.vnode;
      k.replica = vertex.replica;
      k.type = lang::requirementName(vertex.type);
      k.host = p.nodes[n].host;
      if (o.device[v] >= 0) k.device = o.device[v];
      k.mode = rankMode(p, v, n);
      k.time = vertexTime(p, v, n);
      k.memory = vertex.memory;
      r.ranks.push_back(std::move(k));
    }
  return r;
}

namespace {

std::string dotQuoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string formatDot(const lang::Rtg& rtg, const MappingOutcome& o) {
  const MappingProblem& p = o.problem;
  std::vector<std::vector<int>> byNode(p.nodeCount());
  for (int v = 0; v < p.vertexCount(); ++v) byNode[o.result.nodeOf[v]].push_back(v);
  std::string text = "digraph " + dotQuoted(rtg.program) + " {\n  rankdir=LR;\n  node [shape=box];\n";
  for (int n = 0; n < p.nodeCount(); ++n) {
    if (byNode[n].empty()) continue;
    const NodeCost& c = o.evaluation.nodes[n];
    text += "  subgraph " + dotQuoted("cluster_" + std::to_string(n)) + " {\n    label=" +
            dotQuoted(p.nodes[n].host + " (cpu " + formatNumber(c.cpu) + ", gpu " + formatNumber(c.gpu) + ", net " +
                      formatNumber(c.net) + ")") +
            ";\n";
    auto drawVertex = [&](int v, const char* indent) {
      const lang::RtgVertex& vertex = rtg.vertices[v];
      std::string label = std::to_string(v) + ": " + vertex.vnode + "[" + std::to_string(vertex.replica) + "]\\n" +
                          lang::requirementName(vertex.type);
      if (o.device[v] >= 0) label += " gpu " + std::to_string(o.device[v]);
      text += indent + std::string("v") + std::to_string(v) + " [label=\"" + label + "\"" +
              (vertex.type == lang::Requirement::CG ? ", style=filled, fillcolor=palegreen" : "") + "];\n";
    };
    for (int v : byNode[n]) {
      const int r = o.ranks.rankOf[v];
      if (o.ranks.members[r].size() < 2) {
        drawVertex(v, "    ");
      } else if (o.ranks.members[r].front() == v) {  // a rank of several instances: a cluster inside its node's
        text += "    subgraph " + dotQuoted("cluster_" + std::to_string(n) + "_rank_" + std::to_string(r)) +
                " {\n      label=" + dotQuoted("rank " + std::to_string(r)) + ";\n      style=dashed;\n";
        for (int member : o.ranks.members[r]) drawVertex(member, "      ");
        text += "    }\n";
      }
    }
    text += "  }\n";
  }
  for (const lang::RtgEdge& e : rtg.edges)
    text += "  v" + std::to_string(e.from) + " -> v" + std::to_string(e.to) + " [label=" + dotQuoted(e.pipe) + "];\n";
  return text + "}\n";
}

}  // namespace dispar::streammap
