// One entry of app.map.json's "ranks" (docs/streammap.md, "File formats"): the record `streammap map`
// writes, and the one validating reader of it that both readers use: streammap's (check, run) and the
// runtime's (each rank's GPU). Header-only, like JsonRead.h, so that the runtime needs no library.
#ifndef DISPAR_LANG_MAPRANK_H
#define DISPAR_LANG_MAPRANK_H

#include "dispar_lang/JsonRead.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

namespace dispar::lang {

struct MapRank {
  int rank = 0;
  std::string vnode;
  int replica = 0;
  std::string type;                     // "CO" / "CG"
  std::string host;
  std::optional<int> device;            // CUDA device ordinal on the host (mode "gpu")
  std::string mode;                     // "gpu" / "cpu" / "host-fallback"
  double time = 0;                      // predicted t_v (absent: 0)
  std::optional<std::uint64_t> memory;  // declared device memory need (absent or null: none)
};

namespace detail {

/// Reads one field of a rank; on failure `error` is "WHERE.KEY: PROBLEM" and the result false.
template <class Json>
class RankFieldReader {
 public:
  RankFieldReader(const Json& entry, const std::string& where, std::string& error)
      : entry_(entry), where_(where), error_(error) {}

  const Json* member(const char* key, bool required = true) {
    auto it = entry_.find(key);
    if (it != entry_.end()) return &*it;
    if (required) fail(key, "missing");
    return nullptr;
  }
  bool string(const char* key, std::string& out) {
    const Json* v = member(key);
    if (!v) return false;
    if (!v->is_string()) return fail(key, "expected a string, got " + shownJson(*v));
    out = v->template get<std::string>();
    return true;
  }
  bool oneOf(const char* key, std::initializer_list<const char*> choices, std::string& out) {
    if (!string(key, out)) return false;
    std::string expected;
    for (const char* choice : choices) {
      if (out == choice) return true;
      expected += std::string(expected.empty() ? "" : " or ") + "\"" + choice + "\"";
    }
    return fail(key, "expected " + expected + ", got \"" + out + "\"");
  }
  bool integer(const Json& value, const char* key, int& out) {
    std::int64_t v = 0;
    std::string problem;
    if (!jsonInteger(value, 0, std::numeric_limits<int>::max(), v, problem)) return fail(key, problem);
    out = static_cast<int>(v);
    return true;
  }
  bool fail(const char* key, const std::string& problem) {
    error_ = where_ + "." + key + ": " + problem;
    return false;
  }

 private:
  const Json& entry_;
  const std::string& where_;
  std::string& error_;
};

}  // namespace detail

/// Reads entry `index` of "ranks"; `where` names it in messages ("map.ranks[3]", "ranks[3]"). False with
/// `error` set: "WHERE.device: expected an integer, got \"one\"", "WHERE.rank: expected 3, got 4".
template <class Json>
bool readMapRank(const Json& entry, std::size_t index, const std::string& where, MapRank& out, std::string& error) {
  if (!entry.is_object()) {
    error = where + ": expected an object, got " + shownJson(entry);
    return false;
  }
  detail::RankFieldReader<Json> field(entry, where, error);
  MapRank k;
  const Json* rank = field.member("rank");
  if (!rank || !field.integer(*rank, "rank", k.rank)) return false;
  if (k.rank != static_cast<int>(index))
    return field.fail("rank", "expected " + std::to_string(index) + ", got " + std::to_string(k.rank));
  const Json* replica = nullptr;
  if (!field.string("vnode", k.vnode) || !(replica = field.member("replica")) ||
      !field.integer(*replica, "replica", k.replica) || !field.oneOf("type", {"CO", "CG"}, k.type) ||
      !field.string("host", k.host))
    return false;
  const Json* device = field.member("device");
  if (!device) return false;
  if (!device->is_null()) {
    int d = 0;
    if (!field.integer(*device, "device", d)) return false;
    k.device = d;
  }
  if (!field.oneOf("mode", {"gpu", "cpu", "host-fallback"}, k.mode)) return false;
  if (k.mode == "gpu" && !k.device) return field.fail("device", "mode \"gpu\" needs a device index");
  if (const Json* time = field.member("time", false)) {
    std::string problem;
    if (!jsonNumber(*time, k.time, problem)) return field.fail("time", problem);
    if (k.time < 0) return field.fail("time", "must not be negative, got " + shownJson(*time));
  }
  if (const Json* memory = field.member("memory", false); memory && !memory->is_null()) {
    std::uint64_t bytes = 0;
    std::string problem;
    if (!jsonUnsigned(*memory, std::numeric_limits<std::uint64_t>::max(), bytes, problem))
      return field.fail("memory", problem);
    k.memory = bytes;
  }
  out = std::move(k);
  return true;
}

}  // namespace dispar::lang

#endif  // DISPAR_LANG_MAPRANK_H
