// The map / check / run subcommands: option parsing, file handling and launching; the work is done by
// MapPlanner and MapCheck.
#include "dispar_lang/OutputTarget.h"
#include "dispar_lang/RankDeath.h"
#include "streammap/AtomicFiles.h"
#include "streammap/BatchScript.h"
#include "streammap/Cluster.h"
#include "streammap/ClusterDigest.h"
#include "streammap/CommandLine.h"
#include "streammap/Commands.h"
#include "streammap/CostHistory.h"
#include "streammap/CostPredictor.h"
#include "streammap/InputFiles.h"
#include "streammap/Launch.h"
#include "streammap/MapCheck.h"
#include "streammap/MapFile.h"
#include "streammap/MapPlanner.h"
#include "streammap/MeasuredCosts.h"
#include "streammap/NumberFormat.h"
#include "streammap/ResourceDb.h"
#include "streammap/Simulation.h"
#include "streammap/Slurm.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>

extern char** environ;

namespace dispar::streammap {

namespace {

int fail(const char* command, const std::string& message) {
  std::fprintf(stderr, "streammap %s: error: %s\n", command, message.c_str());
  return kExitFailure;
}

/// As fail, for a wrong command line (kExitUsage).
int usageFail(const char* command, const std::string& message) {
  fail(command, message);
  return kExitUsage;
}

// Option groups the commands share (docs/streammap.md lists them from the --help these tables print).
const std::vector<OptionSpec> kSourceOptions = {
    {"--db", "PATH", "resource database: SQLite file or postgresql:// connection string"},
    {"--cluster", "FILE.json", "a cluster description instead of the database"},
    {"--ttl", "SECONDS", "count daemon-kept nodes with an older heartbeat as down (default: each node's own)"},
};
const std::vector<OptionSpec> kMappingOptions = {
    {"--algorithm", "refine|paper|round-robin",
     "refine (default: cost-model local search), paper (the paper's steps) or round-robin (what mpiexec does with "
     "every node and its cores)"},
    {"--seed", "N", "seed of the paper's step 7 and of refine's random starts (default: deterministic)"},
    {"--passes", "N", "refine: improvement passes per start (default automatic)"},
    {"--allow-host-fallback", nullptr, "a CG vertex may run on a CPU (mode host-fallback, with a warning)"},
    {"--ranks", "N", "exactly N MPI ranks (from the nodes used to the instances; default: at most one per core)"},
    {"--rank-per-instance", nullptr, "one MPI rank per VNODE instance (no grouping)"},
    {"--history", "PATH|none",
     "performance history of measured costs (default: the resource database mapped from; "
     "none with --cluster)"},
};

const CommandSpec kMapSpec = {
    "streammap map APP.rtg.json [-o FILE] [--db PATH | --cluster FILE.json] [--ttl SECONDS]\n"
    "                     [--algorithm refine|paper|round-robin] [--seed N] [--allow-host-fallback] [--passes N]\n"
    "                     [--ranks N | --rank-per-instance] [--history PATH|none] [--profile FILE]\n"
    "                     [--format mpich|openmpi|slurm] [--dot FILE] [--explain]",
    "Places the RTG's vertices on the nodes, groups each node's instances into MPI ranks (no more ranks than\n"
    "cores, unless --ranks or --rank-per-instance says otherwise) and writes what the launcher needs: the\n"
    "placement file, and APP.map.json beside it. Inside a Slurm allocation only the allocation's nodes are used.",
    joinOptions({{{"-o", "FILE", "placement file (default: the RTG's stem + .machinefile, or .slurm-hostfile)"},
                  {"--format", "mpich|openmpi|slurm", "the launcher's files (default: the program's MPI's)"},
                  {"--dot", "FILE", "also draw the mapped RTG (Graphviz), vertices grouped by node and rank"},
                  {"--explain", nullptr,
                   "per vertex: the rule or cost term that decided, and the runner-up; "
                   "per rank of several instances: why they share it"},
                  {"--profile", "FILE",
                   "map with the costs a run measured (a run profile, DISPAR_PROFILE): they "
                   "come before the history's"}},
                 kSourceOptions,
                 kMappingOptions})};
const CommandSpec kCheckSpec = {
    "streammap check APP.map.json [--db PATH | --cluster FILE.json] [--ttl SECONDS]",
    "Checks a mapping against the current resources (those it was made from, unless --db or --cluster\n"
    "says otherwise) and the binary's CUDA architectures. Exit status 1 when it no longer fits.",
    kSourceOptions};
const CommandSpec kRunSpec = {
    "streammap run [--launcher mpich|fork|openmpi|slurm] [--db PATH | --cluster FILE.json] [--ttl SECONDS]\n"
    "                     [--algorithm refine|paper|round-robin] [--seed N] [--allow-host-fallback] [--passes N]\n"
    "                     [--ranks N | --rank-per-instance] [--history PATH|none] [--profile FILE] [--no-history]\n"
    "                     [--trace FILE] ./APP [ARGS...]",
    "Maps ./APP when needed (no mapping, older than the RTG, other resources, launcher, rank count or measured\n"
    "costs), checks the mapping, and launches the program with its arguments. The run is profiled and its\n"
    "profile added to the performance history (unless --no-history or --history none, or there is no\n"
    "database): the next run or map maps from its measured costs.",
    joinOptions(
        {{{"--launcher", "mpich|fork|openmpi|slurm", "default: slurm inside an allocation, else the program's MPI's"},
          {"--profile", "FILE",
           "the run writes its profile to FILE (DISPAR_PROFILE; rank 0 writes it); default: APP.profile.json "
           "where the run's profile goes into the performance history"},
          {"--no-history", nullptr, "the run's profile is not added to the performance history"},
          {"--trace", "FILE",
           "the run writes a timeline of every instance and message to FILE (DISPAR_TRACE; Trace Event Format, "
           "for Perfetto's UI or chrome://tracing)"}},
         kSourceOptions,
         kMappingOptions}),
    /*firstArgumentEndsOptions=*/true};
const CommandSpec kSbatchSpec = {
    "streammap sbatch APP.rtg.json [-o APP.sbatch] [--db PATH | --cluster FILE.json] [--ttl SECONDS]\n"
    "                        [--algorithm refine|paper|round-robin] [--seed N] [--allow-host-fallback] [--passes N]\n"
    "                        [--ranks N | --rank-per-instance] [--history PATH|none] [--time LIMIT] [--partition "
    "NAME]\n"
    "                        [--job-name NAME]",
    "Maps for a Slurm batch job (onto the whole cluster) and writes its script: whole nodes, every rank\n"
    "where the mapping puts it.",
    joinOptions({{{"-o", "FILE", "the script (default: the RTG's stem + .sbatch)"},
                  {"--time", "LIMIT", "Slurm time limit (MM, MM:SS, HH:MM:SS, D-HH[:MM[:SS]], UNLIMITED)"},
                  {"--partition", "NAME", "Slurm partition"},
                  {"--job-name", "NAME", "job name (default: the program's)"}},
                 kSourceOptions,
                 kMappingOptions})};

const CommandSpec kSimulateSpec = {
    "streammap simulate [--cluster FILE.json | --db PATH] [--mapping APP.map.json | --algorithm "
    "refine|paper|round-robin\n"
    "                          | --machinefile FILE -n N] [--gpu-speedup X] [--latency SECONDS] [--keep DIR]\n"
    "                          [mapping options] ./APP.smpi [ARGS...]",
    "Runs a program built with `disparcc --target smpi` on a simulated cluster (SimGrid SMPI): writes the cluster as\n"
    "a platform, maps the program one rank per instance (or takes --mapping, or a machinefile for programs not built\n"
    "by disparcc), runs smpirun with the program's arguments, passes its output through and prints the simulated\n"
    "makespan and each node's busy core-seconds. Exit status 1 when the simulated program fails (docs/simulation.md).",
    joinOptions(
        {{{"--mapping", "FILE", "simulate this mapping (one rank per instance) instead of mapping anew"},
          {"--machinefile", "FILE",
           "a program not built by disparcc: its ranks placed as mpiexec places them "
           "from this MPICH machinefile"},
          {"-n", "N", "with --machinefile: the number of ranks"},
          {"--gpu-speedup", "X",
           "how many times faster the reference GPU (an A100) runs a kernel than its host "
           "clone on one core of this machine (default 100)"},
          {"--latency", "SECONDS", "every node link's latency (default: each node's network.latency_s, else 1.5e-6)"},
          {"--keep", "DIR", "write the platform, hostfile and SimGrid log into DIR and keep them"}},
         kSourceOptions,
         kMappingOptions}),
    /*firstArgumentEndsOptions=*/true};

/// Where the resources come from: --db, --cluster (exclusive), --ttl. `given` says whether either was.
/// Prints its own errors.
bool readSource(const CommandLine& cl, ClusterSource& out, bool& given) {
  given = cl.has("--db") || cl.has("--cluster");
  if (cl.has("--db") && cl.has("--cluster")) return reportError("--db and --cluster are mutually exclusive") == 0;
  const std::optional<int> ttl = cl.intValue("--ttl", 0, 0, 30 * 86400);
  if (!ttl) return false;
  out.kind = cl.has("--cluster") ? ClusterSource::Kind::File : ClusterSource::Kind::Database;
  out.path = cl.has("--cluster") ? cl.value("--cluster") : cl.databasePath();
  out.ttlSeconds = *ttl;
  return true;
}

/// The mapping options (algorithm, seed, passes, host fallback); prints its own errors.
bool readMapSettings(const CommandLine& cl, MapSettings& settings) {
  const std::string algorithm = cl.value("--algorithm", "refine");
  if (algorithm == "paper")
    settings.algorithm = Algorithm::Paper;
  else if (algorithm == "refine")
    settings.algorithm = Algorithm::Refine;
  else if (algorithm == "round-robin")
    settings.algorithm = Algorithm::RoundRobin;
  else
    return reportError("option --algorithm: expected 'refine', 'paper' or 'round-robin', got '" + algorithm + "'") == 0;
  const std::optional<long long> seed = cl.integerValue("--seed", 0, 0, std::numeric_limits<long long>::max());
  const std::optional<int> passes = cl.intValue("--passes", 1, 1, 1000000);
  // The upper bound of --ranks depends on the mapping (its nodes and instances): planMapping checks it.
  const std::optional<int> ranks = cl.intValue("--ranks", 1, 1, std::numeric_limits<int>::max());
  if (!seed || !passes || !ranks) return false;
  if (cl.has("--seed")) settings.seed = static_cast<std::uint64_t>(*seed);
  if (cl.has("--passes")) settings.maxPasses = *passes;
  settings.allowHostFallback = cl.has("--allow-host-fallback");
  if (cl.has("--ranks") && cl.has("--rank-per-instance"))
    return reportError("--ranks and --rank-per-instance are mutually exclusive") == 0;
  if (cl.has("--ranks")) settings.ranks = RankPolicy{RankPolicy::Kind::Exact, *ranks};
  if (cl.has("--rank-per-instance")) settings.ranks.kind = RankPolicy::Kind::PerInstance;
  return true;
}

/// --history (shared by map, run and sbatch).
void readHistoryOption(const CommandLine& cl, std::optional<std::string>& out) {
  if (cl.has("--history")) out = cl.value("--history");
}

/// The one argument a command takes (an rtg or map file): an error naming the command otherwise.
bool oneArgument(const char* command, const CommandSpec& spec, const CommandLine& cl, const char* what,
                 std::string& out) {
  if (cl.positional().size() == 1) {
    out = cl.positional()[0];
    return true;
  }
  std::fprintf(stderr, "usage: %s\n", spec.usage);
  fail(command, cl.positional().empty()
                    ? std::string("no ") + what + " given"
                    : "unexpected argument '" + cl.positional()[1] + "' (one " + what + " expected)");
  return false;
}

// The launchers a mapping is written for (`map --format`, `run --launcher`): the name recorded in
// app.map.json and the suffix of the file that places the ranks.
enum class Launcher { Mpich, OpenMpi, Slurm };
struct LauncherInfo {
  Launcher launcher;
  const char* name;
  const char* placementSuffix;
};
constexpr LauncherInfo kLaunchers[] = {
    {Launcher::Mpich, "mpich", ".machinefile"},
    {Launcher::OpenMpi, "openmpi", ".machinefile"},
    {Launcher::Slurm, "slurm", ".slurm-hostfile"},
};
const LauncherInfo& info(Launcher l) {
  for (const LauncherInfo& i : kLaunchers)
    if (i.launcher == l) return i;
  return kLaunchers[0];
}
bool parseLauncher(const std::string& word, Launcher& out) {
  for (const LauncherInfo& i : kLaunchers)
    if (word == i.name) {
      out = i.launcher;
      return true;
    }
  return false;
}

/// Inside a Slurm allocation only its nodes, CPUs and GPUs may be used: restricts `cluster` to them and
/// says so on stderr. Outside one (SLURM_JOB_ID unset) leaves `cluster` as it is.
bool restrictToSlurmAllocation(const char* command, Cluster& cluster, std::string& error) {
  std::optional<slurm::Allocation> allocation;
  if (!slurm::currentAllocation(allocation, error)) return false;
  if (!allocation) return true;
  std::vector<std::string> notes;
  slurm::restrictToAllocation(cluster, *allocation, notes);
  std::fprintf(stderr, "streammap %s: inside Slurm job %s: mapping onto its %zu node%s only\n", command,
               allocation->jobId.c_str(), allocation->nodes.size(), allocation->nodes.size() == 1 ? "" : "s");
  for (const std::string& n : notes) std::fprintf(stderr, "  %s\n", n.c_str());
  for (const std::string& n : allocation->notes) std::fprintf(stderr, "  %s\n", n.c_str());
  return true;
}

/// The resource database a command reads both its cluster and its performance history from, opened on
/// first use and then kept: one connection to a PostgreSQL server, not one per read.
class OpenedDatabase {
 public:
  ResourceDb* open(const std::string& path, std::string& error) {
    if (db_ == nullptr || path != path_) {
      db_ = ResourceDb::open(path, ResourceDb::OpenMode::Existing, error);
      path_ = path;
    }
    return db_.get();
  }
  /// Before a job or a simulation, which may run for hours: no idle connection held meanwhile.
  void close() { db_.reset(); }

 private:
  std::string path_;
  std::unique_ptr<ResourceDb> db_;
};

/// The resources to map onto: `source` (a database through `database`), restricted to the Slurm
/// allocation this runs in, if any (`restrict`). Inside an allocation with no resource database at the
/// default place (`sourceGiven` false), the allocation alone describes the nodes, as Slurm does: a user
/// with an allocation and no database can still run.
bool loadResources(const char* command, const ClusterSource& source, bool sourceGiven, bool restrict,
                   OpenedDatabase& database, Cluster& out, std::string& error) {
  const char* jobId = std::getenv("SLURM_JOB_ID");
  const bool inAllocation = restrict && jobId && *jobId;
  bool loaded = false;
  if (source.kind == ClusterSource::Kind::Database) {
    ResourceDb* db = database.open(source.path, error);
    loaded = db != nullptr && loadClusterFromDatabase(*db, source.ttlSeconds, out, error);
  } else {
    loaded = loadClusterSource(source, out, error);
  }
  if (!loaded) {
    struct stat st{};
    const bool noDefaultDatabase = !sourceGiven && source.kind == ClusterSource::Kind::Database &&
                                   !isDatabaseUrl(source.path) && ::stat(source.path.c_str(), &st) != 0;
    if (!inAllocation || !noDefaultDatabase) return false;
    std::fprintf(stderr, "streammap %s: no resource database at %s: the allocation's nodes as Slurm describes them\n",
                 command, source.path.c_str());
    out = Cluster{};
  }
  return !restrict || restrictToSlurmAllocation(command, out, error);
}

struct MapInvocation {
  std::string rtgPath;
  std::string output;
  std::string dotPath;
  ClusterSource source;
  MapSettings settings;
  std::optional<Launcher> format;  // unset: the program's MPI's
  bool explain = false;
  bool printTable = true;
  bool wholeCluster = false;               // sbatch: map for a job yet to be submitted, not the one this runs in
  bool sourceGiven = false;                // --db or --cluster was given (else the default database)
  std::string profilePath;                 // map --profile: the run whose costs come first
  std::optional<std::string> historyPath;  // --history: a database, or "none"; unset: the source's database
  /// The database of `source` or `historyPath`, shared by the reads of the cluster and of the history.
  std::shared_ptr<OpenedDatabase> database = std::make_shared<OpenedDatabase>();
  /// Further files to write in the same atomic set as the mapping (sbatch's script).
  std::function<void(const MapRecord&, const MappingOutcome&, AtomicFileSet&)> extraFiles;
};

// "dir/app.rtg.json" -> "dir/app".
std::string programStem(const std::string& rtgPath) {
  const std::string suffix = ".rtg.json";
  if (rtgPath.size() > suffix.size() && rtgPath.compare(rtgPath.size() - suffix.size(), suffix.size(), suffix) == 0)
    return rtgPath.substr(0, rtgPath.size() - suffix.size());
  return siblingPath(rtgPath, "");
}

std::string launchProgram(const std::string& stem) { return stem.find('/') == std::string::npos ? "./" + stem : stem; }

/// Open MPI's launcher, as `streammap run` starts it: $DISPAR_MPIRUN, else the mpirun.openmpi CMake found
/// (plain `mpirun` is MPICH's where both MPIs are installed, as on Debian).
std::string openMpiLauncher() {
  const char* mpirun = std::getenv("DISPAR_MPIRUN");
  return mpirun && *mpirun ? mpirun : DISPAR_OPENMPI_MPIRUN_PATH;
}

/// `launcher` as a user types it: its bare name when that name on $PATH is this very file.
std::string launcherWord(const std::string& launcher) {
  const std::filesystem::path path(launcher);
  const char* searchPath = std::getenv("PATH");
  if (!path.is_absolute() || searchPath == nullptr) return launcher;
  std::istringstream directories(searchPath);
  for (std::string directory; std::getline(directories, directory, ':');) {
    std::error_code error;
    const std::filesystem::path candidate = std::filesystem::path(directory) / path.filename();
    if (::access(candidate.c_str(), X_OK) != 0) continue;
    return std::filesystem::equivalent(candidate, path, error) ? path.filename().string() : launcher;
  }
  return launcher;
}

/// The measured and predicted costs a mapping uses (MeasuredCosts.h), and what they were read from.
struct CostData {
  CostHistory history, profile;
  std::unique_ptr<CostPredictor> predictor;
  CostInputs inputs;
  std::vector<std::string> notes;
};

/// The database of `m`'s performance history: the one --history names, else the database the resources
/// come from when it exists (not a Slurm allocation mapped without one); "" for none (--history none, a
/// cluster file).
std::string historyDatabase(const MapInvocation& m) {
  if (m.historyPath) return *m.historyPath == "none" ? std::string() : *m.historyPath;
  if (m.source.kind == ClusterSource::Kind::Database && (isDatabaseUrl(m.source.path) || fileExists(m.source.path)))
    return m.source.path;
  return {};
}

/// Reads `m`'s performance history (historyDatabase) and profile.
bool loadCosts(const MapInvocation& m, const lang::Rtg& rtg, const Cluster& cluster, CostData& data,
               std::string& error) {
  const std::string historyPath = historyDatabase(m);
  if (!historyPath.empty()) {
    ResourceDb* db = m.database->open(historyPath, error);
    std::vector<CostSample> samples;
    std::vector<PipeSample> pipes;
    if (!db || !db->readHistory("", samples, pipes, error)) return false;
    data.history = CostHistory(samples, pipes);
    for (const std::string& row : data.history.ignored()) data.notes.push_back("history: " + row);
    data.inputs.history = &data.history;
    data.predictor = std::make_unique<CostPredictor>(data.history);
    data.inputs.predictor = data.predictor.get();
  }
  if (!m.profilePath.empty()) {
    lang::RunProfile profile;
    if (!readRunProfile(m.profilePath, profile, error)) return false;
    ProfileRunRecord run;
    if (!samplesFromProfile(profile, m.profilePath, cluster, &rtg, run, data.notes, error)) return false;
    data.profile = CostHistory(run.samples, run.pipes);
    data.inputs.profile = &data.profile;
  }
  return true;
}

/// "4 profile, 1 clause": instances by where their cost came from.
std::string costSummary(const CostResolution& costs) {
  std::map<CostOrigin, int> count;
  for (std::size_t v = 0; v < costs.vertices.size(); ++v)
    ++count[costs.vertices[v].primary(costs.costed.vertices[v].type).origin];
  std::string text;
  for (const auto& [origin, n] : count)
    text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + costOriginName(origin);
  return text;
}

/// Maps `rtg` onto `cluster` and writes the files; `made`, when given, receives the record written.
/// `loaded`, when given, holds `m`'s costs already read (run compared them with the mapping's).
/// `rtg` by value: `map` moves in its 100,000 vertices rather than copy them.
int writeMapping(const MapInvocation& m, lang::Rtg rtg, const Cluster& cluster, MapRecord* made = nullptr,
                 const CostData* loaded = nullptr) {
  std::string error;
  // Without --format: the files of the MPI the program was built for.
  const Launcher format = m.format ? *m.format : rtg.mpi == "openmpi" ? Launcher::OpenMpi : Launcher::Mpich;
  // The files of another MPI's launcher: `run` refuses to start the program with them, so map says so.
  const std::string builtFor = rtg.mpi.empty() ? "mpich" : rtg.mpi;
  // A simulated program's mapping is for `streammap simulate --mapping`, which reads no launcher file.
  const bool simulated = builtFor == "smpi";
  if (format != Launcher::Slurm && info(format).name != builtFor && !simulated)
    std::fprintf(stderr,
                 "streammap map: warning: %s was built for %s (its rtg says so) but --format %s writes %s's launcher "
                 "files; rebuild with disparcc --mpi=%s, or map with --format %s\n",
                 programStem(m.rtgPath).c_str(), builtFor.c_str(), info(format).name, info(format).name,
                 info(format).name, builtFor.c_str());
  CostData read;
  if (loaded == nullptr && !loadCosts(m, rtg, cluster, read, error)) return fail("map", error);
  const CostData& costData = loaded ? *loaded : read;
  const CostResolution costs = resolveCosts(std::move(rtg), costData.inputs);
  MapSettings settings = m.settings;
  settings.costs = &costs;
  MappingOutcome outcome;
  if (!planMapping(costs.costed, cluster, settings, outcome, error)) return fail("map", error);

  const std::string output = m.output.empty() ? programStem(m.rtgPath) + info(format).placementSuffix : m.output;
  const std::string mapPath = siblingPath(output, ".map.json");
  MapRecord record = makeMapRecord(costs.costed, cluster, outcome, settings);
  record.costsDigest = costsDigest(costs);
  record.rtgPath = m.rtgPath;
  record.machinefile = output;
  record.launcher = info(format).name;
  record.source = m.source;

  // The launcher files have one entry per MPI rank.
  std::vector<std::string> hostOfRank;
  std::vector<int> coresOfRank, boundCoresOfRank;
  for (int r = 0; r < outcome.ranks.rankCount(); ++r) {
    const ProblemNode& node = outcome.problem.nodes[outcome.ranks.nodeOf[r]];
    // Whatever the source (a cluster file, Slurm's environment), no name may rewrite a launcher file.
    if (std::string why; !checkHostName(node.host, why)) return fail("map", why + "; nothing written");
    hostOfRank.push_back(node.host);
    coresOfRank.push_back(node.cores);
    boundCoresOfRank.push_back(outcome.ranks.cores[r]);
  }
  AtomicFileSet files;
  const std::string rankfile = siblingPath(output, ".rankfile");
  switch (format) {
    case Launcher::OpenMpi:
      files.add(output, formatOpenMpiHostfile(hostOfRank));
      files.add(rankfile, formatOpenMpiRankfile(hostOfRank, coresOfRank, boundCoresOfRank));
      break;
    case Launcher::Slurm: files.add(output, formatSlurmHostfile(hostOfRank)); break;
    case Launcher::Mpich: files.add(output, formatMpichMachinefile(hostOfRank)); break;
  }
  files.add(mapPath, writeMapJson(record));
  if (!m.dotPath.empty()) files.add(m.dotPath, formatDot(costs.costed, outcome));
  if (m.extraFiles) m.extraFiles(record, outcome, files);
  if (!files.commit(error)) return fail("map", error);
  if (made != nullptr) *made = record;

  for (const std::string& w : costData.notes) std::fprintf(stderr, "streammap map: note: %s\n", w.c_str());
  for (const std::string& w : costs.notes) std::fprintf(stderr, "streammap map: %s\n", w.c_str());
  for (const std::string& w : outcome.warnings) std::fprintf(stderr, "streammap map: %s\n", w.c_str());
  if (!m.printTable) return 0;
  // One row per instance; a rank's number heads its first instance's row, its other instances follow.
  std::printf("%-6s %-20s %-7s %-4s %-20s %s\n", "rank", "vnode", "replica", "type", "host", "device");
  for (std::size_t i = 0; i < record.ranks.size(); ++i) {
    const RankRecord& k = record.ranks[i];
    const std::string device = k.device                    ? "gpu " + std::to_string(*k.device)
                               : k.mode == "host-fallback" ? "host-fallback"
                                                           : "-";
    const bool first = i == 0 || record.ranks[i - 1].rank != k.rank;
    std::printf("%-6s %-20s %-7d %-4s %-20s %s\n", first ? std::to_string(k.rank).c_str() : "", k.vnode.c_str(),
                k.replica, k.type.c_str(), k.host.c_str(), device.c_str());
  }
  const int rankCount = lang::rankCountOf(record.ranks);
  if (rankCount < static_cast<int>(record.ranks.size())) {
    int shared = 0;
    for (const std::vector<int>& members : outcome.ranks.members) shared += members.size() > 1;
    std::printf("%d ranks run %zu instances (%d of them run several; cores per rank: --explain)\n", rankCount,
                record.ranks.size(), shared);
  }
  if (m.explain) {
    std::printf("\nexplain (%s):\n", algorithmName(m.settings.algorithm));
    for (const std::string& line : explainMapping(costs.costed, outcome, settings)) std::printf("  %s\n", line.c_str());
  }
  std::printf("\nalgorithm: %s\ncost model: %s\ncosts: %s\npredicted period: %.6g (bytes crossing nodes: %.0f)\n",
              algorithmName(m.settings.algorithm), kCostModelSummary, costSummary(costs).c_str(), record.period,
              record.crossBytes);
  const std::vector<std::string> written = files.paths();
  std::string wrote;
  for (std::size_t i = 0; i < written.size(); ++i)
    wrote += (i == 0 ? "" : i + 1 == written.size() ? " and " : ", ") + written[i];
  std::printf("wrote %s\n", wrote.c_str());
  // The line to copy: its words shell-quoted; and when the mapping file is not the one the program finds
  // by itself (its own path + .map.json: `-o` named another), DISPAR_MAPPING names it (docs/runtime.md).
  const std::string stem = programStem(m.rtgPath);
  const std::string program = shellQuoted(launchProgram(stem));
  const std::string ranks = std::to_string(lang::rankCountOf(record.ranks));
  const bool ownMapping =
      std::filesystem::path(mapPath).lexically_normal() == std::filesystem::path(stem + ".map.json").lexically_normal();
  const std::string mapping = ownMapping ? "" : "DISPAR_MAPPING=" + shellQuoted(mapPath) + " ";
  std::string line;
  switch (format) {
    case Launcher::OpenMpi:
      // Open MPI passes a variable to the ranks only when told (-x).
      line = mapping + shellQuoted(launcherWord(openMpiLauncher())) + " --hostfile " + shellQuoted(output) +
             " --rankfile " + shellQuoted(rankfile) + (ownMapping ? "" : " -x DISPAR_MAPPING") + " -n " + ranks + " " +
             program;
      break;
    case Launcher::Slurm:
      line =
          mapping + "SLURM_HOSTFILE=" + shellQuoted(output) + " " + joinedWords(srunArguments(record)) + " " + program;
      break;
    case Launcher::Mpich: line = mapping + "mpiexec -f " + shellQuoted(output) + " -n " + ranks + " " + program; break;
  }
  if (simulated) {
    const std::string source = m.source.kind == ClusterSource::Kind::File ? "--cluster " + shellQuoted(m.source.path)
                               : m.sourceGiven                            ? "--db " + shellQuoted(m.source.path)
                                                                          : "";
    line = "streammap simulate " + source + (source.empty() ? "" : " ") + "--mapping " + shellQuoted(mapPath) + " " +
           program;
    std::printf("simulate: %s\n", escapedForDisplay(line).c_str());
    return 0;
  }
  std::printf("run: %s\n", escapedForDisplay(line).c_str());
  return 0;
}

/// `streammap map` and `sbatch`: the RTG and the resources of `m`, mapped and written.
int executeMap(const MapInvocation& m) {
  std::string error;
  lang::Rtg rtg;
  if (!readRtg(m.rtgPath, rtg, error)) return fail("map", error);
  Cluster cluster;
  if (!loadResources("map", m.source, m.sourceGiven, !m.wholeCluster, *m.database, cluster, error))
    return fail("map", error);
  return writeMapping(m, std::move(rtg), cluster);
}

struct FileTimes {
  bool exists = false;
  struct timespec modified{};
};

FileTimes statFile(const std::string& path) {
  struct stat st{};
  FileTimes t;
  if (::stat(path.c_str(), &st) == 0) {
    t.exists = true;
    t.modified = st.st_mtim;
  }
  return t;
}

bool olderThan(const FileTimes& a, const FileTimes& b) {
  return a.modified.tv_sec < b.modified.tv_sec ||
         (a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec < b.modified.tv_nsec);
}

/// Why a mapping's ranks are not what `policy` asks for (empty when they are): `run --ranks N` or
/// `--rank-per-instance` remaps a mapping made otherwise. The default policy accepts any layout.
std::string rankPolicyMismatch(const MapRecord& record, const RankPolicy& policy) {
  const int ranks = lang::rankCountOf(record.ranks);
  if (policy.kind == RankPolicy::Kind::Exact && ranks != policy.count)
    return "mapping has " + std::to_string(ranks) + " ranks, --ranks asks " + std::to_string(policy.count);
  if (policy.kind == RankPolicy::Kind::PerInstance && ranks != static_cast<int>(record.ranks.size()))
    return "mapping runs " + std::to_string(record.ranks.size()) + " instances in " + std::to_string(ranks) +
           " ranks, --rank-per-instance asks one rank each";
  return {};
}

void printReport(const char* path, const CheckReport& report) {
  for (const std::string& c : report.changes) std::printf("changed: %s\n", c.c_str());
  for (const std::string& p : report.problems) std::printf("problem: %s\n", p.c_str());
  for (const std::string& n : report.notes) std::printf("note: %s\n", n.c_str());
  if (report.ok())
    std::printf("%s: ok: resources unchanged since mapping and every rank can run where it is mapped\n", path);
  else
    std::printf("%s: not ok: %zu change(s), %zu problem(s)%s\n", path, report.changes.size(), report.problems.size(),
                report.changes.empty() ? "" : "; remap with 'streammap map'");
}

}  // namespace

int mapCommand(const Args& args) {
  CommandLine cl;
  if (!cl.parse(kMapSpec, args)) return kExitUsage;
  if (cl.helpRequested()) return 0;
  MapInvocation m;
  if (!oneArgument("map", kMapSpec, cl, "rtg file", m.rtgPath)) return kExitUsage;
  if (!readMapSettings(cl, m.settings)) return kExitUsage;
  m.output = cl.value("-o");
  m.dotPath = cl.value("--dot");
  m.explain = cl.has("--explain");
  m.profilePath = cl.value("--profile");
  readHistoryOption(cl, m.historyPath);
  if (cl.has("--format")) {
    Launcher format = Launcher::Mpich;
    if (!parseLauncher(cl.value("--format"), format))
      return usageFail("map",
                       "option --format: expected 'mpich', 'openmpi' or 'slurm', got '" + cl.value("--format") + "'");
    m.format = format;
  }
  std::string error;
  bool given = false;
  if (!readSource(cl, m.source, given)) return kExitUsage;
  m.sourceGiven = given;
  return executeMap(m);
}

int checkCommand(const Args& args) {
  CommandLine cl;
  if (!cl.parse(kCheckSpec, args)) return kExitUsage;
  if (cl.helpRequested()) return 0;
  std::string mapPath, error;
  if (!oneArgument("check", kCheckSpec, cl, "map file", mapPath)) return kExitUsage;
  ClusterSource requested;
  bool given = false;
  if (!readSource(cl, requested, given)) return kExitUsage;
  std::string text;
  MapRecord record;
  if (!readFile(mapPath, text, error)) return fail("check", error);
  if (!parseMapJson(text, record, error)) return fail("check", mapPath + ": " + error);
  const ClusterSource where = given ? requested : record.source;
  Cluster current;
  if (!loadClusterSource(where, current, error)) return fail("check", error);
  if (!restrictToSlurmAllocation("check", current, error)) return fail("check", error);
  const CheckReport report = checkMapping(record, current);
  printReport(mapPath.c_str(), report);
  return report.ok() ? 0 : 1;
}

namespace {

/// The environment streammap runs with, as NAME=VALUE strings for a launcher.
std::vector<std::string> ownEnvironment() {
  std::vector<std::string> environment;
  for (char** e = environ; *e; ++e) environment.push_back(*e);
  return environment;
}

/// Sets NAME to VALUE in `environment`, replacing every earlier NAME= (getenv takes the first, so an
/// appended copy would lose to the one streammap inherited).
void setVariable(std::vector<std::string>& environment, const std::string& name, const std::string& value) {
  const std::string prefix = name + "=";
  environment.erase(std::remove_if(environment.begin(), environment.end(),
                                   [&](const std::string& e) { return e.rfind(prefix, 0) == 0; }),
                    environment.end());
  environment.push_back(prefix + value);
}

/// The value of NAME in streammap's own environment, or "" when unset.
std::string variableOrEmpty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

/// How `streammap run` reaches a node the way the launcher does, to ask whether it still answers: the
/// launcher's remote shell (Open MPI's plm_rsh_agent, hydra's launcher-exec, else ssh, with a short
/// connection timeout and no password prompt); nothing for a job on this machine alone (hydra's fork
/// launcher) or under Slurm, whose own records say what became of a node.
std::vector<std::string> remoteAgent(Launcher launcher, bool forkLauncher,
                                     const std::vector<std::string>& environment) {
  const auto variable = [&](const std::string& name) -> std::string {
    for (const std::string& entry : environment)
      if (entry.compare(0, name.size() + 1, name + "=") == 0) return entry.substr(name.size() + 1);
    return "";
  };
  if (forkLauncher || launcher == Launcher::Slurm) return {};
  std::string agent;
  if (launcher == Launcher::OpenMpi) agent = variable("OMPI_MCA_plm_rsh_agent");
  if (launcher == Launcher::Mpich) {
    const std::string kind = variable("HYDRA_LAUNCHER");
    if (!kind.empty() && kind != "ssh" && kind != "rsh") return {};
    agent = variable("HYDRA_LAUNCHER_EXEC");
  }
  if (agent.empty()) agent = "ssh";
  std::vector<std::string> argv;
  std::istringstream words(agent);  // Open MPI's agent may carry options: "ssh -x"
  for (std::string word; words >> word;) argv.push_back(word);
  if (!argv.empty() && std::filesystem::path(argv[0]).filename() == "ssh")
    argv.insert(argv.end(), {"-o", "BatchMode=yes", "-o", "ConnectTimeout=5"});
  return argv;
}

/// Names the nodes a failed job lost (LauncherDeath.h, silentNodes): all of whose ranks ended without a
/// word and that no longer answer `agent`; without an agent (Slurm), those whose ranks were silent while
/// the job's other ranks ended or were stopped. Nothing for a job on this machine alone (`local`).
void reportLostNodes(const SilentNodes& silent, const std::vector<std::string>& agent, bool local,
                     const std::vector<std::string>& environment) {
  if (local) return;
  for (const SilentNode& node : silent.nodes) {
    std::string why;
    if (!agent.empty()) {
      std::vector<std::string> probe = agent;
      probe.insert(probe.end(), {node.host, "true"});
      const int answer = runQuietly(probe, environment, 10);
      if (answer == 0) continue;  // it answers: its ranks were killed (SIGKILL), the node was not lost
      why = "and the node does not answer (" + joinedWords(probe) + ": " +
            (answer < 0 ? std::string("no answer in 10 s") : "exit status " + std::to_string(answer)) + ")";
    } else if (silent.heard) {
      why = "while the job's other ranks ended or were stopped";
    } else {
      continue;
    }
    std::string ranks;
    for (const lang::RankRecord& record : node.ranks)
      ranks += (ranks.empty() ? "" : "; ") + std::to_string(record.rank) + " (" + record.instances + ")";
    std::fprintf(stderr,
                 "streammap run: node '%s' was lost: its rank%s %s ended without a word %s: the node failed or "
                 "was cut off from the others\n",
                 escapedForDisplay(node.host).c_str(), node.ranks.size() == 1 ? "" : "s", ranks.c_str(), why.c_str());
  }
}

/// A scratch directory removed with everything in it when this goes (RAII); `keep` names one kept instead.
class ScratchDirectory {
 public:
  /// A fresh directory "$TMPDIR/streammap-WHAT-XXXXXX", or the directory `keep` (created if need be).
  bool open(const char* what, const std::string& keep, std::string& error) {
    std::error_code ec;
    if (!keep.empty()) {
      std::filesystem::create_directories(keep, ec);
      if (ec) error = "--keep " + keep + ": " + ec.message();
      dir_ = keep;
      return !ec;
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string model = std::string(tmp && *tmp ? tmp : "/tmp") + "/streammap-" + what + "-XXXXXX";
    if (::mkdtemp(model.data()) == nullptr) {
      error = "cannot create a scratch directory " + model + ": " + std::strerror(errno);
      return false;
    }
    dir_ = model;
    scratch_ = true;
    return true;
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    if (scratch_) std::filesystem::remove_all(dir_, ignored);
  }
  std::string path(const char* name) const { return dir_ + "/" + name; }
  const std::string& path() const { return dir_; }

 private:
  std::string dir_;
  bool scratch_ = false;
};

const char* const kCostsChanged = "measured costs changed since mapping";

/// After a run that ended well: its profile into the performance history of `database`, with the
/// devices' speeds from `cluster`. What goes wrong here is a note: the run itself succeeded.
void addRunToHistory(const std::string& profilePath, const std::string& database, const Cluster& cluster,
                     const lang::Rtg& rtg) {
  std::string error;
  lang::RunProfile profile;
  ProfileRunRecord run;
  std::int64_t runId = 0;
  std::vector<std::string> notes;
  std::unique_ptr<ResourceDb> db;
  const bool recorded = readRunProfile(profilePath, profile, error) &&
                        (db = ResourceDb::open(database, ResourceDb::OpenMode::CreateIfMissing, error)) &&
                        recordRunProfile(profile, profilePath, cluster, &rtg, *db, run, runId, notes, error);
  for (const std::string& note : notes) std::fprintf(stderr, "streammap run: note: %s\n", note.c_str());
  if (!recorded) {
    std::fprintf(stderr, "streammap run: note: this run's profile was not added to the performance history: %s\n",
                 error.c_str());
    return;
  }
  std::fprintf(stderr,
               "streammap run: measured costs of %zu instance(s) added to the performance history in %s (run %lld); "
               "the next run or map maps with them\n",
               run.samples.size(), db->path().c_str(), static_cast<long long>(runId));
}

}  // namespace

int runCommand(const Args& args) {
  CommandLine cl;
  if (!cl.parse(kRunSpec, args)) return kExitUsage;
  if (cl.helpRequested()) return 0;
  if (cl.positional().empty()) {
    std::fprintf(stderr, "usage: %s\n", kRunSpec.usage);
    return usageFail("run", "no program given");
  }
  MapInvocation m;
  std::string error;
  if (!readMapSettings(cl, m.settings)) return kExitUsage;
  readHistoryOption(cl, m.historyPath);
  bool given = false;
  if (!readSource(cl, m.source, given)) return kExitUsage;
  m.sourceGiven = given;
  const bool forkLauncher = cl.value("--launcher") == "fork";
  std::optional<Launcher> requested;
  if (cl.has("--launcher")) {
    Launcher launcher = Launcher::Mpich;
    if (!forkLauncher && !parseLauncher(cl.value("--launcher"), launcher))
      return usageFail("run", "option --launcher: expected 'mpich', 'fork', 'openmpi' or 'slurm', got '" +
                                  cl.value("--launcher") + "'");
    requested = launcher;
  }
  const std::string program = cl.positional()[0];
  m.rtgPath = program + ".rtg.json";
  lang::Rtg rtg;
  if (!readRtg(m.rtgPath, rtg, error))
    return fail("run",
                statFile(m.rtgPath).exists ? error : m.rtgPath + ": not found (was the program built with disparcc?)");
  const std::string& mpi = rtg.mpi;
  if (mpi == "smpi")
    return fail("run", program + " was built with disparcc --target smpi: run it with streammap simulate");
  // Inside an allocation srun is the way to start ranks (no ssh between nodes); elsewhere the
  // launcher of the MPI the program was built for.
  const char* jobId = std::getenv("SLURM_JOB_ID");
  m.format = requested          ? *requested
             : jobId && *jobId  ? Launcher::Slurm
             : mpi == "openmpi" ? Launcher::OpenMpi
                                : Launcher::Mpich;
  const Launcher launcher = *m.format;
  if (launcher != Launcher::Slurm && info(launcher).name != mpi)
    return fail("run", program + " was built for " + mpi + " (its rtg says so) but --launcher " +
                           (forkLauncher ? std::string("fork") : info(launcher).name) + " starts " +
                           info(launcher).name + " programs; rebuild with disparcc --mpi=" + info(launcher).name +
                           " or use --launcher " + mpi);
  m.output = program + info(*m.format).placementSuffix;
  m.printTable = false;
  const std::string mapPath = program + ".map.json";

  const FileTimes rtgTime = statFile(m.rtgPath);
  Cluster current;
  if (!loadResources("run", m.source, given, true, *m.database, current, error)) return fail("run", error);

  // Remap when the mapping is missing, older than the RTG, made from other or changed resources, or
  // from costs the performance history has revised since (`profile add`).
  std::string reason;
  MapRecord record;
  std::string text;
  const FileTimes mapTime = statFile(mapPath);
  if (!mapTime.exists)
    reason = "no mapping yet";
  else if (olderThan(mapTime, rtgTime))
    reason = "mapping older than " + m.rtgPath;
  else if (!readFile(mapPath, text, error) || !parseMapJson(text, record, error))
    reason = "mapping unreadable: " + error;
  else if (record.source.kind != m.source.kind || record.source.path != displayDatabaseName(m.source.path))
    reason = "other resource source";
  else if (record.launcher != info(*m.format).name)
    reason = "mapping written for launcher " + record.launcher;
  else if (record.clusterDigest != clusterDigest(current))
    reason = "resources changed since mapping";
  else
    reason = rankPolicyMismatch(record, m.settings.ranks);
  CostData costData;  // read once: compared with the mapping's, and mapped with when they differ
  const bool costsLoaded = reason.empty() && !record.costsDigest.empty();
  if (costsLoaded) {
    if (!loadCosts(m, rtg, current, costData, error)) return fail("run", error);
    if (costsDigest(resolveCosts(rtg, costData.inputs)) != record.costsDigest) reason = kCostsChanged;
  }
  if (!reason.empty()) {
    // Every run adds to the history, so its estimates move a little at every run: a mapping made again
    // from them that places every instance as before is not news (the file takes the new digest).
    const bool costsOnly = reason == kCostsChanged;
    const std::vector<RankRecord> before = record.ranks;
    if (!costsOnly) std::fprintf(stderr, "streammap run: mapping %s (%s)\n", m.rtgPath.c_str(), reason.c_str());
    // Nor is a mapping barely better than the one it would replace (MapSettings::previous).
    if (costsOnly) m.settings.previous = &before;
    const int status = writeMapping(m, rtg, current, &record, costsLoaded ? &costData : nullptr);
    m.settings.previous = nullptr;
    if (status != 0) return status;
    const auto placed = [](const RankRecord& a, const RankRecord& b) {
      return a.rank == b.rank && a.vnode == b.vnode && a.replica == b.replica && a.host == b.host &&
             a.device == b.device && a.mode == b.mode;
    };
    if (costsOnly && !std::equal(before.begin(), before.end(), record.ranks.begin(), record.ranks.end(), placed))
      std::fprintf(stderr, "streammap run: mapping %s (%s)\n", m.rtgPath.c_str(), reason.c_str());
  }
  m.database->close();
  const CheckReport report = checkMapping(record, current);
  if (!report.ok()) {
    printReport(mapPath.c_str(), report);
    return fail("run", "mapping check failed; not launching");
  }

  std::vector<std::string> argv;
  std::vector<std::string> environment = ownEnvironment();
  // Where each rank records its process id and instances, so that a rank killed by SIGKILL, which
  // cannot say so itself, is named from what the launcher reports (dispar_lang/RankDeath.h).
  ScratchDirectory registry;
  if (!registry.open("ranks", "", error)) return fail("run", error);
  setVariable(environment, lang::kRankRegistryVariable, registry.path());
  // Every run is measured (docs/streammap.md, "Measured costs"): its profile goes into the performance
  // history, from which the next run or map takes the costs. Where it goes: --profile, else a
  // DISPAR_PROFILE the user set (as the program alone honours it), else APP.profile.json.
  const std::string historyPath = cl.has("--no-history") ? std::string() : historyDatabase(m);
  const std::string userProfile = cl.has("--profile") ? cl.value("--profile") : variableOrEmpty("DISPAR_PROFILE");
  std::string profilePath;
  if (!userProfile.empty() || !historyPath.empty()) {
    std::error_code ignored;
    profilePath =
        std::filesystem::absolute(userProfile.empty() ? program + ".profile.json" : userProfile, ignored).string();
    // Refused before the job runs, not after (the runtime would only warn at the end).
    lang::OutputTarget target;
    if (!lang::resolveOutputTarget(profilePath, target, error))
      return fail("run", (cl.has("--profile") ? "--profile " : "DISPAR_PROFILE ") + error);
    setVariable(environment, "DISPAR_PROFILE", profilePath);
    if (userProfile.empty()) std::filesystem::remove(profilePath, ignored);  // a previous run's is not this one's
  }
  // The trace likewise: --trace, else a DISPAR_TRACE the user set (so that Open MPI passes it on too).
  const std::string userTrace = cl.has("--trace") ? cl.value("--trace") : variableOrEmpty("DISPAR_TRACE");
  std::string tracePath;
  if (!userTrace.empty()) {
    std::error_code ignored;
    tracePath = std::filesystem::absolute(userTrace, ignored).string();
    lang::OutputTarget target;
    if (!lang::resolveOutputTarget(tracePath, target, error))
      return fail("run", (cl.has("--trace") ? "--trace " : "DISPAR_TRACE ") + error);
    setVariable(environment, "DISPAR_TRACE", tracePath);
  }
  if (launcher == Launcher::Slurm) {
    argv = srunArguments(record);
    const char* srun = std::getenv("DISPAR_SRUN");
    if (srun && *srun) argv[0] = srun;
    setVariable(environment, "SLURM_HOSTFILE", m.output);
  } else if (launcher == Launcher::OpenMpi) {
    // Open MPI's mpirun refuses to run as root unless both variables say the user means it; a root user
    // who asked streammap to run the program means it.
    const char* allowed = std::getenv("OMPI_ALLOW_RUN_AS_ROOT");
    if (::geteuid() == 0 && (allowed == nullptr || *allowed == '\0')) {
      setVariable(environment, "OMPI_ALLOW_RUN_AS_ROOT", "1");
      setVariable(environment, "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
      std::fprintf(stderr, "streammap run: note: running as root: set OMPI_ALLOW_RUN_AS_ROOT=1 and "
                           "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 for Open MPI's mpirun, which refuses root otherwise\n");
    }
    argv = {openMpiLauncher(),
            "--hostfile",
            m.output,
            "--rankfile",
            siblingPath(m.output, ".rankfile"),
            "-n",
            std::to_string(lang::rankCountOf(record.ranks))};
    // Open MPI passes the environment to remote ranks only when told: every DISPAR_ variable, the runtime's
    // settings (DISPAR_HEARTBEAT_SECONDS...) and what streammap set (the rank registry, the profile).
    for (const std::string& entry : environment)
      if (entry.rfind("DISPAR_", 0) == 0 && entry.find('=') != std::string::npos)
        argv.insert(argv.end(), {"-x", entry.substr(0, entry.find('='))});
  } else {
    const char* mpiexec = std::getenv("DISPAR_MPIEXEC");
    argv = {mpiexec && *mpiexec ? mpiexec : DISPAR_MPIEXEC_PATH};
    if (forkLauncher) argv.insert(argv.end(), {"-launcher", "fork"});
    argv.insert(argv.end(), {"-f", m.output, "-n", std::to_string(lang::rankCountOf(record.ranks))});
  }
  argv.insert(argv.end(), cl.positional().begin(), cl.positional().end());
  // streammap stays the job's supervisor: ^C or a timeout's SIGTERM reaches the launcher, which stops
  // every rank.
  LaunchDeaths deaths;
  int status = runLauncher(argv, environment, error, "", &deaths, registry.path());
  if (status < 0) return fail("run", error);
  // Every rank ended its work with status 0 and said so; the launcher failed in its own shutdown after
  // (hydra exits 255 when DISPAR_FINALIZE_SECONDS ends ranks that MPICH's MPI_Finalize held over TCP).
  const bool interrupted = status == 128 + SIGINT || status == 128 + SIGTERM || status == 128 + SIGHUP;
  if (status > 0 && !interrupted && deaths.rankSignal == 0 && !deaths.launcherDeath &&
      everyRankEndedWell(registry.path(), lang::rankCountOf(record.ranks))) {
    std::fprintf(stderr,
                 "streammap run: note: every rank of the job ended its work with status 0; %s then failed in its "
                 "own shutdown (status %d; MPICH over TCP: docs/cluster.md, \"MPICH over TCP\"): the run succeeded\n",
                 argv[0].c_str(), status);
    status = 0;
  }
  int rankSignal = deaths.rankSignal;
  if (rankSignal == 0 && deaths.launcherDeath) {
    // No rank said how it died (SIGKILL cannot be caught): the launcher's report, with the rank's record.
    const LauncherDeath& death = *deaths.launcherDeath;
    rankSignal = death.signal;
    if (const std::optional<lang::RankRecord> record = recordOfDeadRank(registry.path(), death)) {
      std::fprintf(stderr, "%s (as the launcher reports: process %ld on %s)\n",
                   lang::formatRankDeath(record->rank, death.signal, record->instances).c_str(), record->pid,
                   escapedForDisplay(record->host).c_str());
    } else {
      const char* name = lang::signalName(death.signal);
      std::fprintf(stderr,
                   "dispar: %s%s on %s killed by signal %d%s%s%s (as the launcher reports; it left no "
                   "record of its instances)\n",
                   death.rank >= 0 ? "rank " : "process ",
                   std::to_string(death.rank >= 0 ? static_cast<long>(death.rank) : death.pid).c_str(),
                   escapedForDisplay(death.host).c_str(), death.signal, name ? " (" : "", name ? name : "",
                   name ? ")" : "");
    }
    if (death.signal == SIGKILL)
      std::fprintf(stderr, "streammap run: note: SIGKILL comes from outside the program: the kernel's "
                           "out-of-memory killer (see 'dmesg'), a batch system's limit, or 'kill -9'\n");
  }
  if (status != 0 && !deaths.launcherDeath)
    reportLostNodes(silentNodes(registry.path(), deaths.reportedRanks),
                    remoteAgent(launcher, forkLauncher, environment), forkLauncher, environment);
  if (rankSignal != 0) {
    const char* name = lang::signalName(rankSignal);
    std::fprintf(stderr,
                 "streammap run: the job did not run to its end: a rank was killed by signal %d%s%s%s (named above)\n",
                 rankSignal, name ? " (" : "", name ? name : "", name ? ")" : "");
  }
  if (status == 0 && !historyPath.empty()) addRunToHistory(profilePath, historyPath, current, rtg);
  return status;
}

int sbatchCommand(const Args& args) {
  CommandLine cl;
  if (!cl.parse(kSbatchSpec, args)) return kExitUsage;
  if (cl.helpRequested()) return 0;
  MapInvocation m;
  if (!oneArgument("sbatch", kSbatchSpec, cl, "rtg file", m.rtgPath)) return kExitUsage;
  if (!readMapSettings(cl, m.settings)) return kExitUsage;
  readHistoryOption(cl, m.historyPath);
  std::string error;
  bool given = false;
  if (!readSource(cl, m.source, given)) return kExitUsage;
  m.sourceGiven = given;
  BatchSettings batch;
  batch.script = cl.value("-o");
  batch.time = cl.value("--time");
  batch.partition = cl.value("--partition");
  batch.jobName = cl.value("--job-name");
  if (cl.has("--time") && !isSlurmTime(batch.time))
    return usageFail("sbatch", "option --time: expected a Slurm time limit (MM, HH:MM:SS, D-HH:MM...), got '" +
                                   escapedForDisplay(batch.time) + "'");
  const std::string stem = programStem(m.rtgPath);
  if (batch.script.empty()) batch.script = stem + ".sbatch";
  const std::string name = stem.substr(stem.rfind('/') == std::string::npos ? 0 : stem.rfind('/') + 1);
  if (batch.jobName.empty()) batch.jobName = slurmNameFrom(name);
  if (!isSlurmName(batch.jobName, false))
    return usageFail("sbatch", "option --job-name: letters, digits, '.', '_', '+' and '-' only, got '" +
                                   escapedForDisplay(batch.jobName) + "'");
  if (cl.has("--partition") && !isSlurmName(batch.partition, true))
    return usageFail("sbatch",
                     "option --partition: partition names of letters, digits, '.', '_', '+' and '-', separated by ',', "
                     "got '" +
                         escapedForDisplay(batch.partition) + "'");
  m.format = Launcher::Slurm;
  m.output = stem + info(Launcher::Slurm).placementSuffix;
  m.wholeCluster = true;
  m.printTable = false;
  m.extraFiles = [&](const MapRecord& record, const MappingOutcome&, AtomicFileSet& files) {
    files.add(batch.script, formatBatchScript(record, batch, m.output, stem));
  };
  if (const int status = executeMap(m)) return status;
  std::printf("wrote %s; submit with: sbatch %s\n", escapedForDisplay(batch.script).c_str(),
              escapedForDisplay(shellQuoted(batch.script)).c_str());
  return 0;
}

namespace {

bool writeWhole(const std::string& path, const std::string& text, std::string& error) {
  AtomicFileSet files;
  files.add(path, text);
  return files.commit(error);
}

}  // namespace

int simulateCommand(const Args& args) {
  CommandLine cl;
  if (!cl.parse(kSimulateSpec, args)) return kExitUsage;
  if (cl.helpRequested()) return 0;
  if (cl.positional().empty()) {
    std::fprintf(stderr, "usage: %s\n", kSimulateSpec.usage);
    return usageFail("simulate", "no program given");
  }
  const std::string program = cl.positional()[0];
  const std::optional<double> gpuSpeedup = cl.doubleValue("--gpu-speedup", kDefaultGpuSpeedup, 1e-6, 1e9);
  const std::optional<double> latency = cl.doubleValue("--latency", kDefaultNetworkLatencySeconds, 0, 10);
  const std::optional<int> machinefileRanks = cl.intValue("-n", 0, 1, 1000000);
  if (!gpuSpeedup || !latency || !machinefileRanks) return kExitUsage;
  const int given = cl.has("--mapping") + cl.has("--machinefile") + cl.has("--algorithm");
  if (given > 1) return usageFail("simulate", "--mapping, --machinefile and --algorithm are mutually exclusive");
  if (cl.has("--machinefile") != cl.has("-n")) return usageFail("simulate", "--machinefile and -n go together");
  MapInvocation m;
  if (!readMapSettings(cl, m.settings)) return kExitUsage;
  readHistoryOption(cl, m.historyPath);
  bool sourceGiven = false;
  if (!readSource(cl, m.source, sourceGiven)) return kExitUsage;
  m.sourceGiven = sourceGiven;
  std::string error;
  Cluster cluster;
  if (!loadResources("simulate", m.source, sourceGiven, false, *m.database, cluster, error))
    return fail("simulate", error);

  // Each rank's simulated host: from a machinefile, a given mapping or a new one.
  std::vector<std::string> hostOfRank;
  std::string mapPath;  // the program's mapping: the runtime takes each rank's GPU from it
  if (cl.has("--machinefile")) {
    std::string text;
    if (!readFile(cl.value("--machinefile"), text, error) ||
        !ranksFromMachinefile(text, *machinefileRanks, hostOfRank, error))
      return fail("simulate", cl.value("--machinefile") + ": " + error);
  } else {
    m.rtgPath = program + ".rtg.json";
    lang::Rtg rtg;
    if (!readRtg(m.rtgPath, rtg, error))
      return fail("simulate", statFile(m.rtgPath).exists ? error
                                                         : m.rtgPath + ": not found (build the program with disparcc "
                                                                       "--target smpi, or give --machinefile)");
    if (rtg.mpi != "smpi")
      return fail("simulate",
                  program + " was built for " + rtg.mpi + " (its rtg says so); rebuild it with disparcc --target smpi");
    MapRecord record;
    if (cl.has("--mapping")) {
      mapPath = cl.value("--mapping");
      std::string text;
      if (!readFile(cl.value("--mapping"), text, error) || !parseMapJson(text, record, error))
        return fail("simulate", cl.value("--mapping") + ": " + error);
    } else {
      // SMPI runs no rank groups; mpiexec's own placement ignores what a vertex needs.
      m.settings.ranks.kind = RankPolicy::Kind::PerInstance;
      if (m.settings.algorithm == Algorithm::RoundRobin) m.settings.allowHostFallback = true;
      m.output = program + ".machinefile";
      m.printTable = false;
      if (const int status = writeMapping(m, rtg, cluster, &record)) return status;
      mapPath = siblingPath(m.output, ".map.json");
      std::printf("mapping (%s): %s; predicted period %s\n", algorithmName(m.settings.algorithm), mapPath.c_str(),
                  formatNumber(record.period).c_str());
    }
    if (lang::rankCountOf(record.ranks) != static_cast<int>(record.ranks.size()))
      return fail("simulate", "the mapping runs " + std::to_string(record.ranks.size()) + " instances in " +
                                  std::to_string(lang::rankCountOf(record.ranks)) +
                                  " ranks; the SMPI target runs one rank per instance: map with --rank-per-instance");
    hostOfRank = hostsOfRanks(record);
  }
  m.database->close();
  for (const std::string& h : hostOfRank) {
    const bool known = std::any_of(cluster.nodes.begin(), cluster.nodes.end(),
                                   [&](const NodeInfo& n) { return n.host == h && n.status == NodeStatus::Up; });
    if (!known) return fail("simulate", "rank placed on '" + h + "', which is not an up node of the cluster");
  }

  SimulationSettings settings;
  settings.gpuSpeedup = *gpuSpeedup;
  if (cl.has("--latency")) settings.latencySeconds = *latency;
  ScratchDirectory files;
  if (!files.open("simulate", cl.value("--keep"), error)) return fail("simulate", error);
  const std::string platform = files.path("platform.xml"), hostfile = files.path("hostfile"),
                    log = files.path("smpirun.log");
  if (!writeWhole(platform, formatSmpiPlatform(cluster, settings), error) ||
      !writeWhole(hostfile, formatSmpiHostfile(hostOfRank), error))
    return fail("simulate", error);

  const char* smpirun = std::getenv("DISPAR_SMPIRUN");
  std::vector<std::string> argv = {smpirun && *smpirun ? smpirun : DISPAR_SMPIRUN_PATH,
                                   "-np",
                                   std::to_string(hostOfRank.size()),
                                   "-platform",
                                   platform,
                                   "-hostfile",
                                   hostfile};
  for (const std::string& option : smpiConfiguration()) argv.push_back(option);
  argv.push_back("--log=xbt_cfg.thres:warning");
  argv.push_back(launchProgram(program));
  argv.insert(argv.end(), cl.positional().begin() + 1, cl.positional().end());
  std::vector<std::string> environment = ownEnvironment();
  if (!mapPath.empty()) setVariable(environment, "DISPAR_MAPPING", std::filesystem::absolute(mapPath).string());
  std::fflush(stdout);  // the mapping line before the program's output
  const int status = runLauncher(argv, environment, error, log);
  if (status < 0) return fail("simulate", error);
  std::string text;
  if (!readFile(log, text, error)) return fail("simulate", error);
  const SimulationLog result = parseSimulationLog(text);
  for (const std::string& line : result.otherLines) std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  if (status != 0 || result.aborted || !result.simulatedSeconds)
    return fail("simulate", "the simulated program failed (" +
                                std::string(result.aborted ? "MPI_Abort was called"
                                            : status != 0  ? "smpirun exit status " + std::to_string(status)
                                                           : "no simulated time reported") +
                                ")");
  std::printf("simulated makespan: %s s\n", formatNumber(*result.simulatedSeconds).c_str());
  // Busy core-seconds per node, its GPUs beside it (HOST.gpuI).
  std::string busy;
  for (const SimulationLog::HostBusy& b : result.busy)
    if (b.coreSeconds > 0) busy += (busy.empty() ? "" : ", ") + b.host + " " + formatNumber(b.coreSeconds);
  std::printf("busy core-seconds: %s\n", busy.empty() ? "none" : busy.c_str());
  return 0;
}

}  // namespace dispar::streammap
