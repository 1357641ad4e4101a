#include "dispar_lang/Rtg.h"
#include "dispar_lang/Program.h"

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
  pipe.readers = {1};
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

// The mapping may deal a pipe on demand only where its source leaves the dealing open (lang::mayDealOnDemand):
// the default round robin to one VNODE of several replicas, without initial messages.
TEST(Rtg, PipesOfTheDefaultRoundRobinToReplicasMayBeDealtOnDemand) {
  const auto marked = [](const ProgramModel& p) {
    const Rtg rtg = buildRtg(p, {});
    bool all = true, any = false;
    for (const RtgEdge& e : rtg.edges) {
      all = all && e.mayDealOnDemand;
      any = any || e.mayDealOnDemand;
    }
    EXPECT_EQ(all, any) << "every edge of the pipe alike";
    return any;
  };
  EXPECT_TRUE(marked(fanProgram(1, 3)));
  EXPECT_TRUE(marked(fanProgram(2, 3)));
  EXPECT_FALSE(marked(fanProgram(3, 1)));  // one reader replica: nothing to choose
  ProgramModel declared = fanProgram(1, 3);
  declared.pipes[0].splitDeclared = true;  // split(rr) written
  EXPECT_FALSE(marked(declared));
  ProgramModel primed = fanProgram(1, 3);
  primed.pipes[0].initial = 2;
  EXPECT_FALSE(marked(primed));
  ProgramModel broadcast = fanProgram(1, 3);
  broadcast.pipes[0].split = SplitMode::Duplicate;
  broadcast.pipes[0].splitDeclared = true;
  EXPECT_FALSE(marked(broadcast));
  // Written only where set, and read back.
  const std::string text = writeRtgJson(buildRtg(fanProgram(1, 2), {}));
  EXPECT_NE(text.find("\"may_deal_on_demand\": true"), std::string::npos) << text;
  EXPECT_EQ(writeRtgJson(buildRtg(fanProgram(2, 1), {})).find("may_deal_on_demand"), std::string::npos);
  Rtg back;
  std::string error;
  ASSERT_TRUE(parseRtgJson(text, back, error)) << error;
  EXPECT_TRUE(back.edges[0].mayDealOnDemand);
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
  EXPECT_EQ(error.rfind("line 1:2: invalid JSON: ", 0), 0u) << error;
  EXPECT_FALSE(
      parseRtgJson(R"({"format":"dispar-rtg","version":7,"program":"p","vertices":[],"edges":[]})", out, error));
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

// One vertex "a" (and a second, "b", when edges need an end), with `field` spliced into vertex 0 or
// edge 0.
std::string rtgWithVertexField(const std::string& field) {
  return R"({"format":"dispar-rtg","version":1,"program":"p","vertices":[{"id":0,"vnode":"a","type":"CO",)" + field +
         R"(}],"edges":[]})";
}

std::string rtgWithEdgeField(const std::string& field) {
  return R"({"format":"dispar-rtg","version":1,"program":"p","vertices":[{"id":0,"vnode":"a","type":"CO"},
             {"id":1,"vnode":"b","type":"CO"}],"edges":[{"from":0,"to":1,)" +
         field + "}]}";
}

std::string parseErrorOf(const std::string& text) {
  Rtg out;
  std::string error;
  EXPECT_FALSE(parseRtgJson(text, out, error)) << text;
  return error;
}

// Names reach messages and tables: a VNODE or pipe name is an identifier, `[N]` after it for a family
// member or array element; a newline or an escape sequence in one is refused, shown escaped.
TEST(Rtg, VnodeAndPipeNamesAreNamesOnly) {
  EXPECT_EQ(parseErrorOf(R"({"format":"dispar-rtg","version":1,"program":"p",
      "vertices":[{"id":0,"vnode":"a\nforged","type":"CO"}],"edges":[]})"),
            "vertices[0].vnode: expected a VNODE name (an identifier, [N] after it for a family member), got "
            "\"a\\nforged\"");
  EXPECT_NE(parseErrorOf(rtgWithEdgeField(R"("pipe":"p\u001b[2J")")).find("edges[0].pipe: expected a pipe name"),
            std::string::npos);
  for (const char* bad : {"", "1a", "a b", "a[", "a[]", "a[1", "a]", "a[x]"})
    EXPECT_NE(parseErrorOf(R"({"format":"dispar-rtg","version":1,"program":"p","vertices":[{"id":0,"vnode":")" +
                           std::string(bad) + R"(","type":"CO"}],"edges":[]})")
                  .find("vertices[0].vnode: expected a VNODE name"),
              std::string::npos)
        << bad;
  for (const char* good : {"a", "_b2", "stage[3]", "grid[1][20]"}) {
    Rtg out;
    std::string error;
    EXPECT_TRUE(parseRtgJson(R"({"format":"dispar-rtg","version":1,"program":"p","vertices":[{"id":0,"vnode":")" +
                                 std::string(good) + R"(","type":"CO"}],"edges":[]})",
                             out, error))
        << good << ": " << error;
  }
}

TEST(Rtg, NumbersBeyondDoubleRangeNameTheirField) {
  EXPECT_EQ(parseErrorOf(rtgWithVertexField(R"("cost": 1e999)")), "vertices[0].cost: number out of range, got 1e999");
  EXPECT_EQ(parseErrorOf(rtgWithVertexField(R"("memory": -1e999)")),
            "vertices[0].memory: number out of range, got -1e999");
  EXPECT_EQ(parseErrorOf(rtgWithEdgeField(R"("volume": 2e400)")), "edges[0].volume: number out of range, got 2e400");
  EXPECT_EQ(parseErrorOf(R"({"format":"dispar-rtg","version":1,"program":"p","cuda_archs":["sm_80", 1e999]})"),
            "cuda_archs[1]: number out of range, got 1e999");
}

TEST(Rtg, EveryFieldIsCheckedForTypeAndRange) {
  EXPECT_EQ(parseErrorOf(rtgWithVertexField(R"("cost": -1)")), "vertices[0].cost: must be positive, got -1");
  EXPECT_EQ(parseErrorOf(rtgWithVertexField(R"("cost": "fast")")), "vertices[0].cost: expected a number, got \"fast\"");
  EXPECT_EQ(parseErrorOf(rtgWithVertexField(R"("replica": 7, "replicas": 3)")),
            "vertices[0].replica: must be less than replicas (3), got 7");
  EXPECT_EQ(parseErrorOf(rtgWithVertexField(R"("replicas": 0)")), "vertices[0].replicas: must be at least 1, got 0");
  EXPECT_EQ(parseErrorOf(rtgWithVertexField(R"("memory": 1.5)")), "vertices[0].memory: expected an integer, got 1.5");
  EXPECT_EQ(parseErrorOf(rtgWithVertexField(R"("family": "f", "member": -2)")),
            "vertices[0].member: must be at least 0, got -2");
  EXPECT_EQ(parseErrorOf(rtgWithVertexField(R"("location": 12)")), "vertices[0].location: expected a string, got 12");
  EXPECT_EQ(parseErrorOf(rtgWithEdgeField(R"("element_bytes": -4)")),
            "edges[0].element_bytes: must be at least 0, got -4");
  EXPECT_EQ(parseErrorOf(rtgWithEdgeField(R"("volume": "big")")), "edges[0].volume: expected an integer, got \"big\"");
  EXPECT_EQ(parseErrorOf(rtgWithEdgeField(R"("pipe": ["x"])")), "edges[0].pipe: expected a string, got an array");
  EXPECT_EQ(parseErrorOf(R"({"format":"dispar-rtg","version":1.5,"program":"p","vertices":[],"edges":[]})"),
            "rtg.version: expected an integer, got 1.5");
  EXPECT_EQ(parseErrorOf(R"({"format":"dispar-rtg","version":1,"program":"p","cuda_archs":[80]})"),
            "rtg.cuda_archs[0]: expected a string, got 80");
  EXPECT_EQ(parseErrorOf("[1, 2]"), "top level: expected an object, got an array");
}

TEST(Rtg, IdsMustBeIntegersInRange) {
  const std::string head =
      R"({"format":"dispar-rtg","version":1,"program":"p","vertices":[{"id":0,"vnode":"a","type":"CO"},
      {"id":1,"vnode":"b","type":"CO"},{"id":)";
  const std::string tail = R"(,"vnode":"c","type":"CO"}],"edges":[]})";
  EXPECT_EQ(parseErrorOf(head + "1.5" + tail), "vertices[2].id: expected an integer, got 1.5");
  EXPECT_EQ(parseErrorOf(head + "1e23" + tail), "vertices[2].id: must be at most 2147483647, got 1e+23");
  EXPECT_EQ(parseErrorOf(head + "18446744073709551615" + tail),
            "vertices[2].id: must be at most 2147483647, got 18446744073709551615");
  EXPECT_EQ(parseErrorOf(head + "3" + tail), "vertices[2].id: expected 2 (ids are dense and in order), got 3");
  // An integral number is an integer.
  Rtg out;
  std::string error;
  EXPECT_TRUE(parseRtgJson(head + "2.0" + tail, out, error)) << error;
  EXPECT_EQ(parseErrorOf(rtgWithEdgeField(R"("element_bytes": 4, "to": 1e23)")),
            "edges[0].to: must be at most 2147483647, got 1e+23");
}

TEST(Rtg, DeepNestingIsRefused) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(parseErrorOf(deep).rfind("line 1:130: invalid JSON: nested deeper than", 0), 0u) << parseErrorOf(deep);
}

}  // namespace
}  // namespace dispar::lang
