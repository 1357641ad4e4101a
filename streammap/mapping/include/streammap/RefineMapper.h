// The heterogeneity-aware mapper: local search (moves and swaps) on the cost model (CostModel.h),
// started from the paper's mapping, a cost-aware greedy placement and mpiexec's round-robin, keeping the
// best.
#ifndef STREAMMAP_REFINE_MAPPER_H
#define STREAMMAP_REFINE_MAPPER_H

#include "streammap/Mapping.h"
#include "streammap/MappingProblem.h"

#include <cstdint>

namespace dispar::streammap {

struct RefineOptions {
  /// Improvement passes per start; 0 picks automatically (docs/streammap.md, "--algorithm refine").
  int maxPasses = 0;
  /// Seeds the extra random starts used on small instances.
  std::uint64_t seed = 0;
};

/// Never returns a worse (period, crossing bytes) than `paper` or than roundRobinPlacement, and never
/// puts a CG vertex on a node without a GPU unless the problem allows host fallback.
MappingResult mapRefine(const MappingProblem& problem, const MappingResult& paper, const RefineOptions& options);

/// Cost-aware greedy placement: vertices by decreasing cost, each on the candidate node whose value
/// after placing it is lowest (ties: fewer bytes crossing, then host order).
std::vector<int> greedyPlacement(const MappingProblem& problem);

/// What mpiexec does with a machinefile of every usable host as "host:cores" in host order: ranks fill
/// the first host's cores, then the next host's, wrapping around when every core is used. A vertex the
/// current host may not run (a CG vertex on a host without a GPU, without host fallback) goes to the
/// next host that may, without taking its turn.
std::vector<int> roundRobinPlacement(const MappingProblem& problem);

}  // namespace dispar::streammap

#endif
