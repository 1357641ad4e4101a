// The rule that connects the replicas at the two ends of a pipe (docs/language.md, "Replicas"). One
// definition for the frontend's checks, the RTG (dispar_lang) and the runtime's port plans
// (runtime/src/Program.cpp), which includes this header alone: it depends on nothing but the standard
// library.
//
// A pipe carries one logical stream, messages (or, on item ports, items) n = 0, 1, 2, ... The join
// weights v0..v(K-1) say which of the K writer replicas produces message n: v0 messages from writer 0,
// then v1 from writer 1, ..., then again (n mod V, V = sum of v). The split weights w0..w(M-1) say which
// of the M reader replicas it goes to: w0 to reader 0, then w1 to reader 1, ... (n mod W), or with
// split(duplicate) to every reader replica. No weights means all 1: message n from writer n mod K to
// reader n mod M, writer replica r's j-th message being n = j*K + r. Under split(demand) the reader is
// decided at run time (each message to a reader replica with room), so every writer replica is linked
// to every reader replica, as under split(duplicate), but each message goes to one of them.
#ifndef DISPAR_LANG_LOGICALSTREAM_H
#define DISPAR_LANG_LOGICALSTREAM_H

#include <cstddef>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace dispar::lang {

enum class SplitMode { RoundRobin, Duplicate, Demand };

/// The longest cycle of turns a pipe's weights may make (lcm of the two weight sums): beyond it the
/// runtime's rotation tables would be larger than the program.
inline constexpr long long kMaxStreamPeriod = 1 << 16;

class LogicalStream {
 public:
  /// Weights empty: all 1. Otherwise `splitWeights` has `readers` entries and `joinWeights` `writers`,
  /// each at least 1 (check() says what is wrong).
  LogicalStream(int writers, int readers, SplitMode split, std::vector<int> splitWeights = {},
                std::vector<int> joinWeights = {})
      : writers_(writers), readers_(readers), split_(split), splitWeights_(std::move(splitWeights)),
        joinWeights_(std::move(joinWeights)) {}

  /// Empty when the weights fit the replica counts; otherwise what is wrong, e.g. "split(rr(...)) has 3
  /// weights but the reader has 2 replicas".
  std::string check() const {
    auto weightsProblem = [](const std::vector<int>& weights, int replicas, const char* clause,
                             const char* end) -> std::string {
      if (weights.empty()) return {};
      if (static_cast<int>(weights.size()) != replicas)
        return std::string(clause) + " has " + std::to_string(weights.size()) + " weight" +
               (weights.size() == 1 ? "" : "s") + " but the " + end + " has " + std::to_string(replicas) + " replica" +
               (replicas == 1 ? "" : "s");
      for (int weight : weights)
        if (weight < 1) return std::string(clause) + " has weight " + std::to_string(weight) + " (at least 1 needed)";
      return {};
    };
    if (std::string problem = weightsProblem(splitWeights_, readers_, "split(rr(...))", "reader"); !problem.empty())
      return problem;
    if (std::string problem = weightsProblem(joinWeights_, writers_, "join(rr(...))", "writer"); !problem.empty())
      return problem;
    if (split_ == SplitMode::Duplicate && !splitWeights_.empty()) return "split(duplicate) takes no weights";
    if (split_ == SplitMode::Demand && !splitWeights_.empty()) return "split(demand) takes no weights";
    if (weighted() && period() > kMaxStreamPeriod)
      return "the weights make a cycle of " + std::to_string(period()) + " messages (lcm of their sums; at most " +
             std::to_string(kMaxStreamPeriod) + ")";
    return {};
  }

  int writers() const { return writers_; }
  int readers() const { return readers_; }

  /// The messages of one round of the writer replicas' turns (K, or the sum of the join weights).
  long long joinCycle() const { return sum(joinWeights_, writers_); }

  /// Empty when a pipe may start with `initial` elements: any number with one writer replica; with
  /// several, a multiple of the join cycle, so that after them each replica's outputs still take the
  /// turns they would without them (writer replica r's j-th output stays logical message j*K + r
  /// shifted by whole rounds).
  std::string checkInitial(long long initial) const {
    if (initial == 0 || writers_ == 1 || initial % joinCycle() == 0) return {};
    return "initial(" + std::to_string(initial) + ") is not a multiple of " + std::to_string(joinCycle()) +
           ", the writer replicas' turns (" +
           (joinWeights_.empty() ? "its replica count" : "the sum of the join weights") +
           "): their outputs would take each other's turns";
  }

  /// The logical numbers, within one round of the writer replicas' turns, of writer replica `writer`'s
  /// messages: its j-th message is logical message (j / size()) * joinCycle() + element j mod size().
  std::vector<long long> writerPositions(int writer) const {
    std::vector<long long> positions;
    for (long long n = 0; n < joinCycle(); ++n)
      if (writerOf(n) == writer) positions.push_back(n);
    return positions;
  }

  /// The writer replica that produces logical message n.
  int writerOf(long long n) const { return turn(joinWeights_, writers_, n); }
  /// Whether every writer replica is linked to every reader replica (split(duplicate), split(demand)).
  bool linksEveryPair() const { return split_ != SplitMode::RoundRobin; }

  /// The reader replica logical message n goes to (under split(rr)).
  int readerOf(long long n) const { return turn(splitWeights_, readers_, n); }

  /// The reader replicas writer replica `writer` sends to, in the order its messages go to them: its
  /// j-th message goes to element j mod size() (a reader may appear several times). Under
  /// split(duplicate), every reader replica, each once: each message goes to all of them; under
  /// split(demand), every reader replica, each once: each message goes to one that has room.
  std::vector<int> writerPeers(int writer) const {
    std::vector<int> peers;
    if (linksEveryPair()) {
      for (int r = 0; r < readers_; ++r) peers.push_back(r);
      return peers;
    }
    if (!weighted()) return everyStep(writer, writers_, readers_);
    for (long long n = 0; n < period(); ++n)
      if (writerOf(n) == writer) peers.push_back(readerOf(n));
    return shortestCycle(std::move(peers));
  }

  /// The writer replicas that reader replica `reader` receives from, in logical order: its i-th message
  /// comes from element i mod size() (a writer may appear several times). Under split(demand), every
  /// writer replica, each once: the turns are decided at run time.
  std::vector<int> readerPeers(int reader) const {
    if (!weighted() || split_ == SplitMode::Demand) {
      if (split_ == SplitMode::RoundRobin) return everyStep(reader, readers_, writers_);
      std::vector<int> all;
      for (int w = 0; w < writers_; ++w) all.push_back(w);
      return all;
    }
    std::vector<int> peers;
    for (long long n = 0; n < period(); ++n)
      if (split_ == SplitMode::Duplicate || readerOf(n) == reader) peers.push_back(writerOf(n));
    return shortestCycle(std::move(peers));
  }

  /// How many (writer replica, reader replica) pairs are linked.
  long long linkCount() const {
    const long long all = static_cast<long long>(writers_) * readers_;
    if (!weighted() || split_ == SplitMode::Demand) return linksEveryPair() ? all : all / std::gcd(writers_, readers_);
    long long links = 0;
    for (int w = 0; w < writers_; ++w) {
      const std::vector<int> peers = writerPeers(w);
      links += static_cast<long long>(std::set<int>(peers.begin(), peers.end()).size());
    }
    return links;
  }

  /// Whether any weight is given (else the turns have a closed form, however large the counts).
  bool weighted() const { return !splitWeights_.empty() || !joinWeights_.empty(); }

  /// Messages after which the turns repeat: lcm of the weight sums (of the join's alone under
  /// split(duplicate) and split(demand)).
  long long period() const {
    const long long joinSum = sum(joinWeights_, writers_);
    if (linksEveryPair()) return joinSum;
    return std::lcm(joinSum, sum(splitWeights_, readers_));
  }

 private:
  /// Unweighted rr: start, start + step, start + 2 step, ... (mod modulus), up to where it repeats
  /// (modulus / gcd(step, modulus) values).
  static std::vector<int> everyStep(int start, int step, int modulus) {
    std::vector<int> cycle;
    const int length = modulus / std::gcd(step, modulus);
    for (int k = 0; k < length; ++k)
      cycle.push_back(static_cast<int>((start + static_cast<long long>(k) * step) % modulus));
    return cycle;
  }
  static long long sum(const std::vector<int>& weights, int replicas) {
    return weights.empty() ? replicas : std::accumulate(weights.begin(), weights.end(), 0LL);
  }
  static int turn(const std::vector<int>& weights, int replicas, long long n) {
    if (weights.empty()) return static_cast<int>(n % replicas);
    long long offset = n % sum(weights, replicas);
    for (std::size_t k = 0; k < weights.size(); ++k) {
      if (offset < weights[k]) return static_cast<int>(k);
      offset -= weights[k];
    }
    return static_cast<int>(weights.size()) - 1;  // unreachable: offset < sum
  }
  /// The shortest prefix of `sequence` that repeated gives it.
  static std::vector<int> shortestCycle(std::vector<int> sequence) {
    const std::size_t length = sequence.size();
    for (std::size_t cycle = 1; cycle < length; ++cycle) {
      if (length % cycle != 0) continue;
      bool repeats = true;
      for (std::size_t i = cycle; i < length && repeats; ++i) repeats = sequence[i] == sequence[i - cycle];
      if (repeats) {
        sequence.resize(cycle);
        break;
      }
    }
    return sequence;
  }

  int writers_;
  int readers_;
  SplitMode split_;
  std::vector<int> splitWeights_;
  std::vector<int> joinWeights_;
};

/// A pipe read by several VNODEs (split(duplicate) or split(rr...)) numbers its reader replicas across
/// them in source order: the first VNODE's replicas, then the next one's. `replicas` holds each reader
/// VNODE's replica count; returns which of them reader replica `r` is, and its replica there.
inline std::pair<std::size_t, int> readerOfReplica(const std::vector<int>& replicas, int r) {
  std::size_t which = 0;
  while (which + 1 < replicas.size() && r >= replicas[which]) r -= replicas[which++];
  return {which, r};
}

/// The inverse: the pipe-wide number of replica `replica` of reader VNODE `which`.
inline int replicaAcrossReaders(const std::vector<int>& replicas, std::size_t which, int replica) {
  for (std::size_t k = 0; k < which; ++k) replica += replicas[k];
  return replica;
}

/// Whether the mapping may deal a pipe on demand though its source says nothing (docs/streammap.md,
/// "Demand by default"): its dealing is the default round robin (no split clause, so no weights), one
/// VNODE of at least two replicas reads it (so there is a choice of reader), and it starts empty (no
/// initial(N), whose priming messages are dealt by turn). The one rule disparcc marks RTG edges by and the
/// runtime accepts a mapping's choice by.
inline bool mayDealOnDemand(bool roundRobin, bool splitDeclared, int readerVnodes, int readerReplicas, int initial) {
  return roundRobin && !splitDeclared && readerVnodes == 1 && readerReplicas >= 2 && initial == 0;
}

/// The replicas of a peer cycle, each once, in the order they first appear: the links of a port end.
inline std::vector<int> distinctInOrder(const std::vector<int>& cycle) {
  std::vector<int> distinct;
  std::set<int> seen;
  for (int replica : cycle)
    if (seen.insert(replica).second) distinct.push_back(replica);
  return distinct;
}

}  // namespace dispar::lang

#endif
