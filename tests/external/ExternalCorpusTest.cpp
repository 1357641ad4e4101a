// The external corpus: CUDA kernels written in the style of well-known public CUDA code (the CUDA
// samples, Rodinia, NVIDIA's CUDA Pro Tips), one .dsp each in this folder, compiled by the real disparcc
// and run under mpiexec. Every program checks its own results on a CPU vnode against an independent
// reference and prints `external <name>: ok ...`; a mismatch makes it exit non-zero.
//
// Each program is built twice: with the CUDA toolkit (nvcc, when the build found one; the kernels run on
// a GPU where the rank gets one and on the host path otherwise) and without it (DISPAR_CUDA_PATH naming
// no toolkit: a host-only build where every kernel runs on the host path).
#include "Process.h"

#include "dispar_lang/Rtg.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

namespace dispar::testing {
namespace {

const std::string kDisparcc = DISPARCC_PATH;
const std::string kMpiexec = MPIEXEC_PATH;
const std::string kSourceDir = DISPAR_SOURCE_DIR;
constexpr bool kHaveCuda = DISPAR_TEST_HAVE_CUDA;

// The corpus: tests/external/<name>.dsp. Keep in step with the files of this folder.
const std::vector<std::string> kCorpus = {
    "reduction",
    "histogram256",
    "transpose",
    "matrixmul",
    "scan",
    "bitonic",
    "convolution",
    "nw",
    "lud",
    "compaction",
    "cg_tiles",
    "nbody",
    "dotnorm",
    "bfs",
    "saxpy_vec",
    "blackscholes",
    "kmeans",
    "hotspot",
    "threadfence_reduction",
    "atomics",
    "streams",
    "legacy_warp",
    "launch_forms",
    "stream_hints",
    "grid_sync",
    "warp_aggregation",
    "dynamic_parallelism",
    "textures",
    "surfaces",
    "sobel_texture",
    "cooperative_scan",
    "cdp_mandelbrot",
    "box_filter_rgba",
};

// "toolkit": nvcc, for one architecture to keep the build short. "host_only": no toolkit at all.
std::vector<std::string> buildModes() {
  std::vector<std::string> modes;
  if (kHaveCuda) modes.push_back("toolkit");
  modes.push_back("host_only");
  return modes;
}

using CorpusCase = std::tuple<std::string, std::string>;  // program, build mode

class ExternalCorpus : public ::testing::TestWithParam<CorpusCase> {};

TEST_P(ExternalCorpus, BuildsRunsAndMatchesItsReference) {
  const std::string& name = std::get<0>(GetParam());
  const std::string& mode = std::get<1>(GetParam());
  ScratchDir dir;
  dir.write(name + ".dsp", readFile(kSourceDir + "/tests/external/" + name + ".dsp"));

  std::vector<std::string> compile = {kDisparcc, name + ".dsp", "-o", name};
  std::vector<std::string> env;
  if (mode == "toolkit")
    compile.insert(compile.end(), {"--cuda-arch", "sm_90"});
  else
    env.push_back("DISPAR_CUDA_PATH=/nonexistent");
  const ProcessResult built = runProcess(compile, dir.path(), env, 300);
  ASSERT_EQ(built.status, 0) << built.output.substr(0, 6000);

  lang::Rtg rtg;
  std::string error;
  ASSERT_TRUE(lang::parseRtgJson(readFile(dir.file(name + ".rtg.json")), rtg, error)) << error;
  ASSERT_FALSE(rtg.vertices.empty());
  if (mode == "toolkit") {
    EXPECT_EQ(rtg.cudaArchs, std::vector<std::string>{"sm_90"});
  } else {
    EXPECT_TRUE(rtg.cudaArchs.empty());
  }

  const std::vector<std::string> run = {kMpiexec,   "-launcher", "fork", "-n", std::to_string(rtg.vertices.size()),
                                        "./" + name};
  const ProcessResult ran = runProcess(run, dir.path(), {}, 120);
  EXPECT_EQ(ran.status, 0) << ran.output.substr(0, 6000);
  EXPECT_NE(ran.output.find("external " + name + ": ok"), std::string::npos) << ran.output.substr(0, 6000);
  EXPECT_EQ(ran.output.find("MISMATCH"), std::string::npos) << ran.output.substr(0, 6000);
}

// A program added to the folder but not to kCorpus would never run; one listed but missing would fail late.
TEST(ExternalCorpusList, NamesEveryProgramOfTheFolder) {
  std::vector<std::string> inFolder;
  for (const auto& entry : std::filesystem::directory_iterator(kSourceDir + "/tests/external"))
    if (entry.path().extension() == ".dsp") inFolder.push_back(entry.path().stem().string());
  std::vector<std::string> listed = kCorpus;
  std::sort(inFolder.begin(), inFolder.end());
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(inFolder, listed);
}

INSTANTIATE_TEST_SUITE_P(Corpus, ExternalCorpus,
                         ::testing::Combine(::testing::ValuesIn(kCorpus), ::testing::ValuesIn(buildModes())),
                         [](const ::testing::TestParamInfo<CorpusCase>& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

}  // namespace
}  // namespace dispar::testing
