// Any replica shapes, on ten ranks: for every K writer replicas and M reader replicas with K, M in 1..5,
// in both merge orders, with split(rr) and split(duplicate), every reader replica must receive exactly
// the messages the logical-stream rule gives it (dispar_lang/LogicalStream.h), in logical order under
// order(rr). Writer replica r sends its logical numbers n = j*K + r; readers check what arrives
// against the rule computed here, and the messages mix lengths so that the same-size fast path and the
// probing path both run. Ranks beyond K + M run an idle VNODE without ports. WeightedShapes does the same
// for split(rr(w...)) and join(rr(v...)) with random weights, the turns computed here from the weights
// written out (w0 times reader 0, then w1 times reader 1, ...), not by the rule's code.
#include "MpiTest.h"
#include "WeightedShape.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

using dispar::InPort;
using dispar::OutPort;
namespace rt = dispar::rt;
using dispar::test::turnOf;
using dispar::test::WeightedShape;

constexpr int kMessagesPerWriter = 12;
constexpr int kRanks = 10;

// The shape of the program being run (set before each run; every rank runs the same program).
int writerCount = 1;
int readerCount = 1;
rt::MergeOrder order = rt::MergeOrder::RoundRobin;
rt::SplitMode split = rt::SplitMode::RoundRobin;
std::vector<int> received;      // logical numbers, as this rank's reader replica got them
std::vector<int> splitWeights;  // empty: unweighted (writer replica r sends n = j*K + r)
std::vector<int> joinWeights;
int weightedMessages = 0;  // with weights: the logical stream is n = 0 .. weightedMessages - 1

bool weighted() { return !splitWeights.empty() || !joinWeights.empty(); }

// Message n holds 1 + n % 3 copies of n: lengths change from message to message on every link.
std::vector<long> messageOf(int n) { return std::vector<long>(static_cast<std::size_t>(1 + n % 3), n); }

void dispar_vnode_writer(OutPort<long>& stream) {
  if (weighted()) {
    for (int n = 0; n < weightedMessages; ++n)
      if (turnOf(joinWeights, writerCount, n) == dispar::replica()) stream.write(messageOf(n));
    return;
  }
  for (int j = 0; j < kMessagesPerWriter; ++j) stream.write(messageOf(j * writerCount + dispar::replica()));
}

void dispar_vnode_reader(InPort<long>& stream) {
  std::vector<long> message;
  while (stream.read(message)) {
    const int n = message.empty() ? -1 : static_cast<int>(message[0]);
    EXPECT_EQ(message, messageOf(n)) << "a message arrived damaged";
    received.push_back(n);
  }
}

void dispar_vnode_idle() {}

void dispatch(rt::Instance& instance) {
  switch (instance.vnode()) {
    case 0: {
      auto stream = instance.out<long>(0);
      dispar_vnode_writer(stream);
      break;
    }
    case 1: {
      auto stream = instance.in<long>(0);
      dispar_vnode_reader(stream);
      break;
    }
    default: dispar_vnode_idle(); break;
  }
}

// What reader replica `reader` must receive, in logical order.
std::vector<int> expectedFor(int reader) {
  std::vector<int> expected;
  const int messages = weighted() ? weightedMessages : writerCount * kMessagesPerWriter;
  for (int n = 0; n < messages; ++n)
    if (split == rt::SplitMode::Duplicate || turnOf(splitWeights, readerCount, n) == reader) expected.push_back(n);
  return expected;
}

using Shape = std::tuple<int, int, rt::MergeOrder, rt::SplitMode>;

class ReplicaShapes : public dispar::test::MpiTest, public ::testing::WithParamInterface<Shape> {};

// Runs the shape set in the globals and checks this rank's reader replica.
void runAndCheck() {
  received.clear();
  const int idle = kRanks - writerCount - readerCount;
  const rt::VnodeSpec vnodes[] = {{"writer", 0, writerCount, "shapes.dsp:1:1", false},
                                  {"reader", writerCount, readerCount, "shapes.dsp:2:1", false},
                                  {"idle", writerCount + readerCount, idle, "shapes.dsp:3:1", false}};
  const rt::PipeSpec pipes[] = {{"stream", "long", sizeof(long), 0, 1, order, 0, split,
                                 splitWeights.empty() ? nullptr : splitWeights.data(),
                                 joinWeights.empty() ? nullptr : joinWeights.data()}};
  const rt::ProgramSpec program = {"shapes", vnodes, idle > 0 ? 3 : 2, pipes, 1, kRanks};
  ASSERT_EQ(dispar::test::runProgram(program, dispatch), 0);

  const int rank = dispar::test::worldRank();
  if (rank < writerCount || rank >= writerCount + readerCount) return;
  const std::vector<int> expected = expectedFor(rank - writerCount);
  std::vector<int> got = received;
  if (order == rt::MergeOrder::Any) std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected) << "reader replica " << rank - writerCount;
}

TEST_P(ReplicaShapes, EveryReaderGetsItsShareOfTheLogicalStream) {
  std::tie(writerCount, readerCount, order, split) = GetParam();
  splitWeights.clear();
  joinWeights.clear();
  runAndCheck();
}

std::vector<Shape> allShapes() {
  std::vector<Shape> shapes;
  for (int k = 1; k <= 5; ++k)
    for (int m = 1; m <= 5; ++m)
      for (rt::MergeOrder o : {rt::MergeOrder::RoundRobin, rt::MergeOrder::Any})
        for (rt::SplitMode s : {rt::SplitMode::RoundRobin, rt::SplitMode::Duplicate}) shapes.emplace_back(k, m, o, s);
  return shapes;
}

std::string shapeName(const ::testing::TestParamInfo<Shape>& info) {
  const auto& [k, m, o, s] = info.param;
  return std::to_string(k) + "to" + std::to_string(m) + (o == rt::MergeOrder::Any ? "_any" : "_rr") +
         (s == rt::SplitMode::Duplicate ? "_duplicate" : "_split");
}

INSTANTIATE_TEST_SUITE_P(All, ReplicaShapes, ::testing::ValuesIn(allShapes()), shapeName);

class WeightedShapes : public dispar::test::MpiTest, public ::testing::WithParamInterface<WeightedShape> {};

TEST_P(WeightedShapes, EveryReaderGetsItsWeightedShareInOrder) {
  const WeightedShape& shape = GetParam();
  writerCount = shape.writers;
  readerCount = shape.readers;
  order = shape.order;
  split = shape.split;
  splitWeights = shape.splitWeights;
  joinWeights = shape.joinWeights;
  // Two full cycles of turns, at least 24 messages: every writer ends after its last turn, so the stream
  // has no gaps and each reader's share is in logical order.
  auto sum = [](const std::vector<int>& weights, int count) {
    int total = 0;
    for (int w : weights) total += w;
    return weights.empty() ? count : total;
  };
  const int period =
      std::lcm(sum(joinWeights, writerCount), split == rt::SplitMode::Duplicate ? 1 : sum(splitWeights, readerCount));
  weightedMessages = period * std::max(2, (24 + period - 1) / period);
  runAndCheck();
}

// Random shapes with K, M <= 5 and weights 1..3 (a fixed seed, so every rank and run agrees).
std::vector<WeightedShape> weightedShapes() {
  std::mt19937 random(37);
  auto draw = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); };
  std::vector<WeightedShape> shapes;
  for (int k = 0; k < 24; ++k) {
    WeightedShape shape;
    shape.writers = draw(1, 5);
    shape.readers = draw(1, 5);
    shape.order = draw(0, 3) == 0 ? rt::MergeOrder::Any : rt::MergeOrder::RoundRobin;
    shape.split = draw(0, 5) == 0 ? rt::SplitMode::Duplicate : rt::SplitMode::RoundRobin;
    const int weightedEnds = draw(1, 3);  // 1: split only, 2: join only, 3: both
    if (shape.split == rt::SplitMode::RoundRobin && weightedEnds != 2)
      for (int r = 0; r < shape.readers; ++r) shape.splitWeights.push_back(draw(1, 3));
    if (weightedEnds != 1 || shape.split == rt::SplitMode::Duplicate)
      for (int w = 0; w < shape.writers; ++w) shape.joinWeights.push_back(draw(1, 3));
    shapes.push_back(shape);
  }
  return shapes;
}

std::string weightedName(const ::testing::TestParamInfo<WeightedShape>& info) {
  const WeightedShape& shape = info.param;
  auto list = [](const std::vector<int>& weights) {
    std::string text;
    for (int w : weights) text += "_" + std::to_string(w);
    return text;
  };
  return std::to_string(info.index) + "_" + std::to_string(shape.writers) + "to" + std::to_string(shape.readers) +
         (shape.order == rt::MergeOrder::Any ? "_any" : "_rr") +
         (shape.split == rt::SplitMode::Duplicate ? "_duplicate" : "_split") + "_w" + list(shape.splitWeights) + "_v" +
         list(shape.joinWeights);
}

INSTANTIATE_TEST_SUITE_P(Random, WeightedShapes, ::testing::ValuesIn(weightedShapes()), weightedName);

}  // namespace
