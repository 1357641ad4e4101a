// Where each instance ran, as the ranks themselves say it: programs that check placement (tests/e2e/
// placement/placement.dsp, tests/cluster/transfer.dsp...) print "placed VNODE REPLICA HOST ..." from each
// instance. One reader of those lines for every test that compares them with a mapping file.
#ifndef DISPAR_TESTS_E2E_PLACEMENTS_H
#define DISPAR_TESTS_E2E_PLACEMENTS_H

#include "Process.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>

namespace dispar::testing {

/// (vnode, replica) -> host, from the "placed" lines of `output`.
inline std::map<std::pair<std::string, int>, std::string> placedHosts(const std::string& output) {
  std::map<std::pair<std::string, int>, std::string> placed;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string tag, vnode, host;
    int replica = -1;
    if (words >> tag >> vnode >> replica >> host && tag == "placed") placed[{vnode, replica}] = host;
  }
  return placed;
}

/// Every instance of the mapping file `mapPath` reported from the host its mapping names; the hosts they
/// ran on.
inline std::set<std::string> expectPlacedAsMapped(const std::string& output, const std::string& mapPath) {
  const auto placed = placedHosts(output);
  const nlohmann::json map = nlohmann::json::parse(readFile(mapPath));
  std::set<std::string> hosts;
  for (const nlohmann::json& rank : map.at("ranks")) {
    const auto key = std::make_pair(rank.at("vnode").get<std::string>(), rank.at("replica").get<int>());
    const auto at = placed.find(key);
    if (at == placed.end()) {
      ADD_FAILURE() << key.first << " " << key.second << " did not report\n" << output;
      continue;
    }
    EXPECT_EQ(at->second, rank.at("host").get<std::string>()) << key.first << " replica " << key.second;
    hosts.insert(at->second);
  }
  return hosts;
}

}  // namespace dispar::testing

#endif  // DISPAR_TESTS_E2E_PLACEMENTS_H
