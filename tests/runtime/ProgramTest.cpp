// The rank layout and routing that every rank derives from a ProgramSpec, without MPI.
#include "Program.h"

#include <gtest/gtest.h>

namespace {

using namespace dispar::rt;

const VnodeSpec kVnodes[] = {{"source", 0, 1, "app.dsp:10:1", false},
                             {"square", 1, 3, "app.dsp:19:1", false},
                             {"sink", 4, 1, "app.dsp:28:1", false}};
const PipeSpec kPipes[] = {{"samples", "float", sizeof(float), 0, 1, MergeOrder::RoundRobin, 0},
                           {"energies", "double", sizeof(double), 1, 2, MergeOrder::RoundRobin, 0}};
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
  const PipeSpec pipes[] = {{"p", "int", sizeof(int), 0, 1, MergeOrder::RoundRobin, 0}};
  const ProgramSpec program = {"p", vnodes, 2, pipes, 1, 4};
  ASSERT_EQ(validateProgram(program), "");
  EXPECT_EQ(planPorts(program, {0, 1})[0].peers, (std::vector<int>{3}));
  EXPECT_EQ(planPorts(program, {1, 0})[0].peers, (std::vector<int>{0}));
}

TEST(Program, InconsistentSpecsAreRejectedWithTheReason) {
  const VnodeSpec gap[] = {{"a", 0, 1, "p.dsp:1:1", false}, {"b", 2, 1, "p.dsp:2:1", false}};
  EXPECT_EQ(validateProgram({"p", gap, 2, nullptr, 0, 3}), "vnode 'b' starts at rank 2 but rank 1 is next");
  EXPECT_EQ(validateProgram({"p", kVnodes, 3, kPipes, 2, 6}), "rank count 6 differs from the vnodes' replica total 5");
  const VnodeSpec unequal[] = {{"a", 0, 2, "p.dsp:1:1", false}, {"b", 2, 3, "p.dsp:2:1", false}};
  const PipeSpec pipe[] = {{"p", "int", sizeof(int), 0, 1, MergeOrder::RoundRobin, 0}};
  EXPECT_EQ(validateProgram({"p", unequal, 2, pipe, 1, 5}),
            "pipe 'p' joins 'a' (2 replicas) to 'b' (3 replicas); replicated ends need equal replica counts");
  const PipeSpec loop[] = {{"p", "int", sizeof(int), 0, 0, MergeOrder::RoundRobin, 0}};
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
  const PipeSpec own = {"q", "int", sizeof(int), 0, 1, MergeOrder::Any, 6};
  EXPECT_EQ(effectiveWindow(own, 64), 6u);
  EXPECT_EQ(creditBatch(1), 1u);
  EXPECT_EQ(creditBatch(2), 1u);
  EXPECT_EQ(creditBatch(7), 3u);
  EXPECT_EQ(creditBatch(64), 32u);
}

}  // namespace
