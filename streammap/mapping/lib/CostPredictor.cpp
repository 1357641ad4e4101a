#include "streammap/CostPredictor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace dispar::streammap {

namespace {

// log(1 + x): costs and counts span orders of magnitude. NaN where the features lack it.
double transformed(const lang::CodeFeatures& features, const std::string& name) {
  const auto it = features.find(name);
  return it == features.end() ? std::numeric_limits<double>::quiet_NaN() : std::log1p(it->second);
}

}  // namespace

CostPredictor::CostPredictor(const CostHistory& history) {
  for (const CostHistory::Entry& e : history.entries())
    if (!e.features.empty() && e.work.value > 0) classes_[e.key.deviceClass].entries.push_back(&e);
  for (auto& [deviceClass, known] : classes_) {
    std::set<std::string> names;
    for (const CostHistory::Entry* e : known.entries)
      for (const auto& [name, value] : e->features) names.insert(name);
    known.names.assign(names.begin(), names.end());
    for (const CostHistory::Entry* e : known.entries) {
      std::vector<double>& row = known.rows.emplace_back(known.names.size());
      for (std::size_t f = 0; f < known.names.size(); ++f) row[f] = transformed(e->features, known.names[f]);
    }
  }
}

std::optional<CostPredictor::Prediction>
CostPredictor::predict(const lang::CodeFeatures& features, const std::string& deviceClass,
                       const std::string& excludeProgram, const std::string& excludeVnode, std::string& why) const {
  if (features.empty()) {
    why = "the RTG has no code features for it";
    return std::nullopt;
  }
  static const ClassHistory kNone;
  const auto found = classes_.find(deviceClass);
  const ClassHistory& known = found == classes_.end() ? kNone : found->second;
  // The excluded VNODE's entries (leave-one-out) take no part, in the scales either.
  std::vector<std::size_t> candidates;
  for (std::size_t i = 0; i < known.entries.size(); ++i) {
    const CostHistory::Key& key = known.entries[i]->key;
    if (key.program != excludeProgram || key.vnode != excludeVnode) candidates.push_back(i);
  }
  // The features both the query and enough of the history have (the run features of message sizes are
  // absent from a program never run, and from entries recorded without them): a feature counts when at
  // least kNeighbours candidates have it, or all of them where there are fewer; a candidate that lacks a
  // counted feature is no neighbour.
  std::vector<std::size_t> counted;
  for (std::size_t f = 0; f < known.names.size(); ++f) {
    if (features.count(known.names[f]) == 0) continue;
    std::size_t having = 0;
    for (std::size_t i : candidates) having += !std::isnan(known.rows[i][f]);
    if (having < std::min<std::size_t>(kNeighbours, candidates.size()) || having == 0) continue;
    counted.push_back(f);
  }
  std::vector<std::size_t> eligible;
  for (std::size_t i : candidates)
    if (std::all_of(counted.begin(), counted.end(), [&](std::size_t f) { return !std::isnan(known.rows[i][f]); }))
      eligible.push_back(i);
  if (static_cast<int>(eligible.size()) < kMinimumHistory) {
    why = "the history has " + std::to_string(eligible.size()) + " measured VNODE(s) with code features on a " +
          deviceClass + ", fewer than " + std::to_string(kMinimumHistory);
    return std::nullopt;
  }
  // 1 / standard deviation over the neighbours-to-be per feature; one that never varies is left out.
  std::vector<std::size_t> used;
  std::vector<double> scale, query;
  const double n = static_cast<double>(eligible.size());
  for (std::size_t f : counted) {
    double sum = 0, squares = 0;
    for (std::size_t i : eligible) {
      sum += known.rows[i][f];
      squares += known.rows[i][f] * known.rows[i][f];
    }
    const double mean = sum / n;
    const double variance = std::max(0.0, squares / n - mean * mean);
    if (variance <= 1e-12) continue;
    used.push_back(f);
    scale.push_back(1 / std::sqrt(variance));
    query.push_back(transformed(features, known.names[f]));
  }
  std::vector<std::pair<double, const CostHistory::Entry*>> byDistance;
  byDistance.reserve(eligible.size());
  for (std::size_t i : eligible) {
    double squared = 0;
    for (std::size_t u = 0; u < used.size(); ++u) {
      const double d = (query[u] - known.rows[i][used[u]]) * scale[u];
      squared += d * d;
    }
    byDistance.push_back({squared, known.entries[i]});
  }
  // Ties broken by key, so that predictions do not depend on the history's order.
  std::sort(byDistance.begin(), byDistance.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second->key < b.second->key;
  });
  Prediction prediction;
  prediction.messageSizes = std::any_of(used.begin(), used.end(), [&](std::size_t f) {
    return known.names[f] == kMessageBytesIn || known.names[f] == kMessageBytesOut;
  });
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
