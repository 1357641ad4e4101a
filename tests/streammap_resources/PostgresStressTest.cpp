// Many `streammap daemon` processes heartbeating into one PostgreSQL database while readers read in a
// loop; then one daemon is killed (its node must go down after its TTL) and the server is restarted
// (every daemon must reconnect and keep its node up). The issue asks for 30 s of reading; the suite
// reads for $DISPAR_PG_STRESS_SECONDS (default 10) with $DISPAR_PG_STRESS_DAEMONS daemons (default 64).
#include "streammap/ResourceDb.h"

#include "PostgresServer.h"
#include "TestSupport.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <thread>
#include <vector>

#ifndef DISPAR_RESOURCES_CLI
#error "DISPAR_RESOURCES_CLI must name the streammap_resources_cli binary"
#endif

using namespace dispar::streammap;
using dispar::streammap::test::PostgresServer;
using dispar::streammap::test::readFile;
using dispar::streammap::test::runCommand;
using dispar::streammap::test::TempDir;

namespace {

using Clock = std::chrono::steady_clock;

double envNumber(const char* name, double fallback) {
  const char* text = std::getenv(name);
  return text && *text ? std::atof(text) : fallback;
}

bool waitFor(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return condition();
}

// The daemons, as separate `streammap daemon` processes; whatever is still running at the end (a failed
// assertion included) is killed and reaped.
class Daemons {
 public:
  Daemons(const std::string& url, const std::string& dir, int count, int ttl) : dir_(dir) {
    for (int i = 0; i < count; ++i) {
      const std::string host = "node" + std::to_string(i);
      const pid_t pid = ::fork();
      if (pid == 0) {
        ::setenv("TMPDIR", dir.c_str(), 1);  // their lock files
        const int log = ::open(logPath(i).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (log < 0 || ::dup2(log, STDERR_FILENO) < 0) ::_exit(100);
        const std::string ttlText = std::to_string(ttl);
        // Heartbeats every 100 ms; a full probe (hwloc) every 5 s, as a node's hardware rarely changes.
        ::execl(DISPAR_RESOURCES_CLI, DISPAR_RESOURCES_CLI, "daemon", "--db", url.c_str(), "--host", host.c_str(),
                "--interval", "0.1", "--probe-interval", "5", "--ttl", ttlText.c_str(), static_cast<char*>(nullptr));
        ::_exit(101);
      }
      pids_.push_back(pid);
    }
  }
  ~Daemons() {
    for (pid_t pid : pids_)
      if (pid > 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
  }
  std::string logPath(int i) const { return dir_ + "/daemon" + std::to_string(i) + ".log"; }
  std::string log(int i) const { return readFile(logPath(i)); }
  int count() const { return static_cast<int>(pids_.size()); }

  /// True while daemon `i` runs (it has not exited or crashed).
  bool running(int i) const { return pids_[i] > 0 && ::waitpid(pids_[i], nullptr, WNOHANG) == 0; }
  /// Sends `signal` and reaps the process; returns its wait status.
  int stop(int i, int signal) {
    int status = 0;
    ::kill(pids_[i], signal);
    ::waitpid(pids_[i], &status, 0);
    pids_[i] = -1;
    return status;
  }

 private:
  std::string dir_;
  std::vector<pid_t> pids_;
};

std::string host(int i) { return "node" + std::to_string(i); }

}  // namespace

TEST(PostgresStress, DaemonsHeartbeatWhileReadersReadThroughKillAndServerRestart) {
  const int daemonCount = static_cast<int>(envNumber("DISPAR_PG_STRESS_DAEMONS", 64));
  const double seconds = envNumber("DISPAR_PG_STRESS_SECONDS", 10);
  // Heartbeat times are whole seconds, so a TTL of 2 s is the smallest that a 0.1 s heartbeat keeps up
  // with margin on a loaded machine.
  const int ttl = 2;
  PostgresServer& server = PostgresServer::instance();
  const std::string url = server.createDatabase();
  TempDir dir;
  Daemons daemons(url, dir.path(), daemonCount, ttl);

  auto allUp = [&](int skip, std::string& why) {
    Cluster cluster;
    if (!loadClusterFromDatabase(url, 0, cluster, why)) return false;
    int up = 0;
    for (const NodeInfo& n : cluster.nodes)
      if (n.status == NodeStatus::Up && n.host != (skip >= 0 ? host(skip) : "")) ++up;
    why = std::to_string(up) + " of " + std::to_string(daemonCount - (skip >= 0 ? 1 : 0)) + " nodes up";
    return up == daemonCount - (skip >= 0 ? 1 : 0);
  };
  std::string why;
  auto diagnosis = [&] {  // the logs of the daemons that exited
    std::string text;
    for (int i = 0; i < daemons.count(); ++i)
      if (!daemons.running(i)) text += host(i) + " exited:\n" + daemons.log(i);
    return text;
  };
  ASSERT_TRUE(waitFor([&] { return allUp(-1, why); }, std::chrono::seconds(60))) << why << "\n" << diagnosis();

  // Phase 1: read in a loop while every daemon heartbeats. No read may fail, every node must be up in
  // every read, and no heartbeat count may go backwards; each must grow over the phase.
  std::string error;
  std::unique_ptr<ResourceDb> reader = ResourceDb::open(url, ResourceDb::OpenMode::Existing, error);
  ASSERT_TRUE(reader) << error;
  std::map<std::string, std::int64_t> firstCount, lastCount;
  int reads = 0, clusterLoads = 0, failedReads = 0, readsWithNodeNotUp = 0, countsGoingBack = 0, cliRuns = 0,
      cliFailures = 0;
  std::string firstProblem;
  const auto phaseEnd = Clock::now() + std::chrono::milliseconds(static_cast<int>(seconds * 1000));
  auto nextCli = Clock::now();
  while (Clock::now() < phaseEnd) {
    Cluster cluster;
    ++reads;
    ++clusterLoads;
    if (!loadClusterFromDatabase(url, 0, cluster, error)) {
      ++failedReads;
      if (firstProblem.empty()) firstProblem = error;
      continue;
    }
    int up = 0;
    for (const NodeInfo& n : cluster.nodes) up += n.status == NodeStatus::Up;
    if (up != daemonCount || static_cast<int>(cluster.nodes.size()) != daemonCount) {
      ++readsWithNodeNotUp;
      if (firstProblem.empty()) firstProblem = std::to_string(up) + " nodes up";
    }
    std::vector<NodeRecord> records;
    ++reads;
    if (!reader->readRecords(records, error)) {
      ++failedReads;
      if (firstProblem.empty()) firstProblem = error;
      continue;
    }
    for (const NodeRecord& r : records) {
      auto [it, isNew] = lastCount.emplace(r.node.host, r.heartbeatCount);
      if (isNew) firstCount[r.node.host] = r.heartbeatCount;
      if (r.heartbeatCount < it->second) ++countsGoingBack;
      it->second = r.heartbeatCount;
    }
    if (Clock::now() >= nextCli) {  // `streammap nodes`, as a user would run it, once a second
      int status = 0;
      const std::string table = runCommand(std::string(DISPAR_RESOURCES_CLI) + " nodes --db '" + url + "'", &status);
      ++cliRuns;
      int upLines = 0;
      for (std::size_t at = 0; (at = table.find(" up ", at)) != std::string::npos; ++at) ++upLines;
      if (status != 0 || upLines != daemonCount) {
        ++cliFailures;
        if (firstProblem.empty()) firstProblem = "streammap nodes: status " + std::to_string(status) + "\n" + table;
      }
      nextCli = Clock::now() + std::chrono::seconds(1);
    }
  }
  int grew = 0;
  std::int64_t beats = 0;
  for (const auto& [h, count] : lastCount) {
    grew += count > firstCount[h];
    beats += count - firstCount[h];
  }
  std::printf("postgres stress: %d daemons, %.1f s, %d reads (%d loadClusterFromDatabase, %d readRecords; %d failed, "
              "%d with a node not up), %d `streammap nodes` runs (%d failed), %d heartbeat counts went back, %d of %d "
              "counts grew, %.1f heartbeats/s per daemon\n",
              daemonCount, seconds, reads, clusterLoads, reads - clusterLoads, failedReads, readsWithNodeNotUp, cliRuns,
              cliFailures, countsGoingBack, grew, daemonCount, static_cast<double>(beats) / daemonCount / seconds);
  RecordProperty("daemons", daemonCount);
  RecordProperty("reads", reads);
  RecordProperty("failed_reads", failedReads);
  EXPECT_EQ(failedReads, 0) << firstProblem;
  EXPECT_EQ(readsWithNodeNotUp, 0) << firstProblem;
  EXPECT_EQ(cliFailures, 0) << firstProblem;
  EXPECT_GT(cliRuns, 0);
  EXPECT_EQ(countsGoingBack, 0);
  EXPECT_EQ(grew, daemonCount) << "every node's heartbeat count must grow";
  EXPECT_GT(reads, 0);

  // Phase 2: a daemon killed with SIGKILL: its node goes down once its heartbeat is older than the TTL.
  const int victim = 0;
  ASSERT_TRUE(WIFSIGNALED(daemons.stop(victim, SIGKILL)));
  const auto killedAt = Clock::now();
  Cluster cluster;
  auto victimDown = [&] {
    if (!loadClusterFromDatabase(url, 0, cluster, error)) return false;
    for (const NodeInfo& n : cluster.nodes)
      if (n.host == host(victim)) return n.status == NodeStatus::Down;
    return false;
  };
  ASSERT_TRUE(waitFor(victimDown, std::chrono::seconds(ttl + 3))) << error;
  const double downAfter = std::chrono::duration<double>(Clock::now() - killedAt).count();
  std::printf("postgres stress: %s down %.1f s after SIGKILL (ttl %d s)\n", host(victim).c_str(), downAfter, ttl);
  EXPECT_TRUE(allUp(victim, why)) << why;

  // Phase 3: the server restarts under the daemons: each logs the reconnection, none exits, and every
  // node is kept up (its heartbeat count grows after the restart).
  std::map<std::string, std::int64_t> beforeRestart;
  {
    std::vector<NodeRecord> records;
    ASSERT_TRUE(reader->readRecords(records, error)) << error;
    for (const NodeRecord& r : records) beforeRestart[r.node.host] = r.heartbeatCount;
  }
  reader.reset();  // its connection dies with the server
  ASSERT_NO_THROW(server.restart());
  auto everyDaemonReconnected = [&] {
    for (int i = 0; i < daemons.count(); ++i)
      if (i != victim && daemons.log(i).find("reconnected to ") == std::string::npos) return false;
    return true;
  };
  EXPECT_TRUE(waitFor(everyDaemonReconnected, std::chrono::seconds(60))) << daemons.log(1);
  for (int i = 0; i < daemons.count(); ++i) {
    if (i == victim) continue;
    EXPECT_TRUE(daemons.running(i)) << host(i) << " exited:\n" << daemons.log(i);
  }
  auto countsGrewAfterRestart = [&] {
    std::unique_ptr<ResourceDb> db = ResourceDb::open(url, ResourceDb::OpenMode::Existing, error);
    std::vector<NodeRecord> records;
    if (!db || !db->readRecords(records, error)) return false;
    for (const NodeRecord& r : records)
      if (r.node.host != host(victim) && r.heartbeatCount <= beforeRestart[r.node.host]) return false;
    return true;
  };
  EXPECT_TRUE(waitFor(countsGrewAfterRestart, std::chrono::seconds(30))) << error;
  EXPECT_TRUE(waitFor([&] { return allUp(victim, why); }, std::chrono::seconds(10))) << why;
  const std::string sample = daemons.log(1);
  EXPECT_NE(sample.find("connection to the server lost"), std::string::npos) << sample;

  // Every daemon stops cleanly on SIGTERM.
  for (int i = 0; i < daemons.count(); ++i) {
    if (i == victim) continue;
    const int status = daemons.stop(i, SIGTERM);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << host(i) << ":\n" << daemons.log(i);
  }
}
