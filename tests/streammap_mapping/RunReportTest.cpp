// `streammap report`'s analysis (streammap/RunReport.h) on hand-made runs: the bottleneck named in words,
// what would help where each rule applies, the graph and timeline drawn with one box per VNODE and one
// row per instance, and a broken trace refused.
#include "streammap/RunReport.h"
#include "TestSupport.h"
#include "streammap/Commands.h"

#include "dispar_lang/RunTrace.h"

#include <gtest/gtest.h>

#include <regex>

namespace dispar::streammap {
namespace {

/// source -> work (REPLICAS replicas) -> sink, one vertex per instance.
lang::Rtg chain(int replicas, bool workUsesGpu) {
  lang::Rtg rtg;
  rtg.program = "chain";
  int id = 0;
  const auto vertex = [&](const std::string& name, int replica, int count, lang::Requirement type) {
    lang::RtgVertex v;
    v.id = v.rank = id++;
    v.vnode = name;
    v.replica = replica;
    v.replicas = count;
    v.type = type;
    rtg.vertices.push_back(v);
  };
  vertex("source", 0, 1, lang::Requirement::CO);
  for (int r = 0; r < replicas; ++r)
    vertex("work", r, replicas, workUsesGpu ? lang::Requirement::CG : lang::Requirement::CO);
  vertex("sink", 0, 1, lang::Requirement::CO);
  for (int r = 0; r < replicas; ++r) {
    rtg.edges.push_back({0, 1 + r, "in", "float", 4, std::nullopt, 0});
    rtg.edges.push_back({1 + r, 1 + replicas, "out", "float", 4, std::nullopt, 0});
  }
  return rtg;
}

lang::ProfiledInstance line(const std::string& vnode, int replica, int rank, const std::string& device, double compute,
                            double read, double write) {
  lang::ProfiledInstance l;
  l.vnode = vnode;
  l.replica = replica;
  l.rank = rank;
  l.host = rank < 2 ? "node1" : "node2";
  l.device = device;
  l.computeSeconds = compute, l.readWaitSeconds = read, l.writeWaitSeconds = write;
  return l;
}

lang::RunProfile profileOf(std::vector<lang::ProfiledInstance> instances) {
  lang::RunProfile profile;
  profile.program = "chain";
  profile.wallSeconds = 2.5;  // start-up included: shares are of the longest body
  profile.instances = std::move(instances);
  profile.pipes = {{"in", 100, 400}, {"out", 100, 400}};
  return profile;
}

TEST(RunReport, NamesTheBusiestInstanceAndTheHostPathAdvice) {
  RunReport report;
  std::string error;
  ASSERT_TRUE(
      analyseRun(chain(1, true),
                 profileOf({line("source", 0, 0, "cpu", 0.1, 0, 1.9), line("work", 0, 1, "host-path", 1.8, 0.1, 0.1),
                            line("sink", 0, 2, "cpu", 0.05, 1.95, 0)}),
                 nullptr, "", report, error))
      << error;
  EXPECT_NEAR(report.wall, 2.0, 1e-9);
  EXPECT_NEAR(report.instances[1].share, 0.9, 1e-9);
  EXPECT_NE(report.bottleneck.find("work[0] on node1 (rank 1) computes 90% of the run"), std::string::npos)
      << report.bottleneck;
  EXPECT_NE(report.bottleneck.find("waits in its ports 96%"), std::string::npos) << report.bottleneck;
  ASSERT_GE(report.advice.size(), 2u);
  EXPECT_NE(report.advice[0].find("ran them on the host path"), std::string::npos) << report.advice[0];
  EXPECT_NE(report.advice[1].find("more replicas of work"), std::string::npos) << report.advice[1];
  EXPECT_EQ(report.vnodes.size(), 3u);
  EXPECT_EQ(report.vnodes[2].level, 2);  // source, work, sink in three columns
}

TEST(RunReport, UnequalReplicasGetSplitDemand) {
  RunReport report;
  std::string error;
  ASSERT_TRUE(analyseRun(chain(2, false),
                         profileOf({line("source", 0, 0, "cpu", 0.1, 0, 1.9), line("work", 0, 1, "cpu", 1.8, 0.1, 0.1),
                                    line("work", 1, 2, "cpu", 0.6, 1.3, 0.1), line("sink", 0, 3, "cpu", 0.05, 1.9, 0)}),
                         nullptr, "", report, error))
      << error;
  bool demand = false;
  for (const std::string& advice : report.advice)
    demand |=
        advice.find("compute 3.0x apart") != std::string::npos && advice.find("split(demand)") != std::string::npos;
  EXPECT_TRUE(demand);
  EXPECT_NEAR(report.vnodes[1].share, 0.6, 1e-9);  // the replicas' mean
}

TEST(RunReport, NoBusyStageSaysTheRunIsBoundByMessages) {
  RunReport report;
  std::string error;
  ASSERT_TRUE(analyseRun(chain(1, false),
                         profileOf({line("source", 0, 0, "cpu", 0.1, 0, 0.9), line("work", 0, 1, "cpu", 0.2, 0.7, 0.1),
                                    line("sink", 0, 2, "cpu", 0.05, 0.95, 0)}),
                         nullptr, "", report, error));
  EXPECT_NE(report.bottleneck.find("no instance computes most of the run"), std::string::npos);
  ASSERT_EQ(report.advice.size(), 1u);
  EXPECT_NE(report.advice[0].find("fewer ranks"), std::string::npos);
}

TEST(RunReport, TheHtmlDrawsOneBoxPerVnodeAndOneRowPerTracedInstance) {
  lang::RunTrace trace;
  trace.program = "chain";
  trace.pipes = {"in", "out"};
  for (int i = 0; i < 3; ++i)
    trace.instances.push_back({i, i, i < 2 ? "node1" : "node2",
                               i == 0   ? "source"
                               : i == 1 ? "work"
                                        : "sink",
                               0, "cpu", 0.0, 2.0, 2.0});
  trace.spans = {{0.0, 1.0, 1, lang::TraceSpanKind::Read, 0}};
  RunReport report;
  std::string error;
  ASSERT_TRUE(analyseRun(chain(1, false),
                         profileOf({line("source", 0, 0, "cpu", 0.1, 0, 1.9), line("work", 0, 1, "cpu", 1.0, 1.0, 0.0),
                                    line("sink", 0, 2, "cpu", 0.05, 1.95, 0)}),
                         nullptr, lang::writeRunTraceJson(trace), report, error))
      << error;
  ASSERT_EQ(report.tracks.size(), 3u);
  ASSERT_EQ(report.nodeTracks.size(), 2u);
  EXPECT_EQ(report.tracks[1].label, "work[0]");
  // work read for the first half and computed the second: the first bins idle, the last busy.
  EXPECT_NEAR(report.tracks[1].busy.front(), 0.0, 1e-9);
  EXPECT_NEAR(report.tracks[1].busy.back(), 1.0, 1e-9);
  const std::string html = renderReportHtml(report);
  const auto count = [&](const std::string& pattern) {
    const std::regex re(pattern);
    return std::distance(std::sregex_iterator(html.begin(), html.end(), re), std::sregex_iterator());
  };
  EXPECT_EQ(count("<g class=\"vnode\">"), 3);
  EXPECT_EQ(count("<g class=\"track\">"), 3);
  EXPECT_EQ(html.find("http"), std::string::npos);  // nothing fetched from the network
  const std::string text = renderReportText(report);
  EXPECT_NE(text.find("bottleneck: work[0] on node1"), std::string::npos) << text;
}

TEST(RunReport, ALoopIsDrawnBackwardAndTheChainStaysInColumns) {
  // FHR's shape: transmitter -> rf -> detect -> sink, and detect -> rf closing a loop.
  lang::Rtg rtg;
  rtg.program = "loop";
  for (const char* name : {"transmitter", "rf", "detect", "sink"}) {
    lang::RtgVertex v;
    v.id = v.rank = static_cast<int>(rtg.vertices.size());
    v.vnode = name;
    rtg.vertices.push_back(v);
  }
  rtg.edges = {{0, 1, "antenna", "float", 4, std::nullopt, 0},
               {1, 2, "mixed", "float", 4, std::nullopt, 0},
               {2, 3, "out", "float", 4, std::nullopt, 0},
               {2, 1, "hop", "int", 4, std::nullopt, 1}};
  RunReport report;
  std::string error;
  ASSERT_TRUE(analyseRun(rtg, profileOf({line("transmitter", 0, 0, "cpu", 1, 0, 0)}), nullptr, "", report, error));
  ASSERT_EQ(report.vnodes.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(report.vnodes[static_cast<std::size_t>(i)].level, i) << report.vnodes[i].name;
  EXPECT_NE(renderReportHtml(report).find("<path class=\"pipe\""), std::string::npos);  // hop, dashed
}

TEST(RunReport, ABrokenTraceIsRefusedWithItsFirstProblem) {
  RunReport report;
  std::string error;
  EXPECT_FALSE(analyseRun(chain(1, false), profileOf({line("source", 0, 0, "cpu", 0.1, 0, 1.9)}), nullptr,
                          R"({"traceEvents": [{"ph": "X", "name": "a", "pid": 0, "tid": 1, "ts": 1}]})", report,
                          error));
  EXPECT_NE(error.find("not a valid trace: traceEvents[0] (ph X): complete event without a \"dur\""), std::string::npos)
      << error;
}

// The command: the report written whole where -o says, and every bad input an error before anything is.
class ReportCommand : public testing::ScratchDirTest {};

TEST_F(ReportCommand, WritesTheReportAndRefusesWhatItCannotRead) {
  write("chain.rtg.json", lang::writeRtgJson(chain(1, false)));
  const std::string app = path("chain");
  EXPECT_EQ(reportCommand({app, "--format", "text", "-o", path("none.txt")}), 1);  // no profile yet
  EXPECT_FALSE(exists("none.txt"));
  write("chain.profile.json", lang::writeRunProfileJson(profileOf({line("source", 0, 0, "cpu", 0.1, 0, 1.9),
                                                                   line("work", 0, 1, "cpu", 1.8, 0.1, 0.1),
                                                                   line("sink", 0, 2, "cpu", 0.05, 1.95, 0)})));
  EXPECT_EQ(reportCommand({app}), 0);
  EXPECT_NE(read("chain.report.html").find("<g class=\"vnode\">"), std::string::npos);
  EXPECT_EQ(reportCommand({app, "--format", "text", "-o", path("report.txt")}), 0);
  EXPECT_NE(read("report.txt").find("bottleneck: work[0] on node1 (rank 1) computes 90% of the run"),
            std::string::npos);
  EXPECT_EQ(reportCommand({app, "--format", "pdf"}), 2);
  write("broken.json", "{\"traceEvents\": [{\"ph\": \"X\"}]}");
  EXPECT_EQ(reportCommand({app, "--trace", path("broken.json"), "-o", path("broken.html")}), 1);
  EXPECT_FALSE(exists("broken.html"));
  lang::RunProfile other = profileOf({line("source", 0, 0, "cpu", 0.1, 0, 1.9)});
  other.program = "other";
  write("other.json", lang::writeRunProfileJson(other));
  EXPECT_EQ(reportCommand({app, "--profile", path("other.json"), "-o", path("other.html")}), 1);
  EXPECT_FALSE(exists("other.html"));
}

}  // namespace
}  // namespace dispar::streammap
