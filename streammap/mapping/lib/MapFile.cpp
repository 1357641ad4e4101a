#include "streammap/MapFile.h"

#include "streammap/ResourceDb.h"

#include "streammap/ClusterJson.h"

#include "dispar_lang/JsonLayout.h"
#include "dispar_lang/JsonRead.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dispar::streammap {

using nlohmann::ordered_json;

namespace {

const char* sourceKindName(ClusterSource::Kind kind) { return kind == ClusterSource::Kind::File ? "file" : "database"; }

}  // namespace

// Written by hand rather than through a JSON DOM: a 100,000-rank map is 30 MB, and the DOM would cost
// seconds and hundreds of MB. The layout is what nlohmann::json::dump(2) produces.
std::string writeMapJson(const MapRecord& r) {
  std::string out;
  // About 240 bytes per rank; the snapshot's lines gain an indent.
  out.reserve(256 * r.ranks.size() + 2 * kWrittenNodeBytes * r.cluster.nodes.size() + 4096);
  lang::JsonLayoutWriter json(out);
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
  json.string("path",
              r.source.kind == ClusterSource::Kind::Database ? displayDatabaseName(r.source.path) : r.source.path);
  json.integer("ttl_seconds", r.source.ttlSeconds);
  json.endObject();
  json.string("cluster_digest", r.clusterDigest);
  json.string("costs_digest", r.costsDigest);
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
  if (!r.demandPipes.empty()) {  // absent: none (and in maps before it)
    json.beginArray("demand_pipes");
    for (const std::string& pipe : r.demandPipes) json.string(nullptr, pipe);
    json.endArray();
  }
  // The snapshot: the cluster description.
  writeClusterJson(json, "cluster", r.cluster);
  json.endObject();
  out += '\n';
  return out;
}

namespace {

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

struct MapParseFailure {
  std::string message;
};

// Reads the map's fields by kind (lang::JsonFields: presence, type, range), throwing MapParseFailure with
// the field's path ("map.ranks[3].time") and the value found when one is wrong.
class MapReader {
 public:
  using Fields = lang::JsonFields<ordered_json>;

  [[noreturn]] static void fail(const std::string& path, const std::string& what) {
    throw MapParseFailure{path + ": " + what};
  }
  static const ordered_json& member(const ordered_json& object, const char* key, const std::string& path) {
    std::string error;
    return *checked(Fields(object, path, error).member(key), error);
  }
  static const ordered_json& object(const ordered_json& parent, const char* key, const std::string& path) {
    std::string error;
    return *checked(Fields(parent, path, error).object(key), error);
  }
  static const ordered_json& array(const ordered_json& parent, const char* key, const std::string& path) {
    std::string error;
    return *checked(Fields(parent, path, error).array(key), error);
  }
  static std::string string(const ordered_json& object, const char* key, const std::string& path) {
    std::string error, v;
    checked(Fields(object, path, error).string(key, v), error);
    return v;
  }
  /// One of `choices`, e.g. {"CO", "CG"}.
  static std::string oneOf(const ordered_json& object, const char* key, const std::string& path,
                           std::initializer_list<const char*> choices) {
    std::string error, v;
    checked(Fields(object, path, error).oneOf(key, choices, v), error);
    return v;
  }
  static std::int64_t integer(const ordered_json& object, const char* key, const std::string& path, std::int64_t min,
                              std::int64_t max) {
    std::string error;
    std::int64_t v = 0;
    checked(Fields(object, path, error).integer(key, min, max, v), error);
    return v;
  }
  static std::optional<std::uint64_t> optionalUnsigned(const ordered_json& object, const char* key,
                                                       const std::string& path) {
    std::string error;
    std::optional<std::uint64_t> v;
    checked(Fields(object, path, error).optionalUnsigned(key, v), error);
    return v;
  }
  /// A predicted time or byte count: finite and not negative.
  static double measure(const ordered_json& object, const char* key, const std::string& path) {
    std::string error;
    double v = 0;
    checked(Fields(object, path, error).measure(key, v), error);
    return v;
  }

 private:
  template <class T>
  static T checked(T ok, const std::string& error) {
    if (!ok) throw MapParseFailure{error};
    return ok;
  }
};

void readSource(const ordered_json& doc, ClusterSource& source) {
  const ordered_json& json = MapReader::object(doc, "cluster_source", "map");
  const std::string path = "map.cluster_source";
  const std::string kind = MapReader::oneOf(json, "kind", path, {"database", "file"});
  source.kind = kind == "file" ? ClusterSource::Kind::File : ClusterSource::Kind::Database;
  source.path = MapReader::string(json, "path", path);
  source.ttlSeconds = static_cast<int>(MapReader::integer(json, "ttl_seconds", path, 0, kIntMax));
}

void readPredicted(const ordered_json& doc, MapRecord& r) {
  const ordered_json& predicted = MapReader::object(doc, "predicted", "map");
  const std::string path = "map.predicted";
  r.period = MapReader::measure(predicted, "period", path);
  r.crossBytes = MapReader::measure(predicted, "cross_bytes", path);
  const ordered_json& nodes = MapReader::array(predicted, "nodes", path);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::string p = path + ".nodes[" + std::to_string(i) + "]";
    r.nodes.push_back(NodePrediction{MapReader::string(nodes[i], "host", p), MapReader::measure(nodes[i], "cpu", p),
                                     MapReader::measure(nodes[i], "gpu", p), MapReader::measure(nodes[i], "net", p)});
  }
}

RankRecord readRank(const ordered_json& j, std::size_t i) {
  RankRecord k;
  std::string error;
  if (!lang::readMapRank(j, "map.ranks[" + std::to_string(i) + "]", k, error)) throw MapParseFailure{error};
  return k;
}

std::vector<std::string> readStrings(const ordered_json& doc, const char* key) {
  const ordered_json& list = MapReader::array(doc, key, "map");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string())
      MapReader::fail("map." + std::string(key) + "[" + std::to_string(i) + "]",
                      "expected a string, got " + lang::shownJson(list[i]));
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

void readHeader(const ordered_json& doc, MapRecord& r) {
  if (!doc.is_object()) MapReader::fail("map", "expected an object, got " + lang::shownJson(doc));
  if (MapReader::string(doc, "format", "map") != kMapFormat) MapReader::fail("map.format", "expected \"dispar-map\"");
  const std::int64_t version = MapReader::integer(doc, "version", "map", 0, kIntMax);
  if (version < kMapVersionOldest || version > kMapVersion)
    MapReader::fail("map.version", "unsupported version " + std::to_string(version) + " (this tool reads versions " +
                                       std::to_string(kMapVersionOldest) + " to " + std::to_string(kMapVersion) + ")");
  r.program = MapReader::string(doc, "program", "map");
  r.rtgPath = MapReader::string(doc, "rtg", "map");
  r.machinefile = MapReader::string(doc, "machinefile", "map");
  r.launcher = MapReader::string(doc, "launcher", "map");
  if (doc.contains("mpi")) r.mpi = MapReader::string(doc, "mpi", "map");  // absent before Open MPI builds: MPICH
  r.algorithm = MapReader::string(doc, "algorithm", "map");
  r.seed = MapReader::optionalUnsigned(doc, "seed", "map");
}

}  // namespace

bool parseMapJson(const std::string& text, MapRecord& out, std::string& error) {
  ordered_json doc;
  if (!lang::parseJson(text, doc, error, "map.")) return false;
  MapRecord r;
  try {
    readHeader(doc, r);
    readSource(doc, r.source);
    r.clusterDigest = MapReader::string(doc, "cluster_digest", "map");
    if (doc.contains("costs_digest")) r.costsDigest = MapReader::string(doc, "costs_digest", "map");
    r.cudaArchs = readStrings(doc, "cuda_archs");
    r.costModel = MapReader::string(doc, "cost_model", "map");
    readPredicted(doc, r);
    const ordered_json& ranks = MapReader::array(doc, "ranks", "map");
    for (std::size_t i = 0; i < ranks.size(); ++i) r.ranks.push_back(readRank(ranks[i], i));
    if (const std::string layout = lang::checkRankLayout(r.ranks, "map.ranks"); !layout.empty())
      throw MapParseFailure{layout};
    if (std::string problem; !lang::readDemandPipes(doc, "map", r.demandPipes, problem)) throw MapParseFailure{problem};
    std::string clusterError;
    if (!parseClusterJson(MapReader::member(doc, "cluster", "map").dump(), r.cluster, clusterError))
      MapReader::fail("map.cluster", clusterError);
  } catch (const MapParseFailure& f) {
    error = f.message;
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

std::string formatOpenMpiRankfile(const std::vector<std::string>& hostOfRank, const std::vector<int>& coresOfRank,
                                  const std::vector<int>& boundCoresOfRank) {
  std::map<std::string, int> next;  // per host: its next free core
  std::string text;
  for (std::size_t r = 0; r < hostOfRank.size(); ++r) {
    const int cores = std::max(1, coresOfRank[r]);
    const int bound = r < boundCoresOfRank.size() ? std::max(1, boundCoresOfRank[r]) : 1;
    int& first = next[hostOfRank[r]];
    std::string slot;
    if (bound > 1 && first + bound <= cores) {
      slot = std::to_string(first) + "-" + std::to_string(first + bound - 1);
    } else {
      slot = std::to_string(first % cores);  // more ranks than cores: they share cores, as mpirun would
    }
    first += bound;
    text += "rank " + std::to_string(r) + "=" + hostOfRank[r] + " slot=" + slot + "\n";
  }
  return text;
}

std::vector<std::string> hostsOfRanks(const MapRecord& record) {
  std::vector<std::string> hosts;
  for (std::size_t i = 0; i < record.ranks.size(); ++i)
    if (i == 0 || record.ranks[i].rank != record.ranks[i - 1].rank) hosts.push_back(record.ranks[i].host);
  return hosts;
}

std::string siblingPath(const std::string& machinefile, const std::string& suffix) {
  const std::size_t slash = machinefile.rfind('/');
  const std::size_t nameStart = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t dot = machinefile.rfind('.');
  const std::size_t stemEnd = dot == std::string::npos || dot <= nameStart ? machinefile.size() : dot;
  return machinefile.substr(0, stemEnd) + suffix;
}

}  // namespace dispar::streammap
