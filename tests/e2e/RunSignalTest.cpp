// `streammap run` stays the job's supervisor: a SIGTERM sent to it (a batch system's or `timeout`'s) or a
// SIGINT (^C) stops the launcher and every rank, and streammap reports how the job ended.
#include "Process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace dispar::testing {
namespace {

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

std::vector<pid_t> pidsIn(const std::string& text) {
  std::vector<pid_t> pids;
  std::istringstream in(text);
  for (pid_t pid = 0; in >> pid;) pids.push_back(pid);
  return pids;
}

void stopsEveryRankOn(int signal) {
  ScratchDir dir;
  // A two-rank "program" whose ranks record their pids and would run for five minutes; its RTG maps
  // both ranks onto made-up hosts that MPICH's fork launcher runs here.
  dir.write("app", "#!/bin/sh\necho $$ >> '" + dir.file("pids") + "'\nexec sleep 300\n");
  ASSERT_EQ(::chmod(dir.file("app").c_str(), 0755), 0);
  dir.write("app.rtg.json", R"({"format": "dispar-rtg", "version": 1, "program": "app", "cuda_archs": [],
    "vertices": [{"id": 0, "rank": 0, "vnode": "a", "replica": 0, "replicas": 1, "type": "CO", "cost": 1.0,
                  "memory": null, "location": "app.dsp:1:1"},
                 {"id": 1, "rank": 1, "vnode": "b", "replica": 0, "replicas": 1, "type": "CO", "cost": 1.0,
                  "memory": null, "location": "app.dsp:2:1"}],
    "edges": [{"from": 0, "to": 1, "pipe": "p", "element": "int", "element_bytes": 4, "volume": null}]})");
  dir.write("cluster.json", R"({"format": "dispar-cluster", "version": 1, "nodes": [
    {"host": "alpha", "cpu": {"sockets": 1, "cores": 1, "threads": 1}},
    {"host": "beta", "cpu": {"sockets": 1, "cores": 1, "threads": 1}}]})");

  const pid_t streammap = ::fork();
  ASSERT_GE(streammap, 0);
  if (streammap == 0) {
    if (::chdir(dir.path().c_str()) != 0) ::_exit(120);
    // As from an interactive terminal: a test runner started in the background ignores SIGINT, and an
    // ignored signal is one streammap must not pass on.
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::setenv("DISPAR_MPIEXEC", MPIEXEC_PATH, 1);
    ::execl(STREAMMAP_PATH, STREAMMAP_PATH, "run", "--launcher", "fork", "--cluster", "cluster.json", "./app",
            static_cast<char*>(nullptr));
    ::_exit(121);
  }
  // Both ranks running.
  std::vector<pid_t> ranks;
  for (int i = 0; i < 300 && ranks.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ranks = pidsIn(fileExists(dir.file("pids")) ? readFile(dir.file("pids")) : "");
  }
  ASSERT_EQ(ranks.size(), 2u) << "the ranks did not start";

  ASSERT_EQ(::kill(streammap, signal), 0);
  // streammap ends once the launcher has; the launcher ends once it stopped the ranks.
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 200 && done == 0; ++i) {
    done = ::waitpid(streammap, &status, WNOHANG);
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (done == 0) {
    ::kill(streammap, SIGKILL);
    ::waitpid(streammap, &status, 0);
    for (pid_t rank : ranks) ::kill(rank, SIGKILL);
    FAIL() << "streammap run did not end within 10 s of the signal";
  }
  ASSERT_TRUE(WIFEXITED(status)) << "streammap itself was killed instead of passing the signal on";
  EXPECT_GE(WEXITSTATUS(status), 128) << "an interrupted job must not look like a success";
  for (pid_t rank : ranks) {
    for (int i = 0; i < 100 && alive(rank); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(alive(rank)) << "rank process " << rank << " still runs";
    if (alive(rank)) ::kill(rank, SIGKILL);
  }
}

TEST(RunSignals, SigtermStopsTheLauncherAndEveryRank) { stopsEveryRankOn(SIGTERM); }
TEST(RunSignals, SigintStopsTheLauncherAndEveryRank) { stopsEveryRankOn(SIGINT); }

}  // namespace
}  // namespace dispar::testing
