// One entry of app.map.json's "ranks" (docs/streammap.md, "File formats"): the record `streammap map`
// writes, one per VNODE instance, and the one validating reader of it that both readers use:
// streammap's (check, run) and the runtime's (each rank's instances and GPU). Header-only, like
// JsonRead.h, so that the runtime needs no library.
#ifndef DISPAR_LANG_MAPRANK_H
#define DISPAR_LANG_MAPRANK_H

#include "dispar_lang/JsonRead.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace dispar::lang {

struct MapRank {
  int rank = 0;  // the MPI rank that runs this instance (several may share one)
  std::string vnode;
  int replica = 0;
  std::string type;  // "CO" / "CG"
  std::string host;
  std::optional<int> device;            // CUDA device ordinal on the host (mode "gpu")
  std::string mode;                     // "gpu" / "cpu" / "host-fallback"
  double time = 0;                      // predicted t_v (absent: 0)
  std::optional<std::uint64_t> memory;  // declared device memory need (absent or null: none)
};

/// Reads one entry of "ranks"; `where` names it in messages ("map.ranks[3]", "ranks[3]"). False with
/// `error` set: "WHERE.device: expected an integer, got \"one\"". Where its rank may be is
/// checkRankLayout's rule.
template <class Json>
bool readMapRank(const Json& entry, const std::string& where, MapRank& out, std::string& error) {
  const JsonFields<Json> field(entry, where, error);
  MapRank k;
  std::int64_t rank = 0, replica = 0;
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  if (!field.integer("rank", 0, kIntMax, rank)) return false;
  k.rank = static_cast<int>(rank);
  if (!field.string("vnode", k.vnode) || !field.integer("replica", 0, kIntMax, replica) ||
      !field.oneOf("type", {"CO", "CG"}, k.type) || !field.string("host", k.host))
    return false;
  k.replica = static_cast<int>(replica);
  const Json* device = field.member("device");
  if (!device) return false;
  if (!device->is_null()) {
    std::int64_t d = 0;
    if (!field.integer("device", 0, kIntMax, d)) return false;
    k.device = static_cast<int>(d);
  }
  if (!field.oneOf("mode", {"gpu", "cpu", "host-fallback"}, k.mode)) return false;
  if (k.mode == "gpu" && !k.device) return field.fail("device", "mode \"gpu\" needs a device index");
  // Both absent in maps of older writers: no prediction, no declared memory.
  if (field.member("time", false) && !field.measure("time", k.time)) return false;
  if (!field.optionalUnsigned("memory", k.memory, /*required=*/false)) return false;
  out = std::move(k);
  return true;
}

/// The layout of "ranks": the first entry is rank 0 and each next entry's rank is the previous one's
/// (another instance of that rank) or the next (so ranks are 0..N-1, each a run of entries); the
/// entries of one rank share its host and, where they have one, its device. With one instance per rank
/// (the paper's layout, and every map before grouping) rank i is entry i. Empty when the layout holds,
/// else the message, its entry named with `prefix` ("map.ranks"): "map.ranks[3].rank: expected 1 or 2,
/// got 4".
inline std::string checkRankLayout(const std::vector<MapRank>& ranks, const std::string& prefix) {
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const std::string where = prefix + "[" + std::to_string(i) + "]";
    const MapRank& k = ranks[i];
    if (i == 0) {
      if (k.rank != 0) return where + ".rank: expected 0, got " + std::to_string(k.rank);
      continue;
    }
    const MapRank& previous = ranks[i - 1];
    if (k.rank != previous.rank && k.rank != previous.rank + 1)
      return where + ".rank: expected " + std::to_string(previous.rank) + " or " + std::to_string(previous.rank + 1) +
             ", got " + std::to_string(k.rank);
    if (k.rank != previous.rank) continue;
    if (k.host != previous.host)
      return where + ".host: rank " + std::to_string(k.rank) + " is on host '" + previous.host + "', got '" + k.host +
             "'";
    for (std::size_t j = i; j-- > 0 && ranks[j].rank == k.rank;)
      if (k.device && ranks[j].device && *k.device != *ranks[j].device)
        return where + ".device: rank " + std::to_string(k.rank) + " uses device " + std::to_string(*ranks[j].device) +
               ", got " + std::to_string(*k.device);
  }
  return {};
}

/// Reads app.map.json's "demand_pipes" from `map` (the document): the pipes the mapping deals on demand
/// though their source gives no split (docs/streammap.md, "Demand by default"), each a name once. Absent
/// (maps of older writers, or nothing to deal on demand): none. False with `error` naming the entry:
/// "map.demand_pipes[1]: expected a pipe name, got 3".
template <class Json>
bool readDemandPipes(const Json& map, const std::string& where, std::vector<std::string>& out, std::string& error) {
  out.clear();
  const auto found = map.find("demand_pipes");
  if (found == map.end()) return true;
  if (!found->is_array()) {
    error = where + ".demand_pipes: expected an array of pipe names, got " + shownJson(*found);
    return false;
  }
  for (std::size_t i = 0; i < found->size(); ++i) {
    const Json& name = (*found)[i];
    const std::string at = where + ".demand_pipes[" + std::to_string(i) + "]";
    if (!name.is_string() || name.template get<std::string>().empty()) {
      error = at + ": expected a pipe name, got " + shownJson(name);
      return false;
    }
    for (const std::string& earlier : out)
      if (earlier == name.template get<std::string>()) {
        error = at + ": pipe '" + earlier + "' is named twice";
        return false;
      }
    out.push_back(name.template get<std::string>());
  }
  return true;
}

/// The number of ranks of a layout that checkRankLayout accepts.
inline int rankCountOf(const std::vector<MapRank>& ranks) { return ranks.empty() ? 0 : ranks.back().rank + 1; }

}  // namespace dispar::lang

#endif  // DISPAR_LANG_MAPRANK_H
