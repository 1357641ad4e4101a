#include "streammap/CostPredictor.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace dispar::streammap {

CostPredictor::CostPredictor(const CostHistory& history) : history_(history) {}

std::optional<CostPredictor::Prediction> CostPredictor::predict(const lang::CodeFeatures& features,
                                                                const std::string& deviceClass,
                                                                const std::string& excludeProgram,
                                                                const std::string& excludeVnode, std::string& why) const {
  if (features.empty()) {
    why = "the RTG has no code features for it";
    return std::nullopt;
  }
  std::vector<const CostHistory::Entry*> known;
  for (const CostHistory::Entry& e : history_.entries())
    if (e.key.deviceClass == deviceClass && !e.features.empty() && e.work.value > 0 &&
        !(e.key.program == excludeProgram && e.key.vnode == excludeVnode))
      known.push_back(&e);
  if (static_cast<int>(known.size()) < kMinimumHistory) {
    why = "the history has " + std::to_string(known.size()) + " measured VNODE(s) with code features on a " +
          deviceClass + ", fewer than " + std::to_string(kMinimumHistory);
    return std::nullopt;
  }
  // Every feature name any of them (or the query) has; a missing one counts 0.
  std::set<std::string> names;
  for (const auto& [name, value] : features) names.insert(name);
  for (const CostHistory::Entry* e : known)
    for (const auto& [name, value] : e->features) names.insert(name);
  const auto transformed = [](const lang::CodeFeatures& f, const std::string& name) {
    const auto it = f.find(name);
    return std::log1p(it == f.end() ? 0.0 : it->second);
  };
  std::map<std::string, double> scale;  // 1 / standard deviation over the history
  for (const std::string& name : names) {
    double sum = 0, squares = 0;
    for (const CostHistory::Entry* e : known) {
      const double x = transformed(e->features, name);
      sum += x;
      squares += x * x;
    }
    const double n = static_cast<double>(known.size()), mean = sum / n;
    const double variance = std::max(0.0, squares / n - mean * mean);
    if (variance > 1e-12) scale[name] = 1 / std::sqrt(variance);
  }
  std::vector<std::pair<double, const CostHistory::Entry*>> byDistance;
  for (const CostHistory::Entry* e : known) {
    double squared = 0;
    for (const auto& [name, factor] : scale) {
      const double d = (transformed(features, name) - transformed(e->features, name)) * factor;
      squared += d * d;
    }
    byDistance.push_back({squared, e});
  }
  // Ties broken by key, so that predictions do not depend on the history's order.
  std::sort(byDistance.begin(), byDistance.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second->key < b.second->key;
  });
  Prediction prediction;
  double weights = 0, logWork = 0;
  for (int i = 0; i < kNeighbours && i < static_cast<int>(byDistance.size()); ++i) {
    const CostHistory::Entry& e = *byDistance[static_cast<std::size_t>(i)].second;
    const double weight = 1.0 / (i + 1);
    weights += weight;
    logWork += weight * std::log(e.work.value);
    prediction.nearest.push_back(e.key.program + "/" + e.key.vnode);
  }
  prediction.work = std::exp(logWork / weights);
  return prediction;
}

}  // namespace dispar::streammap
