// JSON written member by member in nlohmann::json::dump(2)'s layout, without a document: the large
// files (a 100,000-rank map, a 10,000-node cluster description) cost seconds and hundreds of MB
// through a DOM. Each member knows whether it is its container's first, so commas and indentation
// live in one place.
#ifndef DISPAR_LANG_JSON_LAYOUT_H
#define DISPAR_LANG_JSON_LAYOUT_H

#include <charconv>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace dispar::lang {

/// A JSON string literal (RFC 8259 escaping, the short escapes nlohmann writes).
void appendJsonString(std::string& out, const std::string& s);
/// The shortest text that reads back as `x`, always a JSON float ("2.0", not "2"). JSON has no inf or
/// nan: a non-finite value is written as null, which the project's readers reject by name.
void appendJsonNumber(std::string& out, double x);

class JsonLayoutWriter {
 public:
  explicit JsonLayoutWriter(std::string& out) : out_(out) {}

  /// A null `key` writes an array element (or the top-level value).
  void beginObject(const char* key = nullptr) { open(key, '{'); }
  void endObject() { close('}'); }
  void beginArray(const char* key = nullptr) { open(key, '['); }
  void endArray() { close(']'); }

  void string(const char* key, const std::string& value);
  void number(const char* key, double value);
  template <class Integer>
  void integer(const char* key, Integer value) {
    member(key);
    char buffer[24];
    out_.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, value).ptr);
  }
  void null(const char* key);
  /// The value, or null when there is none.
  template <class T>
  void optional(const char* key, const std::optional<T>& value) {
    if (!value)
      null(key);
    else if constexpr (std::is_floating_point_v<T>)
      number(key, *value);
    else
      integer(key, *value);
  }

 private:
  // Before a member: the separator from the previous one (or the opening's newline), the indent, the key.
  void member(const char* key);
  void open(const char* key, char bracket);
  void close(char bracket);

  std::string& out_;
  std::vector<bool> empty_;  // per open container: no member written yet
};

}  // namespace dispar::lang

#endif
