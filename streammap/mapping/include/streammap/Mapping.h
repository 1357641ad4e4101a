// A mapping: the node of every RTG vertex, and why it went there.
#ifndef STREAMMAP_MAPPING_H
#define STREAMMAP_MAPPING_H

#include <vector>

namespace dispar::streammap {

/// The rule that placed a vertex (docs/streammap.md, "--explain").
enum class PlacementRule {
  CrtPointer,      // paper step 4: the node under the CRT pointer
  GrtPointer,      // paper step 3: the node under the GRT pointer (CG vertex)
  GrtForCo,        // paper step 4 -> 3: CRT exhausted, a CO vertex takes a CPU-GPU pair
  AdjacentCg,      // paper step 5: same node as an assigned adjacent CG vertex
  AdjacentAny,     // paper step 5: same node as an assigned adjacent vertex
  LeastLoadedGpu,  // paper step 6: least-loaded GPU node
  LeastLoadedAny,  // paper step 6: least-loaded node
  LocalSearch,     // refine: moved away from the paper's choice by the cost model
  PaperKept,       // refine: the paper's choice, which the cost model could not improve
  PreviousKept,    // a remap for moved costs: the previous mapping's node, the new one not enough better
  DemandSpread,    // refine: a reader of a pipe dealt on demand, moved where its rate adds to the others'
};

const char* placementRuleName(PlacementRule rule);

struct Placement {
  PlacementRule rule = PlacementRule::CrtPointer;
  int viaVertex = -1;  // AdjacentCg / AdjacentAny: the adjacent vertex followed
  int runnerUp = -1;   // problem node index the rule would have chosen next, -1: none
};

struct MappingResult {
  std::vector<int> nodeOf;            // problem node index, by rank
  std::vector<Placement> placements;  // by rank
  std::vector<int> visitOrder;        // order the paper algorithm took the vertices in
  long slots = 0;                     // paper: total slots of CRT and GRT
  long oversubscribed = 0;            // paper: vertices placed by steps 5-6 (tables exhausted)
};

}  // namespace dispar::streammap

#endif
