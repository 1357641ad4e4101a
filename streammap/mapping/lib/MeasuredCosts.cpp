#include "streammap/MeasuredCosts.h"

#include "streammap/ClusterDigest.h"
#include "streammap/GpuSpeed.h"

#include "streammap/NumberFormat.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace dispar::streammap {

const char* costOriginName(CostOrigin origin) {
  switch (origin) {
    case CostOrigin::Profile: return "profile";
    case CostOrigin::History: return "history";
    case CostOrigin::Clause: return "clause";
    case CostOrigin::Predicted: return "predicted";
    case CostOrigin::Default: return "default";
  }
  return "default";
}

namespace {

std::string measuredDetail(const CostHistory::Entry& e) {
  std::string models;
  for (const std::string& m : e.models) models += (models.empty() ? "" : ", ") + m;
  return std::to_string(e.runs) + " run" + (e.runs == 1 ? "" : "s") + ", " + std::to_string(e.work.used) + " of " +
         std::to_string(e.work.count) + " samples, spread " + formatPercent(e.work.spread) + ", on " + models;
}

/// A VNODE measured as taking no time (below the clock's resolution) still costs this much per message:
/// the cost model needs positive costs, and 1 (the default) would make it the heaviest of all.
constexpr double kLeastMeasuredCost = 1e-9;

/// The measured cost of `v` on `deviceClass` from `source`, per instance; false when not measured.
bool measured(const CostHistory* source, CostOrigin origin, const lang::Rtg& rtg, const lang::RtgVertex& v,
              const std::string& deviceClass, ResolvedCost& out) {
  if (source == nullptr) return false;
  const CostHistory::Entry* e = source->find(rtg.program, v.vnode, v.fingerprint, deviceClass);
  if (e == nullptr) return false;
  out = ResolvedCost{std::max(kLeastMeasuredCost, e->work.value / v.replicas), origin, measuredDetail(*e)};
  return true;
}

class Resolver {
 public:
  /// `out`'s edges are resolved already: a prediction takes the measured sizes of its VNODE's messages.
  Resolver(const lang::Rtg& rtg, const CostInputs& inputs, CostResolution& out) : rtg_(rtg), in_(inputs), out_(out) {
    if (in_.predictor != nullptr)
      runSizes_ = messageSizes(rtg, [&](std::size_t e) -> std::optional<double> {
        if (out.edgeOrigins[e].empty()) return std::nullopt;
        return static_cast<double>(*out.costed.edges[e].volume);
      });
  }

  ResolvedCost resolve(const lang::RtgVertex& v, const std::string& deviceClass) {
    ResolvedCost cost;
    if (measured(in_.profile, CostOrigin::Profile, rtg_, v, deviceClass, cost) ||
        measured(in_.history, CostOrigin::History, rtg_, v, deviceClass, cost))
      return cost;
    if (v.costDeclared) return ResolvedCost{v.cost, CostOrigin::Clause, "cost(" + formatNumber(v.cost) + ")"};
    std::string why = "no performance history";
    if (in_.predictor != nullptr) {
      lang::CodeFeatures query = v.features;
      if (const auto sizes = runSizes_.find(v.vnode); !query.empty() && sizes != runSizes_.end())
        query.insert(sizes->second.begin(), sizes->second.end());
      if (auto p = in_.predictor->predict(query, deviceClass, rtg_.program, v.vnode, why)) {
        std::string nearest;
        for (std::size_t i = 0; i < p->nearest.size() && i < 3; ++i) nearest += (i ? ", " : "") + p->nearest[i];
        return ResolvedCost{p->work / v.replicas, CostOrigin::Predicted,
                            "k-nearest neighbours on code features" +
                                std::string(p->messageSizes ? " and measured message sizes" : "") + ", nearest " +
                                nearest};
      }
    }
    return ResolvedCost{1.0, CostOrigin::Default, "no cost clause, not measured, not predicted: " + why};
  }

  void noteStaleHistory(const lang::RtgVertex& v) {
    if (v.replica != 0) return;
    for (const CostHistory* source : {in_.profile, in_.history}) {
      if (source == nullptr) continue;
      const std::vector<std::string> others = source->otherFingerprints(rtg_.program, v.vnode, v.fingerprint);
      if (others.empty() || source->find(rtg_.program, v.vnode, v.fingerprint, "cpu") ||
          source->find(rtg_.program, v.vnode, v.fingerprint, "gpu"))
        continue;
      out_.notes.push_back("note: vnode '" + v.vnode + "': the " + (source == in_.profile ? "profile" : "history") +
                           " measured other code (fingerprint " + others.front() +
                           (v.fingerprint.empty() ? "" : ", now " + v.fingerprint) + "); not used");
    }
  }

 private:
  const lang::Rtg& rtg_;
  const CostInputs& in_;
  CostResolution& out_;
  std::map<std::string, lang::CodeFeatures> runSizes_;  // by VNODE, where every pipe of it was measured
};

}  // namespace

namespace {

/// A cost as the digest sees it: its step on a scale of 10% steps. Every run adds to the history (`run`
/// profiles by default), so the estimates move a little each time; a move within the noise of a
/// measurement must not remap (and reshuffle) the program at every run, a real change must.
long long costStep(double cost) { return cost > 0 ? std::llround(std::log(cost) / std::log(1.1)) : 0; }

}  // namespace

std::string costsDigest(const CostResolution& costs) {
  std::string text;
  text.reserve(40 * costs.costed.vertices.size() + 8 * costs.costed.edges.size());
  for (std::size_t v = 0; v < costs.costed.vertices.size(); ++v) {
    text += std::to_string(costStep(costs.costed.vertices[v].cost));
    text += ' ';
    text += std::to_string(costStep(v < costs.hostCosts.size() ? costs.hostCosts[v] : 0.0));
    text += '\n';
  }
  for (const lang::RtgEdge& e : costs.costed.edges)
    text += e.volume ? std::to_string(*e.volume) + "\n" : std::string("-\n");
  return textDigest(text);
}

CostResolution resolveCosts(lang::Rtg rtg, const CostInputs& inputs) {
  CostResolution out;
  out.costed = std::move(rtg);
  const lang::Rtg& declared = out.costed;  // each vertex's own cost is read before it is replaced
  out.vertices.reserve(declared.vertices.size());
  out.hostCosts.reserve(declared.vertices.size());
  // Edges first: a prediction takes the measured message sizes of its VNODE's pipes.
  out.edgeOrigins.assign(out.costed.edges.size(), "");
  for (std::size_t e = 0; e < out.costed.edges.size(); ++e) {
    for (const auto& [source, name] : {std::pair{inputs.profile, "profile"}, std::pair{inputs.history, "history"}}) {
      if (source == nullptr) continue;
      const auto bytes = source->bytesPerMessage(out.costed.program, out.costed.edges[e].pipe);
      if (!bytes) continue;
      out.costed.edges[e].volume = static_cast<std::uint64_t>(bytes->value + 0.5);
      out.edgeOrigins[e] = name;
      break;
    }
  }
  Resolver resolver(declared, inputs, out);
  std::map<CostOrigin, int> origins;
  for (std::size_t i = 0; i < declared.vertices.size(); ++i) {
    const lang::RtgVertex& v = declared.vertices[i];
    resolver.noteStaleHistory(v);
    VertexCosts costs;
    costs.onCpu = resolver.resolve(v, "cpu");
    if (v.type == lang::Requirement::CG) {
      costs.onGpu = resolver.resolve(v, "gpu");
      // Not measured on a CPU: the host path takes kReferenceGpuSpeedupOverCore times the GPU's work.
      if (costs.onCpu.origin != CostOrigin::Profile && costs.onCpu.origin != CostOrigin::History) {
        costs.onCpu = costs.onGpu;
        costs.onCpu.work *= kReferenceGpuSpeedupOverCore;
        costs.onCpu.detail += "; x " + formatNumber(kReferenceGpuSpeedupOverCore) + " on a CPU's host path";
      }
    } else {
      costs.onGpu = costs.onCpu;
    }
    ++origins[costs.primary(v.type).origin];
    out.hostCosts.push_back(costs.onCpu.work);
    out.costed.vertices[i].cost = costs.primary(v.type).work;
    out.vertices.push_back(std::move(costs));
  }
  const int measuredCount = origins[CostOrigin::Profile] + origins[CostOrigin::History];
  if (measuredCount > 0 && origins[CostOrigin::Default] > 0)
    out.notes.push_back("note: " + std::to_string(origins[CostOrigin::Default]) +
                        " vertex(es) have neither a measurement, a cost clause nor a prediction and cost 1, beside " +
                        std::to_string(measuredCount) +
                        " measured in seconds per message: profile a run of every VNODE, or give cost(W) clauses");
  return out;
}

std::string describeCost(const ResolvedCost& cost) {
  const char* from = cost.origin == CostOrigin::Profile     ? "from the profile"
                     : cost.origin == CostOrigin::History   ? "from the history"
                     : cost.origin == CostOrigin::Clause    ? "from the clause"
                     : cost.origin == CostOrigin::Predicted ? "predicted"
                                                            : "by default";
  return formatNumber(cost.work) + " " + from + " (" + cost.detail + ")";
}

}  // namespace dispar::streammap
