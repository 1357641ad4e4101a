#include "Grouping.h"

#include <algorithm>

namespace dispar::rt {

bool RankGroups::threaded() const {
  return std::any_of(instancesOfRank.begin(), instancesOfRank.end(),
                     [](const std::vector<int>& instances) { return instances.size() > 1; });
}

std::string describeInstance(const ProgramSpec& program, int instance) {
  if (const std::optional<InstanceId> id = instanceOfRank(program, instance))
    return std::string("vnode '") + program.vnodes[id->vnode].name + "' replica " + std::to_string(id->replica);
  return "instance " + std::to_string(instance);
}

RankGroups onePerInstance(const ProgramSpec& program) {
  RankGroups groups;
  for (int instance = 0; instance < program.rankCount; ++instance) {
    groups.instancesOfRank.push_back({instance});
    groups.rankOfInstance.push_back(instance);
  }
  return groups;
}

std::string makeGroups(const ProgramSpec& program, std::vector<std::vector<int>> instancesOfRank, RankGroups& out) {
  RankGroups groups;
  groups.rankOfInstance.assign(static_cast<std::size_t>(program.rankCount), -1);
  for (std::size_t rank = 0; rank < instancesOfRank.size(); ++rank) {
    std::vector<int>& instances = instancesOfRank[rank];
    if (instances.empty()) return "rank " + std::to_string(rank) + " runs no instance";
    std::sort(instances.begin(), instances.end());
    for (int instance : instances) {
      if (instance < 0 || instance >= program.rankCount)
        return "rank " + std::to_string(rank) + " names instance " + std::to_string(instance) +
               " but the program has " + std::to_string(program.rankCount);
      int& owner = groups.rankOfInstance[static_cast<std::size_t>(instance)];
      if (owner != -1)
        return describeInstance(program, instance) + " is run by ranks " + std::to_string(owner) + " and " +
               std::to_string(rank);
      owner = static_cast<int>(rank);
    }
  }
  for (int instance = 0; instance < program.rankCount; ++instance)
    if (groups.rankOfInstance[static_cast<std::size_t>(instance)] == -1)
      return describeInstance(program, instance) + " is run by no rank";
  groups.instancesOfRank = std::move(instancesOfRank);
  out = std::move(groups);
  return {};
}

std::string groupsFromMap(const ProgramSpec& program, const std::string& mapProgram,
                          const std::vector<lang::MapRank>& entries, const std::string& path, RankGroups& out) {
  const std::string file = "mapping file '" + path + "' ";
  const std::string again = "; run `streammap map` again for this program";
  const std::string name = program.program ? program.program : "";
  if (mapProgram != name) return file + "is for program '" + mapProgram + "', not '" + name + "'" + again;
  std::vector<std::vector<int>> instancesOfRank(static_cast<std::size_t>(lang::rankCountOf(entries)));
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const lang::MapRank& entry = entries[i];
    const std::string where = file + "ranks[" + std::to_string(i) + "]";
    int vnode = -1;
    for (int v = 0; v < program.vnodeCount; ++v)
      if (entry.vnode == program.vnodes[v].name) vnode = v;
    if (vnode == -1)
      return where + " names vnode '" + entry.vnode + "', which program '" + name + "' does not have" + again;
    if (entry.replica >= program.vnodes[vnode].replicas)
      return where + " names replica " + std::to_string(entry.replica) + " of vnode '" + entry.vnode + "', which has " +
             std::to_string(program.vnodes[vnode].replicas) + again;
    instancesOfRank[static_cast<std::size_t>(entry.rank)].push_back(program.vnodes[vnode].firstRank + entry.replica);
  }
  const std::string problem = makeGroups(program, std::move(instancesOfRank), out);
  if (!problem.empty()) return file + "does not fit program '" + name + "': " + problem + again;
  out.source = path;
  return {};
}

}  // namespace dispar::rt
