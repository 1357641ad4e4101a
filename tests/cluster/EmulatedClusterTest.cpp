// DISPAR on an emulated cluster (emucluster.sh): every node its own network namespace, host name, /dev/shm,
// boot ID and CPU quota, the links shaped. Each test starts its own cluster (named per run, so tests run in
// parallel) and takes it down at the end; the launchers reach the nodes through emucluster-rsh, the user's
// commands unchanged. Ranks on different nodes talk over TCP: the tests count the bytes on the nodes'
// links. Needs root (label `cluster`).
#include "Placements.h"
#include "Process.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace dispar::testing {
namespace {

const std::string kScripts = std::string(DISPAR_SOURCE_DIR) + "/tests/cluster";
const std::string kEmucluster = kScripts + "/emucluster.sh";
const std::string kRsh = kScripts + "/emucluster-rsh";
const std::string kPostgresScript = std::string(DISPAR_SOURCE_DIR) + "/tests/streammap_resources/postgres_server.sh";

/// One node of a description: its name, cores x speed (the CPU quota) and link rate (0: not shaped).
struct EmulatedNode {
  std::string host;
  int cores = 1;
  double speed = 1.0;
  double bandwidth = 0;
};

/// A dispar-cluster description (docs/streammap.md, "Cluster description"): what streammap maps onto and
/// what emucluster.sh builds.
std::string describe(const std::vector<EmulatedNode>& nodes) {
  nlohmann::json list = nlohmann::json::array();
  for (const EmulatedNode& node : nodes) {
    nlohmann::json entry = {{"host", node.host}, {"cpu", {{"cores", node.cores}, {"speed", node.speed}}}};
    if (node.bandwidth > 0) entry["network"] = {{"bandwidth_bytes_per_s", node.bandwidth}};
    list.push_back(entry);
  }
  return nlohmann::json{{"format", "dispar-cluster"}, {"version", 1}, {"nodes", list}}.dump(2) + "\n";
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

/// An emulated cluster for the life of the object: built from `nodes`, owned by this test process (so a
/// killed test's cluster is swept by the next one), taken down by the destructor.
class EmulatedCluster {
 public:
  EmulatedCluster(const ScratchDir& dir, std::vector<EmulatedNode> nodes) : nodes_(std::move(nodes)) {
    description_ = dir.file("cluster.json");
    dir.write("cluster.json", describe(nodes_));
    const ProcessResult up =
        runProcess({"bash", kEmucluster, "up", description_, "--owner", std::to_string(::getpid())}, ".", {}, 60);
    const std::string prefix = "DISPAR_EMUCLUSTER=";
    const std::size_t at = up.output.find(prefix);
    if (up.status != 0 || at == std::string::npos) {
      error_ = up.output;
      return;
    }
    state_ = trimmed(up.output.substr(at + prefix.size()));
  }
  ~EmulatedCluster() {
    if (!state_.empty()) runProcess({"bash", kEmucluster, "down", state_}, ".", {}, 60);
  }
  EmulatedCluster(const EmulatedCluster&) = delete;
  EmulatedCluster& operator=(const EmulatedCluster&) = delete;

  bool ok() const { return !state_.empty(); }
  const std::string& error() const { return error_; }
  const std::string& state() const { return state_; }
  const std::string& description() const { return description_; }
  std::string id() const { return state_.substr(state_.rfind('/') + 1); }

  /// The environment under which MPICH's and Open MPI's launchers start their daemons on the nodes.
  std::vector<std::string> launcherEnvironment() const {
    return {"DISPAR_EMUCLUSTER=" + state_,    "HYDRA_LAUNCHER=ssh",       "HYDRA_LAUNCHER_EXEC=" + kRsh,
            "OMPI_MCA_plm_rsh_agent=" + kRsh, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"};
  }

  ProcessResult exec(const std::string& node, const std::vector<std::string>& command) const {
    std::vector<std::string> argv = {"bash", kEmucluster, "exec", state_, node};
    argv.insert(argv.end(), command.begin(), command.end());
    return runProcess(argv, ".", {}, 60);
  }

  /// Bytes through `node`'s link so far, both directions (the bridge's side of its veth pair).
  long long linkBytes(const std::string& node) const {
    int index = 0;
    for (std::size_t i = 0; i < nodes_.size(); ++i)
      if (nodes_[i].host == node) index = static_cast<int>(i) + 1;
    const std::string link = "dspe" + id() + "v" + std::to_string(index);
    const std::string base = "/sys/class/net/" + link + "/statistics/";
    return std::stoll(readFile(base + "rx_bytes")) + std::stoll(readFile(base + "tx_bytes"));
  }

 private:
  std::vector<EmulatedNode> nodes_;
  std::string description_;
  std::string state_;
  std::string error_;
};

/// Three nodes of different speeds, the slowest behind a slower link.
std::vector<EmulatedNode> threeNodes() {
  return {{"fast", 1, 1.0, 1.25e8}, {"half", 1, 0.5, 1.25e8}, {"slow", 1, 0.25, 1.25e7}};
}

ProcessResult streammap(const std::vector<std::string>& args, const std::string& dir,
                        const std::vector<std::string>& env = {}, int timeoutSeconds = 120) {
  std::vector<std::string> argv = {STREAMMAP_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv, dir, env, timeoutSeconds);
}

void build(const ScratchDir& dir, const std::string& source, const std::string& binary, const std::string& mpi) {
  dir.write(binary + ".dsp", readFile(source));
  const ProcessResult built = runProcess({DISPARCC_PATH, "--mpi", mpi, binary + ".dsp", "-o", binary}, dir.path());
  ASSERT_EQ(built.status, 0) << built.output;
}

// transfer.dsp: 64 blocks of 8192 doubles, block b holding b * 0.5 + i.
constexpr long kTransferCount = 64L * 8192;
/// The line transfer.dsp's sink prints, computed here.
std::string transferResult() {
  double sum = 0;
  for (int b = 0; b < 64; ++b)
    for (int i = 0; i < 8192; ++i) sum += b * 0.5 + i;
  char line[64];
  std::snprintf(line, sizeof line, "count=%ld sum=%.1f", kTransferCount, sum);
  return line;
}
constexpr long long kTransferBytes = 64LL * 8192 * 8;

/// Runs transfer.dsp built for `mpi` with its source and sink on two different nodes and checks that its
/// blocks crossed the sink's link, not shared memory.
void runTransferAcrossNodes(const std::string& mpi, const std::vector<EmulatedNode>& nodes) {
  ScratchDir dir;
  EmulatedCluster cluster(dir, nodes);
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  build(dir, kScripts + "/transfer.dsp", "transfer", mpi);
  // round-robin over one-core nodes, a rank per instance: the source on the first node, the sink on the next.
  const ProcessResult mapped = streammap({"map", "transfer.rtg.json", "--cluster", cluster.description(), "--algorithm",
                                          "round-robin", "--rank-per-instance"},
                                         dir.path());
  ASSERT_EQ(mapped.status, 0) << mapped.output;
  const nlohmann::json map = nlohmann::json::parse(readFile(dir.file("transfer.map.json")));
  std::map<std::string, std::string> hostOf;
  for (const nlohmann::json& rank : map.at("ranks")) hostOf[rank.at("vnode")] = rank.at("host");
  ASSERT_NE(hostOf["source"], hostOf["sink"]) << mapped.output;

  const long long before = cluster.linkBytes(hostOf["sink"]);
  const ProcessResult run = streammap({"run", "--launcher", mpi, "--cluster", cluster.description(), "--algorithm",
                                       "round-robin", "--rank-per-instance", "--no-history", "./transfer"},
                                      dir.path(), cluster.launcherEnvironment());
  ASSERT_EQ(run.status, 0) << run.output;
  const long long crossed = cluster.linkBytes(hostOf["sink"]) - before;
  const std::string expected = transferResult();
  EXPECT_NE(run.output.find(expected), std::string::npos) << run.output;
  // Debian's MPICH over TCP sometimes holds a rank in MPI_Finalize after the work is done, also on two
  // nodes under load (about 1 run in 12 here; docs/cluster.md, "MPICH over TCP"): bounded, and the run
  // still a success that says why. Open MPI never.
  if (mpi == "mpich" && run.output.find("MPI_Finalize has not returned") != std::string::npos)
    EXPECT_NE(run.output.find("streammap run: note: every rank of the job ended its work with status 0"),
              std::string::npos)
        << run.output;
  else
    EXPECT_EQ(run.output.find("MPI_Finalize"), std::string::npos) << run.output;
  expectPlacedAsMapped(run.output, dir.file("transfer.map.json"));
  // Every block crossed the sink's link (plus TCP's and the launcher's own traffic).
  EXPECT_GE(crossed, kTransferBytes) << "the blocks did not cross the network\n" << run.output;
}

TEST(EmulatedCluster, EveryNodeIsAMachineOfItsOwn) {
  ScratchDir dir;
  EmulatedCluster cluster(dir, threeNodes());
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  const std::string hostBootId = trimmed(readFile("/proc/sys/kernel/random/boot_id"));
  std::set<std::string> bootIds;
  for (const EmulatedNode& node : threeNodes()) {
    const ProcessResult seen = cluster.exec(
        node.host, {"sh", "-c",
                    "hostname; cat /proc/sys/kernel/random/boot_id; ip -4 -o addr show dev eth0 | awk '{print $4}'; "
                    "getent hosts fast half slow | wc -l; touch /dev/shm/mark-" +
                        node.host + "; ls /dev/shm | tr '\\n' ' '; echo; grep ':cpu:' /proc/self/cgroup"});
    ASSERT_EQ(seen.status, 0) << seen.output;
    std::istringstream lines(seen.output);
    std::string hostname, bootId, address, resolved, shm, cgroup;
    std::getline(lines, hostname);
    std::getline(lines, bootId);
    std::getline(lines, address);
    std::getline(lines, resolved);
    std::getline(lines, shm);
    std::getline(lines, cgroup);
    EXPECT_EQ(hostname, node.host);
    EXPECT_NE(bootId, hostBootId);
    bootIds.insert(bootId);
    EXPECT_EQ(address.rfind("10.", 0), 0u) << address;
    EXPECT_EQ(trimmed(resolved), "3") << "every node's name resolves on every node";
    EXPECT_EQ(trimmed(shm), "mark-" + node.host) << "/dev/shm is the node's own";
    EXPECT_EQ(cgroup, "1:cpu:/dspe" + cluster.id() + "/" + node.host);
    const std::string quota =
        readFile("/sys/fs/cgroup/cpu/dspe" + cluster.id() + "/" + node.host + "/cpu.cfs_quota_us");
    EXPECT_EQ(std::stol(quota), static_cast<long>(node.cores * node.speed * 100000)) << node.host;
  }
  EXPECT_EQ(bootIds.size(), 3u);
  // The slow node's link is shaped at its bandwidth (tc's token bucket on both ends of its link).
  const ProcessResult shaped = runProcess({"tc", "qdisc", "show", "dev", "dspe" + cluster.id() + "v3"});
  EXPECT_NE(shaped.output.find("tbf"), std::string::npos) << shaped.output;
  EXPECT_NE(shaped.output.find("rate 100Mbit"), std::string::npos) << shaped.output;
}

// `streammap --discover` on each node records the node's own name and its CPU quota as what it can run
// (cores x speed), into one SQLite file on a path every node shares.
TEST(EmulatedCluster, DiscoveryOnEachNodeSeesItsNameAndQuota) {
  ScratchDir dir;
  EmulatedCluster cluster(dir, threeNodes());
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  const std::string db = dir.file("resources.db");
  for (const EmulatedNode& node : threeNodes()) {
    const ProcessResult discovered = cluster.exec(node.host, {STREAMMAP_PATH, "--discover", "--db", db});
    ASSERT_EQ(discovered.status, 0) << discovered.output;
    EXPECT_NE(discovered.output.find("discovered " + node.host + ": "), std::string::npos) << discovered.output;
  }
  const ProcessResult listed = streammap({"nodes", "--json", "--db", db}, dir.path());
  ASSERT_EQ(listed.status, 0) << listed.output;
  std::map<std::string, double> capacity;
  const nlohmann::json listing = nlohmann::json::parse(listed.output);
  for (const nlohmann::json& node : listing.at("nodes"))
    capacity[node.at("host")] = node.at("cpu").at("cores").get<double>() * node.at("cpu").at("speed").get<double>();
  ASSERT_EQ(capacity.size(), 3u) << listed.output;
  for (const EmulatedNode& node : threeNodes()) EXPECT_DOUBLE_EQ(capacity[node.host], node.cores * node.speed);
}

/// The nodes the database counts as up, by `streammap nodes --json`.
std::set<std::string> upNodes(const std::string& db, const std::string& dir) {
  const ProcessResult listed = streammap({"nodes", "--json", "--db", db}, dir);
  std::set<std::string> up;
  if (listed.status != 0) return up;
  const nlohmann::json listing = nlohmann::json::parse(listed.output, nullptr, false);
  if (listing.is_discarded()) return up;
  for (const nlohmann::json& node : listing.at("nodes"))
    if (node.at("status") == "up") up.insert(node.at("host").get<std::string>());
  return up;
}

/// Polls `done` every 100 ms for up to `seconds`.
template <typename Done>
bool within(double seconds, Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

/// A PostgreSQL server on the cluster's bridge for the life of the object (the tests' one recipe:
/// tests/streammap_resources/postgres_server.sh, given the bridge's address).
class BridgePostgres {
 public:
  explicit BridgePostgres(const std::string& address) {
    // Its own directory under /tmp: the server's user must reach it (a scratch directory is root's alone).
    std::string pattern = "/tmp/dispar-pg-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      error_ = "mkdtemp failed";
      return;
    }
    dir_ = pattern;
    const ProcessResult started =
        runProcess({"bash", kPostgresScript, "start", DISPAR_POSTGRESQL_BINDIR, dir_, address}, ".", {}, 120);
    if (started.status == 0)
      url_ = trimmed(started.output);
    else
      error_ = started.output;
  }
  ~BridgePostgres() {
    if (dir_.empty()) return;
    runProcess({"bash", kPostgresScript, "stop", DISPAR_POSTGRESQL_BINDIR, dir_}, ".", {}, 60);
  }
  BridgePostgres(const BridgePostgres&) = delete;
  BridgePostgres& operator=(const BridgePostgres&) = delete;
  const std::string& url() const { return url_; }
  const std::string& error() const { return error_; }

 private:
  std::string dir_, url_, error_;
};

// Every node's daemon records its node into one PostgreSQL server on the bridge, over the network. A node
// cut off from the server (its link down) keeps its daemon running: its record goes down with its
// heartbeat, `streammap map` on that node fails naming the server, and once the link is back the same
// daemon goes on and the node is up again; the other nodes' records are untouched throughout.
TEST(EmulatedCluster, DaemonsRecordIntoAServerOnTheBridgeAndRideOutACutLink) {
  ScratchDir dir;
  EmulatedCluster cluster(dir, threeNodes());
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  const std::string bridge = trimmed(runProcess({"bash", kEmucluster, "address", cluster.state()}).output);
  BridgePostgres server(bridge);
  ASSERT_FALSE(server.url().empty()) << server.error();
  for (const EmulatedNode& node : threeNodes()) {
    const ProcessResult started = cluster.exec(node.host, {"sh", "-c",
                                                           "setsid " + std::string(STREAMMAP_PATH) + " daemon --db '" +
                                                               server.url() + "' --interval 0.2 --ttl 2 </dev/null >" +
                                                               dir.file(node.host + ".log") + " 2>&1 &"});
    ASSERT_EQ(started.status, 0) << started.output;
  }
  ASSERT_TRUE(within(30, [&] { return upNodes(server.url(), dir.path()).size() == 3; }))
      << "the daemons did not record their nodes: " << readFile(dir.file("slow.log"));

  ASSERT_EQ(runProcess({"bash", kEmucluster, "link", cluster.state(), "slow", "down"}).status, 0);
  ASSERT_TRUE(within(15, [&] { return upNodes(server.url(), dir.path()).count("slow") == 0; }))
      << "slow is still up with its link down";
  EXPECT_EQ(upNodes(server.url(), dir.path()), (std::set<std::string>{"fast", "half"}));
  dir.write("one.dsp", "#include <dispar/dispar.h>\nVNODE(only) {}\n");
  ASSERT_EQ(runProcess({DISPARCC_PATH, "one.dsp", "-o", "one"}, dir.path()).status, 0);
  const ProcessResult cutOff = cluster.exec("slow", {"timeout", "60", STREAMMAP_PATH, "map", dir.file("one.rtg.json"),
                                                     "--db", server.url(), "-o", dir.file("one.machinefile")});
  EXPECT_NE(cutOff.status, 0) << cutOff.output;
  EXPECT_NE(cutOff.output.find(bridge), std::string::npos) << "the error names the server\n" << cutOff.output;

  ASSERT_EQ(runProcess({"bash", kEmucluster, "link", cluster.state(), "slow", "up"}).status, 0);
  EXPECT_TRUE(within(30, [&] { return upNodes(server.url(), dir.path()).size() == 3; }))
      << "slow did not come back: " << readFile(dir.file("slow.log"));
  // The same daemon all along: its connection stalled while the link was down and went on after.
  const std::string log = readFile(dir.file("slow.log"));
  EXPECT_EQ(log.find("keeping slow"), log.rfind("keeping slow")) << log;
}

enum class Fault { NodeDies, LinkGoesDown };

// A fault under a running job (ticks.dsp: the source on 'fast', the sink on 'half'):
// - a node that dies (every process of it ended) ends the job within seconds, and `streammap run` names
//   the node and what its ranks ran, exiting non-zero;
// - a link that goes down (half's) ends the job within a bound: the ranks' heartbeat (DISPAR_HEARTBEAT_
//   SECONDS, 3 here) finds that half does not answer and names it, and streammap stops a launcher that
//   waits for the node it cannot reach (kLauncherGraceSeconds, 10). When the link is back, nothing of the
//   job is left on the node.
void failUnderARun(const std::string& mpi, Fault fault) {
  ScratchDir dir;
  EmulatedCluster cluster(dir, threeNodes());
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  build(dir, kScripts + "/ticks.dsp", "ticks", mpi);
  std::vector<std::string> environment = cluster.launcherEnvironment();
  environment.push_back("DISPAR_HEARTBEAT_SECONDS=3");
  // round-robin over one-core nodes, a rank per instance: the source on fast, the sink on half.
  ProcessResult run;
  std::thread job([&] {
    run = streammap({"run", "--launcher", mpi, "--cluster", cluster.description(), "--algorithm", "round-robin",
                     "--rank-per-instance", "--no-history", "./ticks"},
                    dir.path(), environment, 120);
  });
  const bool running =
      within(60, [&] { return fileExists(dir.file("started-source")) && fileExists(dir.file("started-sink")); });
  std::chrono::steady_clock::time_point failed{};
  if (running) {
    const std::vector<std::string> command =
        fault == Fault::NodeDies
            ? std::vector<std::string>{"bash", kEmucluster, "kill", cluster.state(), "half"}
            : std::vector<std::string>{"bash", kEmucluster, "link", cluster.state(), "half", "down"};
    EXPECT_EQ(runProcess(command).status, 0);
    failed = std::chrono::steady_clock::now();
  }
  job.join();
  ASSERT_TRUE(running) << "the job did not start\n" << run.output;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - failed).count();
  EXPECT_NE(run.status, 0) << run.output;
  EXPECT_EQ(run.output.find("ticks="), std::string::npos) << "the sink cannot have finished\n" << run.output;
  if (fault == Fault::NodeDies) {
    EXPECT_LE(seconds, 15) << run.output;
    EXPECT_NE(run.output.find("streammap run: node 'half' was lost: its rank 1 (vnode 'sink' (replica 0)) ended "
                              "without a word"),
              std::string::npos)
        << run.output;
    return;
  }
  // 3 s without a heartbeat, 3 s for the answers, and the launcher's 10 s of grace at most.
  EXPECT_LE(seconds, 3 + 3 + 10 + 5) << run.output;
  EXPECT_NE(run.output.find("dispar: rank 0 (vnode 'source' (replica 0)) on node 'fast' has not heard from every "
                            "other rank for 3 s"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("dispar:   rank 1 (vnode 'sink' (replica 0)) on node 'half'\n"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("dispar: node 'half' cannot be reached from node 'fast': failed, or a link between them "
                            "is down"),
            std::string::npos)
      << run.output;
  ASSERT_EQ(runProcess({"bash", kEmucluster, "link", cluster.state(), "half", "up"}).status, 0);
  // The sink ended itself (its own heartbeat); the launcher's daemon there ends once it hears that its
  // launcher is gone.
  const auto jobLeftOn = [&](const std::string& node) {
    const std::string netns = "dspe" + cluster.id() + "-" + node;  // emucluster.sh's name for the node's namespace
    return runProcess({"sh", "-c",
                       "for p in $(ip netns pids " + netns +
                           "); do tr '\\0' ' ' </proc/$p/cmdline 2>/dev/null; echo; done | "
                           "grep -E 'ticks|orted|hydra_pmi_proxy' || true"})
        .output;
  };
  EXPECT_TRUE(within(30, [&] { return jobLeftOn("half").empty(); })) << jobLeftOn("half");
}

#ifdef DISPAR_HAVE_OPENMPI
// `streammap daemon` on every node keeps its record in one database on a path the nodes share (SQLite:
// one machine's file system, so its locks hold). A node that joins while the cluster runs (its daemon
// starts) is recorded and mapped onto; a node that dies (every process of it ended) counts as down once
// its heartbeat is older than its TTL, and the next `streammap run` maps around it.
TEST(EmulatedCluster, NodesJoinAndDropOutAndTheNextRunMapsAccordingly) {
  ScratchDir dir;
  EmulatedCluster cluster(dir, threeNodes());
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  const std::string db = dir.file("resources.db");
  const auto startDaemon = [&](const std::string& node) {
    const ProcessResult started =
        cluster.exec(node, {"sh", "-c",
                            "setsid " + std::string(STREAMMAP_PATH) + " daemon --db " + db +
                                " --interval 0.2 --ttl 2 </dev/null >" + dir.file(node + ".log") + " 2>&1 &"});
    ASSERT_EQ(started.status, 0) << started.output;
  };
  startDaemon("fast");
  startDaemon("half");
  ASSERT_TRUE(within(30, [&] { return upNodes(db, dir.path()).size() == 2; }))
      << "the daemons did not record their nodes: " << readFile(dir.file("fast.log"));
  startDaemon("slow");  // a node joins
  ASSERT_TRUE(within(30, [&] { return upNodes(db, dir.path()).size() == 3; }))
      << "the new node was not recorded: " << readFile(dir.file("slow.log"));

  ASSERT_EQ(runProcess({"bash", kEmucluster, "kill", cluster.state(), "half"}).status, 0);
  const auto died = std::chrono::steady_clock::now();
  ASSERT_TRUE(within(10, [&] { return upNodes(db, dir.path()).count("half") == 0; }))
      << "half is still up 10 s after it died";
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - died).count();
  EXPECT_LE(seconds, 2 + 3) << "down within its TTL (2 s) and a few heartbeats";
  EXPECT_EQ(upNodes(db, dir.path()), (std::set<std::string>{"fast", "slow"}));

  build(dir, std::string(DISPAR_SOURCE_DIR) + "/tests/e2e/placement/placement.dsp", "placement", "openmpi");
  const ProcessResult run =
      streammap({"run", "--launcher", "openmpi", "--db", db, "--rank-per-instance", "--no-history", "./placement"},
                dir.path(), cluster.launcherEnvironment());
  ASSERT_EQ(run.status, 0) << run.output;
  expectPlacedAsMapped(run.output, dir.file("placement.map.json"));
  std::set<std::string> hosts;
  for (const auto& [instance, host] : placedHosts(run.output)) hosts.insert(host);
  EXPECT_EQ(hosts, (std::set<std::string>{"fast", "slow"})) << "the joined node used, the dead one not\n" << run.output;
}

TEST(EmulatedCluster, ANodeThatDiesEndsTheRunNamingIt) { failUnderARun("openmpi", Fault::NodeDies); }
TEST(EmulatedCluster, ALinkThatGoesDownEndsTheRunNamingTheNode) { failUnderARun("openmpi", Fault::LinkGoesDown); }

TEST(EmulatedCluster, OpenMpiRanksTalkOverTheNetwork) { runTransferAcrossNodes("openmpi", threeNodes()); }

// The placement program on three nodes as refine maps it: every instance where its mapping says.
TEST(EmulatedCluster, OpenMpiRanksRunWhereTheMappingSays) {
  ScratchDir dir;
  EmulatedCluster cluster(dir, threeNodes());
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  build(dir, std::string(DISPAR_SOURCE_DIR) + "/tests/e2e/placement/placement.dsp", "placement", "openmpi");
  const ProcessResult run =
      streammap({"run", "--launcher", "openmpi", "--cluster", cluster.description(), "--no-history", "./placement"},
                dir.path(), cluster.launcherEnvironment());
  ASSERT_EQ(run.status, 0) << run.output;
  long expected = 0;
  for (long i = 0; i < 1000; ++i) expected += i * i;
  EXPECT_NE(run.output.find("sum=" + std::to_string(expected)), std::string::npos) << run.output;
  expectPlacedAsMapped(run.output, dir.file("placement.map.json"));
  std::set<std::string> hosts;
  for (const auto& [instance, host] : placedHosts(run.output)) hosts.insert(host);
  EXPECT_GE(hosts.size(), 2u) << "six instances on one-core nodes use more than one\n" << run.output;
}

// examples/fanout on nodes of unequal speed: the mapping deals its replicated branch on demand (docs/
// streammap.md, "Demand by default"), so the replicas take items in no fixed rotation; the joiner must
// still see every item once, in order, with the sum an independent loop computes. (The example numbered
// its items by the round-robin rotation until this test's run on bench/cluster said in_order=no.)
TEST(EmulatedCluster, FanOutIsRightWhereTheMappingDealsOnDemand) {
  ScratchDir dir;
  EmulatedCluster cluster(
      dir, {{"full", 1, 1.0, 0}, {"half", 1, 0.5, 0}, {"quarter1", 1, 0.25, 0}, {"quarter2", 1, 0.25, 0}});
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  dir.write("fanout.dsp", readFile(std::string(DISPAR_SOURCE_DIR) + "/examples/fanout/fanout.dsp"));
  const ProcessResult built = runProcess(
      {DISPARCC_PATH, "--mpi", "openmpi", "fanout.dsp", "-o", "fanout", "-lfftw3", "-lopenblas"}, dir.path());
  ASSERT_EQ(built.status, 0) << built.output;
  const int items = 200, length = 2048;
  const ProcessResult run = streammap({"run", "--launcher", "openmpi", "--cluster", cluster.description(),
                                       "--no-history", "./fanout", std::to_string(items), std::to_string(length)},
                                      dir.path(), cluster.launcherEnvironment());
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("note: pipe 'toSpectrum' is dealt on demand"), std::string::npos) << run.output;
  double expected = 0;
  for (int k = 0; k < items; ++k)
    for (int i = 0; i < length; ++i) {
      const double s = std::sin(0.05 * (k + 1) * i) + 0.5 * std::cos(0.013 * i * (k % 7)) + 1e-3 * i;
      expected += s * s;
    }
  double sum = 0;
  int count = 0;
  char inOrder[8] = {};
  const std::size_t at = run.output.find("items=");
  ASSERT_NE(at, std::string::npos) << run.output;
  ASSERT_EQ(std::sscanf(run.output.c_str() + at, "items=%d in_order=%7s sum_of_squares=%lf", &count, inOrder, &sum), 3)
      << run.output;
  EXPECT_EQ(count, items);
  EXPECT_STREQ(inOrder, "yes") << run.output;
  EXPECT_NEAR(sum, expected, 1e-9 * expected);
}
#endif

TEST(EmulatedCluster, ANodeThatDiesEndsTheMpichRunNamingIt) { failUnderARun("mpich", Fault::NodeDies); }
TEST(EmulatedCluster, ALinkThatGoesDownEndsTheMpichRunNamingTheNode) { failUnderARun("mpich", Fault::LinkGoesDown); }

// MPICH over two nodes. Three or more nodes: see docs/cluster.md ("MPICH over TCP").
TEST(EmulatedCluster, MpichRanksTalkOverTheNetwork) {
  runTransferAcrossNodes("mpich", {{"fast", 1, 1.0, 1.25e8}, {"half", 1, 0.5, 1.25e8}});
}

/// A Slurm cluster on the emulated nodes for the life of the object (tests/slurm/slurm_cluster.sh
/// --emucluster): slurmctld on the bridge's address, one slurmd on each node at the node's address.
class SlurmOnNodes {
 public:
  SlurmOnNodes(const ScratchDir& dir, const EmulatedCluster& cluster) : dir_(dir.file("slurm")) {
    const ProcessResult started =
        runProcess({"bash", kSlurmScript, "start", dir_, "--emucluster", cluster.state()}, ".", {}, 60);
    if (started.status != 0) error_ = started.output;
  }
  ~SlurmOnNodes() { runProcess({"bash", kSlurmScript, "stop", dir_}, ".", {}, 60); }
  SlurmOnNodes(const SlurmOnNodes&) = delete;
  SlurmOnNodes& operator=(const SlurmOnNodes&) = delete;
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  std::string conf() const { return "SLURM_CONF=" + dir_ + "/slurm.conf"; }

 private:
  const std::string kSlurmScript = std::string(DISPAR_SOURCE_DIR) + "/tests/slurm/slurm_cluster.sh";
  std::string dir_;
  std::string error_;
};

// Slurm with one slurmd per node, each at its node's own address: `streammap cluster import --slurm`,
// `streammap run --launcher slurm` (srun) for programs of either MPI, and the batch script `streammap
// sbatch` writes, run by sbatch (its script on the first node, its srun from there). Each run's source and
// sink are on two nodes, its blocks cross the sink's link, and every instance runs where its mapping says.
TEST(EmulatedCluster, SlurmRunsAndBatchJobsAcrossTheNodes) {
  ScratchDir dir;
  EmulatedCluster cluster(dir, threeNodes());
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  SlurmOnNodes slurm(dir, cluster);
  ASSERT_TRUE(slurm.ok()) << slurm.error();
  const std::vector<std::string> env = {slurm.conf()};
  const ProcessResult imported = streammap({"cluster", "import", "--slurm", "--db", "r.db"}, dir.path(), env);
  ASSERT_EQ(imported.status, 0) << imported.output;
  EXPECT_NE(imported.output.find("imported 3 nodes from Slurm"), std::string::npos) << imported.output;
  const std::string expected = transferResult();
  const std::vector<std::string> mapping = {"--db", "r.db", "--algorithm", "round-robin", "--rank-per-instance"};
  std::vector<std::string> mpis = {"mpich"};
#ifdef DISPAR_HAVE_OPENMPI
  mpis.push_back("openmpi");
#endif
  for (const std::string& mpi : mpis) {
    const std::string binary = "transfer_" + mpi;
    build(dir, kScripts + "/transfer.dsp", binary, mpi);
    std::vector<std::string> args = {"run", "--launcher", "slurm"};
    args.insert(args.end(), mapping.begin(), mapping.end());
    args.insert(args.end(), {"--no-history", "./" + binary});
    const long long before = cluster.linkBytes("half");
    const ProcessResult run = streammap(args, dir.path(), env);
    ASSERT_EQ(run.status, 0) << mpi << "\n" << run.output;
    EXPECT_NE(run.output.find(expected), std::string::npos) << mpi << "\n" << run.output;
    expectPlacedAsMapped(run.output, dir.file(binary + ".map.json"));
    EXPECT_EQ(placedHosts(run.output).at({"sink", 0}), "half") << run.output;
    EXPECT_GE(cluster.linkBytes("half") - before, kTransferBytes) << mpi << ": the blocks did not cross the network";
  }

  std::vector<std::string> args = {"sbatch", "transfer_mpich.rtg.json"};
  args.insert(args.end(), mapping.begin(), mapping.end());
  args.insert(args.end(), {"--time", "5:00", "-o", "job.sbatch"});
  const ProcessResult written = streammap(args, dir.path(), env);
  ASSERT_EQ(written.status, 0) << written.output;
  const ProcessResult batch =
      runProcess({"sbatch", "--wait", "-o", dir.file("job.out"), "job.sbatch"}, dir.path(), env, 120);
  ASSERT_EQ(batch.status, 0) << batch.output << readFile(dir.file("job.out"));
  const std::string out = readFile(dir.file("job.out"));
  EXPECT_NE(out.find(expected), std::string::npos) << out;
  const auto placed = placedHosts(out);
  EXPECT_EQ(placed.at({"source", 0}), "fast") << out;
  EXPECT_EQ(placed.at({"sink", 0}), "half") << out;
}

/// Whether anything named for run `id` is left: a namespace, a link, a cgroup, its state or hosts file.
std::string leftovers(const std::string& id) {
  const std::string name = "dspe" + id;
  const ProcessResult netns = runProcess({"ip", "netns", "list"});
  const ProcessResult links = runProcess({"ip", "-o", "link", "show"});
  std::string left;
  if (netns.output.find(name) != std::string::npos) left += "namespace ";
  if (links.output.find(name) != std::string::npos) left += "link ";
  if (fileExists("/sys/fs/cgroup/cpu/" + name)) left += "cgroup ";
  if (fileExists("/run/dispar-emucluster/" + id)) left += "state ";
  for (const char* node : {"fast", "half", "slow"})
    if (fileExists("/etc/netns/" + name + "-" + node)) left += "hosts ";
  return left;
}

TEST(EmulatedCluster, NothingIsLeftBehind) {
  ScratchDir dir;
  std::string id;
  {
    EmulatedCluster cluster(dir, threeNodes());
    ASSERT_TRUE(cluster.ok()) << cluster.error();
    id = cluster.id();
    EXPECT_NE(leftovers(id), "");
    // A process left running on a node is ended with it.
    ASSERT_EQ(cluster.exec("half", {"sh", "-c", "setsid sleep 1000 </dev/null >/dev/null 2>&1 &"}).status, 0);
  }
  EXPECT_EQ(leftovers(id), "") << "after down";

  // A cluster whose owner was killed (a test killed by its timeout) is swept by the next `up` or `sweep`.
  const pid_t owner = ::fork();
  ASSERT_GE(owner, 0);
  if (owner == 0) {
    ::pause();
    ::_exit(0);
  }
  dir.write("two.json", describe({{"fast", 1, 1.0, 0}, {"half", 1, 0.5, 0}}));
  const ProcessResult up =
      runProcess({"bash", kEmucluster, "up", dir.file("two.json"), "--owner", std::to_string(owner)}, ".", {}, 60);
  ASSERT_EQ(up.status, 0) << up.output;
  const std::string state = trimmed(up.output.substr(up.output.find('=') + 1));
  const std::string orphan = state.substr(state.rfind('/') + 1);
  EXPECT_NE(leftovers(orphan), "");
  ASSERT_EQ(runProcess({"bash", kEmucluster, "sweep"}).status, 0);
  EXPECT_NE(leftovers(orphan), "") << "a live owner's cluster is kept";
  ::kill(owner, SIGKILL);
  ::waitpid(owner, nullptr, 0);
  const ProcessResult swept = runProcess({"bash", kEmucluster, "sweep"});
  ASSERT_EQ(swept.status, 0) << swept.output;
  EXPECT_EQ(leftovers(orphan), "") << "after sweep";
}

TEST(EmulatedCluster, BadDescriptionsAreRefusedAndLeaveNothing) {
  ScratchDir dir;
  dir.write("dup.json", describe({{"a", 1, 1.0, 0}, {"a", 1, 1.0, 0}}));
  const ProcessResult duplicate = runProcess({"bash", kEmucluster, "up", dir.file("dup.json")}, ".", {}, 60);
  EXPECT_NE(duplicate.status, 0);
  EXPECT_NE(duplicate.output.find("duplicate host 'a'"), std::string::npos) << duplicate.output;
  dir.write("bad.json", "{\"nodes\": [");
  const ProcessResult invalid = runProcess({"bash", kEmucluster, "up", dir.file("bad.json")}, ".", {}, 60);
  EXPECT_NE(invalid.status, 0);
  EXPECT_NE(invalid.output.find("not a dispar-cluster description"), std::string::npos) << invalid.output;
  // Neither made a run (each run records the description it was made from; tests in parallel make others).
  const ProcessResult listed = runProcess({"bash", kEmucluster, "list"});
  std::istringstream runs(listed.output);
  for (std::string run; std::getline(runs, run);) {
    const std::string source = trimmed(readFile(run + "/description"));
    EXPECT_NE(source.find(dir.path()), 0u) << run << " was made from " << source;
  }
}

}  // namespace
}  // namespace dispar::testing
