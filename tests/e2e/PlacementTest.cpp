// The machinefile really places ranks: compile with disparcc, map onto made-up hosts with streammap,
// launch from the machinefile (MPICH's fork launcher runs every "host" here and tells each rank its host
// name in MPIR_CVAR_CH3_INTERFACE_HOSTNAME), and compare where each instance ran with app.map.json.
#include "Process.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <sstream>

namespace dispar::testing {
namespace {

TEST(Placement, RanksRunWhereTheMappingPutThem) {
  ScratchDir dir;
  const std::string source = std::string(DISPAR_SOURCE_DIR) + "/tests/e2e/placement/";
  dir.write("placement.dsp", readFile(source + "placement.dsp"));
  dir.write("cluster.json", readFile(source + "cluster.json"));
  ProcessResult built = runProcess({DISPARCC_PATH, "placement.dsp", "-o", "placement"}, dir.path());
  ASSERT_EQ(built.status, 0) << built.output;
  ProcessResult mapped = runProcess({STREAMMAP_PATH, "map", "placement.rtg.json", "--cluster", "cluster.json", "-o",
                                     "placement.machinefile"},
                                    dir.path());
  ASSERT_EQ(mapped.status, 0) << mapped.output;
  EXPECT_NE(mapped.output.find("mpiexec -f placement.machinefile -n 6 ./placement"), std::string::npos) << mapped.output;

  ProcessResult run = runProcess({MPIEXEC_PATH, "-launcher", "fork", "-f", "placement.machinefile", "-n", "6", "./placement"},
                                 dir.path());
  ASSERT_EQ(run.status, 0) << run.output;
  long expected = 0;
  for (long i = 0; i < 1000; ++i) expected += i * i;
  EXPECT_NE(run.output.find("sum=" + std::to_string(expected)), std::string::npos) << run.output;

  // Where each (vnode, replica) actually ran.
  std::map<std::pair<std::string, int>, std::string> actual;
  std::istringstream lines(run.output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string tag, vnode, host;
    int replica = -1;
    if (words >> tag >> vnode >> replica >> host && tag == "placed") actual[{vnode, replica}] = host;
  }
  nlohmann::json map = nlohmann::json::parse(readFile(dir.file("placement.map.json")));
  ASSERT_EQ(map.at("ranks").size(), 6u);
  std::set<std::string> hostsUsed;
  for (const nlohmann::json& rank : map.at("ranks")) {
    auto key = std::make_pair(rank.at("vnode").get<std::string>(), rank.at("replica").get<int>());
    ASSERT_TRUE(actual.count(key)) << key.first << " " << key.second << " did not report\n" << run.output;
    EXPECT_EQ(actual[key], rank.at("host").get<std::string>()) << key.first << " replica " << key.second;
    hostsUsed.insert(actual[key]);
  }
  // Six instances on three two-core hosts: the mapping spreads them, so the check is not vacuous.
  EXPECT_GE(hostsUsed.size(), 2u);
}

}  // namespace
}  // namespace dispar::testing
