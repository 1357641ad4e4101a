// Weighted split and join (docs/language.md, "Replicas"): `split(rr(w...))` deals the logical stream to
// the reader replicas by weight and `join(rr(v...))` says which writer replica produces each message, so
// a replicated filter between a weighted splitter and joiner keeps the stream's order. On item ports
// the weights count items, exactly. Each program is built with the real disparcc and run one rank per
// instance, all instances in one rank, and two ranks; the sink's counts are compared with the shares
// computed here from the weights.
#include "GroupedRuns.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dispar::testing {
namespace {

/// How many of the first `messages` logical messages are replica `replica`'s turn under `weights`.
long shareOf(const std::vector<int>& weights, int replica, long messages) {
  std::vector<int> turns;
  for (std::size_t r = 0; r < weights.size(); ++r) turns.insert(turns.end(), weights[r], static_cast<int>(r));
  long share = 0;
  for (long n = 0; n < messages; ++n) share += turns[static_cast<std::size_t>(n) % turns.size()] == replica ? 1 : 0;
  return share;
}

/// source -> p -> worker replicas(2) -> q -> sink; each worker tags what it passes on with its replica,
/// the sink checks the order and counts each worker's share. `write`/`read` are the port calls.
std::string splitJoin(const std::string& clauses, long count, bool items) {
  const std::string pass = items ? "while (p.wait_items(1)) q.push(10L * p.pop() + dispar::replica());"
                                 : "int x;\n  while (p.read(x)) q.write(10L * x + dispar::replica());";
  const std::string take =
      items ? "while (q.wait_items(1)) {\n    const long y = q.pop();" : "long y;\n  while (q.read(y)) {";
  return R"(#include <dispar/dispar.h>
#include <cstdio>
constexpr long kCount = )" +
         std::to_string(count) + R"(;
constexpr int kWeights[] = {2, 1};
PIPE(int, p);
PIPE(long, q);
)" + clauses +
         R"(
VNODE(source, OUT(p)) {
  for (int i = 0; i < kCount; ++i) p.)" +
         (items ? "push" : "write") + R"((i);
}
#pragma streamap resource(cpu) replicas(kWeights[0] + kWeights[1] - 1)
VNODE(worker, IN(p), OUT(q)) {
  )" + pass +
         R"(
}
VNODE(sink, IN(q)) {
  long next = 0, byReplica[2] = {0, 0};
  bool ordered = true;
  )" + take +
         R"(
    ordered = ordered && y / 10 == next++;
    ++byReplica[y % 10];
  }
  std::printf("sink: count=%ld ordered=%d worker0=%ld worker1=%ld\n", next, ordered ? 1 : 0, byReplica[0],
              byReplica[1]);
}
)";
}

void expectShares(const BuiltProgram& program, long count, const std::vector<int>& weights) {
  expectEveryGroupingPrints(program, "sink: count=" + std::to_string(count) +
                                         " ordered=1 worker0=" + std::to_string(shareOf(weights, 0, count)) +
                                         " worker1=" + std::to_string(shareOf(weights, 1, count)) + "\n");
}

TEST(WeightedStreams, AWeightedSplitAndJoinKeepTheStreamsOrder) {
  // Weights from a constant array, whole and by element; replicas from a constant expression.
  BuiltProgram program;
  ASSERT_NO_FATAL_FAILURE(buildProgram(splitJoin("#pragma streamap communication(p) split(rr(kWeights))\n"
                                                 "#pragma streamap communication(q) join(rr(kWeights[0], kWeights[1]))",
                                                 3001, false),
                                       program));
  expectShares(program, 3001, {2, 1});
}

TEST(WeightedStreams, ItemsAreDealtByWeightExactly) {
  BuiltProgram program;
  ASSERT_NO_FATAL_FAILURE(buildProgram(splitJoin("#pragma streamap communication(p) split(rr(2, 1))\n"
                                                 "#pragma streamap communication(q) join(rr(2, 1))",
                                                 10000, true),
                                       program));
  expectShares(program, 10000, {2, 1});
}

TEST(WeightedStreams, UnweightedItemsAreDealtOneEach) {
  // Before weights counted items, pushed items went out in 4 KiB batches: 5120 and 4880 of 10000.
  BuiltProgram program;
  ASSERT_NO_FATAL_FAILURE(buildProgram(splitJoin("", 10000, true), program));
  expectShares(program, 10000, {1, 1});
}

}  // namespace
}  // namespace dispar::testing
