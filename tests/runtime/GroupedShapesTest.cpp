// Rank groups (docs/runtime.md): the replica shapes of ReplicaShapesTest, run with several VNODE
// instances per rank. Every reader replica must receive exactly what the logical-stream rule gives it,
// in logical order under order(rr), whether its links are in-memory queues (both ends in one rank),
// per-link communicators (ends in different ranks), or a mix, and whether writers give their vectors up.
// Run on 1 rank (every link in memory) and on 2 ranks (mixed links). WeightedGroupedShapes does the same
// with split(rr(w...)) and join(rr(v...)) weights.
#include "MpiTest.h"
#include "WeightedShape.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using dispar::InPort;
using dispar::OutPort;
namespace rt = dispar::rt;
using dispar::test::turnOf;
using dispar::test::WeightedShape;

constexpr int kMessagesPerWriter = 40;  // more than a window of 16: writers wait for room

int writerCount = 1;
int readerCount = 1;
rt::MergeOrder order = rt::MergeOrder::RoundRobin;
rt::SplitMode split = rt::SplitMode::RoundRobin;
std::vector<int> splitWeights;  // empty: unweighted (writer replica r writes n = j*K + r)
std::vector<int> joinWeights;
constexpr int kWeightedMessages = 120;  // a multiple of every weighted shape's cycle below

bool weighted() { return !splitWeights.empty() || !joinWeights.empty(); }

std::mutex receivedMutex;
std::map<int, std::vector<int>> received;  // by reader replica of this rank

std::vector<long> messageOf(int n) { return std::vector<long>(static_cast<std::size_t>(1 + n % 3), n); }

void writer(OutPort<long>& stream) {
  std::vector<int> mine;
  if (weighted()) {
    for (int n = 0; n < kWeightedMessages; ++n)
      if (turnOf(joinWeights, writerCount, n) == dispar::replica()) mine.push_back(n);
  } else {
    for (int j = 0; j < kMessagesPerWriter; ++j) mine.push_back(j * writerCount + dispar::replica());
  }
  for (int n : mine) {
    std::vector<long> message = messageOf(n);
    // Odd replicas give their vectors up: moved where the link is in memory, copied elsewhere.
    if (dispar::replica() % 2 == 1)
      stream.write(std::move(message));
    else
      stream.write(message);
  }
}

void reader(InPort<long>& stream) {
  std::vector<int> mine;
  std::vector<long> message;
  while (stream.read(message)) {
    const int n = message.empty() ? -1 : static_cast<int>(message[0]);
    EXPECT_EQ(message, messageOf(n)) << "a message arrived damaged";
    mine.push_back(n);
  }
  const std::lock_guard<std::mutex> lock(receivedMutex);
  received[dispar::replica()] = std::move(mine);
}

void dispatch(rt::Instance& instance) {
  if (instance.vnode() == 0) {
    auto stream = instance.out<long>(0);
    writer(stream);
  } else {
    auto stream = instance.in<long>(0);
    reader(stream);
  }
}

std::vector<int> expectedFor(int replica) {
  std::vector<int> expected;
  const int messages = weighted() ? kWeightedMessages : writerCount * kMessagesPerWriter;
  for (int n = 0; n < messages; ++n)
    if (split == rt::SplitMode::Duplicate || turnOf(splitWeights, readerCount, n) == replica) expected.push_back(n);
  return expected;
}

/// Groupings of `instances` instances into `ranks` ranks, every rank non-empty: all writers apart from
/// all readers where possible, instances dealt round-robin, and seeded random ones.
std::vector<std::vector<std::vector<int>>> groupingsOf(int instances, int ranks) {
  std::vector<std::vector<std::vector<int>>> groupings;
  std::vector<std::vector<int>> dealt(static_cast<std::size_t>(ranks));
  for (int i = 0; i < instances; ++i) dealt[static_cast<std::size_t>(i % ranks)].push_back(i);
  groupings.push_back(dealt);
  if (ranks == 2) {
    std::vector<std::vector<int>> apart(2);
    for (int i = 0; i < instances; ++i) apart[i < writerCount ? 0 : 1].push_back(i);
    groupings.push_back(apart);
  }
  std::mt19937 random(static_cast<unsigned>(instances * 131 + writerCount));
  for (int trial = 0; trial < 2; ++trial) {
    std::vector<int> rankOf(static_cast<std::size_t>(instances));
    for (int i = 0; i < instances; ++i)
      rankOf[static_cast<std::size_t>(i)] = i < ranks ? i : static_cast<int>(random() % ranks);
    std::shuffle(rankOf.begin(), rankOf.end(), random);
    std::vector<std::vector<int>> grouping(static_cast<std::size_t>(ranks));
    for (int i = 0; i < instances; ++i)
      grouping[static_cast<std::size_t>(rankOf[static_cast<std::size_t>(i)])].push_back(i);
    groupings.push_back(grouping);
  }
  return groupings;
}

std::string describe(const std::vector<std::vector<int>>& grouping) {
  std::string text;
  for (const std::vector<int>& rank : grouping) {
    text += "{";
    for (int instance : rank) text += std::to_string(instance) + " ";
    text += "}";
  }
  return text;
}

using Shape = std::tuple<int, int, rt::MergeOrder, rt::SplitMode>;

class GroupedShapes : public dispar::test::MpiTest, public ::testing::WithParamInterface<Shape> {};

// Runs the shape in the globals under several groupings and checks this rank's reader replicas.
void runGroupings() {
  const int ranks = dispar::test::worldSize();
  const rt::VnodeSpec vnodes[] = {{"writer", 0, writerCount, "grouped.dsp:1:1", false},
                                  {"reader", writerCount, readerCount, "grouped.dsp:2:1", false}};
  const rt::PipeSpec pipes[] = {{"stream", "long", sizeof(long), 0, 1, order, 16, split,
                                 splitWeights.empty() ? nullptr : splitWeights.data(),
                                 joinWeights.empty() ? nullptr : joinWeights.data()}};
  const rt::ProgramSpec program = {"grouped", vnodes, 2, pipes, 1, writerCount + readerCount};
  for (const auto& grouping : groupingsOf(writerCount + readerCount, ranks)) {
    SCOPED_TRACE("grouping " + describe(grouping));
    received.clear();
    rt::RunOptions options;
    options.grouping = grouping;
    ASSERT_EQ(dispar::test::runProgram(program, dispatch, options), 0);
    for (int instance : grouping[static_cast<std::size_t>(dispar::test::worldRank())]) {
      if (instance < writerCount) continue;
      const int replica = instance - writerCount;
      std::vector<int> got = received[replica];
      const std::vector<int> expected = expectedFor(replica);
      if (order == rt::MergeOrder::Any) std::sort(got.begin(), got.end());
      EXPECT_EQ(got, expected) << "reader replica " << replica;
    }
  }
}

TEST_P(GroupedShapes, EveryReaderGetsItsShareWhateverTheGrouping) {
  std::tie(writerCount, readerCount, order, split) = GetParam();
  splitWeights.clear();
  joinWeights.clear();
  runGroupings();
}

class WeightedGroupedShapes : public dispar::test::MpiTest, public ::testing::WithParamInterface<WeightedShape> {};

TEST_P(WeightedGroupedShapes, EveryReaderGetsItsWeightedShareWhateverTheGrouping) {
  const WeightedShape& shape = GetParam();
  writerCount = shape.writers;
  readerCount = shape.readers;
  order = shape.order;
  split = shape.split;
  splitWeights = shape.splitWeights;
  joinWeights = shape.joinWeights;
  runGroupings();
}

// Cycles (lcm of the weight sums) that divide kWeightedMessages.
INSTANTIATE_TEST_SUITE_P(
    Weights, WeightedGroupedShapes,
    ::testing::Values(WeightedShape{1, 2, rt::MergeOrder::RoundRobin, rt::SplitMode::RoundRobin, {2, 1}, {}},
                      WeightedShape{2, 1, rt::MergeOrder::RoundRobin, rt::SplitMode::RoundRobin, {}, {2, 1}},
                      WeightedShape{2, 2, rt::MergeOrder::RoundRobin, rt::SplitMode::RoundRobin, {2, 1}, {2, 1}},
                      WeightedShape{3, 2, rt::MergeOrder::RoundRobin, rt::SplitMode::RoundRobin, {1, 3}, {2, 1, 1}},
                      WeightedShape{2, 4, rt::MergeOrder::Any, rt::SplitMode::RoundRobin, {1, 2, 1, 1}, {1, 3}},
                      WeightedShape{3, 2, rt::MergeOrder::RoundRobin, rt::SplitMode::Duplicate, {}, {3, 1, 2}}));

std::string shapeName(const ::testing::TestParamInfo<Shape>& info) {
  const auto& [k, m, o, s] = info.param;
  return std::to_string(k) + "to" + std::to_string(m) + (o == rt::MergeOrder::Any ? "_any" : "_rr") +
         (s == rt::SplitMode::Duplicate ? "_duplicate" : "_split");
}

INSTANTIATE_TEST_SUITE_P(All, GroupedShapes,
                         ::testing::Combine(::testing::Values(1, 2, 3), ::testing::Values(1, 2, 4),
                                            ::testing::Values(rt::MergeOrder::RoundRobin, rt::MergeOrder::Any),
                                            ::testing::Values(rt::SplitMode::RoundRobin, rt::SplitMode::Duplicate)),
                         shapeName);

}  // namespace
