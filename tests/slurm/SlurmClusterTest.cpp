// streammap with a real Slurm 22.05 cluster of four nodes on this machine (slurm_cluster.sh, started once
// for the whole binary and stopped at the end): import, mapping in and out of an allocation, launching
// with srun, every rank on the node its mapping names (as the ranks themselves report it), a drained node
// never used, a generated batch script run by sbatch, and a stalled job's report. Needs root (slurmd runs jobs as their
// users).
#include "Placements.h"
#include "Process.h"
#include "StallPrograms.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

namespace dispar::testing {
namespace {

const std::string kScript = std::string(DISPAR_SOURCE_DIR) + "/tests/slurm/slurm_cluster.sh";

class SlurmCluster : public ::testing::Environment {
 public:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "the Slurm tests need root (label 'slurm'): slurmd runs jobs as their users";
    dir_ = std::make_unique<ScratchDir>();
    const ProcessResult started = runProcess({"bash", kScript, "start", dir_->file("cluster")}, ".", {}, 60);
    ASSERT_EQ(started.status, 0) << started.output;
    ::setenv("SLURM_CONF", dir_->file("cluster/slurm.conf").c_str(), 1);
  }
  void TearDown() override {
    if (dir_) runProcess({"bash", kScript, "stop", dir_->file("cluster")}, ".", {}, 60);
    dir_.reset();
  }

 private:
  std::unique_ptr<ScratchDir> dir_;
};

const auto* const kCluster = ::testing::AddGlobalTestEnvironment(new SlurmCluster);

ProcessResult streammap(const std::vector<std::string>& args, const std::string& dir) {
  std::vector<std::string> argv = {STREAMMAP_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv, dir);
}

ProcessResult scontrol(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"scontrol"};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv);
}

/// Resumes a drained node and waits until Slurm reports it idle again (right after `resume` it is
/// "not responding" until its slurmd registers again, about a second).
void resume(const std::string& node) {
  ASSERT_EQ(scontrol({"update", "nodename=" + node, "state=resume"}).status, 0);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const ProcessResult state = runProcess({"sinfo", "-h", "-N", "-n", node, "-o", "%T"});
    if (state.status == 0 && state.output == "idle\n") return;
    ::usleep(100 * 1000);
  }
  FAIL() << node << " did not come back after resume";
}

std::map<std::string, nlohmann::json> nodesOf(const std::string& db, const std::string& dir) {
  const ProcessResult listed = streammap({"nodes", "--json", "--db", db}, dir);
  EXPECT_EQ(listed.status, 0) << listed.output;
  std::map<std::string, nlohmann::json> nodes;
  const nlohmann::json listing = nlohmann::json::parse(listed.output);
  for (const nlohmann::json& n : listing.at("nodes")) nodes[n.at("host").get<std::string>()] = n;
  return nodes;
}

/// Builds the placement program (six CPU instances that report their node) into `dir`, for `mpi`.
void buildPlacement(const ScratchDir& dir, const std::string& mpi = "mpich") {
  dir.write("placement.dsp", readFile(std::string(DISPAR_SOURCE_DIR) + "/tests/e2e/placement/placement.dsp"));
  const ProcessResult built = runProcess({DISPARCC_PATH, "--mpi", mpi, "placement.dsp", "-o", "placement"}, dir.path());
  ASSERT_EQ(built.status, 0) << built.output;
}

// The MPI ranks of a map: instances may share a rank (docs/streammap.md, "Ranks").
std::size_t rankCountOf(const std::string& mapPath) {
  const nlohmann::json map = nlohmann::json::parse(readFile(mapPath));
  return map.at("ranks").empty() ? 0 : map.at("ranks").back().at("rank").get<std::size_t>() + 1;
}

/// The placement program's sum, and its six instances each where the mapping says; the hosts used.
std::set<std::string> expectPlacementRun(const std::string& output, const std::string& mapPath) {
  long expected = 0;
  for (long i = 0; i < 1000; ++i) expected += i * i;
  EXPECT_NE(output.find("sum=" + std::to_string(expected)), std::string::npos) << output;
  EXPECT_EQ(nlohmann::json::parse(readFile(mapPath)).at("ranks").size(), 6u);
  return expectPlacedAsMapped(output, mapPath);
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(SlurmCluster, ImportReadsNodesGpusAndStates) {
  ScratchDir dir;
  const std::string db = dir.file("r.db");
  ProcessResult imported = streammap({"cluster", "import", "--slurm", "--db", db}, dir.path());
  ASSERT_EQ(imported.status, 0) << imported.output;
  EXPECT_NE(imported.output.find("imported 4 nodes from Slurm (sinfo --json)"), std::string::npos) << imported.output;
  auto nodes = nodesOf(db, dir.path());
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_EQ(nodes["gpu1"]["gpus"].size(), 2u);
  EXPECT_EQ(nodes["gpu1"]["gpus"][0]["name"], "NVIDIA A100");
  EXPECT_EQ(nodes["gpu1"]["gpus"][0]["compute_capability"], "8.0");
  EXPECT_EQ(nodes["gpu2"]["gpus"].size(), 1u);
  EXPECT_EQ(nodes["gpu2"]["gpus"][0]["name"], "Tesla V100");
  EXPECT_EQ(nodes["cpu1"]["gpus"].size(), 0u);
  EXPECT_EQ(nodes["cpu1"]["cpu"]["threads"], 2);
  for (auto& [host, n] : nodes) EXPECT_EQ(n["status"], "up") << host;

  // Slurm's drain and resume are the truth on every import.
  ASSERT_EQ(scontrol({"update", "nodename=cpu2", "state=drain", "reason=dispar-test"}).status, 0);
  imported = streammap({"cluster", "import", "--slurm", "--db", db}, dir.path());
  ASSERT_EQ(imported.status, 0) << imported.output;
  EXPECT_EQ(nodesOf(db, dir.path())["cpu2"]["status"], "drained");
  resume("cpu2");
  imported = streammap({"cluster", "import", "--slurm", "--db", db}, dir.path());
  ASSERT_EQ(imported.status, 0) << imported.output;
  EXPECT_EQ(nodesOf(db, dir.path())["cpu2"]["status"], "up");
}

TEST(SlurmCluster, ImportMergesWithRecordedDetails) {
  // A record with the details a probe finds (GPU model, memory, topology) keeps them; Slurm's state and
  // GPU count win.
  ScratchDir dir;
  const std::string db = dir.file("r.db");
  dir.write("probed.json", R"({"format": "dispar-cluster", "version": 1, "nodes": [
    {"host": "gpu1", "cpu": {"sockets": 2, "cores": 16, "threads": 32}, "memory_bytes": 68719476736,
     "status": "down",
     "gpus": [{"index": 0, "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0", "memory_bytes": 85899345920},
              {"index": 1, "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0", "memory_bytes": 85899345920},
              {"index": 2, "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0", "memory_bytes": 85899345920}]}]})");
  ASSERT_EQ(streammap({"cluster", "import", "probed.json", "--db", db}, dir.path()).status, 0);
  const ProcessResult imported = streammap({"cluster", "import", "--slurm", "--db", db}, dir.path());
  ASSERT_EQ(imported.status, 0) << imported.output;
  auto gpu1 = nodesOf(db, dir.path())["gpu1"];
  EXPECT_EQ(gpu1["status"], "up");
  EXPECT_EQ(gpu1["cpu"]["cores"], 16);
  ASSERT_EQ(gpu1["gpus"].size(), 2u);
  EXPECT_EQ(gpu1["gpus"][1]["name"], "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(gpu1["gpus"][1]["memory_bytes"], 85899345920LL);
}

TEST(SlurmCluster, MapAvoidsDrainedNodeAndRunPlacesEveryRank) {
  ScratchDir dir;
  const std::string db = dir.file("r.db");
  buildPlacement(dir);
  ASSERT_EQ(scontrol({"update", "nodename=cpu2", "state=drain", "reason=dispar-test"}).status, 0);
  ProcessResult imported = streammap({"cluster", "import", "--slurm", "--db", db}, dir.path());
  ASSERT_EQ(imported.status, 0) << imported.output;
  const ProcessResult mapped = streammap({"map", "placement.rtg.json", "--format", "slurm", "--db", db}, dir.path());
  ASSERT_EQ(mapped.status, 0) << mapped.output;
  // Six instances; where a node has fewer cores than instances they share ranks.
  const std::size_t ranks = rankCountOf(dir.file("placement.map.json"));
  EXPECT_GE(ranks, 2u);
  EXPECT_LE(ranks, 6u);
  EXPECT_NE(mapped.output.find("run: SLURM_HOSTFILE=placement.slurm-hostfile srun --mpi=pmi2 -n " +
                               std::to_string(ranks) + " --distribution=arbitrary " +
                               (ranks < 6 ? "--cpu-bind=none " : "")),
            std::string::npos)
      << mapped.output;
  const std::vector<std::string> hostfile = linesOf(readFile(dir.file("placement.slurm-hostfile")));
  EXPECT_EQ(hostfile.size(), ranks);
  for (const std::string& host : hostfile) EXPECT_NE(host, "cpu2") << "drained node used";

  const ProcessResult run = streammap({"run", "--launcher", "slurm", "--db", db, "./placement"}, dir.path());
  resume("cpu2");
  ASSERT_EQ(run.status, 0) << run.output;
  const std::set<std::string> hosts = expectPlacementRun(run.output, dir.file("placement.map.json"));
  EXPECT_EQ(hosts.count("cpu2"), 0u);
  EXPECT_GE(hosts.size(), 2u);  // six instances on 2- and 4-CPU nodes: the check is not vacuous
}

TEST(SlurmCluster, InsideAnAllocationOnlyItsNodes) {
  ScratchDir dir;
  const std::string db = dir.file("r.db");
  buildPlacement(dir);
  ASSERT_EQ(streammap({"cluster", "import", "--slurm", "--db", db}, dir.path()).status, 0);
  // salloc runs streammap inside the allocation; `run` then defaults to srun.
  const ProcessResult run = runProcess(
      {"salloc", "-w", "gpu2,cpu1", "-N", "2", "--exclusive", STREAMMAP_PATH, "run", "--db", db, "./placement"},
      dir.path());
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("inside Slurm job "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("mapping onto its 2 nodes only"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("gpu2: 4 CPUs, 1 GPU (recorded)"), std::string::npos) << run.output;
  const std::set<std::string> hosts = expectPlacementRun(run.output, dir.file("placement.map.json"));
  for (const std::string& h : hosts) EXPECT_TRUE(h == "gpu2" || h == "cpu1") << h << " is not in the allocation";
  const nlohmann::json map = nlohmann::json::parse(readFile(dir.file("placement.map.json")));
  EXPECT_EQ(map.at("launcher"), "slurm");
}

#ifdef DISPAR_HAVE_OPENMPI
// An Open MPI program under srun: PMIx instead of PMI-2, the same placement.
TEST(SlurmCluster, OpenMpiProgramsRunUnderSrunWithPmix) {
  ScratchDir dir;
  const std::string db = dir.file("r.db");
  buildPlacement(dir, "openmpi");
  ASSERT_EQ(streammap({"cluster", "import", "--slurm", "--db", db}, dir.path()).status, 0);
  const ProcessResult run = streammap({"run", "--launcher", "slurm", "--db", db, "./placement"}, dir.path());
  ASSERT_EQ(run.status, 0) << run.output;
  const std::set<std::string> hosts = expectPlacementRun(run.output, dir.file("placement.map.json"));
  EXPECT_GE(hosts.size(), 2u);
  const nlohmann::json map = nlohmann::json::parse(readFile(dir.file("placement.map.json")));
  EXPECT_EQ(map.at("mpi"), "openmpi");
}
#endif

TEST(SlurmCluster, InsideAnAllocationNoDatabaseIsNeeded) {
  // Nothing recorded anywhere: the allocation itself describes its nodes.
  ScratchDir dir;
  buildPlacement(dir);
  const ProcessResult run =
      runProcess({"salloc", "-w", "gpu1,cpu1", "-N", "2", "--exclusive", STREAMMAP_PATH, "run", "./placement"},
                 dir.path(), {"DISPAR_RESOURCE_DB=" + dir.file("none.db")});
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("no resource database at " + dir.file("none.db") +
                            ": the allocation's nodes as Slurm describes them"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("gpu1: 4 CPUs, 2 GPUs (not recorded, as Slurm describes it)"), std::string::npos)
      << run.output;
  const std::set<std::string> hosts = expectPlacementRun(run.output, dir.file("placement.map.json"));
  for (const std::string& h : hosts) EXPECT_TRUE(h == "gpu1" || h == "cpu1") << h << " is not in the allocation";
  EXPECT_FALSE(fileExists(dir.file("none.db")));  // nothing was created behind the user's back
}

// A deadlock under Slurm explains itself as it does under mpiexec (docs/runtime.md, "Stalls"): a split-join
// read in the wrong order, launched by streammap run (srun, ranks as the mapping groups them) and by srun
// itself with one rank on each of two nodes, ends within DISPAR_STALL_SECONDS + 5 s (+ srun's start-up),
// not zero, with the report naming the cycle.
TEST(SlurmCluster, AStalledJobReportsItsCycleAndEnds) {
  ScratchDir dir;
  const std::string db = dir.file("r.db");
  dir.write("wrong_order.dsp", kSplitJoinReadInTheWrongOrder);
  const ProcessResult built = runProcess({DISPARCC_PATH, "wrong_order.dsp", "-o", "wrong_order"}, dir.path());
  ASSERT_EQ(built.status, 0) << built.output;
  ASSERT_EQ(streammap({"cluster", "import", "--slurm", "--db", db}, dir.path()).status, 0);
  const std::vector<std::string> stallLimit = {"DISPAR_STALL_SECONDS=2", "DISPAR_STALL_ABORT=1"};
  const std::vector<std::vector<std::string>> launches = {
      {STREAMMAP_PATH, "run", "--launcher", "slurm", "--db", db, "./wrong_order"},
      {"srun", "--mpi=pmi2", "-N", "2", "-n", "2", "-w", "cpu1,cpu2", "./wrong_order"}};
  for (const std::vector<std::string>& launch : launches) {
    const auto start = std::chrono::steady_clock::now();
    const ProcessResult run = runProcess(launch, dir.path(), stallLimit, 60);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_NE(run.status, 0) << launch[0] << "\n" << run.output;
    EXPECT_NE(run.status, 124) << launch[0] << ": it hung\n" << run.output;
    EXPECT_LT(seconds, 2 + 5 + 8) << launch[0];  // + srun's start-up
    for (const char* line : {"dispar: stall: no VNODE instance has completed a pipe operation for 2 s", kSplitJoinCycle,
                             "dispar: ending the job (DISPAR_STALL_ABORT=1), status 4"})
      EXPECT_NE(run.output.find(line), std::string::npos) << launch[0] << ": " << line << "\n" << run.output;
  }
}

TEST(SlurmCluster, SbatchScriptRunsTheMappedJob) {
  ScratchDir dir;
  const std::string db = dir.file("r.db");
  buildPlacement(dir);
  ASSERT_EQ(streammap({"cluster", "import", "--slurm", "--db", db}, dir.path()).status, 0);
  const ProcessResult written =
      streammap({"sbatch", "placement.rtg.json", "--db", db, "--time", "5:00", "-o", "job.sbatch"}, dir.path());
  ASSERT_EQ(written.status, 0) << written.output;
  EXPECT_NE(written.output.find("wrote job.sbatch; submit with: sbatch job.sbatch"), std::string::npos)
      << written.output;
  const std::string script = readFile(dir.file("job.sbatch"));
  EXPECT_NE(script.find("#SBATCH --ntasks=" + std::to_string(rankCountOf(dir.file("placement.map.json"))) + "\n"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("#SBATCH --time=5:00\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --exclusive\n"), std::string::npos) << script;
  const ProcessResult submitted =
      runProcess({"sbatch", "--wait", "-o", dir.file("job.out"), "job.sbatch"}, dir.path(), {}, 120);
  ASSERT_EQ(submitted.status, 0) << submitted.output << readFile(dir.file("job.out"));
  expectPlacementRun(readFile(dir.file("job.out")), dir.file("placement.map.json"));

  EXPECT_NE(streammap({"sbatch", "placement.rtg.json", "--db", db, "--time", "soon"}, dir.path()).status, 0);
}

}  // namespace
}  // namespace dispar::testing
