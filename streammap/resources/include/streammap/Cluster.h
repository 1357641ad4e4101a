// The cluster model: what the resource database holds and what the mapper places vertices on.
// Its JSON form (docs/streammap.md, "Cluster description") is what `streammap nodes --json` prints,
// `streammap cluster import|export` read and write, and `streammap map --cluster FILE` reads.
#ifndef STREAMMAP_CLUSTER_H
#define STREAMMAP_CLUSTER_H

#include "dispar_lang/DisplayText.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dispar::streammap {

enum class NodeStatus { Up, Down, Drained };
const char* nodeStatusName(NodeStatus s);  // "up" / "down" / "drained"
/// The inverse of nodeStatusName; false for any other word.
bool parseNodeStatus(const std::string& word, NodeStatus& out);

/// How a record got into the database.
enum class RecordSource { Probe, Import };
const char* recordSourceName(RecordSource s);  // "probe" / "import"
/// The inverse of recordSourceName; false for any other word.
bool parseRecordSource(const std::string& word, RecordSource& out);

/// `text` (a path, a host, GPU or VNODE name, anything that came from outside) as one printable line
/// (dispar_lang/DisplayText.h, shared with disparcc and the runtime).
using lang::escapedForDisplay;

/// The one host-name rule, applied wherever a name enters (probe, --host, cluster files, Slurm, the
/// database) and before any launcher file is written: 1 to 253 characters of letters, digits, '.', '-'
/// and '_', starting with a letter or digit. Anything else could change what a machinefile, hostfile or
/// rankfile says (`n1\nevil:64`, `#n1`). False with `why` saying what is wrong, the name escaped.
bool checkHostName(const std::string& name, std::string& why);

/// The sanity bounds of one node record, wherever it comes from (a probe, a cluster file, a Slurm import):
/// a value beyond them is a typo or a wrapped number, not a machine, and is refused naming the node and
/// field rather than stored. docs/streammap.md ("Node limits") lists them.
struct NodeLimits {
  static constexpr int kMaxHardwareThreads = 65536;             // cores and threads per node
  static constexpr int kMaxSockets = 1024;                      // per node
  static constexpr int kMaxGpus = 256;                          // per node; also the largest GPU index + 1
  static constexpr std::uint64_t kMaxMemoryBytes = 1ULL << 50;  // 1 PiB, node or GPU memory
  static constexpr double kMaxLatencySeconds = 1.0;             // a message's latency, any of the three
};

/// A memory size as the resource commands print it: "31.3 GiB".
std::string formatGiB(std::uint64_t bytes);

struct GpuInfo {
  int index = 0;  // CUDA device ordinal on its node
  std::string name;
  std::string uuid;
  int ccMajor = 0;  // compute capability
  int ccMinor = 0;
  std::uint64_t memoryBytes = 0;
  int multiprocessors = 0;
  int clockKHz = 0;
  std::string pciBusId;
  int numaNode = -1;                   // -1: unknown
  std::optional<double> measuredRate;  // relative throughput measured on this GPU, if any
};

struct CacheInfo {
  int level = 0;
  std::uint64_t bytes = 0;
  int count = 0;  // instances on the node
};

struct NumaInfo {
  int index = 0;
  std::uint64_t memoryBytes = 0;
};

struct NodeInfo {
  std::string host;
  int sockets = 1;
  int cores = 1;    // physical cores
  int threads = 1;  // hardware threads
  std::uint64_t memoryBytes = 0;
  std::vector<NumaInfo> numa;
  std::vector<CacheInfo> caches;
  std::vector<GpuInfo> gpus;
  double cpuSpeed = 1.0;                       // relative speed of one core (1.0 unless measured or described)
  std::optional<double> bandwidthBytesPerSec;  // network bandwidth; mapper default 1.25e9
  // One message's latency, in seconds (the cost model's per-message term; defaults in MappingProblem.h):
  std::optional<double> latencySeconds;        // on the network to another node, beyond rankLatencySeconds
  std::optional<double> rankLatencySeconds;    // between two MPI ranks of this node
  std::optional<double> threadLatencySeconds;  // between two instances of one rank (an in-memory queue)
  NodeStatus status = NodeStatus::Up;
  RecordSource source = RecordSource::Probe;
  std::optional<std::int64_t> lastHeartbeat;  // unix seconds
};

/// Whether `node` is within NodeLimits; false with `why` naming the field and the limit. The readers check
/// each field as they read it (so that their errors carry a path or line); this is the check for records
/// made in code, such as a probe's.
bool checkNodeLimits(const NodeInfo& node, std::string& why);

struct Cluster {
  std::vector<NodeInfo> nodes;  // sorted by host name
};

}  // namespace dispar::streammap

#endif
