// The machinefile really places ranks: compile with disparcc, map onto made-up hosts with streammap,
// launch from the machinefile (MPICH's fork launcher runs every "host" here and tells each rank its host
// name in MPIR_CVAR_CH3_INTERFACE_HOSTNAME), and compare where each instance ran with app.map.json.
#include "Placements.h"
#include "Process.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
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
  ProcessResult mapped = runProcess(
      {STREAMMAP_PATH, "map", "placement.rtg.json", "--cluster", "cluster.json", "-o", "placement.machinefile"},
      dir.path());
  ASSERT_EQ(mapped.status, 0) << mapped.output;
  EXPECT_NE(mapped.output.find("mpiexec -f placement.machinefile -n 6 ./placement"), std::string::npos)
      << mapped.output;

  ProcessResult run = runProcess(
      {MPIEXEC_PATH, "-launcher", "fork", "-f", "placement.machinefile", "-n", "6", "./placement"}, dir.path());
  ASSERT_EQ(run.status, 0) << run.output;
  long expected = 0;
  for (long i = 0; i < 1000; ++i) expected += i * i;
  EXPECT_NE(run.output.find("sum=" + std::to_string(expected)), std::string::npos) << run.output;

  ASSERT_EQ(nlohmann::json::parse(readFile(dir.file("placement.map.json"))).at("ranks").size(), 6u);
  const std::set<std::string> hostsUsed = expectPlacedAsMapped(run.output, dir.file("placement.map.json"));
  // Six instances on three two-core hosts: the mapping spreads them, so the check is not vacuous.
  EXPECT_GE(hostsUsed.size(), 2u);
}

#ifdef OPENMPI_MPIRUN_PATH
// Open MPI cannot start ranks on made-up hosts: map onto this machine alone and check that `streammap
// run` launches with the rankfile it wrote — every rank bound to the slot the rankfile gives it.
TEST(Placement, OpenMpiRankfileBindsEveryRankToItsSlot) {
  ScratchDir dir;
  const std::string source = std::string(DISPAR_SOURCE_DIR) + "/tests/e2e/placement/";
  dir.write("placement.dsp", readFile(source + "placement.dsp"));
  const std::string host = runProcess({"hostname"}).output.substr(0, runProcess({"hostname"}).output.find('\n'));
  dir.write("here.json", R"({"format": "dispar-cluster", "version": 1, "nodes": [{"host": ")" + host +
                             R"(", "cpu": {"sockets": 1, "cores": 2, "threads": 2}}]})");
  ProcessResult built = runProcess({DISPARCC_PATH, "--mpi", "openmpi", "placement.dsp", "-o", "placement"}, dir.path());
  ASSERT_EQ(built.status, 0) << built.output;
  const std::vector<std::string> rootOk = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                           "OMPI_MCA_btl=self,vader,tcp"};
  ProcessResult run = runProcess({STREAMMAP_PATH, "run", "--cluster", "here.json", "./placement"}, dir.path(), rootOk);
  ASSERT_EQ(run.status, 0) << run.output;
  long expected = 0;
  for (long i = 0; i < 1000; ++i) expected += i * i;
  EXPECT_NE(run.output.find("sum=" + std::to_string(expected)), std::string::npos) << run.output;
  const nlohmann::json map = nlohmann::json::parse(readFile(dir.file("placement.map.json")));
  EXPECT_EQ(map.at("launcher"), "openmpi");
  EXPECT_EQ(map.at("mpi"), "openmpi");

  // rankfile: "rank R=host slot=S"; the ranks report their vnode, replica and allowed CPUs.
  std::map<int, int> slotOfRank;
  std::istringstream rankfile(readFile(dir.file("placement.rankfile")));
  for (std::string line; std::getline(rankfile, line);) {
    int rank = -1, slot = -1;
    char hostName[256];
    ASSERT_EQ(std::sscanf(line.c_str(), "rank %d=%255[^ ] slot=%d", &rank, hostName, &slot), 3) << line;
    slotOfRank[rank] = slot;
  }
  std::map<std::pair<std::string, int>, std::string> cpusOf;
  std::istringstream lines(run.output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string tag, vnode, node, cpus;
    int replica = -1;
    if (words >> tag >> vnode >> replica >> node >> cpus && tag == "placed") cpusOf[{vnode, replica}] = cpus;
  }
  std::map<int, std::set<std::string>> cpusOfSlot;
  for (const nlohmann::json& rank : map.at("ranks")) {
    const auto key = std::make_pair(rank.at("vnode").get<std::string>(), rank.at("replica").get<int>());
    ASSERT_TRUE(cpusOf.count(key)) << key.first << " did not report\n" << run.output;
    cpusOfSlot[slotOfRank.at(rank.at("rank").get<int>())].insert(cpusOf[key]);
  }
  // Six ranks on two slots: each slot's ranks share one binding, and the two bindings differ.
  ASSERT_EQ(cpusOfSlot.size(), 2u) << run.output;
  EXPECT_EQ(cpusOfSlot[0].size(), 1u) << run.output;
  EXPECT_EQ(cpusOfSlot[1].size(), 1u) << run.output;
  EXPECT_NE(*cpusOfSlot[0].begin(), *cpusOfSlot[1].begin()) << run.output;
}
#endif

// Before: `map -o other.machinefile` printed `mpiexec -f other.machinefile -n 1 ./app`, and ./app, not
// finding app.map.json, expected one rank per instance and refused to start.
TEST(RunLine, TheLineMapPrintsRunsWithTheMappingItWrote) {
  ScratchDir dir;
  dir.write("app.dsp", R"(#include <dispar/dispar.h>
#include <cstdio>
PIPE(long, a);
PIPE(long, b);
VNODE(source, OUT(a)) { for (long v = 1; v <= 100; ++v) a.write(v); }
VNODE(twice, IN(a), OUT(b)) { long v; while (a.read(v)) b.write(2 * v); }
VNODE(sink, IN(b)) { long v, s = 0; while (b.read(v)) s += v; std::printf("s=%ld\n", s); }
)");
  // One core: the mapping groups the three instances into one rank, unlike the program's default.
  dir.write("cluster.json",
            R"({"format": "dispar-cluster", "version": 1, "nodes": [{"host": "n1", "cpu": {"cores": 1}}]})");
  const ProcessResult built = runProcess({DISPARCC_PATH, "app.dsp", "-o", "my app"}, dir.path());
  ASSERT_EQ(built.status, 0) << built.output;
  const ProcessResult mapped =
      runProcess({STREAMMAP_PATH, "map", "my app.rtg.json", "--cluster", "cluster.json", "-o", "placement.machinefile"},
                 dir.path());
  ASSERT_EQ(mapped.status, 0) << mapped.output;
  const std::size_t at = mapped.output.find("run: ");
  ASSERT_NE(at, std::string::npos) << mapped.output;
  const std::string line = mapped.output.substr(at + 5, mapped.output.find('\n', at) - at - 5);
  EXPECT_EQ(line, "DISPAR_MAPPING=placement.map.json mpiexec -f placement.machinefile -n 1 './my app'");
  // The line as the user would paste it, with this build's mpiexec and the fork launcher for the
  // made-up host.
  std::string command = line;
  command.replace(command.find("mpiexec"), 7, std::string(MPIEXEC_PATH));
  const ProcessResult run = runProcess({"/bin/bash", "-c", command}, dir.path(), {"HYDRA_LAUNCHER=fork"});
  ASSERT_EQ(run.status, 0) << command << "\n" << run.output;
  EXPECT_NE(run.output.find("s=10100"), std::string::npos) << run.output;  // 2 * (1 + ... + 100)
}

}  // namespace
}  // namespace dispar::testing
