// Programs of two VNODE instances: message shapes, end of stream, flow control, early return.
#include "MpiTest.h"

#include <mpi.h>

#include "MpiBytes.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <new>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace {

using dispar::InPort;
using dispar::OutPort;
namespace rt = dispar::rt;

class TwoRanks : public dispar::test::MpiTest {};

// A program `writer -> reader` over one pipe of T with the given window.
template <class T, void (*Writer)(OutPort<T>&), void (*Reader)(InPort<T>&), unsigned Window = 0>
struct OnePipe {
  static constexpr rt::VnodeSpec kVnodes[] = {{"writer", 0, 1, "two.dsp:1:1", false},
                                              {"reader", 1, 1, "two.dsp:9:1", false}};
  static constexpr rt::PipeSpec kPipes[] = {
      {"values", "T", sizeof(T), 0, 1, rt::MergeOrder::RoundRobin, Window, rt::SplitMode::RoundRobin}};
  static constexpr rt::ProgramSpec kProgram = {"two", kVnodes, 2, kPipes, 1, 2};
  static void dispatch(rt::Instance& instance) {
    switch (instance.vnode()) {
      case 0: {
        auto values = instance.out<T>(0);
        Writer(values);
        break;
      }
      case 1: {
        auto values = instance.in<T>(0);
        Reader(values);
        break;
      }
    }
  }
  static int run(const std::vector<std::string>& args = {}) {
    return dispar::test::runProgram(kProgram, dispatch, args);
  }
};

// --- Empty vectors are messages; end of stream is sticky ------------------------------------------

std::vector<std::vector<int>> receivedVectors;
int readsAfterEnd;

void writeShapes(OutPort<int>& values) {
  const std::vector<int> none;
  values.write(none);
  values.write(std::vector<int>{1, 2, 3});
  values.write(none);
  values.write(static_cast<const int*>(nullptr), 0);
  const int five[] = {5, 6, 7, 8, 9};
  values.write(five, 5);
  values.write(42);
}

void readShapes(InPort<int>& values) {
  std::vector<int> message{99, 99};  // stale contents must go
  while (values.read(message)) receivedVectors.push_back(message);
  readsAfterEnd = 0;
  for (int i = 0; i < 3; ++i) readsAfterEnd += values.read(message) ? 1 : 0;
  int scalar = 0;
  readsAfterEnd += values.read(scalar) ? 1 : 0;
}

TEST_F(TwoRanks, EmptyVectorsAreMessagesAndEndOfStreamIsSticky) {
  receivedVectors.clear();
  ASSERT_EQ((OnePipe<int, writeShapes, readShapes>::run()), 0);
  if (dispar::test::worldRank() == 1) {
    const std::vector<std::vector<int>> expected{{}, {1, 2, 3}, {}, {}, {5, 6, 7, 8, 9}, {42}};
    EXPECT_EQ(receivedVectors, expected);
    EXPECT_EQ(readsAfterEnd, 0);
  }
}

// --- Explicit close ends the stream before the VNODE returns --------------------------------------

std::vector<int> scalarsRead;

void writeThenClose(OutPort<int>& values) {
  for (int i = 0; i < 10; ++i) values.write(i * i);
  values.close();
  values.close();  // closing twice is harmless
}

void readScalars(InPort<int>& values) {
  int value = 0;
  while (values.read(value)) scalarsRead.push_back(value);
}

TEST_F(TwoRanks, ExplicitCloseEndsTheStream) {
  scalarsRead.clear();
  ASSERT_EQ((OnePipe<int, writeThenClose, readScalars>::run()), 0);
  if (dispar::test::worldRank() == 1) {
    std::vector<int> expected;
    for (int i = 0; i < 10; ++i) expected.push_back(i * i);
    EXPECT_EQ(scalarsRead, expected);
  }
}

// --- Large messages (rendezvous) arrive intact ---------------------------------------------------

constexpr std::size_t kLargeCount = (8u << 20) / sizeof(std::uint32_t);
std::uint64_t largeChecksum;
std::size_t largeMessages;

std::uint32_t largeValue(std::size_t message, std::size_t i) {
  return static_cast<std::uint32_t>(i * 2654435761u + message);
}

void writeLarge(OutPort<std::uint32_t>& values) {
  std::vector<std::uint32_t> block(kLargeCount);
  for (std::size_t m = 0; m < 3; ++m) {
    for (std::size_t i = 0; i < block.size(); ++i) block[i] = largeValue(m, i);
    values.write(block);
  }
}

void readLarge(InPort<std::uint32_t>& values) {
  std::vector<std::uint32_t> block;
  for (std::size_t m = 0; values.read(block); ++m) {
    EXPECT_EQ(block.size(), kLargeCount);
    for (std::size_t i = 0; i < block.size(); ++i)
      if (block[i] != largeValue(m, i)) {
        ADD_FAILURE() << "message " << m << " differs at element " << i;
        break;
      }
    largeChecksum += std::accumulate(block.begin(), block.end(), std::uint64_t{0});
    ++largeMessages;
  }
}

TEST_F(TwoRanks, LargeMessagesArriveIntact) {
  largeMessages = 0;
  ASSERT_EQ((OnePipe<std::uint32_t, writeLarge, readLarge>::run()), 0);
  if (dispar::test::worldRank() == 1) {
    EXPECT_EQ(largeMessages, 3u);
  }
}

// --- A reader that catches a size mismatch and reads on: the writer still gets every credit ---------

std::vector<int> scalarsAfterMismatch;
std::string mismatchText;

void writeScalarsWithOneVector(OutPort<int>& values) {
  for (int i = 0; i < 10; ++i) values.write(i);
  values.write(std::vector<int>{100, 101, 102});  // too long for a scalar read
  for (int i = 10; i < 39; ++i) values.write(i);  // 40 messages in all: the writer waits for 20 credits
}

void readScalarsCatchingMismatch(InPort<int>& values) {
  for (;;) {
    try {
      int value = 0;
      if (!values.read(value)) return;
      scalarsAfterMismatch.push_back(value);
    } catch (const std::exception& error) {
      mismatchText = error.what();
    }
  }
}

TEST_F(TwoRanks, ReaderThatCatchesAMismatchAndReadsOnDoesNotStallTheWriter) {
  scalarsAfterMismatch.clear();
  mismatchText.clear();
  // Window 4: credits go back every 2 messages, so one uncounted message would leave the writer
  // waiting for a credit that never comes.
  ASSERT_EQ((OnePipe<int, writeScalarsWithOneVector, readScalarsCatchingMismatch, 4>::run()), 0);
  if (dispar::test::worldRank() == 1) {
    std::vector<int> expected(39);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(scalarsAfterMismatch, expected);
    EXPECT_NE(mismatchText.find("a longer message"), std::string::npos) << mismatchText;
  }
}

// --- Elements of 16 KiB or more (announced messages) read into a scalar -------------------------

struct Big {
  std::uint32_t words[5000];  // 20000 bytes: above the size-announcement threshold
};
std::vector<std::uint32_t> bigFirstWords;

void writeBig(OutPort<Big>& values) {
  Big big{};
  for (std::uint32_t m = 0; m < 5; ++m) {
    for (std::uint32_t i = 0; i < 5000; ++i) big.words[i] = m * 7 + i;
    values.write(big);
  }
}

void readBig(InPort<Big>& values) {
  Big big{};
  while (values.read(big)) {
    for (std::uint32_t i = 1; i < 5000; ++i)
      if (big.words[i] != big.words[0] + i) {
        ADD_FAILURE() << "element " << i << " differs";
        break;
      }
    bigFirstWords.push_back(big.words[0]);
  }
}

TEST_F(TwoRanks, LargeElementsReadIntoAScalar) {
  bigFirstWords.clear();
  ASSERT_EQ((OnePipe<Big, writeBig, readBig>::run()), 0);
  if (dispar::test::worldRank() == 1) {
    EXPECT_EQ(bigFirstWords, (std::vector<std::uint32_t>{0, 7, 14, 21, 28}));
  }
}

// --- Small and announced messages mixed; an early return drains both kinds -----------------------

std::vector<std::size_t> mixedSizes;

void writeMixed(OutPort<int>& values) {
  for (int m = 0; m < 40; ++m) values.write(std::vector<int>(m % 2 == 0 ? 3 : 5000, m));
}

void readMixedThenReturn(InPort<int>& values) {
  std::vector<int> message;
  for (int m = 0; m < 5 && values.read(message); ++m) {
    EXPECT_TRUE(std::all_of(message.begin(), message.end(), [m](int v) { return v == m; })) << "message " << m;
    mixedSizes.push_back(message.size());
  }
}

TEST_F(TwoRanks, SmallAndAnnouncedMessagesMixAndDrain) {
  mixedSizes.clear();
  ASSERT_EQ((OnePipe<int, writeMixed, readMixedThenReturn, 2>::run()), 0);
  if (dispar::test::worldRank() == 1) {
    EXPECT_EQ(mixedSizes, (std::vector<std::size_t>{3, 5000, 3, 5000, 3}));
  }
}

// --- Flow control: a fast writer never gets more than `window` messages ahead ----------------------

// Shared memory between the two ranks, where the reader publishes how many messages it has read, the
// writer how many it has written and how far ahead of the reader it ever was. Independent of the
// runtime's own counters.
struct Progress {
  std::atomic<long> read{0};
  std::atomic<long> written{0};
  std::atomic<long> maxAhead{0};
  std::atomic<long> window{0};  // the window the test expects
};
Progress* progress;
constexpr long kFlowMessages = 300;

void writeFast(OutPort<long>& values) {
  for (long i = 0; i < kFlowMessages; ++i) {
    values.write(i);
    progress->written.store(i + 1);
    const long ahead = (i + 1) - progress->read.load();
    if (ahead > progress->maxAhead.load()) progress->maxAhead.store(ahead);
  }
}

// Before its first read the reader waits until the writer is a whole window ahead, so the writer
// certainly meets the bound (explicit synchronisation, no sleeps): it can then only wait for credit.
void readSlowly(InPort<long>& values) {
  while (progress->written.load() < progress->window.load()) std::this_thread::yield();
  long value = 0;
  long expected = 0;
  while (values.read(value)) {
    EXPECT_EQ(value, expected++);
    progress->read.store(progress->read.load() + 1);
  }
  EXPECT_EQ(expected, kFlowMessages);
}

/// A window of shared memory on the node; skips when the ranks do not share one.
class SharedProgress {
 public:
  SharedProgress() {
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nodeSize = 0;
    MPI_Comm_size(node, &nodeSize);
    shared_ = nodeSize == dispar::test::worldSize();
    if (shared_) {
      void* base = nullptr;
      const MPI_Aint bytes = dispar::test::worldRank() == 0 ? static_cast<MPI_Aint>(sizeof(Progress)) : 0;
      MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, node, &base, &window_);
      MPI_Aint size = 0;
      int unit = 0;
      MPI_Win_shared_query(window_, 0, &size, &unit, &base);
      if (dispar::test::worldRank() == 0) new (base) Progress();
      progress = static_cast<Progress*>(base);
      MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Comm_free(&node);
  }
  ~SharedProgress() {
    progress = nullptr;
    if (window_ != MPI_WIN_NULL) MPI_Win_free(&window_);
  }
  bool shared() const { return shared_; }
  /// The window the run must hold the writer to (set on every rank's view: the memory is shared).
  void expectWindow(long window) {
    if (dispar::test::worldRank() == 0) progress->window.store(window);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  long maxAhead() {
    // Rank 0 (the writer) holds the figure; give it to every rank.
    long value = dispar::test::worldRank() == 0 ? progress->maxAhead.load() : 0;
    MPI_Bcast(&value, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    return value;
  }

 private:
  bool shared_ = false;
  MPI_Win window_ = MPI_WIN_NULL;
};

TEST_F(TwoRanks, FlowControlBoundsMessagesInFlightByThePipeWindow) {
  SharedProgress shared;
  if (!shared.shared())
    GTEST_SKIP() << "the two ranks do not share memory, so the writer cannot see the reader's progress";
  constexpr unsigned kWindow = 8;
  shared.expectWindow(kWindow);
  ASSERT_EQ((OnePipe<long, writeFast, readSlowly, kWindow>::run()), 0);
  const long maxAhead = shared.maxAhead();
  // The runtime bounds messages written but not yet received by a read to the window; the reader
  // publishes its count just after read returns, so the writer can see one more than that.
  EXPECT_LE(maxAhead, static_cast<long>(kWindow) + 1);
  // The reader waited for the writer to be a window ahead: the bound was met, so this proves something.
  EXPECT_GE(maxAhead, static_cast<long>(kWindow));
}

TEST_F(TwoRanks, FlowControlWindowComesFromTheEnvironmentWhenThePipeHasNone) {
  SharedProgress shared;
  if (!shared.shared())
    GTEST_SKIP() << "the two ranks do not share memory, so the writer cannot see the reader's progress";
  shared.expectWindow(4);
  setenv("DISPAR_PIPE_WINDOW", "4", 1);
  const int status = OnePipe<long, writeFast, readSlowly>::run();
  unsetenv("DISPAR_PIPE_WINDOW");
  ASSERT_EQ(status, 0);
  const long maxAhead = shared.maxAhead();
  EXPECT_LE(maxAhead, 5);
  EXPECT_GE(maxAhead, 4);
}

// --- A reader that returns early does not leave its writer blocked -------------------------------

long earlyWritten;
long earlyRead;

void writeMany(OutPort<long>& values) {
  earlyWritten = 0;
  for (long i = 0; i < 1000; ++i, ++earlyWritten) values.write(i);
}

void readFewThenReturn(InPort<long>& values) {
  long value = 0;
  earlyRead = 0;
  while (earlyRead < 3 && values.read(value)) ++earlyRead;
}

TEST_F(TwoRanks, ReaderReturningEarlyLetsTheWriterFinish) {
  ASSERT_EQ((OnePipe<long, writeMany, readFewThenReturn, 2>::run()), 0);
  if (dispar::test::worldRank() == 0) {
    EXPECT_EQ(earlyWritten, 1000);
  }
  if (dispar::test::worldRank() == 1) {
    EXPECT_EQ(earlyRead, 3);
  }
}

// --- Pipes in both directions between the same two VNODEs keep their messages apart ---------------

std::vector<std::string> seenArgs;
long pongSum;

void dispar_vnode_ping(InPort<long>& pong, OutPort<long>& ping) {
  seenArgs = dispar::args();
  long reply = 0;
  for (long i = 1; i <= 100; ++i) {
    ping.write(i);
    ASSERT_TRUE(pong.read(reply));
    EXPECT_EQ(reply, -2 * i);
    pongSum += reply;
  }
}

void dispar_vnode_pong(InPort<long>& ping, OutPort<long>& pong) {
  long value = 0;
  while (ping.read(value)) pong.write(-2 * value);
}

const rt::VnodeSpec kPingVnodes[] = {{"ping", 0, 1, "ping.dsp:1:1", false}, {"pong", 1, 1, "ping.dsp:9:1", false}};
const rt::PipeSpec kPingPipes[] = {
    {"ping", "long", sizeof(long), 0, 1, rt::MergeOrder::RoundRobin, 1, rt::SplitMode::RoundRobin},
    {"pong", "long", sizeof(long), 1, 0, rt::MergeOrder::RoundRobin, 1, rt::SplitMode::RoundRobin}};
const rt::ProgramSpec kPingPong = {"pingpong", kPingVnodes, 2, kPingPipes, 2, 2};

void pingDispatch(rt::Instance& instance) {
  switch (instance.vnode()) {
    case 0: {
      auto pong = instance.in<long>(1);
      auto ping = instance.out<long>(0);
      dispar_vnode_ping(pong, ping);
      break;
    }
    case 1: {
      auto ping = instance.in<long>(0);
      auto pong = instance.out<long>(1);
      dispar_vnode_pong(ping, pong);
      break;
    }
  }
}

TEST_F(TwoRanks, OppositePipesBetweenTwoVnodesAndProgramArguments) {
  pongSum = 0;
  seenArgs.clear();
  ASSERT_EQ(dispar::test::runProgram(kPingPong, pingDispatch, {"--frames", "7"}), 0);
  if (dispar::test::worldRank() == 0) {
    EXPECT_EQ(pongSum, -2 * (100 * 101 / 2));
    EXPECT_EQ(seenArgs, (std::vector<std::string>{"--frames", "7"}));
  }
  EXPECT_TRUE(dispar::args().empty()) << "arguments are only visible while the program runs";
}

// --- The "same size" fast path: a read into a buffer that already has the last message's size ----
//
// The writer sends an empty size-change marker before any message whose size differs from the last
// one on the link; a reader whose vector already has that size receives with one MPI_Recv and no
// probe. The probe counts below say which reads took the fast path; a wrong size, a stale element
// or a marker taken for a message fails the content checks.

// Element i of message m, distinct across messages so that a stale or shifted element shows.
int sizedValue(int message, std::size_t i) { return message * 1000 + static_cast<int>(i); }
std::vector<int> sizedMessage(int message, std::size_t count) {
  std::vector<int> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = sizedValue(message, i);
  return values;
}

constexpr std::size_t kAlternatingSizes[] = {100, 100, 7, 7, 7, 100, 0, 100};
std::vector<std::vector<int>> alternatingReceived;
std::uint64_t alternatingProbes;

void writeAlternating(OutPort<int>& values) {
  int m = 0;
  for (std::size_t count : kAlternatingSizes) values.write(sizedMessage(m++, count));
}

void readAlternating(InPort<int>& values) {
  const std::uint64_t before = dispar::test::probeCount();
  std::vector<int> message;  // one vector for every read
  while (values.read(message)) alternatingReceived.push_back(message);
  alternatingProbes = dispar::test::probeCount() - before;
}

TEST_F(TwoRanks, SameSizeFastPathWithAlternatingSizes) {
  alternatingReceived.clear();
  ASSERT_EQ((OnePipe<int, writeAlternating, readAlternating>::run()), 0);
  if (dispar::test::worldRank() == 1) {
    std::vector<std::vector<int>> expected;
    int m = 0;
    for (std::size_t count : kAlternatingSizes) expected.push_back(sizedMessage(m++, count));
    EXPECT_EQ(alternatingReceived, expected);
    // Probed: the first message (size unknown) and the four after a marker. The repeats of 100 and
    // 7 and the end of stream (the vector still has the last size) take the fast path.
    EXPECT_EQ(alternatingProbes, 5u);
  }
}

// --- The fast path only takes a buffer the user left at exactly the last size --------------------

constexpr int kResizedMessages = 6;
constexpr std::size_t kResizedCount = 50;
std::vector<std::vector<int>> resizedReceived;
std::vector<int> resizedAfterEnd;
std::uint64_t resizedProbes;

void writeSameSize(OutPort<int>& values) {
  for (int m = 0; m < kResizedMessages; ++m) values.write(sizedMessage(m, kResizedCount));
}

void readWithUserResizes(InPort<int>& values) {
  const std::uint64_t before = dispar::test::probeCount();
  std::vector<int> message;
  auto readOne = [&] {
    if (values.read(message)) resizedReceived.push_back(message);
  };
  readOne();        // empty: probed
  message.clear();  // smaller than the last message: probed
  readOne();
  message.resize(80, -7);  // larger: probed, and shrunk to 50
  readOne();
  message.assign(kResizedCount, -9);  // the last size with other contents: fast, overwritten
  readOne();
  message.resize(kResizedCount - 1);  // one short: probed
  readOne();
  message = std::vector<int>(kResizedCount, -3);  // new storage of the last size: fast
  readOne();
  EXPECT_FALSE(values.read(message));  // end of stream on the fast path
  resizedAfterEnd = message;
  resizedProbes = dispar::test::probeCount() - before;
}

TEST_F(TwoRanks, SameSizeFastPathFollowsUserResizes) {
  resizedReceived.clear();
  ASSERT_EQ((OnePipe<int, writeSameSize, readWithUserResizes>::run()), 0);
  if (dispar::test::worldRank() == 1) {
    std::vector<std::vector<int>> expected;
    for (int m = 0; m < kResizedMessages; ++m) expected.push_back(sizedMessage(m, kResizedCount));
    EXPECT_EQ(resizedReceived, expected);
    EXPECT_EQ(resizedAfterEnd, sizedMessage(kResizedMessages - 1, kResizedCount));
    EXPECT_EQ(resizedProbes, 4u);  // the reads after clear, resize(80), resize(49) and the first one
  }
}

// --- Scalar and vector reads on one pipe; the writer alternates 1- and n-element messages ---------

// Message m's element count and how the reader reads it ('s' scalar, 'v' vector).
struct MixedStep {
  std::size_t count;
  char read;
};
constexpr MixedStep kMixedSteps[] = {{1, 's'}, {1, 'v'}, {6, 'v'}, {6, 'v'}, {1, 's'}, {6, 'v'},
                                     {1, 's'}, {1, 's'}, {1, 'v'}, {1, 'v'}, {6, 'v'}, {1, 's'}};
std::vector<std::vector<int>> mixedReceived;  // scalars as one-element vectors
int mixedReadsAfterEnd;
std::uint64_t mixedProbes;

void writeOneOrMany(OutPort<int>& values) {
  int m = 0;
  for (const MixedStep& step : kMixedSteps) {
    if (step.count == 1)
      values.write(sizedValue(m, 0));  // the scalar overload
    else
      values.write(sizedMessage(m, step.count));
    ++m;
  }
}

void readScalarsAndVectors(InPort<int>& values) {
  const std::uint64_t before = dispar::test::probeCount();
  std::vector<int> message(1, -1);
  for (const MixedStep& step : kMixedSteps) {
    if (step.read == 's') {
      int scalar = -1;
      if (!values.read(scalar)) break;
      mixedReceived.push_back({scalar});
    } else {
      if (!values.read(message)) break;
      mixedReceived.push_back(message);
    }
  }
  int scalar = 0;
  mixedReadsAfterEnd = values.read(scalar) ? 1 : 0;
  mixedReadsAfterEnd += values.read(message) ? 1 : 0;
  mixedProbes = dispar::test::probeCount() - before;
}

TEST_F(TwoRanks, SameSizeFastPathWithScalarAndVectorReadsMixed) {
  mixedReceived.clear();
  ASSERT_EQ((OnePipe<int, writeOneOrMany, readScalarsAndVectors>::run()), 0);
  if (dispar::test::worldRank() == 1) {
    std::vector<std::vector<int>> expected;
    int m = 0;
    for (const MixedStep& step : kMixedSteps) expected.push_back(sizedMessage(m++, step.count));
    EXPECT_EQ(mixedReceived, expected);
    EXPECT_EQ(mixedReadsAfterEnd, 0);
    // Scalar reads skip markers without a probe. Vector reads probe messages 2 and 10 (the fast
    // path met a marker), 5 (twice: the vector had 6 elements, then a marker came) and 8 (the vector
    // had 6 elements); messages 1, 3 and 9 take the fast path.
    EXPECT_EQ(mixedProbes, 5u);
  }
}

// --- End of stream taken by the fast path's receive ------------------------------------------------
// The fast path's receive for a fourth message takes any tag, so end of stream ends the read there
// without a probe whether it arrives before or after that receive is posted (MPI matches a posted
// receive and an arrived message alike): the outcome depends on no timing.

std::vector<int> endedVector;
int endedMessages;
std::uint64_t endedProbes;

void writeThree(OutPort<int>& values) {
  for (int m = 0; m < 3; ++m) values.write(sizedMessage(m, 4));
}

void readUntilEnd(InPort<int>& values) {
  const std::uint64_t before = dispar::test::probeCount();
  endedMessages = 0;
  std::vector<int> message;
  while (values.read(message)) ++endedMessages;
  endedVector = message;
  EXPECT_FALSE(values.read(message));
  EXPECT_EQ(message, endedVector) << "a read after end of stream changed the vector";
  endedProbes = dispar::test::probeCount() - before;
}

TEST_F(TwoRanks, SameSizeFastPathEndOfStreamLeavesTheVectorAlone) {
  ASSERT_EQ((OnePipe<int, writeThree, readUntilEnd>::run()), 0);
  if (dispar::test::worldRank() == 1) {
    EXPECT_EQ(endedMessages, 3);
    EXPECT_EQ(endedVector, sizedMessage(2, 4));
    EXPECT_EQ(endedProbes, 1u);  // only the first message: end of stream came on the fast path
  }
}

// --- Byte counts beyond INT_MAX ----------------------------------------------------------------------

// MPI-3 libraries (Open MPI 4.1) count in int: the runtime's MPI-3 path describes larger messages with a
// derived type. Whatever MPI this is built against, the type must cover exactly the bytes.
TEST_F(TwoRanks, ByteRunCoversExactlyTheBytes) {
  namespace mpi = dispar::rt::mpi;
  const MPI_Count sizes[] = {0,
                             1,
                             4096,
                             INT_MAX,
                             MPI_Count{INT_MAX} + 1,
                             mpi::ByteRun::kBlockBytes * 3,
                             mpi::ByteRun::kBlockBytes * 3 + 5,
                             MPI_Count{5} << 32};
  for (const MPI_Count bytes : sizes) {
    const mpi::ByteRun run(bytes);
    ASSERT_EQ(run.status(), MPI_SUCCESS) << bytes;
    MPI_Count typeBytes = 0;
    ASSERT_EQ(MPI_Type_size_x(run.type(), &typeBytes), MPI_SUCCESS);
    EXPECT_EQ(typeBytes * run.count(), bytes) << bytes;
    MPI_Aint lower = 0, extent = 0;
    ASSERT_EQ(MPI_Type_get_extent(run.type(), &lower, &extent), MPI_SUCCESS);
    EXPECT_EQ(lower, 0) << bytes;  // contiguous from the buffer's start: no gap, no overlap
    EXPECT_EQ(static_cast<MPI_Count>(extent) * run.count(), bytes) << bytes;
  }
}

// One message of 2^31 + 4099 bytes through a pipe, checked byte for byte at both ends of the range.
constexpr std::size_t kHugeBytes = (std::size_t{1} << 31) + 4099;  // last byte not on a 4096 stride
bool hugeIntact = false;

void writeHuge(OutPort<unsigned char>& values) {
  std::vector<unsigned char> data(kHugeBytes);
  for (std::size_t i = 0; i < data.size(); i += 4096) data[i] = static_cast<unsigned char>(i / 4096 * 7 + 1);
  data.back() = 0xAB;
  values.write(data);
}

void readHuge(InPort<unsigned char>& values) {
  std::vector<unsigned char> data;
  hugeIntact = values.read(data) && data.size() == kHugeBytes && data.back() == 0xAB;
  for (std::size_t i = 0; hugeIntact && i < data.size(); i += 4096)
    hugeIntact = data[i] == static_cast<unsigned char>(i / 4096 * 7 + 1);
}

TEST_F(TwoRanks, MessageLargerThanIntMaxArrivesWhole) {
  hugeIntact = false;
  ASSERT_EQ((OnePipe<unsigned char, writeHuge, readHuge>::run()), 0);
  if (dispar::test::worldRank() == 1) {
    EXPECT_TRUE(hugeIntact);
  }
}

}  // namespace
