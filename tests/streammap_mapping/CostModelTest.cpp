// The cost model by hand, and the incremental evaluation against the from-scratch one.
#include "streammap/CostModel.h"
#include "TestSupport.h"
#include "streammap/GpuSpeed.h"
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
//   net(a) = 500 / 1000 = 0.5
//   gpu(b) = max(max(8,4)/4, (8+4)/2/4) = max(2, 1.5) = 2;  cpu(b) = max(3, 3/1) = 3
//   net(b) = 500 / 1.25e9
// Period 3 (cpu of b), crossing bytes 500.
TEST(CostModel, HandWorked) {
  Cluster c;
  NodeInfo a = node("a", 2, {}, 2.0);
  a.bandwidthBytesPerSec = 1000;
  GpuInfo g0 = v100(0), g1 = v100(1);
  g0.measuredRate = g1.measuredRate = 4.0;
  c.nodes = {a, node("b", 1, {g0, g1})};
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
  EXPECT_DOUBLE_EQ(e.nodes[0].net, 0.5);
  EXPECT_DOUBLE_EQ(e.nodes[1].gpu, 2.0);
  EXPECT_DOUBLE_EQ(e.nodes[1].cpu, 3.0);
  EXPECT_DOUBLE_EQ(e.nodes[1].net, 500 / 1.25e9);
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
