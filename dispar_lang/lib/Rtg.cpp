#include "dispar_lang/Rtg.h"

#include "dispar_lang/JsonRead.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string_view>

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
    if (e.initial > 0) j["initial"] = e.initial;            // absent: none (and in RTGs before it)
    if (e.mayDealOnDemand) j["may_deal_on_demand"] = true;  // absent: false (and in RTGs before it)
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

// One vertex's or edge's members as streamed: the value of each member a reader looks up (a repeated key
// keeps its last value, as in a document); other members are not kept. An element that is not an object
// keeps its value, for the message.
class Fields {
 public:
  Fields(std::initializer_list<std::string_view> keys) : keys_(keys), values_(keys_.size()), present_(keys_.size()) {}

  /// The slot of `key`, or -1 when no reader looks it up.
  int slot(const std::string& key) const {
    for (std::size_t i = 0; i < keys_.size(); ++i)
      if (key.size() == keys_[i].size() && std::memcmp(key.data(), keys_[i].data(), key.size()) == 0)
        return static_cast<int>(i);
    return -1;
  }
  void beginObject() {
    object_ = true;
    std::fill(present_.begin(), present_.end(), false);
  }
  /// Where member `slot`'s value goes.
  Json& at(int slot) {
    present_[slot] = true;
    return values_[slot];
  }
  /// Where a value that is not an object goes.
  Json& notObject() {
    object_ = false;
    return value_;
  }

  bool isObject() const { return object_; }
  const Json& value() const { return value_; }
  const Json* get(const char* key) const {
    for (std::size_t i = 0; i < keys_.size(); ++i)
      if (key == keys_[i].data() || std::strcmp(key, keys_[i].data()) == 0) return present_[i] ? &values_[i] : nullptr;
    return nullptr;
  }

 private:
  std::vector<std::string_view> keys_;  // string literals: NUL-terminated
  std::vector<Json> values_;
  std::vector<bool> present_;
  bool object_ = true;
  Json value_;
};

const Json* lookup(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}
const Json* lookup(const Fields& object, const char* key) { return object.get(key); }

// Reads fields by kind, checking type and range, or fails with a message naming the field's path and
// the value found.
class Reader {
 public:
  explicit Reader(std::string& error) : error_(error) {}

  /// The member, or null (and, if `required`, a failure) when it is absent.
  template <class Object>
  const Json* find(const Object& object, const char* key, const std::string& path, bool required) {
    if (const Json* v = lookup(object, key)) return v;
    if (required) fail(path + "." + key + ": missing");
    return nullptr;
  }

  template <class Object>
  bool string(const Object& object, const char* key, const std::string& path, std::string& out, bool required = true) {
    const Json* v = find(object, key, path, required);
    if (!v) return !required;
    if (!v->is_string()) return fail(path + "." + key + ": expected a string, got " + lang::shownJson(*v));
    out = v->get<std::string>();
    return true;
  }

  template <class Object>
  bool strings(const Object& object, const char* key, const std::string& path, std::vector<std::string>& out) {
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
  template <class Object>
  bool integer(const Object& object, const char* key, const std::string& path, std::int64_t min, std::int64_t max,
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
  template <class Object>
  bool positive(const Object& object, const char* key, const std::string& path, double& out) {
    const Json* v = find(object, key, path, false);
    if (!v) return true;
    std::string problem;
    if (!lang::jsonNumber(*v, out, problem)) return fail(path + "." + key + ": " + problem);
    if (!(out > 0)) return fail(path + "." + key + ": must be positive, got " + lang::shownJson(*v));
    return true;
  }

  template <class Object>
  bool bytes(const Object& object, const char* key, const std::string& path, std::uint64_t& out) {
    const Json* v = find(object, key, path, false);
    if (!v) return true;
    std::string problem;
    if (!lang::jsonUnsigned(*v, std::numeric_limits<std::uint64_t>::max(), out, problem))
      return fail(path + "." + key + ": " + problem);
    return true;
  }

  /// A byte count or null; absent is null.
  template <class Object>
  bool optionalBytes(const Object& object, const char* key, const std::string& path,
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
  template <class Object>
  bool boolean(const Object& object, const char* key, const std::string& path, bool& out) {
    const Json* v = find(object, key, path, false);
    if (!v) return true;
    if (!v->is_boolean()) return fail(path + "." + key + ": expected true or false, got " + lang::shownJson(*v));
    out = v->get<bool>();
    return true;
  }

  /// An object of finite non-negative numbers; absent leaves `out` empty.
  template <class Object>
  bool features(const Object& object, const char* key, const std::string& path, CodeFeatures& out) {
    out.clear();
    const Json* v = find(object, key, path, false);
    if (!v) return true;
    if (!v->is_object()) return fail(path + "." + key + ": expected an object of numbers, got " + lang::shownJson(*v));
    for (const auto& [name, item] : v->items()) {
      double value = 0;
      std::string problem;
      if (!lang::jsonNumber(item, value, problem)) return fail(path + "." + key + "." + name + ": " + problem);
      if (value < 0)
        return fail(path + "." + key + "." + name + ": must not be negative, got " + lang::shownJson(item));
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

/// A VNODE's or a pipe's name as disparcc writes it: a C++ identifier, `[N]` after it for a family
/// member or a pipe-array element. Nothing else may reach a message or a table (a newline would forge one).
bool isGraphName(const std::string& name) {
  std::size_t i = 0;
  const auto identifierChar = [](char c, bool first) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
           (!first && std::isdigit(static_cast<unsigned char>(c)));
  };
  if (name.empty() || !identifierChar(name[0], true)) return false;
  while (i < name.size() && identifierChar(name[i], i == 0)) ++i;
  while (i < name.size()) {
    if (name[i] != '[') return false;
    const std::size_t digits = ++i;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
    if (i == digits || i == name.size() || name[i] != ']') return false;
    ++i;
  }
  return true;
}

bool readVertex(Reader& r, const Fields& j, std::size_t i, RtgVertex& v) {
  const std::string path = "vertices[" + std::to_string(i) + "]";
  if (!j.isObject()) return r.fail(path + ": expected an object, got " + shownJson(j.value()));
  std::string type;
  if (!r.integer(j, "id", path, 0, kIntMax, v.id, true) || !r.string(j, "vnode", path, v.vnode) ||
      !r.string(j, "type", path, type))
    return false;
  if (v.id != static_cast<int>(i))
    return r.fail(path + ".id: expected " + std::to_string(i) + " (ids are dense and in order), got " +
                  std::to_string(v.id));
  if (!isGraphName(v.vnode))
    return r.fail(path + ".vnode: expected a VNODE name (an identifier, [N] after it for a family member), got " +
                  nlohmann::json(v.vnode).dump());
  v.rank = v.id;
  if (!r.integer(j, "rank", path, 0, kIntMax, v.rank)) return false;
  if (v.rank != v.id)
    return r.fail(path + ".rank: must equal id " + std::to_string(v.id) + ", got " + std::to_string(v.rank));
  if (type == "CO")
    v.type = Requirement::CO;
  else if (type == "CG")
    v.type = Requirement::CG;
  else
    return r.fail(path + ".type: expected \"CO\" or \"CG\", got \"" + type + "\"");
  if (!r.string(j, "family", path, v.family, false) || !r.integer(j, "member", path, 0, kIntMax, v.member))
    return false;
  if (v.family.empty() != (v.member < 0))
    return r.fail(path + ": 'family' and 'member' go together (a VNODE_ARRAY member has both)");
  if (!r.integer(j, "replicas", path, 1, kIntMax, v.replicas) || !r.integer(j, "replica", path, 0, kIntMax, v.replica))
    return false;
  if (v.replica >= v.replicas)
    return r.fail(path + ".replica: must be less than replicas (" + std::to_string(v.replicas) + "), got " +
                  std::to_string(v.replica));
  return r.positive(j, "cost", path, v.cost) && r.boolean(j, "cost_declared", path, v.costDeclared) &&
         r.optionalBytes(j, "memory", path, v.memory) && r.string(j, "location", path, v.location, false) &&
         r.boolean(j, "node_cores", path, v.usesNodeCores) && r.string(j, "fingerprint", path, v.fingerprint, false) &&
         r.features(j, "features", path, v.features);
}

bool readEdge(Reader& r, const Fields& j, std::size_t i, int vertexCount, RtgEdge& e) {
  const std::string path = "edges[" + std::to_string(i) + "]";
  if (!j.isObject()) return r.fail(path + ": expected an object, got " + shownJson(j.value()));
  const std::int64_t lowest = std::numeric_limits<int>::min();
  if (!r.integer(j, "from", path, lowest, kIntMax, e.from, true) ||
      !r.integer(j, "to", path, lowest, kIntMax, e.to, true))
    return false;
  if (e.from < 0 || e.from >= vertexCount) return r.fail(path + ".from: no vertex " + std::to_string(e.from));
  if (e.to < 0 || e.to >= vertexCount) return r.fail(path + ".to: no vertex " + std::to_string(e.to));
  if (!r.string(j, "pipe", path, e.pipe, false)) return false;
  if (!e.pipe.empty() && !isGraphName(e.pipe))
    return r.fail(path +
                  ".pipe: expected a pipe name (an identifier, [N] after it for an element of a pipe array), "
                  "got " +
                  nlohmann::json(e.pipe).dump());
  return r.string(j, "element", path, e.element, false) && r.bytes(j, "element_bytes", path, e.elementBytes) &&
         r.optionalBytes(j, "volume", path, e.volume) && r.bytes(j, "initial", path, e.initial) &&
         r.boolean(j, "may_deal_on_demand", path, e.mayDealOnDemand);
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
  if (rtg.mpi != "mpich" && rtg.mpi != "openmpi" && rtg.mpi != "smpi")
    return r.fail("rtg.mpi: expected \"mpich\", \"openmpi\" or \"smpi\", got \"" + rtg.mpi + "\"");
  return true;
}

// The RTG streamed (streamJson): an RTG of 100,000 vertices is a 43 MB file whose DOM would cost a second
// and hundreds of MB. The header's members are kept as a small document; each vertex and edge is built
// alone and checked by readVertex / readEdge, then dropped. Errors are those of reading the whole
// document: invalid JSON first, then the header's, the vertices' (the first failing one), the edges'.
class RtgStream {
 public:
  /// `knownVertices`: the vertex count, when a first pass found the edges before the (last) vertices.
  /// `textBytes`: the size of the text, which bounds what a hint may reserve.
  RtgStream(std::size_t textBytes, std::optional<std::size_t> knownVertices)
      : textBytes_(textBytes), knownVertices_(knownVertices) {}

  void scalar(Json&& v) {
    if (skipping()) return;
    if (building_ != Building::None) {
      if (builder_.scalar(std::move(v))) built();
      return;
    }
    if (depth_ == 0) {
      top_ = std::move(v);
    } else if (depth_ == 1 && topObject_) {
      member(false, &v);
    } else if (depth_ == 2 && streaming_ != Array::None) {
      fields().notObject() = std::move(v);
      elementDone();
    } else if (depth_ == 3 && inElement_ && slot_ >= 0) {
      fields().at(slot_) = std::move(v);
    }
  }

  void start(bool array, std::size_t objects) {
    ++depth_;
    if (skipping()) return;
    if (building_ != Building::None) {
      builder_.start(array);
      return;
    }
    if (depth_ == 1) {
      if (array) {
        top_ = Json::array();
        skipFrom_ = 1;
      } else {
        topObject_ = true;
      }
    } else if (depth_ == 2 && topObject_) {
      member(true, nullptr, array, objects);
    } else if (depth_ == 3 && streaming_ != Array::None) {
      if (array) {
        building_ = Building::Element;
        builder_.begin(fields().notObject());
        builder_.start(true);
      } else {
        fields().beginObject();
        inElement_ = true;
        slot_ = -1;
      }
    } else if (depth_ == 4 && inElement_) {
      if (slot_ < 0) {
        skipFrom_ = 4;
      } else {
        building_ = Building::Member;
        builder_.begin(fields().at(slot_));
        builder_.start(array);
      }
    }
  }

  void end() {
    const int closing = depth_--;
    if (skipFrom_ <= closing) {
      if (skipFrom_ == closing) skipFrom_ = kNoSkip;
      return;
    }
    if (building_ != Building::None) {
      if (builder_.end()) built();
      return;
    }
    if (closing == 3 && inElement_) {
      inElement_ = false;
      elementDone();
    } else if (closing == 2 && streaming_ != Array::None) {
      if (streaming_ == Array::Vertices) verticesComplete_ = true;
      streaming_ = Array::None;
    }
  }

  void key(const std::string& k) {
    if (skipping()) return;
    if (building_ != Building::None)
      builder_.key(k);
    else if (depth_ == 1 && topObject_)
      topKey_ = k;
    else if (depth_ == 3 && inElement_)
      slot_ = fields().slot(k);
  }

  /// After a successful parse: the RTG, or false with `error` set.
  bool finish(Rtg& out, std::string& error) {
    Reader r(error);
    if (!topObject_) return r.fail("top level: expected an object, got " + shownJson(top_));
    Rtg rtg;
    if (!readHeader(r, header_, rtg)) return false;
    if (vertices_ != State::Array) return r.fail("rtg.vertices: missing or not an array");
    if (!vertexError_.empty()) return r.fail(vertexError_);
    if (edges_ != State::Array) return r.fail("rtg.edges: missing or not an array");
    if (!edgeError_.empty()) return r.fail(edgeError_);
    rtg.vertices = std::move(vertexList_);
    rtg.edges = std::move(edgeList_);
    out = std::move(rtg);
    return true;
  }

  /// The edges came before the last vertices array: they need a second pass that knows the vertex count.
  bool needsSecondPass() const { return secondPass_ && vertices_ == State::Array; }
  std::size_t vertexCount() const { return vertexCount_; }

 private:
  enum class Array { None, Vertices, Edges };
  enum class State { Absent, NotArray, Array };
  enum class Building { None, Header, Element, Member };
  static constexpr int kNoSkip = std::numeric_limits<int>::max();

  bool skipping() const { return depth_ >= skipFrom_; }
  Fields& fields() { return streaming_ == Array::Vertices ? vertexFields_ : edgeFields_; }

  // A member of the top-level object begins: a scalar (`v`) or a container (`array` says which; an
  // array of `objects` objects).
  void member(bool container, Json* v, bool array = false, std::size_t objects = 0) {
    if (topKey_ == "vertices" || topKey_ == "edges") {
      const bool vertices = topKey_ == "vertices";
      State& state = vertices ? vertices_ : edges_;
      if (!container || !array) {
        state = State::NotArray;
        if (container) skipFrom_ = depth_;
        return;
      }
      state = State::Array;
      streaming_ = vertices ? Array::Vertices : Array::Edges;
      if (vertices) {
        if (edgesStarted_) secondPass_ = true;
        vertexList_.clear();
        vertexList_.reserve(json_read_detail::reservableRecords(objects, textBytes_, sizeof(RtgVertex)));
        vertexError_.clear();
        vertexCount_ = 0;
        verticesComplete_ = false;
      } else {
        edgesStarted_ = true;
        edgeList_.clear();
        edgeList_.reserve(json_read_detail::reservableRecords(objects, textBytes_, sizeof(RtgEdge)));
        edgeError_.clear();
        edgeCount_ = 0;
      }
      return;
    }
    Json& slot = header_[topKey_];
    if (!container) {
      slot = std::move(*v);
      return;
    }
    building_ = Building::Header;
    builder_.begin(slot);
    builder_.start(array);
  }

  void built() {
    const Building was = building_;
    building_ = Building::None;
    if (was == Building::Element) elementDone();
  }

  void elementDone() {
    std::string error;
    Reader r(error);
    if (streaming_ == Array::Vertices) {
      const std::size_t i = vertexCount_++;
      if (!vertexError_.empty()) return;
      RtgVertex v;
      if (readVertex(r, vertexFields_, i, v))
        vertexList_.push_back(std::move(v));
      else
        vertexError_ = error;
    } else {
      const std::size_t i = edgeCount_++;
      if (!edgeError_.empty()) return;
      if (!knownVertices_ && !verticesComplete_) {
        secondPass_ = true;
        return;
      }
      const int n = static_cast<int>(knownVertices_ ? *knownVertices_ : vertexCount_);
      RtgEdge e;
      if (readEdge(r, edgeFields_, i, n, e))
        edgeList_.push_back(std::move(e));
      else
        edgeError_ = error;
    }
  }

  std::size_t textBytes_;
  std::optional<std::size_t> knownVertices_;
  int depth_ = 0;
  int skipFrom_ = kNoSkip;
  bool topObject_ = false;
  Json top_;
  Json header_ = Json::object();
  std::string topKey_;
  Building building_ = Building::None;
  JsonBuilder<Json> builder_;
  Fields vertexFields_{"id",   "rank",          "vnode",  "family",   "member",     "replica",     "replicas", "type",
                       "cost", "cost_declared", "memory", "location", "node_cores", "fingerprint", "features"};
  Fields edgeFields_{"from", "to", "pipe", "element", "element_bytes", "volume", "initial", "may_deal_on_demand"};
  bool inElement_ = false;
  int slot_ = -1;  // the element's member being read, or -1 for one no reader looks up
  Array streaming_ = Array::None;
  State vertices_ = State::Absent, edges_ = State::Absent;
  std::vector<RtgVertex> vertexList_;
  std::vector<RtgEdge> edgeList_;
  std::string vertexError_, edgeError_;
  std::size_t vertexCount_ = 0, edgeCount_ = 0;
  bool verticesComplete_ = false, edgesStarted_ = false, secondPass_ = false;
};

}  // namespace

bool parseRtgJson(const std::string& text, Rtg& out, std::string& error) {
  RtgStream stream(text.size(), std::nullopt);
  if (!streamJson<Json>(text, stream, error)) return false;
  if (!stream.needsSecondPass()) return stream.finish(out, error);
  RtgStream again(text.size(), stream.vertexCount());
  if (!streamJson<Json>(text, again, error)) return false;
  return again.finish(out, error);
}

}  // namespace dispar::lang
