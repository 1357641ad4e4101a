// examples/split/hotspot.dsp end to end: a GPU vnode whose stencil steps are shared between the kernel
// (on the host path here) and the CPU cores by split_for; its grid must equal the CPU-only and GPU-only
// runs of the same steps, and the run profile must carry the loop's learned rates. The RTG marks the
// vnode as using its node's cores.
#include "CudaTestSettings.h"
#include "Process.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

namespace dispar::testing {
namespace {

TEST(SplitExample, HotspotSplitEqualsSingleUnitRuns) {
  ScratchDir dir;
  dir.write("hotspot.dsp", readFile(kSourceDir + "/examples/split/hotspot.dsp"));
  std::vector<std::string> args = {kDisparcc, "hotspot.dsp", "-o", "hotspot"};
  if (kHaveCuda) args.insert(args.end(), {"--cuda-arch", "sm_90"});
  ProcessResult built = runProcess(args, dir.path(), {}, 300);
  ASSERT_EQ(built.status, 0) << built.output;
  EXPECT_NE(readFile(dir.file("hotspot.rtg.json")).find("\"node_cores\": true"), std::string::npos);
  // Two CPU worker threads beside the GPU's, so that both units run however many cores CI has.
  ProcessResult run = runProcess({kMpiexec, "-launcher", "fork", "-n", "3", "./hotspot", "256", "8"}, dir.path(),
                                 {"DISPAR_SPLIT_CPU_THREADS=2", "DISPAR_PROFILE=" + dir.file("profile.json")});
  ASSERT_EQ(run.status, 0) << run.output;
  // The run profile carries the rates split_for learned at the loop's call site (docs/split.md).
  const std::string profile = readFile(dir.file("profile.json"));
  std::smatch site;
  ASSERT_TRUE(
      std::regex_search(profile, site,
                        std::regex("\"site\": \"[^\"]*hotspot.dsp:[0-9]+#2\",\\s*\"gpu_rate\": ([0-9.e+-]+),\\s*"
                                   "\"cpu_thread_rate\": ([0-9.e+-]+)")))
      << profile;
  // Which units took part depends on timing (on a loaded machine the CPU threads can take every row of
  // a short step before the GPU's thread asks): at least one did, and the grids above are exact.
  EXPECT_GT(std::stod(site[1]) + std::stod(site[2]), 0) << profile;
  EXPECT_NE(run.output.find("hotspot: split vs cpu-only max difference 0, vs gpu-only 0\n"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("hotspot: last step: cpu share "), std::string::npos) << run.output;
}

}  // namespace
}  // namespace dispar::testing
