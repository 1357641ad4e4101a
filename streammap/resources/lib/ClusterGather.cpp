#include "streammap/Discovery.h"

#include "dispar_lang/ComputeCapability.h"
#include "streammap/ClusterJson.h"
#include "streammap/CommandLine.h"
#include "streammap/ProgressLine.h"
#include "streammap/ResourceDb.h"

#include <mpi.h>

#include <cstdlib>
#include <map>
#include <numeric>
#include <stdexcept>

namespace dispar::streammap {

namespace {

struct MpiFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The checked-call macro for MPI: names the call, the source position and MPI's error string.
#define DISPAR_MPI_CHECK(call)                                                                                         \
  do {                                                                                                                 \
    int rc_ = (call);                                                                                                  \
    if (rc_ != MPI_SUCCESS) {                                                                                          \
      char text_[MPI_MAX_ERROR_STRING];                                                                                \
      int length_ = 0;                                                                                                 \
      MPI_Error_string(rc_, text_, &length_);                                                                          \
      throw MpiFailure(std::string(#call) + " failed at " + __FILE__ + ":" + std::to_string(__LINE__) + ": " +         \
                       std::string(text_, length_));                                                                   \
    }                                                                                                                  \
  } while (0)

std::string plural(int n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

}  // namespace

std::string summarizeNode(const NodeInfo& node) {
  std::string speed;
  if (node.cpuSpeed != 1.0) {  // a CPU quota's share, or a described speed
    char text[32];
    std::snprintf(text, sizeof text, " at speed %g", node.cpuSpeed);
    speed = text;
  }
  std::string s = node.host + ": " + plural(node.sockets, "socket") + ", " + plural(node.cores, "core") + speed + ", " +
                  plural(node.threads, "thread") + ", " + formatGiB(node.memoryBytes) + ", " +
                  plural(static_cast<int>(node.numa.size()), "NUMA node") + ", " +
                  plural(static_cast<int>(node.gpus.size()), "GPU");
  if (!node.gpus.empty()) {
    // Group identical models: "2x Tesla K20 cc 3.5".
    std::map<std::string, int> models;
    for (const GpuInfo& g : node.gpus) ++models[g.name + " cc " + lang::formatComputeCapability(g.ccMajor, g.ccMinor)];
    std::string list;
    for (const auto& [model, count] : models) list += (list.empty() ? "" : ", ") + std::to_string(count) + "x " + model;
    s += " (" + list + ")";
  }
  return s;
}

int discoverLocalNode(const std::string& dbPath, const ProbeOptions& options) {
  ProbeResult probe = probeLocalNode(options);
  for (const std::string& w : probe.warnings) reportWarning(probe.node.host + ": " + w);
  std::string error;
  std::unique_ptr<ResourceDb> db = ResourceDb::open(dbPath, ResourceDb::OpenMode::CreateIfMissing, error);
  if (!db || !db->recordNode(probe.node, std::nullopt, nullptr, error)) return reportError(error);
  std::printf("discovered %s -> %s\n", summarizeNode(probe.node).c_str(), displayDatabaseName(dbPath).c_str());
  return 0;
}

std::string mpiRankHostName() {
  if (const char* name = std::getenv("MPIR_CVAR_CH3_INTERFACE_HOSTNAME"); name && *name) return name;
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  if (MPI_Get_processor_name(name, &length) == MPI_SUCCESS && length > 0) return std::string(name, length);
  return localHostName();
}

int discoverClusterCollective(const std::string& dbPath, const ProbeOptions& options) {
  int status = 0;
  try {
    int rank = 0, size = 1;
    DISPAR_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    DISPAR_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    ProbeOptions rankOptions = options;
    if (rankOptions.hostName.empty()) rankOptions.hostName = mpiRankHostName();
    ProbeResult probe = probeLocalNode(rankOptions);
    for (const std::string& w : probe.warnings) reportWarning(probe.node.host + ": " + w);

    // Each rank's node travels in the cluster description format: one format, one parser.
    const std::string mine = writeClusterJson(Cluster{{probe.node}});
    int mySize = static_cast<int>(mine.size());
    std::vector<int> sizes(rank == 0 ? size : 0);
    DISPAR_MPI_CHECK(MPI_Gather(&mySize, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD));
    std::vector<int> offsets(sizes.size(), 0);
    if (rank == 0) std::partial_sum(sizes.begin(), sizes.end() - 1, offsets.begin() + 1);
    std::string all(rank == 0 ? static_cast<std::size_t>(offsets.back() + sizes.back()) : 0, '\0');
    DISPAR_MPI_CHECK(MPI_Gatherv(mine.data(), mySize, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0,
                                 MPI_COMM_WORLD));

    if (rank == 0) {
      std::map<std::string, NodeInfo> byHost;  // sorted, and one record per host
      std::map<std::string, int> firstRank;
      for (int r = 0; r < size; ++r) {
        Cluster one;
        std::string error;
        if (!parseClusterJson(all.substr(offsets[r], sizes[r]), one, error) || one.nodes.size() != 1) {
          status = reportError("rank " + std::to_string(r) + " sent an unreadable probe: " + error);
          break;
        }
        NodeInfo& node = one.nodes.front();
        node.source = RecordSource::Probe;  // the transport format defaults to import
        if (auto it = firstRank.find(node.host); it != firstRank.end()) {
          reportWarning("ranks " + std::to_string(it->second) + " and " + std::to_string(r) + " both run on host " +
                        node.host + "; launch with one process per node (-ppn 1)");
          continue;
        }
        firstRank[node.host] = r;
        byHost[node.host] = std::move(node);
      }
      if (status == 0) {
        std::vector<NodeInfo> nodes;
        for (auto& [host, node] : byHost) nodes.push_back(std::move(node));
        std::vector<std::string> down;
        std::string error;
        std::unique_ptr<ResourceDb> db = ResourceDb::open(dbPath, ResourceDb::OpenMode::CreateIfMissing, error);
        bool recorded = false;
        if (db) {
          ProgressLine progress("recording nodes");
          db->setWriteProgress(
              [&progress](std::size_t written, std::size_t total) { progress.update(written, total); });
          recorded = db->recordNodes(nodes, /*markOthersDown=*/true, &down, error);
          db->setWriteProgress(nullptr);
        }
        if (!recorded) {
          status = reportError(error);
        } else {
          for (const NodeInfo& n : nodes) std::printf("discovered %s\n", summarizeNode(n).c_str());
          std::string downList;
          for (const std::string& h : down) downList += (downList.empty() ? "" : ", ") + h;
          std::printf("recorded %zu nodes in %s%s\n", nodes.size(), displayDatabaseName(dbPath).c_str(),
                      down.empty() ? "" : ("; marked down (did not answer): " + downList).c_str());
        }
      }
    }
    DISPAR_MPI_CHECK(MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD));
  } catch (const MpiFailure& failure) {
    return reportError(failure.what());
  }
  return status;
}

}  // namespace dispar::streammap
