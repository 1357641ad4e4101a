// A mapping file with a given grouping of a program's instances, written by hand as `streammap map`
// would (docs/streammap.md, "File formats"): what the end-to-end tests give DISPAR_MAPPING to run one
// program under several groupings.
#ifndef DISPAR_TESTS_E2E_GROUPINGMAP_H
#define DISPAR_TESTS_E2E_GROUPINGMAP_H

#include "dispar_lang/Rtg.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace dispar::testing {

/// A mapping file grouping the instances (RTG vertex ids) as `grouping` says, for program `program`.
inline std::string mapFile(const std::string& program, const lang::Rtg& rtg,
                           const std::vector<std::vector<int>>& grouping) {
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (std::size_t rank = 0; rank < grouping.size(); ++rank)
    for (int instance : grouping[rank]) {
      const lang::RtgVertex& vertex = rtg.vertices[static_cast<std::size_t>(instance)];
      ranks.push_back({{"rank", rank},
                       {"vnode", vertex.vnode},
                       {"replica", vertex.replica},
                       {"type", vertex.type == lang::Requirement::CG ? "CG" : "CO"},
                       {"host", "localhost"},
                       {"device", nullptr},
                       {"mode", vertex.type == lang::Requirement::CG ? "host-fallback" : "cpu"}});
    }
  nlohmann::ordered_json map = {{"format", "dispar-map"}, {"version", 2}, {"program", program}, {"ranks", ranks}};
  return map.dump(2);
}

/// Every instance of `rtg` in one rank.
inline std::vector<std::vector<int>> oneRank(const lang::Rtg& rtg) {
  std::vector<std::vector<int>> grouping(1);
  for (std::size_t i = 0; i < rtg.vertices.size(); ++i) grouping[0].push_back(static_cast<int>(i));
  return grouping;
}

}  // namespace dispar::testing

#endif  // DISPAR_TESTS_E2E_GROUPINGMAP_H
