// Costs predicted from code features where nothing was measured (docs/streammap.md, "Predicted
// costs"): k nearest neighbours over the performance history, after the feature-based partitioning
// idea of our background (../shared/background.md): VNODEs whose code looks alike cost alike.
#ifndef STREAMMAP_COST_PREDICTOR_H
#define STREAMMAP_COST_PREDICTOR_H

#include "streammap/CostHistory.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dispar::streammap {

class CostPredictor {
 public:
  static constexpr int kNeighbours = 10;
  /// Fewer measured VNODEs with features than this on a device class: no prediction.
  static constexpr int kMinimumHistory = 3;

  explicit CostPredictor(const CostHistory& history);

  struct Prediction {
    double work = 0;                   // the VNODE's work per message, all replicas
    std::vector<std::string> nearest;  // "program/vnode" of the neighbours used, nearest first
    bool messageSizes = false;         // whether the run's message sizes counted (CostHistory.h)
  };
  /// Predicts the work of code with `features` on `deviceClass` ("cpu"/"gpu"): the neighbours' works,
  /// weighted 1/rank, averaged in log space (costs span orders of magnitude). Distances are Euclidean
  /// over the features as log(1 + x), each scaled by its standard deviation over the history (a
  /// feature that never varies is left out). A feature counts only where the query has it and so do at
  /// least kNeighbours entries (all, in a smaller history); entries lacking a counted feature are not
  /// neighbours. Entries of `exclude` (program, vnode) are not neighbours.
  /// nullopt, with `why`, when the features are empty or the history too small.
  std::optional<Prediction> predict(const lang::CodeFeatures& features, const std::string& deviceClass,
                                    const std::string& excludeProgram, const std::string& excludeVnode,
                                    std::string& why) const;

 private:
  /// The history of one device class, prepared once: each measured VNODE's transformed features as a
  /// dense row over the class's feature names, so that a query (often one per vertex of a large
  /// program) costs a few passes over the rows.
  struct ClassHistory {
    std::vector<std::string> names;  // sorted: every feature any entry has
    std::vector<const CostHistory::Entry*> entries;
    std::vector<std::vector<double>> rows;  // per entry: log(1 + feature) per name, NaN when absent
  };
  std::map<std::string, ClassHistory> classes_;
};

}  // namespace dispar::streammap

#endif
