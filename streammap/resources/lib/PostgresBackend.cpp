// The PostgreSQL backend of ResourceDb: one database shared by every node's daemon and every reader.
//
// Identity and version: PostgreSQL has no application_id/user_version, so they live in
// dispar_meta(key, value) as 'application_id' and 'schema_version'. A database with tables but no
// dispar_meta, or whose dispar_meta names another application or a newer schema, is refused untouched.
//
// Concurrency: every update is one READ COMMITTED transaction that first locks the nodes table —
// ROW EXCLUSIVE for updates of one node (which then lock that node's row, so read-modify-write updates
// of the same node queue behind each other while other nodes' updates proceed), SHARE ROW EXCLUSIVE for
// updates that read or change the set of nodes (which so run alone). Taking the table lock first, in one
// order, keeps lock upgrades from deadlocking; a deadlock or serialization failure that still happens is
// retried a bounded number of times. Reads run in one REPEATABLE READ READ ONLY transaction: one
// snapshot, never blocked by writers.
#include "Postgres.h"
#include "ResourceDbBackend.h"

#include <chrono>
#include <random>
#include <thread>

namespace dispar::streammap {

namespace {

using postgres::Connection;
using postgres::PostgresError;
using postgres::Statement;
using postgres::Transaction;

constexpr int kMaxAttempts = 8;

class PostgresBackend final : public RowStore<Statement, Connection> {
 public:
  // No rowid: ctid orders the caches one transaction inserted in insertion order.
  explicit PostgresBackend(const std::string& conninfo) : RowStore("ctid"), connection_(conninfo) {}

  int prepareSchema(bool create) override {
    // Reads only: nothing is written until the database is known to be ours (or empty).
    const int version = readVersion();
    if (version == 0 && !create)
      throw std::runtime_error("no resource database in this PostgreSQL database (record one with "
                               "'streammap --discover' or 'streammap cluster import')");
    if (version < kResourceDbSchemaVersion) migrate();
    return version;
  }

  void write(WriteScope scope, const std::function<void()>& body) override {
    std::minstd_rand jitter(std::random_device{}());
    for (int attempt = 1;; ++attempt) {
      try {
        Transaction transaction(connection_, "BEGIN ISOLATION LEVEL READ COMMITTED");
        connection_.exec(scope == WriteScope::Node ? "LOCK TABLE nodes IN ROW EXCLUSIVE MODE"
                                                   : "LOCK TABLE nodes IN SHARE ROW EXCLUSIVE MODE");
        body();
        transaction.commit();
        return;
      } catch (const PostgresError& e) {
        if (!e.retryable() || attempt == kMaxAttempts) throw;
        // Randomized, growing back-off so that the transactions that collided do not collide again.
        const int ceilingMs = 5 << attempt;
        std::this_thread::sleep_for(std::chrono::milliseconds(1 + static_cast<int>(jitter() % ceilingMs)));
      }
    }
  }

  void read(const std::function<void()>& body) override {
    Transaction transaction(connection_, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY");
    body();
    transaction.commit();
  }

  void lockNode(const std::string& host) override {
    Statement s(connection_, "SELECT 1 FROM nodes WHERE host = ?1 FOR UPDATE");
    s.bind(1, host);
    while (s.step()) {
    }
  }

  std::string integrityCheck() override {
    // The server checks its own storage; what can be wrong here is our schema.
    const int version = readVersion();
    if (version != kResourceDbSchemaVersion) return "schema version " + std::to_string(version);
    for (const char* table : {"nodes", "numa_nodes", "caches", "gpus", "profile_runs", "cost_samples", "pipe_samples"})
      if (!tableExists(table)) return std::string("table ") + table + " missing";
    return "ok";
  }

  bool reconnectIfLost() override {
    if (connection_.isOk()) return false;
    connection_.reset();
    return true;
  }

 private:
  bool tableExists(const std::string& table) {
    Statement s(connection_, "SELECT to_regclass(?1) IS NOT NULL");
    s.bind(1, table);
    return s.step() && s.columnText(0) == "t";
  }

  // The schema version dispar_meta records: 0 for a database without tables. Throws for a database
  // that is not ours or is newer.
  int readVersion() {
    // Count the tables before looking for dispar_meta: a concurrent first open creates dispar_meta and
    // the other tables in one transaction, so tables seen here imply dispar_meta seen below. (The other
    // order could catch that commit in between and take our own schema for another application's.)
    Statement tables(connection_, "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()");
    const bool hasTables = tables.step() && tables.columnInt(0) != 0;
    if (!tableExists("dispar_meta")) {
      if (hasTables)
        throw std::runtime_error("a PostgreSQL database of another application (tables but no dispar_meta), "
                                 "not a dispar resource database; refusing to touch it");
      return 0;
    }
    std::string appId, version;
    Statement s(connection_, "SELECT key, value FROM dispar_meta WHERE key IN ('application_id', 'schema_version')");
    while (s.step()) (s.columnText(0) == "application_id" ? appId : version) = s.columnText(1);
    if (appId != std::to_string(kResourceDbApplicationId))
      throw std::runtime_error("a PostgreSQL database of another application (dispar_meta application_id '" + appId +
                               "'), not a dispar resource database; refusing to touch it");
    char* end = nullptr;
    const long v = std::strtol(version.c_str(), &end, 10);
    if (version.empty() || *end || v < 1)
      throw std::runtime_error("dispar_meta schema_version '" + version + "' is not a schema version");
    if (v > kResourceDbSchemaVersion)
      throw std::runtime_error("schema version " + std::to_string(v) + " is newer than this streammap supports (" +
                               std::to_string(kResourceDbSchemaVersion) + "); upgrade streammap");
    return static_cast<int>(v);
  }

  void migrate() {
    Transaction transaction(connection_, "BEGIN ISOLATION LEVEL READ COMMITTED");
    // One migrator at a time; re-read under the lock, since another may have finished meanwhile.
    connection_.exec("SELECT pg_advisory_xact_lock(" + std::to_string(kResourceDbApplicationId) + ")");
    int version = readVersion();
    if (version == 0) {
      connection_.exec("CREATE TABLE dispar_meta(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)");
      connection_.exec(postgresDialect(kSchemaV1));
      version = 1;
    }
    for (; version < kResourceDbSchemaVersion; ++version) connection_.exec(postgresDialect(kMigrations[version - 1]));
    Statement meta(connection_, "INSERT INTO dispar_meta(key, value) VALUES (?1, ?2) "
                                "ON CONFLICT (key) DO UPDATE SET value = excluded.value");
    meta.bind(1, std::string("application_id")).bind(2, std::to_string(kResourceDbApplicationId));
    meta.run();
    meta.bind(1, std::string("schema_version")).bind(2, std::to_string(kResourceDbSchemaVersion));
    meta.run();
    transaction.commit();
  }

  Connection& connection() override { return connection_; }
  Connection connection_;
};

}  // namespace

std::unique_ptr<ResourceDb::Impl> openPostgresBackend(const std::string& conninfo) {
  return std::make_unique<PostgresBackend>(conninfo);
}

}  // namespace dispar::streammap
