#include "streammap/MapFile.h"

#include "streammap/ResourceDb.h"

#include "streammap/ClusterJson.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dispar::streammap {

using nlohmann::ordered_json;

namespace {

const char* sourceKindName(ClusterSource::Kind kind) {
  return kind == ClusterSource::Kind::File ? "file" : "database";
}

// A JSON string literal (RFC 8259 escaping).
void appendString(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void appendNumber(std::string& out, double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  out += buffer;
  if (std::strpbrk(buffer, ".eEni") == nullptr) out += ".0";  // stays a JSON float
}

// JSON in nlohmann::json::dump(2)'s layout, written member by member: each member knows whether it
// is its container's first, so commas and indentation live in one place.
class LayoutWriter {
 public:
  explicit LayoutWriter(std::string& out) : out_(out) {}

  void beginObject(const char* key = nullptr) { open(key, '{'); }
  void endObject() { close('}'); }
  void beginArray(const char* key = nullptr) { open(key, '['); }
  void endArray() { close(']'); }

  void string(const char* key, const std::string& value) {
    member(key);
    appendString(out_, value);
  }
  void number(const char* key, double value) {
    member(key);
    appendNumber(out_, value);
  }
  template <class T>
  void integer(const char* key, T value) {
    member(key);
    out_ += std::to_string(value);
  }
  template <class T>
  void optional(const char* key, const std::optional<T>& value) {
    member(key);
    out_ += value ? std::to_string(*value) : std::string("null");
  }
  /// A value already written in dump(2)'s layout at the top level, indented to sit here.
  void embedded(const char* key, std::string json) {
    member(key);
    while (!json.empty() && json.back() == '\n') json.pop_back();
    const std::string indent(2 * empty_.size(), ' ');
    for (char c : json) {
      out_ += c;
      if (c == '\n') out_ += indent;
    }
  }

 private:
  // Before a member: the separator from the previous one (or the opening's newline), the indent, the key.
  void member(const char* key) {
    if (empty_.empty()) return;  // the top-level value
    out_ += empty_.back() ? "\n" : ",\n";
    empty_.back() = false;
    out_.append(2 * empty_.size(), ' ');
    if (key != nullptr) appendKey(key);
  }
  void appendKey(const char* key) {
    out_ += '"';
    out_ += key;
    out_ += "\": ";
  }
  void open(const char* key, char bracket) {
    member(key);
    out_ += bracket;
    empty_.push_back(true);
  }
  void close(char bracket) {
    const bool wasEmpty = empty_.back();
    empty_.pop_back();
    if (!wasEmpty) {
      out_ += '\n';
      out_.append(2 * empty_.size(), ' ');
    }
    out_ += bracket;
  }

  std::string& out_;
  std::vector<bool> empty_;  // per open container: no member written yet
};

}  // namespace

// Written by hand rather than through a JSON DOM: a 100,000-rank map is 30 MB, and the DOM would cost
// seconds and hundreds of MB. The layout is what nlohmann::json::dump(2) produces.
std::string writeMapJson(const MapRecord& r) {
  std::string out;
  out.reserve(256 * r.ranks.size() + 4096);
  LayoutWriter json(out);
  json.beginObject();
  json.string("format", kMapFormat);
  json.integer("version", kMapVersion);
  json.string("program", r.program);
  json.string("rtg", r.rtgPath);
  json.string("machinefile", r.machinefile);
  json.string("launcher", r.launcher);
  json.string("mpi", r.mpi);
  json.string("algorithm", r.algorithm);
  json.optional("seed", r.seed);
  json.beginObject("cluster_source");
  json.string("kind", sourceKindName(r.source.kind));
  // Never a password: a PostgreSQL connection string is written without it (pass it through ~/.pgpass).
  json.string("path", r.source.kind == ClusterSource::Kind::Database ? displayDatabaseName(r.source.path)
                                                                       : r.source.path);
  json.integer("ttl_seconds", r.source.ttlSeconds);
  json.endObject();
  json.string("cluster_digest", r.clusterDigest);
  json.beginArray("cuda_archs");
  for (const std::string& arch : r.cudaArchs) json.string(nullptr, arch);
  json.endArray();
  json.string("cost_model", r.costModel);
  json.beginObject("predicted");
  json.number("period", r.period);
  json.number("cross_bytes", r.crossBytes);
  json.beginArray("nodes");
  for (const NodePrediction& n : r.nodes) {
    json.beginObject();
    json.string("host", n.host);
    json.number("cpu", n.cpu);
    json.number("gpu", n.gpu);
    json.number("net", n.net);
    json.endObject();
  }
  json.endArray();
  json.endObject();
  json.beginArray("ranks");
  for (const RankRecord& k : r.ranks) {
    json.beginObject();
    json.integer("rank", k.rank);
    json.string("vnode", k.vnode);
    json.integer("replica", k.replica);
    json.string("type", k.type);
    json.string("host", k.host);
    json.optional("device", k.device);
    json.string("mode", k.mode);
    json.number("time", k.time);
    json.optional("memory", k.memory);
    json.endObject();
  }
  json.endArray();
  // The snapshot: the cluster description, indented one level.
  json.embedded("cluster", writeClusterJson(r.cluster));
  json.endObject();
  out += '\n';
  return out;
}

bool parseMapJson(const std::string& text, MapRecord& out, std::string& error) {
  ordered_json doc;
  try {
    doc = ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    error = std::string("not valid JSON: ") + e.what();
    return false;
  }
  MapRecord r;
  std::string field;
  try {
    field = "format";
    if (doc.at("format").get<std::string>() != kMapFormat) {
      error = "map.format: expected \"dispar-map\"";
      return false;
    }
    field = "version";
    if (doc.at("version").get<int>() != kMapVersion) {
      error = "map.version: unsupported version " + doc.at("version").dump() + " (this tool reads version " +
              std::to_string(kMapVersion) + ")";
      return false;
    }
    field = "program";
    r.program = doc.at("program").get<std::string>();
    field = "rtg";
    r.rtgPath = doc.at("rtg").get<std::string>();
    field = "machinefile";
    r.machinefile = doc.at("machinefile").get<std::string>();
    field = "launcher";
    r.launcher = doc.at("launcher").get<std::string>();
    field = "mpi";  // absent in maps written before Open MPI builds: MPICH
    if (doc.contains("mpi")) r.mpi = doc.at("mpi").get<std::string>();
    field = "algorithm";
    r.algorithm = doc.at("algorithm").get<std::string>();
    field = "seed";
    if (!doc.at("seed").is_null()) r.seed = doc.at("seed").get<std::uint64_t>();
    field = "cluster_source";
    const ordered_json& source = doc.at("cluster_source");
    const std::string kind = source.at("kind").get<std::string>();
    if (kind != "file" && kind != "database") {
      error = "map.cluster_source.kind: expected \"database\" or \"file\", got \"" + kind + "\"";
      return false;
    }
    r.source.kind = kind == "file" ? ClusterSource::Kind::File : ClusterSource::Kind::Database;
    r.source.path = source.at("path").get<std::string>();
    r.source.ttlSeconds = source.at("ttl_seconds").get<int>();
    field = "cluster_digest";
    r.clusterDigest = doc.at("cluster_digest").get<std::string>();
    field = "cuda_archs";
    r.cudaArchs = doc.at("cuda_archs").get<std::vector<std::string>>();
    field = "cost_model";
    r.costModel = doc.at("cost_model").get<std::string>();
    field = "predicted";
    const ordered_json& predicted = doc.at("predicted");
    r.period = predicted.at("period").get<double>();
    r.crossBytes = predicted.at("cross_bytes").get<double>();
    for (const ordered_json& n : predicted.at("nodes"))
      r.nodes.push_back(NodePrediction{n.at("host").get<std::string>(), n.at("cpu").get<double>(),
                                       n.at("gpu").get<double>(), n.at("net").get<double>()});
    field = "ranks";
    for (const ordered_json& j : doc.at("ranks")) {
      RankRecord k;
      k.rank = j.at("rank").get<int>();
      if (k.rank != static_cast<int>(r.ranks.size())) {
        error = "map.ranks[" + std::to_string(r.ranks.size()) + "].rank: expected " + std::to_string(r.ranks.size());
        return false;
      }
      k.vnode = j.at("vnode").get<std::string>();
      k.replica = j.at("replica").get<int>();
      k.type = j.at("type").get<std::string>();
      k.host = j.at("host").get<std::string>();
      if (!j.at("device").is_null()) k.device = j.at("device").get<int>();
      k.mode = j.at("mode").get<std::string>();
      k.time = j.at("time").get<double>();
      if (!j.at("memory").is_null()) k.memory = j.at("memory").get<std::uint64_t>();
      r.ranks.push_back(std::move(k));
    }
    field = "cluster";
    std::string clusterError;
    if (!parseClusterJson(doc.at("cluster").dump(), r.cluster, clusterError)) {
      error = "map.cluster: " + clusterError;
      return false;
    }
  } catch (const nlohmann::json::exception& e) {
    error = "map." + field + ": missing or wrong type (" + e.what() + ")";
    return false;
  }
  out = std::move(r);
  return true;
}

std::string formatMpichMachinefile(const std::vector<std::string>& hostOfRank) {
  std::string text;
  for (std::size_t i = 0; i < hostOfRank.size();) {
    std::size_t j = i;
    while (j < hostOfRank.size() && hostOfRank[j] == hostOfRank[i]) ++j;
    text += hostOfRank[i] + ":" + std::to_string(j - i) + "\n";
    i = j;
  }
  return text;
}

std::string formatSlurmHostfile(const std::vector<std::string>& hostOfRank) {
  std::string text;
  for (const std::string& host : hostOfRank) text += host + "\n";
  return text;
}

std::string formatOpenMpiHostfile(const std::vector<std::string>& hostOfRank) {
  std::vector<std::string> order;
  std::map<std::string, int> slots;
  for (const std::string& host : hostOfRank)
    if (slots[host]++ == 0) order.push_back(host);
  std::string text;
  for (const std::string& host : order) text += host + " slots=" + std::to_string(slots[host]) + "\n";
  return text;
}

std::string formatOpenMpiRankfile(const std::vector<std::string>& hostOfRank, const std::vector<int>& coresOfRank) {
  std::map<std::string, int> next;
  std::string text;
  for (std::size_t r = 0; r < hostOfRank.size(); ++r) {
    const int slot = next[hostOfRank[r]]++ % std::max(1, coresOfRank[r]);
    text += "rank " + std::to_string(r) + "=" + hostOfRank[r] + " slot=" + std::to_string(slot) + "\n";
  }
  return text;
}

std::string siblingPath(const std::string& machinefile, const std::string& suffix) {
  const std::size_t slash = machinefile.rfind('/');
  const std::size_t nameStart = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t dot = machinefile.rfind('.');
  const std::size_t stemEnd = dot == std::string::npos || dot <= nameStart ? machinefile.size() : dot;
  return machinefile.substr(0, stemEnd) + suffix;
}

}  // namespace dispar::streammap
