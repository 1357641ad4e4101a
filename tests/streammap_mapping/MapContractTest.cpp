// app.map.json is written by streammap and read by every GPU rank of the generated program
// (dispar::gpu::parseMapFile, which reads only what a running rank needs). This test keeps the two sides
// of that contract in step: whatever `streammap map` writes, the runtime reads rank for rank.
#include "TestSupport.h"
#include "streammap/MapFile.h"
#include "streammap/MapPlanner.h"

#include <dispar/gpu/MapFile.h>

#include <gtest/gtest.h>

#include <algorithm>

namespace dispar::streammap {
namespace {

using lang::Requirement;
using namespace testing;

// `mode` must appear among the written ranks, so each case exercises what it is about.
void expectRuntimeReadsWhatStreammapWrote(const lang::Rtg& rtg, const Cluster& cluster, const MapSettings& settings,
                                          const std::string& mode) {
  MappingOutcome outcome;
  std::string error;
  ASSERT_TRUE(planMapping(rtg, cluster, settings, outcome, error)) << error;
  const MapRecord record = makeMapRecord(rtg, cluster, outcome, settings);
  bool modeWritten = false;
  for (const RankRecord& r : record.ranks) modeWritten = modeWritten || r.mode == mode;
  EXPECT_TRUE(modeWritten) << "no rank in mode " << mode;
  const gpu::MapFile read = gpu::parseMapFile(writeMapJson(record), "app.map.json");
  // Entry for entry (one per instance, by rank): the same instances in the same ranks.
  ASSERT_EQ(read.ranks.size(), record.ranks.size());
  for (std::size_t i = 0; i < record.ranks.size(); ++i) {
    const RankRecord& written = record.ranks[i];
    const gpu::MappedRank* rank = &read.ranks[i];
    EXPECT_EQ(rank->rank, written.rank);
    EXPECT_EQ(rank->vnode, written.vnode);
    EXPECT_EQ(rank->replica, written.replica);
    EXPECT_EQ(rank->type, written.type);
    EXPECT_EQ(rank->host, written.host);
    EXPECT_EQ(rank->device, written.device);
    EXPECT_EQ(rank->mode, written.mode);
  }
}

TEST(MapContract, GpuAndCpuRanks) {
  lang::Rtg rtg = rtgOf({vertex(0, "src", Requirement::CO), vertex(1, "fir", Requirement::CG, 4.0),
                         vertex(2, "fir", Requirement::CG, 4.0), vertex(3, "fir", Requirement::CG, 4.0),
                         vertex(4, "sink", Requirement::CO)},
                        {edge(0, 1), edge(0, 2), edge(0, 3), edge(1, 4), edge(2, 4), edge(3, 4)});
  expectRuntimeReadsWhatStreammapWrote(rtg, paperCluster(), MapSettings{}, "gpu");
}

TEST(MapContract, HostFallbackRanks) {
  lang::Rtg rtg = rtgOf({vertex(0, "src", Requirement::CO), vertex(1, "fir", Requirement::CG)}, {edge(0, 1)});
  Cluster cpuOnly;
  cpuOnly.nodes = {node("a", 2), node("b", 2)};
  MapSettings settings;
  settings.allowHostFallback = true;
  expectRuntimeReadsWhatStreammapWrote(rtg, cpuOnly, settings, "host-fallback");
}

// Many CG vertices, one slow GPU and CPU-only nodes with many cores: mapped without host fallback
// (the default), every CG vertex waits for the one GPU; the mapper says how much host fallback would
// gain, with the figures. Where fallback would not pay, it says nothing.
TEST(MapPlanner, AdvisesHostFallbackWhereItPays) {
  std::vector<lang::RtgVertex> vertices;
  for (int v = 0; v < 8; ++v) vertices.push_back(vertex(v, "work", Requirement::CG, 4.0));
  const lang::Rtg rtg = rtgOf(vertices, {});
  GpuInfo slow = v100(0);
  slow.measuredRate = 0.01;  // its work takes 100 times as long on a core's host path: 0.01 is a fair fight
  Cluster c;
  c.nodes = {node("gpu", 8, {slow}), node("cpu1", 16), node("cpu2", 16)};
  MappingOutcome outcome;
  std::string error;
  ASSERT_TRUE(planMapping(rtg, c, MapSettings{}, outcome, error)) << error;
  ASSERT_EQ(outcome.warnings.size(), 1u);
  EXPECT_EQ(
      outcome.warnings[0].rfind("note: with --allow-host-fallback the predicted period would be 400 instead of 3200, "
                                "running ",
                                0),
      0u)
      << outcome.warnings[0];

  Cluster fast = c;
  fast.nodes[0].gpus[0].measuredRate = 100.0;
  MappingOutcome quiet;
  ASSERT_TRUE(planMapping(rtg, fast, MapSettings{}, quiet, error)) << error;
  EXPECT_TRUE(quiet.warnings.empty());
}

// A remap for moved costs (streammap run, MapSettings::previous) keeps the mapping it would replace
// unless the new one's predicted period is at least kRemapGain shorter: near-tied mappings no longer
// flip between runs whose measured costs move a little.
TEST(MapPlanner, AMappingForMovedCostsKeepsThePreviousUnlessItGainsFivePercent) {
  const lang::Rtg rtg = rtgOf({vertex(0, "a", Requirement::CO, 1.0), vertex(1, "b", Requirement::CO, 1.02)}, {});
  Cluster c;
  c.nodes = {node("n1", 1), node("n2", 1)};
  std::string error;
  const auto hostsOf = [&](const MappingOutcome& o) {
    std::string hosts;
    for (const RankRecord& r : makeMapRecord(rtg, c, o, MapSettings{}).ranks) hosts += r.vnode + "@" + r.host + " ";
    return hosts;
  };
  const auto previous = [](const char* hostOfA, const char* hostOfB) {
    std::vector<lang::MapRank> ranks(2);
    ranks[0].rank = 0, ranks[0].vnode = "a", ranks[0].host = hostOfA, ranks[0].mode = "cpu";
    ranks[1].rank = 1, ranks[1].vnode = "b", ranks[1].host = hostOfB, ranks[1].mode = "cpu";
    return ranks;
  };
  MappingOutcome fresh;
  ASSERT_TRUE(planMapping(rtg, c, MapSettings{}, fresh, error)) << error;
  const std::string freshHosts = hostsOf(fresh);
  // The other way round is as good (each on a core of its own): kept.
  const std::vector<lang::MapRank> swapped = freshHosts == "a@n1 b@n2 " ? previous("n2", "n1") : previous("n1", "n2");
  MapSettings settings;
  settings.previous = &swapped;
  MappingOutcome kept;
  ASSERT_TRUE(planMapping(rtg, c, settings, kept, error)) << error;
  EXPECT_NE(hostsOf(kept), freshHosts);
  EXPECT_EQ(kept.result.placements[0].rule, PlacementRule::PreviousKept);
  EXPECT_DOUBLE_EQ(kept.evaluation.score.period, fresh.evaluation.score.period);
  // Both on one core (period 2.02 against 1.02): replaced.
  const std::vector<lang::MapRank> crowded = previous("n1", "n1");
  settings.previous = &crowded;
  MappingOutcome replaced;
  ASSERT_TRUE(planMapping(rtg, c, settings, replaced, error)) << error;
  EXPECT_EQ(hostsOf(replaced), freshHosts);
  // A previous mapping of other instances or hosts is no mapping to keep.
  const std::vector<lang::MapRank> elsewhere = previous("n1", "gone");
  settings.previous = &elsewhere;
  MappingOutcome remapped;
  ASSERT_TRUE(planMapping(rtg, c, settings, remapped, error)) << error;
  EXPECT_EQ(hostsOf(remapped), freshHosts);
}

// A pipe of the default round robin whose reader replicas the mapping puts where their predicted times
// differ by more than 1.5x is dealt on demand: the mapping says so, writes it, and the runtime reads it.
// Nodes of one core: fast (speed 1.6), slow (1.0), io (1.0); source -> p -> work x2 (cost 10) -> sink.
// Both workers on fast would take 12.5 a message, one on each 10: they go to fast and slow.
TEST(MapPlanner, ADefaultRoundRobinToUnequalReplicasIsDealtOnDemand) {
  const auto program = [](bool mayDealOnDemand) {
    lang::Rtg rtg = rtgOf({vertex(0, "source", Requirement::CO), vertex(1, "work", Requirement::CO, 10),
                           vertex(2, "work", Requirement::CO, 10), vertex(3, "sink", Requirement::CO)},
                          {edge(0, 1), edge(0, 2), edge(1, 3), edge(2, 3)});
    rtg.vertices[1].replicas = rtg.vertices[2].replicas = 2;
    rtg.vertices[2].replica = 1;
    for (lang::RtgEdge& e : rtg.edges) {
      e.pipe = e.from == 0 ? "p" : "q";
      e.mayDealOnDemand = mayDealOnDemand && e.from == 0;
    }
    return rtg;
  };
  const auto cluster = [](double fastSpeed) {
    Cluster c;
    c.nodes = {node("fast", 1, {}, fastSpeed), node("io", 1), node("slow", 1)};
    return c;
  };
  MappingOutcome o;
  std::string error;
  ASSERT_TRUE(planMapping(program(true), cluster(1.6), MapSettings{}, o, error)) << error;
  ASSERT_NE(o.result.nodeOf[1], o.result.nodeOf[2]) << "the workers share a node";
  EXPECT_EQ(o.demandPipes, std::vector<std::string>{"p"});
  const std::string note = "note: pipe 'p' is dealt on demand: its reader replicas' predicted times differ 1.6x (work[";
  EXPECT_TRUE(std::any_of(o.warnings.begin(), o.warnings.end(), [&](const std::string& w) {
    return w.rfind(note, 0) == 0;
  })) << ::testing::PrintToString(o.warnings);
  const MapRecord record = makeMapRecord(program(true), cluster(1.6), o, MapSettings{});
  MapRecord back;
  ASSERT_TRUE(parseMapJson(writeMapJson(record), back, error)) << error;
  EXPECT_EQ(back.demandPipes, std::vector<std::string>{"p"});
  EXPECT_EQ(gpu::parseMapFile(writeMapJson(record), "app.map.json").demandPipes, std::vector<std::string>{"p"});
  // Equal nodes: round robin paces nothing; a split clause (no mark in the RTG): the source decides.
  ASSERT_TRUE(planMapping(program(true), cluster(1.0), MapSettings{}, o, error)) << error;
  EXPECT_TRUE(o.demandPipes.empty());
  ASSERT_TRUE(planMapping(program(false), cluster(1.6), MapSettings{}, o, error)) << error;
  EXPECT_TRUE(o.demandPipes.empty());
  EXPECT_EQ(writeMapJson(makeMapRecord(program(false), cluster(1.6), o, MapSettings{})).find("demand_pipes"),
            std::string::npos);
  // Where round robin packs both workers on the fastest node (one core at speed 4: 20 / 4 = 5 a message),
  // dealing on demand over it and a slow one takes 2 / (1/2.5 + 1/10) = 4 each (the fast one's share
  // 16, the slow one's 4): refine spreads them, and places source and sink around them again, on the
  // third node.
  ASSERT_TRUE(planMapping(program(true), cluster(4.0), MapSettings{}, o, error)) << error;
  EXPECT_NE(o.result.nodeOf[1], o.result.nodeOf[2]) << "the workers were left on one node";
  EXPECT_EQ(o.demandPipes, std::vector<std::string>{"p"});
  EXPECT_NEAR(o.evaluation.score.period, 4.0, 1e-9);
  // The readers refuse a malformed list by name.
  std::string text = writeMapJson(record);
  const std::size_t list = text.find("\"demand_pipes\"");
  ASSERT_NE(list, std::string::npos) << text;
  text.replace(text.find("\"p\"", list), 3, "3");
  EXPECT_FALSE(parseMapJson(text, back, error));
  EXPECT_EQ(error, "map.demand_pipes[0]: expected a pipe name, got 3");
}

// A reader dealt on demand carries its share of the stream's bytes, not the whole stream (bench/cluster:
// paper's mapping of examples/fanout put a dealt replica behind a slow link, round-robin's a single
// reader, and the model priced both the same where paper's ran 1.5x faster). Round-robin over a (source
// and sink), b (speed 3) and c (speed 1, a 1 MB/s link): work[0] on b, work[1] on c, times 10/3 and 10,
// shares 1.5 and 0.5; c's link carries half of the 10000-byte messages of a round-robin turn.
TEST(MapPlanner, AReplicaDealtOnDemandCarriesItsShareOfTheBytes) {
  lang::Rtg rtg = rtgOf({vertex(0, "source", Requirement::CO), vertex(1, "work", Requirement::CO, 10),
                         vertex(2, "work", Requirement::CO, 10), vertex(3, "sink", Requirement::CO)},
                        {edge(0, 1, 10000), edge(0, 2, 10000), edge(1, 3, 8), edge(2, 3, 8)});
  rtg.vertices[1].replicas = rtg.vertices[2].replicas = 2;
  rtg.vertices[2].replica = 1;
  for (lang::RtgEdge& e : rtg.edges) {
    e.pipe = e.from == 0 ? "p" : "q";
    e.mayDealOnDemand = e.from == 0;
  }
  Cluster cluster;
  cluster.nodes = {node("a", 1), node("b", 1, {}, 3.0), node("c", 1)};
  cluster.nodes[2].bandwidthBytesPerSec = 1e6;
  MapSettings settings;
  settings.algorithm = Algorithm::RoundRobin;
  MappingOutcome o;
  std::string error;
  ASSERT_TRUE(planMapping(rtg, cluster, settings, o, error)) << error;
  ASSERT_EQ(o.result.nodeOf, (std::vector<int>{0, 1, 2, 0}));
  ASSERT_EQ(o.demandPipes, std::vector<std::string>{"p"});
  const NodeCost& c = o.evaluation.nodes[2];
  EXPECT_NEAR(c.net, (0.5 * 10000 + 0.5 * 8) / 1e6, 2e-4) << "the whole stream would be 0.01";
  EXPECT_NEAR(c.cpu, 0.5 * 10, 1e-9);
}

}  // namespace
}  // namespace dispar::streammap
