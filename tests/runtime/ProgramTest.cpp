// The rank layout and routing that every rank derives from a ProgramSpec, without MPI.
#include "Program.h"
#include "Stall.h"

#include "Profile.h"
#include <cstdlib>

#include <gtest/gtest.h>

namespace {

using namespace dispar::rt;

const VnodeSpec kVnodes[] = {{"source", 0, 1, "app.dsp:10:1", false},
                             {"square", 1, 3, "app.dsp:19:1", false},
                             {"sink", 4, 1, "app.dsp:28:1", false}};
const PipeSpec kPipes[] = {
    {"samples", "float", sizeof(float), 0, 1, MergeOrder::RoundRobin, 0, SplitMode::RoundRobin},
    {"energies", "double", sizeof(double), 1, 2, MergeOrder::RoundRobin, 0, SplitMode::RoundRobin}};
const ProgramSpec kProgram = {"app", kVnodes, 3, kPipes, 2, 5};

TEST(Program, ValidProgramHasNoProblem) { EXPECT_EQ(validateProgram(kProgram), ""); }

TEST(Program, RankCountMismatchNamesBothNumbersAndTheInstances) {
  EXPECT_EQ(rankCountMismatch(kProgram, 3),
            "app was launched with 3 ranks but needs 5 (one per VNODE instance: source 1, square 3, sink 1)");
  EXPECT_EQ(rankCountMismatch(kProgram, 1),
            "app was launched with 1 rank but needs 5 (one per VNODE instance: source 1, square 3, sink 1)");
}

TEST(Program, EachRankRunsOneInstance) {
  const int expected[][2] = {{0, 0}, {1, 0}, {1, 1}, {1, 2}, {2, 0}};
  for (int rank = 0; rank < 5; ++rank) {
    auto id = instanceOfRank(kProgram, rank);
    ASSERT_TRUE(id.has_value()) << rank;
    EXPECT_EQ(id->vnode, expected[rank][0]) << rank;
    EXPECT_EQ(id->replica, expected[rank][1]) << rank;
  }
  EXPECT_FALSE(instanceOfRank(kProgram, 5).has_value());
}

TEST(Program, SingleWriterDealsToEveryReaderReplica) {
  auto ports = planPorts(kProgram, {0, 0});
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0].role, PortRole::Writer);
  EXPECT_EQ(ports[0].peers, (std::vector<int>{1, 2, 3}));
}

TEST(Program, ReplicaReadsFromTheSingleWriterAndWritesToTheSingleReader) {
  auto ports = planPorts(kProgram, {1, 2});
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].pipe, 0);
  EXPECT_EQ(ports[0].role, PortRole::Reader);
  EXPECT_EQ(ports[0].peers, (std::vector<int>{0}));
  EXPECT_EQ(ports[1].pipe, 1);
  EXPECT_EQ(ports[1].role, PortRole::Writer);
  EXPECT_EQ(ports[1].peers, (std::vector<int>{4}));
}

TEST(Program, SingleReaderMergesEveryWriterReplicaInReplicaOrder) {
  auto ports = planPorts(kProgram, {2, 0});
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0].role, PortRole::Reader);
  EXPECT_EQ(ports[0].peers, (std::vector<int>{1, 2, 3}));
}

TEST(Program, EqualReplicaCountsConnectPairwise) {
  const VnodeSpec vnodes[] = {{"a", 0, 2, "p.dsp:1:1", false}, {"b", 2, 2, "p.dsp:2:1", false}};
  const PipeSpec pipes[] = {{"p", "int", sizeof(int), 0, 1, MergeOrder::RoundRobin, 0, SplitMode::RoundRobin}};
  const ProgramSpec program = {"p", vnodes, 2, pipes, 1, 4};
  ASSERT_EQ(validateProgram(program), "");
  EXPECT_EQ(planPorts(program, {0, 1})[0].peers, (std::vector<int>{3}));
  EXPECT_EQ(planPorts(program, {1, 0})[0].peers, (std::vector<int>{0}));
}

// The logical-stream rule: message n from writer replica n mod K to reader replica n mod M.
TEST(Program, AnyReplicaCountsFollowTheLogicalStream) {
  for (int writers = 1; writers <= 5; ++writers) {
    for (int readers = 1; readers <= 5; ++readers) {
      const VnodeSpec vnodes[] = {{"w", 0, writers, "p.dsp:1:1", false}, {"r", writers, readers, "p.dsp:2:1", false}};
      const PipeSpec pipes[] = {{"p", "int", sizeof(int), 0, 1, MergeOrder::RoundRobin, 0, SplitMode::RoundRobin}};
      const ProgramSpec program = {"p", vnodes, 2, pipes, 1, writers + readers};
      ASSERT_EQ(validateProgram(program), "");
      // Replay 3 * K * M messages through the plans: writer w sends its j-th message to
      // peers[j mod size]; reader r takes its i-th from peers[i mod size]. Both must agree with n.
      std::vector<int> sent(static_cast<std::size_t>(writers), 0), received(static_cast<std::size_t>(readers), 0);
      for (int n = 0; n < 3 * writers * readers; ++n) {
        const int w = n % writers, r = n % readers;
        const std::vector<int> out = planPorts(program, {0, w})[0].peers;
        const std::vector<int> in = planPorts(program, {1, r})[0].peers;
        EXPECT_EQ(out[static_cast<std::size_t>(sent[w]++) % out.size()], writers + r)
            << writers << "->" << readers << " n=" << n;
        EXPECT_EQ(in[static_cast<std::size_t>(received[r]++) % in.size()], w)
            << writers << "->" << readers << " n=" << n;
      }
    }
  }
}

TEST(Program, DuplicateSplitSendsEveryMessageToEveryReader) {
  const VnodeSpec vnodes[] = {{"w", 0, 2, "p.dsp:1:1", false}, {"r", 2, 3, "p.dsp:2:1", false}};
  const PipeSpec pipes[] = {{"p", "int", sizeof(int), 0, 1, MergeOrder::RoundRobin, 0, SplitMode::Duplicate}};
  const ProgramSpec program = {"p", vnodes, 2, pipes, 1, 5};
  ASSERT_EQ(validateProgram(program), "");
  EXPECT_EQ(planPorts(program, {0, 1})[0].peers, (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(planPorts(program, {1, 2})[0].peers, (std::vector<int>{0, 1}));
}

TEST(Program, DemandLinksEveryPairAndNumbersItsStreamToTheMerge) {
  // source -> p (split(demand)) -> work x3 -> q -> pair x3 -> r -> sink -> s -> tail: p, q and r carry
  // numbers (q and r leave replicated VNODEs fed by numbered streams); s leaves the merge.
  const VnodeSpec vnodes[] = {{"source", 0, 1, "d.dsp:1:1", false},
                              {"work", 1, 3, "d.dsp:2:1", false},
                              {"pair", 4, 3, "d.dsp:3:1", false},
                              {"sink", 7, 1, "d.dsp:4:1", false},
                              {"tail", 8, 1, "d.dsp:5:1", false}};
  const PipeSpec pipes[] = {{"p", "int", sizeof(int), 0, 1, MergeOrder::RoundRobin, 0, SplitMode::Demand},
                            {"q", "int", sizeof(int), 1, 2, MergeOrder::RoundRobin, 0, SplitMode::RoundRobin},
                            {"r", "int", sizeof(int), 2, 3, MergeOrder::RoundRobin, 0, SplitMode::RoundRobin},
                            {"s", "int", sizeof(int), 3, 4, MergeOrder::RoundRobin, 0, SplitMode::RoundRobin}};
  const ProgramSpec program = {"d", vnodes, 5, pipes, 4, 9};
  ASSERT_EQ(validateProgram(program), "");
  EXPECT_EQ(sequencedPipes(program), (std::vector<bool>{true, true, true, false}));
  const std::vector<PortPlan> source = planPorts(program, {0, 0});
  EXPECT_EQ(source[0].peers, (std::vector<int>{1, 2, 3}));
  ASSERT_TRUE(source[0].sequence.has_value());
  EXPECT_EQ(source[0].sequence->positions, (std::vector<long long>{0}));
  EXPECT_EQ(planPorts(program, {1, 1})[0].peers, (std::vector<int>{0}));
  EXPECT_EQ(planPorts(program, {3, 0})[0].peers, (std::vector<int>{4, 5, 6}));
  EXPECT_FALSE(planPorts(program, {3, 0})[1].sequence.has_value());
  // Its window: its own, else a reader's next message and no more, whatever the program's default.
  EXPECT_EQ(effectiveWindow(pipes[0], 64), kDefaultDemandWindow);
  EXPECT_EQ(effectiveWindow(pipes[1], 64), 64u);
  const int weights[] = {1, 2};
  PipeSpec weighted = pipes[0];
  weighted.splitWeights = weights;
  const VnodeSpec two[] = {{"source", 0, 1, "d.dsp:1:1", false}, {"work", 1, 2, "d.dsp:2:1", false}};
  EXPECT_EQ(validateProgram({"d", two, 2, &weighted, 1, 3}), "pipe 'p': split(demand) takes no weights");
}

TEST(Program, InconsistentSpecsAreRejectedWithTheReason) {
  const VnodeSpec gap[] = {{"a", 0, 1, "p.dsp:1:1", false}, {"b", 2, 1, "p.dsp:2:1", false}};
  EXPECT_EQ(validateProgram({"p", gap, 2, nullptr, 0, 3}), "vnode 'b' starts at rank 2 but rank 1 is next");
  EXPECT_EQ(validateProgram({"p", kVnodes, 3, kPipes, 2, 6}), "rank count 6 differs from the vnodes' replica total 5");
  const VnodeSpec unequal[] = {{"a", 0, 2, "p.dsp:1:1", false}, {"b", 2, 3, "p.dsp:2:1", false}};
  const PipeSpec pipe[] = {{"p", "int", sizeof(int), 0, 1, MergeOrder::RoundRobin, 0, SplitMode::RoundRobin}};
  EXPECT_EQ(validateProgram({"p", unequal, 2, pipe, 1, 5}), "");  // any replica counts may meet
  const PipeSpec loop[] = {{"p", "int", sizeof(int), 0, 0, MergeOrder::RoundRobin, 0, SplitMode::RoundRobin}};
  EXPECT_EQ(validateProgram({"p", unequal, 2, loop, 1, 5}), "pipe 'p' has the same vnode at both ends");
}

TEST(Program, WindowSettingParsesPositiveIntegersOnly) {
  std::string error;
  EXPECT_EQ(parseWindowSetting(nullptr, error), kDefaultPipeWindow);
  EXPECT_EQ(parseWindowSetting("", error), kDefaultPipeWindow);
  EXPECT_EQ(parseWindowSetting("16", error), 16u);
  for (const char* bad : {"0", "-3", "12x", "lots", "99999999999"}) {
    error.clear();
    EXPECT_FALSE(parseWindowSetting(bad, error).has_value()) << bad;
    EXPECT_EQ(error, std::string("DISPAR_PIPE_WINDOW must be a positive integer, got '") + bad + "'");
  }
}

TEST(Program, PipeWindowOverridesTheProgramWindowAndCreditsComeEveryHalfWindow) {
  EXPECT_EQ(effectiveWindow(kPipes[0], 64), 64u);
  const PipeSpec own = {"q", "int", sizeof(int), 0, 1, MergeOrder::Any, 6, SplitMode::RoundRobin};
  EXPECT_EQ(effectiveWindow(own, 64), 6u);
  EXPECT_EQ(creditBatch(1), 1u);
  EXPECT_EQ(creditBatch(2), 1u);
  EXPECT_EQ(creditBatch(7), 3u);
  EXPECT_EQ(creditBatch(64), 32u);
}

// A body's compute CPU on an oversubscribed node (Profile.h): the thread's CPU less its ports' estimated
// share, bounded by the body's wall time outside its ports; where the sampled share overstates the ports'
// CPU (the difference at or below zero), the wall time outside the ports stands, never zero.
TEST(ComputeCpu, IsTheThreadsCpuLessItsPortsAndNeverZeroWhenTheBodyRan) {
  EXPECT_DOUBLE_EQ(computeCpuSeconds(0.5, 0.2, 0.4), 0.3);
  EXPECT_DOUBLE_EQ(computeCpuSeconds(0.5, 0.05, 0.4), 0.4);      // no more than its wall time outside the ports
  EXPECT_DOUBLE_EQ(computeCpuSeconds(0.03, 0.05, 0.067), 0.03);  // the estimate underflows: bounded by the CPU
  EXPECT_DOUBLE_EQ(computeCpuSeconds(0.5, 0.6, 0.067), 0.067);
  EXPECT_DOUBLE_EQ(computeCpuSeconds(0, 0, 0), 0);
}

// The one reader of a seconds variable (DISPAR_STALL_SECONDS, DISPAR_FINALIZE_SECONDS): its default when
// unset or empty, the value, or an error naming the variable, the text and what 0 means.
TEST(SecondsVariable, IsTheDefaultTheValueOrAnErrorNamingIt) {
  std::string error;
  ::unsetenv("DISPAR_TEST_SECONDS");
  EXPECT_EQ(readSecondsVariable("DISPAR_TEST_SECONDS", 10, "off", error), 10.0);
  ::setenv("DISPAR_TEST_SECONDS", "", 1);
  EXPECT_EQ(readSecondsVariable("DISPAR_TEST_SECONDS", 10, "off", error), 10.0);
  ::setenv("DISPAR_TEST_SECONDS", "0.5", 1);
  EXPECT_EQ(readSecondsVariable("DISPAR_TEST_SECONDS", 10, "off", error), 0.5);
  for (const char* bad : {"x", "-1", "1e7", "nan", "2s"}) {
    ::setenv("DISPAR_TEST_SECONDS", bad, 1);
    EXPECT_FALSE(readSecondsVariable("DISPAR_TEST_SECONDS", 10, "off", error)) << bad;
    EXPECT_EQ(error,
              std::string("DISPAR_TEST_SECONDS='") + bad + "' is not a number of seconds from 0 (off) to 1000000");
  }
  ::unsetenv("DISPAR_TEST_SECONDS");
}

}  // namespace
