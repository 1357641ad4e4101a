// Run traces (docs/runtime.md, "Run traces") of a two-rank program, writer -> reader over one pipe: the
// file follows the Trace Event Format, draws every message (or every k-th beyond DISPAR_TRACE_FLOWS),
// marks what a full buffer (DISPAR_TRACE_EVENTS) did not record, and a bad bound stops the launch.
#include "MpiTest.h"

#include "dispar_lang/RunTrace.h"

#include <mpi.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using dispar::InPort;
using dispar::OutPort;
namespace rt = dispar::rt;

class Traces : public dispar::test::MpiTest {};

constexpr long kMessages = 100;

struct Chain {
  static constexpr rt::VnodeSpec kVnodes[] = {{"writer", 0, 1, "trace.dsp:1:1", false},
                                              {"reader", 1, 1, "trace.dsp:9:1", false}};
  static constexpr rt::PipeSpec kPipes[] = {
      {"values", "long", sizeof(long), 0, 1, rt::MergeOrder::RoundRobin, 0, rt::SplitMode::RoundRobin}};
  static constexpr rt::ProgramSpec kProgram = {"traced", kVnodes, 2, kPipes, 1, 2};
  static void dispatch(rt::Instance& instance) {
    if (instance.vnode() == 0) {
      auto values = instance.out<long>(0);
      for (long i = 0; i < kMessages; ++i) values.write(i);
    } else {
      auto values = instance.in<long>(0);
      long value = 0;
      while (values.read(value)) {
      }
    }
  }
};

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/// A path every rank agrees on (rank 0's process id).
std::string tracePath() {
  long id = rank() == 0 ? static_cast<long>(getpid()) : 0;
  MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  return "/tmp/dispar_trace_test." + std::to_string(id) + ".json";
}

/// Runs the chain traced with `settings` ("NAME=value" set for the run); the trace's text on rank 0.
std::string tracedRun(const std::vector<std::pair<const char*, const char*>>& settings, int* status = nullptr) {
  const std::string path = tracePath();
  setenv("DISPAR_TRACE", path.c_str(), 1);
  for (const auto& [name, value] : settings) setenv(name, value, 1);
  const int result = dispar::test::runProgram(Chain::kProgram, Chain::dispatch);
  unsetenv("DISPAR_TRACE");
  for (const auto& [name, value] : settings) unsetenv(name);
  if (status != nullptr) *status = result;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank() != 0) return "";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  return text.str();
}

std::size_t countEvents(const nlohmann::json& trace, const std::string& name) {
  std::size_t count = 0;
  for (const auto& event : trace["traceEvents"]) count += event["name"] == name ? 1 : 0;
  return count;
}

TEST_F(Traces, EveryPortCallIsASpanAndEveryMessageAnArrow) {
  const std::string text = tracedRun({});
  if (rank() != 0) return;
  const dispar::lang::TraceCheck check = dispar::lang::checkTraceEventJson(text);
  for (const std::string& problem : check.problems) ADD_FAILURE() << problem;
  EXPECT_EQ(check.trackNames, (std::vector<std::string>{"writer[0] (cpu)", "reader[0] (cpu)"}));
  EXPECT_EQ(check.flows, static_cast<std::size_t>(kMessages));
  const nlohmann::json trace = nlohmann::json::parse(text);
  EXPECT_EQ(countEvents(trace, "write values"), static_cast<std::size_t>(kMessages));
  EXPECT_EQ(countEvents(trace, "read values"), static_cast<std::size_t>(kMessages) + 1);  // the last finds the end
  EXPECT_EQ(trace["otherData"]["messages"], kMessages);
  EXPECT_EQ(trace["otherData"]["dropped_events"], 0);
}

TEST_F(Traces, BeyondTheFlowLimitEveryKthMessageIsDrawn) {
  const std::string text = tracedRun({{"DISPAR_TRACE_FLOWS", "7"}});
  if (rank() != 0) return;
  const dispar::lang::TraceCheck check = dispar::lang::checkTraceEventJson(text);
  EXPECT_TRUE(check.problems.empty());
  const nlohmann::json trace = nlohmann::json::parse(text);
  EXPECT_EQ(trace["otherData"]["flow_every"], 15);  // ceil(100 / 7)
  EXPECT_EQ(check.flows, 7u);
}

TEST_F(Traces, AFullBufferCountsWhatItDropsAndMarksTheRest) {
  const std::string text = tracedRun({{"DISPAR_TRACE_EVENTS", "10"}});
  if (rank() != 0) return;
  const dispar::lang::TraceCheck check = dispar::lang::checkTraceEventJson(text);
  for (const std::string& problem : check.problems) ADD_FAILURE() << problem;
  const nlohmann::json trace = nlohmann::json::parse(text);
  EXPECT_GT(trace["otherData"]["dropped_events"].get<long>(), 0);
  EXPECT_EQ(countEvents(trace, "write values"), 10u);
  EXPECT_EQ(countEvents(trace, "not recorded (DISPAR_TRACE_EVENTS reached)"), 2u);
  EXPECT_EQ(check.flows, 10u);  // the messages both ends recorded
}

TEST_F(Traces, ABadBoundStopsTheLaunch) {
  int status = 0;
  tracedRun({{"DISPAR_TRACE_EVENTS", "0"}}, &status);
  EXPECT_EQ(status, 2);
}

}  // namespace
