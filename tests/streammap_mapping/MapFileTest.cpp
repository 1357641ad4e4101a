// Machinefile folding, Open MPI files, map.json round trip, CUDA architecture rules.
#include "streammap/MapFile.h"
#include "TestSupport.h"
#include "streammap/ClusterDigest.h"
#include "streammap/MapPlanner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace dispar::streammap {
namespace {

using lang::Requirement;
using namespace testing;

TEST(Machinefile, FoldsConsecutiveRanks) {
  EXPECT_EQ(formatMpichMachinefile({"a", "a", "b", "a", "c", "c", "c"}), "a:2\nb:1\na:1\nc:3\n");
  EXPECT_EQ(formatMpichMachinefile({"x"}), "x:1\n");
  EXPECT_EQ(formatMpichMachinefile({}), "");
}

TEST(Machinefile, OpenMpiHostfileAndRankfile) {
  EXPECT_EQ(formatOpenMpiHostfile({"a", "b", "a"}), "a slots=2\nb slots=1\n");
  EXPECT_EQ(formatOpenMpiRankfile({"a", "b", "a", "a"}, {2, 4, 2, 2}),
            "rank 0=a slot=0\nrank 1=b slot=0\nrank 2=a slot=1\nrank 3=a slot=0\n");
}

TEST(Machinefile, SiblingPaths) {
  EXPECT_EQ(siblingPath("out/app.machinefile", ".map.json"), "out/app.map.json");
  EXPECT_EQ(siblingPath("app", ".map.json"), "app.map.json");
  EXPECT_EQ(siblingPath("dir.d/app", ".rankfile"), "dir.d/app.rankfile");
}

TEST(MapJson, RoundTrip) {
  lang::Rtg rtg = rtgOf({vertex(0, "src", Requirement::CO), vertex(1, "fir", Requirement::CG, 2.0)}, {edge(0, 1)});
  rtg.vertices[1].memory = 1024;
  rtg.cudaArchs = {"sm_80", "compute_90"};
  const Cluster cluster = paperCluster();
  MappingOutcome outcome;
  MapSettings settings;
  settings.seed = 5;
  std::string error;
  ASSERT_TRUE(planMapping(rtg, cluster, settings, outcome, error)) << error;
  MapRecord record = makeMapRecord(rtg, cluster, outcome, settings);
  record.rtgPath = "app.rtg.json";
  record.machinefile = "app.machinefile";
  record.source.kind = ClusterSource::Kind::File;
  record.source.path = "cluster.json";
  const std::string text = writeMapJson(record);
  MapRecord back;
  ASSERT_TRUE(parseMapJson(text, back, error)) << error;
  EXPECT_EQ(writeMapJson(back), text);
  EXPECT_EQ(back.ranks.size(), 2u);
  EXPECT_EQ(back.ranks[1].mode, "gpu");
  ASSERT_TRUE(back.ranks[1].device.has_value());
  EXPECT_EQ(back.ranks[1].memory, std::optional<std::uint64_t>(1024));
  EXPECT_FALSE(back.ranks[0].device.has_value());
  EXPECT_EQ(back.seed, std::optional<std::uint64_t>(5));
  EXPECT_EQ(back.clusterDigest, clusterDigest(cluster));
  EXPECT_EQ(clusterDigest(back.cluster), record.clusterDigest);
  EXPECT_EQ(back.cudaArchs, rtg.cudaArchs);

  EXPECT_FALSE(parseMapJson("{\"format\": \"dispar-map\", \"version\": 9}", back, error));
  EXPECT_NE(error.find("unsupported version 9"), std::string::npos) << error;
  EXPECT_FALSE(parseMapJson("{\"format\": \"dispar-map\", \"version\": 1}", back, error));
  EXPECT_NE(error.find("map.program"), std::string::npos) << error;
}

MapRecord plannedRecord() {
  lang::Rtg rtg = rtgOf({vertex(0, "src", Requirement::CO), vertex(1, "fir", Requirement::CG, 2.0)}, {edge(0, 1)});
  MappingOutcome outcome;
  std::string error;
  EXPECT_TRUE(planMapping(rtg, paperCluster(), MapSettings{}, outcome, error)) << error;
  return makeMapRecord(rtg, paperCluster(), outcome, MapSettings{});
}

std::string mapParseError(const std::string& text) {
  MapRecord back;
  std::string error;
  EXPECT_FALSE(parseMapJson(text, back, error));
  return error;
}

// The writer never writes inf or nan (JSON has neither): null, which the reader refuses by name.
TEST(MapJson, NonFiniteNumbersAreNeverWritten) {
  MapRecord record = plannedRecord();
  record.period = std::numeric_limits<double>::infinity();
  record.ranks[1].time = std::nan("");
  const std::string text = writeMapJson(record);
  EXPECT_EQ(text.find("inf"), std::string::npos) << text;
  EXPECT_EQ(text.find("nan"), std::string::npos) << text;
  EXPECT_EQ(mapParseError(text), "map.predicted.period: expected a number, got null");
}

TEST(MapJson, NumbersAreCheckedAndNamed) {
  const std::string text = writeMapJson(plannedRecord());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string changed = text;
    const std::size_t at = changed.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) changed.replace(at, from.size(), to);
    return changed;
  };
  EXPECT_EQ(mapParseError(with("\"cross_bytes\": ", "\"cross_bytes\": 1e999, \"x\": ")),
            "map.predicted.cross_bytes: number out of range, got 1e999");
  EXPECT_EQ(mapParseError(with("\"time\": ", "\"time\": -2e308, \"x\": ")),
            "map.ranks[0].time: number out of range, got -2e308");
  EXPECT_EQ(mapParseError(with("\"time\": ", "\"time\": -1, \"x\": ")),
            "map.ranks[0].time: must not be negative, got -1");
  EXPECT_EQ(mapParseError(with("\"replica\": 0", "\"replica\": 0.5")),
            "map.ranks[0].replica: expected an integer, got 0.5");
  EXPECT_EQ(mapParseError(with("\"device\": 0", "\"device\": 1e23")),
            "map.ranks[1].device: must be at most 2147483647, got 1e+23");
  EXPECT_EQ(mapParseError(with("\"seed\": null", "\"seed\": -3")), "map.seed: must be at least 0, got -3");
  EXPECT_EQ(mapParseError(with("\"ttl_seconds\": 0", "\"ttl_seconds\": \"0\"")),
            "map.cluster_source.ttl_seconds: expected an integer, got \"0\"");
  EXPECT_EQ(mapParseError(with("\"mode\": \"gpu\"", "\"mode\": \"fast\"")),
            "map.ranks[1].mode: expected \"gpu\" or \"cpu\" or \"host-fallback\", got \"fast\"");
  EXPECT_EQ(mapParseError(with("\"cores\": 2", "\"cores\": 1e999")),
            "map.cluster.nodes[0].cpu.cores: number out of range, got 1e999");
  EXPECT_EQ(mapParseError("[]"), "map: expected an object, got an array");
}

TEST(MapPlanner, RefusesPredictionsThatOverflow) {
  lang::Rtg rtg = rtgOf({vertex(0, "a", Requirement::CO, 1e308), vertex(1, "b", Requirement::CO, 1e308)}, {edge(0, 1)});
  MappingOutcome outcome;
  std::string error;
  EXPECT_FALSE(planMapping(rtg, paperCluster(), MapSettings{}, outcome, error));
  EXPECT_EQ(
      error.rfind("costs too large: the vertices' costs add up to more than the largest double (1.79769e+308)", 0), 0u)
      << error;
  // One cost near the limit still maps: every prediction is finite.
  rtg.vertices[1].cost = 1.0;
  ASSERT_TRUE(planMapping(rtg, paperCluster(), MapSettings{}, outcome, error)) << error;
  MapRecord back;
  ASSERT_TRUE(parseMapJson(writeMapJson(makeMapRecord(rtg, paperCluster(), outcome, MapSettings{})), back, error))
      << error;
  EXPECT_DOUBLE_EQ(back.period, 1e308);
  // Edges carrying more bytes than a double's range allows over a slow network.
  rtg.vertices[0].cost = 1.0;
  Cluster slow = paperCluster();
  slow.nodes[0].bandwidthBytesPerSec = 1e-300;
  rtg.edges[0].volume = std::numeric_limits<std::uint64_t>::max();
  EXPECT_FALSE(planMapping(rtg, slow, MapSettings{}, outcome, error));
  EXPECT_NE(error.find("volumes too large"), std::string::npos) << error;
}

TEST(MapJson, OpenMpiProgramsSlurmHostfileAndNoPassword) {
  lang::Rtg rtg = rtgOf({vertex(0, "src", Requirement::CO), vertex(1, "sink", Requirement::CO)}, {edge(0, 1)});
  rtg.mpi = "openmpi";
  const Cluster cluster = paperCluster();
  MappingOutcome outcome;
  std::string error;
  ASSERT_TRUE(planMapping(rtg, cluster, MapSettings{}, outcome, error)) << error;
  MapRecord record = makeMapRecord(rtg, cluster, outcome, MapSettings{});
  record.source.kind = ClusterSource::Kind::Database;
  record.source.path = "postgresql://dispar:s3cret@db.cluster/resources?sslmode=require";
  const std::string text = writeMapJson(record);
  EXPECT_EQ(text.find("s3cret"), std::string::npos) << text;
  MapRecord back;
  ASSERT_TRUE(parseMapJson(text, back, error)) << error;
  EXPECT_EQ(back.source.path, "postgresql://dispar@db.cluster/resources?sslmode=require");
  EXPECT_EQ(back.mpi, "openmpi");
  EXPECT_EQ(formatSlurmHostfile({"gpu1", "cpu1", "gpu1"}), "gpu1\ncpu1\ngpu1\n");
}

TEST(ClusterDigest, IgnoresHeartbeatsAndNamesChanges) {
  Cluster a = paperCluster();
  Cluster b = a;
  b.nodes[0].lastHeartbeat = 12345;
  b.nodes[0].source = RecordSource::Import;
  EXPECT_EQ(clusterDigest(a), clusterDigest(b));
  b.nodes[1].status = NodeStatus::Down;
  b.nodes[3].gpus.pop_back();
  EXPECT_NE(clusterDigest(a), clusterDigest(b));
  const std::vector<std::string> changes = describeClusterChanges(a, b);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0], "cpu2: up -> down");
  EXPECT_EQ(changes[1], "gpu2: gpu 1 (gpu-sm70) gone");
}

}  // namespace
}  // namespace dispar::streammap
