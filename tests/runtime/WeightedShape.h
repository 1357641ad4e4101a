// Weighted replica shapes for the MPI shape tests (ReplicaShapesTest, GroupedShapesTest): a pipe's
// replica counts, orders and weights, and the turns the weights give, written out here (w0 times
// replica 0, then w1 times replica 1, ...) rather than by the rule's code (dispar_lang/LogicalStream.h).
#ifndef DISPAR_TESTS_RUNTIME_WEIGHTEDSHAPE_H
#define DISPAR_TESTS_RUNTIME_WEIGHTEDSHAPE_H

#include <dispar/runtime.h>

#include <cstddef>
#include <vector>

namespace dispar::test {

struct WeightedShape {
  int writers;
  int readers;
  rt::MergeOrder order;
  rt::SplitMode split;
  std::vector<int> splitWeights;  // empty under split(duplicate) or when only the join is weighted
  std::vector<int> joinWeights;
};

/// The replica whose turn message n is (`weights` empty: all 1).
inline int turnOf(const std::vector<int>& weights, int replicas, int n) {
  std::vector<int> turns;
  for (int r = 0; r < replicas; ++r)
    for (int k = 0; k < (weights.empty() ? 1 : weights[static_cast<std::size_t>(r)]); ++k) turns.push_back(r);
  return turns[static_cast<std::size_t>(n) % turns.size()];
}

}  // namespace dispar::test

#endif  // DISPAR_TESTS_RUNTIME_WEIGHTEDSHAPE_H
