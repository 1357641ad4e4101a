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

/// Reads entry `index` of "ranks"; `where` names it in messages ("map.ranks[3]", "ranks[3]"). False with
/// `error` set: "WHERE.device: expected an integer, got \"one\"", "WHERE.rank: expected 3, got 4".
template <class Json>
bool readMapRank(const Json& entry, std::size_t index, const std::string& where, MapRank& out, std::string& error) {
  const JsonFields<Json> field(entry, where, error);
  MapRank k;
  std::int64_t rank = 0, replica = 0;
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  if (!field.integer("rank", 0, kIntMax, rank)) return false;
  k.rank = static_cast<int>(rank);
  if (k.rank != static_cast<int>(index))
    return field.fail("rank", "expected " + std::to_string(index) + ", got " + std::to_string(k.rank));
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

}  // namespace dispar::lang

#endif  // DISPAR_LANG_MAPRANK_H
