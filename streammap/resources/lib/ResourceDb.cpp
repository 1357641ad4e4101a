#include "streammap/ResourceDb.h"

#include "Sqlite.h"
#include "streammap/ClusterJson.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <set>

namespace dispar::streammap {

namespace {

using sqlite::Connection;
using sqlite::SqliteError;
using sqlite::Statement;
using sqlite::WriteTransaction;

constexpr int kBusyTimeoutMs = 30000;

// Version 1: nodes, NUMA nodes, caches, GPUs, status, heartbeat and provenance.
const char* const kSchemaV1 = R"sql(
CREATE TABLE nodes(
  host TEXT PRIMARY KEY NOT NULL,
  sockets INTEGER NOT NULL,
  cores INTEGER NOT NULL,
  threads INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('up', 'down', 'drained')),
  source TEXT NOT NULL CHECK (source IN ('probe', 'import')),
  last_heartbeat INTEGER,
  heartbeat_ttl_s INTEGER,
  heartbeat_count INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL);
CREATE TABLE numa_nodes(
  host TEXT NOT NULL REFERENCES nodes(host) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL,
  PRIMARY KEY (host, idx));
CREATE TABLE caches(
  host TEXT NOT NULL REFERENCES nodes(host) ON DELETE CASCADE,
  level INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  count INTEGER NOT NULL);
CREATE INDEX caches_host ON caches(host);
CREATE TABLE gpus(
  host TEXT NOT NULL REFERENCES nodes(host) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  name TEXT NOT NULL,
  uuid TEXT NOT NULL,
  cc_major INTEGER NOT NULL,
  cc_minor INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL,
  multiprocessors INTEGER NOT NULL,
  clock_khz INTEGER NOT NULL,
  pci_bus_id TEXT NOT NULL,
  numa_node INTEGER NOT NULL,
  PRIMARY KEY (host, idx));
)sql";

// Migrations as data: kMigrations[i] takes the schema from version i + 1 to version i + 2.
const char* const kMigrations[] = {
    // 1 -> 2: relative speeds and network bandwidth (described or measured).
    R"sql(
ALTER TABLE nodes ADD COLUMN cpu_speed REAL NOT NULL DEFAULT 1.0;
ALTER TABLE nodes ADD COLUMN bandwidth_bytes_per_s REAL;
ALTER TABLE gpus ADD COLUMN measured_rate REAL;
)sql",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kResourceDbSchemaVersion - 1,
              "one migration per schema version after the first");

std::int64_t unixNow() { return static_cast<std::int64_t>(std::time(nullptr)); }

bool fileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// mkdir -p for the database's directory.
bool makeParentDirectories(const std::string& path, std::string& error) {
  std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos || slash == 0) return true;
  std::string dir = path.substr(0, slash);
  for (std::size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    std::string prefix = dir.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      error = "cannot create directory " + prefix + ": " + std::strerror(errno);
      return false;
    }
  }
  return true;
}

// Checks the 16-byte SQLite header before SQLite opens the file, so that a foreign file is never
// touched (SQLite would otherwise happily create a journal next to it). An empty file is acceptable:
// SQLite treats it as an empty database.
bool checkSqliteHeader(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = std::string("cannot read: ") + std::strerror(errno);
    return false;
  }
  char header[16] = {};
  in.read(header, sizeof header);
  std::streamsize got = in.gcount();
  if (got == 0) return true;
  static const char kMagic[16] = "SQLite format 3";  // 15 characters and the terminating NUL
  if (got < 16 || std::memcmp(header, kMagic, 16) != 0) {
    error = "not an SQLite database (refusing to touch it)";
    return false;
  }
  return true;
}

std::string describeGpu(const GpuInfo& g) {
  return "gpu " + std::to_string(g.index) + " (" + (g.name.empty() ? "unnamed" : g.name) + ")";
}

void diffNodes(const NodeInfo& before, const NodeInfo& after, std::vector<std::string>& out) {
  auto number = [&](const char* what, std::int64_t a, std::int64_t b) {
    if (a != b) out.push_back(std::string(what) + " " + std::to_string(a) + " -> " + std::to_string(b));
  };
  number("sockets", before.sockets, after.sockets);
  number("cores", before.cores, after.cores);
  number("threads", before.threads, after.threads);
  if (before.memoryBytes != after.memoryBytes)
    out.push_back("memory " + formatGiB(before.memoryBytes) + " -> " + formatGiB(after.memoryBytes));
  number("numa nodes", static_cast<std::int64_t>(before.numa.size()),
         static_cast<std::int64_t>(after.numa.size()));
  std::map<int, const GpuInfo*> old, now;
  for (const GpuInfo& g : before.gpus) old[g.index] = &g;
  for (const GpuInfo& g : after.gpus) now[g.index] = &g;
  for (const auto& [index, g] : old) {
    auto it = now.find(index);
    if (it == now.end()) {
      out.push_back(describeGpu(*g) + " gone");
    } else if (g->uuid != it->second->uuid || g->name != it->second->name) {
      out.push_back(describeGpu(*g) + " replaced by " + describeGpu(*it->second));
    } else if (g->memoryBytes != it->second->memoryBytes) {
      out.push_back(describeGpu(*g) + " memory " + formatGiB(g->memoryBytes) + " -> " +
                    formatGiB(it->second->memoryBytes));
    }
  }
  for (const auto& [index, g] : now)
    if (!old.count(index)) out.push_back(describeGpu(*g) + " added");
}

}  // namespace

std::string defaultDatabasePath() {
  if (const char* env = std::getenv("DISPAR_RESOURCE_DB"); env && *env) return env;
  if (::geteuid() == 0) return "/var/lib/dispar/resources.db";
  std::string state;
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg) {
    state = xdg;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    state = std::string(home) + "/.local/state";
  } else {
    state = "/tmp";
  }
  return state + "/dispar/resources.db";
}

NodeStatus effectiveStatus(const NodeRecord& record, std::int64_t now, int ttlOverrideSeconds) {
  if (record.node.status != NodeStatus::Up || !record.heartbeatTtlSeconds) return record.node.status;
  const std::int64_t ttl = ttlOverrideSeconds > 0 ? ttlOverrideSeconds : *record.heartbeatTtlSeconds;
  if (!record.node.lastHeartbeat || now - *record.node.lastHeartbeat > ttl) return NodeStatus::Down;
  return NodeStatus::Up;
}

// The connection and the statements of one open database.
class ResourceDb::Impl {
 public:
  explicit Impl(const std::string& path, int flags) : connection(path, flags, kBusyTimeoutMs) {}

  Connection connection;

  // Validates the file and brings its schema to the current version; returns the version found.
  int prepareSchema() {
    // Reads only: nothing is written until the file is known to be ours.
    const std::int64_t appId = connection.queryInt("PRAGMA application_id");
    const std::int64_t version = connection.queryInt("PRAGMA user_version");
    if (appId != kResourceDbApplicationId) {
      const std::int64_t objects = connection.queryInt("SELECT count(*) FROM sqlite_master");
      if (appId != 0 || version != 0 || objects != 0)
        throw SqliteError("an SQLite database of another application (application_id " +
                              std::to_string(appId) + "), not a dispar resource database; refusing to touch it",
                          SQLITE_NOTADB);
    }
    if (version > kResourceDbSchemaVersion)
      throw SqliteError("schema version " + std::to_string(version) +
                            " is newer than this streammap supports (" +
                            std::to_string(kResourceDbSchemaVersion) + "); upgrade streammap",
                        SQLITE_NOTADB);
    if (version < kResourceDbSchemaVersion) migrate();
    connection.exec("PRAGMA foreign_keys = ON");
    return static_cast<int>(version);
  }

  void migrate() {
    WriteTransaction transaction(connection);
    // Re-read under the write lock: another process may have created or migrated it meanwhile.
    std::int64_t version = connection.queryInt("PRAGMA user_version");
    if (version == 0) {
      connection.exec(kSchemaV1);
      version = 1;
    }
    for (; version < kResourceDbSchemaVersion; ++version) connection.exec(kMigrations[version - 1]);
    connection.exec(("PRAGMA user_version = " + std::to_string(kResourceDbSchemaVersion)).c_str());
    connection.exec(("PRAGMA application_id = " + std::to_string(kResourceDbApplicationId)).c_str());
    transaction.commit();
    // WAL: readers never block the writer, and a killed writer leaves the last committed state.
    if (connection.queryText("PRAGMA journal_mode") != "wal") connection.queryText("PRAGMA journal_mode = WAL");
  }

  std::vector<std::string> allHosts() {
    std::vector<std::string> hosts;
    Statement s(connection, "SELECT host FROM nodes ORDER BY host");
    while (s.step()) hosts.push_back(s.columnText(0));
    return hosts;
  }

  bool readRecord(const std::string& host, NodeRecord& out) {
    std::vector<NodeRecord> records;
    readRecords(&host, records);
    if (records.empty()) return false;
    out = std::move(records.front());
    return true;
  }

  // All records, or only `host`'s. Four queries in total, joined in memory, so that a 10,000-node
  // database reads in milliseconds.
  void readRecords(const std::string* host, std::vector<NodeRecord>& out) {
    const std::string where = host ? " WHERE host = ?1" : "";
    std::map<std::string, std::size_t> byHost;
    {
      Statement s(connection, ("SELECT host, sockets, cores, threads, memory_bytes, status, source, "
                               "last_heartbeat, heartbeat_ttl_s, heartbeat_count, updated_at, cpu_speed, "
                               "bandwidth_bytes_per_s FROM nodes" + where + " ORDER BY host")
                                  .c_str());
      if (host) s.bind(1, *host);
      while (s.step()) {
        NodeRecord r;
        r.node.host = s.columnText(0);
        r.node.sockets = static_cast<int>(s.columnInt(1));
        r.node.cores = static_cast<int>(s.columnInt(2));
        r.node.threads = static_cast<int>(s.columnInt(3));
        r.node.memoryBytes = static_cast<std::uint64_t>(s.columnInt(4));
        if (!parseNodeStatus(s.columnText(5), r.node.status) ||
            !parseRecordSource(s.columnText(6), r.node.source))
          throw SqliteError("node '" + r.node.host + "' has an invalid status or source", SQLITE_CORRUPT);
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
      Statement s(connection, ("SELECT host, level, bytes, count FROM caches" + where + " ORDER BY host, level, rowid").c_str());
      if (host) s.bind(1, *host);
      while (s.step())
        if (NodeInfo* n = recordFor(s.columnText(0)))
          n->caches.push_back({static_cast<int>(s.columnInt(1)), static_cast<std::uint64_t>(s.columnInt(2)),
                               static_cast<int>(s.columnInt(3))});
    }
    {
      Statement s(connection, ("SELECT host, idx, name, uuid, cc_major, cc_minor, memory_bytes, multiprocessors, "
                               "clock_khz, pci_bus_id, numa_node, measured_rate FROM gpus" + where +
                               " ORDER BY host, idx")
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

};

namespace {

// The statements that write one node, prepared once per transaction.
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
        deleteCaches_(c, "DELETE FROM caches WHERE host = ?1"),
        deleteGpus_(c, "DELETE FROM gpus WHERE host = ?1"),
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
      insertCache_.bind(1, n.host).bind(2, cache.level).bind(3, static_cast<std::int64_t>(cache.bytes))
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

// Runs `body`, turning any SQLite failure into "PATH: message".
template <typename Body>
bool guarded(const std::string& path, std::string& error, Body&& body) {
  try {
    body();
    return true;
  } catch (const SqliteError& e) {
    error = path + ": " + e.what();
    return false;
  }
}

}  // namespace

ResourceDb::ResourceDb(std::string path, std::unique_ptr<Impl> impl, int openedVersion)
    : path_(std::move(path)), impl_(std::move(impl)), openedVersion_(openedVersion) {}

ResourceDb::~ResourceDb() = default;

std::unique_ptr<ResourceDb> ResourceDb::open(const std::string& path, OpenMode mode, std::string& error) {
  if (path.empty()) {
    error = "empty resource database path";
    return nullptr;
  }
  const bool exists = fileExists(path);
  if (!exists && mode == OpenMode::Existing) {
    error = path + ": no resource database (record one with 'streammap --discover' or "
                   "'streammap cluster import')";
    return nullptr;
  }
  std::string reason;
  if (exists && !checkSqliteHeader(path, reason)) {
    error = path + ": " + reason;
    return nullptr;
  }
  if (!exists && !makeParentDirectories(path, reason)) {
    error = path + ": " + reason;
    return nullptr;
  }
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (!exists) flags |= SQLITE_OPEN_CREATE;
  std::unique_ptr<Impl> impl;
  int version = 0;
  try {
    impl = std::make_unique<Impl>(path, flags);
    version = impl->prepareSchema();
  } catch (const SqliteError& e) {
    error = path + ": " + (exists ? "" : "cannot create database: ") + e.what();
    return nullptr;
  }
  return std::unique_ptr<ResourceDb>(new ResourceDb(path, std::move(impl), version));
}

bool ResourceDb::recordNode(const NodeInfo& node, std::optional<int> heartbeatTtlSeconds,
                            NodeChanges* changes, std::string& error) {
  return guarded(path_, error, [&] {
    WriteTransaction transaction(impl_->connection);
    if (changes) {
      NodeRecord before;
      changes->descriptions.clear();
      changes->isNew = !impl_->readRecord(node.host, before);
      if (!changes->isNew) diffNodes(before.node, node, changes->descriptions);
    }
    NodeWriter(impl_->connection).write(node, heartbeatTtlSeconds, unixNow());
    transaction.commit();
  });
}

bool ResourceDb::recordNodes(const std::vector<NodeInfo>& nodes, bool markOthersDown,
                             std::vector<std::string>* markedDown, std::string& error) {
  return guarded(path_, error, [&] {
    WriteTransaction transaction(impl_->connection);
    const std::int64_t now = unixNow();
    NodeWriter writer(impl_->connection);
    std::set<std::string> recorded;
    for (const NodeInfo& node : nodes) {
      writer.write(node, std::nullopt, now);
      recorded.insert(node.host);
    }
    if (markOthersDown) {
      Statement down(impl_->connection,
                     "UPDATE nodes SET status = 'down', updated_at = ?2 WHERE host = ?1 AND status = 'up'");
      for (const std::string& host : impl_->allHosts()) {
        if (recorded.count(host)) continue;
        down.bind(1, host).bind(2, now);
        down.run();
        if (sqlite3_changes(impl_->connection.get()) > 0 && markedDown) markedDown->push_back(host);
      }
    }
    transaction.commit();
  });
}

bool ResourceDb::removeNodesExcept(const std::vector<std::string>& keep, std::vector<std::string>* removed,
                                   std::string& error) {
  return guarded(path_, error, [&] {
    WriteTransaction transaction(impl_->connection);
    std::set<std::string> kept(keep.begin(), keep.end());
    Statement remove(impl_->connection, "DELETE FROM nodes WHERE host = ?1");
    for (const std::string& host : impl_->allHosts()) {
      if (kept.count(host)) continue;
      remove.bind(1, host);
      remove.run();
      if (removed) removed->push_back(host);
    }
    transaction.commit();
  });
}

bool ResourceDb::heartbeat(const std::string& host, std::int64_t now, std::string& error) {
  bool found = false;
  bool ok = guarded(path_, error, [&] {
    WriteTransaction transaction(impl_->connection);
    Statement s(impl_->connection,
                "UPDATE nodes SET last_heartbeat = ?2, heartbeat_count = heartbeat_count + 1 WHERE host = ?1");
    s.bind(1, host).bind(2, now);
    s.run();
    found = sqlite3_changes(impl_->connection.get()) > 0;
    transaction.commit();
  });
  if (ok && !found) error = path_ + ": no node '" + host + "' recorded";
  return ok && found;
}

bool ResourceDb::setStatus(const std::string& host, NodeStatus status, std::string& error) {
  bool found = false;
  bool ok = guarded(path_, error, [&] {
    WriteTransaction transaction(impl_->connection);
    Statement s(impl_->connection, "UPDATE nodes SET status = ?2, updated_at = ?3 WHERE host = ?1");
    s.bind(1, host).bind(2, std::string(nodeStatusName(status))).bind(3, unixNow());
    s.run();
    found = sqlite3_changes(impl_->connection.get()) > 0;
    transaction.commit();
  });
  if (ok && !found) error = path_ + ": no node '" + host + "' recorded";
  return ok && found;
}

bool ResourceDb::readRecords(std::vector<NodeRecord>& out, std::string& error) {
  out.clear();
  return guarded(path_, error, [&] {
    // One read transaction, so that the four queries see one snapshot.
    impl_->connection.exec("BEGIN");
    try {
      impl_->readRecords(nullptr, out);
    } catch (...) {
      sqlite3_exec(impl_->connection.get(), "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
    impl_->connection.exec("COMMIT");
  });
}

bool ResourceDb::readRecord(const std::string& host, NodeRecord& out, bool& found, std::string& error) {
  found = false;
  return guarded(path_, error, [&] {
    impl_->connection.exec("BEGIN");
    try {
      found = impl_->readRecord(host, out);
    } catch (...) {
      sqlite3_exec(impl_->connection.get(), "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
    impl_->connection.exec("COMMIT");
  });
}

bool ResourceDb::integrityCheck(std::string& result, std::string& error) {
  return guarded(path_, error, [&] { result = impl_->connection.queryText("PRAGMA integrity_check"); });
}

bool loadClusterFromDatabase(const std::string& path, int ttlSeconds, Cluster& out, std::string& error) {
  std::unique_ptr<ResourceDb> db = ResourceDb::open(path, ResourceDb::OpenMode::Existing, error);
  if (!db) return false;
  std::vector<NodeRecord> records;
  if (!db->readRecords(records, error)) return false;
  const std::int64_t now = unixNow();
  Cluster cluster;
  for (NodeRecord& r : records) {
    r.node.status = effectiveStatus(r, now, ttlSeconds);
    cluster.nodes.push_back(std::move(r.node));
  }
  out = std::move(cluster);
  return true;
}

}  // namespace dispar::streammap
