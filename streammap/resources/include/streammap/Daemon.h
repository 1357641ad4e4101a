// `streammap daemon`: keeps one node's record current — re-probes every interval, records what changed,
// refreshes the heartbeat — until SIGTERM or SIGINT.
#ifndef STREAMMAP_DAEMON_H
#define STREAMMAP_DAEMON_H

#include "streammap/NodeProbe.h"

#include <string>

namespace dispar::streammap {

struct DaemonOptions {
  std::string dbPath;
  int intervalSeconds = 30;
  int ttlSeconds = 0;       // 0: three intervals; recorded with the node (see loadClusterFromDatabase)
  std::string pidFile;      // empty: none
  ProbeOptions probe;       // probe.hostName empty: localHostName()
};

/// Runs until SIGTERM/SIGINT (handled through a signalfd, so the wait ends at once). Refuses to start
/// when another daemon holds `<db>.daemon.<host>.lock`, naming its pid. Returns the exit status.
int runDaemon(const DaemonOptions& options);

/// The lock file that keeps one daemon per node and database.
std::string daemonLockPath(const std::string& dbPath, const std::string& host);

}  // namespace dispar::streammap

#endif
