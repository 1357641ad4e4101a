// Reading JSON files with the checks every DISPAR reader needs, kept in one place: parsing that reports
// a number beyond double range (1e999) as an error naming its field instead of throwing, a bound on
// nesting, and number readers that refuse fractions where integers belong, values out of a field's
// range and non-finite numbers, quoting the value as written.
//
// Header-only (templates over nlohmann::json and nlohmann::ordered_json), so that a reader which links
// nothing of DISPAR (the runtime's map-file reader) can use it as well.
#ifndef DISPAR_LANG_JSON_READ_H
#define DISPAR_LANG_JSON_READ_H

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dispar::lang {

/// Deeper nesting is refused before parsing: nlohmann's dump() and comparisons recurse, and no DISPAR
/// file nests more than a few levels.
inline constexpr int kMaxJsonDepth = 128;

namespace json_read_detail {

/// "LINE:COLUMN" of the byte nlohmann reports (the 1-based count of bytes read when it stopped).
inline std::string lineColumn(const std::string& text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

/// What one pass over the text finds before parsing.
struct JsonShape {
  std::size_t tooDeepAt = 0;  // the 1-based offset of the first bracket opening a level deeper than the limit, or 0
  /// Per array directly inside the top-level value, in document order: how many of its elements are
  /// objects. A streaming reader reserves its records with it (a 100,000-vertex RTG grown by doubling
  /// spent half its read moving vertices).
  std::vector<std::size_t> objectsInMemberArrays;
};

inline JsonShape scanShape(const std::string& text, int limit) {
  JsonShape shape;
  int depth = 0;
  bool inString = false;
  bool inMemberArray = false;  // the container open at depth 2 is an array
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (depth == 2 && inMemberArray && c == '{') ++shape.objectsInMemberArrays.back();
      if (++depth > limit) {
        shape.tooDeepAt = i + 1;
        return shape;
      }
      if (depth == 2) {
        inMemberArray = c == '[';
        if (inMemberArray) shape.objectsInMemberArrays.push_back(0);
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return shape;
}

/// How many records of `recordBytes` a streaming reader may reserve for an array of `objects` objects
/// in a text of `textBytes`: all of them, unless a text of empty objects ("[{},{},...]") would make that
/// more than a few times the text's own size.
inline std::size_t reservableRecords(std::size_t objects, std::size_t textBytes, std::size_t recordBytes) {
  return std::min(objects, 4 * textBytes / recordBytes);
}

/// The 1-based offset of the first bracket that opens a level deeper than `limit`, or 0.
inline std::size_t tooDeepAt(const std::string& text, int limit) { return scanShape(text, limit).tooDeepAt; }

/// A SAX handler that only follows where in the document the parser is, so that an error the DOM
/// parser throws without a location (a number overflow) can be given the path of its field.
template <class Json>
class PathTracker {
 public:
  bool null() { return value(); }
  bool boolean(bool) { return value(); }
  bool number_integer(typename Json::number_integer_t) { return value(); }
  bool number_unsigned(typename Json::number_unsigned_t) { return value(); }
  bool number_float(typename Json::number_float_t, const typename Json::string_t&) { return value(); }
  bool string(typename Json::string_t&) { return value(); }
  bool binary(typename Json::binary_t&) { return value(); }
  bool start_object(std::size_t) { return open(false); }
  bool start_array(std::size_t) { return open(true); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(typename Json::string_t& k) {
    frames_.back().key = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string& token, const typename Json::exception&) {
    // The failing value has not been counted yet: in an array it is the next element.
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    failedPath_ = path();
    failedToken_ = token;
    return false;
  }

  const std::string& failedPath() const { return failedPath_; }
  const std::string& failedToken() const { return failedToken_; }

 private:
  struct Frame {
    bool array = false;
    long long index = -1;  // arrays: the element being read
    std::string key;       // objects: the member being read
  };

  bool value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return true;
  }
  bool open(bool array) {
    value();
    frames_.push_back(Frame{array, -1, {}});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }
  std::string path() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (f.array)
        p += "[" + std::to_string(f.index) + "]";
      else
        p += (p.empty() ? "" : ".") + f.key;
    }
    return p;
  }

  std::vector<Frame> frames_;
  std::string failedPath_, failedToken_;
};

/// The shortest text that reads back as `x` ("1e+23"; nlohmann's dump gives 9.999999999999999e+22).
inline std::string shortestNumber(double x) {
  char buffer[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, x);
    if (std::strtod(buffer, nullptr) == x) break;
  }
  return buffer;
}

/// nlohmann's message without its "[json.exception...] parse error at line L, column C: " head.
inline std::string reasonOf(const std::exception& e) {
  std::string reason = e.what();
  const std::size_t colon = reason.find(": ");
  return colon == std::string::npos ? reason : reason.substr(colon + 2);
}

}  // namespace json_read_detail

/// Parses `text` into `out`. On failure returns false with `error` set to "LINE:COLUMN: invalid JSON:
/// REASON" prefixed by "line ", or, for a number beyond double range, "PATH: number out of range, got
/// 1e999" where PATH is `prefix` followed by the field's path ("vertices[2].cost").
template <class Json>
bool parseJson(const std::string& text, Json& out, std::string& error, const std::string& prefix = "") {
  namespace d = json_read_detail;
  if (const std::size_t at = d::tooDeepAt(text, kMaxJsonDepth)) {
    error = "line " + d::lineColumn(text, at + 1) + ": invalid JSON: nested deeper than " +
            std::to_string(kMaxJsonDepth) + " levels";
    return false;
  }
  try {
    out = Json::parse(text);
    return true;
  } catch (const typename Json::parse_error& e) {
    error = "line " + d::lineColumn(text, e.byte) + ": invalid JSON: " + d::reasonOf(e);
  } catch (const typename Json::exception& e) {
    // Thrown without a position: find the field with a second, tracking pass.
    d::PathTracker<Json> tracker;
    Json::sax_parse(text, &tracker);
    const std::string path = prefix + tracker.failedPath();
    error = (path.empty() ? std::string("top level") : path) + ": " +
            (e.id == 406 ? "number out of range, got " + tracker.failedToken() : d::reasonOf(e));
  }
  return false;
}

namespace json_read_detail {

/// Forwards nlohmann's SAX events to a PathTracker (for the path of a failing number) and to a
/// streaming reader's handler, which takes values as `Json` scalars, container starts and ends, and keys.
/// The handler never stops the parse: a reader records its first semantic error and reports it after
/// the whole text has parsed, so that invalid JSON anywhere wins, as with the DOM parse.
template <class Json, class Handler>
class SaxForwarder {
 public:
  SaxForwarder(const std::string& text, const std::string& prefix, Handler& handler, std::string& error,
               std::vector<std::size_t> objectsInMemberArrays = {})
      : text_(text), prefix_(prefix), handler_(handler), error_(error),
        objectsInMemberArrays_(std::move(objectsInMemberArrays)) {}

  bool null() {
    tracker_.null();
    handler_.scalar(Json(nullptr));
    return true;
  }
  bool boolean(bool b) {
    tracker_.boolean(b);
    handler_.scalar(Json(b));
    return true;
  }
  bool number_integer(typename Json::number_integer_t n) {
    tracker_.number_integer(n);
    handler_.scalar(Json(n));
    return true;
  }
  bool number_unsigned(typename Json::number_unsigned_t n) {
    tracker_.number_unsigned(n);
    handler_.scalar(Json(n));
    return true;
  }
  bool number_float(typename Json::number_float_t x, const typename Json::string_t& s) {
    tracker_.number_float(x, s);
    handler_.scalar(Json(x));
    return true;
  }
  bool string(typename Json::string_t& s) {
    tracker_.string(s);
    handler_.scalar(Json(std::move(s)));
    return true;
  }
  bool binary(typename Json::binary_t& b) {
    tracker_.binary(b);
    handler_.scalar(Json(b));
    return true;
  }
  bool start_object(std::size_t n) {
    tracker_.start_object(n);
    ++depth_;
    handler_.start(false, 0);
    return true;
  }
  bool start_array(std::size_t n) {
    tracker_.start_array(n);
    std::size_t objects = 0;
    if (++depth_ == 2 && memberArrays_ < objectsInMemberArrays_.size())
      objects = objectsInMemberArrays_[memberArrays_++];
    handler_.start(true, objects);
    return true;
  }
  bool end_object() {
    tracker_.end_object();
    --depth_;
    handler_.end();
    return true;
  }
  bool end_array() {
    tracker_.end_array();
    --depth_;
    handler_.end();
    return true;
  }
  bool key(typename Json::string_t& k) {
    tracker_.key(k);
    handler_.key(k);
    return true;
  }
  /// The messages parseJson gives: a syntax error by line and column, a number beyond double range
  /// by the path of its field.
  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& e) {
    tracker_.parse_error(position, token, e);
    if (e.id >= 100 && e.id < 200) {
      error_ = "line " + lineColumn(text_, position) + ": invalid JSON: " + reasonOf(e);
    } else {
      const std::string path = prefix_ + tracker_.failedPath();
      error_ = (path.empty() ? std::string("top level") : path) + ": " +
               (e.id == 406 ? "number out of range, got " + tracker_.failedToken() : reasonOf(e));
    }
    return false;
  }

 private:
  const std::string& text_;
  const std::string& prefix_;
  Handler& handler_;
  std::string& error_;
  PathTracker<Json> tracker_;
  const std::vector<std::size_t> objectsInMemberArrays_;
  std::size_t memberArrays_ = 0;  // arrays at depth 2 started so far
  int depth_ = 0;
};

}  // namespace json_read_detail

/// Streams `text` to `handler` (scalar(Json&&), start(bool array, std::size_t objects), end(),
/// key(std::string&)) without building a document: for files too large for a DOM. `objects` is, for an
/// array directly inside the top-level value, how many of its elements are objects (a hint to reserve
/// with), else 0. Fails exactly as parseJson does (the same checks, the same messages); the handler's
/// own checks are the caller's to report.
template <class Json, class Handler>
bool streamJson(const std::string& text, Handler& handler, std::string& error, const std::string& prefix = "") {
  namespace d = json_read_detail;
  d::JsonShape shape = d::scanShape(text, kMaxJsonDepth);
  if (shape.tooDeepAt) {
    error = "line " + d::lineColumn(text, shape.tooDeepAt + 1) + ": invalid JSON: nested deeper than " +
            std::to_string(kMaxJsonDepth) + " levels";
    return false;
  }
  d::SaxForwarder<Json, Handler> forwarder(text, prefix, handler, error, std::move(shape.objectsInMemberArrays));
  return Json::sax_parse(text, &forwarder);
}

/// Builds one value (a document's element) from streamJson's events, the way nlohmann's DOM parser
/// does (a repeated key keeps its last value), so that a streaming reader can check each element with
/// the same code and messages as a reader of the whole document.
template <class Json>
class JsonBuilder {
 public:
  /// Starts building into `root`.
  void begin(Json& root) {
    root_ = &root;
    stack_.clear();
  }
  /// The value is complete when it was a scalar, or closed its outermost container.
  bool scalar(Json&& v) {
    place(std::move(v));
    return stack_.empty();
  }
  void start(bool array) { stack_.push_back(place(array ? Json::array() : Json::object())); }
  bool end() {
    stack_.pop_back();
    return stack_.empty();
  }
  void key(const std::string& k) { key_ = k; }

 private:
  Json* place(Json&& v) {
    if (stack_.empty()) {
      *root_ = std::move(v);
      return root_;
    }
    Json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    Json& slot = top[key_];
    slot = std::move(v);
    return &slot;
  }

  Json* root_ = nullptr;
  std::vector<Json*> stack_;
  std::string key_;
};

/// The value as written, for "got ..." in messages: containers by kind, long strings shortened.
template <class Json>
std::string shownJson(const Json& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  if (value.is_number_float()) return json_read_detail::shortestNumber(value.template get<double>());
  std::string text = value.dump();
  constexpr std::size_t kLimit = 60;
  if (text.size() > kLimit) text = text.substr(0, kLimit) + "...";
  return text;
}

/// A finite number. Else false with `problem` set ("expected a number, got \"4\"").
template <class Json>
bool jsonNumber(const Json& value, double& out, std::string& problem) {
  if (!value.is_number() || !std::isfinite(value.template get<double>())) {
    problem = "expected a number, got " + shownJson(value);
    return false;
  }
  out = value.template get<double>();
  return true;
}

/// An integer in [min, max], written as an integer or as an integral number (6.8e10). Else false with
/// `problem` set: "expected an integer, got 1.5", "must be at least 0, got -4".
template <class Json>
bool jsonInteger(const Json& value, std::int64_t min, std::int64_t max, std::int64_t& out, std::string& problem) {
  constexpr double kTwoTo63 = 9223372036854775808.0;
  std::int64_t v = 0;
  bool below = false, above = false;
  if (value.is_number_unsigned()) {
    const std::uint64_t u = value.template get<std::uint64_t>();
    above = u > static_cast<std::uint64_t>(max);
    v = above ? max : static_cast<std::int64_t>(u);
  } else if (value.is_number_integer()) {
    v = value.template get<std::int64_t>();
  } else if (value.is_number_float() && std::isfinite(value.template get<double>()) &&
             value.template get<double>() == std::floor(value.template get<double>())) {
    const double d = value.template get<double>();
    below = d < -kTwoTo63;
    above = d >= kTwoTo63;
    if (!below && !above) v = static_cast<std::int64_t>(d);
  } else {
    problem = "expected an integer, got " + shownJson(value);
    return false;
  }
  if (below || (!above && v < min)) {
    problem = "must be at least " + std::to_string(min) + ", got " + shownJson(value);
    return false;
  }
  if (above || v > max) {
    problem = "must be at most " + std::to_string(max) + ", got " + shownJson(value);
    return false;
  }
  out = v;
  return true;
}

/// A non-negative integer up to `max` (sizes in bytes, seeds), written as an integer or an integral
/// number. Else false with `problem` set.
template <class Json>
bool jsonUnsigned(const Json& value, std::uint64_t max, std::uint64_t& out, std::string& problem) {
  constexpr double kTwoTo64 = 18446744073709551616.0;
  std::uint64_t u = 0;
  bool above = false;
  bool negative = false;
  if (value.is_number_unsigned()) {
    u = value.template get<std::uint64_t>();
  } else if (value.is_number_integer()) {
    negative = value.template get<std::int64_t>() < 0;
    if (!negative) u = static_cast<std::uint64_t>(value.template get<std::int64_t>());
  } else if (value.is_number_float() && std::isfinite(value.template get<double>()) &&
             value.template get<double>() == std::floor(value.template get<double>())) {
    const double d = value.template get<double>();
    negative = d < 0;
    above = d >= kTwoTo64;
    if (!negative && !above) u = static_cast<std::uint64_t>(d);
  } else {
    problem = "expected an integer, got " + shownJson(value);
    return false;
  }
  if (negative) {
    problem = "must be at least 0, got " + shownJson(value);
    return false;
  }
  if (above || u > max) {
    problem = "must be at most " + std::to_string(max) + ", got " + shownJson(value);
    return false;
  }
  out = u;
  return true;
}

/// Reads the members of one JSON object by kind, for the readers of DISPAR's files: each call checks
/// the member's presence, type and range and, when one fails, returns false with `error` set to
/// "PATH.KEY: PROBLEM" ("map.ranks[3].device: expected an integer, got \"one\"").
template <class Json>
class JsonFields {
 public:
  JsonFields(const Json& object, std::string path, std::string& error)
      : object_(object), path_(std::move(path)), error_(error) {}

  /// The member `key`; null (and, when `required`, the error "missing") when absent.
  const Json* member(const char* key, bool required = true) const {
    if (!object_.is_object()) {
      error_ = path_ + ": expected an object, got " + shownJson(object_);
      return nullptr;
    }
    auto it = object_.find(key);
    if (it != object_.end()) return &*it;
    if (required) fail(key, "missing");
    return nullptr;
  }
  const Json* object(const char* key) const { return ofKind(key, &Json::is_object, "an object"); }
  const Json* array(const char* key) const { return ofKind(key, &Json::is_array, "an array"); }
  bool string(const char* key, std::string& out) const {
    const Json* v = ofKind(key, &Json::is_string, "a string");
    if (v) out = v->template get<std::string>();
    return v != nullptr;
  }
  /// One of `choices`, e.g. {"CO", "CG"}.
  bool oneOf(const char* key, std::initializer_list<const char*> choices, std::string& out) const {
    if (!string(key, out)) return false;
    std::string expected;
    for (const char* choice : choices) {
      if (out == choice) return true;
      expected += std::string(expected.empty() ? "" : " or ") + "\"" + choice + "\"";
    }
    return fail(key, "expected " + expected + ", got \"" + out + "\"");
  }
  bool integer(const char* key, std::int64_t min, std::int64_t max, std::int64_t& out) const {
    const Json* v = member(key);
    std::string problem;
    if (!v) return false;
    return jsonInteger(*v, min, max, out, problem) || fail(key, problem);
  }
  /// A non-negative integer, or null (nullopt); `required` false also accepts its absence.
  bool optionalUnsigned(const char* key, std::optional<std::uint64_t>& out, bool required = true) const {
    const Json* v = member(key, required);
    out.reset();
    if (!v) return !required;
    if (v->is_null()) return true;
    std::uint64_t u = 0;
    std::string problem;
    if (!jsonUnsigned(*v, std::numeric_limits<std::uint64_t>::max(), u, problem)) return fail(key, problem);
    out = u;
    return true;
  }
  /// A finite number that is not negative (a predicted time, a byte count).
  bool measure(const char* key, double& out) const {
    const Json* v = member(key);
    std::string problem;
    if (!v) return false;
    if (!jsonNumber(*v, out, problem)) return fail(key, problem);
    return out >= 0 || fail(key, "must not be negative, got " + shownJson(*v));
  }
  /// Sets the error for member `key`; returns false.
  bool fail(const char* key, const std::string& problem) const {
    error_ = path_ + "." + key + ": " + problem;
    return false;
  }

 private:
  const Json* ofKind(const char* key, bool (Json::*is)() const noexcept, const char* kind) const {
    const Json* v = member(key);
    if (v && !(v->*is)()) {
      fail(key, std::string("expected ") + kind + ", got " + shownJson(*v));
      return nullptr;
    }
    return v;
  }

  const Json& object_;
  std::string path_;
  std::string& error_;
};

}  // namespace dispar::lang

#endif
