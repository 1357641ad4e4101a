// Slurm's outputs as streammap reads them: gres strings, node states, `sinfo --json` of 22.05 and of
// 23.02+ (numbers as objects, state as a list), `scontrol show node -o`, host lists, the allocation's
// environment and `scontrol show job -d`. Texts are trimmed captures of real Slurm 22.05 output.
#include "streammap/Slurm.h"

#include <gtest/gtest.h>

#include <map>

namespace dispar::streammap::slurm {
namespace {

TEST(SlurmGres, CountTypeIndicesAndOtherResources) {
  std::vector<GpuInfo> gpus;
  std::string error;
  ASSERT_TRUE(parseGres("gpu:a100:2(S:0-1),mps:100,gpu:v100:1", gpus, error)) << error;
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[0].name, "NVIDIA A100");
  EXPECT_EQ(gpus[0].ccMajor, 8);
  EXPECT_EQ(gpus[0].multiprocessors, 108);
  EXPECT_EQ(gpus[1].index, 1);
  EXPECT_EQ(gpus[2].name, "Tesla V100");
  EXPECT_EQ(gpus[2].index, 2);
  ASSERT_TRUE(parseGres("gpu:4", gpus, error)) << error;
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_EQ(gpus[3].name, "gpu");
  EXPECT_EQ(gpus[3].ccMajor, 0);  // unknown model: unknown capability
  ASSERT_TRUE(parseGres("gpu:A100_80GB:2(IDX:1,3)", gpus, error)) << error;
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].index, 1);
  EXPECT_EQ(gpus[1].index, 3);
  EXPECT_EQ(gpus[1].name, "NVIDIA A100");
  ASSERT_TRUE(parseGres("gpu:l40s:1(IDX:0)", gpus, error)) << error;
  EXPECT_EQ(gpus[0].name, "NVIDIA L40S");  // not L40, not L4
  EXPECT_EQ(gpus[0].ccMinor, 9);
  for (const char* none : {"", "(null)", "N/A", "nic:2"}) {
    ASSERT_TRUE(parseGres(none, gpus, error)) << none;
    EXPECT_TRUE(gpus.empty()) << none;
  }
  EXPECT_FALSE(parseGres("gpu:a100:two", gpus, error));
  EXPECT_EQ(error, "gres 'gpu:a100:two': 'two' is not a GPU count");
  EXPECT_FALSE(parseGres("gpu:a100:2(IDX:0)", gpus, error));
  EXPECT_EQ(error, "gres 'gpu:a100:2(IDX:0)': 2 GPUs but 1 indices");
}

TEST(SlurmState, UpDrainedDown) {
  EXPECT_EQ(statusOfState({"idle"}), NodeStatus::Up);
  EXPECT_EQ(statusOfState({"mixed"}), NodeStatus::Up);
  EXPECT_EQ(statusOfState({"ALLOCATED"}), NodeStatus::Up);
  EXPECT_EQ(statusOfState({"idle", "DRAIN"}), NodeStatus::Drained);   // 22.05: state + state_flags
  EXPECT_EQ(statusOfState({"IDLE+DRAIN"}), NodeStatus::Drained);      // scontrol
  EXPECT_EQ(statusOfState({"MIXED", "DRAIN"}), NodeStatus::Drained);  // 23.02: one list
  EXPECT_EQ(statusOfState({"drain"}), NodeStatus::Drained);
  EXPECT_EQ(statusOfState({"down*"}), NodeStatus::Down);
  EXPECT_EQ(statusOfState({"IDLE*"}), NodeStatus::Down);  // not responding
  EXPECT_EQ(statusOfState({"idle~"}), NodeStatus::Down);  // powered off
  EXPECT_EQ(statusOfState({"DOWN+NOT_RESPONDING"}), NodeStatus::Down);
  EXPECT_EQ(statusOfState({"future"}), NodeStatus::Down);
  EXPECT_EQ(statusOfState({"idle", "NOT_RESPONDING"}), NodeStatus::Down);
  EXPECT_EQ(statusOfState({"mixed-"}), NodeStatus::Up);  // planned for a job: still up
}

// `sinfo --json` of Slurm 22.05.8 (fields not read are cut).
const char* const kSinfo2205 = R"json({
  "meta": {"Slurm": {"release": "22.05.8"}},
  "errors": [],
  "nodes": [
    {"name": "cpu1", "cpus": 2, "sockets": 2, "cores": 1, "threads": 1, "real_memory": 4000, "gres": "",
     "state": "idle", "state_flags": []},
    {"name": "cpu2", "cpus": 2, "sockets": 2, "cores": 1, "threads": 1, "real_memory": 4000, "gres": "",
     "state": "idle", "state_flags": ["DRAIN"]},
    {"name": "gpu1", "cpus": 8, "sockets": 2, "cores": 2, "threads": 2, "real_memory": 8000,
     "gres": "gpu:a100:2(S:0-1)", "state": "mixed", "state_flags": []},
    {"name": "gpu1", "cpus": 8, "sockets": 2, "cores": 2, "threads": 2, "real_memory": 8000,
     "gres": "gpu:a100:2(S:0-1)", "state": "mixed", "state_flags": []},
    {"name": "gpu2", "cpus": 4, "sockets": 1, "cores": 4, "threads": 1, "real_memory": 8000,
     "gres": "gpu:v100:1", "state": "down", "state_flags": ["NOT_RESPONDING"]}
  ]})json";

TEST(SlurmNodes, SinfoJson2205) {
  std::vector<NodeInfo> nodes;
  std::string error;
  ASSERT_TRUE(parseSinfoJson(kSinfo2205, nodes, error)) << error;
  ASSERT_EQ(nodes.size(), 4u);  // gpu1, listed once per partition, is one node
  std::map<std::string, NodeInfo> by;
  for (const NodeInfo& n : nodes) by[n.host] = n;
  EXPECT_EQ(by["cpu1"].status, NodeStatus::Up);
  EXPECT_EQ(by["cpu2"].status, NodeStatus::Drained);
  EXPECT_EQ(by["gpu2"].status, NodeStatus::Down);
  EXPECT_EQ(by["gpu1"].threads, 8);
  EXPECT_EQ(by["gpu1"].cores, 4);
  EXPECT_EQ(by["gpu1"].sockets, 2);
  EXPECT_EQ(by["gpu1"].memoryBytes, 8000ull << 20);
  ASSERT_EQ(by["gpu1"].gpus.size(), 2u);
  EXPECT_EQ(by["gpu1"].gpus[1].index, 1);
  EXPECT_EQ(by["gpu2"].gpus.at(0).name, "Tesla V100");
  EXPECT_EQ(by["cpu1"].source, RecordSource::Import);
}

TEST(SlurmNodes, SinfoJsonOfLaterVersions) {
  // 23.02+: numbers may be {"set", "infinite", "number"} objects and the state a list.
  const char* text = R"json({"nodes": [{"name": "n1", "cpus": {"set": true, "infinite": false, "number": 16},
    "sockets": 1, "cores": 16, "threads": 1, "real_memory": {"set": true, "number": 64000},
    "gres": "gpu:h100:4", "state": ["IDLE", "DRAIN"]}]})json";
  std::vector<NodeInfo> nodes;
  std::string error;
  ASSERT_TRUE(parseSinfoJson(text, nodes, error)) << error;
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].threads, 16);
  EXPECT_EQ(nodes[0].memoryBytes, 64000ull << 20);
  EXPECT_EQ(nodes[0].status, NodeStatus::Drained);
  EXPECT_EQ(nodes[0].gpus.size(), 4u);
  EXPECT_EQ(nodes[0].gpus[0].ccMajor, 9);
}

TEST(SlurmNodes, SinfoJsonBadInputIsAnError) {
  std::vector<NodeInfo> nodes;
  std::string error;
  EXPECT_FALSE(parseSinfoJson("sinfo: error: unrecognized option '--json'", nodes, error));
  EXPECT_EQ(error, "sinfo --json: output is not a JSON object");
  EXPECT_FALSE(parseSinfoJson(R"json({"sinfo": []})json", nodes, error));
  EXPECT_NE(error.find("no \"nodes\" array"), std::string::npos) << error;
  EXPECT_FALSE(parseSinfoJson(R"json({"nodes": [{"cpus": 2}]})json", nodes, error));
  EXPECT_EQ(error, "sinfo --json: a node without a name");
  EXPECT_FALSE(parseSinfoJson(R"json({"nodes": [{"name": "x", "gres": "gpu:a:b"}]})json", nodes, error));
  EXPECT_EQ(error, "sinfo --json: node x: gres 'gpu:a:b': 'b' is not a GPU count");
}

TEST(SlurmNodes, ScontrolShowNodeOneLine) {
  const char* text =
      "NodeName=cpu2 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=0.76 "
      "AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=127.0.0.1 NodeHostName=vm Port=51563 "
      "Version=22.05.8 OS=Linux 6.1.0 #1 SMP PREEMPT_DYNAMIC  RealMemory=4000 AllocMem=0 FreeMem=21867 Sockets=2 "
      "Boards=1 State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1\n"
      "NodeName=gpu1 CoresPerSocket=2 CPUTot=8 Gres=gpu:a100:2(S:0-1) RealMemory=8000 Sockets=2 State=MIXED "
      "ThreadsPerCore=2\n"
      "NodeName=gpu2 CoresPerSocket=4 CPUTot=4 Gres=gpu:v100:1 RealMemory=8000 Sockets=1 State=DOWN* "
      "ThreadsPerCore=1\n";
  std::vector<NodeInfo> nodes;
  std::string error;
  ASSERT_TRUE(parseScontrolNodes(text, nodes, error)) << error;
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].host, "cpu2");
  EXPECT_EQ(nodes[0].status, NodeStatus::Drained);
  EXPECT_EQ(nodes[0].threads, 2);
  EXPECT_EQ(nodes[0].memoryBytes, 4000ull << 20);
  EXPECT_EQ(nodes[1].status, NodeStatus::Up);
  EXPECT_EQ(nodes[1].cores, 4);
  EXPECT_EQ(nodes[1].gpus.size(), 2u);
  EXPECT_EQ(nodes[2].status, NodeStatus::Down);
  EXPECT_FALSE(parseScontrolNodes("Arch=x86_64 CPUTot=2\n", nodes, error));
  EXPECT_EQ(error, "scontrol show node -o, line 1: no NodeName=");
}

// Issue 36, item 5: numbers beyond NodeLimits were wrapped (CPUTot=2^32 made a 0-core node), kept at the
// default (2^64-1 did not parse and the node got 1 CPU) or shifted past 64 bits (RealMemory), and
// gpu:99999999999 made a GPU record per unit (2.4 GB). Each is now an error naming the node and field.
TEST(SlurmNodes, NumbersBeyondTheNodeLimitsAreRefusedNamingNodeAndField) {
  std::vector<NodeInfo> nodes;
  std::string error;
  const auto scontrol = [&](const std::string& fields) {
    return parseScontrolNodes("NodeName=big " + fields + " State=IDLE\n", nodes, error);
  };
  EXPECT_FALSE(scontrol("CPUTot=4294967296"));
  EXPECT_EQ(error, "scontrol show node -o, line 1: node big: CPUTot=4294967296 is beyond the limit of 65536");
  EXPECT_FALSE(scontrol("CPUTot=18446744073709551615"));
  EXPECT_EQ(error, "scontrol show node -o, line 1: node big: CPUTot=18446744073709551615 is beyond the limit of 65536");
  EXPECT_FALSE(scontrol("CPUTot=4 Sockets=4294967297"));
  EXPECT_EQ(error, "scontrol show node -o, line 1: node big: Sockets=4294967297 is beyond the limit of 1024");
  EXPECT_FALSE(scontrol("CPUTot=4 RealMemory=17592186044416"));  // 2^44 MiB = 16 EiB
  EXPECT_EQ(error,
            "scontrol show node -o, line 1: node big: RealMemory=17592186044416 is beyond the limit of 1073741824");
  EXPECT_FALSE(scontrol("CPUTot=4 ThreadsPerCore=two"));
  EXPECT_EQ(error, "scontrol show node -o, line 1: node big: ThreadsPerCore=two is not a count");
  EXPECT_FALSE(scontrol("CPUTot=4 Gres=gpu:99999999999"));
  EXPECT_EQ(error, "scontrol show node -o, line 1: node big: gres 'gpu:99999999999': '99999999999' GPUs are more "
                   "than the limit of 256 per node");
  EXPECT_FALSE(scontrol("CPUTot=4 Gres=gpu:a100:200,gpu:v100:100"));  // the node's total counts
  EXPECT_NE(error.find("more than the limit of 256 per node"), std::string::npos) << error;
  EXPECT_FALSE(scontrol("CPUTot=4 Gres=gpu:a100:1(IDX:4294967296)"));
  EXPECT_NE(error.find("malformed index list"), std::string::npos) << error;
  // The limits themselves are accepted.
  ASSERT_TRUE(scontrol("CPUTot=65536 Sockets=1024 RealMemory=1073741824 Gres=gpu:256")) << error;
  EXPECT_EQ(nodes[0].threads, 65536);
  EXPECT_EQ(nodes[0].memoryBytes, NodeLimits::kMaxMemoryBytes);
  EXPECT_EQ(nodes[0].gpus.size(), 256u);

  const auto sinfo = [&](const std::string& fields) {
    return parseSinfoJson(R"({"nodes": [{"name": "big", )" + fields + "}]}", nodes, error);
  };
  EXPECT_FALSE(sinfo(R"("cpus": 4294967296)"));
  EXPECT_EQ(error, "sinfo --json: node big: cpus 4294967296 is beyond the limit of 65536");
  EXPECT_FALSE(sinfo(R"("cpus": 18446744073709551615)"));
  EXPECT_EQ(error, "sinfo --json: node big: cpus 18446744073709551615 is beyond the limit of 65536");
  EXPECT_FALSE(sinfo(R"("cpus": {"set": true, "number": -3})"));
  EXPECT_EQ(error, "sinfo --json: node big: cpus -3 is negative");
  EXPECT_FALSE(sinfo(R"("cpus": 2, "real_memory": 9223372036854775807)"));
  EXPECT_EQ(error, "sinfo --json: node big: real_memory 9223372036854775807 is beyond the limit of 1073741824");
}

TEST(SlurmHostList, Expands) {
  std::vector<std::string> hosts;
  std::string error;
  ASSERT_TRUE(expandHostList("gpu[1-2],cpu1", hosts, error)) << error;
  EXPECT_EQ(hosts, (std::vector<std::string>{"gpu1", "gpu2", "cpu1"}));
  ASSERT_TRUE(expandHostList("n[08-10,12]", hosts, error)) << error;
  EXPECT_EQ(hosts, (std::vector<std::string>{"n08", "n09", "n10", "n12"}));
  ASSERT_TRUE(expandHostList("rack[1-2]-n[1-2].ib", hosts, error)) << error;
  EXPECT_EQ(hosts, (std::vector<std::string>{"rack1-n1.ib", "rack1-n2.ib", "rack2-n1.ib", "rack2-n2.ib"}));
  ASSERT_TRUE(expandHostList("single", hosts, error)) << error;
  EXPECT_EQ(hosts, std::vector<std::string>{"single"});
  EXPECT_FALSE(expandHostList("n[1-", hosts, error));
  EXPECT_EQ(error, "host list 'n[1-': '[' without ']'");
  EXPECT_FALSE(expandHostList("n[3-1]", hosts, error));
  EXPECT_EQ(error, "host list 'n[3-1]': malformed range '3-1'");
  EXPECT_FALSE(expandHostList("a,,b", hosts, error));
}

TEST(SlurmHostList, CountLists) {
  std::vector<int> counts;
  std::string error;
  ASSERT_TRUE(expandCountList("4(x2),2", counts, error)) << error;
  EXPECT_EQ(counts, (std::vector<int>{4, 4, 2}));
  ASSERT_TRUE(expandCountList("1", counts, error)) << error;
  EXPECT_EQ(counts, std::vector<int>{1});
  EXPECT_FALSE(expandCountList("4(x", counts, error));
  EXPECT_FALSE(expandCountList("four", counts, error));
  EXPECT_FALSE(expandCountList("4294967296", counts, error));  // was 0 CPUs (wrapped to int)
}

// `scontrol show job -d` of an allocation of cpu1 and of gpu1 and gpu2 with two GPUs each.
const char* const kJobDetails = "JobId=4 JobName=interactive\n"
                                "   NumNodes=3 NumCPUs=6 NumTasks=3 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n"
                                "   TRES=cpu=6,node=3,billing=6\n"
                                "     Nodes=cpu1 CPU_IDs=0-1 Mem=0 GRES=\n"
                                "     Nodes=gpu[1-2] CPU_IDs=0-1 Mem=0 GRES=gpu:a100:2(IDX:0-1)\n";

TEST(SlurmAllocation, FromTheEnvironmentAndJobDetails) {
  const std::map<std::string, std::string> env = {
      {"SLURM_JOB_ID", "4"}, {"SLURM_JOB_NODELIST", "cpu1,gpu[1-2]"}, {"SLURM_JOB_CPUS_PER_NODE", "2(x3)"}};
  const auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  std::vector<std::vector<std::string>> commands;
  const CommandRunner run = [&](const std::vector<std::string>& argv, std::string& out, std::string&) {
    commands.push_back(argv);
    out = kJobDetails;
    return true;
  };
  std::optional<Allocation> allocation;
  std::string error;
  ASSERT_TRUE(currentAllocation(allocation, error, run, getenv)) << error;
  ASSERT_TRUE(allocation);
  EXPECT_EQ(commands, (std::vector<std::vector<std::string>>{{"scontrol", "show", "job", "-d", "4"}}));
  ASSERT_EQ(allocation->nodes.size(), 3u);
  EXPECT_EQ(allocation->nodes[0].host, "cpu1");
  EXPECT_EQ(allocation->nodes[0].gpus->size(), 0u);
  EXPECT_EQ(allocation->nodes[2].host, "gpu2");
  EXPECT_EQ(allocation->nodes[2].cpus, 2);
  EXPECT_EQ(allocation->nodes[2].gpus->size(), 2u);

  // Restricting a recorded cluster: unallocated nodes go, allocated ones are up with their CPUs.
  Cluster cluster;
  for (const char* host : {"cpu1", "cpu2", "gpu1"}) {
    NodeInfo n;
    n.host = host;
    n.cores = n.threads = 8;
    n.status = std::string(host) == "gpu1" ? NodeStatus::Down : NodeStatus::Up;
    cluster.nodes.push_back(n);
  }
  cluster.nodes[2].gpus = {GpuInfo{0, "A100-SXM4-80GB", "", 8, 0, 80ull << 30, 108, 1410000, "", -1, std::nullopt}};
  std::vector<std::string> notes;
  restrictToAllocation(cluster, *allocation, notes);
  ASSERT_EQ(cluster.nodes.size(), 3u);
  EXPECT_EQ(cluster.nodes[0].host, "cpu1");
  EXPECT_EQ(cluster.nodes[0].cores, 2);
  EXPECT_EQ(cluster.nodes[1].host, "gpu1");
  EXPECT_EQ(cluster.nodes[1].status, NodeStatus::Up);  // Slurm just gave it to the job
  ASSERT_EQ(cluster.nodes[1].gpus.size(), 2u);
  EXPECT_EQ(cluster.nodes[1].gpus[0].name, "A100-SXM4-80GB");  // recorded details kept
  EXPECT_EQ(cluster.nodes[1].gpus[1].name, "NVIDIA A100");     // the rest as Slurm says
  EXPECT_EQ(cluster.nodes[2].host, "gpu2");                    // not recorded: as Slurm describes it
  EXPECT_EQ(notes.back(), "gpu2: 2 CPUs, 2 GPUs (not recorded, as Slurm describes it)");
}

TEST(SlurmAllocation, OutsideOneAndBrokenEnvironment) {
  std::optional<Allocation> allocation;
  std::string error;
  const CommandRunner never = [](const std::vector<std::string>&, std::string&, std::string& e) {
    e = "not expected";
    return false;
  };
  ASSERT_TRUE(currentAllocation(allocation, error, never, [](const char*) -> const char* { return nullptr; }));
  EXPECT_FALSE(allocation);
  const auto partial = [](const char* name) -> const char* {
    return std::string(name) == "SLURM_JOB_ID" ? "7" : nullptr;
  };
  EXPECT_FALSE(currentAllocation(allocation, error, never, partial));
  EXPECT_EQ(error, "SLURM_JOB_ID=7 is set but SLURM_JOB_NODELIST or SLURM_JOB_CPUS_PER_NODE is not");
  const auto mismatch = [](const char* name) -> const char* {
    const std::string n = name;
    return n == "SLURM_JOB_ID"              ? "7"
           : n == "SLURM_JOB_NODELIST"      ? "a,b"
           : n == "SLURM_JOB_CPUS_PER_NODE" ? "2"
                                            : nullptr;
  };
  EXPECT_FALSE(currentAllocation(allocation, error, never, mismatch));
  EXPECT_EQ(error, "SLURM_JOB_CPUS_PER_NODE='2' counts 1 nodes, SLURM_JOB_NODELIST='a,b' names 2");
  // scontrol failing: SLURM_GPUS_ON_NODE for every node, with a note saying so.
  const auto withGpus = [](const char* name) -> const char* {
    const std::string n = name;
    return n == "SLURM_JOB_ID"              ? "7"
           : n == "SLURM_JOB_NODELIST"      ? "a"
           : n == "SLURM_JOB_CPUS_PER_NODE" ? "4"
           : n == "SLURM_GPUS_ON_NODE"      ? "2"
                                            : nullptr;
  };
  ASSERT_TRUE(currentAllocation(allocation, error, never, withGpus)) << error;
  EXPECT_EQ(allocation->nodes[0].gpus->size(), 2u);
  EXPECT_EQ(allocation->notes[0], "GPUs per node from SLURM_GPUS_ON_NODE=2 (not expected)");
}

TEST(SlurmMerge, ProbeDetailsKeptSlurmStateWins) {
  NodeInfo probed;
  probed.host = "gpu1";
  probed.cores = 32;
  probed.threads = 64;
  probed.source = RecordSource::Probe;
  probed.status = NodeStatus::Up;
  probed.gpus = {GpuInfo{0, "NVIDIA A100-SXM4-80GB", "GPU-1", 8, 0, 80ull << 30, 108, 1410000, "", 0, std::nullopt},
                 GpuInfo{1, "NVIDIA A100-SXM4-80GB", "GPU-2", 8, 0, 80ull << 30, 108, 1410000, "", 1, std::nullopt},
                 GpuInfo{2, "NVIDIA A100-SXM4-80GB", "GPU-3", 8, 0, 80ull << 30, 108, 1410000, "", 1, std::nullopt}};
  NodeInfo fromSlurm;
  std::string error;
  fromSlurm.host = "gpu1";
  fromSlurm.threads = fromSlurm.cores = 64;
  fromSlurm.status = NodeStatus::Drained;
  ASSERT_TRUE(parseGres("gpu:a100:2", fromSlurm.gpus, error));
  const NodeInfo merged = mergeNode(&probed, fromSlurm);
  EXPECT_EQ(merged.status, NodeStatus::Drained);
  EXPECT_EQ(merged.cores, 32);
  EXPECT_EQ(merged.source, RecordSource::Probe);
  ASSERT_EQ(merged.gpus.size(), 2u);  // the scheduler hands out two
  EXPECT_EQ(merged.gpus[1].uuid, "GPU-2");
  EXPECT_EQ(mergeNode(nullptr, fromSlurm).gpus[0].name, "NVIDIA A100");
}

TEST(SlurmCommands, RunCommandReportsFailureWithStderr) {
  std::string out, error;
  ASSERT_TRUE(runCommand({"sh", "-c", "echo hello; echo noise >&2"}, out, error)) << error;
  EXPECT_EQ(out, "hello\n");
  EXPECT_FALSE(runCommand({"sh", "-c", "echo broken >&2; exit 3"}, out, error));
  EXPECT_EQ(error, "'sh -c echo broken >&2; exit 3' failed with exit status 3: broken");
  EXPECT_FALSE(runCommand({"/nonexistent/sinfo"}, out, error));
  EXPECT_EQ(error, "cannot run /nonexistent/sinfo: No such file or directory");
}

TEST(SlurmCommands, QueryFallsBackToScontrol) {
  const CommandRunner run = [](const std::vector<std::string>& argv, std::string& out, std::string& error) {
    if (argv[0] == "sinfo") {
      error = "'sinfo --json' failed with exit status 1: sinfo: unrecognized option '--json'";
      return false;
    }
    out = "NodeName=n1 CPUTot=4 Gres=gpu:2 State=IDLE\n";
    return true;
  };
  std::vector<NodeInfo> nodes;
  std::string how, error;
  ASSERT_TRUE(queryNodes(nodes, how, error, run)) << error;
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].gpus.size(), 2u);
  EXPECT_EQ(how.rfind("scontrol show node -o", 0), 0u) << how;
}

}  // namespace
}  // namespace dispar::streammap::slurm
