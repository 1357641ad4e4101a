// Which VNODE instances each rank runs (docs/runtime.md, "Rank groups"). Instances are numbered as
// ProgramSpec lays them out (VnodeSpec::firstRank + replica); without a grouping rank i runs instance i.
#ifndef DISPAR_RUNTIME_GROUPING_H
#define DISPAR_RUNTIME_GROUPING_H

#include "Program.h"

#include "dispar_lang/MapRank.h"

#include <string>
#include <vector>

namespace dispar::rt {

struct RankGroups {
  std::vector<std::vector<int>> instancesOfRank;  // each rank's instances, ascending
  std::vector<int> rankOfInstance;
  std::string source;  // the mapping file it came from; empty: none

  int rankCount() const { return static_cast<int>(instancesOfRank.size()); }
  /// Whether some rank runs more than one instance (its instances then run on threads).
  bool threaded() const;
};

/// The paper's layout: one rank per instance.
RankGroups onePerInstance(const ProgramSpec& program);

/// Rank r runs `instancesOfRank[r]`. Empty when that covers every instance of `program` exactly once,
/// else what is wrong ("instance 4 (vnode 'sink' replica 0) is run by ranks 1 and 2").
std::string makeGroups(const ProgramSpec& program, std::vector<std::vector<int>> instancesOfRank, RankGroups& out);

/// The grouping a mapping file records (entries as lang::checkRankLayout accepts them) for the program
/// named `mapProgram`. Empty when it fits `program`, else the reason, naming the file:
/// "mapping file 'x.map.json' is for program 'fir', not 'fmradio'; run `streammap map` for this program".
std::string groupsFromMap(const ProgramSpec& program, const std::string& mapProgram,
                          const std::vector<lang::MapRank>& entries, const std::string& path, RankGroups& out);

/// "vnode 'sink' replica 0" for instance `instance`.
std::string describeInstance(const ProgramSpec& program, int instance);

}  // namespace dispar::rt

#endif  // DISPAR_RUNTIME_GROUPING_H
