#include "streammap/Daemon.h"
#include "streammap/ResourceDb.h"

#include "BackendTest.h"
#include "TestSupport.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sys/stat.h>
#include <thread>

using namespace dispar::streammap;
using dispar::streammap::test::BackendTest;
using dispar::streammap::test::readFile;
using dispar::streammap::test::TempDir;

namespace {

using Clock = std::chrono::steady_clock;

// Runs the daemon in a child process (the same code `streammap daemon` runs), stderr to `logPath`.
pid_t startDaemon(const DaemonOptions& options, const std::string& logPath) {
  pid_t pid = fork();
  if (pid == 0) {
    // The lock of a PostgreSQL-backed daemon lives in $TMPDIR: keep it in the test's directory.
    ::setenv("TMPDIR", logPath.substr(0, logPath.rfind('/')).c_str(), 1);
    int log = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (log < 0 || dup2(log, STDERR_FILENO) < 0) _exit(100);
    int status = runDaemon(options);
    std::fflush(stderr);
    _exit(status);
  }
  return pid;
}

// How long a condition that a daemon brings about may take before a test gives up: generous, since a
// loaded machine (CI runs the suite two tests at a time, PostgreSQL among them) can take seconds to start
// a daemon, and waitFor returns as soon as the condition holds.
constexpr std::chrono::milliseconds kPatience{30000};

bool waitFor(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

NodeRecord readNode(const std::string& db, const std::string& host, bool& found) {
  NodeRecord r;
  found = false;
  std::string error;
  auto handle = ResourceDb::open(db, ResourceDb::OpenMode::Existing, error);
  if (handle) handle->readRecord(host, r, found, error);
  return r;
}

}  // namespace

// Every test of this suite runs against both backends: an SQLite file and a PostgreSQL database.
class DaemonBackend : public BackendTest {};
DISPAR_INSTANTIATE_BACKENDS(DaemonBackend);

TEST_P(DaemonBackend, HeartbeatsRefusesSecondInstanceStopsOnSigtermAndGoesDownAfterTtl) {
  DaemonOptions options;
  options.dbPath = freshDatabase("d.db");
  options.intervalSeconds = 1;
  options.ttlSeconds = 1;
  options.pidFile = dir.file("daemon.pid");
  options.probe.hostName = "daemon-host";
  pid_t pid = startDaemon(options, dir.file("first.log"));
  ASSERT_GT(pid, 0);

  // Heartbeats: the count grows past one (the first probe plus at least one more interval).
  bool found = false;
  ASSERT_TRUE(waitFor([&] { return readNode(options.dbPath, "daemon-host", found).heartbeatCount >= 2; }, kPatience))
      << readFile(dir.file("first.log"));
  NodeRecord r = readNode(options.dbPath, "daemon-host", found);
  EXPECT_EQ(r.heartbeatTtlSeconds, 1);
  EXPECT_EQ(readFile(options.pidFile), std::to_string(pid) + "\n");

  // A second daemon for the same node and database refuses, naming the first one's pid.
  DaemonOptions second = options;
  second.pidFile.clear();
  pid_t other = startDaemon(second, dir.file("second.log"));
  int status = 0;
  ASSERT_EQ(waitpid(other, &status, 0), other);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_NE(readFile(dir.file("second.log")).find("another daemon (pid " + std::to_string(pid) + ")"),
            std::string::npos)
      << readFile(dir.file("second.log"));

  // SIGTERM stops it promptly (a correctness bound, generous for noisy machines).
  const auto sent = Clock::now();
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const auto elapsed = Clock::now() - sent;
  EXPECT_LT(elapsed, std::chrono::seconds(2));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_NE(readFile(dir.file("first.log")).find("received SIGTERM, stopping"), std::string::npos);
  EXPECT_EQ(access(options.pidFile.c_str(), F_OK), -1);  // pidfile removed

  // With the daemon gone, the node counts as down once its heartbeat is older than the 1 s TTL.
  Cluster cluster;
  std::string error;
  ASSERT_TRUE(waitFor(
      [&] {
        return loadClusterFromDatabase(options.dbPath, 0, cluster, error) && cluster.nodes.size() == 1 &&
               cluster.nodes[0].status == NodeStatus::Down;
      },
      std::chrono::milliseconds(4000)))
      << error;
}

TEST_P(DaemonBackend, SigintStopsItAndANewDaemonMayStartAfterwards) {
  DaemonOptions options;
  options.dbPath = freshDatabase("d.db");
  options.intervalSeconds = 60;  // the wait must end on the signal, not on the interval
  options.probe.hostName = "h";
  pid_t pid = startDaemon(options, dir.file("a.log"));
  bool found = false;
  ASSERT_TRUE(waitFor([&] { return readNode(options.dbPath, "h", found).heartbeatCount >= 1; }, kPatience));
  const auto sent = Clock::now();
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_LT(Clock::now() - sent, std::chrono::seconds(2));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // The lock went with the process.
  pid = startDaemon(options, dir.file("b.log"));
  ASSERT_TRUE(waitFor([&] { return readNode(options.dbPath, "h", found).heartbeatCount >= 2; }, kPatience))
      << readFile(dir.file("b.log"));
  kill(pid, SIGTERM);
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_EQ(readNode(options.dbPath, "h", found).heartbeatTtlSeconds, 180);  // default: 3 intervals
}

TEST_P(DaemonBackend, HeartbeatsBetweenProbesAndRecordsAgainWhenTheRecordWent) {
  DaemonOptions options;
  options.dbPath = freshDatabase("p.db");
  options.intervalSeconds = 0.1;
  options.probeIntervalSeconds = 1000;  // no second probe during the test
  options.ttlSeconds = 5;
  options.probe.hostName = "probe-host";
  pid_t pid = startDaemon(options, dir.file("probe.log"));
  ASSERT_GT(pid, 0);
  bool found = false;
  ASSERT_TRUE(waitFor([&] { return readNode(options.dbPath, "probe-host", found).heartbeatCount >= 1; }, kPatience))
      << readFile(dir.file("probe.log"));

  // A change behind the daemon's back stays while only heartbeats come (a probe would undo it).
  std::string error;
  NodeInfo edited = readNode(options.dbPath, "probe-host", found).node;
  edited.cores = 999;
  edited.threads = 999;  // no fewer threads than cores (Cluster.h, NodeLimits)
  {
    auto db = ResourceDb::open(options.dbPath, ResourceDb::OpenMode::Existing, error);
    ASSERT_TRUE(db && db->recordNode(edited, 5, nullptr, error)) << error;
  }
  const std::int64_t before = readNode(options.dbPath, "probe-host", found).heartbeatCount;
  ASSERT_TRUE(
      waitFor([&] { return readNode(options.dbPath, "probe-host", found).heartbeatCount >= before + 3; }, kPatience))
      << readFile(dir.file("probe.log"));
  EXPECT_EQ(readNode(options.dbPath, "probe-host", found).node.cores, 999);

  // The record removed (an import with --replace): the failed heartbeat makes the daemon probe and record
  // the node again at once, whatever the probe interval.
  {
    auto db = ResourceDb::open(options.dbPath, ResourceDb::OpenMode::Existing, error);
    ASSERT_TRUE(db && db->removeNodesExcept({}, nullptr, error)) << error;
  }
  ASSERT_TRUE(waitFor(
      [&] {
        const NodeRecord r = readNode(options.dbPath, "probe-host", found);
        return found && r.node.cores != 999;
      },
      kPatience))
      << readFile(dir.file("probe.log"));
  EXPECT_NE(readFile(dir.file("probe.log")).find("probe every 1000 s"), std::string::npos)
      << readFile(dir.file("probe.log"));
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_P(DaemonBackend, ASecondDaemonNeverTakesOverAPidFileInUse) {
  DaemonOptions first;
  first.dbPath = freshDatabase("pid.db");
  first.intervalSeconds = 1;
  first.pidFile = dir.file("shared.pid");
  first.probe.hostName = "node-a";
  const pid_t a = startDaemon(first, dir.file("a.log"));
  ASSERT_GT(a, 0);
  ASSERT_TRUE(waitFor([&] { return readFile(first.pidFile) == std::to_string(a) + "\n"; }, kPatience))
      << readFile(dir.file("a.log"));

  // Another node's daemon given the same pid file: refused, the file left to the first.
  DaemonOptions second = first;
  second.probe.hostName = "node-b";
  const pid_t b = startDaemon(second, dir.file("b.log"));
  int status = 0;
  ASSERT_EQ(waitpid(b, &status, 0), b);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_NE(readFile(dir.file("b.log"))
                .find("another daemon (pid " + std::to_string(a) + ") already owns the pid file " + first.pidFile),
            std::string::npos)
      << readFile(dir.file("b.log"));
  EXPECT_EQ(readFile(first.pidFile), std::to_string(a) + "\n");

  ASSERT_EQ(kill(a, SIGTERM), 0);
  ASSERT_EQ(waitpid(a, &status, 0), a);
  EXPECT_EQ(access(first.pidFile.c_str(), F_OK), -1);  // removed by its owner
}

// --pidfile never destroys what is not a pid file: a user's file is refused and left as it was, a FIFO
// (or device) is refused, a stale pid file (no daemon holds its lock) is taken over and removed at exit.
TEST_P(DaemonBackend, PidFileIsOursOrRefused) {
  DaemonOptions options;
  options.dbPath = freshDatabase("pidfile.db");
  options.intervalSeconds = 1;
  options.probe.hostName = "node-a";
  auto refusedWith = [&](const std::string& pidFile, const std::string& log) {
    options.pidFile = pidFile;
    const pid_t d = startDaemon(options, dir.file(log));
    int status = 0;
    EXPECT_EQ(waitpid(d, &status, 0), d);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << readFile(dir.file(log));
    return readFile(dir.file(log));
  };
  {
    std::ofstream(dir.file("notes.txt")) << "my notes\n";
  }
  EXPECT_NE(refusedWith(dir.file("notes.txt"), "notes.log").find("exists and is not a pid file; not replaced"),
            std::string::npos);
  EXPECT_EQ(readFile(dir.file("notes.txt")), "my notes\n");
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0644), 0);
  EXPECT_NE(refusedWith(dir.file("fifo"), "fifo.log").find("is a FIFO; not replaced"), std::string::npos);

  {
    std::ofstream(dir.file("stale.pid")) << "999999\n";
  }
  options.pidFile = dir.file("stale.pid");
  const pid_t d = startDaemon(options, dir.file("stale.log"));
  ASSERT_TRUE(waitFor([&] { return readFile(options.pidFile) == std::to_string(d) + "\n"; }, kPatience))
      << readFile(dir.file("stale.log"));
  ASSERT_EQ(kill(d, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(d, &status, 0), d);
  EXPECT_EQ(access(options.pidFile.c_str(), F_OK), -1);
}
