#include "streammap/CostHistory.h"

#include "streammap/NumberFormat.h"

#include "streammap/GpuSpeed.h"

#include "dispar_lang/ComputeCapability.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace dispar::streammap {

const char* deviceClassOf(const lang::ProfiledInstance& instance) { return instance.device == "gpu" ? "gpu" : "cpu"; }

namespace {

/// The relative speed of the device `instance` ran on, as the cost model counts it; nullopt when
/// `cluster` does not know it.
std::optional<double> deviceSpeed(const lang::ProfiledInstance& instance, const Cluster& cluster) {
  const NodeInfo* host = nullptr;
  for (const NodeInfo& node : cluster.nodes)
    if (node.host == instance.host) host = &node;
  if (instance.device != "gpu") {
    if (host == nullptr) return std::nullopt;
    return host->cpuSpeed > 0 ? host->cpuSpeed : 1.0;
  }
  // The host's GPU of that model; else that model on any node (the same GPU has the same estimate).
  if (host != nullptr)
    for (const GpuInfo& gpu : host->gpus)
      if (gpu.name == instance.deviceModel) return estimateGpuSpeed(gpu);
  for (const NodeInfo& node : cluster.nodes)
    for (const GpuInfo& gpu : node.gpus)
      if (gpu.name == instance.deviceModel) return estimateGpuSpeed(gpu);
  return std::nullopt;
}

/// For a GPU the resources do not know: the speed estimate of what the runtime recorded of it.
std::optional<double> describedGpuSpeed(const lang::ProfiledInstance& instance) {
  if (!instance.gpu || instance.gpu->multiprocessors <= 0 || instance.gpu->clockKHz <= 0) return std::nullopt;
  GpuInfo described;
  described.name = instance.deviceModel;
  described.multiprocessors = instance.gpu->multiprocessors;
  described.clockKHz = instance.gpu->clockKHz;
  described.ccMajor = instance.gpu->ccMajor;
  described.ccMinor = instance.gpu->ccMinor;
  return estimateGpuSpeed(described);
}

double median(std::vector<double> values) {
  const std::size_t n = values.size();
  std::sort(values.begin(), values.end());
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

lang::CodeFeatures parseFeatures(const std::string& text) {
  lang::CodeFeatures features;
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return features;
  for (const auto& [name, value] : doc.items())
    if (value.is_number() && std::isfinite(value.get<double>())) features[name] = value.get<double>();
  return features;
}

}  // namespace

namespace {

/// A profile is checked against itself and its RTG before it is recorded or mapped with: every
/// instance and pipe once, replicas in range, pipes of the program, times finite, at most a year and,
/// where the profile records the run's wall time, within it.
bool validateProfile(const lang::RunProfile& profile, const std::string& source, const lang::Rtg* rtg,
                     std::string& error) {
  // The RTG has a vertex per instance: a vnode's replicas are its vertices (counted once, not per instance).
  std::map<std::string, int> replicasInRtg;
  if (rtg != nullptr)
    for (const lang::RtgVertex& v : rtg->vertices)
      replicasInRtg[v.vnode] = std::max(replicasInRtg[v.vnode], v.replica + 1);
  std::set<std::pair<std::string, int>> instances;
  for (const lang::ProfiledInstance& instance : profile.instances) {
    const std::string which =
        "instance '" + escapedForDisplay(instance.vnode) + "' replica " + std::to_string(instance.replica);
    if (!instances.insert({instance.vnode, instance.replica}).second) {
      error = source + ": " + which + " appears twice";
      return false;
    }
    if (instance.replica < 0) {
      error = source + ": " + which + ": a replica index is at least 0";
      return false;
    }
    const std::pair<const char*, double> times[] = {{"compute_s", instance.computeSeconds},
                                                    {"read_wait_s", instance.readWaitSeconds},
                                                    {"write_wait_s", instance.writeWaitSeconds},
                                                    {"cpu_s", instance.cpuSeconds},
                                                    {"compute_cpu_s", instance.computeCpuSeconds.value_or(0)}};
    for (const auto& [field, seconds] : times)
      if (!(seconds >= 0) || !(seconds <= kLongestProfiledSeconds)) {
        error = source + ": " + which + ": " + field + " " + formatNumber(seconds) +
                " is not a time a run takes (0 to " + formatNumber(kLongestProfiledSeconds) + " s)";
        return false;
      }
    // The body's time (computing and waiting in its ports) lies within the run, whose wall time the profile
    // records (rank 0's clock: a little slack for the ranks' start and end not being rank 0's).
    const double inBody = instance.computeSeconds + instance.readWaitSeconds + instance.writeWaitSeconds;
    if (profile.wallSeconds && inBody > *profile.wallSeconds * 1.05 + 0.1) {
      error = source + ": " + which + ": " + formatNumber(inBody) +
              " s in its body (compute_s + read_wait_s + write_wait_s) is longer than the run, whose wall_s is " +
              formatNumber(*profile.wallSeconds) + " s";
      return false;
    }
    if (const auto replicas = replicasInRtg.find(instance.vnode);
        replicas != replicasInRtg.end() && instance.replica >= replicas->second) {
      error = source + ": " + which + ": vnode '" + instance.vnode + "' has " + std::to_string(replicas->second) +
              " replica(s) in the RTG of program '" + rtg->program + "'";
      return false;
    }
  }
  std::set<std::string> rtgPipes, pipes;
  if (rtg != nullptr)
    for (const lang::RtgEdge& e : rtg->edges) rtgPipes.insert(e.pipe);
  for (const lang::ProfiledPipe& pipe : profile.pipes) {
    if (!pipes.insert(pipe.pipe).second) {
      error = source + ": pipe '" + escapedForDisplay(pipe.pipe) + "' appears twice";
      return false;
    }
    if (rtg != nullptr && rtgPipes.count(pipe.pipe) == 0) {
      error = source + ": pipe '" + escapedForDisplay(pipe.pipe) + "' is not in the RTG of program '" +
              escapedForDisplay(rtg->program) + "'";
      return false;
    }
  }
  return true;
}

}  // namespace

bool samplesFromProfile(const lang::RunProfile& profile, const std::string& source, const Cluster& cluster,
                        const lang::Rtg* rtg, ProfileRunRecord& out, std::vector<std::string>& notes,
                        std::string& error) {
  if (!profile.complete) {
    error = source + ": the profile of a failed run (" + profile.failure +
            "): its times are not the program's, so it is not used";
    return false;
  }
  if (profile.simulated) {
    error = source + ": the profile of a simulated run (streammap simulate): its times are the simulated cluster's, "
                     "not measurements of a machine's devices, so it is not used";
    return false;
  }
  if (profile.instances.empty()) {
    error = source + ": the profile has no instances";
    return false;
  }
  if (rtg != nullptr && rtg->program != profile.program) {
    error = source + ": the profile is of program '" + profile.program + "', the RTG of '" + rtg->program + "'";
    return false;
  }
  if (!validateProfile(profile, source, rtg, error)) return false;
  ProfileRunRecord run;
  run.program = profile.program;
  run.source = source;
  run.periodMessages = profile.periodMessages();
  // A run whose pipes carried no message has no time per message: recorded (its traffic), but its
  // times do not move the per-message costs (a whole run's time as one message's would, 1,500-fold).
  const bool noMessages =
      !profile.pipes.empty() && std::all_of(profile.pipes.begin(), profile.pipes.end(),
                                            [](const lang::ProfiledPipe& p) { return p.messages == 0; });
  if (noMessages)
    notes.push_back("the run's pipes carried no message: its times per message are not defined, so it records no "
                    "cost");
  std::map<std::string, int> replicasOf;
  for (const lang::ProfiledInstance& instance : profile.instances)
    replicasOf[instance.vnode] = std::max(replicasOf[instance.vnode], instance.replica + 1);
  std::set<std::string> noted;
  for (const lang::ProfiledPipe& pipe : profile.pipes)
    run.pipes.push_back(PipeSample{0, profile.program, pipe.pipe, pipe.messages, pipe.bytes});
  std::map<std::string, lang::CodeFeatures> runSizes;
  if (rtg != nullptr) {
    const CostHistory measured({}, run.pipes);  // the run's bytes per message, as the history reads them
    runSizes = messageSizes(*rtg, [&](std::size_t e) -> std::optional<double> {
      const std::optional<RobustEstimate> bytes = measured.bytesPerMessage(profile.program, rtg->edges[e].pipe);
      return bytes ? std::optional<double>(bytes->value) : std::nullopt;
    });
  }
  for (const lang::ProfiledInstance& instance : profile.instances) {
    CostSample sample;
    sample.program = profile.program;
    sample.vnode = instance.vnode;
    sample.fingerprint = instance.fingerprint;
    sample.replica = instance.replica;
    sample.replicas = replicasOf[instance.vnode];
    sample.deviceClass = deviceClassOf(instance);
    sample.deviceModel = instance.deviceModel.empty() ? sample.deviceClass : instance.deviceModel;
    sample.host = instance.host;
    // On a CPU its CPU time outside the ports: wall time would count the time the core went to other
    // ranks of an oversubscribed node. A GPU's work shows in wall time only.
    const double compute = sample.deviceClass == std::string("cpu") && instance.computeCpuSeconds
                               ? *instance.computeCpuSeconds
                               : instance.computeSeconds;
    sample.secondsPerMessage = compute / static_cast<double>(run.periodMessages);
    const std::optional<double> speed = deviceSpeed(instance, cluster);
    const std::optional<double> described = speed ? std::nullopt : describedGpuSpeed(instance);
    sample.speed = speed.value_or(described.value_or(1.0));
    if (!speed && noted.insert(instance.host + "/" + sample.deviceModel).second) {
      std::ostringstream note;
      note << "host '" << instance.host << "'"
           << (instance.device == "gpu" ? " and GPU model '" + instance.deviceModel + "' are" : " is")
           << " not in the resources: the " << sample.deviceClass << "'s speed is ";
      if (described)
        note << "estimated from the profile's description of it (" << instance.gpu->multiprocessors << " SMs, "
             << instance.gpu->clockKHz / 1000 << " MHz, compute capability "
             << lang::formatComputeCapability(instance.gpu->ccMajor, instance.gpu->ccMinor) << "): " << *described;
      else
        note << "taken as 1.0";
      notes.push_back(note.str());
    }
    if (rtg != nullptr) {
      const auto vertex = std::find_if(rtg->vertices.begin(), rtg->vertices.end(),
                                       [&](const lang::RtgVertex& v) { return v.vnode == instance.vnode; });
      if (vertex == rtg->vertices.end()) {
        error = source + ": vnode '" + escapedForDisplay(instance.vnode) + "' is not in the RTG of program '" +
                escapedForDisplay(rtg->program) + "'";
        return false;
      }
      if (vertex->fingerprint != instance.fingerprint) {
        if (noted.insert("fingerprint/" + instance.vnode).second)
          notes.push_back("vnode '" + instance.vnode + "': the RTG is of other code than the run (fingerprint " +
                          (vertex->fingerprint.empty() ? "none" : vertex->fingerprint) + " vs " +
                          (instance.fingerprint.empty() ? "none" : instance.fingerprint) +
                          "): its code features are not recorded");
      } else if (!vertex->features.empty()) {
        lang::CodeFeatures recorded = vertex->features;
        if (const auto sizes = runSizes.find(instance.vnode); sizes != runSizes.end())
          recorded.insert(sizes->second.begin(), sizes->second.end());
        nlohmann::ordered_json features = nlohmann::ordered_json::object();
        for (const auto& [name, value] : recorded) features[name] = value;
        sample.features = features.dump();
      }
    }
    if (!noMessages) run.samples.push_back(std::move(sample));
  }
  out = std::move(run);
  return true;
}

std::map<std::string, lang::CodeFeatures>
messageSizes(const lang::Rtg& rtg, const std::function<std::optional<double>(std::size_t edge)>& measuredBytes) {
  std::map<int, const std::string*> vnodeOf;
  for (const lang::RtgVertex& v : rtg.vertices) vnodeOf[v.id] = &v.vnode;
  struct Pipes {
    std::map<std::string, double> read, written;  // by pipe: the edges of a pipe's replicas count it once
    bool known = true;
  };
  std::map<std::string, Pipes> byVnode;
  for (std::size_t e = 0; e < rtg.edges.size(); ++e) {
    const lang::RtgEdge& edge = rtg.edges[e];
    const auto from = vnodeOf.find(edge.from), to = vnodeOf.find(edge.to);
    if (from == vnodeOf.end() || to == vnodeOf.end()) continue;  // not a valid RTG: checked where read
    Pipes& writer = byVnode[*from->second];
    Pipes& reader = byVnode[*to->second];
    const std::optional<double> bytes = measuredBytes(e);
    if (!bytes) {
      writer.known = reader.known = false;
      continue;
    }
    writer.written[edge.pipe] = *bytes;
    reader.read[edge.pipe] = *bytes;
  }
  std::map<std::string, lang::CodeFeatures> sizes;
  for (const auto& [vnode, pipes] : byVnode) {
    if (!pipes.known) continue;
    double in = 0, out = 0;
    for (const auto& [pipe, bytes] : pipes.read) in += bytes;
    for (const auto& [pipe, bytes] : pipes.written) out += bytes;
    sizes[vnode] = {{kMessageBytesIn, in}, {kMessageBytesOut, out}};
  }
  return sizes;
}

RobustEstimate robustEstimate(std::vector<double> values) {
  constexpr double kLeastRelativeSigma = 0.05;
  RobustEstimate estimate;
  estimate.count = static_cast<int>(values.size());
  // Only finite values have a median and deviations (inf - inf is NaN, which nothing is within).
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }), values.end());
  if (values.empty()) return estimate;
  const double center = median(values);
  std::vector<double> deviations;
  for (double v : values) deviations.push_back(std::fabs(v - center));
  const double sigma = 1.4826 * median(deviations);
  // Within 15% of the median a value is never an outlier: a few agreeing samples (the replicas of one
  // run) have a tiny MAD that would otherwise reject ordinary jitter.
  const double width = 3 * std::max(sigma, kLeastRelativeSigma * std::fabs(center));
  std::vector<double> kept;
  for (double v : values)
    if (std::fabs(v - center) <= width) kept.push_back(v);
  estimate.used = static_cast<int>(kept.size());
  estimate.value = median(kept);
  estimate.spread = estimate.value > 0 ? sigma / estimate.value : 0;
  return estimate;
}

CostHistory::CostHistory(const std::vector<CostSample>& samples, const std::vector<PipeSample>& pipes) {
  struct Pool {
    std::vector<double> work;
    std::set<std::int64_t> runs;
    std::set<std::string> models;
    std::string features = "{}";
  };
  std::map<Key, Pool> pools;
  for (const CostSample& s : samples) {
    // Whatever a row holds, no reader crashes on it or lets it move an estimate: a work that is not a
    // finite positive number (1e308 s times a speed) is named and left out.
    const double work = s.secondsPerMessage * s.speed * s.replicas;
    if (!(work > 0) || !std::isfinite(work) || !(s.secondsPerMessage <= kLongestProfiledSeconds)) {
      ignored_.push_back("run " + std::to_string(s.runId) + ": vnode '" + escapedForDisplay(s.vnode) + "' replica " +
                         std::to_string(s.replica) + ": work per message " + formatNumber(work) +
                         " is not a measurement (a positive time of at most a year); ignored");
      continue;
    }
    Pool& pool = pools[Key{s.program, s.vnode, s.fingerprint, s.deviceClass}];
    pool.work.push_back(work);
    pool.runs.insert(s.runId);
    pool.models.insert(s.deviceModel);
    if (s.features != "{}") pool.features = s.features;  // the latest run's that has them
  }
  for (auto& [key, pool] : pools) {
    index_[key] = entries_.size();
    entries_.push_back(Entry{key, robustEstimate(pool.work), static_cast<int>(pool.runs.size()),
                             std::vector<std::string>(pool.models.begin(), pool.models.end()),
                             parseFeatures(pool.features)});
  }
  std::map<std::pair<std::string, std::string>, std::vector<double>> perMessage;
  for (const PipeSample& p : pipes)
    if (p.messages > 0)
      perMessage[{p.program, p.pipe}].push_back(static_cast<double>(p.bytes) / static_cast<double>(p.messages));
  // (bytes and messages are 64-bit counts: their ratio is always finite.)
  for (auto& [key, values] : perMessage) pipeBytes_[key] = robustEstimate(values);
}

const CostHistory::Entry* CostHistory::find(const std::string& program, const std::string& vnode,
                                            const std::string& fingerprint, const std::string& deviceClass) const {
  const auto it = index_.find(Key{program, vnode, fingerprint, deviceClass});
  return it == index_.end() ? nullptr : &entries_[it->second];
}

std::vector<std::string> CostHistory::otherFingerprints(const std::string& program, const std::string& vnode,
                                                        const std::string& fingerprint) const {
  std::set<std::string> others;
  for (const Entry& e : entries_)
    if (e.key.program == program && e.key.vnode == vnode && e.key.fingerprint != fingerprint)
      others.insert(e.key.fingerprint);
  return {others.begin(), others.end()};
}

std::optional<RobustEstimate> CostHistory::bytesPerMessage(const std::string& program, const std::string& pipe) const {
  const auto it = pipeBytes_.find({program, pipe});
  if (it == pipeBytes_.end()) return std::nullopt;
  return it->second;
}

bool recordRunProfile(const lang::RunProfile& profile, const std::string& source, const Cluster& cluster,
                      const lang::Rtg* rtg, ResourceDb& db, ProfileRunRecord& run, std::int64_t& runId,
                      std::vector<std::string>& notes, std::string& error) {
  return samplesFromProfile(profile, source, cluster, rtg, run, notes, error) && db.recordProfileRun(run, runId, error);
}

}  // namespace dispar::streammap
