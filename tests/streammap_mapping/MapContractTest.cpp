// app.map.json is written by streammap and read by every GPU rank of the generated program
// (dispar::gpu::parseMapFile, which reads only what a running rank needs). This test keeps the two sides
// of that contract in step: whatever `streammap map` writes, the runtime reads rank for rank.
#include "TestSupport.h"
#include "streammap/MapFile.h"
#include "streammap/MapPlanner.h"

#include <dispar/gpu/MapFile.h>

#include <gtest/gtest.h>

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
  ASSERT_EQ(read.ranks.size(), record.ranks.size());
  for (const RankRecord& written : record.ranks) {
    const gpu::MappedRank* rank = read.rank(written.rank);
    ASSERT_NE(rank, nullptr) << "rank " << written.rank;
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

}  // namespace
}  // namespace dispar::streammap
