// `streammap profile add FILE`, `streammap profile show [PROGRAM]` and `streammap profile remove`: the
// performance history in the resource database (docs/streammap.md, "Measured costs").
#include "streammap/AtomicFiles.h"
#include "streammap/ClusterJson.h"
#include "streammap/CommandLine.h"
#include "streammap/Commands.h"
#include "streammap/CostHistory.h"
#include "streammap/CostPredictor.h"
#include "streammap/InputFiles.h"
#include "streammap/MeasuredCosts.h"
#include "streammap/ResourceDb.h"

#include "dispar_lang/RunProfile.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <set>

namespace dispar::streammap {

namespace {

const CommandSpec kProfileSpec = {
    "streammap profile add PROFILE.json [--rtg APP.rtg.json] [--db PATH] [--cluster FILE.json]\n"
    "       streammap profile show [PROGRAM | ./APP] [--db PATH]\n"
    "       streammap profile remove RUN | --program PROGRAM [--before DATE] [--db PATH]",
    "add: records a run profile (DISPAR_PROFILE=FILE, or streammap run --profile FILE) in the performance history\n"
    "of the resource database: per VNODE instance its time per message and the speed of the device it ran on,\n"
    "per pipe its bytes per message. The RTG beside the profiled binary (or --rtg) gives the VNODEs' code\n"
    "features. show: the costs the mapper takes from the history, per VNODE code and device class, and the\n"
    "runs recorded; for ./APP (APP.rtg.json beside it) first each VNODE's cost now and where it comes from:\n"
    "measured (the history), its cost clause, predicted, or the default 1. remove: deletes run RUN (its number,\n"
    "as add and show print it), or PROGRAM's runs (recorded before DATE, YYYY-MM-DD[THH:MM[:SS]] in UTC), with\n"
    "their samples, in one transaction.",
    {{"--db", "PATH", "resource database: SQLite file or postgresql:// connection string"},
     {"--rtg", "FILE", "the program's RTG (default: the profiled binary's path + .rtg.json, when it exists)"},
     {"--cluster", "FILE.json", "add: the devices' speeds from a cluster description instead of the database"},
     {"--program", "PROGRAM", "remove: the program whose runs to delete"},
     {"--before", "DATE", "remove: only runs recorded before DATE (YYYY-MM-DD[THH:MM[:SS]], UTC)"}}};

/// DATE of --before: YYYY-MM-DD, optionally THH:MM or THH:MM:SS, in UTC; unix seconds.
std::optional<std::int64_t> parseUtcDate(const std::string& text) {
  std::tm tm{};
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  char tail = 0;
  const int fields =
      std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &year, &month, &day, &hour, &minute, &second, &tail);
  const bool shapeOk =
      (fields == 3 && text.size() == 10) || (fields == 5 && text.size() == 16) || (fields == 6 && text.size() == 19);
  if (!shapeOk || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
    return std::nullopt;
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const std::time_t t = ::timegm(&tm);
  if (tm.tm_mday != day) return std::nullopt;  // 2026-02-31 normalised into March
  return static_cast<std::int64_t>(t);
}

std::string utcText(std::int64_t seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  return text;
}

int removeRuns(const CommandLine& cl, const std::vector<std::string>& words) {
  ProfileRunSelection which;
  if (words.size() == 2) {
    if (cl.has("--program") || cl.has("--before"))
      return reportUsageError("profile remove: give RUN or --program PROGRAM [--before DATE], not both");
    long long run = 0;
    std::size_t used = 0;
    try {
      run = std::stoll(words[1], &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != words[1].size() || run < 1)
      return reportUsageError("profile remove: RUN must be a run number (1, 2, ... as 'profile show' lists), got '" +
                              escapedForDisplay(words[1]) + "'");
    which.run = run;
  } else {
    if (!cl.has("--program"))
      return reportUsageError("profile remove: expected RUN or --program PROGRAM [--before DATE]");
    which.program = cl.value("--program");
    if (cl.has("--before")) {
      which.before = parseUtcDate(cl.value("--before"));
      if (!which.before)
        return reportUsageError("option --before: expected a date YYYY-MM-DD[THH:MM[:SS]] (UTC), got '" +
                                escapedForDisplay(cl.value("--before")) + "'");
    }
  }
  std::string error;
  std::unique_ptr<ResourceDb> db = ResourceDb::open(cl.databasePath(), ResourceDb::OpenMode::Existing, error);
  if (!db) return reportError(error);
  std::vector<std::int64_t> removed;
  if (!db->removeProfileRuns(which, removed, error)) return reportError(error);
  if (which.run && removed.empty())
    return reportError("no run " + std::to_string(*which.run) + " in " + db->path() +
                       " ('profile show' lists the runs)");
  std::string numbers;
  for (const std::int64_t id : removed) numbers += (numbers.empty() ? "" : ", ") + std::to_string(id);
  if (which.run)
    std::printf("removed run %s from %s\n", numbers.c_str(), db->path().c_str());
  else
    std::printf("removed %zu run(s) of program '%s'%s from %s%s%s\n", removed.size(),
                escapedForDisplay(which.program).c_str(),
                which.before ? (" recorded before " + utcText(*which.before) + " UTC").c_str() : "", db->path().c_str(),
                removed.empty() ? "" : ": ", numbers.c_str());
  return 0;
}

int addProfile(const CommandLine& cl, const std::string& path) {
  std::string error;
  lang::RunProfile profile;
  if (!readRunProfile(path, profile, error)) return reportError(error);
  // The RTG gives the code features; without one the costs are recorded all the same.
  std::string rtgPath = cl.value("--rtg");
  if (rtgPath.empty() && !profile.binary.empty() && fileExists(profile.binary + ".rtg.json"))
    rtgPath = profile.binary + ".rtg.json";
  std::optional<lang::Rtg> rtg;
  std::vector<std::string> notes;
  if (!rtgPath.empty()) {
    lang::Rtg parsed;
    if (!readRtg(rtgPath, parsed, error)) return reportError(error);
    rtg = std::move(parsed);
  } else {
    notes.push_back("no RTG beside '" + (profile.binary.empty() ? std::string("the binary") : profile.binary) +
                    "' (give --rtg): code features not recorded");
  }
  const std::string database = cl.databasePath();
  std::unique_ptr<ResourceDb> db = ResourceDb::open(database, ResourceDb::OpenMode::CreateIfMissing, error);
  if (!db) return reportError(error);
  Cluster cluster;
  if (cl.has("--cluster")) {
    if (!readClusterJsonFile(cl.value("--cluster"), cluster, error)) return reportError(error);
  } else {
    std::vector<NodeRecord> records;
    if (!db->readRecords(records, error)) return reportError(error);
    for (NodeRecord& r : records) cluster.nodes.push_back(std::move(r.node));
  }
  ProfileRunRecord run;
  std::int64_t runId = 0;
  if (!recordRunProfile(profile, path, cluster, rtg ? &*rtg : nullptr, *db, run, runId, notes, error))
    return reportError(error);
  for (const std::string& note : notes) std::fprintf(stderr, "streammap profile: note: %s\n", note.c_str());
  std::printf("recorded run %lld of program '%s' in %s: %zu instance(s), %zu pipe(s), %llu message(s) per period\n",
              static_cast<long long>(runId), escapedForDisplay(run.program).c_str(), db->path().c_str(),
              run.samples.size(), run.pipes.size(), static_cast<unsigned long long>(run.periodMessages));
  return 0;
}

/// The cost each VNODE of `rtg` maps with now, and where it comes from (the history, its cost clause, the
/// predictor, or the default), as map resolves them from `history` (MeasuredCosts.h).
void showResolvedCosts(const lang::Rtg& rtg, const CostHistory& history) {
  const CostPredictor predictor(history);
  CostInputs inputs;
  inputs.history = &history;
  inputs.predictor = &predictor;
  const CostResolution costs = resolveCosts(rtg, inputs);
  std::printf("costs '%s' maps with now, per instance (seconds per message on a speed-1.0 device):\n",
              escapedForDisplay(rtg.program).c_str());
  std::printf("%-20s %-4s %8s  %s\n", "vnode", "type", "replicas", "cost (where it comes from)");
  for (std::size_t v = 0; v < rtg.vertices.size(); ++v) {
    const lang::RtgVertex& vertex = rtg.vertices[v];
    if (vertex.replica != 0) continue;  // its replicas map with the same
    std::printf("%-20s %-4s %8d  %s\n", escapedForDisplay(vertex.vnode).c_str(), lang::requirementName(vertex.type),
                vertex.replicas, describeCost(costs.vertices[v].primary(vertex.type)).c_str());
  }
  std::printf("\n");
}

int showHistory(const CommandLine& cl, const std::string& programOrPath) {
  std::string error;
  std::unique_ptr<ResourceDb> db = ResourceDb::open(cl.databasePath(), ResourceDb::OpenMode::Existing, error);
  if (!db) return reportError(error);
  // `show ./app` (app.rtg.json beside it): first the costs it maps with now; `show app`: its history only.
  std::string program = programOrPath;
  std::optional<lang::Rtg> rtg;
  if (!programOrPath.empty() && fileExists(programOrPath + ".rtg.json")) {
    lang::Rtg parsed;
    if (!readRtg(programOrPath + ".rtg.json", parsed, error)) return reportError(error);
    program = parsed.program;
    rtg = std::move(parsed);
  }
  std::vector<CostSample> samples;
  std::vector<PipeSample> pipes;
  // With an RTG every program's runs are read (predictions learn from them all), then this one's kept.
  if (!db->readHistory(rtg ? std::string() : program, samples, pipes, error)) return reportError(error);
  if (rtg) {
    showResolvedCosts(*rtg, CostHistory(samples, pipes));
    const auto other = [&](const auto& sample) { return sample.program != program; };
    samples.erase(std::remove_if(samples.begin(), samples.end(), other), samples.end());
    pipes.erase(std::remove_if(pipes.begin(), pipes.end(), other), pipes.end());
  }
  if (samples.empty()) {
    std::printf("no measured costs%s in %s (streammap run records the runs it launches; or 'streammap profile add')\n",
                program.empty() ? "" : (" of program '" + program + "'").c_str(), db->path().c_str());
    return 0;
  }
  const CostHistory history(samples, pipes);
  for (const std::string& row : history.ignored()) std::fprintf(stderr, "streammap profile: note: %s\n", row.c_str());
  std::printf("%-16s %-20s %-16s %-6s %5s %9s %14s %8s  %s\n", "program", "vnode", "fingerprint", "device", "runs",
              "samples", "cost/message", "spread", "measured on");
  // Names and models come from profile files: escaped, so that none forges a row (issue 36, item 4).
  for (const CostHistory::Entry& e : history.entries()) {
    std::string models;
    for (const std::string& m : e.models) models += (models.empty() ? "" : ", ") + m;
    const std::string used = std::to_string(e.work.used) + "/" + std::to_string(e.work.count);
    std::printf("%-16s %-20s %-16s %-6s %5d %9s %14.6g %7.1f%%  %s\n", escapedForDisplay(e.key.program).c_str(),
                escapedForDisplay(e.key.vnode).c_str(),
                e.key.fingerprint.empty() ? "-" : escapedForDisplay(e.key.fingerprint).c_str(),
                escapedForDisplay(e.key.deviceClass).c_str(), e.runs, used.c_str(), e.work.value, 100 * e.work.spread,
                escapedForDisplay(models).c_str());
  }
  std::set<std::pair<std::string, std::string>> seen;
  bool header = false;
  for (const PipeSample& p : pipes) {
    if (!seen.insert({p.program, p.pipe}).second) continue;
    const auto bytes = history.bytesPerMessage(p.program, p.pipe);
    if (!bytes) continue;
    if (!header) std::printf("\n%-16s %-20s %5s %16s\n", "program", "pipe", "runs", "bytes/message");
    header = true;
    std::printf("%-16s %-20s %5d %16.6g\n", escapedForDisplay(p.program).c_str(), escapedForDisplay(p.pipe).c_str(),
                bytes->count, bytes->value);
  }
  std::printf("\ncost/message: the VNODE's compute seconds per message on a speed-1.0 device, all replicas; "
              "robust median over the samples (spread: scaled MAD)\n");
  // The runs, by number: what `profile remove RUN` takes.
  std::printf("\n%5s  %-19s  %-16s %9s\n", "run", "recorded (UTC)", "program", "instances");
  for (std::size_t i = 0; i < samples.size();) {
    std::size_t j = i;
    while (j < samples.size() && samples[j].runId == samples[i].runId) ++j;
    std::printf("%5lld  %-19s  %-16s %9zu\n", static_cast<long long>(samples[i].runId),
                utcText(samples[i].recordedAt).c_str(), escapedForDisplay(samples[i].program).c_str(), j - i);
    i = j;
  }
  return 0;
}

}  // namespace

int profileCommand(const Args& args) {
  CommandLine cl;
  if (!cl.parse(kProfileSpec, args)) return kExitUsage;
  if (cl.helpRequested()) return 0;
  const auto& words = cl.positional();
  const bool removeOptions = cl.has("--program") || cl.has("--before");
  if (words.size() == 2 && words[0] == "add" && !removeOptions) return addProfile(cl, words[1]);
  if ((words.size() == 1 || words.size() == 2) && words[0] == "show" && !cl.has("--rtg") && !cl.has("--cluster") &&
      !removeOptions)
    return showHistory(cl, words.size() == 2 ? words[1] : "");
  if ((words.size() == 1 || words.size() == 2) && words[0] == "remove" && !cl.has("--rtg") && !cl.has("--cluster"))
    return removeRuns(cl, words);
  CommandLine::printHelp(kProfileSpec, stderr);
  if (!words.empty() && words[0] != "add" && words[0] != "show" && words[0] != "remove")
    return reportUsageError("profile: unknown subcommand '" + escapedForDisplay(words[0]) +
                            "'; expected 'add PROFILE.json', 'show [PROGRAM]' or 'remove RUN'");
  return reportUsageError("profile: expected 'add PROFILE.json', 'show [PROGRAM]' or 'remove RUN'");
}

}  // namespace dispar::streammap
