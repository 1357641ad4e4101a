// `check`: a changed cluster, a missing CUDA architecture, a GPU too small, a GPU of unknown model.
#include "streammap/MapCheck.h"
#include "TestSupport.h"
#include "streammap/MapPlanner.h"

#include <gtest/gtest.h>

namespace dispar::streammap {
namespace {

using lang::Requirement;
using namespace testing;

MapRecord mapped(const lang::Rtg& rtg, const Cluster& cluster) {
  MappingOutcome outcome;
  std::string error;
  EXPECT_TRUE(planMapping(rtg, cluster, MapSettings{}, outcome, error)) << error;
  return makeMapRecord(rtg, cluster, outcome, MapSettings{});
}

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

lang::Rtg gpuProgram() {
  lang::Rtg rtg = rtgOf({vertex(0, "src", Requirement::CO), vertex(1, "fir", Requirement::CG, 5.0)}, {edge(0, 1)});
  rtg.cudaArchs = {"sm_80"};
  return rtg;
}

Cluster oneGpuCluster() {
  Cluster c;
  c.nodes = {node("cpu1", 4), node("gpu1", 8, {a100(0)})};
  return c;
}

TEST(MapCheck, UnchangedIsOk) {
  const MapRecord record = mapped(gpuProgram(), oneGpuCluster());
  const CheckReport report = checkMapping(record, oneGpuCluster());
  EXPECT_TRUE(report.ok());
  EXPECT_TRUE(report.notes.empty());
}

TEST(MapCheck, DetectsNodeDownAndGpuGone) {
  const MapRecord record = mapped(gpuProgram(), oneGpuCluster());
  Cluster now = oneGpuCluster();
  now.nodes[1].gpus.clear();
  CheckReport report = checkMapping(record, now);
  EXPECT_FALSE(report.ok());
  EXPECT_TRUE(mentions(report.changes, "gpu1: gpu 0 (gpu-sm80) gone"));
  EXPECT_TRUE(mentions(report.problems, "rank 1 (fir[0]): gpu1 has no gpu 0"));

  now = oneGpuCluster();
  now.nodes[1].status = NodeStatus::Down;
  report = checkMapping(record, now);
  EXPECT_TRUE(mentions(report.changes, "gpu1: up -> down"));
  EXPECT_TRUE(mentions(report.problems, "host gpu1 is down"));

  now = oneGpuCluster();
  now.nodes.push_back(node("cpu9", 4));
  report = checkMapping(record, now);
  EXPECT_TRUE(mentions(report.changes, "cpu9: new (up)"));
  EXPECT_TRUE(report.problems.empty());
}

TEST(MapCheck, DetectsMissingArchitecture) {
  lang::Rtg rtg = gpuProgram();
  // Map never places GPU work on a GPU the binary cannot run on (binaryRunsOn): the binary was rebuilt
  // for sm_90 only after this mapping was made for its sm_80 build.
  MapRecord record = mapped(rtg, oneGpuCluster());
  record.cudaArchs = {"sm_90"};
  const CheckReport report = checkMapping(record, oneGpuCluster());
  EXPECT_TRUE(report.changes.empty());
  EXPECT_TRUE(mentions(report.problems, "none of the binary's CUDA architectures (sm_90) runs on gpu1 gpu 0"));
  rtg.cudaArchs = {"compute_70"};
  EXPECT_TRUE(checkMapping(mapped(rtg, oneGpuCluster()), oneGpuCluster()).ok());
  rtg.cudaArchs.clear();
  const CheckReport unknown = checkMapping(mapped(rtg, oneGpuCluster()), oneGpuCluster());
  EXPECT_TRUE(unknown.ok());
  EXPECT_TRUE(mentions(unknown.notes, "records no CUDA architectures"));
}

TEST(MapCheck, DetectsGpuTooSmall) {
  lang::Rtg rtg = gpuProgram();
  rtg.vertices[1].memory = 41ull << 30;  // the A100 has 40 GiB
  const CheckReport report = checkMapping(mapped(rtg, oneGpuCluster()), oneGpuCluster());
  EXPECT_TRUE(mentions(report.problems, "needs 44023414784 bytes of device memory"));
  // Two ranks of 30 GiB each fit one by one but not together on the one GPU.
  rtg = rtgOf({vertex(0, "k", Requirement::CG), vertex(1, "k", Requirement::CG, 1, 1)}, {});
  rtg.vertices[0].memory = rtg.vertices[1].memory = 30ull << 30;
  const CheckReport shared = checkMapping(mapped(rtg, oneGpuCluster()), oneGpuCluster());
  EXPECT_TRUE(mentions(shared.problems, "the instances mapped to it need 64424509440 bytes"));
}

TEST(MapCheck, GpuKnownOnlyByCountIsCheckedAtStartUp) {
  // Slurm's "gpu:2" without a model: no compute capability or memory on record. The mapping stands, with
  // a note, and the runtime checks the real device.
  lang::Rtg rtg = gpuProgram();
  rtg.vertices[1].memory = 1ull << 30;
  Cluster counted = oneGpuCluster();
  counted.nodes[1].gpus[0].ccMajor = counted.nodes[1].gpus[0].ccMinor = 0;
  counted.nodes[1].gpus[0].memoryBytes = 0;
  const CheckReport report = checkMapping(mapped(rtg, counted), counted);
  EXPECT_TRUE(report.ok());
  EXPECT_TRUE(mentions(report.notes, "gpu1 gpu 0: model unknown (no probe recorded it)"));
}

}  // namespace
}  // namespace dispar::streammap
