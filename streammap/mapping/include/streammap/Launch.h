// Runs a launcher (mpiexec, mpirun, srun) as a child of `streammap run` and stays its supervisor:
// SIGINT, SIGTERM and SIGHUP sent to streammap are passed on to the launcher, so that a terminal's ^C or
// a batch system's or supervisor's timeout stops the whole job, not streammap alone.
#ifndef STREAMMAP_LAUNCH_H
#define STREAMMAP_LAUNCH_H

#include <string>
#include <vector>

namespace dispar::streammap {

/// Spawns `argv` (searched in PATH) with environment `environment` ("NAME=value") and waits for it,
/// forwarding the signals above (those not ignored: `nohup` keeps SIGHUP away from both). The launcher
/// gets SIGTERM when the calling process dies, even by SIGKILL (PR_SET_PDEATHSIG), so the job never
/// outlives it. Returns its exit status; 128 + the signal when a signal ended it or one was forwarded to
/// it, or when a rank reported a signal that killed it (the job did not run to its end, whatever the
/// launcher then returns); -1 with `error` set when it could not be started or waited for.
/// The launcher's standard error is passed on to ours, and read for the ranks' death lines
/// (dispar_lang/RankDeath.h): the first one's signal goes to `rankSignal` (0: none). With `stderrPath`,
/// it goes to that file instead (created or truncated) and is not read.
int runLauncher(const std::vector<std::string>& argv, const std::vector<std::string>& environment, std::string& error,
                const std::string& stderrPath = "", int* rankSignal = nullptr);

}  // namespace dispar::streammap

#endif
