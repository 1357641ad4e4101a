// From an RTG and a cluster to a complete mapping: the chosen algorithm, GPU devices, warnings, the
// per-vertex explanation, and the records the files are written from.
#ifndef STREAMMAP_MAP_PLANNER_H
#define STREAMMAP_MAP_PLANNER_H

#include "dispar_lang/Rtg.h"
#include "streammap/CostModel.h"
#include "streammap/MapFile.h"
#include "streammap/Mapping.h"
#include "streammap/MappingProblem.h"
#include "streammap/MeasuredCosts.h"
#include "streammap/RankGroups.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dispar::streammap {

/// RoundRobin is what mpiexec does with a machinefile of every node and its cores (roundRobinPlacement):
/// the baseline the others are measured against (bench/mapping, streammap simulate).
enum class Algorithm { Paper, Refine, RoundRobin };
const char* algorithmName(Algorithm a);  // "paper" / "refine" / "round-robin"

struct MapSettings {
  Algorithm algorithm = Algorithm::Refine;
  std::optional<std::uint64_t> seed;
  bool allowHostFallback = false;
  int maxPasses = 0;  // refine; 0: automatic
  RankPolicy ranks;   // which instances share a rank (--ranks, --rank-per-instance)
  /// Where the costs came from (measured, clause, predicted: MeasuredCosts.h); the RTG mapped must be its
  /// `costed`. Null: the RTG's own costs.
  const CostResolution* costs = nullptr;
  /// A remap for moved costs: the mapping it replaces, kept unless the new one's predicted period is at
  /// least kRemapGain shorter under the same costs (a run's measured costs move a little at every run,
  /// and near-tied mappings would otherwise flip between runs). Null: none.
  const std::vector<lang::MapRank>* previous = nullptr;
};

/// How much shorter a new mapping's predicted period must be to replace MapSettings::previous.
inline constexpr double kRemapGain = 0.05;

/// A pipe of the default round robin (RtgEdge::mayDealOnDemand) is dealt on demand where the mapping
/// puts its reader replicas on resources whose predicted times for them differ by more than this factor:
/// round robin would pace every replica at the slowest one's rate.
inline constexpr double kDemandSpeedRatio = 1.5;

struct MappingOutcome {
  MappingProblem problem;
  MappingResult result;
  RankLayout ranks;                      // the MPI ranks and their instances (groupRanks)
  Evaluation evaluation;                 // with the ranks' terms
  std::vector<int> device;               // per vertex: CUDA device ordinal on its node, -1 for none
  std::vector<std::string> warnings;     // "warning: ..." and "note: ..." lines for stderr
  std::vector<std::string> demandPipes;  // pipes dealt on demand (kDemandSpeedRatio), by name
};

/// Places the vertices, groups them into ranks and gives the GPU ranks their devices. Fails (false,
/// `error` set) on the conditions buildProblem reports and on a --ranks count out of range.
bool planMapping(const lang::Rtg& rtg, const Cluster& cluster, const MapSettings& settings, MappingOutcome& out,
                 std::string& error);

/// Spreads each node's GPU ranks over its GPUs, all GPU instances of a rank on one GPU (the rank's): by
/// decreasing cost (of its GPU instances), each on the GPU whose predicted time (sum of weight / that
/// GPU's speed) is least once it is added, ties to the lower ordinal, then the lower rank. Per vertex.
std::vector<int> assignDevices(const MappingProblem& problem, const RankLayout& ranks);

/// One line per vertex: where it went, the rule or cost term that decided, and the runner-up node; then
/// one line per rank of several instances: why they were grouped.
std::vector<std::string> explainMapping(const lang::Rtg& rtg, const MappingOutcome& outcome,
                                        const MapSettings& settings);

/// The record app.map.json is written from.
MapRecord makeMapRecord(const lang::Rtg& rtg, const Cluster& cluster, const MappingOutcome& outcome,
                        const MapSettings& settings);

/// Graphviz drawing of the RTG, vertices grouped by node in clusters, and the ranks of several instances
/// as clusters inside them.
std::string formatDot(const lang::Rtg& rtg, const MappingOutcome& outcome);

/// Mode of vertex v on node n: "gpu", "cpu" or "host-fallback".
const char* rankMode(const MappingProblem& problem, int v, int n);

}  // namespace dispar::streammap

#endif
