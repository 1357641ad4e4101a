#include "dispar_lang/Rtg.h"

#include "dispar_lang/JsonRead.h"

#include <nlohmann/json.hpp>

#include <limits>

namespace dispar::lang {

using nlohmann::ordered_json;

const char* requirementName(Requirement r) { return r == Requirement::CG ? "CG" : "CO"; }

std::string writeRtgJson(const Rtg& rtg) {
  ordered_json doc;
  doc["format"] = kRtgFormat;
  doc["version"] = kRtgVersion;
  doc["program"] = rtg.program;
  doc["cuda_archs"] = rtg.cudaArchs;
  doc["mpi"] = rtg.mpi;
  ordered_json vertices = ordered_json::array();
  for (const RtgVertex& v : rtg.vertices) {
    ordered_json j;
    j["id"] = v.id;
    j["rank"] = v.rank;
    j["vnode"] = v.vnode;
    if (!v.family.empty()) {
      j["family"] = v.family;
      j["member"] = v.member;
    }
    j["replica"] = v.replica;
    j["replicas"] = v.replicas;
    j["type"] = requirementName(v.type);
    j["cost"] = v.cost;
    if (!v.costDeclared) j["cost_declared"] = false;
    j["memory"] = v.memory ? ordered_json(*v.memory) : ordered_json(nullptr);
    j["location"] = v.location;
    if (v.usesNodeCores) j["node_cores"] = true;  // written only when set: older readers see no change
    if (!v.fingerprint.empty()) j["fingerprint"] = v.fingerprint;
    if (!v.features.empty()) {
      ordered_json features = ordered_json::object();
      for (const auto& [name, value] : v.features) features[name] = value;
      j["features"] = std::move(features);
    }
    vertices.push_back(std::move(j));
  }
  doc["vertices"] = std::move(vertices);
  ordered_json edges = ordered_json::array();
  for (const RtgEdge& e : rtg.edges) {
    ordered_json j;
    j["from"] = e.from;
    j["to"] = e.to;
    j["pipe"] = e.pipe;
    j["element"] = e.element;
    j["element_bytes"] = e.elementBytes;
    j["volume"] = e.volume ? ordered_json(*e.volume) : ordered_json(nullptr);
    edges.push_back(std::move(j));
  }
  doc["edges"] = std::move(edges);
  return doc.dump(2) + "\n";
}

// Reading uses the unordered nlohmann::json: its objects look keys up in O(log n), which matters for
// RTGs of 100,000 vertices; writing keeps ordered_json so files list fields in a fixed order.
namespace {

using Json = nlohmann::json;

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

// Reads fields by kind, checking type and range, or fails with a message naming the field's path and
// the value found.
class Reader {
 public:
  explicit Reader(std::string& error) : error_(error) {}

  /// The member, or null (and, if `required`, a failure) when it is absent.
  const Json* find(const Json& object, const char* key, const std::string& path, bool required) {
    auto it = object.find(key);
    if (it != object.end()) return &*it;
    if (required) fail(path + "." + key + ": missing");
    return nullptr;
  }

  bool string(const Json& object, const char* key, const std::string& path, std::string& out,
              bool required = true) {
    const Json* v = find(object, key, path, required);
    if (!v) return !required;
    if (!v->is_string()) return fail(path + "." + key + ": expected a string, got " + lang::shownJson(*v));
    out = v->get<std::string>();
    return true;
  }

  bool strings(const Json& object, const char* key, const std::string& path, std::vector<std::string>& out) {
    const Json* v = find(object, key, path, false);
    if (!v) return true;
    if (!v->is_array()) return fail(path + "." + key + ": expected an array of strings, got " + lang::shownJson(*v));
    out.clear();
    for (std::size_t i = 0; i < v->size(); ++i) {
      const Json& item = (*v)[i];
      if (!item.is_string())
        return fail(path + "." + key + "[" + std::to_string(i) + "]: expected a string, got " + lang::shownJson(item));
      out.push_back(item.get<std::string>());
    }
    return true;
  }

  /// An integer in [min, max]; absent leaves `out` as it is unless `required`.
  bool integer(const Json& object, const char* key, const std::string& path, std::int64_t min, std::int64_t max,
               int& out, bool required = false) {
    const Json* v = find(object, key, path, required);
    if (!v) return !required;
    std::int64_t value = 0;
    std::string problem;
    if (!lang::jsonInteger(*v, min, max, value, problem)) return fail(path + "." + key + ": " + problem);
    out = static_cast<int>(value);
    return true;
  }

  /// A finite number > 0; absent leaves `out` as it is.
  bool positive(const Json& object, const char* key, const std::string& path, double& out) {
    const Json* v = find(object, key, path, false);
    if (!v) return true;
    std::string problem;
    if (!lang::jsonNumber(*v, out, problem)) return fail(path + "." + key + ": " + problem);
    if (!(out > 0)) return fail(path + "." + key + ": must be positive, got " + lang::shownJson(*v));
    return true;
  }

  bool bytes(const Json& object, const char* key, const std::string& path, std::uint64_t& out) {
    const Json* v = find(object, key, path, false);
    if (!v) return true;
    std::string problem;
    if (!lang::jsonUnsigned(*v, std::numeric_limits<std::uint64_t>::max(), out, problem))
      return fail(path + "." + key + ": " + problem);
    return true;
  }

  /// A byte count or null; absent is null.
  bool optionalBytes(const Json& object, const char* key, const std::string& path,
                     std::optional<std::uint64_t>& out) {
    out.reset();
    const Json* v = find(object, key, path, false);
    if (!v || v->is_null()) return true;
    std::uint64_t value = 0;
    if (!bytes(object, key, path, value)) return false;
    out = value;
    return true;
  }

  /// true or false; absent leaves `out` as it is.
  bool boolean(const Json& object, const char* key, const std::string& path, bool& out) {
    const Json* v = find(object, key, path, false);
    if (!v) return true;
    if (!v->is_boolean()) return fail(path + "." + key + ": expected true or false, got " + lang::shownJson(*v));
    out = v->get<bool>();
    return true;
  }

  /// An object of finite non-negative numbers; absent leaves `out` empty.
  bool features(const Json& object, const char* key, const std::string& path, CodeFeatures& out) {
    out.clear();
    const Json* v = find(object, key, path, false);
    if (!v) return true;
    if (!v->is_object()) return fail(path + "." + key + ": expected an object of numbers, got " + lang::shownJson(*v));
    for (const auto& [name, item] : v->items()) {
      double value = 0;
      std::string problem;
      if (!lang::jsonNumber(item, value, problem)) return fail(path + "." + key + "." + name + ": " + problem);
      if (value < 0) return fail(path + "." + key + "." + name + ": must not be negative, got " + lang::shownJson(item));
      out[name] = value;
    }
    return true;
  }

  bool fail(const std::string& message) {
    error_ = message;
    return false;
  }

 private:
  std::string& error_;
};

bool readVertex(Reader& r, const Json& j, std::size_t i, RtgVertex& v) {
  const std::string path = "vertices[" + std::to_string(i) + "]";
  if (!j.is_object()) return r.fail(path + ": expected an object, got " + shownJson(j));
  std::string type;
  if (!r.integer(j, "id", path, 0, kIntMax, v.id, true) || !r.string(j, "vnode", path, v.vnode) ||
      !r.string(j, "type", path, type))
    return false;
  if (v.id != static_cast<int>(i))
    return r.fail(path + ".id: expected " + std::to_string(i) + " (ids are dense and in order), got " +
                  std::to_string(v.id));
  v.rank = v.id;
  if (!r.integer(j, "rank", path, 0, kIntMax, v.rank)) return false;
  if (v.rank != v.id)
    return r.fail(path + ".rank: must equal id " + std::to_string(v.id) + ", got " + std::to_string(v.rank));
  if (type == "CO") v.type = Requirement::CO;
  else if (type == "CG") v.type = Requirement::CG;
  else return r.fail(path + ".type: expected \"CO\" or \"CG\", got \"" + type + "\"");
  if (!r.string(j, "family", path, v.family, false) || !r.integer(j, "member", path, 0, kIntMax, v.member))
    return false;
  if (v.family.empty() != (v.member < 0))
    return r.fail(path + ": 'family' and 'member' go together (a VNODE_ARRAY member has both)");
  if (!r.integer(j, "replicas", path, 1, kIntMax, v.replicas) ||
      !r.integer(j, "replica", path, 0, kIntMax, v.replica))
    return false;
  if (v.replica >= v.replicas)
    return r.fail(path + ".replica: must be less than replicas (" + std::to_string(v.replicas) + "), got " +
                  std::to_string(v.replica));
  return r.positive(j, "cost", path, v.cost) && r.boolean(j, "cost_declared", path, v.costDeclared) &&
         r.optionalBytes(j, "memory", path, v.memory) && r.string(j, "location", path, v.location, false) &&
         r.boolean(j, "node_cores", path, v.usesNodeCores) && r.string(j, "fingerprint", path, v.fingerprint, false) &&
         r.features(j, "features", path, v.features);
}

bool readEdge(Reader& r, const Json& j, std::size_t i, int vertexCount, RtgEdge& e) {
  const std::string path = "edges[" + std::to_string(i) + "]";
  if (!j.is_object()) return r.fail(path + ": expected an object, got " + shownJson(j));
  const std::int64_t lowest = std::numeric_limits<int>::min();
  if (!r.integer(j, "from", path, lowest, kIntMax, e.from, true) ||
      !r.integer(j, "to", path, lowest, kIntMax, e.to, true))
    return false;
  if (e.from < 0 || e.from >= vertexCount) return r.fail(path + ".from: no vertex " + std::to_string(e.from));
  if (e.to < 0 || e.to >= vertexCount) return r.fail(path + ".to: no vertex " + std::to_string(e.to));
  return r.string(j, "pipe", path, e.pipe, false) && r.string(j, "element", path, e.element, false) &&
         r.bytes(j, "element_bytes", path, e.elementBytes) && r.optionalBytes(j, "volume", path, e.volume);
}

bool readHeader(Reader& r, const Json& doc, Rtg& rtg) {
  if (!doc.is_object()) return r.fail("top level: expected an object, got " + shownJson(doc));
  std::string format;
  if (!r.string(doc, "format", "rtg", format)) return false;
  if (format != kRtgFormat) return r.fail("rtg.format: expected \"dispar-rtg\", got \"" + format + "\"");
  int version = 0;
  if (!r.integer(doc, "version", "rtg", 0, kIntMax, version, true)) return false;
  if (version != kRtgVersion)
    return r.fail("rtg.version: unsupported format version " + std::to_string(version) + " (this tool reads version " +
                  std::to_string(kRtgVersion) + ")");
  if (!r.string(doc, "program", "rtg", rtg.program) || !r.strings(doc, "cuda_archs", "rtg", rtg.cudaArchs))
    return false;
  // Absent in RTGs written before programs could be built for Open MPI: those are MPICH programs.
  if (!r.string(doc, "mpi", "rtg", rtg.mpi, false)) return false;
  if (rtg.mpi != "mpich" && rtg.mpi != "openmpi")
    return r.fail("rtg.mpi: expected \"mpich\" or \"openmpi\", got \"" + rtg.mpi + "\"");
  return true;
}

}  // namespace

bool parseRtgJson(const std::string& text, Rtg& out, std::string& error) {
  Json doc;
  if (!parseJson(text, doc, error)) return false;
  Reader r(error);
  Rtg rtg;
  if (!readHeader(r, doc, rtg)) return false;
  auto vertices = doc.find("vertices");
  if (vertices == doc.end() || !vertices->is_array()) return r.fail("rtg.vertices: missing or not an array");
  rtg.vertices.resize(vertices->size());
  for (std::size_t i = 0; i < vertices->size(); ++i)
    if (!readVertex(r, (*vertices)[i], i, rtg.vertices[i])) return false;
  auto edges = doc.find("edges");
  if (edges == doc.end() || !edges->is_array()) return r.fail("rtg.edges: missing or not an array");
  rtg.edges.resize(edges->size());
  const int n = static_cast<int>(rtg.vertices.size());
  for (std::size_t i = 0; i < edges->size(); ++i)
    if (!readEdge(r, (*edges)[i], i, n, rtg.edges[i])) return false;
  out = std::move(rtg);
  return true;
}

}  // namespace dispar::lang
