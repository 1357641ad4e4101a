// Programs of five VNODE instances: a replicated pipeline, fan-out/fan-in in both merge orders, a
// replica ending early, and pairwise replicas. Written exactly as StreamCC generates them.
#include "MpiTest.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using dispar::InPort;
using dispar::OutPort;
namespace rt = dispar::rt;

constexpr int kFrames = 40;
constexpr int kFrameLength = 256;

float sampleValue(int frame, int i) { return static_cast<float>((frame * 31 + i * 7) % 97) * 0.25f - 6.0f; }

// Computed apart from the VNODEs: the energy of one frame, summed in the same order as `square`.
double expectedEnergy(int frame) {
  double energy = 0;
  for (int i = 0; i < kFrameLength; ++i) energy += static_cast<double>(sampleValue(frame, i)) * sampleValue(frame, i);
  return energy;
}

// --- Pipeline: source -> square (3 replicas) -> sink, round-robin merge ---------------------------

std::vector<double> sinkEnergies;
int squareFramesSeen;

void dispar_vnode_source(OutPort<float>& samples) {
  std::vector<float> frame(kFrameLength);
  for (int f = 0; f < kFrames; ++f) {
    for (int i = 0; i < kFrameLength; ++i) frame[static_cast<std::size_t>(i)] = sampleValue(f, i);
    if (f % 2 == 0)
      samples.write(frame);
    else
      samples.write(frame.data(), frame.size());
  }
}

void dispar_vnode_square(InPort<float>& samples, OutPort<double>& energies) {
  std::vector<float> frame;
  while (samples.read(frame)) {
    EXPECT_EQ(frame.size(), static_cast<std::size_t>(kFrameLength));
    double energy = 0;
    for (float x : frame) energy += static_cast<double>(x) * x;
    energies.write(energy);
    ++squareFramesSeen;
  }
}

void dispar_vnode_sink(InPort<double>& energies) {
  double energy = 0;
  while (energies.read(energy)) sinkEnergies.push_back(energy);
}

const rt::VnodeSpec kPipelineVnodes[] = {{"source", 0, 1, "app.dsp:10:1", false},
                                         {"square", 1, 3, "app.dsp:19:1", false},
                                         {"sink", 4, 1, "app.dsp:28:1", false}};
const rt::PipeSpec kPipelinePipes[] = {
    {"samples", "float", sizeof(float), 0, 1, rt::MergeOrder::RoundRobin, 0, rt::SplitMode::RoundRobin},
    {"energies", "double", sizeof(double), 1, 2, rt::MergeOrder::RoundRobin, 0, rt::SplitMode::RoundRobin}};
const rt::ProgramSpec kPipeline = {"app", kPipelineVnodes, 3, kPipelinePipes, 2, 5};

void pipelineDispatch(rt::Instance& instance) {
  switch (instance.vnode()) {
    case 0: {
      auto samples = instance.out<float>(0);
      dispar_vnode_source(samples);
      break;
    }
    case 1: {
      auto samples = instance.in<float>(0);
      auto energies = instance.out<double>(1);
      dispar_vnode_square(samples, energies);
      break;
    }
    case 2: {
      auto energies = instance.in<double>(1);
      dispar_vnode_sink(energies);
      break;
    }
  }
}

class FiveRanks : public dispar::test::MpiTest {};

TEST_F(FiveRanks, PipelineRoundRobinRestoresFrameOrder) {
  sinkEnergies.clear();
  squareFramesSeen = 0;
  ASSERT_EQ(dispar::test::runProgram(kPipeline, pipelineDispatch), 0);
  const int rank = dispar::test::worldRank();
  if (rank >= 1 && rank <= 3) {
    // Frame i goes to replica i mod 3.
    const int replica = rank - 1;
    EXPECT_EQ(squareFramesSeen, (kFrames - replica + 2) / 3);
  }
  if (rank == 4) {
    ASSERT_EQ(sinkEnergies.size(), static_cast<std::size_t>(kFrames));
    double total = 0;
    double expectedTotal = 0;
    for (int f = 0; f < kFrames; ++f) {
      EXPECT_EQ(sinkEnergies[static_cast<std::size_t>(f)], expectedEnergy(f)) << "frame " << f;
      total += sinkEnergies[static_cast<std::size_t>(f)];
      expectedTotal += expectedEnergy(f);
    }
    EXPECT_EQ(total, expectedTotal);
  }
}

// --- Fan-out / fan-in with `any` merge: every result arrives, in some order ------------------------

struct Tagged {
  int frame;
  double energy;
};
std::vector<Tagged> taggedResults;

void dispar_vnode_tagger(InPort<float>& samples, OutPort<Tagged>& results) {
  std::vector<float> frame;
  // Replica r of 3 receives frames r, r+3, ...
  for (int f = dispar::replica(); samples.read(frame); f += dispar::replicas()) {
    double energy = 0;
    for (float x : frame) energy += static_cast<double>(x) * x;
    results.write(Tagged{f, energy});
  }
}

void dispar_vnode_collector(InPort<Tagged>& results) {
  Tagged result{};
  while (results.read(result)) taggedResults.push_back(result);
}

const rt::VnodeSpec kAnyVnodes[] = {{"source", 0, 1, "any.dsp:1:1", false},
                                    {"tagger", 1, 3, "any.dsp:9:1", false},
                                    {"collector", 4, 1, "any.dsp:20:1", false}};
const rt::PipeSpec kAnyPipes[] = {
    {"samples", "float", sizeof(float), 0, 1, rt::MergeOrder::RoundRobin, 0, rt::SplitMode::RoundRobin},
    {"results", "Tagged", sizeof(Tagged), 1, 2, rt::MergeOrder::Any, 0, rt::SplitMode::RoundRobin}};
const rt::ProgramSpec kAnyProgram = {"any", kAnyVnodes, 3, kAnyPipes, 2, 5};

void anyDispatch(rt::Instance& instance) {
  switch (instance.vnode()) {
    case 0: {
      auto samples = instance.out<float>(0);
      dispar_vnode_source(samples);
      break;
    }
    case 1: {
      auto samples = instance.in<float>(0);
      auto results = instance.out<Tagged>(1);
      dispar_vnode_tagger(samples, results);
      break;
    }
    case 2: {
      auto results = instance.in<Tagged>(1);
      dispar_vnode_collector(results);
      break;
    }
  }
}

TEST_F(FiveRanks, FanInAnyOrderReceivesEveryMessageOnce) {
  taggedResults.clear();
  ASSERT_EQ(dispar::test::runProgram(kAnyProgram, anyDispatch), 0);
  if (dispar::test::worldRank() == 4) {
    ASSERT_EQ(taggedResults.size(), static_cast<std::size_t>(kFrames));
    std::sort(taggedResults.begin(), taggedResults.end(),
              [](const Tagged& a, const Tagged& b) { return a.frame < b.frame; });
    for (int f = 0; f < kFrames; ++f) {
      EXPECT_EQ(taggedResults[static_cast<std::size_t>(f)].frame, f);
      EXPECT_EQ(taggedResults[static_cast<std::size_t>(f)].energy, expectedEnergy(f)) << "frame " << f;
    }
  }
}

// --- Round-robin merge when replicas end at different times ---------------------------------------

std::vector<int> mergedValues;

void dispar_vnode_counts(OutPort<int>& counts) {
  for (int count : {1, 3, 2}) counts.write(count);  // replica r gets the r-th count
}

void dispar_vnode_emitter(InPort<int>& counts, OutPort<int>& values) {
  int count = 0;
  ASSERT_TRUE(counts.read(count));
  for (int j = 0; j < count; ++j) values.write(dispar::replica() * 100 + j);
  EXPECT_FALSE(counts.read(count));
}

void dispar_vnode_merger(InPort<int>& values) {
  int value = 0;
  while (values.read(value)) mergedValues.push_back(value);
}

const rt::VnodeSpec kUnevenVnodes[] = {{"counts", 0, 1, "uneven.dsp:1:1", false},
                                       {"emitter", 1, 3, "uneven.dsp:5:1", false},
                                       {"merger", 4, 1, "uneven.dsp:12:1", false}};
const rt::PipeSpec kUnevenPipes[] = {
    {"counts", "int", sizeof(int), 0, 1, rt::MergeOrder::RoundRobin, 0, rt::SplitMode::RoundRobin},
    {"values", "int", sizeof(int), 1, 2, rt::MergeOrder::RoundRobin, 0, rt::SplitMode::RoundRobin}};
const rt::ProgramSpec kUneven = {"uneven", kUnevenVnodes, 3, kUnevenPipes, 2, 5};

void unevenDispatch(rt::Instance& instance) {
  switch (instance.vnode()) {
    case 0: {
      auto counts = instance.out<int>(0);
      dispar_vnode_counts(counts);
      break;
    }
    case 1: {
      auto counts = instance.in<int>(0);
      auto values = instance.out<int>(1);
      dispar_vnode_emitter(counts, values);
      break;
    }
    case 2: {
      auto values = instance.in<int>(1);
      dispar_vnode_merger(values);
      break;
    }
  }
}

TEST_F(FiveRanks, RoundRobinDropsEndedReplicasFromRotation) {
  mergedValues.clear();
  ASSERT_EQ(dispar::test::runProgram(kUneven, unevenDispatch), 0);
  if (dispar::test::worldRank() == 4) {
    EXPECT_EQ(mergedValues, (std::vector<int>{0, 100, 200, 101, 201, 102}));
  }
}

// --- Pairwise replicas: source -> a (2) -> b (2), replica i to replica i ----------------------------

constexpr int kPairwiseItems = 101;
std::vector<long> pairwiseReceived;
int pairwiseReplica = -1;
int pairwiseReplicas = -1;

void dispar_vnode_deal(OutPort<long>& items) {
  for (long i = 0; i < kPairwiseItems; ++i) items.write(i);
}

void dispar_vnode_scale(InPort<long>& items, OutPort<long>& scaled) {
  long item = 0;
  while (items.read(item)) scaled.write(item * 10 + dispar::replica());
}

void dispar_vnode_check(InPort<long>& scaled) {
  pairwiseReplica = dispar::replica();
  pairwiseReplicas = dispar::replicas();
  long value = 0;
  while (scaled.read(value)) pairwiseReceived.push_back(value);
}

const rt::VnodeSpec kPairwiseVnodes[] = {{"deal", 0, 1, "pair.dsp:1:1", false},
                                         {"scale", 1, 2, "pair.dsp:5:1", false},
                                         {"check", 3, 2, "pair.dsp:11:1", false}};
const rt::PipeSpec kPairwisePipes[] = {
    {"items", "long", sizeof(long), 0, 1, rt::MergeOrder::RoundRobin, 0, rt::SplitMode::RoundRobin},
    {"scaled", "long", sizeof(long), 1, 2, rt::MergeOrder::RoundRobin, 3, rt::SplitMode::RoundRobin}};
const rt::ProgramSpec kPairwise = {"pair", kPairwiseVnodes, 3, kPairwisePipes, 2, 5};

void pairwiseDispatch(rt::Instance& instance) {
  switch (instance.vnode()) {
    case 0: {
      auto items = instance.out<long>(0);
      dispar_vnode_deal(items);
      break;
    }
    case 1: {
      auto items = instance.in<long>(0);
      auto scaled = instance.out<long>(1);
      dispar_vnode_scale(items, scaled);
      break;
    }
    case 2: {
      auto scaled = instance.in<long>(1);
      dispar_vnode_check(scaled);
      break;
    }
  }
}

TEST_F(FiveRanks, PairwiseReplicasConnectReplicaIToReplicaI) {
  pairwiseReceived.clear();
  ASSERT_EQ(dispar::test::runProgram(kPairwise, pairwiseDispatch), 0);
  const int rank = dispar::test::worldRank();
  if (rank >= 3) {
    const int replica = rank - 3;
    EXPECT_EQ(pairwiseReplica, replica);
    EXPECT_EQ(pairwiseReplicas, 2);
    std::vector<long> expected;
    for (long i = replica; i < kPairwiseItems; i += 2) expected.push_back(i * 10 + replica);
    EXPECT_EQ(pairwiseReceived, expected);
  }
}

// --- Same-size fast path with a replicated writer merged rr: one size per link -------------------

// Message j of emitter replica r: its element count (each replica its own sizes, two change midway)
// and its elements.
std::size_t partCount(int replica, int j) {
  switch (replica) {
    case 0: return 3;
    case 1: return 5;
    case 2: return j < 2 ? 3 : 8;
    default: return j < 2 ? 0 : 5;
  }
}
std::vector<int> partMessage(int replica, int j) {
  std::vector<int> values(partCount(replica, j));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = replica * 10000 + j * 100 + static_cast<int>(i);
  return values;
}

constexpr int kEmitters = 4;
constexpr int kPartsPerEmitter = 4;
std::vector<std::vector<int>> partsReceived;
std::uint64_t partsProbes;

void dispar_vnode_emit(OutPort<int>& parts) {
  for (int j = 0; j < kPartsPerEmitter; ++j) parts.write(partMessage(dispar::replica(), j));
}

void dispar_vnode_gather(InPort<int>& parts) {
  const std::uint64_t before = dispar::test::probeCount();
  // "shared": one vector for every read, so its size is mostly another replica's; otherwise one
  // vector per replica, each holding that replica's last message.
  const bool shared = dispar::args() == std::vector<std::string>{"shared"};
  std::vector<std::vector<int>> vectors(shared ? 1 : kEmitters);
  for (std::size_t k = 0;; ++k) {
    std::vector<int>& message = vectors[shared ? 0 : k % kEmitters];
    if (!parts.read(message)) break;
    partsReceived.push_back(message);
  }
  partsProbes = dispar::test::probeCount() - before;
}

const rt::VnodeSpec kPartsVnodes[] = {{"emit", 0, kEmitters, "parts.dsp:1:1", false},
                                      {"gather", 4, 1, "parts.dsp:5:1", false}};
const rt::PipeSpec kPartsPipes[] = {
    {"parts", "int", sizeof(int), 0, 1, rt::MergeOrder::RoundRobin, 0, rt::SplitMode::RoundRobin}};
const rt::ProgramSpec kParts = {"parts", kPartsVnodes, 2, kPartsPipes, 1, 5};

void partsDispatch(rt::Instance& instance) {
  switch (instance.vnode()) {
    case 0: {
      auto parts = instance.out<int>(0);
      dispar_vnode_emit(parts);
      break;
    }
    case 1: {
      auto parts = instance.in<int>(0);
      dispar_vnode_gather(parts);
      break;
    }
  }
}

std::vector<std::vector<int>> partsInRoundRobinOrder() {
  std::vector<std::vector<int>> expected;
  for (int j = 0; j < kPartsPerEmitter; ++j)
    for (int r = 0; r < kEmitters; ++r) expected.push_back(partMessage(r, j));
  return expected;
}

TEST_F(FiveRanks, SameSizeFastPathKeepsOneSizePerReplicaInOneVector) {
  partsReceived.clear();
  ASSERT_EQ(dispar::test::runProgram(kParts, partsDispatch, {"shared"}), 0);
  if (dispar::test::worldRank() == 4) {
    // A size kept per port rather than per link would post replica 1's receive with replica 0's size.
    EXPECT_EQ(partsReceived, partsInRoundRobinOrder());
  }
}

TEST_F(FiveRanks, SameSizeFastPathKeepsOneSizePerReplicaInVectorsPerReplica) {
  partsReceived.clear();
  ASSERT_EQ(dispar::test::runProgram(kParts, partsDispatch, {"per-replica"}), 0);
  if (dispar::test::worldRank() == 4) {
    EXPECT_EQ(partsReceived, partsInRoundRobinOrder());
    // Probed: each replica's first message and the first after replicas 2 and 3 change size (6);
    // every other message comes on the fast path. The last read sees all four ends of stream with
    // replica 0's vector, so replica 0's end comes on the fast path and the other three are probed.
    EXPECT_EQ(partsProbes, 9u);
  }
}

}  // namespace
