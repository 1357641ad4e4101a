// The launchers' reports of a rank that died of a signal, as MPICH's hydra, Slurm's srun and Open MPI's
// mpirun print them (lines copied from runs of each), and the rank registry's records
// (dispar_lang/RankDeath.h) that turn them into the rank's instances.
#include "streammap/LauncherDeath.h"

#include "dispar_lang/RankDeath.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace dispar::streammap {
namespace {

std::optional<LauncherDeath> read(const std::vector<std::string>& lines) {
  LauncherDeathReader reader;
  for (const std::string& line : lines) reader.line(line);
  return reader.first();
}

TEST(LauncherDeath, HydraBannerNamesTheProcessAndItsSignal) {
  const auto death =
      read({"", "===================================================================================",
            "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", "=   PID 15257 RUNNING AT n1",
            "=   EXIT CODE: 9", "=   CLEANING UP REMAINING PROCESSES", "=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES",
            "==================================================================================="});
  ASSERT_TRUE(death);
  EXPECT_EQ(death->rank, -1);
  EXPECT_EQ(death->pid, 15257);
  EXPECT_EQ(death->host, "n1");
  EXPECT_EQ(death->signal, SIGKILL);
}

TEST(LauncherDeath, HydraExitCodesOtherThanNineAreNotSignals) {
  // A rank that reports its own end (a fault, abort(), exit()) printed its own line; hydra's 11 or 1
  // may be an exit status as well as a signal, and is not read as either.
  EXPECT_FALSE(read({"=   PID 15257 RUNNING AT n1", "=   EXIT CODE: 11"}));
  EXPECT_FALSE(read({"=   PID 15257 RUNNING AT n1", "=   EXIT CODE: 1"}));
  EXPECT_FALSE(read({"=   EXIT CODE: 9"})) << "no process named first";
  EXPECT_FALSE(read({"=   PID 15257 RUNNING AT n1", "=   EXIT CODE: 99"}));
}

TEST(LauncherDeath, SrunNamesTheTask) {
  const auto one = read({"srun: error: node7: task 3: Killed"});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->rank, 3);
  EXPECT_EQ(one->pid, -1);
  EXPECT_EQ(one->host, "node7");
  EXPECT_EQ(one->signal, SIGKILL);
  const auto range = read({"srun: error: node7: tasks 2-5: Killed"});
  ASSERT_TRUE(range);
  EXPECT_EQ(range->rank, 2);
  EXPECT_FALSE(read({"srun: error: node7: task 3: Exited with exit code 1"}));
  EXPECT_FALSE(read({"srun: error: Killed"}));
  EXPECT_FALSE(read({"srun: error: n: task x: Killed"}));
}

TEST(LauncherDeath, OpenMpiNamesRankProcessNodeAndSignal) {
  const auto death = read({"mpirun noticed that process rank 2 with PID 4242 on node n3 exited on signal 9 (Killed)."});
  ASSERT_TRUE(death);
  EXPECT_EQ(death->rank, 2);
  EXPECT_EQ(death->pid, 4242);
  EXPECT_EQ(death->host, "n3");
  EXPECT_EQ(death->signal, 9);
  EXPECT_FALSE(read({"mpirun noticed that process rank 2 with PID 4242 on node n3 exited on signal 0."}));
  EXPECT_FALSE(read({"mpirun noticed that process rank two with PID 4242 on node n3 exited on signal 9."}));
}

TEST(LauncherDeath, OnlyTheFirstDeathCounts) {
  const auto death = read({"srun: error: a: task 1: Killed", "srun: error: b: task 0: Killed"});
  ASSERT_TRUE(death);
  EXPECT_EQ(death->rank, 1);
}

TEST(RankRecord, RoundTripsAndRefusesWhatIsNotOne) {
  lang::RankRecord record{7, 31337, "n1", "vnode 'a' (replica 0), vnode 'b' (replica 2)"};
  lang::RankRecord back;
  ASSERT_TRUE(lang::parseRankRecord(7, lang::formatRankRecord(record), back));
  EXPECT_EQ(back.rank, 7);
  EXPECT_EQ(back.pid, 31337);
  EXPECT_EQ(back.host, "n1");
  EXPECT_EQ(back.instances, record.instances);
  for (const char* bad : {"", "31337", "x1 n1 vnode", "1  vnode", "1 n1 a\nb\n", "1234567890123456789 n1 a"})
    EXPECT_FALSE(lang::parseRankRecord(0, bad, back)) << bad;
}

TEST(RankRecord, TheDeadRankIsFoundByRankOrByProcessOnItsHost) {
  char pattern[] = "/tmp/launcher-death-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::filesystem::path dir = pattern;
  const auto write = [&](const lang::RankRecord& r) {
    std::ofstream(dir / lang::rankRecordFileName(r.rank)) << lang::formatRankRecord(r);
  };
  write({0, 100, "n1", "vnode 'a' (replica 0)"});
  write({1, 100, "n2", "vnode 'b' (replica 0)"});  // the same process id on another node
  std::ofstream(dir / "rank-2.partial") << "junk";

  const auto byPid = recordOfDeadRank(dir.string(), LauncherDeath{-1, 100, "n2", SIGKILL});
  ASSERT_TRUE(byPid);
  EXPECT_EQ(byPid->rank, 1);
  EXPECT_EQ(byPid->instances, "vnode 'b' (replica 0)");
  const auto byRank = recordOfDeadRank(dir.string(), LauncherDeath{0, -1, "n1", SIGKILL});
  ASSERT_TRUE(byRank);
  EXPECT_EQ(byRank->pid, 100);
  EXPECT_FALSE(recordOfDeadRank(dir.string(), LauncherDeath{-1, 100, "n3", SIGKILL}));
  EXPECT_FALSE(recordOfDeadRank(dir.string(), LauncherDeath{5, -1, "n1", SIGKILL}));
  EXPECT_FALSE(recordOfDeadRank("", LauncherDeath{0, -1, "n1", SIGKILL}));
  std::filesystem::remove_all(dir);
}

TEST(RankDeathLine, FormattedFromOutsideReadsAsTheHandlersLine) {
  const std::string line = lang::formatRankDeath(3, SIGKILL, "vnode 'a' (replica 0)");
  EXPECT_EQ(line, "dispar: rank 3 killed by signal 9 (SIGKILL); the rank ran vnode 'a' (replica 0)");
  EXPECT_EQ(lang::signalOfRankDeath(line), SIGKILL);
  EXPECT_EQ(lang::rankOfRankDeath(line), 3);
  EXPECT_EQ(lang::rankOfRankDeath("dispar: rank 3 did something else"), -1);
}

// A node whose every rank left a record but neither a death line nor an end mark is silent; whether
// another rank was heard says whether the job's end singles it out; a job a rank aborted has no silent
// node (its failure explains the end).
TEST(SilentNodes, AreTheNodesAllOfWhoseRanksEndedWithoutAWord) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("silent-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto record = [&](int rank, const std::string& host, const std::string& instances) {
    std::ofstream(dir / lang::rankRecordFileName(rank)) << lang::formatRankRecord({rank, 100 + rank, host, instances});
  };
  const auto end = [&](int rank, std::string_view how) {
    std::ofstream(dir / lang::rankEndFileName(rank)) << how << "\n";
  };
  record(0, "n1", "vnode 'source' (replica 0)");
  record(1, "n2", "vnode 'worker' (replica 0)");
  record(2, "n2", "vnode 'worker' (replica 1)");
  record(3, "n3", "vnode 'sink' (replica 0)");
  // n1's rank was stopped by the launcher (its death line), n3's ended; both of n2's are silent.
  end(3, lang::kRankEnded);
  SilentNodes silent = silentNodes(dir.string(), {0});
  EXPECT_TRUE(silent.heard);
  ASSERT_EQ(silent.nodes.size(), 1u);
  EXPECT_EQ(silent.nodes[0].host, "n2");
  ASSERT_EQ(silent.nodes[0].ranks.size(), 2u);
  EXPECT_EQ(silent.nodes[0].ranks[0].rank, 1);
  EXPECT_EQ(silent.nodes[0].ranks[1].instances, "vnode 'worker' (replica 1)");
  // One of n2's ranks reported: n2 is not silent (a rank killed alone is the launcher report's to name).
  EXPECT_TRUE(silentNodes(dir.string(), {0, 2}).nodes.empty());
  // Nobody heard: every node silent, and nothing heard to single one out.
  std::filesystem::remove(dir / lang::rankEndFileName(3));
  silent = silentNodes(dir.string(), {});
  EXPECT_FALSE(silent.heard);
  EXPECT_EQ(silent.nodes.size(), 3u);
  // A rank aborted the job: its failure explains the end, and `streammap run` starts the launcher's grace.
  EXPECT_FALSE(abortingRank(dir.string()));
  end(3, lang::kRankAborted);
  EXPECT_TRUE(silentNodes(dir.string(), {0}).nodes.empty());
  EXPECT_TRUE(silentNodes("", {0}).nodes.empty());
  EXPECT_EQ(abortingRank(dir.string()), 3);
  end(1, lang::kRankAborted);
  EXPECT_EQ(abortingRank(dir.string()), 1) << "the lowest";
  EXPECT_FALSE(abortingRank(""));
  std::filesystem::remove_all(dir);
}

// The end marks' one format (dispar_lang/RankDeath.h), and the rule that makes a job's work complete:
// every one of its ranks marked that its run returned 0.
TEST(RankEnds, AreReadAsWrittenAndEveryRankMustHaveEndedWithZero) {
  EXPECT_EQ(lang::formatRankEnd(false, 0), "ended 0\n");
  EXPECT_EQ(lang::formatRankEnd(true, 0), "aborted\n");
  EXPECT_EQ(lang::parseRankEnd("ended 3\n").status, 3);
  EXPECT_EQ(lang::parseRankEnd("ended 3\n").how, "ended");
  EXPECT_EQ(lang::parseRankEnd("ended\n").status, -1) << "an older mark, without its status";
  EXPECT_EQ(lang::parseRankEnd("ended x").status, -1);
  EXPECT_EQ(lang::parseRankEnd("aborted\n").how, "aborted");
  EXPECT_EQ(lang::parseRankEnd("").how, "");

  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("ends-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto end = [&](int rank, bool aborted, int status) {
    std::ofstream(dir / lang::rankEndFileName(rank)) << lang::formatRankEnd(aborted, status);
  };
  end(0, false, 0);
  EXPECT_FALSE(everyRankEndedWell(dir.string(), 2)) << "rank 1 left no mark";
  end(1, false, 2);
  EXPECT_FALSE(everyRankEndedWell(dir.string(), 2)) << "rank 1 returned 2";
  end(1, true, 0);
  EXPECT_FALSE(everyRankEndedWell(dir.string(), 2)) << "rank 1 aborted the job";
  end(1, false, 0);
  EXPECT_TRUE(everyRankEndedWell(dir.string(), 2));
  EXPECT_FALSE(everyRankEndedWell(dir.string(), 3));
  EXPECT_FALSE(everyRankEndedWell("", 2));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dispar::streammap
