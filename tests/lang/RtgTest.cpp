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
