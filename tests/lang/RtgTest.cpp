#include "dispar_lang/Program.h"
#include "dispar_lang/Rtg.h"

#include <gtest/gtest.h>

namespace dispar::lang {
namespace {

ProgramModel fanProgram(int writerReplicas, int readerReplicas) {
  ProgramModel p;
  p.name = "app";
  p.vnodes.resize(2);
  p.vnodes[0].name = "a";
  p.vnodes[0].replicas = writerReplicas;
  p.vnodes[1].name = "b";
  p.vnodes[1].replicas = readerReplicas;
  p.vnodes[1].requirement = Requirement::CG;
  p.vnodes[1].memoryBytes = 1024;
  PipeModel pipe;
  pipe.name = "x";
  pipe.elementType = "float";
  pipe.elementBytes = 4;
  pipe.writer = 0;
  pipe.reader = 1;
  pipe.volume = 4096;
  p.pipes.push_back(pipe);
  return p;
}

TEST(Rtg, OneToManyFansOut) {
  Rtg rtg = buildRtg(fanProgram(1, 3), {"sm_80"});
  ASSERT_EQ(rtg.vertices.size(), 4u);
  ASSERT_EQ(rtg.edges.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(rtg.edges[i].from, 0);
    EXPECT_EQ(rtg.edges[i].to, 1 + i);
  }
  EXPECT_EQ(rtg.vertices[3].replica, 2);
  EXPECT_EQ(rtg.vertices[3].type, Requirement::CG);
}

TEST(Rtg, EqualReplicasConnectPairwise) {
  Rtg rtg = buildRtg(fanProgram(2, 2), {});
  ASSERT_EQ(rtg.edges.size(), 2u);
  EXPECT_EQ(rtg.edges[0].from, 0);
  EXPECT_EQ(rtg.edges[0].to, 2);
  EXPECT_EQ(rtg.edges[1].from, 1);
  EXPECT_EQ(rtg.edges[1].to, 3);
}

// The logical-stream rule: 2 writers, 3 readers; writer r sends to readers (r + 2j) mod 3.
TEST(Rtg, OtherReplicaCountsFollowTheLogicalStream) {
  Rtg rtg = buildRtg(fanProgram(2, 3), {});
  ASSERT_EQ(rtg.edges.size(), 6u);
  const int expected[][2] = {{0, 2}, {0, 4}, {0, 3}, {1, 3}, {1, 2}, {1, 4}};
  for (std::size_t e = 0; e < 6; ++e) {
    EXPECT_EQ(rtg.edges[e].from, expected[e][0]) << e;
    EXPECT_EQ(rtg.edges[e].to, expected[e][1]) << e;
  }
  ProgramModel broadcast = fanProgram(2, 2);
  broadcast.pipes[0].split = SplitMode::Duplicate;
  EXPECT_EQ(buildRtg(broadcast, {}).edges.size(), 4u);  // every writer to every reader
}

TEST(Rtg, FamiliesRoundTrip) {
  ProgramModel p = fanProgram(1, 1);
  p.vnodes[1].name = "stage[0]";
  p.vnodes[1].family = "stage";
  p.vnodes[1].member = 0;
  Rtg rtg = buildRtg(p, {});
  const std::string text = writeRtgJson(rtg);
  // Written for the member only, absent for the plain VNODE.
  const std::size_t family = text.find(R"("family")");
  ASSERT_NE(family, std::string::npos) << text;
  EXPECT_EQ(text.find(R"("family")", family + 1), std::string::npos) << text;
  EXPECT_GT(family, text.find(R"("stage[0]")")) << text;
  Rtg back;
  std::string error;
  ASSERT_TRUE(parseRtgJson(text, back, error)) << error;
  EXPECT_EQ(back.vertices[1].family, "stage");
  EXPECT_EQ(back.vertices[1].member, 0);
  EXPECT_EQ(back.vertices[0].member, -1);
  EXPECT_FALSE(parseRtgJson(
      R"({"format":"dispar-rtg","version":1,"program":"p","vertices":[{"id":0,"vnode":"a[0]","type":"CO","family":"a"}],"edges":[]})",
      back, error));
  EXPECT_NE(error.find("'family' and 'member' go together"), std::string::npos) << error;
}

TEST(Rtg, JsonRoundTrip) {
  Rtg rtg = buildRtg(fanProgram(3, 1), {"sm_80", "sm_90"});
  std::string text = writeRtgJson(rtg);
  Rtg back;
  std::string error;
  ASSERT_TRUE(parseRtgJson(text, back, error)) << error;
  EXPECT_EQ(writeRtgJson(back), text);
  EXPECT_EQ(back.cudaArchs.size(), 2u);
  ASSERT_TRUE(back.vertices[3].memory.has_value());
  EXPECT_EQ(*back.vertices[3].memory, 1024u);
  EXPECT_FALSE(back.vertices[0].memory.has_value());
}

TEST(Rtg, RejectsBadFiles) {
  Rtg out;
  std::string error;
  EXPECT_FALSE(parseRtgJson("{", out, error));
  EXPECT_NE(error.find("not valid JSON"), std::string::npos);
  EXPECT_FALSE(parseRtgJson(R"({"format":"dispar-rtg","version":7,"program":"p","vertices":[],"edges":[]})", out, error));
  EXPECT_NE(error.find("version 7"), std::string::npos);
  EXPECT_FALSE(parseRtgJson(
      R"({"format":"dispar-rtg","version":1,"program":"p","vertices":[{"id":1,"vnode":"a","type":"CO"}],"edges":[]})",
      out, error));
  EXPECT_NE(error.find("vertices[0].id"), std::string::npos);
  EXPECT_FALSE(parseRtgJson(
      R"({"format":"dispar-rtg","version":1,"program":"p","vertices":[{"id":0,"vnode":"a","type":"CO"}],
          "edges":[{"from":0,"to":3}]})",
      out, error));
  EXPECT_NE(error.find("edges[0].to"), std::string::npos);
}

}  // namespace
}  // namespace dispar::lang
