// The cluster description format: {"format": "dispar-cluster", "version": 1, "nodes": [...]}.
// Reading is strict about types and unknown fields (a typo must not silently become a default) and
// names the offending field path in every error.
#include "streammap/ClusterJson.h"

#include "dispar_lang/ComputeCapability.h"
#include "dispar_lang/JsonLayout.h"
#include "dispar_lang/JsonRead.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace dispar::streammap {

namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kFormatName = "dispar-cluster";
constexpr int kFormatVersion = 1;

// Fields each object may hold. Read-only fields written by `streammap nodes --json` are accepted and
// ignored so that its output can be imported again.
const char* const kTopFields[] = {"format", "version", "nodes"};
const char* const kNodeFields[] = {"host",   "status",  "source", "last_heartbeat", "cpu", "memory_bytes", "numa",
                                   "caches", "network", "gpus",   "heartbeat_age_s"};
const char* const kCpuFields[] = {"sockets", "cores", "threads", "speed"};
const char* const kNumaFields[] = {"index", "memory_bytes"};
const char* const kCacheFields[] = {"level", "bytes", "count"};
const char* const kNetworkFields[] = {"bandwidth_bytes_per_s", "latency_s", "rank_latency_s", "thread_latency_s"};
const char* const kGpuFields[] = {"index",           "name",      "uuid",       "compute_capability", "memory_bytes",
                                  "multiprocessors", "clock_khz", "pci_bus_id", "numa_node",          "rate"};

struct ParseFailure {
  std::string message;
};

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw ParseFailure{path + ": " + what}; }

template <std::size_t N>
void checkFields(const Json& object, const std::string& path, const char* const (&allowed)[N]) {
  if (!object.is_object()) fail(path, "expected an object");
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool known =
        std::any_of(std::begin(allowed), std::end(allowed), [&](const char* name) { return it.key() == name; });
    if (!known) fail(path.empty() ? it.key() : path + "." + it.key(), "unknown field");
  }
}

std::string join(const std::string& path, const char* key) {
  return path.empty() ? std::string(key) : path + "." + key;
}

const Json* member(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

std::int64_t readInteger(const Json& value, const std::string& path, std::int64_t min, std::int64_t max) {
  std::int64_t v = 0;
  std::string problem;
  if (!lang::jsonInteger(value, min, max, v, problem)) fail(path, problem);
  return v;
}

int readInt(const Json& object, const char* key, const std::string& path, int fallback, int min,
            int max = std::numeric_limits<int>::max()) {
  const Json* v = member(object, key);
  if (!v) return fallback;
  return static_cast<int>(readInteger(*v, join(path, key), min, max));
}

/// A byte count: at most the largest signed 64-bit value (the resource database stores byte counts as SQL
/// integers), or `max` where NodeLimits bounds it.
std::uint64_t readBytes(const Json& object, const char* key, const std::string& path, std::uint64_t fallback,
                        std::uint64_t max = std::numeric_limits<std::int64_t>::max()) {
  const Json* v = member(object, key);
  if (!v) return fallback;
  std::uint64_t bytes = 0;
  std::string problem;
  if (!lang::jsonUnsigned(*v, max, bytes, problem)) fail(join(path, key), problem);
  return bytes;
}

std::optional<double> readPositiveDouble(const Json& object, const char* key, const std::string& path) {
  const Json* v = member(object, key);
  if (!v) return std::nullopt;
  double d = 0;
  std::string problem;
  if (!lang::jsonNumber(*v, d, problem)) fail(join(path, key), problem);
  if (!(d > 0)) fail(join(path, key), "must be a positive number, got " + lang::shownJson(*v));
  return d;
}

// A message latency: a positive number of seconds, at most NodeLimits::kMaxLatencySeconds (1).
std::optional<double> readLatency(const Json& object, const char* key, const std::string& path) {
  const std::optional<double> seconds = readPositiveDouble(object, key, path);
  if (seconds && *seconds > NodeLimits::kMaxLatencySeconds)
    fail(join(path, key), "must be at most 1 (a second per message), got " + lang::shownJson(*member(object, key)));
  return seconds;
}

std::string readString(const Json& object, const char* key, const std::string& path, const std::string& fallback) {
  const Json* v = member(object, key);
  if (!v) return fallback;
  if (!v->is_string()) fail(join(path, key), "expected a string, got " + lang::shownJson(*v));
  return v->get<std::string>();
}

void readComputeCapability(const Json& gpu, const std::string& path, GpuInfo& out) {
  const Json* v = member(gpu, "compute_capability");
  if (!v) return;
  const std::string field = join(path, "compute_capability");
  if (!v->is_string()) fail(field, "expected \"MAJOR.MINOR\"");
  int major = 0, minor = 0;
  if (!lang::parseComputeCapability(v->get<std::string>(), major, minor)) fail(field, "expected \"MAJOR.MINOR\"");
  out.ccMajor = major;
  out.ccMinor = minor;
}

GpuInfo readGpu(const Json& json, const std::string& path, int position) {
  checkFields(json, path, kGpuFields);
  GpuInfo gpu;
  gpu.index = readInt(json, "index", path, position, 0, NodeLimits::kMaxGpus - 1);
  gpu.name = readString(json, "name", path, "");
  gpu.uuid = readString(json, "uuid", path, "");
  readComputeCapability(json, path, gpu);
  gpu.memoryBytes = readBytes(json, "memory_bytes", path, 0, NodeLimits::kMaxMemoryBytes);
  gpu.multiprocessors = readInt(json, "multiprocessors", path, 0, 0);
  gpu.clockKHz = readInt(json, "clock_khz", path, 0, 0);
  gpu.pciBusId = readString(json, "pci_bus_id", path, "");
  gpu.numaNode = readInt(json, "numa_node", path, -1, -1);
  gpu.measuredRate = readPositiveDouble(json, "rate", path);
  return gpu;
}

const Json& readArray(const Json& object, const char* key, const std::string& path) {
  static const Json kEmpty = Json::array();
  const Json* v = member(object, key);
  if (!v) return kEmpty;
  if (!v->is_array()) fail(join(path, key), "expected an array");
  return *v;
}

NodeInfo readNode(const Json& json, const std::string& path) {
  checkFields(json, path, kNodeFields);
  NodeInfo node;
  const Json* host = member(json, "host");
  if (!host) fail(join(path, "host"), "missing required field");
  if (!host->is_string() || host->get<std::string>().empty()) fail(join(path, "host"), "expected a non-empty string");
  node.host = host->get<std::string>();
  if (std::string why; !checkHostName(node.host, why)) fail(join(path, "host"), why);

  const std::string status = readString(json, "status", path, "up");
  if (!parseNodeStatus(status, node.status))
    fail(join(path, "status"), "expected \"up\", \"down\" or \"drained\", got \"" + status + "\"");
  const std::string source = readString(json, "source", path, "import");
  if (!parseRecordSource(source, node.source))
    fail(join(path, "source"), "expected \"probe\" or \"import\", got \"" + source + "\"");
  if (const Json* hb = member(json, "last_heartbeat"))
    node.lastHeartbeat = readInteger(*hb, join(path, "last_heartbeat"), 0, std::numeric_limits<std::int64_t>::max());

  const std::string cpuPath = join(path, "cpu");
  const Json* cpu = member(json, "cpu");
  if (!cpu) fail(join(cpuPath, "cores"), "missing required field");
  checkFields(*cpu, cpuPath, kCpuFields);
  if (!member(*cpu, "cores")) fail(join(cpuPath, "cores"), "missing required field");
  node.cores = readInt(*cpu, "cores", cpuPath, 1, 1, NodeLimits::kMaxHardwareThreads);
  node.sockets = readInt(*cpu, "sockets", cpuPath, 1, 1, NodeLimits::kMaxSockets);
  node.threads = readInt(*cpu, "threads", cpuPath, node.cores, 1, NodeLimits::kMaxHardwareThreads);
  if (node.threads < node.cores) fail(join(cpuPath, "threads"), "fewer hardware threads than cores");
  node.cpuSpeed = readPositiveDouble(*cpu, "speed", cpuPath).value_or(1.0);

  const Json& numa = readArray(json, "numa", path);
  std::set<int> numaIndices;
  std::uint64_t numaTotal = 0;
  for (std::size_t i = 0; i < numa.size(); ++i) {
    const std::string p = join(path, "numa") + "[" + std::to_string(i) + "]";
    checkFields(numa[i], p, kNumaFields);
    NumaInfo info;
    info.index = readInt(numa[i], "index", p, static_cast<int>(i), 0);
    info.memoryBytes = readBytes(numa[i], "memory_bytes", p, 0, NodeLimits::kMaxMemoryBytes);
    if (!numaIndices.insert(info.index).second)
      fail(join(p, "index"), "duplicate NUMA index " + std::to_string(info.index));
    if (info.memoryBytes > NodeLimits::kMaxMemoryBytes - numaTotal)
      fail(join(p, "memory_bytes"),
           "NUMA memory totals more than " + std::to_string(NodeLimits::kMaxMemoryBytes) + " bytes");
    numaTotal += info.memoryBytes;
    node.numa.push_back(info);
  }
  node.memoryBytes = readBytes(json, "memory_bytes", path, numaTotal, NodeLimits::kMaxMemoryBytes);

  const Json& caches = readArray(json, "caches", path);
  for (std::size_t i = 0; i < caches.size(); ++i) {
    const std::string p = join(path, "caches") + "[" + std::to_string(i) + "]";
    checkFields(caches[i], p, kCacheFields);
    CacheInfo info;
    if (!member(caches[i], "level")) fail(join(p, "level"), "missing required field");
    info.level = readInt(caches[i], "level", p, 1, 1, 8);
    info.bytes = readBytes(caches[i], "bytes", p, 0);
    info.count = readInt(caches[i], "count", p, 1, 1);
    node.caches.push_back(info);
  }

  if (const Json* network = member(json, "network")) {
    checkFields(*network, join(path, "network"), kNetworkFields);
    const std::string networkPath = join(path, "network");
    node.bandwidthBytesPerSec = readPositiveDouble(*network, "bandwidth_bytes_per_s", networkPath);
    node.latencySeconds = readLatency(*network, "latency_s", networkPath);
    node.rankLatencySeconds = readLatency(*network, "rank_latency_s", networkPath);
    node.threadLatencySeconds = readLatency(*network, "thread_latency_s", networkPath);
  }

  const Json& gpus = readArray(json, "gpus", path);
  if (gpus.size() > static_cast<std::size_t>(NodeLimits::kMaxGpus))
    fail(join(path, "gpus"), std::to_string(gpus.size()) + " GPUs, more than the limit of " +
                                 std::to_string(NodeLimits::kMaxGpus) + " per node");
  std::set<int> gpuIndices;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::string p = join(path, "gpus") + "[" + std::to_string(i) + "]";
    GpuInfo gpu = readGpu(gpus[i], p, static_cast<int>(i));
    if (!gpuIndices.insert(gpu.index).second)
      fail(join(p, "index"), "duplicate GPU index " + std::to_string(gpu.index));
    node.gpus.push_back(std::move(gpu));
  }
  std::sort(node.gpus.begin(), node.gpus.end(), [](const GpuInfo& a, const GpuInfo& b) { return a.index < b.index; });
  return node;
}

// Written member by member (lang::JsonLayoutWriter) in the layout of dump(2): a 10,000-node description
// is written into every map.json, and through a DOM that took a fifth of a large `streammap map`.
void writeNode(lang::JsonLayoutWriter& json, const NodeInfo& node, std::optional<std::int64_t> now) {
  json.beginObject();
  json.string("host", node.host);
  json.string("status", nodeStatusName(node.status));
  json.string("source", recordSourceName(node.source));
  json.optional("last_heartbeat", node.lastHeartbeat);
  if (now && node.lastHeartbeat) json.integer("heartbeat_age_s", *now - *node.lastHeartbeat);
  json.beginObject("cpu");
  json.integer("sockets", node.sockets);
  json.integer("cores", node.cores);
  json.integer("threads", node.threads);
  json.number("speed", node.cpuSpeed);
  json.endObject();
  json.integer("memory_bytes", node.memoryBytes);
  json.beginArray("numa");
  for (const NumaInfo& n : node.numa) {
    json.beginObject();
    json.integer("index", n.index);
    json.integer("memory_bytes", n.memoryBytes);
    json.endObject();
  }
  json.endArray();
  json.beginArray("caches");
  for (const CacheInfo& c : node.caches) {
    json.beginObject();
    json.integer("level", c.level);
    json.integer("bytes", c.bytes);
    json.integer("count", c.count);
    json.endObject();
  }
  json.endArray();
  json.beginObject("network");
  json.optional("bandwidth_bytes_per_s", node.bandwidthBytesPerSec);
  json.optional("latency_s", node.latencySeconds);
  json.optional("rank_latency_s", node.rankLatencySeconds);
  json.optional("thread_latency_s", node.threadLatencySeconds);
  json.endObject();
  json.beginArray("gpus");
  for (const GpuInfo& g : node.gpus) {
    json.beginObject();
    json.integer("index", g.index);
    json.string("name", g.name);
    json.string("uuid", g.uuid);
    json.string("compute_capability", lang::formatComputeCapability(g.ccMajor, g.ccMinor));
    json.integer("memory_bytes", g.memoryBytes);
    json.integer("multiprocessors", g.multiprocessors);
    json.integer("clock_khz", g.clockKHz);
    json.string("pci_bus_id", g.pciBusId);
    json.integer("numa_node", g.numaNode);
    json.optional("rate", g.measuredRate);
    json.endObject();
  }
  json.endArray();
  json.endObject();
}

void write(lang::JsonLayoutWriter& json, const char* key, const Cluster& cluster, std::optional<std::int64_t> now) {
  std::vector<const NodeInfo*> sorted;
  for (const NodeInfo& n : cluster.nodes) sorted.push_back(&n);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const NodeInfo* a, const NodeInfo* b) { return a->host < b->host; });
  json.beginObject(key);
  json.string("format", kFormatName);
  json.integer("version", kFormatVersion);
  json.beginArray("nodes");
  for (const NodeInfo* n : sorted) writeNode(json, *n, now);
  json.endArray();
  json.endObject();
}

std::string write(const Cluster& cluster, std::optional<std::int64_t> now) {
  std::string out;
  out.reserve(kWrittenNodeBytes * cluster.nodes.size() + 256);
  lang::JsonLayoutWriter json(out);
  write(json, nullptr, cluster, now);
  out += '\n';
  return out;
}

}  // namespace

std::string writeClusterJson(const Cluster& cluster) { return write(cluster, std::nullopt); }

std::string writeClusterJson(const Cluster& cluster, std::int64_t now) { return write(cluster, now); }

void writeClusterJson(lang::JsonLayoutWriter& json, const char* key, const Cluster& cluster) {
  write(json, key, cluster, std::nullopt);
}

namespace {

// The top level's checks: its fields, the format and version; returns the nodes array.
const Json& checkTop(const Json& root) {
  if (!root.is_object()) fail("top level", "expected an object");
  checkFields(root, "", kTopFields);
  const Json* format = member(root, "format");
  if (!format || !format->is_string() || format->get<std::string>() != kFormatName)
    fail("format", std::string("expected \"") + kFormatName + "\"");
  const Json* version = member(root, "version");
  if (!version) fail("version", "missing required field");
  std::int64_t v = readInteger(*version, "version", 1, std::numeric_limits<int>::max());
  if (v > kFormatVersion)
    fail("version", "cluster description version " + std::to_string(v) + " is newer than this streammap understands (" +
                        std::to_string(kFormatVersion) + ")");
  const Json* nodes = member(root, "nodes");
  if (!nodes) fail("nodes", "missing required field");
  if (!nodes->is_array()) fail("nodes", "expected an array");
  return *nodes;
}

Cluster sortedByHost(std::vector<NodeInfo> nodes) {
  std::sort(nodes.begin(), nodes.end(), [](const NodeInfo& a, const NodeInfo& b) { return a.host < b.host; });
  return Cluster{std::move(nodes)};
}

// The whole document at once: the reference reader, whose messages every error gets.
bool parseWhole(const std::string& text, Cluster& out, std::string& error) {
  Json root;
  if (!lang::parseJson(text, root, error)) return false;
  try {
    const Json& nodes = checkTop(root);
    std::vector<NodeInfo> read;
    std::set<std::string> hosts;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const std::string path = "nodes[" + std::to_string(i) + "]";
      NodeInfo node = readNode(nodes[i], path);
      if (!hosts.insert(node.host).second) fail(path + ".host", "duplicate host '" + node.host + "'");
      read.push_back(std::move(node));
    }
    out = sortedByHost(std::move(read));
    return true;
  } catch (const ParseFailure& f) {
    error = f.message;
    return false;
  } catch (const nlohmann::json::exception& e) {
    error = std::string("invalid cluster description: ") + e.what();
    return false;
  }
}

// The description streamed (lang::streamJson): the header members as a small document, each node as a
// document of its own read by readNode as soon as it closes, so that a 10,000-node description (8 MB,
// embedded in every map.json) never becomes one DOM. It only takes valid descriptions: at the first
// fault it gives up and parseWhole reads the text again, for that reader's message.
class ClusterStream {
 public:
  explicit ClusterStream(std::size_t textBytes) : textBytes_(textBytes) {}

  void scalar(Json&& v) {
    if (building_) {
      if (builder_.scalar(std::move(v))) built();
    } else if (depth_ == 1 && topObject_) {
      header_[topKey_] = std::move(v);
    } else {
      usable_ = false;  // a scalar document, or a scalar among the nodes
    }
  }

  void start(bool array, std::size_t objects) {
    ++depth_;
    if (building_) {
      builder_.start(array);
    } else if (depth_ == 1) {
      topObject_ = !array;
      usable_ = usable_ && topObject_;
    } else if (depth_ == 2 && topKey_ == "nodes" && array) {
      inNodes_ = true;
      nodes_.clear();  // a repeated key keeps its last value, as in the document
      hosts_.clear();
      nodes_.reserve(lang::json_read_detail::reservableRecords(objects, textBytes_, sizeof(NodeInfo)));
      header_["nodes"] = Json::array();  // present and an array, for checkTop
    } else if (depth_ == 2 || (depth_ == 3 && inNodes_)) {
      building_ = true;
      builder_.begin(depth_ == 2 ? header_[topKey_] : node_);
      builder_.start(array);
    }
  }

  void end() {
    if (building_ && builder_.end()) built();
    if (depth_ == 2) inNodes_ = false;
    --depth_;
  }

  void key(const std::string& k) {
    if (building_)
      builder_.key(k);
    else if (depth_ == 1)
      topKey_ = k;
  }

  /// The cluster, when the stream met no fault; false: read the text whole for the message.
  bool finish(Cluster& out) {
    if (!usable_) return false;
    try {
      checkTop(header_);
      out = sortedByHost(std::move(nodes_));
      return true;
    } catch (const ParseFailure&) {
      return false;
    } catch (const nlohmann::json::exception&) {
      return false;
    }
  }

 private:
  void built() {
    building_ = false;
    if (!inNodes_ || depth_ != 3 || !usable_) return;
    try {
      NodeInfo node = readNode(node_, "nodes[" + std::to_string(nodes_.size()) + "]");
      if (!hosts_.insert(node.host).second) usable_ = false;  // a duplicate host
      nodes_.push_back(std::move(node));
    } catch (const ParseFailure&) {
      usable_ = false;
    } catch (const nlohmann::json::exception&) {
      usable_ = false;
    }
  }

  std::size_t textBytes_;
  int depth_ = 0;
  bool topObject_ = false, usable_ = true, inNodes_ = false, building_ = false;
  std::string topKey_;
  Json header_ = Json::object();
  Json node_;
  lang::JsonBuilder<Json> builder_;
  std::vector<NodeInfo> nodes_;
  std::set<std::string> hosts_;
};

}  // namespace

bool parseClusterJson(const std::string& text, Cluster& out, std::string& error) {
  ClusterStream stream(text.size());
  std::string streamError;
  if (lang::streamJson<Json>(text, stream, streamError) && stream.finish(out)) return true;
  return parseWhole(text, out, error);
}

bool readClusterJsonFile(const std::string& path, Cluster& out, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = escapedForDisplay(path) + ": cannot read cluster description";
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    error = escapedForDisplay(path) + ": cannot read cluster description";
    return false;
  }
  if (!parseClusterJson(text.str(), out, error)) {
    error = escapedForDisplay(path) + ": " + error;
    return false;
  }
  return true;
}

}  // namespace dispar::streammap
