// The rule that connects the replicas at the two ends of a pipe (docs/language.md, "Replicas"). One
// definition for the RTG (dispar_lang) and the runtime's port plans (runtime/src/Program.cpp), which
// includes this header alone: it depends on nothing but the standard library.
//
// A pipe carries one logical stream. With split(rr) (the default), message n travels from writer
// replica n mod K to reader replica n mod M: writer replica r's j-th message is n = j*K + r. With
// split(duplicate), every message goes to every reader replica.
#ifndef DISPAR_LANG_LOGICALSTREAM_H
#define DISPAR_LANG_LOGICALSTREAM_H

#include <numeric>
#include <vector>

namespace dispar::lang {

enum class SplitMode { RoundRobin, Duplicate };

namespace detail {
/// start, start + step, start + 2 step, ... (mod modulus), up to where it repeats (modulus / gcd(step,
/// modulus) values); every replica 0 .. modulus-1 once, in order, when the split duplicates.
inline std::vector<int> replicaCycle(int start, int step, int modulus, SplitMode split) {
  std::vector<int> cycle;
  const int length = split == SplitMode::Duplicate ? modulus : modulus / std::gcd(step, modulus);
  for (int k = 0; k < length; ++k)
    cycle.push_back(
        split == SplitMode::Duplicate ? k : static_cast<int>((start + static_cast<long long>(k) * step) % modulus));
  return cycle;
}
}  // namespace detail

/// The reader replicas that writer replica `writer` (of `writers`) sends to, in the order its
/// messages go to them: its j-th message (n = j*K + writer) goes to element j mod size(). Under
/// split(duplicate) each message goes to all of them.
inline std::vector<int> writerPeers(int writer, int writers, int readers, SplitMode split) {
  return detail::replicaCycle(writer, writers, readers, split);
}

/// The writer replicas that reader replica `reader` (of `readers`) receives from, in logical order:
/// its i-th message (n = reader + i*M under split(rr); n = i under split(duplicate)) comes from
/// element i mod size().
inline std::vector<int> readerPeers(int reader, int writers, int readers, SplitMode split) {
  return detail::replicaCycle(reader, readers, writers, split);
}

/// How many (writer replica, reader replica) links the pipe has: every writer replica has a link to
/// each reader replica of its writerPeers (writers * readers / gcd under split(rr)).
inline long long linkCount(int writers, int readers, SplitMode split) {
  const long long all = static_cast<long long>(writers) * readers;
  return split == SplitMode::Duplicate ? all : all / std::gcd(writers, readers);
}

}  // namespace dispar::lang

#endif
