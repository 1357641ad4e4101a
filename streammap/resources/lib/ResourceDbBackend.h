// The storage behind ResourceDb: one abstract backend (ResourceDb::Impl) with an SQLite and a
// PostgreSQL implementation. ResourceDb.cpp holds the logic both share — which primitives make up an
// update, change descriptions, the liveness rule — and this header the SQL and row handling both run:
// the schema and its migrations, the statements that write a node and the queries that read records,
// templated on the backend's Statement type (sqlite::Statement and postgres::Statement look alike).
#ifndef STREAMMAP_LIB_RESOURCE_DB_BACKEND_H
#define STREAMMAP_LIB_RESOURCE_DB_BACKEND_H

#include "streammap/ResourceDb.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dispar::streammap {

/// Version 1 of the schema, in SQLite's spelling (postgresDialect translates it).
extern const char* const kSchemaV1;
/// kMigrations[i] takes the schema from version i + 1 to version i + 2.
extern const char* const kMigrations[kResourceDbSchemaVersion - 1];

/// SQLite DDL as PostgreSQL needs it: 64-bit INTEGER and 8-byte REAL (PostgreSQL's INTEGER and REAL
/// are 32-bit), so that the two backends store the same values.
std::string postgresDialect(const std::string& sql);

class ResourceDb::Impl {
 public:
  /// Which writers an update excludes. Node: updates of one node's row, which may run beside updates
  /// of other nodes. Table: updates that read or change the set of nodes, which run alone.
  enum class WriteScope { Node, Table };

  virtual ~Impl() = default;

  /// Validates the store and brings its schema to the current version; returns the version found
  /// (0 for a new one). With `create` false, a store without our schema is an error.
  virtual int prepareSchema(bool create) = 0;

  /// Runs `body` as one write transaction, committing when it returns. A transaction the backend may
  /// have to repeat (serialization failure, deadlock) is run again, so `body` must start by resetting
  /// whatever it reports.
  virtual void write(WriteScope scope, const std::function<void()>& body) = 0;
  /// Runs `body` in one read transaction: every query in it sees one snapshot.
  virtual void read(const std::function<void()>& body) = 0;

  // Primitives, each valid inside write() (and the reading ones inside read()).
  /// Makes concurrent updates of `host` wait for this transaction (a no-op where writers are serialized).
  virtual void lockNode(const std::string& host) = 0;
  virtual void readRecords(const std::string* host, std::vector<NodeRecord>& out) = 0;
  virtual void writeNodes(const NodeInfo* nodes, std::size_t count, std::optional<int> ttl, std::int64_t now) = 0;
  virtual std::vector<std::string> allHosts() = 0;
  /// False when the host is unknown (or, for markDown, not up).
  virtual bool markDown(const std::string& host, std::int64_t now) = 0;
  virtual void removeNode(const std::string& host) = 0;
  virtual bool heartbeat(const std::string& host, std::int64_t now) = 0;
  virtual bool setStatus(const std::string& host, NodeStatus status, std::int64_t now) = 0;

  /// The performance history: inserts a run and its samples (inside write()), returning the run's id;
  /// reads `program`'s samples (every program's for null).
  virtual std::int64_t insertProfileRun(const ProfileRunRecord& run, std::int64_t now) = 0;
  virtual void readHistory(const std::string* program, std::vector<CostSample>& samples,
                           std::vector<PipeSample>& pipes) = 0;
  /// Deletes the selected runs and their samples (inside write()); their ids.
  virtual std::vector<std::int64_t> deleteProfileRuns(const ProfileRunSelection& which) = 0;

  virtual std::string integrityCheck() = 0;
  /// Re-establishes a connection lost since the last operation; true when it did.
  virtual bool reconnectIfLost() = 0;
};

std::unique_ptr<ResourceDb::Impl> openSqliteBackend(const std::string& path, bool create);
std::unique_ptr<ResourceDb::Impl> openPostgresBackend(const std::string& conninfo);

/// Reads all records, or only `host`'s, through Statement/Connection (either backend's). Four queries
/// in total, joined in memory, so that a 10,000-node database reads in milliseconds. `cacheOrder` is
/// the tie-break that keeps a node's caches in the order they were written.
template <typename Statement, typename Connection>
void readNodeRecords(Connection& connection, const std::string* host, const char* cacheOrder,
                     std::vector<NodeRecord>& out) {
  const std::string where = host ? " WHERE host = ?1" : "";
  std::map<std::string, std::size_t> byHost;
  {
    Statement s(connection, ("SELECT host, sockets, cores, threads, memory_bytes, status, source, "
                             "last_heartbeat, heartbeat_ttl_s, heartbeat_count, updated_at, cpu_speed, "
                             "bandwidth_bytes_per_s FROM nodes" +
                             where + " ORDER BY host")
                                .c_str());
    if (host) s.bind(1, *host);
    while (s.step()) {
      NodeRecord r;
      r.node.host = s.columnText(0);
      r.node.sockets = static_cast<int>(s.columnInt(1));
      r.node.cores = static_cast<int>(s.columnInt(2));
      r.node.threads = static_cast<int>(s.columnInt(3));
      r.node.memoryBytes = static_cast<std::uint64_t>(s.columnInt(4));
      if (!parseNodeStatus(s.columnText(5), r.node.status) || !parseRecordSource(s.columnText(6), r.node.source))
        throw std::runtime_error("node '" + r.node.host + "' has an invalid status or source");
      if (!s.columnIsNull(7)) r.node.lastHeartbeat = s.columnInt(7);
      if (!s.columnIsNull(8)) r.heartbeatTtlSeconds = static_cast<int>(s.columnInt(8));
      r.heartbeatCount = s.columnInt(9);
      r.updatedAt = s.columnInt(10);
      r.node.cpuSpeed = s.columnDouble(11);
      if (!s.columnIsNull(12)) r.node.bandwidthBytesPerSec = s.columnDouble(12);
      byHost[r.node.host] = out.size();
      out.push_back(std::move(r));
    }
  }
  auto recordFor = [&](const std::string& h) -> NodeInfo* {
    auto it = byHost.find(h);
    return it == byHost.end() ? nullptr : &out[it->second].node;
  };
  {
    Statement s(connection, ("SELECT host, idx, memory_bytes FROM numa_nodes" + where + " ORDER BY host, idx").c_str());
    if (host) s.bind(1, *host);
    while (s.step())
      if (NodeInfo* n = recordFor(s.columnText(0)))
        n->numa.push_back({static_cast<int>(s.columnInt(1)), static_cast<std::uint64_t>(s.columnInt(2))});
  }
  {
    Statement s(
        connection,
        ("SELECT host, level, bytes, count FROM caches" + where + " ORDER BY host, level, " + cacheOrder).c_str());
    if (host) s.bind(1, *host);
    while (s.step())
      if (NodeInfo* n = recordFor(s.columnText(0)))
        n->caches.push_back({static_cast<int>(s.columnInt(1)), static_cast<std::uint64_t>(s.columnInt(2)),
                             static_cast<int>(s.columnInt(3))});
  }
  {
    Statement s(connection, ("SELECT host, idx, name, uuid, cc_major, cc_minor, memory_bytes, multiprocessors, "
                             "clock_khz, pci_bus_id, numa_node, measured_rate FROM gpus" +
                             where + " ORDER BY host, idx")
                                .c_str());
    if (host) s.bind(1, *host);
    while (s.step()) {
      NodeInfo* n = recordFor(s.columnText(0));
      if (!n) continue;
      GpuInfo g;
      g.index = static_cast<int>(s.columnInt(1));
      g.name = s.columnText(2);
      g.uuid = s.columnText(3);
      g.ccMajor = static_cast<int>(s.columnInt(4));
      g.ccMinor = static_cast<int>(s.columnInt(5));
      g.memoryBytes = static_cast<std::uint64_t>(s.columnInt(6));
      g.multiprocessors = static_cast<int>(s.columnInt(7));
      g.clockKHz = static_cast<int>(s.columnInt(8));
      g.pciBusId = s.columnText(9);
      g.numaNode = static_cast<int>(s.columnInt(10));
      if (!s.columnIsNull(11)) g.measuredRate = s.columnDouble(11);
      n->gpus.push_back(std::move(g));
    }
  }
}

/// The statements that write one node, prepared once per transaction.
template <typename Statement, typename Connection>
class NodeWriter {
 public:
  explicit NodeWriter(Connection& c)
      : upsert_(c, R"sql(
INSERT INTO nodes(host, sockets, cores, threads, memory_bytes, status, source, last_heartbeat,
                  heartbeat_ttl_s, heartbeat_count, updated_at, cpu_speed, bandwidth_bytes_per_s)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 0, ?10, ?11, ?12)
ON CONFLICT(host) DO UPDATE SET
  sockets = excluded.sockets, cores = excluded.cores, threads = excluded.threads,
  memory_bytes = excluded.memory_bytes,
  status = CASE WHEN nodes.status = 'drained' THEN 'drained' ELSE excluded.status END,
  source = excluded.source,
  last_heartbeat = excluded.last_heartbeat,
  heartbeat_ttl_s = CASE WHEN excluded.source = 'probe'
                         THEN coalesce(excluded.heartbeat_ttl_s, nodes.heartbeat_ttl_s)
                         ELSE excluded.heartbeat_ttl_s END,
  updated_at = excluded.updated_at,
  cpu_speed = excluded.cpu_speed, bandwidth_bytes_per_s = excluded.bandwidth_bytes_per_s)sql"),
        deleteNuma_(c, "DELETE FROM numa_nodes WHERE host = ?1"),
        deleteCaches_(c, "DELETE FROM caches WHERE host = ?1"), deleteGpus_(c, "DELETE FROM gpus WHERE host = ?1"),
        insertNuma_(c, "INSERT INTO numa_nodes(host, idx, memory_bytes) VALUES (?1, ?2, ?3)"),
        insertCache_(c, "INSERT INTO caches(host, level, bytes, count) VALUES (?1, ?2, ?3, ?4)"),
        insertGpu_(c, "INSERT INTO gpus(host, idx, name, uuid, cc_major, cc_minor, memory_bytes, "
                      "multiprocessors, clock_khz, pci_bus_id, numa_node, measured_rate) "
                      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)") {}

  void write(const NodeInfo& n, std::optional<int> ttl, std::int64_t now) {
    upsert_.bind(1, n.host)
        .bind(2, n.sockets)
        .bind(3, n.cores)
        .bind(4, n.threads)
        .bind(5, static_cast<std::int64_t>(n.memoryBytes))
        .bind(6, std::string(nodeStatusName(n.status)))
        .bind(7, std::string(recordSourceName(n.source)))
        .bindOptional(8, n.lastHeartbeat)
        .bindOptional(9, ttl)
        .bind(10, now)
        .bind(11, n.cpuSpeed)
        .bindOptional(12, n.bandwidthBytesPerSec);
    upsert_.run();
    for (Statement* s : {&deleteNuma_, &deleteCaches_, &deleteGpus_}) {
      s->bind(1, n.host);
      s->run();
    }
    for (const NumaInfo& numa : n.numa) {
      insertNuma_.bind(1, n.host).bind(2, numa.index).bind(3, static_cast<std::int64_t>(numa.memoryBytes));
      insertNuma_.run();
    }
    for (const CacheInfo& cache : n.caches) {
      insertCache_.bind(1, n.host)
          .bind(2, cache.level)
          .bind(3, static_cast<std::int64_t>(cache.bytes))
          .bind(4, cache.count);
      insertCache_.run();
    }
    for (const GpuInfo& g : n.gpus) {
      insertGpu_.bind(1, n.host)
          .bind(2, g.index)
          .bind(3, g.name)
          .bind(4, g.uuid)
          .bind(5, g.ccMajor)
          .bind(6, g.ccMinor)
          .bind(7, static_cast<std::int64_t>(g.memoryBytes))
          .bind(8, g.multiprocessors)
          .bind(9, g.clockKHz)
          .bind(10, g.pciBusId)
          .bind(11, g.numaNode)
          .bindOptional(12, g.measuredRate);
      insertGpu_.run();
    }
  }

 private:
  Statement upsert_, deleteNuma_, deleteCaches_, deleteGpus_, insertNuma_, insertCache_, insertGpu_;
};

/// The members of ResourceDb::Impl that are the same SQL on both backends, written once over the
/// backend's Statement and Connection: a backend derives from it, gives its connection and the column
/// that orders rows as inserted (`cacheOrder`: SQLite's rowid, PostgreSQL's ctid), and adds
/// transactions, locking, schema and connection handling.
template <typename Statement, typename Connection>
class RowStore : public ResourceDb::Impl {
 public:
  void readRecords(const std::string* host, std::vector<NodeRecord>& out) override {
    readNodeRecords<Statement>(connection(), host, cacheOrder_, out);
  }
  void writeNodes(const NodeInfo* nodes, std::size_t count, std::optional<int> ttl, std::int64_t now) override {
    NodeWriter<Statement, Connection> writer(connection());
    for (std::size_t i = 0; i < count; ++i) writer.write(nodes[i], ttl, now);
  }
  std::vector<std::string> allHosts() override {
    std::vector<std::string> hosts;
    Statement s(connection(), "SELECT host FROM nodes ORDER BY host");
    while (s.step()) hosts.push_back(s.columnText(0));
    return hosts;
  }
  bool markDown(const std::string& host, std::int64_t now) override {
    return change("UPDATE nodes SET status = 'down', updated_at = ?2 WHERE host = ?1 AND status = 'up'", host, now);
  }
  void removeNode(const std::string& host) override {
    Statement s(connection(), "DELETE FROM nodes WHERE host = ?1");
    s.bind(1, host);
    s.run();
  }
  /// One UPDATE: the row lock it takes (PostgreSQL) or the write lock (SQLite) makes concurrent
  /// increments queue, so none is lost.
  bool heartbeat(const std::string& host, std::int64_t now) override {
    return change("UPDATE nodes SET last_heartbeat = ?2, heartbeat_count = heartbeat_count + 1 WHERE host = ?1", host,
                  now);
  }
  bool setStatus(const std::string& host, NodeStatus status, std::int64_t now) override {
    Statement s(connection(), "UPDATE nodes SET status = ?2, updated_at = ?3 WHERE host = ?1");
    s.bind(1, host).bind(2, std::string(nodeStatusName(status))).bind(3, now);
    return s.run() > 0;
  }
  std::int64_t insertProfileRun(const ProfileRunRecord& run, std::int64_t now) override {
    std::int64_t id = 1;
    {
      Statement last(connection(), "SELECT max(id) FROM profile_runs");
      if (last.step() && !last.columnIsNull(0)) id = last.columnInt(0) + 1;
    }
    Statement insertRun(connection(), "INSERT INTO profile_runs(id, program, source, recorded_at, period_messages) "
                                      "VALUES (?1, ?2, ?3, ?4, ?5)");
    insertRun.bind(1, id)
        .bind(2, run.program)
        .bind(3, run.source)
        .bind(4, now)
        .bind(5, static_cast<std::int64_t>(run.periodMessages));
    insertRun.run();
    Statement insertSample(connection(), R"sql(
INSERT INTO cost_samples(run_id, seq, program, vnode, fingerprint, replica, replicas, device_class, device_model,
                         host, seconds_per_message, speed, features)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13))sql");
    for (std::size_t i = 0; i < run.samples.size(); ++i) {
      const CostSample& c = run.samples[i];
      insertSample.bind(1, id)
          .bind(2, static_cast<std::int64_t>(i))
          .bind(3, run.program)
          .bind(4, c.vnode)
          .bind(5, c.fingerprint)
          .bind(6, c.replica)
          .bind(7, c.replicas)
          .bind(8, c.deviceClass)
          .bind(9, c.deviceModel)
          .bind(10, c.host)
          .bind(11, c.secondsPerMessage)
          .bind(12, c.speed)
          .bind(13, c.features);
      insertSample.run();
    }
    Statement insertPipe(
        connection(), "INSERT INTO pipe_samples(run_id, program, pipe, messages, bytes) VALUES (?1, ?2, ?3, ?4, ?5)");
    for (const PipeSample& p : run.pipes) {
      insertPipe.bind(1, id)
          .bind(2, run.program)
          .bind(3, p.pipe)
          .bind(4, static_cast<std::int64_t>(p.messages))
          .bind(5, static_cast<std::int64_t>(p.bytes));
      insertPipe.run();
    }
    return id;
  }
  std::vector<std::int64_t> deleteProfileRuns(const ProfileRunSelection& which) override {
    std::vector<std::int64_t> ids;
    {
      Statement select(connection(), which.run      ? "SELECT id FROM profile_runs WHERE id = ?1"
                                     : which.before ? "SELECT id FROM profile_runs WHERE program = ?1 AND "
                                                      "recorded_at < ?2 ORDER BY id"
                                                    : "SELECT id FROM profile_runs WHERE program = ?1 ORDER BY id");
      if (which.run)
        select.bind(1, *which.run);
      else
        select.bind(1, which.program);
      if (!which.run && which.before) select.bind(2, *which.before);
      while (select.step()) ids.push_back(select.columnInt(0));
    }
    // The samples first, explicitly: the foreign keys' cascade is not on in every connection.
    for (const char* sql : {"DELETE FROM cost_samples WHERE run_id = ?1", "DELETE FROM pipe_samples WHERE run_id = ?1",
                            "DELETE FROM profile_runs WHERE id = ?1"}) {
      Statement remove(connection(), sql);
      for (const std::int64_t id : ids) {
        remove.bind(1, id);
        remove.run();
      }
    }
    return ids;
  }
  void readHistory(const std::string* program, std::vector<CostSample>& samples,
                   std::vector<PipeSample>& pipes) override {
    const std::string where = program ? " WHERE c.program = ?1" : "";
    Statement s(connection(), ("SELECT c.run_id, r.recorded_at, c.program, c.vnode, c.fingerprint, c.replica, "
                               "c.replicas, c.device_class, c.device_model, c.host, c.seconds_per_message, c.speed, "
                               "c.features FROM cost_samples c JOIN profile_runs r ON r.id = c.run_id" +
                               where + " ORDER BY c.run_id, c.seq")
                                  .c_str());
    if (program) s.bind(1, *program);
    while (s.step()) {
      CostSample c;
      c.runId = s.columnInt(0);
      c.recordedAt = s.columnInt(1);
      c.program = s.columnText(2);
      c.vnode = s.columnText(3);
      c.fingerprint = s.columnText(4);
      c.replica = static_cast<int>(s.columnInt(5));
      c.replicas = static_cast<int>(s.columnInt(6));
      c.deviceClass = s.columnText(7);
      c.deviceModel = s.columnText(8);
      c.host = s.columnText(9);
      c.secondsPerMessage = s.columnDouble(10);
      c.speed = s.columnDouble(11);
      c.features = s.columnText(12);
      samples.push_back(std::move(c));
    }
    Statement p(connection(), ("SELECT run_id, program, pipe, messages, bytes FROM pipe_samples" +
                               std::string(program ? " WHERE program = ?1" : "") + " ORDER BY run_id, pipe")
                                  .c_str());
    if (program) p.bind(1, *program);
    while (p.step())
      pipes.push_back(PipeSample{p.columnInt(0), p.columnText(1), p.columnText(2),
                                 static_cast<std::uint64_t>(p.columnInt(3)),
                                 static_cast<std::uint64_t>(p.columnInt(4))});
  }

 protected:
  explicit RowStore(const char* cacheOrder) : cacheOrder_(cacheOrder) {}
  virtual Connection& connection() = 0;

 private:
  bool change(const char* sql, const std::string& host, std::int64_t now) {
    Statement s(connection(), sql);
    s.bind(1, host).bind(2, now);
    return s.run() > 0;
  }
  const char* cacheOrder_;
};

}  // namespace dispar::streammap

#endif
