// The logical-stream rule with weights (dispar_lang/LogicalStream.h), as a property: for random replica
// counts K, M <= 5 and weights 1..4, each writer replica's peer cycle sends its messages exactly where the
// turns say, and each reader replica's cycle takes them from the writers that produced them, in logical
// order. The expected turns are the weights written out here (w0 times replica 0, then w1 times
// replica 1, ...), not the header's arithmetic.
#include "dispar_lang/LogicalStream.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace dispar::lang {
namespace {

int turnOf(const std::vector<int>& weights, int replicas, long long n) {
  std::vector<int> turns;
  for (int r = 0; r < replicas; ++r)
    for (int k = 0; k < (weights.empty() ? 1 : weights[static_cast<std::size_t>(r)]); ++k) turns.push_back(r);
  return turns[static_cast<std::size_t>(n % static_cast<long long>(turns.size()))];
}

// Checks the stream's cycles against the turns over `messages` logical messages.
void expectFollowsTurns(int writers, int readers, SplitMode split, const std::vector<int>& splitWeights,
                        const std::vector<int>& joinWeights, long long messages) {
  const LogicalStream stream(writers, readers, split, splitWeights, joinWeights);
  ASSERT_EQ(stream.check(), "");
  std::vector<std::vector<int>> writerPeers, readerPeers;
  for (int w = 0; w < writers; ++w) writerPeers.push_back(stream.writerPeers(w));
  for (int r = 0; r < readers; ++r) readerPeers.push_back(stream.readerPeers(r));
  std::vector<std::size_t> sent(static_cast<std::size_t>(writers)), received(static_cast<std::size_t>(readers));
  for (long long n = 0; n < messages; ++n) {
    const int writer = turnOf(joinWeights, writers, n);
    const auto& out = writerPeers[static_cast<std::size_t>(writer)];
    std::set<int> targets;
    if (split == SplitMode::Duplicate) {
      targets.insert(out.begin(), out.end());
      EXPECT_EQ(targets.size(), static_cast<std::size_t>(readers));
    } else {
      const int reader = turnOf(splitWeights, readers, n);
      EXPECT_EQ(out[sent[static_cast<std::size_t>(writer)] % out.size()], reader) << "message " << n;
      targets.insert(reader);
    }
    ++sent[static_cast<std::size_t>(writer)];
    for (int reader : targets) {
      const auto& in = readerPeers[static_cast<std::size_t>(reader)];
      EXPECT_EQ(in[received[static_cast<std::size_t>(reader)]++ % in.size()], writer)
          << "message " << n << " at reader " << reader;
    }
  }
  // Links: the distinct (writer, reader) pairs the messages used.
  std::set<std::pair<int, int>> used;
  for (int w = 0; w < writers; ++w)
    for (int r : writerPeers[static_cast<std::size_t>(w)]) used.insert({w, r});
  EXPECT_EQ(stream.linkCount(), static_cast<long long>(used.size()));
}

TEST(LogicalStream, RandomWeightsFollowTheirTurns) {
  std::mt19937 random(2026);
  auto draw = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); };
  for (int trial = 0; trial < 400; ++trial) {
    const int writers = draw(1, 5), readers = draw(1, 5);
    const SplitMode split = draw(0, 4) == 0 ? SplitMode::Duplicate : SplitMode::RoundRobin;
    std::vector<int> splitWeights, joinWeights;
    if (split == SplitMode::RoundRobin && draw(0, 2) != 0)
      for (int r = 0; r < readers; ++r) splitWeights.push_back(draw(1, 4));
    if (draw(0, 2) != 0)
      for (int w = 0; w < writers; ++w) joinWeights.push_back(draw(1, 4));
    SCOPED_TRACE("trial " + std::to_string(trial));
    expectFollowsTurns(writers, readers, split, splitWeights, joinWeights, 3 * 20 * 20);
  }
}

TEST(LogicalStream, UnitWeightsAreTheUnweightedRule) {
  for (int writers = 1; writers <= 6; ++writers)
    for (int readers = 1; readers <= 6; ++readers)
      for (SplitMode split : {SplitMode::RoundRobin, SplitMode::Duplicate}) {
        const LogicalStream plain(writers, readers, split);
        const LogicalStream ones(writers, readers, split,
                                 split == SplitMode::RoundRobin ? std::vector<int>(readers, 1) : std::vector<int>{},
                                 std::vector<int>(writers, 1));
        for (int w = 0; w < writers; ++w) EXPECT_EQ(plain.writerPeers(w), ones.writerPeers(w));
        for (int r = 0; r < readers; ++r) EXPECT_EQ(plain.readerPeers(r), ones.readerPeers(r));
        EXPECT_EQ(plain.linkCount(), ones.linkCount());
        expectFollowsTurns(writers, readers, split, {}, {}, 200);
      }
}

TEST(LogicalStream, TheIssueExampleKeepsTheStreamsOrder) {
  // source -> p [split(rr(2,1))] -> worker replicas(2) -> q [join(rr(2,1))] -> sink
  const LogicalStream p(1, 2, SplitMode::RoundRobin, {2, 1});
  const LogicalStream q(2, 1, SplitMode::RoundRobin, {}, {2, 1});
  EXPECT_EQ(p.writerPeers(0), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(q.readerPeers(0), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(q.writerPeers(0), (std::vector<int>{0}));
}

TEST(LogicalStream, DemandLinksEveryWriterToEveryReader) {
  // The reader is chosen at run time: every pair is linked, each link once; the writers' own turns
  // (join weights 2, 1) still number their messages.
  const LogicalStream demand(2, 3, SplitMode::Demand, {}, {2, 1});
  EXPECT_EQ(demand.check(), "");
  EXPECT_EQ(demand.writerPeers(1), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(demand.readerPeers(2), (std::vector<int>{0, 1}));
  EXPECT_EQ(demand.linkCount(), 6);
  EXPECT_EQ(demand.writerPositions(0), (std::vector<long long>{0, 1}));
  EXPECT_EQ(demand.writerPositions(1), (std::vector<long long>{2}));
  EXPECT_EQ(demand.joinCycle(), 3);
}

TEST(LogicalStream, CheckNamesWhatIsWrong) {
  EXPECT_EQ(LogicalStream(1, 2, SplitMode::RoundRobin, {2, 1, 1}).check(),
            "split(rr(...)) has 3 weights but the reader has 2 replicas");
  EXPECT_EQ(LogicalStream(1, 2, SplitMode::RoundRobin, {}, {1, 1}).check(),
            "join(rr(...)) has 2 weights but the writer has 1 replica");
  EXPECT_EQ(LogicalStream(1, 2, SplitMode::RoundRobin, {0, 1}).check(),
            "split(rr(...)) has weight 0 (at least 1 needed)");
  EXPECT_EQ(LogicalStream(1, 2, SplitMode::Duplicate, {1, 1}).check(), "split(duplicate) takes no weights");
  EXPECT_EQ(LogicalStream(1, 2, SplitMode::Demand, {1, 1}).check(), "split(demand) takes no weights");
  EXPECT_EQ(LogicalStream(2, 2, SplitMode::RoundRobin, {300, 1}, {299, 1}).check(),
            "the weights make a cycle of 90300 messages (lcm of their sums; at most 65536)");
  // Unweighted counts of any size keep their closed form.
  EXPECT_EQ(LogicalStream(55, 443, SplitMode::RoundRobin).linkCount(), 24365);
  EXPECT_EQ(LogicalStream(55, 443, SplitMode::RoundRobin).check(), "");
}

}  // namespace
}  // namespace dispar::lang
