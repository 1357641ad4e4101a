// Run profiles (docs/runtime.md, "Run profiles"): examples/pipeline run with DISPAR_PROFILE, one rank per
// instance and grouped, writes one schema-valid profile whose traffic is the program's exact traffic
// (64 frames of 1024 floats; 64 energies of one double); `streammap run --profile` does the same; a job
// whose VNODE throws still leaves a profile, marked incomplete, naming the failure.
#include "GroupingMap.h"
#include "Process.h"

#include "dispar_lang/Rtg.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace dispar::testing {
namespace {

using nlohmann::json;

const std::string kDisparcc = DISPARCC_PATH;
const std::string kStreammap = STREAMMAP_PATH;
const std::string kMpiexec = MPIEXEC_PATH;
const std::string kSourceDir = DISPAR_SOURCE_DIR;

lang::Rtg build(const ScratchDir& dir, const std::string& name, const std::string& source) {
  dir.write(name + ".dsp", source);
  const ProcessResult built = runProcess({kDisparcc, name + ".dsp", "-o", name}, dir.path());
  EXPECT_EQ(built.status, 0) << built.output;
  lang::Rtg rtg;
  std::string error;
  EXPECT_TRUE(lang::parseRtgJson(readFile(dir.file(name + ".rtg.json")), rtg, error)) << error;
  return rtg;
}

bool isSeconds(const json& value) {
  return value.is_number() && std::isfinite(value.get<double>()) && value.get<double>() >= 0;
}

/// Checks the profile's fields and types; returns the instances as (vnode, replica).
std::set<std::pair<std::string, int>> expectWellFormed(const json& profile, const std::string& program, int ranks) {
  EXPECT_EQ(profile.at("format"), "dispar-profile");
  EXPECT_EQ(profile.at("version"), 1);
  EXPECT_EQ(profile.at("program"), program);
  EXPECT_TRUE(profile.at("kernels").is_array());
  std::set<std::pair<std::string, int>> instances;
  for (const json& line : profile.at("instances")) {
    instances.emplace(line.at("vnode").get<std::string>(), line.at("replica").get<int>());
    EXPECT_GE(line.at("rank").get<int>(), 0);
    EXPECT_LT(line.at("rank").get<int>(), ranks);
    EXPECT_FALSE(line.at("host").get<std::string>().empty());
    EXPECT_TRUE(line.at("device") == "cpu" || line.at("device") == "gpu" || line.at("device") == "host-path") << line;
    for (const char* key : {"compute_s", "read_wait_s", "write_wait_s", "cpu_s"})
      EXPECT_TRUE(isSeconds(line.at(key))) << key << " " << line;
  }
  return instances;
}

class RunProfile : public ::testing::Test {
 protected:
  void SetUp() override { rtg_ = build(dir_, "pipeline", readFile(kSourceDir + "/examples/pipeline/pipeline.dsp")); }

  json run(int ranks, const std::vector<std::string>& env) {
    std::vector<std::string> environment = env;
    environment.push_back("DISPAR_PROFILE=" + dir_.file("profile.json"));
    const ProcessResult ran = runProcess({kMpiexec, "-launcher", "fork", "-n", std::to_string(ranks), "./pipeline"},
                                         dir_.path(), environment);
    EXPECT_EQ(ran.status, 0) << ran.output;
    return json::parse(readFile(dir_.file("profile.json")));
  }

  void expectPipelineProfile(const json& profile, int ranks) {
    EXPECT_EQ(profile.at("complete"), true);
    const std::set<std::pair<std::string, int>> expected = {
        {"source", 0}, {"square", 0}, {"square", 1}, {"square", 2}, {"sink", 0}};
    EXPECT_EQ(expectWellFormed(profile, "pipeline", ranks), expected);
    ASSERT_EQ(profile.at("pipes").size(), 2u);
    EXPECT_EQ(profile.at("pipes")[0], (json{{"pipe", "samples"}, {"messages", 64}, {"bytes", 64 * 1024 * 4}}));
    EXPECT_EQ(profile.at("pipes")[1], (json{{"pipe", "energies"}, {"messages", 64}, {"bytes", 64 * 8}}));
    for (const json& line : profile.at("instances")) {
      // Every instance took some time, and the readers waited for their input.
      const double total = line.at("compute_s").get<double>() + line.at("read_wait_s").get<double>() +
                           line.at("write_wait_s").get<double>();
      EXPECT_GT(total, 0) << line;
      // ... within the run's wall time, which the profile records (issue 36, item 2).
      EXPECT_LE(total, profile.at("wall_s").get<double>()) << line;
      if (line.at("vnode") == "sink") {
        EXPECT_GT(line.at("read_wait_s").get<double>(), 0) << line;
      }
    }
  }

  ScratchDir dir_;
  lang::Rtg rtg_;
};

TEST_F(RunProfile, OneRankPerInstanceAndGroupedGiveTheSameTraffic) {
  expectPipelineProfile(run(5, {}), 5);
  dir_.write("one.map.json", mapFile("pipeline", rtg_, oneRank(rtg_)));
  expectPipelineProfile(run(1, {"DISPAR_MAPPING=" + dir_.file("one.map.json")}), 1);
  dir_.write("two.map.json", mapFile("pipeline", rtg_, {{0, 4}, {1, 2, 3}}));
  const json grouped = run(2, {"DISPAR_MAPPING=" + dir_.file("two.map.json")});
  expectPipelineProfile(grouped, 2);
  for (const json& line : grouped.at("instances"))
    EXPECT_EQ(line.at("rank").get<int>(), line.at("vnode") == "square" ? 1 : 0) << line;
}

TEST_F(RunProfile, StreammapRunWritesIt) {
  dir_.write("cluster.json", readFile(kSourceDir + "/tests/e2e/placement/cluster.json"));
  const ProcessResult ran = runProcess({kStreammap, "run", "--launcher", "fork", "--cluster", "cluster.json",
                                        "--profile", "from-run.json", "./pipeline"},
                                       dir_.path());
  ASSERT_EQ(ran.status, 0) << ran.output;
  const json profile = json::parse(readFile(dir_.file("from-run.json")));
  const json map = json::parse(readFile(dir_.file("pipeline.map.json")));
  expectPipelineProfile(profile, map.at("ranks").back().at("rank").get<int>() + 1);
}

TEST(RunProfileOfAFailure, IsWrittenIncompleteNamingTheFailure) {
  ScratchDir dir;
  build(dir, "failing", R"(#include <dispar/dispar.h>
#include <stdexcept>
PIPE(int, numbers);
VNODE(source, OUT(numbers)) { for (int i = 0; i < 100; ++i) numbers.write(i); }
VNODE(sink, IN(numbers)) {
  int n = 0;
  while (numbers.read(n))
    if (n == 50) throw std::runtime_error("fifty is too many");
}
)");
  const ProcessResult ran = runProcess({kMpiexec, "-launcher", "fork", "-n", "2", "./failing"}, dir.path(),
                                       {"DISPAR_PROFILE=" + dir.file("profile.json")});
  EXPECT_NE(ran.status, 0) << ran.output;
  ASSERT_TRUE(fileExists(dir.file("profile.json"))) << ran.output;
  const json profile = json::parse(readFile(dir.file("profile.json")));
  EXPECT_EQ(profile.at("complete"), false);
  EXPECT_FALSE(profile.contains("wall_s"));  // the run did not end
  EXPECT_NE(profile.at("failure").get<std::string>().find("fifty is too many"), std::string::npos) << profile;
  const std::set<std::pair<std::string, int>> failing = {{"sink", 0}};
  EXPECT_EQ(expectWellFormed(profile, "failing", 2), failing);
}

TEST(RunProfileOfKernels, CountsAndTimesEveryLaunchSite) {
  // The FIR example launches its kernel once per frame (64 frames) in one place; its replicas share them.
  ScratchDir dir;
  const std::string source = readFile(kSourceDir + "/examples/fir/fir.dsp");
  const lang::Rtg rtg = build(dir, "fir", source);
  // Where the launch is written, found in the source independently of the compiler.
  const std::size_t at = source.find("firKernel<<<");
  ASSERT_NE(at, std::string::npos);
  const std::size_t lineStart = source.rfind('\n', at) + 1;
  const std::string site = "fir.dsp:" + std::to_string(std::count(source.begin(), source.begin() + at, '\n') + 1) +
                           ":" + std::to_string(at - lineStart + 1);
  const ProcessResult ran =
      runProcess({kMpiexec, "-launcher", "fork", "-n", std::to_string(rtg.vertices.size()), "./fir"}, dir.path(),
                 {"DISPAR_PROFILE=" + dir.file("profile.json")});
  ASSERT_EQ(ran.status, 0) << ran.output;
  ASSERT_NE(ran.output.find("frames=64"), std::string::npos) << ran.output;
  const json profile = json::parse(readFile(dir.file("profile.json")));
  std::uint64_t launches = 0;
  std::set<int> replicas;
  for (const json& k : profile.at("kernels")) {
    EXPECT_EQ(k.at("vnode"), "fir") << k;
    EXPECT_EQ(k.at("kernel"), "firKernel") << k;
    EXPECT_EQ(k.at("site"), site) << k;
    EXPECT_EQ(k.at("device"), "host-path") << k;  // no GPU here
    EXPECT_GT(k.at("seconds").get<double>(), 0) << k;
    launches += k.at("launches").get<std::uint64_t>();
    replicas.insert(k.at("replica").get<int>());
  }
  EXPECT_EQ(launches, 64u) << profile.at("kernels");
  EXPECT_EQ(replicas.size(), 2u) << profile.at("kernels");
}

}  // namespace
}  // namespace dispar::testing
