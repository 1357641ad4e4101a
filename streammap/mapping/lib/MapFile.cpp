#include "streammap/MapFile.h"

#include "streammap/ClusterJson.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <map>

namespace dispar::streammap {

using nlohmann::ordered_json;

namespace {

const char* sourceKindName(ClusterSource::Kind kind) {
  return kind == ClusterSource::Kind::File ? "file" : "database";
}

}  // namespace

namespace {

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

template <class T>
void appendOptional(std::string& out, const std::optional<T>& x) {
  out += x ? std::to_string(*x) : std::string("null");
}

// "key": at the given indent.
void appendKey(std::string& out, int indent, const char* key) {
  out.append(static_cast<std::size_t>(indent), ' ');
  out += '"';
  out += key;
  out += "\": ";
}

}  // namespace

// Written by hand rather than through a JSON DOM: a 100,000-rank map is 30 MB, and the DOM would cost
// seconds and hundreds of MB. The layout is what nlohmann::json::dump(2) produces.
std::string writeMapJson(const MapRecord& r) {
  std::string out;
  out.reserve(256 * r.ranks.size() + 4096);
  out += "{\n";
  auto field = [&](const char* key, const std::string& value) {
    appendKey(out, 2, key);
    appendString(out, value);
    out += ",\n";
  };
  field("format", kMapFormat);
  appendKey(out, 2, "version");
  out += std::to_string(kMapVersion) + ",\n";
  field("program", r.program);
  field("rtg", r.rtgPath);
  field("machinefile", r.machinefile);
  field("launcher", r.launcher);
  field("algorithm", r.algorithm);
  appendKey(out, 2, "seed");
  appendOptional(out, r.seed);
  out += ",\n";
  appendKey(out, 2, "cluster_source");
  out += "{\n";
  appendKey(out, 4, "kind");
  appendString(out, sourceKindName(r.source.kind));
  out += ",\n";
  appendKey(out, 4, "path");
  appendString(out, r.source.path);
  out += ",\n";
  appendKey(out, 4, "ttl_seconds");
  out += std::to_string(r.source.ttlSeconds) + "\n  },\n";
  field("cluster_digest", r.clusterDigest);
  appendKey(out, 2, "cuda_archs");
  if (r.cudaArchs.empty()) {
    out += "[],\n";
  } else {
    out += "[\n";
    for (std::size_t i = 0; i < r.cudaArchs.size(); ++i) {
      out += "    ";
      appendString(out, r.cudaArchs[i]);
      out += i + 1 < r.cudaArchs.size() ? ",\n" : "\n";
    }
    out += "  ],\n";
  }
  field("cost_model", r.costModel);
  appendKey(out, 2, "predicted");
  out += "{\n";
  appendKey(out, 4, "period");
  appendNumber(out, r.period);
  out += ",\n";
  appendKey(out, 4, "cross_bytes");
  appendNumber(out, r.crossBytes);
  out += ",\n";
  appendKey(out, 4, "nodes");
  out += r.nodes.empty() ? "[]\n" : "[\n";
  for (std::size_t i = 0; i < r.nodes.size(); ++i) {
    const NodePrediction& n = r.nodes[i];
    out += "      {\n";
    appendKey(out, 8, "host");
    appendString(out, n.host);
    out += ",\n";
    appendKey(out, 8, "cpu");
    appendNumber(out, n.cpu);
    out += ",\n";
    appendKey(out, 8, "gpu");
    appendNumber(out, n.gpu);
    out += ",\n";
    appendKey(out, 8, "net");
    appendNumber(out, n.net);
    out += i + 1 < r.nodes.size() ? "\n      },\n" : "\n      }\n    ]\n";
  }
  out += "  },\n";
  appendKey(out, 2, "ranks");
  out += r.ranks.empty() ? "[],\n" : "[\n";
  for (std::size_t i = 0; i < r.ranks.size(); ++i) {
    const RankRecord& k = r.ranks[i];
    out += "    {\n";
    appendKey(out, 6, "rank");
    out += std::to_string(k.rank) + ",\n";
    appendKey(out, 6, "vnode");
    appendString(out, k.vnode);
    out += ",\n";
    appendKey(out, 6, "replica");
    out += std::to_string(k.replica) + ",\n";
    appendKey(out, 6, "type");
    appendString(out, k.type);
    out += ",\n";
    appendKey(out, 6, "host");
    appendString(out, k.host);
    out += ",\n";
    appendKey(out, 6, "device");
    appendOptional(out, k.device);
    out += ",\n";
    appendKey(out, 6, "mode");
    appendString(out, k.mode);
    out += ",\n";
    appendKey(out, 6, "time");
    appendNumber(out, k.time);
    out += ",\n";
    appendKey(out, 6, "memory");
    appendOptional(out, k.memory);
    out += i + 1 < r.ranks.size() ? "\n    },\n" : "\n    }\n  ],\n";
  }
  // The snapshot: the cluster description, indented one level.
  appendKey(out, 2, "cluster");
  std::string cluster = writeClusterJson(r.cluster);
  while (!cluster.empty() && cluster.back() == '\n') cluster.pop_back();
  for (char c : cluster) {
    out += c;
    if (c == '\n') out += "  ";
  }
  out += "\n}\n";
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
