// What a launcher says, on its standard error, about the first rank it saw die, for the deaths a rank
// cannot report itself (SIGKILL: the out-of-memory killer, `kill -9`):
//   MPICH's hydra   "=   PID 13950 RUNNING AT n1" then "=   EXIT CODE: 9" (the bare signal number)
//   Slurm's srun    "srun: error: n1: task 3: Killed" (or "tasks 2-3")
//   Open MPI        "mpirun noticed that process rank 0 with PID 123 on node n1 exited on signal 9 (Killed)."
// `streammap run` turns it into a rank-death line with the rank's instances (dispar_lang/RankDeath.h).
#ifndef STREAMMAP_LAUNCHER_DEATH_H
#define STREAMMAP_LAUNCHER_DEATH_H

#include "dispar_lang/RankDeath.h"

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace dispar::streammap {

struct LauncherDeath {
  int rank = -1;  // -1: the launcher named a process id only (hydra)
  long pid = -1;  // -1: the launcher named a rank only (srun)
  std::string host;
  int signal = 0;
};

/// Reads the launcher's standard error line by line; keeps the first death that names a signal.
class LauncherDeathReader {
 public:
  void line(std::string_view text);
  const std::optional<LauncherDeath>& first() const { return first_; }

 private:
  std::optional<LauncherDeath> first_;
  long hydraPid_ = -1;  // hydra's banner names the process, then its exit code, on separate lines
  std::string hydraHost_;
};

/// The record the dead rank left in the rank registry folder `registry` (dispar_lang/RankDeath.h): by
/// rank when the launcher named one, else by process id on the same host; nullopt when it left none (a
/// rank on a node that cannot see the folder).
std::optional<lang::RankRecord> recordOfDeadRank(const std::string& registry, const LauncherDeath& death);

/// A node all of whose ranks ended without a word: each left a record in the registry but neither a death
/// line (`reported`) nor an end mark (dispar_lang/RankDeath.h). What a node that fails or is cut off looks
/// like from the launcher's side; so does a job whose every rank a launcher killed at once.
struct SilentNode {
  std::string host;
  std::vector<lang::RankRecord> ranks;  // by rank
};

struct SilentNodes {
  std::vector<SilentNode> nodes;  // by host
  bool heard = false;             // another rank of the job ended or reported its death
};

/// The lowest rank whose end mark in the registry says it ended the job (kRankAborted: a VNODE failed, a
/// stall or an unreachable rank); nullopt when none has, or without a registry.
std::optional<int> abortingRank(const std::string& registry);

/// Whether each of the job's `rankCount` ranks marked in the registry that its run returned status 0: the
/// job's work is complete, whatever the launcher says of its own shutdown after.
bool everyRankEndedWell(const std::string& registry, int rankCount);

/// The silent nodes of a job that failed; none where a rank aborted the job (its failure explains the
/// end) or without a registry.
SilentNodes silentNodes(const std::string& registry, const std::set<int>& reported);

}  // namespace dispar::streammap

#endif
