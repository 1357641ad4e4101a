// Many VNODE instances per MPI rank: the grouping after placement, its cost-model terms, and the files
// and commands that now count ranks rather than instances.
#include "streammap/RankGroups.h"
#include "TestSupport.h"
#include "streammap/AtomicFiles.h"
#include "streammap/ClusterJson.h"
#include "streammap/Commands.h"
#include "streammap/MapFile.h"
#include "streammap/MapPlanner.h"
#include "streammap/PaperMapper.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace dispar::streammap {
namespace {

using lang::Requirement;
using namespace testing;

MappingProblem problemOf(const lang::Rtg& rtg, const Cluster& cluster) {
  MappingProblem p;
  std::string error;
  EXPECT_TRUE(buildProblem(rtg, cluster, false, p, error)) << error;
  return p;
}

RankLayout grouped(const MappingProblem& p, const std::vector<int>& nodeOf, RankPolicy policy = {}) {
  RankLayout layout;
  std::string error;
  EXPECT_TRUE(groupRanks(p, nodeOf, policy, layout, error)) << error;
  return layout;
}

// A random RTG (pipelines with extra arcs, half CG) on a random cluster of 1-4 nodes with 1-4 cores.
struct Instance {
  lang::Rtg rtg;
  Cluster cluster;
};
Instance randomInstance(SplitMix64& rng) {
  Instance k;
  const int vertices = 2 + static_cast<int>(rng.below(24));
  std::vector<lang::RtgVertex> vs;
  std::vector<lang::RtgEdge> es;
  for (int v = 0; v < vertices; ++v)
    vs.push_back(
        vertex(v, "v" + std::to_string(v), rng.below(2) ? Requirement::CG : Requirement::CO, 0.1 + 4 * rng.unit()));
  for (int v = 1; v < vertices; ++v) {
    es.push_back(edge(static_cast<int>(rng.below(v)), v, 1 + rng.below(1 << 20)));
    if (rng.below(3) == 0) es.push_back(edge(static_cast<int>(rng.below(v)), v, 1 + rng.below(1 << 20)));
  }
  k.rtg = rtgOf(vs, es);
  const int nodes = 1 + static_cast<int>(rng.below(4));
  for (int n = 0; n < nodes; ++n) {
    std::vector<GpuInfo> gpus;
    const int count = n == 0 ? 1 + static_cast<int>(rng.below(3)) : static_cast<int>(rng.below(3));
    for (int g = 0; g < count; ++g) gpus.push_back(rng.below(2) ? a100(g) : v100(g));
    k.cluster.nodes.push_back(node("n" + std::to_string(n), 1 + static_cast<int>(rng.below(4)), gpus));
  }
  return k;
}

// Every vertex in exactly one rank, every rank on its instances' node, members ascending, ranks numbered
// by their first instance, cores dealt within the node's.
void expectWellFormed(const MappingProblem& p, const std::vector<int>& nodeOf, const RankLayout& layout) {
  std::vector<int> seen(p.vertexCount(), 0);
  std::vector<int> coresUsed(p.nodeCount(), 0), ranksOn(p.nodeCount(), 0);
  for (int r = 0; r < layout.rankCount(); ++r) {
    ASSERT_FALSE(layout.members[r].empty());
    EXPECT_TRUE(std::is_sorted(layout.members[r].begin(), layout.members[r].end()));
    if (r > 0) {
      EXPECT_LT(layout.members[r - 1].front(), layout.members[r].front());
    }
    for (int v : layout.members[r]) {
      ++seen[v];
      EXPECT_EQ(nodeOf[v], layout.nodeOf[r]) << "rank " << r << " spans nodes";
      EXPECT_EQ(layout.rankOf[v], r);
    }
    EXPECT_GE(layout.cores[r], 1);
    EXPECT_LE(layout.cores[r], static_cast<int>(layout.members[r].size()));
    coresUsed[layout.nodeOf[r]] += layout.cores[r];
    ++ranksOn[layout.nodeOf[r]];
  }
  for (int v = 0; v < p.vertexCount(); ++v) EXPECT_EQ(seen[v], 1) << "vertex " << v;
  for (int n = 0; n < p.nodeCount(); ++n)
    if (ranksOn[n] <= p.nodes[n].cores) {
      EXPECT_LE(coresUsed[n], p.nodes[n].cores) << p.nodes[n].host;
    }
}

TEST(RankGroups, NeverMoreRanksThanCoresByDefault) {
  SplitMix64 rng(12);
  int groupedInstances = 0;
  for (int i = 0; i < 300; ++i) {
    const Instance k = randomInstance(rng);
    MappingOutcome o;
    std::string error;
    ASSERT_TRUE(planMapping(k.rtg, k.cluster, MapSettings{}, o, error)) << error;
    SCOPED_TRACE("instance " + std::to_string(i));
    expectWellFormed(o.problem, o.result.nodeOf, o.ranks);
    std::vector<int> instancesOn(o.problem.nodeCount(), 0), ranksOn(o.problem.nodeCount(), 0);
    for (int n : o.result.nodeOf) ++instancesOn[n];
    for (int n : o.ranks.nodeOf) ++ranksOn[n];
    for (int n = 0; n < o.problem.nodeCount(); ++n)
      EXPECT_EQ(ranksOn[n], std::min(instancesOn[n], o.problem.nodes[n].cores)) << o.problem.nodes[n].host;
    groupedInstances += o.ranks.rankCount() < o.problem.vertexCount();
    // The map written from it meets the shared layout rule, and the GPU instances of a rank share a GPU.
    const MapRecord record = makeMapRecord(k.rtg, k.cluster, o, MapSettings{});
    EXPECT_EQ(lang::checkRankLayout(record.ranks, "ranks"), "");
    EXPECT_EQ(lang::rankCountOf(record.ranks), o.ranks.rankCount());
    // No warning about more ranks than cores: there are none.
    for (const std::string& w : o.warnings) EXPECT_EQ(w.find("more ranks than cores"), std::string::npos) << w;
    // The rank terms only ever add to the one-rank-per-instance model.
    EXPECT_GE(o.evaluation.score.period, evaluate(o.problem, o.result.nodeOf).score.period * (1 - 1e-12));
  }
  EXPECT_GT(groupedInstances, 100);  // the property is not vacuous
}

TEST(RankGroups, ExactRankCountAndItsBounds) {
  SplitMix64 rng(7);
  for (int i = 0; i < 60; ++i) {
    const Instance k = randomInstance(rng);
    const MappingProblem p = problemOf(k.rtg, k.cluster);
    const MappingResult placed = mapPaper(p, {});
    std::set<int> used(placed.nodeOf.begin(), placed.nodeOf.end());
    const int low = static_cast<int>(used.size()), high = p.vertexCount();
    for (int count = low; count <= high; ++count) {
      const RankLayout layout = grouped(p, placed.nodeOf, RankPolicy{RankPolicy::Kind::Exact, count});
      EXPECT_EQ(layout.rankCount(), count);
      expectWellFormed(p, placed.nodeOf, layout);
    }
    for (int count : {low - 1, high + 1}) {
      RankLayout layout;
      std::string error;
      EXPECT_FALSE(groupRanks(p, placed.nodeOf, RankPolicy{RankPolicy::Kind::Exact, count}, layout, error));
      EXPECT_EQ(error, "option --ranks: the mapping places " + std::to_string(high) + " instance(s) on " +
                           std::to_string(low) + " node(s), so it needs from " + std::to_string(low) + " to " +
                           std::to_string(high) + " ranks (one per node at least, one per instance at most), got " +
                           std::to_string(count));
    }
  }
}

// One rank per instance is the paper's layout: rank v runs vertex v, the model and devices as before
// ranks could run several instances.
TEST(RankGroups, RankPerInstanceIsTheOldLayout) {
  SplitMix64 rng(3);
  for (int i = 0; i < 100; ++i) {
    const Instance k = randomInstance(rng);
    MapSettings settings;
    settings.ranks.kind = RankPolicy::Kind::PerInstance;
    MappingOutcome o;
    std::string error;
    ASSERT_TRUE(planMapping(k.rtg, k.cluster, settings, o, error)) << error;
    ASSERT_EQ(o.ranks.rankCount(), o.problem.vertexCount());
    const Evaluation old = evaluate(o.problem, o.result.nodeOf);
    EXPECT_EQ(o.evaluation.score.period, old.score.period);
    for (int n = 0; n < o.problem.nodeCount(); ++n) {
      EXPECT_EQ(o.evaluation.nodes[n].cpu, old.nodes[n].cpu);
      EXPECT_EQ(o.evaluation.nodes[n].gpu, old.nodes[n].gpu);
    }
    const MapRecord record = makeMapRecord(k.rtg, k.cluster, o, settings);
    for (int v = 0; v < o.problem.vertexCount(); ++v) {
      EXPECT_EQ(record.ranks[v].rank, v);
      EXPECT_EQ(record.ranks[v].vnode, k.rtg.vertices[v].vnode);
      EXPECT_EQ(o.ranks.cores[v], 1);
    }
    // Where no node has more instances than cores the default is this very layout.
    MappingOutcome byDefault;
    ASSERT_TRUE(planMapping(k.rtg, k.cluster, MapSettings{}, byDefault, error)) << error;
    if (byDefault.ranks.rankCount() == o.problem.vertexCount()) {
      EXPECT_EQ(writeMapJson(makeMapRecord(k.rtg, k.cluster, byDefault, MapSettings{})),
                writeMapJson(makeMapRecord(k.rtg, k.cluster, o, MapSettings{})));
    }
  }
}

TEST(RankGroups, HeaviestPipeNeighboursAreGroupedFirst) {
  Cluster one;
  one.nodes = {node("n1", 2)};
  // a - b carries 1000 bytes, b - c 10: with two cores for three equal instances, a and b share a rank.
  lang::Rtg rtg =
      rtgOf({vertex(0, "a", Requirement::CO), vertex(1, "b", Requirement::CO), vertex(2, "c", Requirement::CO)},
            {edge(1, 2, 10), edge(0, 1, 1000)});
  MappingProblem p = problemOf(rtg, one);
  RankLayout layout = grouped(p, {0, 0, 0});
  ASSERT_EQ(layout.rankCount(), 2);
  EXPECT_EQ(layout.members[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(layout.members[1], (std::vector<int>{2}));
  // Swap the volumes: b and c share a rank.
  rtg.edges = {edge(1, 2, 1000), edge(0, 1, 10)};
  p = problemOf(rtg, one);
  layout = grouped(p, {0, 0, 0});
  EXPECT_EQ(layout.members[0], (std::vector<int>{0}));
  EXPECT_EQ(layout.members[1], (std::vector<int>{1, 2}));
  // A pipeline of six on two cores: the heaviest pipes end up inside ranks, the load split 3 / 3.
  rtg = rtgOf({vertex(0, "s", Requirement::CO), vertex(1, "s", Requirement::CO, 1, 1),
               vertex(2, "s", Requirement::CO, 1, 2), vertex(3, "s", Requirement::CO, 1, 3),
               vertex(4, "s", Requirement::CO, 1, 4), vertex(5, "s", Requirement::CO, 1, 5)},
              {edge(0, 1, 500), edge(1, 2, 400), edge(2, 3, 1), edge(3, 4, 300), edge(4, 5, 200)});
  p = problemOf(rtg, one);
  layout = grouped(p, std::vector<int>(6, 0));
  ASSERT_EQ(layout.rankCount(), 2);
  EXPECT_EQ(layout.members[0], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(layout.members[1], (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(evaluate(p, std::vector<int>(6, 0), layout).score.period, 3.0);  // = 6 instances / 2 cores: free
}

// Feedback loops (issue 38): the problem finds them (strongly connected components, with the tokens
// their back pipes' initial(N) put in flight), and grouping keeps a loop in one rank where that costs no
// more: its turns are serial, so its instances never compute at once, and every hop between ranks adds a
// message's latency to every turn.
TEST(RankGroups, FeedbackLoopsAreFoundAndKeptInOneRank) {
  Cluster one;
  one.nodes = {node("n1", 2)};
  // source -> a -> b -> c -> d -> a (back pipe d -> a primed with one element), d -> sink; and a second
  // loop x <-> y with 3 in flight, fed by sink.
  auto primed = [](int from, int to, std::uint64_t initial) {
    lang::RtgEdge e = edge(from, to, 8);
    e.initial = initial;
    return e;
  };
  lang::Rtg rtg =
      rtgOf({vertex(0, "source", Requirement::CO), vertex(1, "a", Requirement::CO), vertex(2, "b", Requirement::CO),
             vertex(3, "c", Requirement::CO), vertex(4, "d", Requirement::CO), vertex(5, "sink", Requirement::CO)},
            {edge(0, 1, 8), edge(1, 2, 8), edge(2, 3, 8), edge(3, 4, 8), primed(4, 1, 1), edge(4, 5, 8)});
  MappingProblem p = problemOf(rtg, one);
  EXPECT_EQ(p.loopOf, (std::vector<int>{-1, 0, 0, 0, 0, -1}));
  EXPECT_EQ(p.loopTokens, (std::vector<double>{1}));
  // Every instance costs 1: the loop's four turn one after another (period at least 4 whatever the
  // grouping), so one rank holds the loop and the other the rest; a cut through the loop (3 + 3, the
  // balance alone would choose) adds two hops to every turn.
  RankLayout layout = grouped(p, std::vector<int>(6, 0), RankPolicy{RankPolicy::Kind::Exact, 2});
  ASSERT_EQ(layout.rankCount(), 2);
  EXPECT_EQ(layout.members[0], (std::vector<int>{0, 5}));
  EXPECT_EQ(layout.members[1], (std::vector<int>{1, 2, 3, 4}));
  // With 4 in flight the loop's instances compute at once: 3 + 3 wins, as for a chain.
  rtg.edges[4] = primed(4, 1, 4);
  p = problemOf(rtg, one);
  EXPECT_EQ(p.loopTokens, (std::vector<double>{4}));
  layout = grouped(p, std::vector<int>(6, 0), RankPolicy{RankPolicy::Kind::Exact, 2});
  ASSERT_EQ(layout.rankCount(), 2);
  EXPECT_EQ(layout.members[0].size(), 3u);
  // Two loops, the second through x -> y -> z -> x (a ring, no initial: one in flight).
  rtg.vertices.push_back(vertex(6, "x", Requirement::CO));
  rtg.vertices.push_back(vertex(7, "y", Requirement::CO));
  rtg.vertices.push_back(vertex(8, "z", Requirement::CO));
  rtg.edges.push_back(edge(5, 6, 8));
  rtg.edges.push_back(edge(6, 7, 8));
  rtg.edges.push_back(edge(7, 8, 8));
  rtg.edges.push_back(edge(8, 6, 8));
  p = problemOf(rtg, one);
  EXPECT_EQ(p.loopOf, (std::vector<int>{-1, 0, 0, 0, 0, -1, 1, 1, 1}));
  EXPECT_EQ(p.loopTokens, (std::vector<double>{4, 1}));
  // Every arc of x, y, z with its reverse: a symmetric exchange, whose members all compute at once.
  rtg.edges.push_back(edge(7, 6, 8));
  rtg.edges.push_back(edge(8, 7, 8));
  rtg.edges.push_back(edge(6, 8, 8));
  p = problemOf(rtg, one);
  EXPECT_EQ(p.loopTokens, (std::vector<double>{4, 3}));
}

// A symmetric exchange (Task Bench's stencil: column i <-> i + 1, and the columns' results to a sink) is
// not kept in one rank: its columns compute at once, so on two cores they are split 2 + 2, not 4 + sink
// (which the Open MPI rankfile would bind to one core, at half the speed).
TEST(RankGroups, ASymmetricExchangeIsBalancedLikeAChain) {
  Cluster one;
  one.nodes = {node("n1", 2)};
  lang::Rtg rtg = rtgOf({vertex(0, "column", Requirement::CO), vertex(1, "column", Requirement::CO, 1, 1),
                         vertex(2, "column", Requirement::CO, 1, 2), vertex(3, "column", Requirement::CO, 1, 3),
                         vertex(4, "total", Requirement::CO)},
                        {edge(0, 1, 8), edge(1, 0, 8), edge(1, 2, 8), edge(2, 1, 8), edge(2, 3, 8), edge(3, 2, 8),
                         edge(0, 4, 24), edge(1, 4, 24), edge(2, 4, 24), edge(3, 4, 24)});
  const MappingProblem p = problemOf(rtg, one);
  EXPECT_EQ(p.loopTokens, (std::vector<double>{4}));
  const RankLayout layout = grouped(p, std::vector<int>(5, 0));
  ASSERT_EQ(layout.rankCount(), 2);
  for (const std::vector<int>& members : layout.members) {
    const auto columns = std::count_if(members.begin(), members.end(), [](int v) { return v < 4; });
    EXPECT_EQ(columns, 2);
  }
}

// The load caps keep a heavy pipe from piling the work into one rank when a balanced grouping exists.
TEST(RankGroups, BalancesLoadBeforeBytes) {
  Cluster one;
  one.nodes = {node("n1", 2)};
  // Heavy a (cost 3) and b (cost 3) joined by the heaviest pipe; c and d light. {a, b} would make the
  // node's CPU 6; {a, c}, {b, d} or alike keeps it at 4 = (3 + 3 + 1 + 1) / 2.
  const lang::Rtg rtg = rtgOf({vertex(0, "a", Requirement::CO, 3), vertex(1, "b", Requirement::CO, 3),
                               vertex(2, "c", Requirement::CO, 1), vertex(3, "d", Requirement::CO, 1)},
                              {edge(0, 1, 1 << 20), edge(1, 2, 10), edge(2, 3, 10)});
  const MappingProblem p = problemOf(rtg, one);
  const RankLayout layout = grouped(p, {0, 0, 0, 0});
  ASSERT_EQ(layout.rankCount(), 2);
  EXPECT_NE(layout.rankOf[0], layout.rankOf[1]);
  EXPECT_EQ(evaluate(p, {0, 0, 0, 0}, layout).score.period, 4.0);
}

// CG instances share a rank (and so a GPU) only where the model says it costs nothing: on a node with
// one GPU always; on a node with two, not beyond the even share per GPU.
TEST(RankGroups, GpuInstancesShareARankOnlyWhereItPays) {
  const lang::Rtg rtg = rtgOf({vertex(0, "k", Requirement::CG, 2), vertex(1, "k", Requirement::CG, 2, 1),
                               vertex(2, "k", Requirement::CG, 2, 2), vertex(3, "k", Requirement::CG, 2, 3)},
                              {edge(0, 1, 4096), edge(1, 2, 4096), edge(2, 3, 4096)});
  Cluster twoGpus;
  twoGpus.nodes = {node("g", 2, {a100(0), a100(1)})};
  MappingOutcome o;
  std::string error;
  ASSERT_TRUE(planMapping(rtg, twoGpus, MapSettings{}, o, error)) << error;
  ASSERT_EQ(o.ranks.rankCount(), 2);
  for (const std::vector<int>& members : o.ranks.members) EXPECT_EQ(members.size(), 2u);
  // One GPU per rank, the two ranks on the two GPUs: period 4 = 8 / 2 GPUs, as without grouping.
  EXPECT_EQ(o.device[o.ranks.members[0][0]], o.device[o.ranks.members[0][1]]);
  EXPECT_NE(o.device[o.ranks.members[0][0]], o.device[o.ranks.members[1][0]]);
  EXPECT_DOUBLE_EQ(o.evaluation.score.period, 4.0);
  // The rank term prices a GPU shared by a rank: all four in one rank would make it 8.
  RankLayout one = rankLayoutOf(o.problem, o.result.nodeOf, {{0, 1, 2, 3}});
  EXPECT_DOUBLE_EQ(evaluate(o.problem, o.result.nodeOf, one).score.period, 8.0);

  Cluster oneGpu;
  oneGpu.nodes = {node("g", 1, {a100(0)})};
  ASSERT_TRUE(planMapping(rtg, oneGpu, MapSettings{}, o, error)) << error;
  ASSERT_EQ(o.ranks.rankCount(), 1);
  EXPECT_DOUBLE_EQ(o.evaluation.score.period, 8.0);  // they share the one GPU anyway
}

TEST(RankGroups, CostModelRankTermsAndCoresByHand) {
  Cluster c;
  c.nodes = {node("n", 4)};
  // Ranks {0, 1, 2} (costs 1, 1, 2) and {3} on a 4-core node: rank 0 gets 3 cores (4 - 2 ranks spare,
  // at most one per instance), rank 1 one. cpu = max(max t 2, sum 5 / 4, 4 / 3) = 2.
  const lang::Rtg rtg = rtgOf({vertex(0, "a", Requirement::CO, 1), vertex(1, "b", Requirement::CO, 1),
                               vertex(2, "c", Requirement::CO, 2), vertex(3, "d", Requirement::CO, 1)},
                              {});
  const MappingProblem p = problemOf(rtg, c);
  const RankLayout layout = rankLayoutOf(p, {0, 0, 0, 0}, {{3}, {2, 0, 1}});
  EXPECT_EQ(layout.members[0], (std::vector<int>{0, 1, 2}));  // numbered by first instance, sorted
  EXPECT_EQ(layout.cores, (std::vector<int>{3, 1}));
  EXPECT_DOUBLE_EQ(rankCost(p, layout, 0).cpu, 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(evaluate(p, {0, 0, 0, 0}, layout).nodes[0].cpu, 2.0);
  // On one core all four in one rank take their sum.
  Cluster small;
  small.nodes = {node("n", 1)};
  const MappingProblem q = problemOf(rtg, small);
  const RankLayout all = rankLayoutOf(q, {0, 0, 0, 0}, {{0, 1, 2, 3}});
  EXPECT_EQ(all.cores, (std::vector<int>{1}));
  EXPECT_DOUBLE_EQ(evaluate(q, {0, 0, 0, 0}, all).score.period, 5.0);
  // One rank per instance adds nothing to the model, bit for bit.
  const Evaluation singles = evaluate(p, {0, 0, 0, 0}, singletonRanks(p, {0, 0, 0, 0}));
  EXPECT_EQ(singles.score.period, evaluate(p, {0, 0, 0, 0}).score.period);
}

TEST(RankGroups, RankfileBindsEachRankToItsCores) {
  EXPECT_EQ(formatOpenMpiRankfile({"a", "a", "b"}, {8, 8, 2}, {3, 5, 1}),
            "rank 0=a slot=0-2\nrank 1=a slot=3-7\nrank 2=b slot=0\n");
  // More ranks than cores: one core each, wrapping as before.
  EXPECT_EQ(formatOpenMpiRankfile({"a", "a", "a"}, {2, 2, 2}, {1, 1, 1}),
            "rank 0=a slot=0\nrank 1=a slot=1\nrank 2=a slot=0\n");
}

class RankCommands : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    // A pipeline of five CO instances and a fan-out, on two nodes of two cores.
    lang::Rtg rtg = rtgOf({vertex(0, "src", Requirement::CO), vertex(1, "lowpass", Requirement::CO),
                           vertex(2, "demod", Requirement::CO), vertex(3, "sink", Requirement::CO),
                           vertex(4, "monitor", Requirement::CO), vertex(5, "log", Requirement::CO)},
                          {edge(0, 1, 8192), edge(1, 2, 4096), edge(2, 3, 2048), edge(2, 4, 16), edge(4, 5, 8)});
    rtg.edges[0].pipe = "samples";
    write("app.rtg.json", lang::writeRtgJson(rtg));
    Cluster c;
    c.nodes = {node("n1", 2), node("n2", 1)};
    write("cluster.json", writeClusterJson(c));
  }
  int map(std::vector<std::string> extra) {
    Args args = {path("app.rtg.json"), "-o", path("app.machinefile"), "--cluster", path("cluster.json")};
    args.insert(args.end(), extra.begin(), extra.end());
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    const int status = mapCommand(args);
    out_ = ::testing::internal::GetCapturedStdout();
    err_ = ::testing::internal::GetCapturedStderr();
    return status;
  }
  MapRecord record() const {
    MapRecord r;
    std::string error;
    EXPECT_TRUE(parseMapJson(read("app.map.json"), r, error)) << error;
    return r;
  }

  std::string out_, err_;
};

TEST_F(RankCommands, LauncherFilesHaveOneEntryPerRank) {
  ASSERT_EQ(map({"--explain", "--dot", path("app.dot")}), 0) << err_;
  const MapRecord r = record();
  ASSERT_EQ(r.ranks.size(), 6u);
  const int ranks = lang::rankCountOf(r.ranks);
  EXPECT_EQ(ranks, 3);  // n1: 2 cores, n2: 1 core
  EXPECT_EQ(read("app.machinefile"), formatMpichMachinefile(hostsOfRanks(r)));
  EXPECT_NE(out_.find("run: mpiexec -f " + path("app.machinefile") + " -n 3 "), std::string::npos) << out_;
  EXPECT_NE(out_.find("3 ranks run 6 instances"), std::string::npos) << out_;
  // n1 runs src, lowpass, demod and sink in two ranks: the heaviest pipe inside one, and the load even.
  EXPECT_NE(out_.find("rank 0 = {src[0], lowpass[0]} on n1: node n1 has 2 cores for 4 instances; pipe 'samples' "
                      "carries 8192 B/message between them; rank cpu 2 on 1 core, gpu 0"),
            std::string::npos)
      << out_;
  EXPECT_NE(read("app.dot").find("_rank_"), std::string::npos);
  std::map<int, std::string> hostOf;
  for (const RankRecord& k : r.ranks) hostOf.emplace(k.rank, k.host);
  std::map<std::string, int> ranksOn;
  for (const auto& [rank, host] : hostOf) ++ranksOn[host];
  EXPECT_LE(ranksOn["n1"], 2);
  EXPECT_LE(ranksOn["n2"], 1);

  ASSERT_EQ(map({"--format", "slurm", "-o", path("app.slurm-hostfile")}), 0) << err_;
  EXPECT_EQ(read("app.slurm-hostfile"), formatSlurmHostfile(hostsOfRanks(record())));
  // Grouped ranks' threads share the node's cores: no task binding.
  EXPECT_NE(out_.find("srun --mpi=pmi2 -n 3 --distribution=arbitrary --cpu-bind=none " + path("app")),
            std::string::npos)
      << out_;
  EXPECT_EQ(out_.find("--overcommit"), std::string::npos) << out_;  // ranks never exceed cores
  ASSERT_EQ(map({"--format", "slurm", "-o", path("app.slurm-hostfile"), "--rank-per-instance"}), 0) << err_;
  EXPECT_NE(out_.find("-n 6 --distribution=arbitrary --overcommit"), std::string::npos) << out_;  // no --cpu-bind

  ASSERT_EQ(map({"--format", "openmpi"}), 0) << err_;
  const std::string rankfile = read("app.rankfile");
  EXPECT_EQ(std::count(rankfile.begin(), rankfile.end(), '\n'), 3);
  EXPECT_NE(out_.find("--rankfile " + path("app.rankfile") + " -n 3 "), std::string::npos) << out_;
}

TEST_F(RankCommands, RanksOptionAndItsErrors) {
  ASSERT_EQ(map({"--ranks", "5"}), 0) << err_;
  EXPECT_EQ(lang::rankCountOf(record().ranks), 5);
  EXPECT_NE(out_.find(" -n 5 "), std::string::npos) << out_;
  EXPECT_NE(err_.find("warning: 2 more ranks than cores"), std::string::npos) << err_;
  ASSERT_EQ(::unlink(path("app.map.json").c_str()), 0);
  ASSERT_EQ(::unlink(path("app.machinefile").c_str()), 0);
  // Out of range: the bounds named, nothing written, exit status 1 as other usage errors.
  EXPECT_EQ(map({"--ranks", "7"}), 1);
  EXPECT_NE(err_.find("streammap map: error: option --ranks: the mapping places 6 instance(s) on 2 node(s), so it "
                      "needs from 2 to 6 ranks (one per node at least, one per instance at most), got 7"),
            std::string::npos)
      << err_;
  EXPECT_FALSE(exists("app.map.json"));
  EXPECT_FALSE(exists("app.machinefile"));
  EXPECT_EQ(map({"--ranks", "1"}), 1);
  EXPECT_NE(err_.find("needs from 2 to 6 ranks"), std::string::npos) << err_;
  EXPECT_EQ(map({"--ranks", "0"}), 2);  // usage errors
  EXPECT_NE(err_.find("--ranks"), std::string::npos) << err_;
  EXPECT_EQ(map({"--ranks", "3", "--rank-per-instance"}), 2);
  EXPECT_NE(err_.find("--ranks and --rank-per-instance are mutually exclusive"), std::string::npos) << err_;
  EXPECT_FALSE(exists("app.map.json"));
}

TEST_F(RankCommands, RankPerInstanceWritesTheOldFiles) {
  ASSERT_EQ(map({"--rank-per-instance"}), 0) << err_;
  const MapRecord r = record();
  std::vector<std::string> hostOfInstance;
  for (std::size_t i = 0; i < r.ranks.size(); ++i) {
    EXPECT_EQ(r.ranks[i].rank, static_cast<int>(i));
    hostOfInstance.push_back(r.ranks[i].host);
  }
  EXPECT_EQ(read("app.machinefile"), formatMpichMachinefile(hostOfInstance));
  EXPECT_NE(out_.find(" -n 6 "), std::string::npos) << out_;
  EXPECT_EQ(out_.find("ranks run"), std::string::npos) << out_;  // no grouping line
}

TEST_F(RankCommands, GroupedMapRoundTripsAndIsDeterministic) {
  ASSERT_EQ(map({}), 0) << err_;
  const std::string text = read("app.map.json"), machinefile = read("app.machinefile"), table = out_;
  EXPECT_NE(text.find("\"version\": 2,"), std::string::npos);
  MapRecord back;
  std::string error;
  ASSERT_TRUE(parseMapJson(text, back, error)) << error;
  EXPECT_EQ(writeMapJson(back), text);
  EXPECT_EQ(lang::checkRankLayout(back.ranks, "map.ranks"), "");
  EXPECT_LT(lang::rankCountOf(back.ranks), static_cast<int>(back.ranks.size()));
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(map({}), 0) << err_;
    EXPECT_EQ(read("app.map.json"), text);
    EXPECT_EQ(read("app.machinefile"), machinefile);
    EXPECT_EQ(out_, table);
  }
  // A version 1 file (one rank per instance) still reads; a layout that breaks the rule does not.
  ASSERT_EQ(map({"--rank-per-instance"}), 0) << err_;
  std::string v1 = read("app.map.json");
  v1.replace(v1.find("\"version\": 2"), 12, "\"version\": 1");
  EXPECT_TRUE(parseMapJson(v1, back, error)) << error;
  // Entry 1 says rank 7 where 0 or 1 may follow rank 0.
  std::string broken = text;
  const std::size_t second = broken.find("\"rank\": ", broken.find("\"rank\": ") + 1);
  ASSERT_NE(second, std::string::npos);
  broken.replace(second, 9, "\"rank\": 7");
  EXPECT_FALSE(parseMapJson(broken, back, error));
  EXPECT_EQ(error.rfind("map.ranks[1].rank: expected 0 or 1, got 7", 0), 0u) << error;
  std::string v3 = text;
  v3.replace(v3.find("\"version\": 2"), 12, "\"version\": 3");
  EXPECT_FALSE(parseMapJson(v3, back, error));
  EXPECT_NE(error.find("unsupported version 3 (this tool reads versions 1 to 2)"), std::string::npos) << error;
}

}  // namespace
}  // namespace dispar::streammap
