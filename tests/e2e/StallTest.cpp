// Hangs that explain themselves (docs/runtime.md, "Stalls"): programs that deadlock end, with
// DISPAR_STALL_ABORT=1, within DISPAR_STALL_SECONDS + 5 s, with status 4 and a report naming the VNODEs
// and pipes of the cycle; one rank per instance, every instance in one rank, and two ranks of two. A slow
// but live program is never reported.
#include "GroupedRuns.h"
#include "StallPrograms.h"

#include "dispar_lang/Rtg.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <unistd.h>

namespace dispar::testing {
namespace {

struct Outcome {
  ProcessResult result;
  double seconds = 0;
};

/// Runs the program with a 2 s stall limit, ended on a stall: one rank per instance (`grouping` empty),
/// or grouped as given.
Outcome run(const BuiltProgram& program, const std::vector<std::vector<int>>& grouping, const char* seconds = "2") {
  const auto start = std::chrono::steady_clock::now();
  Outcome outcome;
  outcome.result =
      runGrouped(program, grouping, {std::string("DISPAR_STALL_SECONDS=") + seconds, "DISPAR_STALL_ABORT=1"}, 60);
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

void expectStallReport(const BuiltProgram& program, const std::vector<std::string>& lines) {
  for (const std::vector<std::vector<int>>& grouping : threeGroupings(program.rtg)) {
    const std::string how = groupingName(grouping);
    const Outcome outcome = run(program, grouping);
    EXPECT_NE(outcome.result.status, 0) << how << "\n" << outcome.result.output;
    EXPECT_NE(outcome.result.status, 124) << how << ": it hung\n" << outcome.result.output;
    EXPECT_LT(outcome.seconds, 2 + 5 + 3) << how;  // + MPI start-up
    EXPECT_NE(outcome.result.output.find("dispar: stall: no VNODE instance has completed a pipe operation for 2 s"),
              std::string::npos)
        << how << "\n"
        << outcome.result.output;
    for (const std::string& line : lines)
      EXPECT_NE(outcome.result.output.find(line), std::string::npos) << how << ": " << line << "\n"
                                                                     << outcome.result.output;
    EXPECT_NE(outcome.result.output.find("dispar: ending the job (DISPAR_STALL_ABORT=1), status 4"), std::string::npos)
        << how << "\n"
        << outcome.result.output;
  }
}

TEST(Stalls, ASplitJoinReadInTheWrongOrderIsReportedWithItsCycle) {
  BuiltProgram program;
  ASSERT_NO_FATAL_FAILURE(buildProgram(kSplitJoinReadInTheWrongOrder, program));
  expectStallReport(program, {"dispar:   vnode 'split' (replica 0), rank ",
                              ": waits to write pipe 'b': room, which vnode 'join' "
                              "(replica 0) gives back as it reads (the pipe's window is full)",
                              ": waits to read pipe 'a': data from vnode 'split' (replica 0)", kSplitJoinCycle,
                              "dispar: likely fix: a writer waits for room in a full pipe"});
}

TEST(Stalls, AnUnprimedFeedbackLoopIsReportedWithItsFix) {
  BuiltProgram program;
  ASSERT_NO_FATAL_FAILURE(buildProgram(R"(#include <dispar/dispar.h>
#include <cstdio>
PIPE(int, forward);
PIPE(int, back);
VNODE(head, IN(back), OUT(forward)) {
  int v;
  for (int i = 0; i < 10 && back.read(v); ++i) forward.write(v + 1);  // reads before anything was written
}
VNODE(body, IN(forward), OUT(back)) {
  int v;
  while (forward.read(v)) back.write(v);
}
)",
                                       program));
  expectStallReport(program,
                    {": waits to read pipe 'back': data from vnode 'body' (replica 0)",
                     ": waits to read pipe 'forward': data from vnode 'head' (replica 0)",
                     "dispar: cycle: vnode 'head' (replica 0) reads 'back' from vnode 'body' (replica 0), which "
                     "reads 'forward' from vnode 'head' (replica 0)\n",
                     "dispar: likely fix: every VNODE on the cycle waits to read before it writes"});
}

TEST(Stalls, ALoopThatWritesMoreThanItsWindowBeforeReadingIsReported) {
  BuiltProgram program;
  ASSERT_NO_FATAL_FAILURE(buildProgram(R"(#include <dispar/dispar.h>
PIPE(int, there);
PIPE(int, back);
#pragma streamap communication(there) window(8)
#pragma streamap communication(back) window(8)
VNODE(left, IN(back), OUT(there)) {
  for (int i = 0; i < 1000; ++i) there.write(i);  // far more than the window, before reading
  int v;
  while (back.read(v)) {}
}
VNODE(right, IN(there), OUT(back)) {
  for (int i = 0; i < 1000; ++i) back.write(i);
  int v;
  while (there.read(v)) {}
}
)",
                                       program));
  expectStallReport(program, {": waits to write pipe 'there': room, which vnode 'right' (replica 0)",
                              ": waits to write pipe 'back': room, which vnode 'left' (replica 0)",
                              "dispar: likely fix: a writer waits for room in a full pipe"});
}

TEST(Stalls, ASlowButLiveProgramIsNeverReported) {
  BuiltProgram program;
  ASSERT_NO_FATAL_FAILURE(buildProgram(R"(#include <dispar/dispar.h>
#include <chrono>
#include <cstdio>
#include <thread>
PIPE(int, p);
VNODE(slow, OUT(p)) {
  for (int i = 0; i < 3; ++i) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
    volatile long spin = 0;
    while (std::chrono::steady_clock::now() < until) ++spin;  // computing, as a long kernel would
    p.write(i);
  }
}
VNODE(waiting, IN(p)) {
  int v, n = 0;
  while (p.read(v)) ++n;
  std::printf("n=%d\n", n);
}
)",
                                       program));
  for (const std::vector<std::vector<int>>& grouping : threeGroupings(program.rtg)) {
    const Outcome outcome = run(program, grouping, "1");
    EXPECT_EQ(outcome.result.status, 0) << outcome.result.output;
    EXPECT_NE(outcome.result.output.find("n=3"), std::string::npos) << outcome.result.output;
    EXPECT_EQ(outcome.result.output.find("stall"), std::string::npos) << outcome.result.output;
  }
}

// Before: a feedback loop on items hung unless every VNODE that pushes on it flushed before it read,
// since pushed items waited in a batch the runtime chose; now they go out before an instance waits.
TEST(Stalls, AFeedbackLoopOnItemsPrimedAndFlushedOnlyByItsJoinerRuns) {
  BuiltProgram program;
  ASSERT_NO_FATAL_FAILURE(buildProgram(R"(#include <dispar/dispar.h>
#include <cstdio>
constexpr int kItems = 5000;
constexpr int kDelay = 4;
PIPE(float, input);
PIPE(float, merged);
PIPE(float, output);
PIPE(float, feedback);
VNODE(source, OUT(input)) { for (int i = 0; i < kItems; ++i) input.push(static_cast<float>(i % 7)); }
VNODE(joiner, IN(input), IN(feedback), OUT(merged)) {
  for (int i = 0; i < kDelay; ++i) merged.push(0.0f);
  merged.flush();  // the only flush in the program
  for (int i = 0; i < kItems; ++i) merged.push(input.pop() + 0.5f * feedback.pop());
}
VNODE(body, IN(merged), OUT(output), OUT(feedback)) {
  for (int i = 0; i < kItems + kDelay; ++i) {
    const float v = merged.pop();
    output.push(v);
    if (i < kItems) feedback.push(v);
  }
}
VNODE(sink, IN(output)) {
  double sum = 0;
  for (int i = 0; i < kItems + kDelay; ++i) sum += output.pop();
  std::printf("sum=%.3f\n", sum);
}
)",
                                       program));
  // The loop computed here: merged[t] = 0 for t < 4, merged[t + 4] = input[t] + 0.5 merged[t].
  std::vector<float> merged(5004, 0.0f);
  for (int t = 0; t < 5000; ++t) merged[t + 4] = static_cast<float>(t % 7) + 0.5f * merged[t];
  double sum = 0;
  for (const float v : merged) sum += v;
  char expected[64];
  std::snprintf(expected, sizeof expected, "sum=%.3f\n", sum);
  for (const std::vector<std::vector<int>>& grouping : threeGroupings(program.rtg)) {
    const std::string how = groupingName(grouping);
    const Outcome outcome = run(program, grouping, "5");
    EXPECT_EQ(outcome.result.status, 0) << how << "\n" << outcome.result.output;
    EXPECT_NE(outcome.result.output.find(expected), std::string::npos) << how << ": " << expected << "\n"
                                                                       << outcome.result.output;
  }
}

// Before: a reader behind a slow producer, in a rank of its own, spun in MPI's blocking receive for the
// whole wait (a core for every waiting rank; a 500-stage chain on 2 cores crawled).
TEST(Stalls, AnInstanceThatWaitsLongHoldsNoCore) {
  BuiltProgram program;
  ASSERT_NO_FATAL_FAILURE(buildProgram(R"(#include <dispar/dispar.h>
#include <chrono>
#include <cstdio>
#include <thread>
PIPE(int, p);
PIPE(int, q);
VNODE(sleepy, OUT(p)) {
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::seconds(1));  // not computing: nothing should be
    p.write(i);
  }
}
VNODE(relay, IN(p), OUT(q)) { int v; while (p.read(v)) q.write(v); }
VNODE(waiting, IN(q)) { int v, n = 0; while (q.read(v)) ++n; std::printf("n=%d\n", n); }
)",
                                       program));
  // bash's `times`: the CPU time of the shell's finished children (mpiexec, its proxy and the ranks).
  const ProcessResult result =
      runProcess({"/bin/bash", "-c", std::string(MPIEXEC_PATH) + " -launcher fork -n 3 ./app && times"},
                 program.dir.path(), {}, 60);
  ASSERT_EQ(result.status, 0) << result.output;
  ASSERT_NE(result.output.find("n=3"), std::string::npos) << result.output;
  // The last line: "0m1.234s 0m0.567s" (children's user and system time).
  const std::size_t last = result.output.rfind('\n', result.output.size() - 2);
  const std::string line = result.output.substr(last + 1);
  int userMinutes = 0, systemMinutes = 0;
  double userSeconds = 0, systemSeconds = 0;
  ASSERT_EQ(std::sscanf(line.c_str(), "%dm%lfs %dm%lfs", &userMinutes, &userSeconds, &systemMinutes, &systemSeconds), 4)
      << result.output;
  const double cpu = userMinutes * 60 + userSeconds + systemMinutes * 60 + systemSeconds;
  // Two readers wait about 3 s each: spinning, 6 s of CPU; waiting patiently, a fraction of one.
  EXPECT_LT(cpu, 1.5) << result.output;
}

// The heartbeat (docs/runtime.md, "Unreachable nodes"): a rank that stops answering (here it stops
// itself, as a node cut off or frozen would look) ends the job within DISPAR_HEARTBEAT_SECONDS + the
// probes' 3 s, with status 6 and a report naming the rank, what it runs and its node. The same program
// without the stop runs to its end.
TEST(Heartbeat, ARankThatStopsAnsweringEndsTheJobNamingIt) {
  BuiltProgram program;
  ASSERT_NO_FATAL_FAILURE(buildProgram(R"(#include <dispar/dispar.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
PIPE(int, p);
VNODE(source, OUT(p)) { for (int i = 0; i < 100000; ++i) p.write(i); }
VNODE(sink, IN(p)) {
  if (std::getenv("STOP_THE_SINK")) std::raise(SIGSTOP);
  long n = 0; int v;
  while (p.read(v)) ++n;
  std::printf("n=%ld\n", n);
}
)",
                                       program));
  const ProcessResult live = runGrouped(program, {}, {"DISPAR_HEARTBEAT_SECONDS=1"}, 60);
  ASSERT_EQ(live.status, 0) << live.output;
  EXPECT_NE(live.output.find("n=100000"), std::string::npos) << live.output;

  const auto start = std::chrono::steady_clock::now();
  const ProcessResult stopped = runGrouped(program, {}, {"DISPAR_HEARTBEAT_SECONDS=2", "STOP_THE_SINK=1"}, 60);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(stopped.status, 0) << stopped.output;
  EXPECT_NE(stopped.status, 124) << "it hung\n" << stopped.output;
  EXPECT_LT(seconds, 2 + 3 + 5) << stopped.output;  // + MPI start-up and the end
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  const std::string node = host;  // the rank's node under `-launcher fork`
  for (const std::string& line :
       {"dispar: rank 0 (vnode 'source' (replica 0)) on node '" + node +
            "' has not heard from every other rank for 2 s (DISPAR_HEARTBEAT_SECONDS), and these do not answer:\n",
        "dispar:   rank 1 (vnode 'sink' (replica 0)) on node '" + node + "'\n",
        "dispar: node '" + node + "' cannot be reached from node '" + node + "': its ranks stopped answering",
        std::string("dispar: ending the job, status 6\n")})
    EXPECT_NE(stopped.output.find(line), std::string::npos) << line << "\n" << stopped.output;
}

}  // namespace
}  // namespace dispar::testing
