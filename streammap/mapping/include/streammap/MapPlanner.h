// From an RTG and a cluster to a complete mapping: the chosen algorithm, GPU devices, warnings, the
// per-vertex explanation, and the records the files are written from.
#ifndef STREAMMAP_MAP_PLANNER_H
#define STREAMMAP_MAP_PLANNER_H

#include "dispar_lang/Rtg.h"
#include "streammap/CostModel.h"
#include "streammap/MapFile.h"
#include "streammap/Mapping.h"
#include "streammap/MappingProblem.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dispar::streammap {

enum class Algorithm { Paper, Refine };
const char* algorithmName(Algorithm a);  // "paper" / "refine"

struct MapSettings {
  Algorithm algorithm = Algorithm::Refine;
  std::optional<std::uint64_t> seed;
  bool allowHostFallback = false;
  int maxPasses = 0;  // refine; 0: automatic
};

struct MappingOutcome {
  MappingProblem problem;
  MappingResult result;
  Evaluation evaluation;
  std::vector<int> device;              // per rank: CUDA device ordinal on its node, -1 for none
  std::vector<std::string> warnings;    // "warning: ..." and "note: ..." lines for stderr
};

/// Fails (false, `error` set) on the conditions buildProblem reports.
bool planMapping(const lang::Rtg& rtg, const Cluster& cluster, const MapSettings& settings, MappingOutcome& out,
                 std::string& error);

/// Spreads each node's GPU vertices over its GPUs: by decreasing cost, each on the GPU whose predicted
/// time (sum of cost / that GPU's speed) is least once it is added, ties to the lower ordinal.
std::vector<int> assignDevices(const MappingProblem& problem, const std::vector<int>& nodeOf);

/// One line per vertex: where it went, the rule or cost term that decided, and the runner-up node.
std::vector<std::string> explainMapping(const lang::Rtg& rtg, const MappingOutcome& outcome, Algorithm algorithm);

/// The record app.map.json is written from.
MapRecord makeMapRecord(const lang::Rtg& rtg, const Cluster& cluster, const MappingOutcome& outcome,
                        const MapSettings& settings);

/// Graphviz drawing of the RTG, vertices grouped by node in clusters.
std::string formatDot(const lang::Rtg& rtg, const MappingOutcome& outcome);

/// Mode of vertex v on node n: "gpu", "cpu" or "host-fallback".
const char* rankMode(const MappingProblem& problem, int v, int n);

}  // namespace dispar::streammap

#endif
