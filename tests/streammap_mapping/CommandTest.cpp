// The map / check / run commands on real files, and a real mpiexec launch (fork launcher).
#include "TestSupport.h"
#include "streammap/AtomicFiles.h"
#include "streammap/ClusterJson.h"
#include "streammap/Commands.h"
#include "streammap/InputFiles.h"
#include "streammap/MapFile.h"
#include "streammap/ResourceDb.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace dispar::streammap {
namespace {

using lang::Requirement;
using namespace testing;

// Compares where ranks ran ("RANK HOST" lines, as each rank printed them, in any order) with where the
// map put them (the host of each rank's instances), reading the map with streammap's own parser. Empty
// when every mapped rank ran exactly once on its host; else one line per mismatch.
std::string placementMismatches(const std::string& mapText, const std::string& ranText) {
  MapRecord map;
  std::string error;
  if (!parseMapJson(mapText, map, error)) return "map: " + error + "\n";
  if (map.ranks.empty()) return "no ranks in the map\n";
  const std::vector<std::string> hostOfRank = hostsOfRanks(map);
  std::string problems;
  std::map<int, int> seen;
  std::istringstream lines(ranText);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    int rank = -1;
    std::string host, extra;
    if (!(fields >> rank >> host) || (fields >> extra)) {
      problems += "expected \"RANK HOST\", got \"" + line + "\"\n";
      continue;
    }
    if (++seen[rank] == 2) problems += "rank " + std::to_string(rank) + ": reported more than once\n";
    if (rank < 0 || rank >= static_cast<int>(hostOfRank.size()))
      problems += "rank " + std::to_string(rank) + ": not in the map\n";
    else if (hostOfRank[static_cast<std::size_t>(rank)] != host)
      problems += "rank " + std::to_string(rank) + ": ran on " + host + ", mapped to " +
                  hostOfRank[static_cast<std::size_t>(rank)] + "\n";
  }
  for (std::size_t rank = 0; rank < hostOfRank.size(); ++rank)
    if (!seen.count(static_cast<int>(rank))) problems += "rank " + std::to_string(rank) + ": did not report\n";
  return problems;
}

class Commands : public ScratchDirTest {
 protected:
  static lang::Rtg pipeline() {
    lang::Rtg rtg = rtgOf({vertex(0, "src", Requirement::CO), vertex(1, "fir", Requirement::CG, 4.0),
                           vertex(2, "fir", Requirement::CG, 4.0, 1), vertex(3, "sink", Requirement::CO)},
                          {edge(0, 1), edge(0, 2), edge(1, 3), edge(2, 3)});
    rtg.vertices[1].replicas = rtg.vertices[2].replicas = 2;
    rtg.cudaArchs = {"sm_80"};
    return rtg;
  }
  void writeInputs(const lang::Rtg& rtg, const Cluster& cluster) const {
    write("app.rtg.json", lang::writeRtgJson(rtg));
    write("cluster.json", writeClusterJson(cluster));
  }

  // Runs a streammap command and returns its status; its stdout and stderr go to out_ and err_.
  int capture(int (*command)(const Args&), const Args& args) {
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    const int status = command(args);
    out_ = ::testing::internal::GetCapturedStdout();
    err_ = ::testing::internal::GetCapturedStderr();
    return status;
  }

  // Runs `map` of app.rtg.json onto cluster.json, writing app.machinefile, with `extra` options.
  int map(std::vector<std::string> extra) {
    Args args = {path("app.rtg.json"), "-o", path("app.machinefile"), "--cluster", path("cluster.json")};
    args.insert(args.end(), extra.begin(), extra.end());
    return capture(mapCommand, args);
  }

  // Runs `check` on the mapping map wrote, against the same cluster file.
  int check(std::vector<std::string> extra) {
    Args args = {path("app.map.json"), "--cluster", path("cluster.json")};
    args.insert(args.end(), extra.begin(), extra.end());
    return capture(checkCommand, args);
  }

  std::string out_, err_;
};

TEST_F(Commands, MapWritesMachinefileMapAndTable) {
  Cluster c;
  c.nodes = {node("hostA", 4), node("hostB", 4, {a100(0), a100(1)})};
  writeInputs(pipeline(), c);
  ASSERT_EQ(map({"--dot", path("app.dot"), "--explain"}), 0) << err_;
  // refine: everything on hostB (period 4 = the two fir ranks on its two GPUs, nothing crosses) beats
  // the paper's src/sink on hostA (same period, 4 x 4096 bytes crossing).
  EXPECT_EQ(read("app.machinefile"), "hostB:4\n");
  MapRecord record;
  std::string error;
  ASSERT_TRUE(parseMapJson(read("app.map.json"), record, error)) << error;
  EXPECT_EQ(record.ranks[1].mode, "gpu");
  EXPECT_EQ(record.ranks[2].mode, "gpu");
  EXPECT_NE(*record.ranks[1].device, *record.ranks[2].device);  // spread over the two GPUs
  EXPECT_EQ(record.source.path, path("cluster.json"));
  EXPECT_NE(out_.find("predicted period: 4"), std::string::npos) << out_;
  EXPECT_NE(out_.find("cost model: t_v = cost / speed"), std::string::npos) << out_;
  EXPECT_NE(out_.find("run: mpiexec -f " + path("app.machinefile") + " -n 4 " + path("app")), std::string::npos)
      << out_;
  EXPECT_NE(out_.find("rank 1 (fir[0], CG) -> hostB"), std::string::npos) << out_;
  EXPECT_NE(read("app.dot").find("subgraph \"cluster_1\""), std::string::npos);

  ASSERT_EQ(map({"--format", "openmpi", "--algorithm", "paper"}), 0) << err_;
  EXPECT_EQ(read("app.machinefile"), "hostA slots=2\nhostB slots=2\n");
  EXPECT_EQ(read("app.rankfile"),
            "rank 0=hostA slot=0\nrank 1=hostB slot=0\nrank 2=hostB slot=1\nrank 3=hostA slot=1\n");
}

// A cluster without any GPU (a laptop, the demo, CI) runs the GPU VNODEs on the host path without
// --allow-host-fallback, saying so in one line.
TEST_F(Commands, ClusterWithoutAnyGpuRunsGpuVnodesOnTheHostPath) {
  Cluster noGpu;
  noGpu.nodes = {node("hostA", 4)};
  writeInputs(pipeline(), noGpu);
  ASSERT_EQ(map({}), 0) << err_;
  EXPECT_NE(err_.find("warning: the cluster has no GPU: 2 CG vertex(es) run on a CPU (host-fallback)"),
            std::string::npos)
      << err_;
  EXPECT_NE(read("app.map.json").find("\"mode\": \"host-fallback\""), std::string::npos);
  EXPECT_EQ(check({}), 0) << err_;
}

// One definition of "this binary runs on this GPU" (binaryRunsOn) for map and check: map never places
// GPU work on a GPU check then refuses. A Tesla K20m (3.5) is no GPU for an sm_80 binary.
TEST_F(Commands, MapUsesOnlyGpusTheBinaryRunsOn) {
  const GpuInfo k20m = gpu(0, 13, 706000, 3, 5, 5ull << 30);
  Cluster mixed;
  mixed.nodes = {node("hostA", 4, {k20m}), node("hostB", 4, {k20m, a100(1)})};
  mixed.nodes[0].gpus[0].name = mixed.nodes[1].gpus[0].name = "Tesla K20m";
  writeInputs(pipeline(), mixed);
  ASSERT_EQ(map({"--explain"}), 0) << err_;
  EXPECT_NE(err_.find("note: not a GPU for this binary (built for sm_80; disparcc --cuda-arch adds one): hostA gpu 0 "
                      "(Tesla K20m, compute capability 3.5), hostB gpu 0 (Tesla K20m, compute capability 3.5)"),
            std::string::npos)
      << err_;
  MapRecord record;
  std::string error;
  ASSERT_TRUE(parseMapJson(read("app.map.json"), record, error)) << error;
  for (const RankRecord& r : record.ranks)
    if (r.mode == "gpu") {
      EXPECT_EQ(r.host, "hostB");
      EXPECT_EQ(r.device, 1);
    }
  EXPECT_EQ(check({}), 0) << err_;

  // Only GPUs it cannot run on: an error naming the architectures, not a mapping check then refuses.
  Cluster old;
  old.nodes = {node("hostA", 4, {k20m})};
  old.nodes[0].gpus[0].name = "Tesla K20m";
  writeInputs(pipeline(), old);
  EXPECT_EQ(map({}), 1);
  EXPECT_NE(err_.find("needs a GPU (CG) but no usable node has one the binary runs on (built for sm_80; rebuild "
                      "with disparcc --cuda-arch for hostA gpu 0 (Tesla K20m, compute capability 3.5)); use "
                      "--allow-host-fallback"),
            std::string::npos)
      << err_;
  EXPECT_EQ(map({"--allow-host-fallback"}), 0) << err_;
  EXPECT_NE(read("app.map.json").find("\"mode\": \"host-fallback\""), std::string::npos);
  EXPECT_EQ(check({}), 0) << err_;
}

TEST_F(Commands, FailuresSayWhatAndWriteNothing) {
  struct Case {
    const char* name;
    lang::Rtg rtg;
    Cluster cluster;
    std::string expected;
  };
  Cluster cpuOnly, empty, downOnly, fine;
  // GPUs exist (on a down node), none usable: the CG vertices need --allow-host-fallback.
  cpuOnly.nodes = {node("hostA", 4), node("hostB", 4, {a100(0)})};
  cpuOnly.nodes[1].status = NodeStatus::Down;
  downOnly.nodes = {node("hostA", 4, {a100(0)})};
  downOnly.nodes[0].status = NodeStatus::Down;
  fine.nodes = {node("hostA", 4, {a100(0)})};
  const std::vector<Case> cases = {
      {"no gpu", pipeline(), cpuOnly,
       "vertex 1 (vnode 'fir') needs a GPU (CG) but no usable node has one; use --allow-host-fallback"},
      {"empty", pipeline(), empty, "cluster is empty: no nodes"},
      {"down only", pipeline(), downOnly, "cluster has no usable node: every node is down or drained"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    writeInputs(k.rtg, k.cluster);
    EXPECT_EQ(map({}), 1);
    EXPECT_NE(err_.find(k.expected), std::string::npos) << err_;
    EXPECT_FALSE(exists("app.machinefile"));
    EXPECT_FALSE(exists("app.map.json"));
  }
  // Malformed RTGs (parseRtgJson's messages, prefixed with the file).
  const std::string good = lang::writeRtgJson(pipeline());
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  const std::vector<std::pair<std::string, std::string>> bad = {
      {replaced("\"version\": 1", "\"version\": 7"), "rtg.version: unsupported format version 7"},
      {replaced("\"id\": 2", "\"id\": 5"), "vertices[2].id: expected 2"},
      {replaced("\"to\": 3", "\"to\": 9"), "edges[2].to: no vertex 9"},
  };
  write("cluster.json", writeClusterJson(fine));
  for (const auto& [text, expected] : bad) {
    write("app.rtg.json", text);
    EXPECT_EQ(map({}), 1);
    EXPECT_NE(err_.find(path("app.rtg.json") + ": " + expected), std::string::npos) << err_;
    EXPECT_FALSE(exists("app.machinefile"));
  }
  // Host fallback: mapped, with a warning.
  cpuOnly.nodes.pop_back();
  writeInputs(pipeline(), cpuOnly);
  EXPECT_EQ(map({"--allow-host-fallback"}), 0) << err_;
  EXPECT_NE(err_.find("warning: 2 CG vertex(es) run on a CPU (host-fallback)"), std::string::npos) << err_;
  EXPECT_NE(read("app.map.json").find("\"mode\": \"host-fallback\""), std::string::npos);
  // Oversubscription warning, with the count.
  writeInputs(pipeline(), fine);
  EXPECT_EQ(map({"--algorithm", "paper"}), 0) << err_;
  EXPECT_NE(err_.find("warning: 4 vertices for 1 slots"), std::string::npos) << err_;
  EXPECT_NE(err_.find("oversubscribed by 3"), std::string::npos) << err_;
  // Bad options.
  EXPECT_EQ(map({"--algorithm", "best"}), 2);  // a usage error
  EXPECT_NE(err_.find("option --algorithm: expected 'refine', 'paper' or 'round-robin', got 'best'"), std::string::npos)
      << err_;
}

// Replaces the first `from` in `text`, which must hold it.
std::string replacedOnce(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// A number beyond double range in any input is an error naming the file and the field, never an abort.
TEST_F(Commands, NumbersBeyondDoubleRangeNameFileAndField) {
  Cluster c;
  c.nodes = {node("hostA", 4), node("hostB", 4, {a100(0)})};
  writeInputs(pipeline(), c);
  write("app.rtg.json", replacedOnce(read("app.rtg.json"), "\"cost\": 1.0", "\"cost\": 1e999"));
  EXPECT_EQ(map({}), 1);
  EXPECT_NE(err_.find(path("app.rtg.json") + ": vertices[0].cost: number out of range, got 1e999"), std::string::npos)
      << err_;
  EXPECT_FALSE(exists("app.machinefile"));
  EXPECT_FALSE(exists("app.map.json"));

  writeInputs(pipeline(), c);
  write("cluster.json", replacedOnce(read("cluster.json"), "\"speed\": 1.0", "\"speed\": 1e999"));
  EXPECT_EQ(map({}), 1);
  EXPECT_NE(err_.find(path("cluster.json") + ": nodes[0].cpu.speed: number out of range, got 1e999"), std::string::npos)
      << err_;
  EXPECT_FALSE(exists("app.map.json"));

  writeInputs(pipeline(), c);
  ASSERT_EQ(map({}), 0) << err_;
  const std::string mapText = read("app.map.json");
  const std::size_t period = mapText.find("\"period\": ");
  ASSERT_NE(period, std::string::npos);
  const std::size_t comma = mapText.find(',', period);
  write("app.map.json", mapText.substr(0, period) + "\"period\": 1e999" + mapText.substr(comma));
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(checkCommand({path("app.map.json")}), 1);
  ::testing::internal::GetCapturedStdout();
  const std::string checkErr = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(checkErr.find(path("app.map.json") + ": map.predicted.period: number out of range, got 1e999"),
            std::string::npos)
      << checkErr;
}

// Costs so large that the predicted period overflows are refused; no file holds "inf".
TEST_F(Commands, CostsThatOverflowThePeriodAreRefused) {
  Cluster c;
  c.nodes = {node("hostA", 4), node("hostB", 4, {a100(0)})};
  lang::Rtg rtg = pipeline();
  for (lang::RtgVertex& v : rtg.vertices) v.cost = 1e308;
  writeInputs(rtg, c);
  EXPECT_EQ(map({}), 1);
  // The CG vertex's host path (100 times its cost) overflows first.
  EXPECT_NE(err_.find("vertices[1]: costs too large: cost 1e+308 on a CPU's host path is 100 times that, more than "
                      "the largest double"),
            std::string::npos)
      << err_;
  EXPECT_FALSE(exists("app.machinefile"));
  EXPECT_FALSE(exists("app.map.json"));
  // A slow node makes one large cost overflow too.
  rtg = pipeline();
  rtg.vertices[0].cost = 1e300;
  c.nodes[0].cpuSpeed = 1e-10;
  writeInputs(rtg, c);
  EXPECT_EQ(map({}), 1);
  EXPECT_NE(err_.find("over the slowest speed (1e-10, hostA) overflows the predicted period"), std::string::npos)
      << err_;
  EXPECT_FALSE(exists("app.map.json"));
}

TEST_F(Commands, CheckReportsChangesWithExitStatus) {
  Cluster c;
  c.nodes = {node("hostA", 4), node("hostB", 4, {a100(0)})};
  writeInputs(pipeline(), c);
  ASSERT_EQ(map({}), 0) << err_;
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(checkCommand({path("app.map.json")}), 0);
  EXPECT_NE(::testing::internal::GetCapturedStdout().find(": ok:"), std::string::npos);
  c.nodes[1].gpus.clear();
  write("cluster.json", writeClusterJson(c));
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(checkCommand({path("app.map.json")}), 1);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("changed: hostB: gpu 0 (gpu-sm80) gone"), std::string::npos) << out;
  EXPECT_NE(out.find("problem: rank 1 (fir[0]): hostB has no gpu 0"), std::string::npos) << out;
}

TEST_F(Commands, RunMapsChecksAndLaunchesOnTheMappedHosts) {
  Cluster c;
  c.nodes = {node("hostA", 2), node("hostB", 2, {a100(0)}), node("hostC", 2, {a100(0)})};
  writeInputs(pipeline(), c);
  // The "program": a script that reports where each rank ran, then fails with status 3 once all ranks
  // ($PMI_SIZE: as many as the mapping has) have reported (MPICH ends the other ranks as soon as one
  // exits non-zero: a slow rank would otherwise never report on a loaded machine).
  write("app", "#!/bin/sh\nran='" + path("ran") +
                   "'\necho \"$PMI_RANK $MPIR_CVAR_CH3_INTERFACE_HOSTNAME\" >> \"$ran\"\n"
                   "i=0\nwhile [ \"$(wc -l < \"$ran\")\" -lt \"$PMI_SIZE\" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i "
                   "+ 1)); done\n"
                   "exit 3\n");
  ASSERT_EQ(::chmod(path("app").c_str(), 0755), 0);
  ::testing::internal::CaptureStderr();
  const int status = runCommand({"--launcher", "fork", "--cluster", path("cluster.json"), path("app")});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("mapping " + path("app.rtg.json") + " (no mapping yet)"), std::string::npos) << err;
  EXPECT_EQ(status, 3);  // the program's own exit status comes back
  ASSERT_TRUE(exists("app.map.json"));
  EXPECT_EQ(placementMismatches(read("app.map.json"), read("ran")), "");

  // The placement check notices a rank on the wrong host.
  std::string ran = read("ran");
  const std::size_t at = ran.find("hostB");
  ASSERT_NE(at, std::string::npos);
  ran.replace(at, 5, "hostA");
  EXPECT_NE(placementMismatches(read("app.map.json"), ran).find(": ran on hostA, mapped to hostB"), std::string::npos);

  // A changed cluster triggers a remap before launching.
  c.nodes[2].status = NodeStatus::Drained;
  write("cluster.json", writeClusterJson(c));
  ASSERT_EQ(::unlink(path("ran").c_str()), 0);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(runCommand({"--launcher", "fork", "--cluster", path("cluster.json"), path("app")}), 3);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("resources changed since mapping"), std::string::npos);
  MapRecord remapped;
  std::string error;
  ASSERT_TRUE(parseMapJson(read("app.map.json"), remapped, error)) << error;
  for (const RankRecord& rank : remapped.ranks) EXPECT_NE(rank.host, "hostC") << "rank " << rank.rank;
}

// The files of another MPI's launcher: map warns (run would refuse them), and its "wrote" line names every
// file it wrote.
TEST_F(Commands, MapWarnsAboutAnotherMpisFilesAndNamesEveryFileWritten) {
  Cluster c;
  c.nodes = {node("hostA", 4, {a100(0)})};
  lang::Rtg rtg = pipeline();
  rtg.mpi = "mpich";
  writeInputs(rtg, c);
  ASSERT_EQ(map({"--format", "openmpi", "--dot", path("app.dot")}), 0) << err_;
  EXPECT_NE(err_.find("warning: " + path("app") +
                      " was built for mpich (its rtg says so) but --format openmpi writes "
                      "openmpi's launcher files"),
            std::string::npos)
      << err_;
  EXPECT_NE(out_.find("wrote " + path("app.machinefile") + ", " + path("app.rankfile") + ", " + path("app.map.json") +
                      " and " + path("app.dot") + "\n"),
            std::string::npos)
      << out_;
  ASSERT_EQ(map({}), 0) << err_;
  EXPECT_EQ(err_.find("was built for"), std::string::npos) << err_;
  EXPECT_NE(out_.find("wrote " + path("app.machinefile") + " and " + path("app.map.json") + "\n"), std::string::npos)
      << out_;
}

// Property (issue 36): whatever byte a value holds, the batch script sbatch writes holds the intended
// options only. Every option and the paths that reach the script get every byte 0x01-0xff inside a
// value: either the command refuses it (exit 2, naming the option, writing nothing), or every line of
// the script is a comment without control characters, one of the three commands, or an #SBATCH line of
// the expected options, each once, the tested one with exactly the value given.
TEST_F(Commands, SbatchScriptsHoldOnlyTheIntendedOptionsForEveryByte) {
  Cluster c;
  c.nodes = {node("hostA", 4), node("hostB", 4, {a100(0)})};
  write("cluster.json", writeClusterJson(c));
  const std::string rtgText = lang::writeRtgJson(pipeline());
  int accepted = 0, refused = 0;
  for (int b = 1; b < 256; ++b) {
    const std::string byte(1, static_cast<char>(b));
    struct Case {
      std::string option, value;  // option "" : the byte is in the RTG's file name
    };
    std::vector<Case> cases = {
        {"--partition", "p" + byte + "q"}, {"--job-name", "j" + byte + "k"}, {"--time", "1" + byte + "0"}};
    if (b != '/') cases.push_back({"-o", path("out" + byte + ".sbatch")}), cases.push_back({"", "app" + byte + "x"});
    for (const Case& k : cases) {
      SCOPED_TRACE("byte " + std::to_string(b) + " in " + (k.option.empty() ? "the rtg path" : k.option));
      const std::string stem = k.option.empty() ? k.value : "app";
      write(stem + ".rtg.json", rtgText);
      const std::string script = k.option == "-o" ? k.value : path(stem + ".sbatch");
      Args args = {path(stem + ".rtg.json"), "--cluster", path("cluster.json")};
      if (!k.option.empty() && k.option != "-o") args.insert(args.end(), {k.option, k.value});
      args.insert(args.end(), {"-o", script});
      const int status = capture(sbatchCommand, args);
      if (status != 0) {
        ++refused;
        EXPECT_EQ(status, 2) << err_;
        EXPECT_NE(err_.find("option " + k.option + ":"), std::string::npos) << err_;
        EXPECT_FALSE(fileExists(script));
        continue;
      }
      ++accepted;
      std::map<std::string, int> options;
      std::istringstream lines(read(script.substr(script.rfind('/') + 1)));
      for (std::string line; std::getline(lines, line);) {
        for (const char ch : line)
          EXPECT_FALSE(static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) << "control character in: " << line;
        if (line.rfind("#SBATCH ", 0) == 0) {
          const std::size_t equals = line.find('=');
          const std::string option = line.substr(8, equals == std::string::npos ? std::string::npos : equals - 8);
          ++options[option];
          if (option == k.option) {
            EXPECT_EQ(line, "#SBATCH " + k.option + "=" + k.value);
          }
        } else if (line.rfind('#', 0) != 0) {
          EXPECT_TRUE(line == "set -eu" || line.rfind("export SLURM_HOSTFILE=", 0) == 0 ||
                      line.rfind("exec srun ", 0) == 0)
              << "unexpected command: " << line;
          // The program's path, as bash reads the quoted word back, is the program's path.
          const std::string prefix = "exec srun --mpi=pmi2 -n 4 --distribution=arbitrary ";
          if (k.option.empty() && line.rfind(prefix, 0) == 0) {
            const std::string word =
                line.substr(prefix.size(), line.size() - prefix.size() - std::string(" \"$@\"").size());
            write("word.sh", "printf '%s' " + word + " > '" + path("word.out") + "'\n");
            ASSERT_EQ(std::system(("bash '" + path("word.sh") + "'").c_str()), 0) << line;
            EXPECT_EQ(read("word.out"), path(stem)) << line;
          }
        }
      }
      std::map<std::string, int> expected = {
          {"--job-name", 1}, {"--nodes", 1}, {"--nodelist", 1}, {"--ntasks", 1}, {"--exclusive", 1}};
      if (k.option == "--partition" || k.option == "--time") expected[k.option] = 1;
      EXPECT_EQ(options, expected);
      ASSERT_EQ(::unlink(script.c_str()), 0);
    }
  }
  // Both outcomes happen: the safe bytes are written as given, the rest refused.
  EXPECT_GT(accepted, 255);
  EXPECT_GT(refused, 255);
}

// A history row no profile add would record (1e308 s per message, stored by an older version or by hand)
// neither crashes nor poisons map and profile show: the row is named and left out.
TEST_F(Commands, APoisonedHistoryRowIsIgnoredAndNamed) {
  Cluster c;
  c.nodes = {node("hostA", 4, {a100(0)})};
  writeInputs(pipeline(), c);
  std::string error;
  std::unique_ptr<ResourceDb> db = ResourceDb::open(path("history.db"), ResourceDb::OpenMode::CreateIfMissing, error);
  ASSERT_TRUE(db) << error;
  ProfileRunRecord run;
  run.program = "app";
  run.source = "poisoned.json";
  for (const char* vnode : {"src", "sink"}) {
    CostSample poisoned;
    poisoned.program = "app";
    poisoned.vnode = vnode;
    poisoned.deviceClass = poisoned.deviceModel = "cpu";
    poisoned.host = "hostA";
    poisoned.secondsPerMessage = 1e308;
    run.samples.push_back(poisoned);
  }
  std::int64_t runId = 0;
  ASSERT_TRUE(db->recordProfileRun(run, runId, error)) << error;
  db.reset();
  ASSERT_EQ(map({"--history", path("history.db")}), 0) << err_;
  EXPECT_NE(err_.find("history: run " + std::to_string(runId) +
                      ": vnode 'src' replica 0: work per message 1e+308 is not a measurement"),
            std::string::npos)
      << err_;
  EXPECT_EQ(capture(profileCommand, {"show", "app", "--db", path("history.db")}), 0);
  EXPECT_NE(err_.find("vnode 'sink' replica 0: work per message 1e+308 is not a measurement"), std::string::npos)
      << err_;
}

// Issue 36, item 2: no command removed a run. `profile remove RUN` deletes one run and its samples,
// `--program P [--before DATE]` a program's runs, in one transaction; `profile show` lists the runs.
TEST_F(Commands, ProfileRemoveDeletesRunsAndTheirSamples) {
  std::string error;
  std::unique_ptr<ResourceDb> db = ResourceDb::open(path("history.db"), ResourceDb::OpenMode::CreateIfMissing, error);
  ASSERT_TRUE(db) << error;
  const auto record = [&](const std::string& program, double seconds) {
    ProfileRunRecord run;
    run.program = program;
    run.source = program + ".json";
    CostSample sample;
    sample.program = program;
    sample.vnode = "src";
    sample.deviceClass = sample.deviceModel = "cpu";
    sample.host = "hostA";
    sample.secondsPerMessage = seconds;
    run.samples.push_back(sample);
    run.pipes.push_back(PipeSample{0, program, "p", 10, 40});
    std::int64_t id = 0;
    EXPECT_TRUE(db->recordProfileRun(run, id, error)) << error;
    return id;
  };
  const std::int64_t first = record("app", 1e300), second = record("app", 0.5), other = record("other", 0.25);
  db.reset();
  const auto runsOf = [&](const std::string& program) {
    std::unique_ptr<ResourceDb> reader = ResourceDb::open(path("history.db"), ResourceDb::OpenMode::Existing, error);
    std::vector<CostSample> samples;
    std::vector<PipeSample> pipes;
    EXPECT_TRUE(reader->readHistory(program, samples, pipes, error)) << error;
    std::set<std::int64_t> runs;
    for (const CostSample& c : samples) runs.insert(c.runId);
    for (const PipeSample& p : pipes) EXPECT_TRUE(runs.count(p.runId)) << "pipe sample of removed run " << p.runId;
    return runs;
  };
  ASSERT_EQ(capture(profileCommand, {"show", "--db", path("history.db")}), 0) << err_;
  EXPECT_NE(out_.find("\n    1  "), std::string::npos) << out_;  // the run list

  ASSERT_EQ(capture(profileCommand, {"remove", std::to_string(first), "--db", path("history.db")}), 0) << err_;
  EXPECT_EQ(out_, "removed run " + std::to_string(first) + " from " + path("history.db") + "\n");
  EXPECT_EQ(runsOf("app"), (std::set<std::int64_t>{second}));
  EXPECT_EQ(capture(profileCommand, {"remove", std::to_string(first), "--db", path("history.db")}), 1);
  EXPECT_NE(err_.find("no run " + std::to_string(first) + " in "), std::string::npos) << err_;

  // Before a date long past: nothing; before one to come: every run of the program, the other kept.
  ASSERT_EQ(
      capture(profileCommand, {"remove", "--program", "app", "--before", "2000-01-01", "--db", path("history.db")}), 0)
      << err_;
  EXPECT_NE(out_.find("removed 0 run(s) of program 'app' recorded before 2000-01-01T00:00:00 UTC"), std::string::npos)
      << out_;
  ASSERT_EQ(capture(profileCommand,
                    {"remove", "--program", "app", "--before", "2999-12-31T23:59", "--db", path("history.db")}),
            0)
      << err_;
  EXPECT_NE(out_.find("removed 1 run(s) of program 'app'"), std::string::npos) << out_;
  EXPECT_TRUE(runsOf("app").empty());
  EXPECT_EQ(runsOf("other"), (std::set<std::int64_t>{other}));

  // Usage errors: exit 2, nothing removed.
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"remove"},
                                              {"remove", "x1"},
                                              {"remove", "0"},
                                              {"remove", "3", "--program", "other"},
                                              {"remove", "--program", "other", "--before", "2026-02-31"},
                                              {"remove", "--program", "other", "--before", "soon"}}) {
    std::vector<std::string> args = bad;
    args.insert(args.end(), {"--db", path("history.db")});
    EXPECT_EQ(capture(profileCommand, args), 2) << bad[1];
  }
  EXPECT_EQ(runsOf("other"), (std::set<std::int64_t>{other}));
}

// Issue 36, item 4: names in the history came from profile files; `profile show` prints them escaped, so
// that a VNODE or model name cannot forge a row of its table or move the cursor.
TEST_F(Commands, ProfileShowEscapesWhatTheProfilesSaid) {
  std::string error;
  std::unique_ptr<ResourceDb> db = ResourceDb::open(path("history.db"), ResourceDb::OpenMode::CreateIfMissing, error);
  ASSERT_TRUE(db) << error;
  ProfileRunRecord run;
  run.program = "app";
  run.source = "p.json";
  CostSample sample;
  sample.program = "app";
  sample.vnode = "src\napp forged 1 1/1 1 0%";
  sample.deviceClass = "cpu";
  sample.deviceModel = "CPU\x1b[2J";
  sample.host = "hostA";
  sample.secondsPerMessage = 0.5;
  run.samples.push_back(sample);
  std::int64_t id = 0;
  ASSERT_TRUE(db->recordProfileRun(run, id, error)) << error;
  db.reset();
  ASSERT_EQ(capture(profileCommand, {"show", "--db", path("history.db")}), 0) << err_;
  EXPECT_NE(out_.find("src\\napp forged"), std::string::npos) << out_;
  EXPECT_NE(out_.find("CPU\\x1b[2J"), std::string::npos) << out_;
  EXPECT_EQ(out_.find("\x1b"), std::string::npos) << out_;
  EXPECT_EQ(out_.find("\napp forged"), std::string::npos) << out_;
}

// Issue 36, item 4: a file name may hold anything; the messages that name it print it escaped, so that a
// newline in it cannot forge a second message.
TEST(InputFiles, MessagesNameAFileEscaped) {
  lang::Rtg rtg;
  std::string error;
  EXPECT_FALSE(readRtg("/nonexistent/a\nstreammap: error: forged.rtg.json", rtg, error));
  EXPECT_EQ(error.rfind("/nonexistent/a\\nstreammap: error: forged.rtg.json: cannot open: ", 0), 0u) << error;
  Cluster cluster;
  EXPECT_FALSE(readClusterJsonFile("/nonexistent/c\x1b[2J.json", cluster, error));
  EXPECT_EQ(error, "/nonexistent/c\\x1b[2J.json: cannot read cluster description");
}

// Outputs follow the one rule (dispar_lang/OutputTarget.h): a FIFO or a directory is refused before
// anything is written, a link's target is written and the link stays, an existing file keeps its mode.
TEST_F(Commands, OutputsNeverReplaceDevicesFifosOrLinks) {
  Cluster c;
  c.nodes = {node("hostA", 4, {a100(0)})};
  writeInputs(pipeline(), c);
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0644), 0);
  auto mapTo = [&](const std::string& output) { return map({"-o", output}); };  // the last -o counts
  EXPECT_EQ(mapTo(path("fifo")), 1);
  EXPECT_NE(err_.find(path("fifo") + "': is a FIFO; not replaced"), std::string::npos) << err_;
  struct stat st{};
  ASSERT_EQ(::lstat(path("fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_FALSE(exists("fifo.map.json"));  // all or nothing
  EXPECT_EQ(mapTo(path("")), 1);          // the scratch directory itself
  EXPECT_NE(err_.find("is a directory; not replaced"), std::string::npos) << err_;

  // A link: its target gets the machinefile; the link stays a link; the target keeps its mode.
  write("real.machinefile", "old\n");
  ASSERT_EQ(::chmod(path("real.machinefile").c_str(), 0600), 0);
  ASSERT_EQ(::symlink(path("real.machinefile").c_str(), path("link.machinefile").c_str()), 0);
  ASSERT_EQ(mapTo(path("link.machinefile")), 0) << err_;
  ASSERT_EQ(::lstat(path("link.machinefile").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(read("real.machinefile"), "hostA:4\n");
  ASSERT_EQ(::stat(path("real.machinefile").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);

  // A read-only file is not replaced behind the user's back.
  write("readonly.machinefile", "mine\n");
  ASSERT_EQ(::chmod(path("readonly.machinefile").c_str(), 0444), 0);
  EXPECT_EQ(mapTo(path("readonly.machinefile")), 1);
  EXPECT_NE(err_.find("is read-only; not replaced"), std::string::npos) << err_;
  EXPECT_EQ(read("readonly.machinefile"), "mine\n");

  // run --profile is checked before the job starts.
  EXPECT_EQ(capture(runCommand, {"--profile", path("fifo"), "--cluster", path("cluster.json"), path("app")}), 1);
  EXPECT_NE(err_.find("streammap run: error: --profile '" + path("fifo") + "': is a FIFO"), std::string::npos) << err_;
}

// Open MPI's mpirun refuses root: run, as root, sets the two variables that allow it and says so; as
// another user it sets nothing.
TEST_F(Commands, RunAsRootTellsOpenMpiItMayRun) {
  const bool root = ::geteuid() == 0;
  Cluster c;
  c.nodes = {node("hostA", 4, {a100(0)})};
  lang::Rtg rtg = pipeline();
  rtg.mpi = "openmpi";
  writeInputs(rtg, c);
  // The "mpirun": a script that reports the two variables it was given.
  write("mpirun", "#!/bin/sh\necho \"root=$OMPI_ALLOW_RUN_AS_ROOT confirm=$OMPI_ALLOW_RUN_AS_ROOT_CONFIRM\" > '" +
                      path("env") + "'\n");
  ASSERT_EQ(::chmod(path("mpirun").c_str(), 0755), 0);
  ::setenv("DISPAR_MPIRUN", path("mpirun").c_str(), 1);
  ::unsetenv("OMPI_ALLOW_RUN_AS_ROOT");
  const int status = capture(runCommand, {"--cluster", path("cluster.json"), path("app")});
  ::unsetenv("DISPAR_MPIRUN");
  EXPECT_EQ(status, 0) << err_;
  EXPECT_EQ(read("env"), root ? "root=1 confirm=1\n" : "root= confirm=\n");
  EXPECT_EQ(err_.find("running as root: set OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1") !=
                std::string::npos,
            root)
      << err_;
}

TEST_F(Commands, HostNamesThatWouldRewriteALauncherFileAreRefused) {
  // `#n1` would be a comment in a machinefile (every rank then runs locally); `n1:4` a slot count.
  const lang::Rtg rtg = rtgOf({vertex(0, "src", Requirement::CO), vertex(1, "sink", Requirement::CO)}, {edge(0, 1)});
  for (const char* bad : {"#n1", "n1:4"}) {
    Cluster c;
    c.nodes = {node(bad, 4)};
    writeInputs(rtg, c);
    EXPECT_EQ(map({}), 1) << bad;
    EXPECT_NE(err_.find("host name '" + std::string(bad) + "' has"), std::string::npos) << err_;
    EXPECT_FALSE(exists("app.machinefile")) << bad;
    EXPECT_FALSE(exists("app.map.json")) << bad;
  }
  // Names from elsewhere than the resource source (a Slurm allocation's environment) meet the same rule
  // before any launcher file is written.
  Cluster c;
  c.nodes = {node("n1", 4)};
  writeInputs(rtg, c);
  ::setenv("SLURM_JOB_ID", "7", 1);
  ::setenv("SLURM_JOB_NODELIST", "evil#1", 1);
  ::setenv("SLURM_JOB_CPUS_PER_NODE", "2", 1);
  const int status = map({});
  for (const char* name : {"SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURM_JOB_CPUS_PER_NODE"}) ::unsetenv(name);
  EXPECT_EQ(status, 1);
  EXPECT_NE(err_.find("host name 'evil#1' has '#'"), std::string::npos) << err_;
  EXPECT_NE(err_.find("nothing written"), std::string::npos) << err_;
  EXPECT_FALSE(exists("app.machinefile"));
}

// Every streammap command's options (as its --help prints them from its option table) appear in
// docs/streammap.md, so the reference cannot fall behind the tool.
TEST(StreammapDocs, EveryCommandsOptionsAreDocumented) {
  std::string docs, error;
  ASSERT_TRUE(readFile(std::string(DISPAR_SOURCE_DIR) + "/docs/streammap.md", docs, error)) << error;
  const std::pair<const char*, int (*)(const Args&)> commands[] = {
      {"--discover", discoverCommand}, {"daemon", daemonCommand},    {"nodes", nodesCommand}, {"node", nodeCommand},
      {"cluster", clusterCommand},     {"map", mapCommand},          {"check", checkCommand}, {"run", runCommand},
      {"sbatch", sbatchCommand},       {"simulate", simulateCommand}};
  int options = 0;
  for (const auto& [name, command] : commands) {
    ::testing::internal::CaptureStdout();
    const int status = command({"--help"});
    const std::string help = ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(status, 0) << name;
    EXPECT_EQ(help.rfind("usage: streammap " + std::string(name), 0), 0u) << help;
    std::istringstream lines(help);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("  -", 0) != 0) continue;
      const std::string option = line.substr(2, line.find(' ', 2) - 2);
      if (option == "--help") continue;
      ++options;
      EXPECT_NE(docs.find(option), std::string::npos)
          << "streammap " << name << " " << option << " is not in docs/streammap.md";
    }
  }
  EXPECT_GT(options, 30);
}

}  // namespace
}  // namespace dispar::streammap
