// `streammap daemon`: keeps one node's record current — re-probes every probe interval, records what
// changed, refreshes the heartbeat every interval — until SIGTERM or SIGINT.
#ifndef STREAMMAP_DAEMON_H
#define STREAMMAP_DAEMON_H

#include "streammap/NodeProbe.h"

#include <string>

namespace dispar::streammap {

struct DaemonOptions {
  std::string dbPath;               // SQLite file or postgresql:// connection string
  double intervalSeconds = 30;      // heartbeat period; may be fractional (at least 0.05)
  double probeIntervalSeconds = 0;  // re-probe period; 0: every interval. A probe costs far more than a
                                    // heartbeat (hwloc, the CUDA driver), so fast heartbeats want rarer probes
  int ttlSeconds = 0;               // 0: three intervals, rounded up to whole seconds; recorded with the node
  std::string pidFile;              // empty: none
  ProbeOptions probe;               // probe.hostName empty: localHostName()
};

/// Runs until SIGTERM/SIGINT (handled through a signalfd, so the wait ends at once). Refuses to start
/// when another daemon holds daemonLockPath(db, host), naming its pid. A failed update is logged and
/// retried at the next interval; a lost connection to a PostgreSQL server is re-established at the next
/// interval (and logged). Returns the exit status.
int runDaemon(const DaemonOptions& options);

/// The lock file that keeps one daemon per node and database: `<db>.daemon.<host>.lock` beside an SQLite
/// file; for a PostgreSQL database, which has no directory here, $TMPDIR (default /tmp)
/// /streammap-daemon.<hash>.<host>.lock with <hash> derived from the connection string without password.
std::string daemonLockPath(const std::string& dbPath, const std::string& host);

}  // namespace dispar::streammap

#endif
