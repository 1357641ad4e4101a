// Feedback loops primed as StreamIt writes them (docs/language.md, "Flow control and deadlock"): the back
// pipe's `communication(back) initial(N)` starts it with N zeros, so the joiner reads its first N
// feedback values before the body wrote any, with no priming code and no flush() in the program. Built
// with the real disparcc, run one rank per instance, all in one rank, and on two ranks; the sink's sum is
// compared with the recurrence computed here.
#include "GroupedRuns.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace dispar::testing {
namespace {

void build(const std::string& source, BuiltProgram& program) {
  ASSERT_NO_FATAL_FAILURE(buildProgram(source, program));
  EXPECT_EQ(program.compilerOutput.find("cycle"), std::string::npos) << "a primed loop is not a suspicious cycle\n"
                                                                     << program.compilerOutput;
}

// A hang ends with the stall report (DISPAR_STALL_ABORT) instead of the test's timeout.
const std::vector<std::string> kEndAHang = {"DISPAR_STALL_SECONDS=5", "DISPAR_STALL_ABORT=1"};

// y[n] = x[n] + 0.5 y[n - kDelay] (y before 0 is 0), x[n] = n mod 7; the sink sums (1 + n mod 3) y[n].
std::string expectedSum(int delay, int count) {
  std::vector<double> y;
  double sum = 0;
  for (int n = 0; n < count; ++n) {
    y.push_back((n % 7) + 0.5 * (n >= delay ? y[static_cast<std::size_t>(n - delay)] : 0.0));
    sum += (1 + n % 3) * y.back();
  }
  char text[64];
  std::snprintf(text, sizeof text, "n=%d sum=%.1f\n", count, sum);
  return text;
}

TEST(FeedbackLoops, AnItemLoopPrimedByInitialRunsWithoutFlushes) {
  BuiltProgram program;
  ASSERT_NO_FATAL_FAILURE(build(R"(#include <dispar/dispar.h>
#include <cstdio>
constexpr int kDelay = 8;
PIPE(double, input);
PIPE(double, merged);
PIPE(double, output);
PIPE(double, feedback);
#pragma streamap communication(feedback) initial(kDelay)
VNODE(source, OUT(input)) { for (int i = 0; i < 20000; ++i) input.push(double(i % 7)); }
VNODE(joiner, IN(input), IN(feedback), OUT(merged)) {
  while (input.wait_items(1) && feedback.wait_items(1)) merged.push(input.pop() + 0.5 * feedback.pop());
}
VNODE(body, IN(merged), OUT(output), OUT(feedback)) {
  while (merged.wait_items(1)) {
    const double y = merged.pop();
    output.push(y);
    feedback.push(y);
  }
}
VNODE(sink, IN(output)) {
  double sum = 0;
  long n = 0;
  while (output.wait_items(1)) sum += (1 + n++ % 3) * output.pop();
  std::printf("n=%ld sum=%.1f\n", n, sum);
}
)",
                                program));
  expectEveryGroupingPrints(program, expectedSum(8, 20000), kEndAHang);
}

TEST(FeedbackLoops, AMessageLoopWithAReplicatedBodyPrimedByInitial) {
  // The body has two replicas: merged is dealt to them and feedback joined back in order, so the joiner
  // sees y[n - kDelay] at step n; the back pipe's kDelay initial messages come from the replicas whose
  // turns they are.
  BuiltProgram program;
  ASSERT_NO_FATAL_FAILURE(build(R"(#include <dispar/dispar.h>
#include <cstdio>
constexpr int kDelay = 4;  // a multiple of the body's 2 replicas: each keeps its turns
PIPE(double, input);
PIPE(double, merged);
PIPE(double, output);
PIPE(double, feedback);
#pragma streamap communication(feedback) initial(kDelay)
VNODE(source, OUT(input)) { for (int i = 0; i < 3000; ++i) input.write(double(i % 7)); }
VNODE(joiner, IN(input), IN(feedback), OUT(merged)) {
  double x, back;
  while (input.read(x) && feedback.read(back)) merged.write(x + 0.5 * back);
}
#pragma streamap resource(cpu) replicas(2)
VNODE(body, IN(merged), OUT(output), OUT(feedback)) {
  double y;
  while (merged.read(y)) {
    output.write(y);
    feedback.write(y);
  }
}
VNODE(sink, IN(output)) {
  double y, sum = 0;
  long n = 0;
  while (output.read(y)) sum += (1 + n++ % 3) * y;
  std::printf("n=%ld sum=%.1f\n", n, sum);
}
)",
                                program));
  expectEveryGroupingPrints(program, expectedSum(4, 3000), kEndAHang);
}

}  // namespace
}  // namespace dispar::testing
