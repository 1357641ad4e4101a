// The stall report's wait-for graph (runtime/src/Stall.h), without MPI: the cycle found whichever
// instance it starts from, each kind of wait, no cycle when a reader waits on any writer, and the
// settings' parsing. The end-to-end tests (tests/e2e/StallTest.cpp) deadlock real programs.
#include "Grouping.h"
#include "Stall.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace dispar::rt;

const VnodeSpec kVnodes[] = {
    {"split", 0, 1, "app.dsp:5:1", false}, {"work", 1, 2, "app.dsp:6:1", false}, {"join", 3, 1, "app.dsp:7:1", false}};
const PipeSpec kPipes[] = {{"a", "int", sizeof(int), 0, 1, MergeOrder::RoundRobin, 4, SplitMode::RoundRobin},
                           {"b", "int", sizeof(int), 1, 2, MergeOrder::RoundRobin, 4, SplitMode::RoundRobin}};
const ProgramSpec kProgram = {"app", kVnodes, 3, kPipes, 2, 4};

InstanceState waiting(int pipe, PipeWait wait, int peer, int rank) {
  InstanceState s;
  s.pipe = pipe;
  s.wait = wait;
  s.peer = peer;
  s.rank = rank;
  return s;
}

TEST(StallReport, NamesEveryInstanceAndTheCycleWithTheFixForAFullPipe) {
  // split waits for room on a (work[1] reads it), work[1] for room on b (join reads it), join reads b
  // from work[0], which reads a from split: one cycle through all four.
  std::vector<InstanceState> states = {waiting(0, PipeWait::Credit, 2, 0), waiting(0, PipeWait::Data, 0, 1),
                                       waiting(1, PipeWait::Credit, 3, 1), waiting(1, PipeWait::Data, 1, 0)};
  const std::string report = formatStallReport(kProgram, states, 2.5);
  EXPECT_NE(report.find("stall: no VNODE instance has completed a pipe operation for 2.5 s"), std::string::npos);
  EXPECT_NE(report.find("  vnode 'split' (replica 0), rank 0: waits to write pipe 'a': room, which vnode 'work' "
                        "(replica 1) gives back as it reads (the pipe's window is full)\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("  vnode 'join' (replica 0), rank 0: waits to read pipe 'b': data from vnode 'work' (replica "
                        "0)\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("cycle: vnode 'split' (replica 0) waits to write 'a' read by vnode 'work' (replica 1), which "
                        "waits to write 'b' read by vnode 'join' (replica 0), which reads 'b' from vnode 'work' "
                        "(replica 0), which reads 'a' from vnode 'split' (replica 0)\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("likely fix: a writer waits for room in a full pipe"), std::string::npos) << report;
}

TEST(StallReport, AReadOnlyCycleGetsThePrimingFixAndFinishedInstancesAreListed) {
  std::vector<InstanceState> states(4);
  states[0].finished = true;
  states[1] = waiting(0, PipeWait::Data, 3, 1);
  states[2].finished = true;
  states[3] = waiting(1, PipeWait::Drain, 1, 2);
  const std::string report = formatStallReport(kProgram, states, 10);
  EXPECT_NE(report.find("  vnode 'split' (replica 0), rank 0: finished\n"), std::string::npos) << report;
  EXPECT_NE(report.find("has returned and waits for the end of pipe 'b' from vnode 'work' (replica 0)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("cycle: vnode 'work' (replica 0) reads 'a' from vnode 'join' (replica 0), which drains 'b' "
                        "from vnode 'work' (replica 0)\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("likely fix: every VNODE on the cycle waits to read before it writes"), std::string::npos);
}

TEST(StallReport, NoCycleWhenAReaderWaitsOnAnyWriter) {
  std::vector<InstanceState> states(4);
  states[0].finished = true;
  states[1].finished = true;
  states[2] = waiting(1, PipeWait::Credit, 3, 0);
  states[3] = waiting(1, PipeWait::Data, -1, 0);
  const std::string report = formatStallReport(kProgram, states, 10);
  EXPECT_NE(report.find("data from any of its writers"), std::string::npos) << report;
  EXPECT_EQ(report.find("cycle:"), std::string::npos) << report;
  EXPECT_NE(report.find("no cycle among the instances"), std::string::npos) << report;
}

TEST(StallSettings, ReadFromTheEnvironmentWithClearErrors) {
  std::string error;
  ::unsetenv("DISPAR_STALL_SECONDS");
  ::unsetenv("DISPAR_STALL_ABORT");
  auto settings = readStallSettings(error);
  ASSERT_TRUE(settings);
  EXPECT_EQ(settings->seconds, 10);
  EXPECT_FALSE(settings->abort);
  ::setenv("DISPAR_STALL_SECONDS", "0.5", 1);
  ::setenv("DISPAR_STALL_ABORT", "1", 1);
  settings = readStallSettings(error);
  ASSERT_TRUE(settings);
  EXPECT_EQ(settings->seconds, 0.5);
  EXPECT_TRUE(settings->abort);
  for (const char* bad : {"x", "-1", "nan", "1e7", "5s"}) {
    ::setenv("DISPAR_STALL_SECONDS", bad, 1);
    EXPECT_FALSE(readStallSettings(error)) << bad;
    EXPECT_NE(error.find("DISPAR_STALL_SECONDS='"), std::string::npos) << error;
  }
  ::setenv("DISPAR_STALL_SECONDS", "3", 1);
  ::setenv("DISPAR_STALL_ABORT", "yes", 1);
  EXPECT_FALSE(readStallSettings(error));
  EXPECT_NE(error.find("DISPAR_STALL_ABORT='yes' is not 1"), std::string::npos) << error;
  ::unsetenv("DISPAR_STALL_SECONDS");
  ::unsetenv("DISPAR_STALL_ABORT");
}

TEST(StallSettings, TheHeartbeatIsOnByDefaultAndAWatchRunsForEither) {
  std::string error;
  ::unsetenv("DISPAR_HEARTBEAT_SECONDS");
  auto settings = readStallSettings(error);
  ASSERT_TRUE(settings);
  EXPECT_EQ(settings->heartbeatSeconds, 30);
  EXPECT_TRUE(settings->watching());
  ::setenv("DISPAR_HEARTBEAT_SECONDS", "0", 1);
  ::setenv("DISPAR_STALL_SECONDS", "0", 1);
  settings = readStallSettings(error);
  ASSERT_TRUE(settings);
  EXPECT_FALSE(settings->watching());
  ::setenv("DISPAR_HEARTBEAT_SECONDS", "4", 1);
  settings = readStallSettings(error);
  ASSERT_TRUE(settings);
  EXPECT_EQ(settings->heartbeatSeconds, 4);
  EXPECT_TRUE(settings->watching()) << "the heartbeat alone runs the watch";
  ::setenv("DISPAR_HEARTBEAT_SECONDS", "soon", 1);
  EXPECT_FALSE(readStallSettings(error));
  EXPECT_NE(error.find("DISPAR_HEARTBEAT_SECONDS='soon' is not a number of seconds from 0 (no heartbeat)"),
            std::string::npos)
      << error;
  ::unsetenv("DISPAR_HEARTBEAT_SECONDS");
  ::unsetenv("DISPAR_STALL_SECONDS");
}

// Ranks 0 and 1 run split and work[0] on node n1; rank 2 runs work[1] and join on n2.
RankGroups twoNodeGroups() {
  RankGroups groups;
  groups.instancesOfRank = {{0}, {1}, {2, 3}};
  groups.rankOfInstance = {0, 1, 2, 2};
  return groups;
}

TEST(UnreachableReport, NamesTheSilentRanksTheirInstancesAndTheirNode) {
  const std::string report = formatUnreachableReport(kProgram, twoNodeGroups(), 0, {"n1", "n1", "n2"}, {2}, 30.4);
  EXPECT_EQ(report, "rank 0 (vnode 'split' (replica 0)) on node 'n1' has not heard from every other rank for 30 s "
                    "(DISPAR_HEARTBEAT_SECONDS), and these do not answer:\n"
                    "  rank 2 (vnode 'work' (replica 1), vnode 'join' (replica 0)) on node 'n2'\n"
                    "node 'n2' cannot be reached from node 'n1': failed, or a link between them is down\n"
                    "ending the job, status 6\n");
}

TEST(UnreachableReport, NamesEveryNodeOnceAndSaysWhenTheSilentRanksShareTheReportersNode) {
  std::string report = formatUnreachableReport(kProgram, twoNodeGroups(), 2, {"n1", "n3", "n2"}, {0, 1}, 5);
  EXPECT_NE(report.find("nodes 'n1' and 'n3' cannot be reached from node 'n2'"), std::string::npos) << report;
  report = formatUnreachableReport(kProgram, twoNodeGroups(), 2, {"n2", "n2", "n2"}, {0}, 5);
  EXPECT_NE(report.find("node 'n2' cannot be reached from node 'n2': its ranks stopped answering"), std::string::npos)
      << report;
}

}  // namespace
