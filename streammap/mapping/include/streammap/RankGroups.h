// Which VNODE instances share an MPI rank (docs/streammap.md, "Ranks"). The mapper places instances
// on nodes; this then groups the instances of each node into ranks, one thread per instance in a rank
// and in-memory queues for the pipes inside it.
#ifndef STREAMMAP_RANK_GROUPS_H
#define STREAMMAP_RANK_GROUPS_H

#include "streammap/CostModel.h"
#include "streammap/MappingProblem.h"

#include <string>
#include <vector>

namespace dispar::streammap {

/// How many ranks: `map`'s --ranks N and --rank-per-instance, else one rank per core at most.
struct RankPolicy {
  enum class Kind {
    AtMostCores,  // default: a node with more instances than cores gets as many ranks as cores
    Exact,        // --ranks N: exactly `count` ranks in all
    PerInstance,  // --rank-per-instance: the paper's one rank per instance
  };
  Kind kind = Kind::AtMostCores;
  int count = 0;  // Exact
};

/// The ranks each used node gets under `policy`: per problem node (0 for unused nodes). Fails (false,
/// `error` naming the bounds) when an Exact count is below the nodes the mapping uses or above its
/// instances.
bool rankTargets(const MappingProblem& p, const std::vector<int>& nodeOf, const RankPolicy& policy,
                 std::vector<int>& targets, std::string& error);

/// Groups the instances of every node into its rankTargets ranks. Where a node has more instances than
/// ranks, instances are merged pairwise: first the two groups joined by the most pipe bytes whose
/// merged load stays within what the best grouping could achieve (the CPU load per rank, and for GPU
/// instances the GPU load, see RankGroups.cpp), then the remaining groups are spread over the heaviest
/// ones, each to the lightest (largest-first). That grouping, largest-first alone and, where the node runs
/// part of a feedback loop (MappingProblem::loopOf), one that first puts each loop's instances together
/// are made, and the one whose ranks take less time under the cost model kept, each loop's turn counted
/// with the hops its grouping makes inside and between ranks (the cost model's loop(l)) (equal: more bytes
/// inside ranks, then in that order). Deterministic: ties go to the lower vertex. Fails as rankTargets does.
bool groupRanks(const MappingProblem& p, const std::vector<int>& nodeOf, const RankPolicy& policy, RankLayout& out,
                std::string& error);

}  // namespace dispar::streammap

#endif
