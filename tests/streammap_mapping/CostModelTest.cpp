// The cost model by hand, and the incremental evaluation against the from-scratch one.
#include "streammap/CostModel.h"
#include "TestSupport.h"
#include "streammap/GpuSpeed.h"
#include "streammap/MapPlanner.h"
#include "streammap/PaperMapper.h"

#include <gtest/gtest.h>

namespace dispar::streammap {
namespace {

using lang::Requirement;
using namespace testing;

TEST(GpuSpeed, ReferenceAndEstimates) {
  EXPECT_DOUBLE_EQ(estimateGpuSpeed(a100(0)), 1.0);
  // V100: 80 SMs x 1530 MHz x 64 lanes / (108 x 1410 MHz x 64).
  EXPECT_NEAR(estimateGpuSpeed(v100(0)), 80.0 * 1530000 / (108.0 * 1410000), 1e-12);
  // RTX 4090 (8.9): 128 SMs x 2520 MHz x 128 lanes.
  EXPECT_NEAR(estimateGpuSpeed(gpu(0, 128, 2520000, 8, 9)), 128.0 * 2520000 * 128 / (108.0 * 1410000 * 64), 1e-12);
  GpuInfo measured = v100(0);
  measured.measuredRate = 2.5;
  EXPECT_DOUBLE_EQ(estimateGpuSpeed(measured), 2.5);
  EXPECT_DOUBLE_EQ(estimateGpuSpeed(gpu(0, 0, 0, 9, 0)), 1.0);
  EXPECT_EQ(fp32LanesPerSm(6, 0), 64);
  EXPECT_EQ(fp32LanesPerSm(6, 1), 128);
  EXPECT_EQ(fp32LanesPerSm(3, 5), 192);
}

// Two nodes: a: 2 cores, CPU speed 2.0, bandwidth 1000 B/s; b: 1 core, 2 GPUs of measured rate 4.0.
// Vertices: 0 CO cost 4 on a, 1 CO cost 2 on a, 2 CG cost 8 on b, 3 CG cost 4 on b, 4 CO cost 3 on b.
// Edges: 0->2 (500 B), 1->0 (100 B, internal), 3->4 (volume null: element_bytes 4, internal).
//   cpu(a) = max(max(4,2)/2, (4+2)/2/2) = max(2, 1.5) = 2
//   net(a) = 500 / 1000 + 1 message x 1.5e-6 s (the default link latency)
//   gpu(b) = max(max(8,4)/4, (8+4)/2/4) = max(2, 1.5) = 2;  cpu(b) = max(3, 3/1) = 3
//   net(b) = 500 / 1.25e9 + 1 message x 2e-6 s (b's stated latency)
// Period 3 (cpu of b), crossing bytes 500.
TEST(CostModel, HandWorked) {
  Cluster c;
  NodeInfo a = node("a", 2, {}, 2.0);
  a.bandwidthBytesPerSec = 1000;
  GpuInfo g0 = v100(0), g1 = v100(1);
  g0.measuredRate = g1.measuredRate = 4.0;
  c.nodes = {a, node("b", 1, {g0, g1})};
  c.nodes[1].latencySeconds = 2e-6;
  lang::RtgEdge internal = edge(3, 4);
  internal.volume.reset();
  const lang::Rtg rtg =
      rtgOf({vertex(0, "x", Requirement::CO, 4), vertex(1, "y", Requirement::CO, 2), vertex(2, "g", Requirement::CG, 8),
             vertex(3, "h", Requirement::CG, 4), vertex(4, "z", Requirement::CO, 3)},
            {edge(0, 2, 500), edge(1, 0, 100), internal});
  MappingProblem p;
  std::string error;
  ASSERT_TRUE(buildProblem(rtg, c, false, p, error)) << error;
  const Evaluation e = evaluate(p, {0, 0, 1, 1, 1});
  EXPECT_DOUBLE_EQ(e.nodes[0].cpu, 2.0);
  EXPECT_DOUBLE_EQ(e.nodes[0].gpu, 0.0);
  EXPECT_DOUBLE_EQ(e.nodes[0].net, 0.5 + kDefaultNetworkLatencySeconds);
  EXPECT_DOUBLE_EQ(e.nodes[1].gpu, 2.0);
  EXPECT_DOUBLE_EQ(e.nodes[1].cpu, 3.0);
  EXPECT_DOUBLE_EQ(e.nodes[1].net, 500 / 1.25e9 + 2e-6);
  EXPECT_DOUBLE_EQ(e.score.period, 3.0);
  EXPECT_DOUBLE_EQ(e.score.crossBytes, 500);
  EXPECT_STREQ(e.nodes[1].dominantTerm(), "cpu");
  // Moving 4 to a: cpu(a) = max(4/2, 9/2/2) = 2.25; edge 3->4 now crosses (4 bytes).
  IncrementalCost inc(p, {0, 0, 1, 1, 1});
  const Score s = inc.scoreAfterMove(4, 0);
  EXPECT_DOUBLE_EQ(s.period, 2.25);
  EXPECT_DOUBLE_EQ(s.crossBytes, 504);
}

// A vertex that shares its loops with its node's cores (split_for) runs on a GPU node at the GPU's and
// the other cores' combined speed, counted on the GPU; elsewhere it costs what any vertex of its type does.
TEST(CostModel, SplitVertexUsesTheGpuAndTheOtherCores) {
  Cluster c;
  GpuInfo g = v100(0);
  g.measuredRate = 4.0;
  c.nodes = {node("cpu", 4, {}, 2.0), node("gpu", 5, {g}, 1.0)};
  lang::Rtg rtg = rtgOf({vertex(0, "split", Requirement::CG, 8), vertex(1, "plain", Requirement::CG, 8)}, {});
  rtg.vertices[0].usesNodeCores = true;
  MappingProblem p;
  std::string error;
  ASSERT_TRUE(buildProblem(rtg, c, true, p, error)) << error;
  EXPECT_DOUBLE_EQ(vertexTime(p, 0, 1), 8 / (4.0 + 4 * 1.0));  // GPU 4 + 4 more cores at 1
  EXPECT_DOUBLE_EQ(vertexTime(p, 1, 1), 8 / 4.0);
  // Host fallback: one core running the host path, kReferenceGpuSpeedupOverCore times the GPU's work.
  EXPECT_DOUBLE_EQ(vertexTime(p, 0, 0), 8 * kReferenceGpuSpeedupOverCore / 2.0);
  const Evaluation e = evaluate(p, {1, 0});
  EXPECT_DOUBLE_EQ(e.nodes[1].gpu, 1.0);
  EXPECT_DOUBLE_EQ(e.nodes[1].cpu, 0.0);  // the borrowed cores are not charged
  IncrementalCost inc(p, {0, 0});
  // The plain vertex's host path on the CPU node remains.
  EXPECT_DOUBLE_EQ(inc.scoreAfterMove(0, 1).period, 8 * kReferenceGpuSpeedupOverCore / 2.0);
}

TEST(CostModel, TiesBrokenByCrossingBytes) {
  EXPECT_TRUE(scoreLess({1.0, 10}, {1.0, 20}));
  EXPECT_FALSE(scoreLess({1.0, 20}, {1.0, 10}));
  EXPECT_TRUE(scoreLess({0.5, 1e9}, {1.0, 0}));
  EXPECT_FALSE(scoreLess({1.0, 10}, {1.0, 10}));
}

class IncrementalCostTest : public ::testing::TestWithParam<bool> {};

// Random moves and swaps: the incremental score equals evaluate's, with and without one rank per
// instance (40 instances on 4 nodes of few cores: the oversubscription term is exercised).
TEST_P(IncrementalCostTest, MatchesFromScratch) {
  SplitMix64 rng(99);
  Cluster c = paperCluster();
  std::vector<lang::RtgVertex> vs;
  std::vector<lang::RtgEdge> es;
  for (int v = 0; v < 40; ++v) {
    vs.push_back(vertex(v, "v", rng.below(2) ? Requirement::CG : Requirement::CO, 0.5 + rng.unit()));
    vs.back().usesNodeCores = rng.below(4) == 0;  // split_for vertices weigh differently per node
  }
  for (int i = 0; i < 80; ++i) {
    const int a = static_cast<int>(rng.below(40)), b = static_cast<int>(rng.below(40));
    es.push_back(edge(a, b, rng.below(100000)));
  }
  MappingProblem p;
  std::string error;
  ASSERT_TRUE(buildProblem(rtgOf(vs, es), c, true, p, error)) << error;
  p.rankPerInstance = GetParam();
  std::vector<int> nodeOf(40);
  for (int& n : nodeOf) n = static_cast<int>(rng.below(4));
  IncrementalCost inc(p, nodeOf);
  for (int step = 0; step < 2000; ++step) {
    const int v = static_cast<int>(rng.below(40));
    Score predicted;
    if (step % 2) {
      const int to = static_cast<int>(rng.below(4));
      if (to == nodeOf[v]) continue;
      predicted = inc.scoreAfterMove(v, to);
      inc.move(v, to);
      nodeOf[v] = to;
    } else {
      const int u = static_cast<int>(rng.below(40));
      if (nodeOf[u] == nodeOf[v]) continue;
      predicted = inc.scoreAfterSwap(u, v);
      inc.swap(u, v);
      std::swap(nodeOf[u], nodeOf[v]);
    }
    const Score truth = evaluate(p, nodeOf).score;
    ASSERT_NEAR(predicted.period, truth.period, 1e-9) << "step " << step;
    ASSERT_NEAR(inc.score().period, truth.period, 1e-9) << "step " << step;
    ASSERT_NEAR(inc.score().crossBytes, truth.crossBytes, 1e-6) << "step " << step;
    ASSERT_NEAR(predicted.crossBytes, truth.crossBytes, 1e-6) << "step " << step;
  }
}

INSTANTIATE_TEST_SUITE_P(RankLayouts, IncrementalCostTest, ::testing::Bool());

// A ring's messages go around one after another: loop(l) = (its instances' times + its arcs' hops) /
// the messages in flight. Node a: thread 1 us, rank 10 us, link 100 us; node b: rank 20 us, link 200 us.
// Ring 0 -> 1 -> 2 -> 0 (2 messages in flight: initial(2) on 2 -> 0), costs 1, 2 and 3 ms.
TEST(CostModel, ARingPaysItsInstancesAndHopsOverItsTokens) {
  Cluster c;
  NodeInfo a = node("a", 4), b = node("b", 4);
  a.threadLatencySeconds = 1e-6;
  a.rankLatencySeconds = 1e-5;
  a.latencySeconds = 1e-4;
  b.rankLatencySeconds = 2e-5;
  b.latencySeconds = 2e-4;
  c.nodes = {a, b};
  lang::RtgEdge back = edge(2, 0, 8);
  back.initial = 2;
  const lang::Rtg rtg = rtgOf({vertex(0, "x", Requirement::CO, 1e-3), vertex(1, "y", Requirement::CO, 2e-3),
                               vertex(2, "z", Requirement::CO, 3e-3)},
                              {edge(0, 1, 8), edge(1, 2, 8), back});
  MappingProblem p;
  std::string error;
  ASSERT_TRUE(buildProblem(rtg, c, false, p, error)) << error;
  ASSERT_EQ(p.loopIsRing, (std::vector<char>{1}));
  // One rank per instance on a: three hops between ranks.
  EXPECT_NEAR(evaluate(p, {0, 0, 0}).loops[0], (6e-3 + 3 * 1e-5) / 2, 1e-15);
  // All three in one rank: three hops inside it.
  const RankLayout oneRank = rankLayoutOf(p, {0, 0, 0}, {{0, 1, 2}});
  EXPECT_NEAR(evaluate(p, {0, 0, 0}, oneRank).loops[0], (6e-3 + 3 * 1e-6) / 2, 1e-15);
  // z on b: 0 -> 1 stays on a; 1 -> 2 and 2 -> 0 cross, each the larger rank latency and both links.
  const Evaluation cut = evaluate(p, {0, 0, 1});
  EXPECT_NEAR(cut.loops[0], (6e-3 + 1e-5 + 2 * (2e-5 + 1e-4 + 2e-4)) / 2, 1e-15);
  EXPECT_DOUBLE_EQ(cut.score.period, std::max(cut.loops[0], 3e-3));
  // The crossing pipes' messages pay each node's link latency in its net term.
  EXPECT_DOUBLE_EQ(cut.nodes[1].net, 16 / 1.25e9 + 2 * 2e-4);
  IncrementalCost inc(p, {0, 0, 0});
  EXPECT_NEAR(inc.scoreAfterMove(2, 1).period, cut.score.period, 1e-15);
}

// A loop with branches inside (a farm fed back: 0 deals to 1 and 2, both answer 0) is not a ring: the sum
// of its instances would overstate a turn whose branches run side by side, so it has no loop(l) term.
TEST(CostModel, ALoopWithBranchesIsNotCharged) {
  Cluster c;
  c.nodes = {node("a", 4)};
  const lang::Rtg rtg = rtgOf(
      {vertex(0, "farm", Requirement::CO, 1), vertex(1, "w", Requirement::CO, 5), vertex(2, "w", Requirement::CO, 5)},
      {edge(0, 1), edge(0, 2), edge(1, 0), edge(2, 0)});
  MappingProblem p;
  std::string error;
  ASSERT_TRUE(buildProblem(rtg, c, false, p, error)) << error;
  ASSERT_EQ(p.loopIsRing, (std::vector<char>{0}));
  const Evaluation e = evaluate(p, {0, 0, 0});
  EXPECT_DOUBLE_EQ(e.loops[0], 0.0);
  EXPECT_DOUBLE_EQ(e.score.period, 5.0);  // the largest instance, as without the loop
}

// Without any measurement (every cost the default 1) a ring is kept on one node and never cut into
// alternating stages: every hop it saves is a message's latency off every turn, and its instances never
// compute at once. Source -> a -> b -> c -> d -> a (ring), d -> sink.
TEST(CostModel, ARingIsNotCutWhenKeepingItWholeCostsNothing) {
  lang::RtgEdge back = edge(4, 1);
  back.initial = 1;
  const lang::Rtg rtg =
      rtgOf({vertex(0, "source", Requirement::CO), vertex(1, "a", Requirement::CO), vertex(2, "b", Requirement::CO),
             vertex(3, "c", Requirement::CO), vertex(4, "d", Requirement::CO), vertex(5, "sink", Requirement::CO)},
            {edge(0, 1), edge(1, 2), edge(2, 3), edge(3, 4), back, edge(4, 5)});
  // The ring's arcs whose ends are in different ranks.
  const auto cuts = [](const std::vector<int>& rankOf) {
    int cut = 0;
    for (int v = 1; v <= 4; ++v) cut += rankOf[v] != rankOf[v == 4 ? 1 : v + 1];
    return cut;
  };
  for (const bool microseconds : {false, true}) {
    lang::Rtg costed = rtg;
    if (microseconds)  // measured costs as small as the hops: the hops decide
      for (lang::RtgVertex& v : costed.vertices) v.cost = 2e-6;
    const std::string costs = microseconds ? "2 us" : "the default";
    // Two 2-core nodes, as many ranks as cores: the ring stays on one node, cut at most once in two.
    Cluster two;
    two.nodes = {node("n1", 2), node("n2", 2)};
    MappingOutcome o;
    std::string error;
    ASSERT_TRUE(planMapping(costed, two, MapSettings{}, o, error)) << error;
    const std::vector<int>& nodeOf = o.result.nodeOf;
    EXPECT_TRUE(nodeOf[1] == nodeOf[2] && nodeOf[2] == nodeOf[3] && nodeOf[3] == nodeOf[4])
        << "costs " << costs << ": the ring was cut across nodes " << ::testing::PrintToString(nodeOf);
    EXPECT_LE(cuts(o.ranks.rankOf), 2) << "costs " << costs << ": the ring was cut into alternating stages "
                                       << ::testing::PrintToString(o.ranks.rankOf);
    // One 2-core node, --ranks 2: the ring in one rank, source and sink in the other.
    Cluster one;
    one.nodes = {node("n1", 2)};
    MapSettings settings;
    settings.ranks = RankPolicy{RankPolicy::Kind::Exact, 2};
    ASSERT_TRUE(planMapping(costed, one, settings, o, error)) << error;
    EXPECT_EQ(cuts(o.ranks.rankOf), 0) << "costs " << costs << ": " << ::testing::PrintToString(o.ranks.rankOf);
  }
}

// One rank per instance: more instances than cores share the cores, each rank computing at
// cores / instances of one, whether its neighbours compute or wait.
TEST(CostModel, RanksBeyondCoresShareThem) {
  Cluster c;
  c.nodes = {node("small", 2)};
  const lang::Rtg rtg = rtgOf({vertex(0, "a", Requirement::CO, 4), vertex(1, "b", Requirement::CO, 1),
                               vertex(2, "c", Requirement::CO, 1), vertex(3, "d", Requirement::CO, 1)},
                              {});
  MappingProblem p;
  std::string error;
  ASSERT_TRUE(buildProblem(rtg, c, false, p, error)) << error;
  EXPECT_DOUBLE_EQ(evaluate(p, {0, 0, 0, 0}).score.period, 4.0);  // ranks grouped: max(4, 7 / 2)
  p.rankPerInstance = true;
  EXPECT_DOUBLE_EQ(evaluate(p, {0, 0, 0, 0}).score.period, 4.0 * 4 / 2);  // 4 ranks on 2 cores
}

}  // namespace
}  // namespace dispar::streammap
