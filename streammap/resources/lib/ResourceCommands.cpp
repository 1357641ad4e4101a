// The resources half of the streammap tool: --discover, daemon, nodes, node, cluster.
#include "streammap/Commands.h"

#include "dispar_lang/ComputeCapability.h"
#include "streammap/AtomicFiles.h"
#include "streammap/Cluster.h"
#include "streammap/ClusterJson.h"
#include "streammap/CommandLine.h"
#include "streammap/Daemon.h"
#include "streammap/Discovery.h"
#include "streammap/ProgressLine.h"
#include "streammap/ResourceDb.h"
#include "streammap/Slurm.h"

#include <mpi.h>

#include <cstdio>
#include <ctime>
#include <map>

namespace dispar::streammap {

namespace {

const OptionSpec kDbOption = {"--db", "PATH", "resource database"};

const std::vector<OptionSpec> kDiscoverOptions = {
    {"--cluster", nullptr, "gather every MPI rank's node to rank 0 (run under mpiexec, one rank per node)"},
    kDbOption,
    {"--host", "NAME", "record this node under NAME instead of its host name"},
};
const CommandSpec kDiscoverSpec = {
    "streammap --discover [--cluster] [--db PATH] [--host NAME]",
    "Probes this node (hwloc, CUDA driver) and records it in the resource database. With --cluster,\n"
    "launched as 'mpiexec -f hosts -ppn 1 streammap --discover --cluster', every rank probes its node,\n"
    "rank 0 records them all in one transaction and marks recorded nodes that did not answer as down.",
    kDiscoverOptions};

const std::vector<OptionSpec> kDaemonOptions = {
    kDbOption,
    {"--interval", "SECONDS", "heartbeat period, may be fractional (default 30, minimum 0.05)"},
    {"--probe-interval", "SECONDS", "re-probe period (default: every interval); probes cost far more than heartbeats"},
    {"--ttl", "SECONDS", "heartbeat age after which the node counts as down (default 3 intervals)"},
    {"--pidfile", "PATH", "write the daemon's pid to PATH (removed on exit)"},
    {"--host", "NAME", "keep the record of this node under NAME instead of its host name"},
};
const CommandSpec kDaemonSpec = {
    "streammap daemon [--db PATH] [--interval SECONDS] [--probe-interval SECONDS] [--ttl SECONDS]\n"
    "                 [--pidfile PATH] [--host NAME]",
    "Keeps this node's record current: re-probes every probe interval, logs and records what changed, and\n"
    "refreshes the heartbeat every interval. Stops on SIGTERM or SIGINT. One daemon per node and database.",
    kDaemonOptions};

const std::vector<OptionSpec> kNodesOptions = {
    kDbOption,
    {"--json", nullptr, "print the cluster description format (docs/streammap.md) instead of a table"},
    {"--ttl", "SECONDS", "count daemon-kept nodes with an older heartbeat as down (default: each node's own)"},
};
const CommandSpec kNodesSpec = {"streammap nodes [--json] [--db PATH] [--ttl SECONDS]",
                                "Lists the recorded nodes: CPUs, memory, GPUs, status and heartbeat age.",
                                kNodesOptions};

const std::vector<OptionSpec> kNodeOptions = {kDbOption};
const CommandSpec kNodeSpec = {"streammap node drain|resume HOST [--db PATH]",
                               "drain: the mapper places nothing on HOST until it is resumed.\n"
                               "resume: HOST is up again (a daemon's heartbeat decides from then on).",
                               kNodeOptions};

const std::vector<OptionSpec> kClusterOptions = {
    kDbOption,
    {"--slurm", nullptr, "import: read the nodes from Slurm (sinfo --json, else scontrol show node -o)"},
    {"--replace", nullptr, "import: remove recorded nodes that the file (or Slurm) does not describe"},
    {"-o", "FILE", "export: write to FILE (atomically) instead of standard output"},
    {"--ttl", "SECONDS", "export: as for 'streammap nodes'"},
};
const CommandSpec kClusterSpec = {
    "streammap cluster import FILE.json|--slurm [--replace] [--db PATH]\n"
    "       streammap cluster export [-o FILE] [--db PATH]",
    "import: records the nodes a cluster description describes (source 'import'), in one transaction.\n"
    "With --slurm, the nodes Slurm knows: CPUs, memory, GPUs from gres (count and type), and state\n"
    "(idle/mixed/allocated: up; drain: drained; down, not responding: down). A node already recorded by a\n"
    "probe keeps the probe's details (topology, GPU models, compute capability); Slurm's state wins.\n"
    "export: prints the recorded cluster in the same format.",
    kClusterOptions};

std::string gpuSummary(const NodeInfo& node) {
  if (node.gpus.empty()) return "-";
  std::map<std::string, int> models;
  for (const GpuInfo& g : node.gpus)
    ++models[g.name + " (cc " + lang::formatComputeCapability(g.ccMajor, g.ccMinor) + ", " + formatGiB(g.memoryBytes) +
             ")"];
  std::string out;
  for (const auto& [model, count] : models) out += (out.empty() ? "" : ", ") + std::to_string(count) + "x " + model;
  return out;
}

bool loadRecords(const std::string& dbPath, int ttl, Cluster& cluster, std::string& error) {
  return loadClusterFromDatabase(dbPath, ttl, cluster, error);
}

int printNodeTable(const Cluster& cluster, std::int64_t now) {
  std::printf("%-16s %-8s %-7s %7s %5s %7s %10s %9s  %s\n", "HOST", "STATUS", "SOURCE", "SOCKETS", "CORES", "THREADS",
              "MEMORY", "HEARTBEAT", "GPUS");
  for (const NodeInfo& n : cluster.nodes) {
    std::string age = n.lastHeartbeat ? std::to_string(now - *n.lastHeartbeat) + "s ago" : "-";
    // Host and GPU names came from outside (a probe, an import, a hand edit): escaped, so that none can
    // forge a row or move the terminal's cursor.
    std::printf("%-16s %-8s %-7s %7d %5d %7d %10s %9s  %s\n", escapedForDisplay(n.host).c_str(),
                nodeStatusName(n.status), recordSourceName(n.source), n.sockets, n.cores, n.threads,
                formatGiB(n.memoryBytes).c_str(), age.c_str(), escapedForDisplay(gpuSummary(n)).c_str());
  }
  return 0;
}

// MPI for `--discover --cluster` only: a plain --discover must run without mpiexec.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv) { ok_ = MPI_Init(&argc, &argv) == MPI_SUCCESS; }
  ~MpiSession() {
    if (ok_) MPI_Finalize();
  }
  bool ok() const { return ok_; }

 private:
  bool ok_ = false;
};

// Records imported nodes in one transaction (with --replace, removing the others in it too) and says so.
int recordImport(const CommandLine& cl, const std::vector<NodeInfo>& nodes, const std::string& from,
                 ResourceDb::ImportRules rules, std::vector<NodeInfo>* recorded = nullptr) {
  std::string error;
  rules.removeOthers = cl.has("--replace");
  std::vector<std::string> removed;
  std::unique_ptr<ResourceDb> db = ResourceDb::open(cl.databasePath(), ResourceDb::OpenMode::CreateIfMissing, error);
  if (!db) return reportError(error);
  {
    ProgressLine progress("importing nodes");  // erased before the table below
    db->setWriteProgress([&progress](std::size_t written, std::size_t total) { progress.update(written, total); });
    const bool imported = db->importNodes(nodes, rules, recorded, &removed, error);
    db->setWriteProgress(nullptr);
    if (!imported) return reportError(error);
  }
  if (recorded)
    for (const NodeInfo& m : *recorded)
      std::printf("%-16s %-8s %3d CPUs %10s  %s%s\n", m.host.c_str(), nodeStatusName(m.status), m.threads,
                  formatGiB(m.memoryBytes).c_str(), gpuSummary(m).c_str(),
                  m.source == RecordSource::Probe ? "  (merged with the probed record)" : "");
  std::printf("imported %zu nodes from %s into %s", nodes.size(), from.c_str(),
              displayDatabaseName(cl.databasePath()).c_str());
  if (!removed.empty()) std::printf("; removed %zu", removed.size());
  std::printf("\n");
  return 0;
}

int importFromSlurm(const CommandLine& cl) {
  std::vector<NodeInfo> fromSlurm;
  std::string how, error;
  if (!slurm::queryNodes(fromSlurm, how, error)) return reportError(error);
  ResourceDb::ImportRules rules;
  rules.merge = slurm::mergeNode;
  rules.importedStatusWins = true;
  std::vector<NodeInfo> recorded;
  return recordImport(cl, fromSlurm, "Slurm (" + how + ")", rules, &recorded);
}

}  // namespace

int discoverCommand(const Args& args) {
  CommandLine cl;
  if (!cl.parse(kDiscoverSpec, args)) return kExitUsage;
  if (cl.helpRequested()) return 0;
  if (!cl.positional().empty()) return reportUsageError("--discover: unexpected argument '" + cl.positional()[0] + "'");
  ProbeOptions options;
  options.hostName = cl.value("--host");
  if (std::string why; cl.has("--host") && !checkHostName(options.hostName, why)) return reportError("--host: " + why);
  if (!cl.has("--cluster")) return discoverLocalNode(cl.databasePath(), options);
  if (cl.has("--host")) return reportError("--discover --cluster: --host is taken from each MPI rank");
  int argc = 0;
  char** argv = nullptr;
  MpiSession mpi(argc, argv);
  if (!mpi.ok()) return reportError("MPI_Init failed");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);  // errors reach DISPAR_MPI_CHECK
  return discoverClusterCollective(cl.databasePath(), options);
}

int daemonCommand(const Args& args) {
  CommandLine cl;
  if (!cl.parse(kDaemonSpec, args)) return kExitUsage;
  if (cl.helpRequested()) return 0;
  if (!cl.positional().empty()) return reportUsageError("daemon: unexpected argument '" + cl.positional()[0] + "'");
  DaemonOptions options;
  options.dbPath = cl.databasePath();
  std::optional<double> interval = cl.doubleValue("--interval", 30, 0.05, 86400);
  std::optional<double> probeInterval = cl.doubleValue("--probe-interval", 0, 0.05, 30 * 86400);
  std::optional<int> ttl = cl.intValue("--ttl", 0, 1, 30 * 86400);
  if (!interval || !probeInterval || !ttl) return kExitUsage;
  options.intervalSeconds = *interval;
  options.probeIntervalSeconds = *probeInterval;
  options.ttlSeconds = *ttl;
  options.pidFile = cl.value("--pidfile");
  options.probe.hostName = cl.value("--host");
  if (std::string why; cl.has("--host") && !checkHostName(options.probe.hostName, why))
    return reportError("--host: " + why);
  return runDaemon(options);
}

int nodesCommand(const Args& args) {
  CommandLine cl;
  if (!cl.parse(kNodesSpec, args)) return kExitUsage;
  if (cl.helpRequested()) return 0;
  if (!cl.positional().empty()) return reportUsageError("nodes: unexpected argument '" + cl.positional()[0] + "'");
  std::optional<int> ttl = cl.intValue("--ttl", 0, 1, 30 * 86400);
  if (!ttl) return kExitUsage;
  Cluster cluster;
  std::string error;
  if (!loadRecords(cl.databasePath(), *ttl, cluster, error)) return reportError(error);
  const std::int64_t now = std::time(nullptr);
  if (cl.has("--json")) {
    std::fputs(writeClusterJson(cluster, now).c_str(), stdout);
    return 0;
  }
  return printNodeTable(cluster, now);
}

int nodeCommand(const Args& args) {
  CommandLine cl;
  if (!cl.parse(kNodeSpec, args)) return kExitUsage;
  if (cl.helpRequested()) return 0;
  const auto& words = cl.positional();
  if (words.size() != 2 || (words[0] != "drain" && words[0] != "resume")) {
    CommandLine::printHelp(kNodeSpec, stderr);
    return reportUsageError(words.empty() || words[0] == "drain" || words[0] == "resume"
                                ? "node: expected 'drain HOST' or 'resume HOST'"
                                : "node: unknown subcommand '" + words[0] +
                                      "'; expected 'drain HOST' or 'resume HOST'");
  }
  std::string error;
  std::unique_ptr<ResourceDb> db = ResourceDb::open(cl.databasePath(), ResourceDb::OpenMode::Existing, error);
  const NodeStatus status = words[0] == "drain" ? NodeStatus::Drained : NodeStatus::Up;
  if (!db || !db->setStatus(words[1], status, error)) return reportError(error);
  std::printf("%s %s\n", words[1].c_str(), words[0] == "drain" ? "drained" : "resumed");
  return 0;
}

int clusterCommand(const Args& args) {
  CommandLine cl;
  if (!cl.parse(kClusterSpec, args)) return kExitUsage;
  if (cl.helpRequested()) return 0;
  const auto& words = cl.positional();
  std::string error;
  if (words.size() == 1 && words[0] == "import" && cl.has("--slurm")) return importFromSlurm(cl);
  if (words.size() == 2 && words[0] == "import" && !cl.has("--slurm")) {
    Cluster cluster;
    if (!readClusterJsonFile(words[1], cluster, error)) return reportError(error);
    for (NodeInfo& n : cluster.nodes) n.source = RecordSource::Import;
    return recordImport(cl, cluster.nodes, words[1], ResourceDb::ImportRules{});
  }
  if (words.size() == 1 && words[0] == "export") {
    std::optional<int> ttl = cl.intValue("--ttl", 0, 1, 30 * 86400);
    if (!ttl) return kExitUsage;
    Cluster cluster;
    if (!loadRecords(cl.databasePath(), *ttl, cluster, error)) return reportError(error);
    const std::string text = writeClusterJson(cluster);
    if (!cl.has("-o")) {
      std::fputs(text.c_str(), stdout);
      return 0;
    }
    if (!writeFileAtomically(cl.value("-o"), text, error)) return reportError(error);
    return 0;
  }
  CommandLine::printHelp(kClusterSpec, stderr);
  if (!words.empty() && words[0] != "import" && words[0] != "export")
    return reportUsageError("cluster: unknown subcommand '" + words[0] +
                            "'; expected 'import FILE.json', 'import --slurm' or 'export'");
  return reportUsageError("cluster: expected 'import FILE.json', 'import --slurm' or 'export'");
}

}  // namespace dispar::streammap
