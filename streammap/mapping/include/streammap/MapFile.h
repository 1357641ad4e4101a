// The files a mapping is written to (docs/streammap.md, "File formats"): app.map.json, the MPICH
// machinefile, the Open MPI hostfile and rankfile, and the Graphviz drawing.
#ifndef STREAMMAP_MAP_FILE_H
#define STREAMMAP_MAP_FILE_H

#include "dispar_lang/MapRank.h"
#include "streammap/Cluster.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dispar::streammap {

inline constexpr const char* kMapFormat = "dispar-map";
/// The version written. 2: a rank may run several instances ("ranks" holds one entry per instance, by
/// rank); version 1 files (one rank per instance) read as they are.
inline constexpr int kMapVersion = 2;
inline constexpr int kMapVersionOldest = 1;

/// Where the resources came from, so that `check` and `run` can read them again.
struct ClusterSource {
  enum class Kind { Database, File };
  Kind kind = Kind::Database;
  std::string path;
  int ttlSeconds = 0;  // database only; 0: the recorded TTLs
};

/// One VNODE instance of the map and the rank that runs it: declared once, with its reader, for streammap
/// and the runtime.
using RankRecord = lang::MapRank;

struct NodePrediction {
  std::string host;
  double cpu = 0, gpu = 0, net = 0;
};

struct MapRecord {
  std::string program;
  std::string rtgPath;
  std::string machinefile;
  std::string launcher = "mpich";  // "mpich" / "openmpi" / "slurm": the placement file written for
  std::string mpi = "mpich";       // the MPI the program was built for (from the RTG)
  std::string algorithm;           // "paper" / "refine"
  std::optional<std::uint64_t> seed;
  ClusterSource source;
  std::string clusterDigest;
  std::string costsDigest;  // costsDigest of the costs mapped with; empty in files before it
  Cluster cluster;          // the snapshot the mapping used
  std::vector<std::string> cudaArchs;
  std::string costModel;
  double period = 0;
  double crossBytes = 0;
  std::vector<NodePrediction> nodes;     // nodes with at least one rank, host order
  std::vector<RankRecord> ranks;         // one per instance, by rank (lang::checkRankLayout)
  std::vector<std::string> demandPipes;  // pipes dealt on demand by the mapping's choice ("demand_pipes")
};

/// Per MPI rank of `record`: the host of its instances (the launcher files have one entry per rank).
std::vector<std::string> hostsOfRanks(const MapRecord& record);

std::string writeMapJson(const MapRecord& record);
bool parseMapJson(const std::string& text, MapRecord& out, std::string& error);

/// MPICH machinefile: hosts in rank order, consecutive ranks on one host folded as "host:count".
std::string formatMpichMachinefile(const std::vector<std::string>& hostOfRank);
/// Open MPI hostfile: "host slots=N" per host, in order of first rank.
std::string formatOpenMpiHostfile(const std::vector<std::string>& hostOfRank);
/// Open MPI rankfile: "rank R=host slot=S" for a rank bound to one core, "slot=S-E" for a rank bound to
/// several (`boundCoresOfRank`, empty: one each); slots count each host's cores from 0 in rank order, and
/// wrap around modulo the host's cores (`coresOfRank`) once they are used up.
std::string formatOpenMpiRankfile(const std::vector<std::string>& hostOfRank, const std::vector<int>& coresOfRank,
                                  const std::vector<int>& boundCoresOfRank = {});
/// Slurm's SLURM_HOSTFILE for `srun --distribution=arbitrary`: one node name per rank, in rank order.
std::string formatSlurmHostfile(const std::vector<std::string>& hostOfRank);

/// The path beside `machinefile` with its stem and `suffix`: ("out/app.machinefile", ".map.json") ->
/// "out/app.map.json".
std::string siblingPath(const std::string& machinefile, const std::string& suffix);

}  // namespace dispar::streammap

#endif
