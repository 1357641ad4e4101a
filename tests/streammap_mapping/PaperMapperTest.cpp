// The paper's algorithm on hand-worked cases (background.md section 1, docs/streammap.md, "Mapping").
#include "streammap/PaperMapper.h"
#include "TestSupport.h"
#include "streammap/MappingProblem.h"

#include <gtest/gtest.h>

namespace dispar::streammap {
namespace {

using lang::Requirement;
using namespace testing;

std::vector<std::string> hostsOf(const MappingProblem& p, const MappingResult& r) {
  std::vector<std::string> hosts;
  for (int n : r.nodeOf) hosts.push_back(p.nodes[n].host);
  return hosts;
}

MappingResult runPaper(const lang::Rtg& rtg, const Cluster& cluster, MappingProblem& p, PaperOptions options = {}) {
  std::string error;
  EXPECT_TRUE(buildProblem(rtg, cluster, false, p, error)) << error;
  return mapPaper(p, options);
}

TEST(PaperMapper, TablesAreMostCapableFirst) {
  MappingProblem p;
  std::string error;
  ASSERT_TRUE(buildProblem(rtgOf({vertex(0, "a", Requirement::CO)}, {}), paperCluster(), false, p, error));
  const ResourceTables t = buildResourceTables(p);
  // Problem nodes are in host order: cpu1=0, cpu2=1, gpu1=2, gpu2=3.
  EXPECT_EQ(t.crt, (std::vector<int>{1, 0}));  // cpu2 (4 cores) before cpu1 (2)
  EXPECT_EQ(t.grt, (std::vector<int>{3, 2}));  // gpu2 (2 x 0.804) before gpu1 (1 x 1.0)
  EXPECT_EQ(t.total, (std::vector<long>{2, 4, 1, 2}));
}

// src(CO) -> fir(CG) -> fft(CG) -> sink(CO).
// Start: vertex 0 (the only source). Walk 0,1,2,3 (each the next one's only unassigned neighbour).
//   0 CO: CRT pointer cpu2 (4 -> 3 free)      1 CG: GRT pointer gpu2 (2 -> 1)
//   2 CG: GRT pointer gpu2 (1 -> 0; pointer moves to gpu1)    3 CO: CRT pointer cpu2 (3 -> 2)
TEST(PaperMapper, Pipeline) {
  MappingProblem p;
  const MappingResult r = runPaper(rtgOf({vertex(0, "src", Requirement::CO), vertex(1, "fir", Requirement::CG),
                                          vertex(2, "fft", Requirement::CG), vertex(3, "sink", Requirement::CO)},
                                         {edge(0, 1), edge(1, 2), edge(2, 3)}),
                                   paperCluster(), p);
  EXPECT_EQ(hostsOf(p, r), (std::vector<std::string>{"cpu2", "gpu2", "gpu2", "cpu2"}));
  EXPECT_EQ(r.visitOrder, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(r.placements[0].rule, PlacementRule::CrtPointer);
  EXPECT_EQ(r.placements[1].rule, PlacementRule::GrtPointer);
  EXPECT_EQ(r.oversubscribed, 0);
}

// split(CO 0) -> w1, w2, w3 (CG 1..3) -> join(CO 4).
// Walk: 0 -> its lowest unassigned neighbour 1 -> 1's: 4 -> 4's: 2 -> 2 has none left -> step 7's
// "random" (no seed: the lowest unassigned) 3. Visit order 0, 1, 4, 2, 3.
//   0 CO: cpu2 (4 -> 3)   1 CG: gpu2 (2 -> 1)   4 CO: cpu2 (3 -> 2)
//   2 CG: gpu2 (1 -> 0, pointer -> gpu1)   3 CG: gpu1 (1 -> 0, pointer -> NULL)
TEST(PaperMapper, SplitJoin) {
  MappingProblem p;
  const MappingResult r = runPaper(rtgOf({vertex(0, "split", Requirement::CO), vertex(1, "w", Requirement::CG, 1, 0),
                                          vertex(2, "w", Requirement::CG, 1, 1), vertex(3, "w", Requirement::CG, 1, 2),
                                          vertex(4, "join", Requirement::CO)},
                                         {edge(0, 1), edge(0, 2), edge(0, 3), edge(1, 4), edge(2, 4), edge(3, 4)}),
                                   paperCluster(), p);
  EXPECT_EQ(r.visitOrder, (std::vector<int>{0, 1, 4, 2, 3}));
  EXPECT_EQ(hostsOf(p, r), (std::vector<std::string>{"cpu2", "gpu2", "gpu2", "gpu1", "cpu2"}));
}

// src(CO 0) -> k1..k5 (CG 1..5, a chain) -> sink(CO 6); plus an isolated CG vertex 7.
// GPU slots: gpu2 2, gpu1 1. Walk 0..7 in order (7 reached by step 7: lowest unassigned).
//   0: cpu2. 1, 2: gpu2 (full, pointer -> gpu1). 3: gpu1 (full, GRT pointer NULL).
//   4: step 5, adjacent CG vertex 3 is on gpu1 -> gpu1. 5: step 5, adjacent CG 4 -> gpu1.
//   6 CO: CRT pointer still cpu2 (3 free) -> cpu2.
//   7 CG: GRT NULL, no adjacent vertex -> step 6, least-loaded GPU node: gpu2 2/2 = 1.0 < gpu1 3/1 -> gpu2.
// Oversubscribed by 3 (vertices 4, 5, 7).
TEST(PaperMapper, GpuHeavyOversubscribes) {
  MappingProblem p;
  std::vector<lang::RtgVertex> vs = {vertex(0, "src", Requirement::CO)};
  for (int i = 1; i <= 5; ++i) vs.push_back(vertex(i, "k", Requirement::CG, 1, i - 1));
  vs.push_back(vertex(6, "sink", Requirement::CO));
  vs.push_back(vertex(7, "lone", Requirement::CG));
  std::vector<lang::RtgEdge> es;
  for (int i = 0; i < 6; ++i) es.push_back(edge(i, i + 1));
  const MappingResult r = runPaper(rtgOf(vs, es), paperCluster(), p);
  EXPECT_EQ(hostsOf(p, r), (std::vector<std::string>{"cpu2", "gpu2", "gpu2", "gpu1", "gpu1", "gpu1", "cpu2", "gpu2"}));
  EXPECT_EQ(r.placements[4].rule, PlacementRule::AdjacentCg);
  EXPECT_EQ(r.placements[4].viaVertex, 3);
  EXPECT_EQ(r.placements[7].rule, PlacementRule::LeastLoadedGpu);
  EXPECT_EQ(r.placements[7].runnerUp, 2);  // gpu1
  EXPECT_EQ(r.oversubscribed, 3);
  EXPECT_EQ(r.slots, 2 + 4 + 1 + 2);
}

// Step 4 falls back to step 3: CRT = [cpu1 (2 cores)], GRT = [gpu1 (1 pair)].
// Chain of four CO vertices: 0, 1 -> cpu1 (full); 2 -> GRT gpu1 (full); 3 -> step 5, adjacent 2 -> gpu1.
TEST(PaperMapper, CoFallsBackToGrtThenAdjacent) {
  Cluster c;
  c.nodes = {node("cpu1", 2), node("gpu1", 8, {a100(0)})};
  MappingProblem p;
  const MappingResult r = runPaper(rtgOf({vertex(0, "a", Requirement::CO), vertex(1, "b", Requirement::CO),
                                          vertex(2, "c", Requirement::CO), vertex(3, "d", Requirement::CO)},
                                         {edge(0, 1), edge(1, 2), edge(2, 3)}),
                                   c, p);
  EXPECT_EQ(hostsOf(p, r), (std::vector<std::string>{"cpu1", "cpu1", "gpu1", "gpu1"}));
  EXPECT_EQ(r.placements[2].rule, PlacementRule::GrtForCo);
  EXPECT_EQ(r.placements[3].rule, PlacementRule::AdjacentAny);
  EXPECT_EQ(r.placements[3].viaVertex, 2);
}

// Start vertex: the first source in rank order, here 1 (0 has an incoming arc from 2).
TEST(PaperMapper, StartIsFirstSource) {
  MappingProblem p;
  std::string error;
  ASSERT_TRUE(buildProblem(
      rtgOf({vertex(0, "a", Requirement::CO), vertex(1, "b", Requirement::CO), vertex(2, "c", Requirement::CO)},
            {edge(1, 2), edge(2, 0)}),
      paperCluster(), false, p, error));
  EXPECT_EQ(paperStartVertex(p), 1);
  EXPECT_EQ(mapPaper(p, {}).visitOrder, (std::vector<int>{1, 2, 0}));
}

// With a seed, step 7 draws; the same seed gives the same mapping.
TEST(PaperMapper, SeededRandomStepIsDeterministic) {
  std::vector<lang::RtgVertex> vs;
  for (int i = 0; i < 40; ++i) vs.push_back(vertex(i, "v", i % 3 ? Requirement::CO : Requirement::CG));
  MappingProblem p;
  std::string error;
  ASSERT_TRUE(buildProblem(rtgOf(vs, {}), paperCluster(), false, p, error));
  PaperOptions seeded;
  seeded.seed = 7;
  const MappingResult a = mapPaper(p, seeded), b = mapPaper(p, seeded);
  EXPECT_EQ(a.visitOrder, b.visitOrder);
  EXPECT_EQ(a.nodeOf, b.nodeOf);
  seeded.seed = 8;
  EXPECT_NE(mapPaper(p, seeded).visitOrder, a.visitOrder);
  std::vector<int> inOrder(40);
  for (int i = 0; i < 40; ++i) inOrder[i] = i;
  EXPECT_EQ(mapPaper(p, {}).visitOrder, inOrder);  // no seed: lowest unassigned
}

TEST(PaperMapper, HostFallbackTreatsCgAsCo) {
  Cluster c;
  c.nodes = {node("cpu1", 2)};
  MappingProblem p;
  std::string error;
  const lang::Rtg rtg = rtgOf({vertex(0, "a", Requirement::CG)}, {});
  // A cluster with no GPU at all falls back by itself (the demo, CI, a laptop)...
  ASSERT_TRUE(buildProblem(rtg, c, false, p, error)) << error;
  EXPECT_TRUE(p.allowHostFallback);
  EXPECT_TRUE(p.hostFallbackForNoGpu);
  // ... one whose GPUs are all down needs the flag.
  Cluster gpusDown = c;
  gpusDown.nodes.push_back(node("gpu1", 2, {a100(0)}));
  gpusDown.nodes.back().status = NodeStatus::Down;
  EXPECT_FALSE(buildProblem(rtg, gpusDown, false, p, error));
  ASSERT_TRUE(buildProblem(rtg, c, true, p, error)) << error;
  EXPECT_FALSE(p.hostFallbackForNoGpu);
  const MappingResult r = mapPaper(p, {});
  EXPECT_EQ(r.nodeOf[0], 0);
  EXPECT_EQ(r.placements[0].rule, PlacementRule::CrtPointer);
}

}  // namespace
}  // namespace dispar::streammap
