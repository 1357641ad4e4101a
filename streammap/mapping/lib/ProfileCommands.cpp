// `streammap profile add FILE` and `streammap profile show [PROGRAM]`: the performance history in the
// resource database (docs/streammap.md, "Measured costs").
#include "streammap/AtomicFiles.h"
#include "streammap/ClusterJson.h"
#include "streammap/CommandLine.h"
#include "streammap/Commands.h"
#include "streammap/CostHistory.h"
#include "streammap/InputFiles.h"
#include "streammap/ResourceDb.h"

#include "dispar_lang/RunProfile.h"

#include <cstdio>
#include <map>
#include <memory>
#include <set>

namespace dispar::streammap {

namespace {

const CommandSpec kProfileSpec = {
    "streammap profile add PROFILE.json [--rtg APP.rtg.json] [--db PATH] [--cluster FILE.json]\n"
    "       streammap profile show [PROGRAM] [--db PATH]",
    "add: records a run profile (DISPAR_PROFILE=FILE, or streammap run --profile FILE) in the performance history\n"
    "of the resource database: per VNODE instance its time per message and the speed of the device it ran on,\n"
    "per pipe its bytes per message. The RTG beside the profiled binary (or --rtg) gives the VNODEs' code\n"
    "features. show: the costs the mapper takes from the history, per VNODE code and device class.",
    {{"--db", "PATH", "resource database: SQLite file or postgresql:// connection string"},
     {"--rtg", "FILE", "the program's RTG (default: the profiled binary's path + .rtg.json, when it exists)"},
     {"--cluster", "FILE.json", "add: the devices' speeds from a cluster description instead of the database"}}};

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
  if (!samplesFromProfile(profile, path, cluster, rtg ? &*rtg : nullptr, run, notes, error)) return reportError(error);
  std::int64_t runId = 0;
  if (!db->recordProfileRun(run, runId, error)) return reportError(error);
  for (const std::string& note : notes) std::fprintf(stderr, "streammap profile: note: %s\n", note.c_str());
  std::printf("recorded run %lld of program '%s' in %s: %zu instance(s), %zu pipe(s), %llu message(s) per period\n",
              static_cast<long long>(runId), run.program.c_str(), db->path().c_str(), run.samples.size(),
              run.pipes.size(), static_cast<unsigned long long>(run.periodMessages));
  return 0;
}

int showHistory(const CommandLine& cl, const std::string& program) {
  std::string error;
  std::unique_ptr<ResourceDb> db = ResourceDb::open(cl.databasePath(), ResourceDb::OpenMode::Existing, error);
  if (!db) return reportError(error);
  std::vector<CostSample> samples;
  std::vector<PipeSample> pipes;
  if (!db->readHistory(program, samples, pipes, error)) return reportError(error);
  if (samples.empty()) {
    std::printf("no measured costs%s in %s (record runs with 'streammap profile add')\n",
                program.empty() ? "" : (" of program '" + program + "'").c_str(), db->path().c_str());
    return 0;
  }
  const CostHistory history(samples, pipes);
  for (const std::string& row : history.ignored()) std::fprintf(stderr, "streammap profile: note: %s\n", row.c_str());
  std::printf("%-16s %-20s %-16s %-6s %5s %9s %14s %8s  %s\n", "program", "vnode", "fingerprint", "device", "runs",
              "samples", "cost/message", "spread", "measured on");
  for (const CostHistory::Entry& e : history.entries()) {
    std::string models;
    for (const std::string& m : e.models) models += (models.empty() ? "" : ", ") + m;
    const std::string used = std::to_string(e.work.used) + "/" + std::to_string(e.work.count);
    std::printf("%-16s %-20s %-16s %-6s %5d %9s %14.6g %7.1f%%  %s\n", e.key.program.c_str(), e.key.vnode.c_str(),
                e.key.fingerprint.empty() ? "-" : e.key.fingerprint.c_str(), e.key.deviceClass.c_str(), e.runs,
                used.c_str(), e.work.value, 100 * e.work.spread, models.c_str());
  }
  std::set<std::pair<std::string, std::string>> seen;
  bool header = false;
  for (const PipeSample& p : pipes) {
    if (!seen.insert({p.program, p.pipe}).second) continue;
    const auto bytes = history.bytesPerMessage(p.program, p.pipe);
    if (!bytes) continue;
    if (!header) std::printf("\n%-16s %-20s %5s %16s\n", "program", "pipe", "runs", "bytes/message");
    header = true;
    std::printf("%-16s %-20s %5d %16.6g\n", p.program.c_str(), p.pipe.c_str(), bytes->count, bytes->value);
  }
  std::printf("\ncost/message: the VNODE's compute seconds per message on a speed-1.0 device, all replicas; "
              "robust median over the samples (spread: scaled MAD)\n");
  return 0;
}

}  // namespace

int profileCommand(const Args& args) {
  CommandLine cl;
  if (!cl.parse(kProfileSpec, args)) return kExitUsage;
  if (cl.helpRequested()) return 0;
  const auto& words = cl.positional();
  if (words.size() == 2 && words[0] == "add") return addProfile(cl, words[1]);
  if ((words.size() == 1 || words.size() == 2) && words[0] == "show" && !cl.has("--rtg") && !cl.has("--cluster"))
    return showHistory(cl, words.size() == 2 ? words[1] : "");
  CommandLine::printHelp(kProfileSpec, stderr);
  if (!words.empty() && words[0] != "add" && words[0] != "show")
    return reportUsageError("profile: unknown subcommand '" + words[0] +
                            "'; expected 'add PROFILE.json' or 'show [PROGRAM]'");
  return reportUsageError("profile: expected 'add PROFILE.json' or 'show [PROGRAM]'");
}

}  // namespace dispar::streammap
