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

/// The reader replicas that writer replica `writer` (of `writers`) sends to, in the order its
/// messages go to them: its j-th message goes to element j mod size(). Under split(duplicate) each
/// message goes to all of them.
inline std::vector<int> writerPeers(int writer, int writers, int readers, SplitMode split) {
  std::vector<int> peers;
  if (split == SplitMode::Duplicate) {
    for (int reader = 0; reader < readers; ++reader) peers.push_back(reader);
    return peers;
  }
  // (writer + j*K) mod M repeats after M / gcd(K, M) messages.
  const int cycle = readers / std::gcd(writers, readers);
  for (int j = 0; j < cycle; ++j) peers.push_back(static_cast<int>((writer + static_cast<long long>(j) * writers) % readers));
  return peers;
}

/// The writer replicas that reader replica `reader` (of `readers`) receives from, in logical order:
/// its i-th message (n = reader + i*M under split(rr); n = i under split(duplicate)) comes from
/// element i mod size().
inline std::vector<int> readerPeers(int reader, int writers, int readers, SplitMode split) {
  std::vector<int> peers;
  if (split == SplitMode::Duplicate) {
    for (int writer = 0; writer < writers; ++writer) peers.push_back(writer);
    return peers;
  }
  const int cycle = writers / std::gcd(writers, readers);
  for (int i = 0; i < cycle; ++i) peers.push_back(static_cast<int>((reader + static_cast<long long>(i) * readers) % writers));
  return peers;
}

}  // namespace dispar::lang

#endif
