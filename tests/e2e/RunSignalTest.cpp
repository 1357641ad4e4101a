// `streammap run` stays the job's supervisor: a SIGTERM sent to it (a batch system's or `timeout`'s) or a
// SIGINT (^C) stops the launcher and every rank, and streammap reports how the job ended. Issue 36, item 6:
// every death named — a rank a signal kills names its instances, `streammap run` exits 128 + the signal
// whoever sent it, and the job does not outlive a `streammap run` killed with SIGKILL.
#include "Process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <tuple>
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

/// Waits up to `seconds` for `pid`; its wait status, or -1 (then it is killed).
int waitFor(pid_t pid, int seconds) {
  int status = 0;
  for (int i = 0; i < seconds * 20; ++i) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
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
  const int status = waitFor(streammap, 10);
  if (status == -1) {
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

/// A DISPAR program of three VNODEs, grouped into one rank on a one-core node, whose source VNODE dies as
/// $DIE says after 100 items ("segv", "abort", or "sleep" for five minutes).
class DyingProgram {
 public:
  DyingProgram() {
    dir_.write("die.dsp", R"(#include <dispar/dispar.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
PIPE(long, a);
PIPE(long, b);
VNODE(src, OUT(a)) {
  for (long v = 0; v < 1000; ++v) {
    a.write(v);
    const char* how = std::getenv("DIE");
    if (v != 100 || how == nullptr) continue;
    if (std::strcmp(how, "segv") == 0) *static_cast<volatile int*>(nullptr) = 1;
    if (std::strcmp(how, "abort") == 0) std::abort();
    if (std::strcmp(how, "sleep") == 0) { std::printf("pid=%d\n", static_cast<int>(getpid())); std::fflush(stdout); sleep(300); }
  }
}
VNODE(mid, IN(a), OUT(b)) { long v; while (a.read(v)) b.write(v); }
VNODE(sink, IN(b)) { long v, n = 0; while (b.read(v)) ++n; std::printf("n=%ld\n", n); }
)");
    dir_.write("cluster.json",
               R"({"format": "dispar-cluster", "version": 1, "nodes": [{"host": "n1", "cpu": {"cores": 1}}]})");
    built_ = runProcess({DISPARCC_PATH, "die.dsp", "-o", "die"}, dir_.path());
  }
  const ProcessResult& built() const { return built_; }
  const ScratchDir& dir() const { return dir_; }
  /// `streammap run` of the program as a child, in its own directory, with DIE=`how`.
  pid_t start(const char* how, const std::string& outputFile) const {
    const pid_t pid = ::fork();
    if (pid != 0) return pid;
    if (::chdir(dir_.path().c_str()) != 0) ::_exit(120);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::setenv("DISPAR_MPIEXEC", MPIEXEC_PATH, 1);
    ::setenv("DISPAR_RESOURCE_DB", dir_.file("db.sqlite").c_str(), 1);
    ::setenv("DIE", how, 1);
    const int out = ::open(outputFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || ::dup2(out, STDOUT_FILENO) < 0 || ::dup2(out, STDERR_FILENO) < 0) ::_exit(122);
    ::execl(STREAMMAP_PATH, STREAMMAP_PATH, "run", "--launcher", "fork", "--cluster", "cluster.json", "./die",
            static_cast<char*>(nullptr));
    ::_exit(121);
  }

 private:
  ScratchDir dir_;
  ProcessResult built_;
};

/// The pid the sleeping rank printed, once it has.
pid_t sleepingRank(const std::string& outputFile) {
  for (int i = 0; i < 600; ++i) {
    const std::string text = fileExists(outputFile) ? readFile(outputFile) : "";
    if (const std::size_t at = text.find("pid="); at != std::string::npos && text.find('\n', at) != std::string::npos)
      return static_cast<pid_t>(std::atoi(text.c_str() + at + 4));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

// Before: MPICH's "BAD TERMINATION ... EXIT CODE: 11" named a process id only, and `streammap run`
// exited 11 (SIGSEGV) or 6 (abort()).
TEST(RankDeaths, AFaultInAGroupedRankNamesItsInstancesAndExitsWith128PlusTheSignal) {
  DyingProgram program;
  ASSERT_EQ(program.built().status, 0) << program.built().output;
  for (const auto& [how, signal, name] :
       {std::tuple<const char*, int, const char*>{"segv", SIGSEGV, "SIGSEGV"}, {"abort", SIGABRT, "SIGABRT"}}) {
    const std::string output = program.dir().file(std::string("out.") + how);
    const int status = waitFor(program.start(how, output), 120);
    const std::string text = readFile(output);
    ASSERT_NE(status, -1) << how << ": streammap run did not end\n" << text;
    ASSERT_TRUE(WIFEXITED(status)) << how;
    EXPECT_EQ(WEXITSTATUS(status), 128 + signal) << how << "\n" << text;
    EXPECT_NE(text.find("dispar: rank 0 killed by signal " + std::to_string(signal) + " (" + name +
                        ") in vnode 'src' (replica 0, rank 0); the rank ran vnode 'src' (replica 0), vnode 'mid' "
                        "(replica 0), vnode 'sink' (replica 0)\n"),
              std::string::npos)
        << how << "\n"
        << text;
    EXPECT_NE(text.find("streammap run: the job did not run to its end: a rank was killed by signal " +
                        std::to_string(signal) + " (" + name + ") (named above)"),
              std::string::npos)
        << how << "\n"
        << text;
  }
}

// Before: hydra's mpiexec, sent SIGTERM by someone else, ended the ranks and exited 0, and so did
// `streammap run`.
TEST(RankDeaths, ASignalToTheLauncherFromElsewhereIsNotASuccess) {
  DyingProgram program;
  ASSERT_EQ(program.built().status, 0) << program.built().output;
  const std::string output = program.dir().file("out.term");
  const pid_t streammap = program.start("sleep", output);
  const pid_t rank = sleepingRank(output);
  ASSERT_GT(rank, 0) << readFile(output);
  // The launcher: the rank's parent's parent (mpiexec -> hydra_pmi_proxy -> rank).
  const auto parentOf = [](pid_t pid) {
    std::istringstream stat(readFile("/proc/" + std::to_string(pid) + "/stat"));
    std::string skip;
    pid_t parent = 0;
    stat >> skip >> skip >> skip >> parent;  // pid (comm) state ppid; comm has no spaces here
    return parent;
  };
  const pid_t launcher = parentOf(parentOf(rank));
  ASSERT_EQ(parentOf(launcher), streammap);
  ASSERT_EQ(::kill(launcher, SIGTERM), 0);
  const int status = waitFor(streammap, 60);
  const std::string text = readFile(output);
  ASSERT_NE(status, -1) << text;
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM) << text;
  EXPECT_NE(text.find("dispar: rank 0 killed by signal 15 (SIGTERM); the rank ran vnode 'src' (replica 0)"),
            std::string::npos)
      << text;
}

// The job's outcome is its ranks': a launcher that fails in its own shutdown after every rank ended its
// work with status 0 (hydra exits 255 when DISPAR_FINALIZE_SECONDS ends ranks that MPICH's MPI_Finalize
// held over TCP, docs/cluster.md) does not fail the run, and says so; one whose ranks never ran does.
TEST(RankDeaths, ALauncherFailingAfterEveryRankEndedWellIsASuccessWithANote) {
  DyingProgram program;
  ASSERT_EQ(program.built().status, 0) << program.built().output;
  const ScratchDir& dir = program.dir();
  dir.write("after.sh", std::string("#!/bin/sh\n") + MPIEXEC_PATH + " \"$@\"\nexit 255\n");
  dir.write("never.sh", "#!/bin/sh\nexit 255\n");
  ASSERT_EQ(::chmod(dir.file("after.sh").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(dir.file("never.sh").c_str(), 0755), 0);
  const std::vector<std::string> run = {STREAMMAP_PATH, "run",          "--launcher",   "fork",
                                        "--cluster",    "cluster.json", "--no-history", "./die"};
  const ProcessResult after = runProcess(run, dir.path(), {"DISPAR_MPIEXEC=" + dir.file("after.sh")}, 120);
  EXPECT_EQ(after.status, 0) << after.output;
  EXPECT_NE(after.output.find("n=1000"), std::string::npos) << after.output;
  EXPECT_NE(after.output.find("streammap run: note: every rank of the job ended its work with status 0; " +
                              dir.file("after.sh") + " then failed in its own shutdown (status 255"),
            std::string::npos)
      << after.output;
  const ProcessResult never = runProcess(run, dir.path(), {"DISPAR_MPIEXEC=" + dir.file("never.sh")}, 120);
  EXPECT_EQ(never.status, 255) << never.output;
  EXPECT_EQ(never.output.find("the run succeeded"), std::string::npos) << never.output;
}

// Before: a rank killed with SIGKILL (the out-of-memory killer, `kill -9`) ended the job with hydra's
// banner naming a process id only, and `streammap run` exited 255.
TEST(RankDeaths, ARankKilledWithSigkillIsNamedFromTheLaunchersReport) {
  DyingProgram program;
  ASSERT_EQ(program.built().status, 0) << program.built().output;
  const std::string output = program.dir().file("out.sigkill");
  const pid_t streammap = program.start("sleep", output);
  const pid_t rank = sleepingRank(output);
  ASSERT_GT(rank, 0) << readFile(output);
  ASSERT_EQ(::kill(rank, SIGKILL), 0);
  const int status = waitFor(streammap, 60);
  const std::string text = readFile(output);
  ASSERT_NE(status, -1) << text;
  ASSERT_TRUE(WIFEXITED(status)) << text;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGKILL) << text;
  EXPECT_NE(text.find("dispar: rank 0 killed by signal 9 (SIGKILL); the rank ran vnode 'src' (replica 0), vnode "
                      "'mid' (replica 0), vnode 'sink' (replica 0) (as the launcher reports: process " +
                      std::to_string(rank) + " on n1)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("streammap run: the job did not run to its end: a rank was killed by signal 9 (SIGKILL)"),
            std::string::npos)
      << text;
}

// Before: `kill -9` of `streammap run` left mpiexec, its proxy and the ranks running.
TEST(RankDeaths, TheJobDoesNotOutliveAStreammapRunKilledWithSigkill) {
  DyingProgram program;
  ASSERT_EQ(program.built().status, 0) << program.built().output;
  const std::string output = program.dir().file("out.kill");
  const pid_t streammap = program.start("sleep", output);
  const pid_t rank = sleepingRank(output);
  ASSERT_GT(rank, 0) << readFile(output);
  ASSERT_EQ(::kill(streammap, SIGKILL), 0);
  ::waitpid(streammap, nullptr, 0);
  for (int i = 0; i < 200 && alive(rank); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(alive(rank)) << "rank " << rank << " outlived streammap run";
  if (alive(rank)) ::kill(rank, SIGKILL);
}

}  // namespace
}  // namespace dispar::testing
