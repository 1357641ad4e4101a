// Runs a launcher (mpiexec, mpirun, srun) as a child of `streammap run` and stays its supervisor:
// SIGINT, SIGTERM and SIGHUP sent to streammap are passed on to the launcher, so that a terminal's ^C or
// a batch system's or supervisor's timeout stops the whole job, not streammap alone.
#ifndef STREAMMAP_LAUNCH_H
#define STREAMMAP_LAUNCH_H

#include "streammap/LauncherDeath.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dispar::streammap {

/// The deaths read on the launcher's standard error: the first rank-death line's signal (0: none), and
/// the launcher's own report of the first rank it saw die of a signal.
struct LaunchDeaths {
  int rankSignal = 0;
  std::optional<LauncherDeath> launcherDeath;
  std::set<int> reportedRanks;  // the ranks whose death lines were seen
};

/// Spawns `argv` (searched in PATH) with environment `environment` ("NAME=value") and waits for it,
/// forwarding the signals above (those not ignored: `nohup` keeps SIGHUP away from both). The launcher
/// gets SIGTERM when the calling process dies, even by SIGKILL (PR_SET_PDEATHSIG), so the job never
/// outlives it. Returns its exit status; 128 + the signal when a signal ended it or one was forwarded to
/// it, or when a rank reported a signal that killed it or the launcher reported one (the job did not run
/// to its end, whatever the launcher then returns); -1 with `error` set when it could not be started or
/// waited for. The launcher's standard output and error are passed on to ours, and read for the ranks'
/// death lines (dispar_lang/RankDeath.h) and the launcher's own reports (LauncherDeath.h), into `deaths`.
/// With `stderrPath`, its standard error goes to that file instead (created or truncated), its standard
/// output straight to ours, and neither is read.
///
/// Once the job has been told to end (a signal forwarded, or a rank's end mark in the rank registry
/// `registry` saying it aborted the job), the launcher has kLauncherGraceSeconds to end; then it is
/// killed, with a line saying so: a launcher that cannot reach one of its nodes (a link down) would
/// otherwise wait for it for TCP's timeouts, or forever.
int runLauncher(const std::vector<std::string>& argv, const std::vector<std::string>& environment, std::string& error,
                const std::string& stderrPath = "", LaunchDeaths* deaths = nullptr, const std::string& registry = "");

/// How long a launcher has to end once its job has been told to.
inline constexpr double kLauncherGraceSeconds = 10;

/// Runs `argv` (searched in PATH) with environment `environment`, its output discarded, for at most
/// `timeoutSeconds`; its exit status, 128 + the signal that ended it, or -1 when it could not be started
/// or did not end in time (then killed).
int runQuietly(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
               double timeoutSeconds);

}  // namespace dispar::streammap

#endif
