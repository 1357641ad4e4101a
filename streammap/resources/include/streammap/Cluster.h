// The cluster model: what the resource database holds and what the mapper places vertices on.
// Its JSON form (docs/streammap.md, "Cluster description") is what `streammap nodes --json` prints,
// `streammap cluster import|export` read and write, and `streammap map --cluster FILE` reads.
#ifndef STREAMMAP_CLUSTER_H
#define STREAMMAP_CLUSTER_H

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

/// `text` (a path, a host, GPU or VNODE name, anything that came from outside) as one printable line:
/// control and non-ASCII bytes as \n, \t or \xHH, a backslash as \\, so that no value can forge a line of
/// a table, a comment or a message, or move a terminal's cursor. The one function every printer of such
/// a value uses.
std::string escapedForDisplay(const std::string& text);

/// The one host-name rule, applied wherever a name enters (probe, --host, cluster files, Slurm, the
/// database) and before any launcher file is written: 1 to 253 characters of letters, digits, '.', '-'
/// and '_', starting with a letter or digit. Anything else could change what a machinefile, hostfile or
/// rankfile says (`n1\nevil:64`, `#n1`). False with `why` saying what is wrong, the name escaped.
bool checkHostName(const std::string& name, std::string& why);

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
  NodeStatus status = NodeStatus::Up;
  RecordSource source = RecordSource::Probe;
  std::optional<std::int64_t> lastHeartbeat;  // unix seconds
};

struct Cluster {
  std::vector<NodeInfo> nodes;  // sorted by host name
};

}  // namespace dispar::streammap

#endif
