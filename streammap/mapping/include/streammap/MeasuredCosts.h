// Which cost each vertex maps with, and where it came from (docs/streammap.md, "Measured costs"): per
// vertex and device class, the profile given (`map --profile`), else the performance history, else
// the cost(W) clause, else the prediction from code features, else 1; per edge the measured bytes per
// message where a run measured its pipe, else its volume clause or element size.
#ifndef STREAMMAP_MEASURED_COSTS_H
#define STREAMMAP_MEASURED_COSTS_H

#include "dispar_lang/Rtg.h"
#include "streammap/CostHistory.h"
#include "streammap/CostPredictor.h"

#include <string>
#include <vector>

namespace dispar::streammap {

enum class CostOrigin { Profile, History, Clause, Predicted, Default };
const char* costOriginName(CostOrigin origin);  // "profile", "history", "clause", "predicted", "default"

struct ResolvedCost {
  double work = 1.0;  // this instance's cost, the cost model's unit
  CostOrigin origin = CostOrigin::Default;
  std::string detail;  // how it was found, for --explain ("5 runs, 10 of 10 samples, spread 2%")
};

/// A vertex's cost where it uses a GPU (a CG vertex on a GPU node) and where it runs on a CPU (a CO
/// vertex, or a CG vertex on the host path).
struct VertexCosts {
  ResolvedCost onGpu, onCpu;
  /// The cost for the vertex's own kind: on a GPU for CG, on a CPU for CO.
  const ResolvedCost& primary(lang::Requirement type) const { return type == lang::Requirement::CG ? onGpu : onCpu; }
};

struct CostInputs {
  const CostHistory* profile = nullptr;  // the run of `map --profile FILE`
  const CostHistory* history = nullptr;  // the resource database's performance history
  const CostPredictor* predictor = nullptr;
};

struct CostResolution {
  std::vector<VertexCosts> vertices;  // by vertex
  std::vector<std::string> notes;     // "note: ..." lines: stale history, mixed origins, no prediction
  /// The RTG to map: each vertex's cost its primary cost, each measured pipe's edges its bytes per message.
  lang::Rtg costed;
  /// Per vertex the cost on a CPU (MappingProblem's host cost).
  std::vector<double> hostCosts;
  /// Per edge: where its bytes per message came from ("profile", "history" or "" for the RTG's).
  std::vector<std::string> edgeOrigins;
};

/// Resolves every vertex's and edge's cost of `rtg` from `inputs`; `rtg` becomes the result's `costed`
/// (move it in where the caller needs no copy).
CostResolution resolveCosts(lang::Rtg rtg, const CostInputs& inputs);

/// The digest of the costs a mapping is made from (every vertex's cost and host cost, every edge's
/// bytes per message): `run` maps again when the history's estimates have moved since.
std::string costsDigest(const CostResolution& costs);

/// "0.0123 from the history (5 runs, 10 of 10 samples, spread 2%)" for --explain.
std::string describeCost(const ResolvedCost& cost);

}  // namespace dispar::streammap

#endif
