#include "streammap/ResourceDb.h"

#include "Postgres.h"
#include "ResourceDbBackend.h"
#include "Sqlite.h"
#include "streammap/AtomicFiles.h"
#include "streammap/ClusterJson.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <thread>

namespace dispar::streammap {

namespace {

using sqlite::Connection;
using sqlite::SqliteError;
using sqlite::Statement;
using sqlite::WriteTransaction;

constexpr int kBusyTimeoutMs = 30000;

}  // namespace

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
const char* const kMigrations[kResourceDbSchemaVersion - 1] = {
    // 1 -> 2: relative speeds and network bandwidth (described or measured).
    R"sql(
ALTER TABLE nodes ADD COLUMN cpu_speed REAL NOT NULL DEFAULT 1.0;
ALTER TABLE nodes ADD COLUMN bandwidth_bytes_per_s REAL;
ALTER TABLE gpus ADD COLUMN measured_rate REAL;
)sql",
    // 2 -> 3: the performance history (streammap profile add): profiled runs, per instance the time per
    // message and the device it ran on, per pipe the traffic. Run ids are given by the writer (max + 1
    // in the recording transaction), the same on both backends.
    R"sql(
CREATE TABLE profile_runs(
  id INTEGER PRIMARY KEY NOT NULL,
  program TEXT NOT NULL,
  source TEXT NOT NULL,
  recorded_at INTEGER NOT NULL,
  period_messages INTEGER NOT NULL CHECK (period_messages > 0));
CREATE INDEX profile_runs_program ON profile_runs(program);
CREATE TABLE cost_samples(
  run_id INTEGER NOT NULL REFERENCES profile_runs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  program TEXT NOT NULL,
  vnode TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  replica INTEGER NOT NULL,
  replicas INTEGER NOT NULL,
  device_class TEXT NOT NULL CHECK (device_class IN ('cpu', 'gpu')),
  device_model TEXT NOT NULL,
  host TEXT NOT NULL,
  seconds_per_message REAL NOT NULL CHECK (seconds_per_message >= 0),
  speed REAL NOT NULL CHECK (speed > 0),
  features TEXT NOT NULL,
  PRIMARY KEY (run_id, seq));
CREATE INDEX cost_samples_key ON cost_samples(program, vnode, fingerprint, device_class);
CREATE TABLE pipe_samples(
  run_id INTEGER NOT NULL REFERENCES profile_runs(id) ON DELETE CASCADE,
  program TEXT NOT NULL,
  pipe TEXT NOT NULL,
  messages INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  PRIMARY KEY (run_id, pipe));
)sql",
    // 3 -> 4: per-message latencies (described): to another node, between ranks of the node, inside a rank.
    R"sql(
ALTER TABLE nodes ADD COLUMN latency_s REAL;
ALTER TABLE nodes ADD COLUMN rank_latency_s REAL;
ALTER TABLE nodes ADD COLUMN thread_latency_s REAL;
)sql",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kResourceDbSchemaVersion - 1,
              "one migration per schema version after the first");

std::string postgresDialect(const std::string& sql) {
  auto isWordChar = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  for (std::size_t i = 0; i < sql.size();) {
    if (isWordChar(sql[i])) {
      std::size_t end = i;
      while (end < sql.size() && isWordChar(sql[end])) ++end;
      const std::string word = sql.substr(i, end - i);
      out += word == "INTEGER" ? "BIGINT" : word == "REAL" ? "DOUBLE PRECISION" : word;
      i = end;
    } else {
      out += sql[i++];
    }
  }
  return out;
}

namespace {

std::int64_t unixNow() { return static_cast<std::int64_t>(std::time(nullptr)); }

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
  number("numa nodes", static_cast<std::int64_t>(before.numa.size()), static_cast<std::int64_t>(after.numa.size()));
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

namespace {

// SQLite: one file; writers are serialized by BEGIN IMMEDIATE, so every write scope is the same.
class SqliteBackend final : public RowStore<Statement, Connection> {
 public:
  // rowid orders the caches one transaction inserted in insertion order.
  SqliteBackend(const std::string& path, int flags) : RowStore("rowid"), connection_(path, flags, kBusyTimeoutMs) {}

  int prepareSchema(bool /*create*/) override {
    // Reads only: nothing is written until the file is known to be ours.
    Header header = readHeader();
    // A schema without our application id looks like another application's database, but may be a
    // creator's work seen half-way (a reader of an empty file does not keep its snapshot): look again
    // under the write lock, which waits for any creator to finish, before refusing.
    if (header.foreign() && header.appId == 0) {
      WriteTransaction settled(connection_);
      header = readHeader();
    }
    if (header.foreign())
      throw SqliteError("an SQLite database of another application (application_id " + std::to_string(header.appId) +
                            "), not a dispar resource database; refusing to touch it",
                        SQLITE_NOTADB);
    const std::int64_t version = header.version;
    if (version > kResourceDbSchemaVersion)
      throw SqliteError("schema version " + std::to_string(version) + " is newer than this streammap supports (" +
                            std::to_string(kResourceDbSchemaVersion) + "); upgrade streammap",
                        SQLITE_NOTADB);
    if (version < kResourceDbSchemaVersion) migrate();
    connection_.exec("PRAGMA foreign_keys = ON");
    return static_cast<int>(version);
  }

  /// What tells whose database a file is.
  struct Header {
    std::int64_t appId = 0, version = 0, objects = 0;
    bool foreign() const { return appId != kResourceDbApplicationId && (appId != 0 || version != 0 || objects != 0); }
  };

  // While several processes open a new file at once, SQLite may answer SQLITE_BUSY without waiting in
  // its busy handler (where waiting could deadlock, and around the switch to WAL): such a step is
  // retried, for as long as the busy timeout.
  template <class Step>
  auto whenNotBusy(Step step) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
    for (;;) {
      try {
        return step();
      } catch (const SqliteError& error) {
        const int primary = error.code() & 0xff;
        if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) || std::chrono::steady_clock::now() > deadline) throw;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  Header readHeader() {
    return whenNotBusy([&] {
      Header header;
      header.appId = connection_.queryInt("PRAGMA application_id");
      header.version = connection_.queryInt("PRAGMA user_version");
      header.objects = connection_.queryInt("SELECT count(*) FROM sqlite_master");
      return header;
    });
  }

  void migrate() {
    WriteTransaction transaction(connection_);
    // Re-read under the write lock: another process may have created or migrated it meanwhile.
    std::int64_t version = connection_.queryInt("PRAGMA user_version");
    if (version == 0) {
      connection_.exec(kSchemaV1);
      version = 1;
    }
    for (; version < kResourceDbSchemaVersion; ++version) connection_.exec(kMigrations[version - 1]);
    connection_.exec(("PRAGMA user_version = " + std::to_string(kResourceDbSchemaVersion)).c_str());
    connection_.exec(("PRAGMA application_id = " + std::to_string(kResourceDbApplicationId)).c_str());
    transaction.commit();
    // WAL: readers never block the writer, and a killed writer leaves the last committed state.
    whenNotBusy([&] {
      if (connection_.queryText("PRAGMA journal_mode") != "wal") connection_.queryText("PRAGMA journal_mode = WAL");
      return 0;
    });
  }

  void write(WriteScope, const std::function<void()>& body) override {
    // BEGIN IMMEDIATE waits (busy timeout) instead of failing, so there is nothing to retry.
    WriteTransaction transaction(connection_);
    body();
    transaction.commit();
  }

  void read(const std::function<void()>& body) override {
    connection_.exec("BEGIN");
    try {
      body();
    } catch (...) {
      sqlite3_exec(connection_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
    connection_.exec("COMMIT");
  }

  void lockNode(const std::string&) override {}  // the transaction holds the database's write lock

  std::string integrityCheck() override { return connection_.queryText("PRAGMA integrity_check"); }

  bool reconnectIfLost() override { return false; }  // a file does not go away between calls

 private:
  Connection& connection() override { return connection_; }
  Connection connection_;
};

// Runs `body`, turning any backend failure into "NAME: message". Both backends' errors (SqliteError,
// PostgresError) are std::runtime_errors.
template <typename Body>
bool guarded(const std::string& name, std::string& error, Body&& body) {
  try {
    body();
    return true;
  } catch (const std::runtime_error& e) {
    error = name + ": " + e.what();
    return false;
  }
}

}  // namespace

std::unique_ptr<ResourceDb::Impl> openSqliteBackend(const std::string& path, bool create) {
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (create) flags |= SQLITE_OPEN_CREATE;
  return std::make_unique<SqliteBackend>(path, flags);
}

bool isDatabaseUrl(const std::string& location) { return postgres::isConnectionUri(location); }

std::string displayDatabaseName(const std::string& location) {
  return isDatabaseUrl(location) ? postgres::redactConnectionString(location) : location;
}

ResourceDb::ResourceDb(std::string path, std::unique_ptr<Impl> impl, int openedVersion)
    : path_(std::move(path)), impl_(std::move(impl)), openedVersion_(openedVersion) {}

ResourceDb::~ResourceDb() = default;

std::unique_ptr<ResourceDb> ResourceDb::open(const std::string& path, OpenMode mode, std::string& error) {
  if (path.empty()) {
    error = "empty resource database path";
    return nullptr;
  }
  if (isDatabaseUrl(path)) {
    // A server: the database itself is the administrator's to create; its schema is ours.
    const std::string name = displayDatabaseName(path);
    std::unique_ptr<Impl> impl;
    int version = 0;
    try {
      impl = openPostgresBackend(path);
      version = impl->prepareSchema(mode == OpenMode::CreateIfMissing);
    } catch (const std::runtime_error& e) {
      error = name + ": " + e.what();
      return nullptr;
    }
    return std::unique_ptr<ResourceDb>(new ResourceDb(name, std::move(impl), version));
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
  std::unique_ptr<Impl> impl;
  int version = 0;
  try {
    impl = openSqliteBackend(path, !exists);
    version = impl->prepareSchema(!exists);
  } catch (const SqliteError& e) {
    error = path + ": " + (exists ? "" : "cannot create database: ") + e.what();
    return nullptr;
  }
  return std::unique_ptr<ResourceDb>(new ResourceDb(path, std::move(impl), version));
}

namespace {

/// Every record that enters the store passes the host-name rule and the node limits (Cluster.h), whichever
/// reader or probe made it.
bool checkHostNames(const NodeInfo* nodes, std::size_t count, const std::string& where, std::string& error) {
  for (std::size_t i = 0; i < count; ++i) {
    std::string why;
    if (!checkHostName(nodes[i].host, why)) {
      error = where + ": " + why;
      return false;
    }
    if (!checkNodeLimits(nodes[i], why)) {
      error = where + ": node " + nodes[i].host + ": " + why;
      return false;
    }
  }
  return true;
}

}  // namespace

bool ResourceDb::recordNode(const NodeInfo& node, std::optional<int> heartbeatTtlSeconds, NodeChanges* changes,
                            std::string& error) {
  if (!checkHostNames(&node, 1, displayDatabaseName(path_), error)) return false;
  return guarded(path_, error, [&] {
    impl_->write(Impl::WriteScope::Node, [&] {
      impl_->lockNode(node.host);  // the record read for `changes` must be the one replaced
      if (changes) {
        std::vector<NodeRecord> before;
        changes->descriptions.clear();
        impl_->readRecords(&node.host, before);
        changes->isNew = before.empty();
        if (!changes->isNew) diffNodes(before.front().node, node, changes->descriptions);
      }
      impl_->writeNodes(&node, 1, heartbeatTtlSeconds, unixNow());
    });
  });
}

void ResourceDb::writeNodes(const NodeInfo* nodes, std::size_t count, std::int64_t now) {
  // Batches small enough for the progress to move, large enough not to cost anything.
  constexpr std::size_t kBatch = 256;
  if (writeProgress_) writeProgress_(0, count);
  for (std::size_t start = 0; start < count; start += kBatch) {
    const std::size_t size = std::min(kBatch, count - start);
    impl_->writeNodes(nodes + start, size, std::nullopt, now);
    if (writeProgress_) writeProgress_(start + size, count);
  }
}

bool ResourceDb::recordNodes(const std::vector<NodeInfo>& nodes, bool markOthersDown,
                             std::vector<std::string>* markedDown, std::string& error) {
  if (!checkHostNames(nodes.data(), nodes.size(), displayDatabaseName(path_), error)) return false;
  const std::size_t reported = markedDown ? markedDown->size() : 0;
  return guarded(path_, error, [&] {
    impl_->write(Impl::WriteScope::Table, [&] {
      if (markedDown) markedDown->resize(reported);  // a repeated transaction reports afresh
      const std::int64_t now = unixNow();
      writeNodes(nodes.data(), nodes.size(), now);
      if (!markOthersDown) return;
      std::set<std::string> recorded;
      for (const NodeInfo& node : nodes) recorded.insert(node.host);
      for (const std::string& host : impl_->allHosts())
        if (!recorded.count(host) && impl_->markDown(host, now) && markedDown) markedDown->push_back(host);
    });
  });
}

bool ResourceDb::importNodes(const std::vector<NodeInfo>& nodes, const ImportRules& rules,
                             std::vector<NodeInfo>* recorded, std::vector<std::string>* removed, std::string& error) {
  if (!checkHostNames(nodes.data(), nodes.size(), displayDatabaseName(path_), error)) return false;
  const std::size_t reported = removed ? removed->size() : 0;
  return guarded(path_, error, [&] {
    impl_->write(Impl::WriteScope::Table, [&] {
      if (removed) removed->resize(reported);  // a repeated transaction reports afresh
      std::vector<NodeInfo> written = nodes;
      if (rules.merge) {
        // Merged with what is stored now, inside the transaction: no daemon's update in between is lost.
        std::vector<NodeRecord> stored;
        impl_->readRecords(nullptr, stored);
        std::map<std::string, const NodeInfo*> storedOf;
        for (const NodeRecord& r : stored) storedOf[r.node.host] = &r.node;
        for (NodeInfo& node : written) {
          auto it = storedOf.find(node.host);
          node = rules.merge(it == storedOf.end() ? nullptr : it->second, node);
        }
      }
      const std::int64_t now = unixNow();
      writeNodes(written.data(), written.size(), now);
      if (recorded) *recorded = written;
      std::set<std::string> imported;
      for (const NodeInfo& node : written) {
        imported.insert(node.host);
        if (rules.importedStatusWins) impl_->setStatus(node.host, node.status, now);
      }
      if (!rules.removeOthers) return;
      for (const std::string& host : impl_->allHosts()) {
        if (imported.count(host)) continue;
        impl_->removeNode(host);
        if (removed) removed->push_back(host);
      }
    });
  });
}

bool ResourceDb::removeNodesExcept(const std::vector<std::string>& keep, std::vector<std::string>* removed,
                                   std::string& error) {
  const std::size_t reported = removed ? removed->size() : 0;
  return guarded(path_, error, [&] {
    impl_->write(Impl::WriteScope::Table, [&] {
      if (removed) removed->resize(reported);
      std::set<std::string> kept(keep.begin(), keep.end());
      for (const std::string& host : impl_->allHosts()) {
        if (kept.count(host)) continue;
        impl_->removeNode(host);
        if (removed) removed->push_back(host);
      }
    });
  });
}

bool ResourceDb::heartbeat(const std::string& host, std::int64_t now, std::string& error) {
  bool found = false;
  bool ok = guarded(path_, error,
                    [&] { impl_->write(Impl::WriteScope::Node, [&] { found = impl_->heartbeat(host, now); }); });
  if (ok && !found) error = path_ + ": no node '" + host + "' recorded";
  return ok && found;
}

bool ResourceDb::setStatus(const std::string& host, NodeStatus status, std::string& error) {
  bool found = false;
  bool ok = guarded(path_, error, [&] {
    impl_->write(Impl::WriteScope::Node, [&] { found = impl_->setStatus(host, status, unixNow()); });
  });
  if (ok && !found) error = path_ + ": no node '" + host + "' recorded";
  return ok && found;
}

bool ResourceDb::readRecords(std::vector<NodeRecord>& out, std::string& error) {
  out.clear();
  return guarded(path_, error, [&] {
    // One read transaction, so that the four queries see one snapshot.
    impl_->read([&] {
      out.clear();
      impl_->readRecords(nullptr, out);
    });
  });
}

bool ResourceDb::readRecord(const std::string& host, NodeRecord& out, bool& found, std::string& error) {
  found = false;
  return guarded(path_, error, [&] {
    impl_->read([&] {
      std::vector<NodeRecord> records;
      impl_->readRecords(&host, records);
      found = !records.empty();
      if (found) out = std::move(records.front());
    });
  });
}

bool ResourceDb::recordProfileRun(const ProfileRunRecord& run, std::int64_t& runId, std::string& error) {
  // Table scope: the run's number is the largest so far + 1, which concurrent recorders must not share.
  return guarded(path_, error, [&] {
    impl_->write(Impl::WriteScope::Table, [&] { runId = impl_->insertProfileRun(run, unixNow()); });
  });
}

bool ResourceDb::readHistory(const std::string& program, std::vector<CostSample>& samples,
                             std::vector<PipeSample>& pipes, std::string& error) {
  return guarded(path_, error, [&] {
    impl_->read([&] {
      samples.clear();
      pipes.clear();
      impl_->readHistory(program.empty() ? nullptr : &program, samples, pipes);
    });
  });
}

bool ResourceDb::removeProfileRuns(const ProfileRunSelection& which, std::vector<std::int64_t>& removed,
                                   std::string& error) {
  return guarded(path_, error,
                 [&] { impl_->write(Impl::WriteScope::Table, [&] { removed = impl_->deleteProfileRuns(which); }); });
}

bool ResourceDb::integrityCheck(std::string& result, std::string& error) {
  return guarded(path_, error, [&] { result = impl_->integrityCheck(); });
}

bool ResourceDb::reconnectIfLost(bool& reconnected, std::string& error) {
  reconnected = false;
  return guarded(path_, error, [&] { reconnected = impl_->reconnectIfLost(); });
}

bool loadClusterFromDatabase(const std::string& path, int ttlSeconds, Cluster& out, std::string& error) {
  std::unique_ptr<ResourceDb> db = ResourceDb::open(path, ResourceDb::OpenMode::Existing, error);
  return db && loadClusterFromDatabase(*db, ttlSeconds, out, error);
}

bool loadClusterFromDatabase(ResourceDb& db, int ttlSeconds, Cluster& out, std::string& error) {
  std::vector<NodeRecord> records;
  if (!db.readRecords(records, error)) return false;
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
