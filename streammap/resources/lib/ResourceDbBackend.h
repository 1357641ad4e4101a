// The storage behind ResourceDb: one abstract backend (ResourceDb::Impl) with an SQLite and a
// PostgreSQL implementation. ResourceDb.cpp holds the logic both share — which primitives make up an
// update, change descriptions, the liveness rule — and this header the SQL and row handling both run:
// the schema and its migrations, the statements that write a node and the queries that read records,
// templated on the backend's Statement type (sqlite::Statement and postgres::Statement look alike).
#ifndef STREAMMAP_LIB_RESOURCE_DB_BACKEND_H
#define STREAMMAP_LIB_RESOURCE_DB_BACKEND_H

#include "streammap/ResourceDb.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
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
                             "bandwidth_bytes_per_s, latency_s, rank_latency_s, thread_latency_s FROM nodes" +
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
      if (!s.columnIsNull(13)) r.node.latencySeconds = s.columnDouble(13);
      if (!s.columnIsNull(14)) r.node.rankLatencySeconds = s.columnDouble(14);
      if (!s.columnIsNull(15)) r.node.threadLatencySeconds = s.columnDouble(15);
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

/// A table's columns as the node writer fills them, in order; `arrayType` is the PostgreSQL array a column
/// travels in (unnest).
struct WrittenColumn {
  const char* name;
  const char* arrayType;
};
inline constexpr WrittenColumn kNodeColumns[] = {{"host", "text[]"},
                                                 {"sockets", "bigint[]"},
                                                 {"cores", "bigint[]"},
                                                 {"threads", "bigint[]"},
                                                 {"memory_bytes", "bigint[]"},
                                                 {"status", "text[]"},
                                                 {"source", "text[]"},
                                                 {"last_heartbeat", "bigint[]"},
                                                 {"heartbeat_ttl_s", "bigint[]"},
                                                 {"heartbeat_count", "bigint[]"},
                                                 {"updated_at", "bigint[]"},
                                                 {"cpu_speed", "float8[]"},
                                                 {"bandwidth_bytes_per_s", "float8[]"},
                                                 {"latency_s", "float8[]"},
                                                 {"rank_latency_s", "float8[]"},
                                                 {"thread_latency_s", "float8[]"}};
inline constexpr WrittenColumn kNumaColumns[] = {{"host", "text[]"}, {"idx", "bigint[]"}, {"memory_bytes", "bigint[]"}};
inline constexpr WrittenColumn kCacheColumns[] = {
    {"host", "text[]"}, {"level", "bigint[]"}, {"bytes", "bigint[]"}, {"count", "bigint[]"}};
inline constexpr WrittenColumn kGpuColumns[] = {
    {"host", "text[]"},        {"idx", "bigint[]"},      {"name", "text[]"},           {"uuid", "text[]"},
    {"cc_major", "bigint[]"},  {"cc_minor", "bigint[]"}, {"memory_bytes", "bigint[]"}, {"multiprocessors", "bigint[]"},
    {"clock_khz", "bigint[]"}, {"pci_bus_id", "text[]"}, {"numa_node", "bigint[]"},    {"measured_rate", "float8[]"}};

/// Row values bound to numbered placeholders, in order (SQLite: VALUES (?, ?), (?, ?)).
template <typename Statement>
class PlaceholderRows {
 public:
  explicit PlaceholderRows(Statement& s) : s_(s) {}
  void text(const std::string& v) { s_.bind(next_++, v); }
  void integer(std::int64_t v) { s_.bind(next_++, v); }
  void real(double v) { s_.bind(next_++, v); }
  template <typename T>
  void optional(const std::optional<T>& v) {
    if (v)
      s_.bind(next_++, *v);
    else
      s_.bindNull(next_++);
  }
  void endRow() {}

 private:
  Statement& s_;
  int next_ = 1;
};

/// Row values gathered into one PostgreSQL array literal per column ({"a","b"}, {1,NULL}).
class ArrayRows {
 public:
  explicit ArrayRows(std::size_t columns) : arrays_(columns, "{") {}
  void text(const std::string& v) {
    std::string& a = next();
    a += '"';
    for (const char c : v) {
      if (c == '"' || c == '\\') a += '\\';
      a += c;
    }
    a += '"';
  }
  void integer(std::int64_t v) { next() += std::to_string(v); }
  void real(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", v);  // the double exactly
    next() += text;
  }
  template <typename T>
  void optional(const std::optional<T>& v) {
    if (!v)
      next() += "NULL";
    else if constexpr (std::is_floating_point_v<T>)
      real(*v);
    else
      integer(*v);
  }
  void endRow() {
    column_ = 0;
    first_ = false;
  }
  /// The column arrays, closed.
  std::vector<std::string> arrays() const {
    std::vector<std::string> out = arrays_;
    for (std::string& a : out) a += '}';
    return out;
  }

 private:
  std::string& next() {
    std::string& a = arrays_[column_++];
    if (!first_) a += ',';
    return a;
  }
  std::vector<std::string> arrays_;
  std::size_t column_ = 0;
  bool first_ = true;
};

/// Writes nodes (inside a write transaction) in multi-row statements: a few statements per batch, not
/// four or more per node (100,000 nodes took over 300 s into PostgreSQL one row at a time). SQLite binds
/// a placeholder per value; PostgreSQL, whose cost is per parameter, an array per column.
template <typename Statement, typename Connection>
class NodeWriter {
 public:
  explicit NodeWriter(Connection& c) : connection_(c) {}

  void write(const NodeInfo* nodes, std::size_t count, std::optional<int> ttl, std::int64_t now) {
    for (std::size_t first = 0; first < count;) {
      // A batch holds a host once: one statement may not upsert a row twice (PostgreSQL refuses).
      std::set<std::string> hosts;
      std::size_t last = first;
      while (last < count && last - first < kBatchRows && hosts.insert(nodes[last].host).second) ++last;
      writeBatch(nodes + first, last - first, ttl, now);
      first = last;
    }
  }

 private:
  // Rows per statement: 13 placeholders a row stays far below SQLite's 32,766 variables.
  static constexpr std::size_t kBatchRows = 500;

  template <std::size_t N>
  static std::string columnList(const WrittenColumn (&columns)[N]) {
    std::string list;
    for (const WrittenColumn& c : columns) list += (list.empty() ? "" : ", ") + std::string(c.name);
    return list;
  }

  /// "INSERT INTO table(columns) " and the rows' source: VALUES (?, ?), ... for `rows` rows (bare ?: SQLite
  /// looks an explicit ?NNN up in a list, which made a 6,500-placeholder statement quadratic to prepare),
  /// or SELECT * FROM unnest(?::text[], ...).
  template <std::size_t N>
  static std::string insertInto(const char* table, const WrittenColumn (&columns)[N], std::size_t rows) {
    std::string sql = std::string("INSERT INTO ") + table + "(" + columnList(columns) + ") ";
    if constexpr (Statement::kTakesArrays) {
      sql += "SELECT * FROM unnest(";
      for (std::size_t c = 0; c < N; ++c) sql += (c ? ", ?::" : "?::") + std::string(columns[c].arrayType);
      return sql + ")";
    }
    std::string row = "(?";
    for (std::size_t c = 1; c < N; ++c) row += ", ?";
    row += ")";
    sql += "VALUES ";
    for (std::size_t r = 0; r < rows; ++r) sql += (r ? ", " : "") + row;
    return sql;
  }

  /// Runs the insert (`suffix` after the rows) of `rows`, each written by `fill(out, row)`.
  template <std::size_t N, typename Row, typename Fill>
  void insertRows(const char* table, const WrittenColumn (&columns)[N], const std::vector<Row>& rows,
                  const std::string& suffix, Fill fill) {
    if (rows.empty()) return;
    const std::string sql = insertInto(table, columns, rows.size()) + suffix;
    Statement s(connection_, sql.c_str());
    if constexpr (Statement::kTakesArrays) {
      ArrayRows out(N);
      for (const Row& row : rows) {
        fill(out, row);
        out.endRow();
      }
      const std::vector<std::string> arrays = out.arrays();
      for (std::size_t c = 0; c < N; ++c) s.bind(static_cast<int>(c + 1), arrays[c]);
    } else {
      PlaceholderRows<Statement> out(s);
      for (const Row& row : rows) fill(out, row);
    }
    s.run();
  }

  void writeBatch(const NodeInfo* nodes, std::size_t count, std::optional<int> ttl, std::int64_t now) {
    std::vector<const NodeInfo*> batch;
    for (std::size_t i = 0; i < count; ++i) batch.push_back(&nodes[i]);
    insertRows("nodes", kNodeColumns, batch, R"sql(
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
  cpu_speed = excluded.cpu_speed, bandwidth_bytes_per_s = excluded.bandwidth_bytes_per_s,
  latency_s = excluded.latency_s, rank_latency_s = excluded.rank_latency_s,
  thread_latency_s = excluded.thread_latency_s)sql",
               [&](auto& out, const NodeInfo* n) {
                 out.text(n->host);
                 out.integer(n->sockets);
                 out.integer(n->cores);
                 out.integer(n->threads);
                 out.integer(static_cast<std::int64_t>(n->memoryBytes));
                 out.text(nodeStatusName(n->status));
                 out.text(recordSourceName(n->source));
                 out.optional(n->lastHeartbeat);
                 out.optional(ttl);
                 out.integer(0);  // heartbeat_count of a new record
                 out.integer(now);
                 out.real(n->cpuSpeed);
                 out.optional(n->bandwidthBytesPerSec);
                 out.optional(n->latencySeconds);
                 out.optional(n->rankLatencySeconds);
                 out.optional(n->threadLatencySeconds);
               });
    // The batch's NUMA nodes, caches and GPUs replace what was recorded. PostgreSQL plans these deletes
    // with the statistics of the tables before the import began (empty, for a first import), and scanned
    // the whole of a table the import keeps growing for each batch: 10 of the 17 s of a 100,000-node
    // import. The host index is the right plan at any size.
    if constexpr (Statement::kTakesArrays) Statement(connection_, "SET LOCAL enable_seqscan = off").run();
    for (const char* table : {"numa_nodes", "caches", "gpus"}) {
      std::string sql = std::string("DELETE FROM ") + table + " WHERE host ";
      if constexpr (Statement::kTakesArrays) {
        sql += "= ANY(?::text[])";
        Statement remove(connection_, sql.c_str());
        ArrayRows hosts(1);
        for (const NodeInfo* n : batch) {
          hosts.text(n->host);
          hosts.endRow();
        }
        remove.bind(1, hosts.arrays()[0]);
        remove.run();
      } else {
        sql += "IN (?";
        for (std::size_t i = 1; i < count; ++i) sql += ", ?";
        sql += ")";
        Statement remove(connection_, sql.c_str());
        for (std::size_t i = 0; i < count; ++i) remove.bind(static_cast<int>(i + 1), nodes[i].host);
        remove.run();
      }
    }
    if constexpr (Statement::kTakesArrays) Statement(connection_, "SET LOCAL enable_seqscan = on").run();
    std::vector<std::pair<const NodeInfo*, const NumaInfo*>> numa;
    std::vector<std::pair<const NodeInfo*, const CacheInfo*>> caches;
    std::vector<std::pair<const NodeInfo*, const GpuInfo*>> gpus;
    for (const NodeInfo* n : batch) {
      for (const NumaInfo& x : n->numa) numa.emplace_back(n, &x);
      for (const CacheInfo& x : n->caches) caches.emplace_back(n, &x);
      for (const GpuInfo& x : n->gpus) gpus.emplace_back(n, &x);
    }
    // At most a few NUMA nodes, caches and GPUs per node: each table's rows of a batch stay within SQLite's
    // variables (500 nodes x 12 GPU columns x a few GPUs would not), so they go kBatchRows at a time.
    const auto inChunks = [](const auto& rows, auto insertChunk) {
      for (std::size_t first = 0; first < rows.size(); first += kBatchRows) {
        using Rows = std::decay_t<decltype(rows)>;
        insertChunk(Rows(rows.begin() + static_cast<std::ptrdiff_t>(first),
                         rows.begin() + static_cast<std::ptrdiff_t>(std::min(rows.size(), first + kBatchRows))));
      }
    };
    inChunks(numa, [&](const auto& chunk) {
      insertRows("numa_nodes", kNumaColumns, chunk, "", [](auto& out, const auto& row) {
        out.text(row.first->host);
        out.integer(row.second->index);
        out.integer(static_cast<std::int64_t>(row.second->memoryBytes));
      });
    });
    inChunks(caches, [&](const auto& chunk) {
      insertRows("caches", kCacheColumns, chunk, "", [](auto& out, const auto& row) {
        out.text(row.first->host);
        out.integer(row.second->level);
        out.integer(static_cast<std::int64_t>(row.second->bytes));
        out.integer(row.second->count);
      });
    });
    inChunks(gpus, [&](const auto& chunk) {
      insertRows("gpus", kGpuColumns, chunk, "", [](auto& out, const auto& row) {
        const GpuInfo& g = *row.second;
        out.text(row.first->host);
        out.integer(g.index);
        out.text(g.name);
        out.text(g.uuid);
        out.integer(g.ccMajor);
        out.integer(g.ccMinor);
        out.integer(static_cast<std::int64_t>(g.memoryBytes));
        out.integer(g.multiprocessors);
        out.integer(g.clockKHz);
        out.text(g.pciBusId);
        out.integer(g.numaNode);
        out.optional(g.measuredRate);
      });
    });
  }

  Connection& connection_;
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
    NodeWriter<Statement, Connection>(connection()).write(nodes, count, ttl, now);
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
