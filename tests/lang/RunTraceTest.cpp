// The run trace's writer and the Trace Event Format checker (dispar_lang/RunTrace.h): what the writer makes
// passes the checker, with the tracks, compute spans and flows it should have; the checker refuses
// each broken rule.
#include "dispar_lang/RunTrace.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>

namespace dispar::lang {
namespace {

/// Two instances on two ranks: a source writing pipe 0 twice, a sink reading it twice.
RunTrace twoInstances() {
  RunTrace trace;
  trace.program = "pair";
  trace.clock = "one node's steady clock";
  trace.pipes = {"numbers"};
  trace.kernels = {"scale"};
  trace.instances = {{0, 0, "node1", "source", 0, "cpu", 0.0, 1.0, 1.0},
                     {1, 1, "node2", "sink", 0, "host-path", 0.0, 1.2, 1.2}};
  trace.spans = {{0.2, 0.3, 0, TraceSpanKind::Write, 0},
                 {0.5, 0.6, 0, TraceSpanKind::Write, 0},
                 {0.0, 0.4, 1, TraceSpanKind::Read, 0},
                 {0.4, 0.7, 1, TraceSpanKind::Read, 0},
                 {0.8, 0.9, 1, TraceSpanKind::Kernel, 0}};
  trace.sends = {{0.25, 0, 0, 1, 1}, {0.55, 0, 0, 1, 2}};
  trace.receipts = {{0.35, 0, 0, 1, 1}, {0.65, 0, 0, 1, 2}};
  return trace;
}

std::vector<nlohmann::json> eventsNamed(const nlohmann::json& file, const std::string& name) {
  std::vector<nlohmann::json> out;
  for (const auto& event : file["traceEvents"])
    if (event["name"] == name) out.push_back(event);
  return out;
}

TEST(RunTrace, WrittenTracePassesTheCheckWithItsTracksAndFlows) {
  const std::string text = writeRunTraceJson(twoInstances());
  const TraceCheck check = checkTraceEventJson(text);
  EXPECT_TRUE(check.problems.empty()) << check.problems.front();
  EXPECT_EQ(check.tracks, 3u);  // two instances, one kernel track
  EXPECT_EQ(check.flows, 2u);
  EXPECT_EQ(check.trackNames, (std::vector<std::string>{"source[0] (cpu)", "sink[0] (host-path)",
                                                        "sink[0] kernels and library calls (host path)"}));
  const nlohmann::json file = nlohmann::json::parse(text);
  EXPECT_EQ(file["otherData"]["format"], "dispar-trace");
  EXPECT_EQ(file["otherData"]["messages"], 2);
  EXPECT_EQ(file["otherData"]["flow_every"], 1);
}

TEST(RunTrace, ComputeIsTheBodyOutsideItsPortCalls) {
  const nlohmann::json file = nlohmann::json::parse(writeRunTraceJson(twoInstances()));
  std::vector<std::pair<double, double>> source;  // the source's compute spans, in µs
  for (const auto& event : eventsNamed(file, "compute"))
    if (event["tid"] == 1) source.emplace_back(event["ts"].get<double>(), event["dur"].get<double>());
  ASSERT_EQ(source.size(), 3u);
  EXPECT_NEAR(source[0].first, 0, 1e-6);
  EXPECT_NEAR(source[0].second, 0.2e6, 1e-3);
  EXPECT_NEAR(source[1].first, 0.3e6, 1e-3);
  EXPECT_NEAR(source[1].second, 0.2e6, 1e-3);
  EXPECT_NEAR(source[2].first, 0.6e6, 1e-3);
  EXPECT_NEAR(source[2].second, 0.4e6, 1e-3);
  const auto reads = eventsNamed(file, "read numbers");
  ASSERT_EQ(reads.size(), 2u);
  EXPECT_EQ(reads[0]["args"]["pipe"], "numbers");
}

TEST(RunTrace, BeyondTheFlowLimitEveryKthMessageIsDrawnAndTheFileSaysSo) {
  RunTrace trace = twoInstances();
  trace.sends.clear();
  trace.receipts.clear();
  for (std::uint64_t n = 1; n <= 100; ++n) {
    trace.sends.push_back({0.001 * static_cast<double>(n), 0, 0, 1, n});
    trace.receipts.push_back({0.001 * static_cast<double>(n) + 0.0005, 0, 0, 1, n});
  }
  trace.flowLimit = 30;
  const std::string text = writeRunTraceJson(trace);
  const TraceCheck check = checkTraceEventJson(text);
  EXPECT_TRUE(check.problems.empty()) << check.problems.front();
  EXPECT_EQ(check.flows, 25u);  // every 4th of 100
  const nlohmann::json file = nlohmann::json::parse(text);
  EXPECT_EQ(file["otherData"]["messages"], 100);
  EXPECT_EQ(file["otherData"]["flow_every"], 4);
}

TEST(RunTrace, WhatTheBufferDroppedIsMarkedNotComputed) {
  RunTrace trace = twoInstances();
  trace.instances[0].recordedUntil = 0.55;
  trace.spans.erase(trace.spans.begin() + 1);  // the source's second write was not recorded
  trace.droppedEvents = 1;
  const nlohmann::json file = nlohmann::json::parse(writeRunTraceJson(trace));
  const auto unrecorded = eventsNamed(file, "not recorded (DISPAR_TRACE_EVENTS reached)");
  ASSERT_EQ(unrecorded.size(), 1u);
  EXPECT_NEAR(unrecorded[0]["ts"].get<double>(), 0.55e6, 1e-3);
  EXPECT_EQ(file["otherData"]["dropped_events"], 1);
}

TEST(TraceCheck, RefusesEachBrokenRule) {
  const auto problemsOf = [](const std::string& events) {
    return checkTraceEventJson("{\"traceEvents\": [" + events + "]}").problems;
  };
  EXPECT_TRUE(problemsOf(R"({"ph": "X", "name": "a", "pid": 0, "tid": 1, "ts": 1, "dur": 2})").empty());
  const std::vector<std::pair<std::string, std::string>> broken = {
      {R"({"ph": "X", "name": "a", "pid": 0, "tid": 1, "ts": 1})", "dur"},
      {R"({"ph": "X", "name": "a", "pid": 0, "tid": 1, "ts": 1, "dur": -1})", "dur"},
      {R"({"ph": "Q", "name": "a", "pid": 0, "tid": 1, "ts": 1})", "ph"},
      {R"({"ph": "X", "pid": 0, "tid": 1, "ts": 1, "dur": 1})", "name"},
      {R"({"ph": "X", "name": "a", "pid": "0", "tid": 1, "ts": 1, "dur": 1})", "pid"},
      {R"({"ph": "X", "name": "a", "pid": 0, "tid": 1, "dur": 1})", "ts"},
      {R"({"ph": "B", "name": "a", "pid": 0, "tid": 1, "ts": 1})", "never ended"},
      {R"({"ph": "E", "pid": 0, "tid": 1, "ts": 1})", "no begin"},
      {R"({"ph": "s", "name": "m", "cat": "c", "id": 7, "pid": 0, "tid": 1, "ts": 1})", "flow 7"},
      {R"({"ph": "s", "name": "m", "cat": "c", "id": 7, "pid": 0, "tid": 1, "ts": 5},
          {"ph": "f", "name": "m", "cat": "c", "id": 7, "pid": 0, "tid": 2, "ts": 4})",
       "ends before it starts"},
      {R"({"ph": "X", "name": "a", "pid": 0, "tid": 1, "ts": 5, "dur": 1},
          {"ph": "X", "name": "b", "pid": 0, "tid": 1, "ts": 4, "dur": 1})",
       "before the previous"},
  };
  for (const auto& [events, expected] : broken) {
    const std::vector<std::string> problems = problemsOf(events);
    ASSERT_FALSE(problems.empty()) << events;
    EXPECT_NE(problems.front().find(expected), std::string::npos) << problems.front();
  }
  EXPECT_FALSE(checkTraceEventJson("{\"traceEvents\": 3}").problems.empty());
  EXPECT_FALSE(checkTraceEventJson("not json").problems.empty());
}

}  // namespace
}  // namespace dispar::lang
