// The map / check / run subcommands: option parsing, file handling and launching; the work is done by
// MapPlanner and MapCheck.
#include "streammap/AtomicFiles.h"
#include "streammap/ClusterDigest.h"
#include "streammap/Commands.h"
#include "streammap/MapCheck.h"
#include "streammap/MapFile.h"
#include "streammap/MapPlanner.h"
#include "streammap/ResourceDb.h"
#include "streammap/Slurm.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>
#include <map>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

extern char** environ;

namespace dispar::streammap {

namespace {

constexpr const char* kMapUsage =
    "usage: streammap map APP.rtg.json [-o APP.machinefile] [--db PATH | --cluster FILE.json] [--ttl SECONDS]\n"
    "                     [--algorithm refine|paper] [--seed N] [--allow-host-fallback] [--passes N]\n"
    "                     [--format mpich|openmpi|slurm] [--dot FILE] [--explain]\n";
constexpr const char* kSbatchUsage =
    "usage: streammap sbatch APP.rtg.json [-o APP.sbatch] [--db PATH | --cluster FILE.json] [--ttl SECONDS]\n"
    "                        [--algorithm refine|paper] [--seed N] [--allow-host-fallback] [--passes N]\n"
    "                        [--time LIMIT] [--partition NAME] [--job-name NAME]\n";
constexpr const char* kCheckUsage =
    "usage: streammap check APP.map.json [--db PATH | --cluster FILE.json] [--ttl SECONDS]\n";
constexpr const char* kRunUsage =
    "usage: streammap run [--launcher mpich|fork|openmpi|slurm] [--db PATH | --cluster FILE.json] [--ttl SECONDS]\n"
    "                     [--algorithm refine|paper] [--allow-host-fallback] ./APP [ARGS...]\n";

int fail(const char* command, const std::string& message) {
  std::fprintf(stderr, "streammap %s: error: %s\n", command, message.c_str());
  return 1;
}

// Reads options one at a time: `--name VALUE` or `--name=VALUE`.
class OptionReader {
 public:
  OptionReader(const Args& args, std::size_t& index) : args_(args), index_(index) {}

  /// True when the current argument is option `name`; a value, if wanted, goes to `value`.
  bool is(const char* name) const {
    const std::string& a = args_[index_];
    return a == name || a.rfind(std::string(name) + "=", 0) == 0;
  }
  bool value(std::string& out, std::string& error) {
    const std::string& a = args_[index_];
    const std::size_t eq = a.find('=');
    if (eq != std::string::npos) {
      out = a.substr(eq + 1);
      return true;
    }
    if (index_ + 1 >= args_.size()) {
      error = "option " + a + " needs a value";
      return false;
    }
    out = args_[++index_];
    return true;
  }

 private:
  const Args& args_;
  std::size_t& index_;
};

bool parseNumber(const std::string& text, const char* option, long long min, long long& out, std::string& error) {
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno || x < min) {
    error = std::string("option ") + option + ": expected an integer >= " + std::to_string(min) + ", got '" + text + "'";
    return false;
  }
  out = x;
  return true;
}

// Options shared by map, check and run: where the resources come from.
struct SourceOptions {
  std::optional<std::string> db, clusterFile;
  int ttl = 0;

  /// Consumes the current argument if it is one of these options; `handled` tells whether it was.
  bool consume(OptionReader& r, bool& handled, std::string& error) {
    handled = true;
    std::string v;
    long long n = 0;
    if (r.is("--db")) {
      if (!r.value(v, error)) return false;
      db = v;
    } else if (r.is("--cluster")) {
      if (!r.value(v, error)) return false;
      clusterFile = v;
    } else if (r.is("--ttl")) {
      if (!r.value(v, error) || !parseNumber(v, "--ttl", 0, n, error)) return false;
      ttl = static_cast<int>(n);
    } else {
      handled = false;
    }
    return true;
  }
  bool any() const { return db || clusterFile; }
  bool resolve(ClusterSource& out, std::string& error) const {
    if (db && clusterFile) {
      error = "--db and --cluster are mutually exclusive";
      return false;
    }
    out.kind = clusterFile ? ClusterSource::Kind::File : ClusterSource::Kind::Database;
    out.path = clusterFile ? *clusterFile : db ? *db : defaultDatabasePath();
    out.ttlSeconds = ttl;
    return true;
  }
};

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

struct MapInvocation {
  std::string rtgPath;
  std::string output;
  std::string dotPath;
  ClusterSource source;
  MapSettings settings;
  std::optional<Launcher> format;  // unset: the program's MPI's
  bool explain = false;
  bool printTable = true;
  bool wholeCluster = false;  // sbatch: map for a job yet to be submitted, not the one this runs in
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

std::string joinedWords(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& w : words) text += (text.empty() ? "" : " ") + w;
  return text;
}

/// srun's words for running the mapped ranks (SLURM_HOSTFILE names each rank's node): the program's
/// MPI's process-management interface (MPICH: PMI-2, Open MPI: PMIx), the rank count, the hostfile's
/// order; --overcommit where the mapping puts more ranks on a node than it has cores (srun refuses that
/// otherwise).
std::vector<std::string> srunArguments(const MapRecord& record) {
  std::vector<std::string> words = {"srun", record.mpi == "openmpi" ? "--mpi=pmix" : "--mpi=pmi2", "-n",
                                    std::to_string(record.ranks.size()), "--distribution=arbitrary"};
  std::map<std::string, int> ranksOnHost;
  for (const RankRecord& k : record.ranks) ++ranksOnHost[k.host];
  for (const NodeInfo& n : record.cluster.nodes)
    if (ranksOnHost[n.host] > n.cores) {
      words.push_back("--overcommit");
      break;
    }
  return words;
}

/// Maps `m.rtgPath` onto `preloaded` when given (a caller that already read and restricted the
/// resources), else onto `m.source`, and writes the files.
int executeMap(const MapInvocation& m, const Cluster* preloaded = nullptr) {
  std::string error, text;
  if (!readFile(m.rtgPath, text, error)) return fail("map", error);
  lang::Rtg rtg;
  if (!lang::parseRtgJson(text, rtg, error)) return fail("map", m.rtgPath + ": " + error);
  // Without --format: the files of the MPI the program was built for.
  const Launcher format = m.format ? *m.format : rtg.mpi == "openmpi" ? Launcher::OpenMpi : Launcher::Mpich;
  Cluster cluster;
  if (preloaded != nullptr) {
    cluster = *preloaded;
  } else {
    if (!loadClusterSource(m.source, cluster, error)) return fail("map", error);
    if (!m.wholeCluster && !restrictToSlurmAllocation("map", cluster, error)) return fail("map", error);
  }
  MappingOutcome outcome;
  if (!planMapping(rtg, cluster, m.settings, outcome, error)) return fail("map", error);

  const std::string output = m.output.empty() ? programStem(m.rtgPath) + info(format).placementSuffix : m.output;
  const std::string mapPath = siblingPath(output, ".map.json");
  MapRecord record = makeMapRecord(rtg, cluster, outcome, m.settings);
  record.rtgPath = m.rtgPath;
  record.machinefile = output;
  record.launcher = info(format).name;
  record.source = m.source;

  std::vector<std::string> hostOfRank;
  std::vector<int> coresOfRank;
  for (const RankRecord& k : record.ranks) {
    hostOfRank.push_back(k.host);
    coresOfRank.push_back(outcome.problem.nodes[outcome.result.nodeOf[k.rank]].cores);
  }
  AtomicFileSet files;
  const std::string rankfile = siblingPath(output, ".rankfile");
  switch (format) {
    case Launcher::OpenMpi:
      files.add(output, formatOpenMpiHostfile(hostOfRank));
      files.add(rankfile, formatOpenMpiRankfile(hostOfRank, coresOfRank));
      break;
    case Launcher::Slurm: files.add(output, formatSlurmHostfile(hostOfRank)); break;
    case Launcher::Mpich: files.add(output, formatMpichMachinefile(hostOfRank)); break;
  }
  files.add(mapPath, writeMapJson(record));
  if (!m.dotPath.empty()) files.add(m.dotPath, formatDot(rtg, outcome));
  if (m.extraFiles) m.extraFiles(record, outcome, files);
  if (!files.commit(error)) return fail("map", error);

  for (const std::string& w : outcome.warnings) std::fprintf(stderr, "streammap map: %s\n", w.c_str());
  if (!m.printTable) return 0;
  std::printf("%-6s %-20s %-7s %-4s %-20s %s\n", "rank", "vnode", "replica", "type", "host", "device");
  for (const RankRecord& k : record.ranks) {
    const std::string device = k.device ? "gpu " + std::to_string(*k.device) : k.mode == "host-fallback" ? "host-fallback" : "-";
    std::printf("%-6d %-20s %-7d %-4s %-20s %s\n", k.rank, k.vnode.c_str(), k.replica, k.type.c_str(), k.host.c_str(),
                device.c_str());
  }
  if (m.explain) {
    std::printf("\nexplain (%s):\n", algorithmName(m.settings.algorithm));
    for (const std::string& line : explainMapping(rtg, outcome, m.settings.algorithm)) std::printf("  %s\n", line.c_str());
  }
  std::printf("\nalgorithm: %s\ncost model: %s\npredicted period: %.6g (bytes crossing nodes: %.0f)\n",
              algorithmName(m.settings.algorithm), kCostModelSummary, record.period, record.crossBytes);
  const bool openmpi = format == Launcher::OpenMpi;
  std::printf("wrote %s and %s%s\n", output.c_str(), mapPath.c_str(), openmpi ? (" and " + rankfile).c_str() : "");
  const std::string program = launchProgram(programStem(m.rtgPath));
  const std::string ranks = std::to_string(record.ranks.size());
  switch (format) {
    case Launcher::OpenMpi:
      std::printf("run: mpirun --hostfile %s --rankfile %s -n %s %s\n", output.c_str(), rankfile.c_str(), ranks.c_str(),
                  program.c_str());
      break;
    case Launcher::Slurm:
      std::printf("run: SLURM_HOSTFILE=%s %s %s\n", output.c_str(), joinedWords(srunArguments(record)).c_str(),
                  program.c_str());
      break;
    case Launcher::Mpich: std::printf("run: mpiexec -f %s -n %s %s\n", output.c_str(), ranks.c_str(), program.c_str()); break;
  }
  return 0;
}

// Consumes one mapping option (algorithm, seed, passes, host fallback) into `m`; used by map and run.
bool parseMapSettings(const std::string& a, OptionReader& r, MapInvocation& m, bool& handled, std::string& error) {
  handled = true;
  std::string v;
  long long n = 0;
  if (r.is("--algorithm")) {
    if (!r.value(v, error)) return false;
    if (v == "paper") m.settings.algorithm = Algorithm::Paper;
    else if (v == "refine") m.settings.algorithm = Algorithm::Refine;
    else {
      error = "option --algorithm: expected 'refine' or 'paper', got '" + v + "'";
      return false;
    }
  } else if (r.is("--seed")) {
    if (!r.value(v, error) || !parseNumber(v, "--seed", 0, n, error)) return false;
    m.settings.seed = static_cast<std::uint64_t>(n);
  } else if (r.is("--passes")) {
    if (!r.value(v, error) || !parseNumber(v, "--passes", 1, n, error)) return false;
    m.settings.maxPasses = static_cast<int>(n);
  } else if (a == "--allow-host-fallback") {
    m.settings.allowHostFallback = true;
  } else {
    handled = false;
  }
  return true;
}

struct FileTimes {
  bool exists = false;
  struct timespec modified {};
};

FileTimes statFile(const std::string& path) {
  struct stat st {};
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

/// The MPI the program of `rtgPath` was built for ("mpich" / "openmpi").
bool programMpi(const std::string& rtgPath, std::string& mpi, std::string& error) {
  std::string text;
  lang::Rtg rtg;
  if (!readFile(rtgPath, text, error)) {
    error = rtgPath + ": not found (was the program built with disparcc?)";
    return false;
  }
  if (!lang::parseRtgJson(text, rtg, error)) {
    error = rtgPath + ": " + error;
    return false;
  }
  mpi = rtg.mpi;
  return true;
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
  MapInvocation m;
  SourceOptions source;
  std::string error;
  for (std::size_t i = 0; i < args.size(); ++i) {
    OptionReader r(args, i);
    const std::string& a = args[i];
    bool handled = false;
    if (!source.consume(r, handled, error)) return fail("map", error);
    if (handled) continue;
    if (!parseMapSettings(a, r, m, handled, error)) return fail("map", error);
    if (handled) continue;
    std::string v;
    if (a == "--help" || a == "-h") {
      std::printf("%s", kMapUsage);
      return 0;
    } else if (r.is("-o") || r.is("--output")) {
      if (!r.value(v, error)) return fail("map", error);
      m.output = v;
    } else if (r.is("--format")) {
      if (!r.value(v, error)) return fail("map", error);
      Launcher format = Launcher::Mpich;
      if (!parseLauncher(v, format))
        return fail("map", "option --format: expected 'mpich', 'openmpi' or 'slurm', got '" + v + "'");
      m.format = format;
    } else if (r.is("--dot")) {
      if (!r.value(v, error)) return fail("map", error);
      m.dotPath = v;
    } else if (a == "--explain") {
      m.explain = true;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "%s", kMapUsage);
      return fail("map", "unknown option '" + a + "'");
    } else if (m.rtgPath.empty()) {
      m.rtgPath = a;
    } else {
      return fail("map", "unexpected argument '" + a + "' (one rtg file expected)");
    }
  }
  if (m.rtgPath.empty()) {
    std::fprintf(stderr, "%s", kMapUsage);
    return fail("map", "no rtg file given");
  }
  if (!source.resolve(m.source, error)) return fail("map", error);
  return executeMap(m);
}

int checkCommand(const Args& args) {
  std::string mapPath, error;
  SourceOptions source;
  for (std::size_t i = 0; i < args.size(); ++i) {
    OptionReader r(args, i);
    bool handled = false;
    if (!source.consume(r, handled, error)) return fail("check", error);
    if (handled) continue;
    if (args[i] == "--help" || args[i] == "-h") {
      std::printf("%s", kCheckUsage);
      return 0;
    }
    if (args[i][0] == '-') return fail("check", "unknown option '" + args[i] + "'");
    if (!mapPath.empty()) return fail("check", "unexpected argument '" + args[i] + "' (one map file expected)");
    mapPath = args[i];
  }
  if (mapPath.empty()) {
    std::fprintf(stderr, "%s", kCheckUsage);
    return fail("check", "no map file given");
  }
  std::string text;
  MapRecord record;
  if (!readFile(mapPath, text, error)) return fail("check", error);
  if (!parseMapJson(text, record, error)) return fail("check", mapPath + ": " + error);
  ClusterSource where = record.source;
  if (source.any() && !source.resolve(where, error)) return fail("check", error);
  Cluster current;
  if (!loadClusterSource(where, current, error)) return fail("check", error);
  if (!restrictToSlurmAllocation("check", current, error)) return fail("check", error);
  const CheckReport report = checkMapping(record, current);
  printReport(mapPath.c_str(), report);
  return report.ok() ? 0 : 1;
}

int runCommand(const Args& args) {
  MapInvocation m;
  SourceOptions source;
  bool forkLauncher = false;
  std::optional<Launcher> requested;
  std::string error;
  std::size_t programIndex = args.size();
  for (std::size_t i = 0; i < args.size(); ++i) {
    OptionReader r(args, i);
    const std::string& a = args[i];
    bool handled = false;
    if (!source.consume(r, handled, error)) return fail("run", error);
    if (handled) continue;
    if (!parseMapSettings(a, r, m, handled, error)) return fail("run", error);
    if (handled) continue;
    std::string v;
    if (a == "--help" || a == "-h") {
      std::printf("%s", kRunUsage);
      return 0;
    } else if (r.is("--launcher")) {
      if (!r.value(v, error)) return fail("run", error);
      forkLauncher = v == "fork";
      Launcher launcher = Launcher::Mpich;
      if (!forkLauncher && !parseLauncher(v, launcher))
        return fail("run", "option --launcher: expected 'mpich', 'fork', 'openmpi' or 'slurm', got '" + v + "'");
      requested = launcher;
    } else if (!a.empty() && a[0] == '-') {
      return fail("run", "unknown option '" + a + "'");
    } else {
      programIndex = i;
      break;
    }
  }
  if (programIndex == args.size()) {
    std::fprintf(stderr, "%s", kRunUsage);
    return fail("run", "no program given");
  }
  if (!source.resolve(m.source, error)) return fail("run", error);
  const std::string program = args[programIndex];
  m.rtgPath = program + ".rtg.json";
  std::string mpi;
  if (!programMpi(m.rtgPath, mpi, error)) return fail("run", error);
  // Inside an allocation srun is the way to start ranks (no ssh between nodes); elsewhere the
  // launcher of the MPI the program was built for.
  const char* jobId = std::getenv("SLURM_JOB_ID");
  m.format = requested ? *requested
             : jobId && *jobId ? Launcher::Slurm
             : mpi == "openmpi" ? Launcher::OpenMpi
                                : Launcher::Mpich;
  const Launcher launcher = *m.format;
  if (launcher != Launcher::Slurm && info(launcher).name != mpi)
    return fail("run", program + " was built for " + mpi + " (its rtg says so) but --launcher " +
                           (forkLauncher ? std::string("fork") : info(launcher).name) + " starts " + info(launcher).name +
                           " programs; rebuild with disparcc --mpi=" + info(launcher).name + " or use --launcher " + mpi);
  m.output = program + info(*m.format).placementSuffix;
  m.printTable = false;
  const std::string mapPath = program + ".map.json";

  const FileTimes rtgTime = statFile(m.rtgPath);
  if (!rtgTime.exists) return fail("run", m.rtgPath + ": not found (was the program built with disparcc?)");
  Cluster current;
  if (!loadClusterSource(m.source, current, error)) return fail("run", error);
  if (!restrictToSlurmAllocation("run", current, error)) return fail("run", error);

  // Remap when the mapping is missing, older than the RTG, made from other or changed resources.
  std::string reason;
  MapRecord record;
  std::string text;
  const FileTimes mapTime = statFile(mapPath);
  if (!mapTime.exists) reason = "no mapping yet";
  else if (olderThan(mapTime, rtgTime)) reason = "mapping older than " + m.rtgPath;
  else if (!readFile(mapPath, text, error) || !parseMapJson(text, record, error)) reason = "mapping unreadable: " + error;
  else if (record.source.kind != m.source.kind || record.source.path != displayDatabaseName(m.source.path))
    reason = "other resource source";
  else if (record.launcher != info(*m.format).name) reason = "mapping written for launcher " + record.launcher;
  else if (record.clusterDigest != clusterDigest(current)) reason = "resources changed since mapping";
  if (!reason.empty()) {
    std::fprintf(stderr, "streammap run: mapping %s (%s)\n", m.rtgPath.c_str(), reason.c_str());
    if (const int status = executeMap(m, &current)) return status;
    if (!readFile(mapPath, text, error) || !parseMapJson(text, record, error)) return fail("run", mapPath + ": " + error);
  }
  const CheckReport report = checkMapping(record, current);
  if (!report.ok()) {
    printReport(mapPath.c_str(), report);
    return fail("run", "mapping check failed; not launching");
  }

  std::vector<std::string> argv;
  std::vector<std::string> environment;
  for (char** e = environ; *e; ++e) environment.push_back(*e);
  if (launcher == Launcher::Slurm) {
    argv = srunArguments(record);
    const char* srun = std::getenv("DISPAR_SRUN");
    if (srun && *srun) argv[0] = srun;
    environment.push_back("SLURM_HOSTFILE=" + m.output);
  } else if (launcher == Launcher::OpenMpi) {
    const char* mpirun = std::getenv("DISPAR_MPIRUN");
    argv = {mpirun && *mpirun ? mpirun : DISPAR_OPENMPI_MPIRUN_PATH, "--hostfile", m.output,
            "--rankfile", siblingPath(m.output, ".rankfile"), "-n", std::to_string(record.ranks.size())};
  } else {
    const char* mpiexec = std::getenv("DISPAR_MPIEXEC");
    argv = {mpiexec && *mpiexec ? mpiexec : DISPAR_MPIEXEC_PATH};
    if (forkLauncher) argv.insert(argv.end(), {"-launcher", "fork"});
    argv.insert(argv.end(), {"-f", m.output, "-n", std::to_string(record.ranks.size())});
  }
  argv.insert(argv.end(), args.begin() + static_cast<long>(programIndex), args.end());
  std::vector<char*> cargv, cenv;
  for (std::string& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  for (std::string& s : environment) cenv.push_back(s.data());
  cenv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, cargv[0], nullptr, nullptr, cargv.data(), cenv.data());
  if (rc != 0) return fail("run", std::string("cannot start ") + argv[0] + ": " + std::strerror(rc));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return fail("run", std::string("waitpid: ") + std::strerror(errno));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

namespace {

/// `text` quoted for a POSIX shell.
std::string shellQuoted(const std::string& text) {
  if (!text.empty() && text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") ==
                           std::string::npos)
    return text;
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

/// Slurm's time formats: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, or UNLIMITED.
bool isSlurmTime(const std::string& t) {
  if (t == "UNLIMITED" || t == "INFINITE") return true;
  std::string rest = t;
  if (const std::size_t dash = t.find('-'); dash != std::string::npos) {
    const std::string days = t.substr(0, dash);
    if (days.empty() || days.find_first_not_of("0123456789") != std::string::npos) return false;
    rest = t.substr(dash + 1);
  }
  int fields = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t colon = rest.find(':', start);
    const std::string field = rest.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (field.empty() || field.size() > 3 || field.find_first_not_of("0123456789") != std::string::npos) return false;
    ++fields;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return fields <= 3;
}

struct BatchSettings {
  std::string script, time, partition, jobName;
};

/// The batch script for `record`: whole nodes (the mapping counts on every core and GPU of its nodes,
/// and a Slurm 22.05 job cannot ask GPUs of only some of its nodes), the ranks placed by SLURM_HOSTFILE.
std::string formatBatchScript(const MapRecord& record, const BatchSettings& batch, const std::string& hostfile,
                              const std::string& program) {
  std::map<std::string, int> gpusOnHost;
  std::map<std::string, std::set<int>> devices;
  std::vector<std::string> hosts;
  for (const RankRecord& k : record.ranks) {
    if (std::find(hosts.begin(), hosts.end(), k.host) == hosts.end()) hosts.push_back(k.host);
    if (k.device) devices[k.host].insert(*k.device);
  }
  std::sort(hosts.begin(), hosts.end());
  std::string nodeList, gpuUse;
  for (const std::string& h : hosts) {
    nodeList += (nodeList.empty() ? "" : ",") + h;
    if (devices.count(h)) gpuUse += (gpuUse.empty() ? "" : ", ") + h + ": " + std::to_string(devices[h].size());
  }
  const std::string absolute = std::filesystem::absolute(program).lexically_normal().string();
  const std::string absoluteHostfile = std::filesystem::absolute(hostfile).lexically_normal().string();
  std::string s = "#!/bin/bash\n";
  s += "# Written by `streammap sbatch " + record.rtgPath + "`: the mapping " + siblingPath(hostfile, ".map.json") +
       " places " + std::to_string(record.ranks.size()) + " ranks on " + std::to_string(hosts.size()) + " node" +
       (hosts.size() == 1 ? "" : "s") + " (GPUs used: " + (gpuUse.empty() ? "none" : gpuUse) + ").\n";
  s += "# Whole nodes: the mapping counts on every core and GPU of its nodes, and a job cannot ask GPUs of\n";
  s += "# only some of its nodes. Submit with: sbatch " + batch.script + "\n";
  s += "#SBATCH --job-name=" + batch.jobName + "\n";
  s += "#SBATCH --nodes=" + std::to_string(hosts.size()) + "\n";
  s += "#SBATCH --nodelist=" + nodeList + "\n";
  s += "#SBATCH --ntasks=" + std::to_string(record.ranks.size()) + "\n";
  s += "#SBATCH --exclusive\n";
  if (!batch.time.empty()) s += "#SBATCH --time=" + batch.time + "\n";
  if (!batch.partition.empty()) s += "#SBATCH --partition=" + batch.partition + "\n";
  s += "set -eu\n";
  s += "export SLURM_HOSTFILE=" + shellQuoted(absoluteHostfile) + "\n";
  std::vector<std::string> srun = srunArguments(record);
  s += "exec " + joinedWords(srun) + " " + shellQuoted(absolute) + " \"$@\"\n";
  return s;
}

}  // namespace

int sbatchCommand(const Args& args) {
  MapInvocation m;
  SourceOptions source;
  BatchSettings batch;
  std::string error;
  for (std::size_t i = 0; i < args.size(); ++i) {
    OptionReader r(args, i);
    const std::string& a = args[i];
    bool handled = false;
    if (!source.consume(r, handled, error)) return fail("sbatch", error);
    if (handled) continue;
    if (!parseMapSettings(a, r, m, handled, error)) return fail("sbatch", error);
    if (handled) continue;
    std::string v;
    if (a == "--help" || a == "-h") {
      std::printf("%s", kSbatchUsage);
      return 0;
    } else if (r.is("-o") || r.is("--output")) {
      if (!r.value(v, error)) return fail("sbatch", error);
      batch.script = v;
    } else if (r.is("--time")) {
      if (!r.value(v, error)) return fail("sbatch", error);
      if (!isSlurmTime(v))
        return fail("sbatch", "option --time: expected a Slurm time limit (MM, HH:MM:SS, D-HH:MM...), got '" + v + "'");
      batch.time = v;
    } else if (r.is("--partition")) {
      if (!r.value(v, error)) return fail("sbatch", error);
      batch.partition = v;
    } else if (r.is("--job-name")) {
      if (!r.value(v, error)) return fail("sbatch", error);
      batch.jobName = v;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "%s", kSbatchUsage);
      return fail("sbatch", "unknown option '" + a + "'");
    } else if (m.rtgPath.empty()) {
      m.rtgPath = a;
    } else {
      return fail("sbatch", "unexpected argument '" + a + "' (one rtg file expected)");
    }
  }
  if (m.rtgPath.empty()) {
    std::fprintf(stderr, "%s", kSbatchUsage);
    return fail("sbatch", "no rtg file given");
  }
  if (!source.resolve(m.source, error)) return fail("sbatch", error);
  const std::string stem = programStem(m.rtgPath);
  if (batch.script.empty()) batch.script = stem + ".sbatch";
  const std::string name = stem.substr(stem.rfind('/') == std::string::npos ? 0 : stem.rfind('/') + 1);
  if (batch.jobName.empty()) batch.jobName = name;
  if (batch.jobName.find_first_of(" \t\n'\"") != std::string::npos)
    return fail("sbatch", "option --job-name: no spaces or quotes, got '" + batch.jobName + "'");
  m.format = Launcher::Slurm;
  m.output = stem + info(Launcher::Slurm).placementSuffix;
  m.wholeCluster = true;
  m.printTable = false;
  m.extraFiles = [&](const MapRecord& record, const MappingOutcome&, AtomicFileSet& files) {
    files.add(batch.script, formatBatchScript(record, batch, m.output, stem));
  };
  if (const int status = executeMap(m)) return status;
  std::printf("wrote %s; submit with: sbatch %s\n", batch.script.c_str(), batch.script.c_str());
  return 0;
}

}  // namespace dispar::streammap
