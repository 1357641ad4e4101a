// Runs a launcher (mpiexec, mpirun, srun) as a child of `streammap run` and stays its supervisor:
// SIGINT, SIGTERM and SIGHUP sent to streammap are passed on to the launcher, so that a terminal's ^C or
// a batch system's or supervisor's timeout stops the whole job, not streammap alone.
#ifndef STREAMMAP_LAUNCH_H
#define STREAMMAP_LAUNCH_H

#include <string>
#include <vector>

namespace dispar::streammap {

/// Spawns `argv` (searched in PATH) with environment `environment` ("NAME=value") and waits for it,
/// forwarding the signals above (those not ignored: `nohup` keeps SIGHUP away from both). Returns its exit
/// status; 128 + the signal when a signal ended it or one was forwarded to it (the job did not run to
/// its end, whatever the launcher then returns); -1 with `error` set when it could not be started or
/// waited for. With `stderrPath`, the launcher's standard error goes to that file (created or truncated).
int runLauncher(const std::vector<std::string>& argv, const std::vector<std::string>& environment, std::string& error,
                const std::string& stderrPath = "");

}  // namespace dispar::streammap

#endif
