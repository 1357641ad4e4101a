#include "streammap/Mapping.h"

namespace dispar::streammap {

const char* placementRuleName(PlacementRule rule) {
  switch (rule) {
    case PlacementRule::CrtPointer: return "step 4: CRT pointer";
    case PlacementRule::GrtPointer: return "step 3: GRT pointer";
    case PlacementRule::GrtForCo: return "step 4 -> 3: CRT exhausted, GRT pointer";
    case PlacementRule::AdjacentCg: return "step 5: adjacent CG vertex";
    case PlacementRule::AdjacentAny: return "step 5: adjacent vertex";
    case PlacementRule::LeastLoadedGpu: return "step 6: least-loaded GPU node";
    case PlacementRule::LeastLoadedAny: return "step 6: least-loaded node";
    case PlacementRule::LocalSearch: return "refine: local search";
    case PlacementRule::PaperKept: return "refine: paper's choice kept";
    case PlacementRule::PreviousKept: return "previous mapping kept (the new one not 5% better)";
    case PlacementRule::DemandSpread: return "refine: spread for a pipe dealt on demand";
  }
  return "unknown";
}

}  // namespace dispar::streammap
