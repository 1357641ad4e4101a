// Any replica shapes, on ten ranks: for every K writer replicas and M reader replicas with K, M in 1..5,
// in both merge orders, with split(rr) and split(duplicate), every reader replica must receive exactly
// the messages the logical-stream rule gives it (dispar_lang/LogicalStream.h), in logical order under
// order(rr). Writer replica r sends its logical numbers n = j*K + r; readers check what arrives
// against the rule computed here, and the messages mix lengths so that the same-size fast path and the
// probing path both run. Ranks beyond K + M run an idle VNODE without ports.
#include "MpiTest.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

namespace {

using dispar::InPort;
using dispar::OutPort;
namespace rt = dispar::rt;

constexpr int kMessagesPerWriter = 12;
constexpr int kRanks = 10;

// The shape of the program being run (set before each run; every rank runs the same program).
int writerCount = 1;
int readerCount = 1;
rt::MergeOrder order = rt::MergeOrder::RoundRobin;
rt::SplitMode split = rt::SplitMode::RoundRobin;
std::vector<int> received;  // logical numbers, as this rank's reader replica got them

// Message n holds 1 + n % 3 copies of n: lengths change from message to message on every link.
std::vector<long> messageOf(int n) { return std::vector<long>(static_cast<std::size_t>(1 + n % 3), n); }

void dispar_vnode_writer(OutPort<long>& stream) {
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
  for (int n = 0; n < writerCount * kMessagesPerWriter; ++n)
    if (split == rt::SplitMode::Duplicate || n % readerCount == reader) expected.push_back(n);
  return expected;
}

using Shape = std::tuple<int, int, rt::MergeOrder, rt::SplitMode>;

class ReplicaShapes : public dispar::test::MpiTest, public ::testing::WithParamInterface<Shape> {};

TEST_P(ReplicaShapes, EveryReaderGetsItsShareOfTheLogicalStream) {
  std::tie(writerCount, readerCount, order, split) = GetParam();
  received.clear();
  const int idle = kRanks - writerCount - readerCount;
  const rt::VnodeSpec vnodes[] = {{"writer", 0, writerCount, "shapes.dsp:1:1", false},
                                  {"reader", writerCount, readerCount, "shapes.dsp:2:1", false},
                                  {"idle", writerCount + readerCount, idle, "shapes.dsp:3:1", false}};
  const rt::PipeSpec pipes[] = {{"stream", "long", sizeof(long), 0, 1, order, 0, split}};
  const rt::ProgramSpec program = {"shapes", vnodes, idle > 0 ? 3 : 2, pipes, 1, kRanks};
  ASSERT_EQ(dispar::test::runProgram(program, dispatch), 0);

  const int rank = dispar::test::worldRank();
  if (rank < writerCount || rank >= writerCount + readerCount) return;
  const std::vector<int> expected = expectedFor(rank - writerCount);
  std::vector<int> got = received;
  if (order == rt::MergeOrder::Any) std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected) << "reader replica " << rank - writerCount;
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

}  // namespace
