// The resource database: the cluster's nodes, their GPUs, status and heartbeats (docs/streammap.md,
// "The resource database"), in an SQLite file (one machine) or, for a location that is a
// postgresql:// or postgres:// connection string, in a PostgreSQL database (the whole cluster).
// Both backends have the same schema, versioning, transactions and error semantics.
//
// Safety rules: a file that is not an SQLite database, or an SQLite database of another application
// (PRAGMA application_id), or of a newer schema (PRAGMA user_version) is refused with an error naming
// the file and is never written. Older schemas are migrated forward in one transaction. Every update
// is one BEGIN IMMEDIATE transaction; concurrent writers wait on a busy timeout; the database runs in
// WAL mode, so a writer killed mid-transaction leaves the last committed state. On PostgreSQL the
// identity and version live in the table dispar_meta, node updates lock the node's row (updates that
// change the set of nodes lock out all writers), serialization failures and deadlocks are retried, and
// reads run in one REPEATABLE READ snapshot. Messages name a server by its connection string without
// the password.
#ifndef STREAMMAP_RESOURCE_DB_H
#define STREAMMAP_RESOURCE_DB_H

#include "streammap/Cluster.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dispar::streammap {

/// Default database path: $DISPAR_RESOURCE_DB when set and non-empty; else /var/lib/dispar/resources.db
/// when running as root (the system-wide database the daemon keeps); else
/// $XDG_STATE_HOME/dispar/resources.db, with XDG_STATE_HOME defaulting to ~/.local/state.
std::string defaultDatabasePath();

/// True when `location` is a PostgreSQL connection string (postgresql://... or postgres://...) rather
/// than an SQLite file's path.
bool isDatabaseUrl(const std::string& location);

/// `location` as messages and logs may show it: a path as is, a connection string without its password.
std::string displayDatabaseName(const std::string& location);

class ResourceDb;

/// Reads the database's current cluster (nodes sorted by host). Liveness rule: a node kept alive by a
/// daemon (one that recorded a heartbeat TTL) whose last heartbeat is older than its TTL counts as Down;
/// `ttlSeconds` > 0 replaces every such node's recorded TTL. Nodes without a recorded TTL — imported
/// nodes and nodes recorded by a one-shot `--discover` — are exempt. Drained nodes stay Drained.
bool loadClusterFromDatabase(const std::string& path, int ttlSeconds, Cluster& out, std::string& error);
/// The same from a database already open (a command that also reads its performance history).
bool loadClusterFromDatabase(ResourceDb& db, int ttlSeconds, Cluster& out, std::string& error);

/// The schema version this build writes (PRAGMA user_version; dispar_meta.schema_version on PostgreSQL)
/// and its application id (PRAGMA application_id; dispar_meta.application_id).
constexpr int kResourceDbSchemaVersion = 4;
constexpr std::int32_t kResourceDbApplicationId = 0x44535052;  // "DSPR"

/// A node as stored, with the bookkeeping that is not part of the cluster model.
struct NodeRecord {
  NodeInfo node;                           // status as stored (not adjusted for the TTL)
  std::optional<int> heartbeatTtlSeconds;  // set while a daemon keeps the node alive
  std::int64_t heartbeatCount = 0;         // heartbeats recorded since the node was first recorded
  std::int64_t updatedAt = 0;              // unix seconds of the last change to the record
};

/// What a re-probe changed, in words ("memory 64.0 GiB -> 32.0 GiB", "gpu 1 (Tesla K20) gone").
struct NodeChanges {
  bool isNew = false;
  std::vector<std::string> descriptions;
};

/// One VNODE instance's measurement in the performance history (docs/streammap.md, "Measured costs").
struct CostSample {
  std::int64_t runId = 0;       // the profile run it came from
  std::int64_t recordedAt = 0;  // unix seconds
  std::string program, vnode, fingerprint;
  int replica = 0, replicas = 1;
  std::string deviceClass;  // "cpu" (CPU or host path) or "gpu"
  std::string deviceModel;  // the GPU's or the CPU's model name
  std::string host;
  double secondsPerMessage = 0;  // compute time over the run's period messages
  double speed = 1.0;            // the device's relative speed (the cost model's) where it was measured
  std::string features = "{}";   // the RTG's code features of the VNODE, a JSON object; "{}" when unknown
};

/// One pipe's traffic in one profiled run.
struct PipeSample {
  std::int64_t runId = 0;
  std::string program, pipe;
  std::uint64_t messages = 0, bytes = 0;
};

/// One profile as `streammap profile add` records it.
struct ProfileRunRecord {
  std::string program;
  std::string source;  // the profile file as given
  std::uint64_t periodMessages = 1;
  std::vector<CostSample> samples;
  std::vector<PipeSample> pipes;
};

/// Which recorded runs `streammap profile remove` deletes: one run by its number, or the runs of `program`
/// (all of them, or those recorded before `before`, unix seconds).
struct ProfileRunSelection {
  std::optional<std::int64_t> run;
  std::string program;
  std::optional<std::int64_t> before;
};

/// Applies the liveness rule above to one stored record at time `now`.
NodeStatus effectiveStatus(const NodeRecord& record, std::int64_t now, int ttlOverrideSeconds);

class ResourceDb {
 public:
  enum class OpenMode {
    Existing,         // error when the file does not exist
    CreateIfMissing,  // creates the file (and its directory) with the current schema
  };

  /// Opens, validates and, when older, migrates the database. On failure returns null and sets
  /// `error` to a message that starts with the path (displayDatabaseName). For PostgreSQL the database
  /// must exist; CreateIfMissing creates the schema in it, Existing requires it.
  static std::unique_ptr<ResourceDb> open(const std::string& path, OpenMode mode, std::string& error);
  ~ResourceDb();
  ResourceDb(const ResourceDb&) = delete;
  ResourceDb& operator=(const ResourceDb&) = delete;

  /// The file's path, or the connection string without its password.
  const std::string& path() const { return path_; }
  /// The version the file had when opened (before migration) — 0 for a new file.
  int openedSchemaVersion() const { return openedVersion_; }

  /// Called as recordNodes and importNodes write their nodes, in batches: (written, total). A repeated
  /// transaction starts again from 0.
  using WriteProgress = std::function<void(std::size_t written, std::size_t total)>;
  void setWriteProgress(WriteProgress progress) { writeProgress_ = std::move(progress); }

  /// Records a probed or described node (insert or replace its resources). A drained node stays
  /// drained; otherwise the status becomes node.status. `heartbeatTtlSeconds` set marks the node as
  /// kept alive by a daemon. `changes`, when given, receives what differs from the stored record.
  bool recordNode(const NodeInfo& node, std::optional<int> heartbeatTtlSeconds, NodeChanges* changes,
                  std::string& error);

  /// Records several nodes in one transaction. With `markOthersDown`, every stored node not in `nodes`
  /// and not drained becomes Down; their hosts are appended to `markedDown`.
  bool recordNodes(const std::vector<NodeInfo>& nodes, bool markOthersDown, std::vector<std::string>* markedDown,
                   std::string& error);

  /// `streammap cluster import` in one transaction: records `nodes` (source as given), each first passed
  /// through `merge` with the record stored for its host (null when none) when `merge` is set; with
  /// `importedStatusWins` a node stored as drained takes the imported status too (Slurm's drain and
  /// resume are the truth); with `removeOthers` every stored node not in `nodes` is removed, its host
  /// appended to `removed`. `recorded`, when given, receives the nodes as written.
  struct ImportRules {
    std::function<NodeInfo(const NodeInfo* stored, const NodeInfo& imported)> merge;
    bool importedStatusWins = false;
    bool removeOthers = false;
  };
  bool importNodes(const std::vector<NodeInfo>& nodes, const ImportRules& rules, std::vector<NodeInfo>* recorded,
                   std::vector<std::string>* removed, std::string& error);

  /// Removes every node whose host is not in `keep` (cluster import --replace).
  bool removeNodesExcept(const std::vector<std::string>& keep, std::vector<std::string>* removed, std::string& error);

  /// Refreshes a node's heartbeat to `now` and increments its heartbeat count. False with an error when
  /// the host is not recorded.
  bool heartbeat(const std::string& host, std::int64_t now, std::string& error);

  /// Sets the administrative status (drain / resume / down). False with an error for an unknown host.
  bool setStatus(const std::string& host, NodeStatus status, std::string& error);

  bool readRecords(std::vector<NodeRecord>& out, std::string& error);
  /// `found` is false when the host is not recorded.
  bool readRecord(const std::string& host, NodeRecord& out, bool& found, std::string& error);

  /// Records one profiled run and its samples in one transaction; `runId` receives the run's number
  /// (1, 2, ... in the order runs were recorded).
  bool recordProfileRun(const ProfileRunRecord& run, std::int64_t& runId, std::string& error);
  /// The history of `program` (every program's when empty), samples and pipes ordered by run, then
  /// as recorded.
  bool readHistory(const std::string& program, std::vector<CostSample>& samples, std::vector<PipeSample>& pipes,
                   std::string& error);

  /// Deletes the selected runs with their samples, in one transaction; `removed` receives their numbers
  /// (empty when none matched).
  bool removeProfileRuns(const ProfileRunSelection& which, std::vector<std::int64_t>& removed, std::string& error);

  /// PRAGMA integrity_check's first line ("ok" when healthy). On PostgreSQL, which checks its own
  /// storage, "ok" once the metadata and every table of the schema are in place.
  bool integrityCheck(std::string& result, std::string& error);

  /// When the connection to a server was lost since the last call, reconnects (`reconnected` true).
  /// False with an error when the server still cannot be reached. Always true for SQLite.
  bool reconnectIfLost(bool& reconnected, std::string& error);

  class Impl;

 private:
  ResourceDb(std::string path, std::unique_ptr<Impl> impl, int openedVersion);
  void writeNodes(const NodeInfo* nodes, std::size_t count, std::int64_t now);
  std::string path_;
  WriteProgress writeProgress_;
  std::unique_ptr<Impl> impl_;
  int openedVersion_ = 0;
};

}  // namespace dispar::streammap

#endif
