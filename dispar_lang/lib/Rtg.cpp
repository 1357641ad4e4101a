#include "dispar_lang/Rtg.h"

#include <nlohmann/json.hpp>

#include <set>

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
    j["memory"] = v.memory ? ordered_json(*v.memory) : ordered_json(nullptr);
    j["location"] = v.location;
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

// Reads field `key` of `object` as T, or fails with a message naming the path.
class Reader {
 public:
  explicit Reader(std::string& error) : error_(error) {}

  template <class T>
  bool get(const nlohmann::json& object, const char* key, const std::string& path, T& out) {
    auto it = object.find(key);
    if (it == object.end()) return fail(path + "." + key + ": missing");
    try {
      out = it->get<T>();
    } catch (const std::exception&) {
      return fail(path + "." + key + ": wrong type (" + it->type_name() + ")");
    }
    return true;
  }

  bool getOptionalBytes(const nlohmann::json& object, const char* key, const std::string& path,
                        std::optional<std::uint64_t>& out) {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) {
      out.reset();
      return true;
    }
    if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<long long>() >= 0))
      return fail(path + "." + key + ": expected a non-negative integer or null");
    out = it->get<std::uint64_t>();
    return true;
  }

  bool fail(const std::string& message) {
    error_ = message;
    return false;
  }

 private:
  std::string& error_;
};

}  // namespace

bool parseRtgJson(const std::string& text, Rtg& out, std::string& error) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    error = std::string("not valid JSON: ") + e.what();
    return false;
  }
  Reader r(error);
  if (!doc.is_object()) return r.fail("top level: expected an object");
  std::string format;
  int version = 0;
  if (!r.get(doc, "format", "rtg", format)) return false;
  if (format != kRtgFormat) return r.fail("rtg.format: expected \"dispar-rtg\", got \"" + format + "\"");
  if (!r.get(doc, "version", "rtg", version)) return false;
  if (version != kRtgVersion)
    return r.fail("rtg.version: unsupported format version " + std::to_string(version) + " (this tool reads version " +
                  std::to_string(kRtgVersion) + ")");
  Rtg rtg;
  if (!r.get(doc, "program", "rtg", rtg.program)) return false;
  if (doc.contains("cuda_archs") && !r.get(doc, "cuda_archs", "rtg", rtg.cudaArchs)) return false;
  // Absent in RTGs written before programs could be built for Open MPI: those are MPICH programs.
  if (doc.contains("mpi") && !r.get(doc, "mpi", "rtg", rtg.mpi)) return false;
  if (rtg.mpi != "mpich" && rtg.mpi != "openmpi") return r.fail("rtg.mpi: expected \"mpich\" or \"openmpi\", got \"" + rtg.mpi + "\"");
  auto vertices = doc.find("vertices");
  if (vertices == doc.end() || !vertices->is_array()) return r.fail("rtg.vertices: missing or not an array");
  for (std::size_t i = 0; i < vertices->size(); ++i) {
    const nlohmann::json& j = (*vertices)[i];
    std::string path = "vertices[" + std::to_string(i) + "]";
    if (!j.is_object()) return r.fail(path + ": expected an object");
    RtgVertex v;
    std::string type;
    if (!r.get(j, "id", path, v.id) || !r.get(j, "vnode", path, v.vnode) || !r.get(j, "type", path, type))
      return false;
    v.rank = v.id;
    if (j.contains("rank") && !r.get(j, "rank", path, v.rank)) return false;
    if (v.id != static_cast<int>(i))
      return r.fail(path + ".id: expected " + std::to_string(i) + " (ids are dense and in order), got " +
                    std::to_string(v.id));
    if (v.rank != v.id) return r.fail(path + ".rank: must equal id " + std::to_string(v.id));
    if (type == "CO") v.type = Requirement::CO;
    else if (type == "CG") v.type = Requirement::CG;
    else return r.fail(path + ".type: expected \"CO\" or \"CG\", got \"" + type + "\"");
    if (j.contains("family") && !r.get(j, "family", path, v.family)) return false;
    if (j.contains("member") && !r.get(j, "member", path, v.member)) return false;
    if (v.family.empty() != (v.member < 0))
      return r.fail(path + ": 'family' and 'member' go together (a VNODE_ARRAY member has both)");
    if (j.contains("replica") && !r.get(j, "replica", path, v.replica)) return false;
    if (j.contains("replicas") && !r.get(j, "replicas", path, v.replicas)) return false;
    if (j.contains("cost") && !r.get(j, "cost", path, v.cost)) return false;
    if (!(v.cost > 0)) return r.fail(path + ".cost: must be positive");
    if (!r.getOptionalBytes(j, "memory", path, v.memory)) return false;
    if (j.contains("location") && !r.get(j, "location", path, v.location)) return false;
    rtg.vertices.push_back(std::move(v));
  }
  auto edges = doc.find("edges");
  if (edges == doc.end() || !edges->is_array()) return r.fail("rtg.edges: missing or not an array");
  const int n = static_cast<int>(rtg.vertices.size());
  for (std::size_t i = 0; i < edges->size(); ++i) {
    const nlohmann::json& j = (*edges)[i];
    std::string path = "edges[" + std::to_string(i) + "]";
    if (!j.is_object()) return r.fail(path + ": expected an object");
    RtgEdge e;
    if (!r.get(j, "from", path, e.from) || !r.get(j, "to", path, e.to)) return false;
    if (e.from < 0 || e.from >= n) return r.fail(path + ".from: no vertex " + std::to_string(e.from));
    if (e.to < 0 || e.to >= n) return r.fail(path + ".to: no vertex " + std::to_string(e.to));
    if (j.contains("pipe") && !r.get(j, "pipe", path, e.pipe)) return false;
    if (j.contains("element") && !r.get(j, "element", path, e.element)) return false;
    if (j.contains("element_bytes") && !r.get(j, "element_bytes", path, e.elementBytes)) return false;
    if (!r.getOptionalBytes(j, "volume", path, e.volume)) return false;
    rtg.edges.push_back(std::move(e));
  }
  out = std::move(rtg);
  return true;
}

}  // namespace dispar::lang
