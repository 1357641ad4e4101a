#include "streammap/ResourceDb.h"
#include "streammap/ClusterJson.h"

#include "BackendTest.h"
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <map>
#include <thread>

using namespace dispar::streammap;
using dispar::streammap::test::BackendTest;
using dispar::streammap::test::makeNode;
using dispar::streammap::test::PostgresServer;
using dispar::streammap::test::readFile;
using dispar::streammap::test::TempDir;
using dispar::streammap::test::writeFile;

namespace {

std::unique_ptr<ResourceDb> openDb(const std::string& path) {
  std::string error;
  auto db = ResourceDb::open(path, ResourceDb::OpenMode::CreateIfMissing, error);
  EXPECT_TRUE(db) << error;
  return db;
}

void rawExec(const std::string& path, const std::string& sql) { dispar::streammap::test::rawSqliteExec(path, sql); }

std::int64_t now() { return static_cast<std::int64_t>(std::time(nullptr)); }

}  // namespace

// Every test of this suite runs against both backends: an SQLite file and a PostgreSQL database.
class ResourceDbBackend : public BackendTest {};
DISPAR_INSTANTIATE_BACKENDS(ResourceDbBackend);

TEST_P(ResourceDbBackend, RecordReadRoundTrip) {
  const std::string path = freshDatabase();
  auto db = openDb(path);
  ASSERT_TRUE(db);
  EXPECT_EQ(db->openedSchemaVersion(), 0);
  Cluster described;
  described.nodes = {makeNode("n1", 16, 2), makeNode("n2", 8, 0)};
  described.nodes[0].gpus[0].measuredRate = 1.5;
  described.nodes[0].bandwidthBytesPerSec = 4e9;
  described.nodes[0].cpuSpeed = 1.25;
  described.nodes[0].latencySeconds = 2e-6;
  described.nodes[0].rankLatencySeconds = 5e-6;
  described.nodes[1].threadLatencySeconds = 1e-6;
  described.nodes[1].lastHeartbeat = 1234;
  std::string error;
  ASSERT_TRUE(db->recordNodes(described.nodes, false, nullptr, error)) << error;
  Cluster loaded;
  ASSERT_TRUE(loadClusterFromDatabase(path, 0, loaded, error)) << error;
  EXPECT_EQ(writeClusterJson(loaded), writeClusterJson(described));
  std::string integrity;
  ASSERT_TRUE(db->integrityCheck(integrity, error));
  EXPECT_EQ(integrity, "ok");
}

TEST_P(ResourceDbBackend, ReRecordingReplacesGpusAndReportsChanges) {
  auto db = openDb(freshDatabase());
  NodeInfo node = makeNode("n1", 16, 2);
  node.source = RecordSource::Probe;
  NodeChanges changes;
  std::string error;
  ASSERT_TRUE(db->recordNode(node, 30, &changes, error)) << error;
  EXPECT_TRUE(changes.isNew);
  node.gpus.pop_back();
  node.memoryBytes = 32ull << 30;
  ASSERT_TRUE(db->recordNode(node, 30, &changes, error)) << error;
  EXPECT_FALSE(changes.isNew);
  ASSERT_EQ(changes.descriptions.size(), 2u);
  EXPECT_EQ(changes.descriptions[0], "memory 64.0 GiB -> 32.0 GiB");
  EXPECT_EQ(changes.descriptions[1], "gpu 1 (Tesla K20m) gone");
  NodeRecord record;
  bool found = false;
  ASSERT_TRUE(db->readRecord("n1", record, found, error)) << error;
  ASSERT_TRUE(found);
  EXPECT_EQ(record.node.gpus.size(), 1u);
  EXPECT_EQ(record.heartbeatTtlSeconds, 30);
}

TEST_P(ResourceDbBackend, DrainSurvivesReprobeAndResumeRestores) {
  const std::string path = freshDatabase();
  auto db = openDb(path);
  std::string error;
  ASSERT_TRUE(db->recordNode(makeNode("n1", 4, 0), std::nullopt, nullptr, error)) << error;
  ASSERT_TRUE(db->setStatus("n1", NodeStatus::Drained, error)) << error;
  ASSERT_TRUE(db->recordNode(makeNode("n1", 4, 0), std::nullopt, nullptr, error)) << error;
  Cluster c;
  ASSERT_TRUE(loadClusterFromDatabase(path, 0, c, error));
  EXPECT_EQ(c.nodes[0].status, NodeStatus::Drained);
  ASSERT_TRUE(db->setStatus("n1", NodeStatus::Up, error));
  ASSERT_TRUE(loadClusterFromDatabase(path, 0, c, error));
  EXPECT_EQ(c.nodes[0].status, NodeStatus::Up);
  EXPECT_FALSE(db->setStatus("nope", NodeStatus::Drained, error));
  EXPECT_NE(error.find("no node 'nope'"), std::string::npos) << error;
}

TEST_P(ResourceDbBackend, ImportMergesInsideItsTransactionAndItsStatusMayWin) {
  const std::string path = freshDatabase();
  auto db = openDb(path);
  std::string error;
  NodeInfo probed = makeNode("n1", 16, 2);
  probed.source = RecordSource::Probe;  // as a daemon records it
  probed.gpus[0].name = "probed model";
  ASSERT_TRUE(db->recordNode(probed, 60, nullptr, error)) << error;
  ASSERT_TRUE(db->setStatus("n1", NodeStatus::Drained, error)) << error;
  ASSERT_TRUE(db->recordNode(makeNode("gone", 4, 0), std::nullopt, nullptr, error)) << error;

  NodeInfo imported = makeNode("n1", 8, 1);
  imported.status = NodeStatus::Up;
  ResourceDb::ImportRules rules;
  std::vector<const NodeInfo*> storedSeen;
  rules.merge = [&](const NodeInfo* stored, const NodeInfo& in) {
    storedSeen.push_back(stored);
    NodeInfo merged = stored ? *stored : in;
    merged.status = in.status;
    merged.gpus.resize(in.gpus.size());
    return merged;
  };
  rules.importedStatusWins = true;
  rules.removeOthers = true;
  std::vector<NodeInfo> recorded;
  std::vector<std::string> removed;
  ASSERT_TRUE(db->importNodes({imported, makeNode("new", 2, 0)}, rules, &recorded, &removed, error)) << error;
  ASSERT_EQ(storedSeen.size(), 2u);
  EXPECT_NE(storedSeen[0], nullptr);
  EXPECT_EQ(storedSeen[1], nullptr);
  EXPECT_EQ(removed, std::vector<std::string>{"gone"});
  ASSERT_EQ(recorded.size(), 2u);

  std::vector<NodeRecord> records;
  ASSERT_TRUE(db->readRecords(records, error)) << error;
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].node.host, "n1");
  EXPECT_EQ(records[0].node.status, NodeStatus::Up);  // the imported status won over the drain
  EXPECT_EQ(records[0].node.cores, 16);               // the stored details stayed
  ASSERT_EQ(records[0].node.gpus.size(), 1u);
  EXPECT_EQ(records[0].node.gpus[0].name, "probed model");
  EXPECT_EQ(records[0].heartbeatTtlSeconds, 60);  // a merged probe record: still kept alive by its daemon

  // Without the rule a drain survives an import, as it survives a re-probe.
  ASSERT_TRUE(db->setStatus("n1", NodeStatus::Drained, error)) << error;
  ASSERT_TRUE(db->importNodes({imported}, ResourceDb::ImportRules{}, nullptr, nullptr, error)) << error;
  ASSERT_TRUE(db->readRecords(records, error)) << error;
  EXPECT_EQ(records[0].node.status, NodeStatus::Drained);
  EXPECT_EQ(records.size(), 2u);  // nothing removed without removeOthers
}

// A failed call names its place in the sources from the project root, never the build machine's path.
TEST(ResourceDb, ErrorsNameSourcesWithoutTheBuildMachinesPath) {
  TempDir dir;
  const std::string path = dir.file("r.db");
  {
    auto db = openDb(path);
    ASSERT_TRUE(db);
  }
  rawExec(path, "DROP TABLE gpus;");
  auto db = openDb(path);
  ASSERT_TRUE(db);
  std::vector<NodeRecord> records;
  std::string error;
  EXPECT_FALSE(db->readRecords(records, error));
  EXPECT_NE(error.find("no such table: gpus"), std::string::npos) << error;
  EXPECT_NE(error.find(" at streammap/resources/lib/"), std::string::npos) << error;
  EXPECT_EQ(error.find(DISPAR_SOURCE_DIR), std::string::npos) << error;
}

TEST(HostNames, OneRuleForEveryName) {
  std::string why;
  for (const char* good : {"n1", "node-07.cluster.org", "gpu_a100_3", "10.0.0.1", "X"})
    EXPECT_TRUE(checkHostName(good, why)) << good << ": " << why;
  EXPECT_FALSE(checkHostName("n1\nevil:64", why));
  EXPECT_EQ(why, "host name 'n1\\nevil:64' has '\\n': only letters, digits, '.', '-' and '_' are allowed");
  EXPECT_FALSE(checkHostName("#n1", why));
  EXPECT_EQ(why, "host name '#n1' has '#': only letters, digits, '.', '-' and '_' are allowed");
  EXPECT_FALSE(checkHostName("-n1", why));
  EXPECT_EQ(why, "host name '-n1' must start with a letter or a digit");
  EXPECT_FALSE(checkHostName(std::string("n1\0x", 4), why));
  EXPECT_EQ(why, "host name 'n1\\x00x' has '\\x00': only letters, digits, '.', '-' and '_' are allowed");
  EXPECT_FALSE(checkHostName("", why));
  EXPECT_FALSE(checkHostName(std::string(254, 'a'), why));
  EXPECT_FALSE(checkHostName("n1:4", why));
  EXPECT_FALSE(checkHostName("n\xc3\xa9", why));
}

TEST_P(ResourceDbBackend, NamesOutsideTheRuleNeverEnterTheStore) {
  const std::string path = freshDatabase();
  auto db = openDb(path);
  std::string error;
  EXPECT_FALSE(db->recordNode(makeNode("n1\nevil:64", 4, 0), std::nullopt, nullptr, error));
  EXPECT_NE(error.find("host name 'n1\\nevil:64' has '\\n'"), std::string::npos) << error;
  EXPECT_FALSE(db->recordNodes({makeNode("ok", 4, 0), makeNode("#n1", 4, 0)}, false, nullptr, error));
  EXPECT_NE(error.find("host name '#n1'"), std::string::npos) << error;
  EXPECT_FALSE(db->importNodes({makeNode("bad name", 2, 0)}, ResourceDb::ImportRules{}, nullptr, nullptr, error));
  std::vector<NodeRecord> records;
  ASSERT_TRUE(db->readRecords(records, error)) << error;
  EXPECT_TRUE(records.empty());  // all or nothing: not even "ok"
}

// Issue 36, item 5: a record beyond the node limits, whichever reader or probe made it, is refused by the
// store itself (a 0-core node used to be stored and then used by `map`).
TEST_P(ResourceDbBackend, RecordsBeyondTheNodeLimitsNeverEnterTheStore) {
  const std::string path = freshDatabase();
  auto db = openDb(path);
  std::string error;
  NodeInfo zeroCores = makeNode("n1", 4, 0);
  zeroCores.cores = 0;
  EXPECT_FALSE(db->recordNode(zeroCores, std::nullopt, nullptr, error));
  EXPECT_NE(error.find("node n1: a node needs at least one socket, core and hardware thread"), std::string::npos)
      << error;
  NodeInfo tooManyGpus = makeNode("n2", 4, NodeLimits::kMaxGpus + 1);
  EXPECT_FALSE(db->importNodes({tooManyGpus}, ResourceDb::ImportRules{}, nullptr, nullptr, error));
  EXPECT_NE(error.find("node n2: GPU count 257 is beyond the limit of 256"), std::string::npos) << error;
  NodeInfo hugeMemory = makeNode("n3", 4, 0);
  hugeMemory.memoryBytes = NodeLimits::kMaxMemoryBytes + 1;
  EXPECT_FALSE(db->recordNodes({makeNode("ok", 4, 0), hugeMemory}, false, nullptr, error));
  EXPECT_NE(error.find("node n3: memory_bytes 1125899906842625 is beyond the limit of 1125899906842624"),
            std::string::npos)
      << error;
  std::vector<NodeRecord> records;
  ASSERT_TRUE(db->readRecords(records, error)) << error;
  EXPECT_TRUE(records.empty());
}

TEST_P(ResourceDbBackend, AbsentNodesAreMarkedDown) {
  const std::string path = freshDatabase();
  auto db = openDb(path);
  std::string error;
  ASSERT_TRUE(db->recordNodes({makeNode("a", 1, 0), makeNode("b", 1, 0), makeNode("c", 1, 0)}, true, nullptr, error));
  ASSERT_TRUE(db->setStatus("c", NodeStatus::Drained, error));
  std::vector<std::string> down;
  ASSERT_TRUE(db->recordNodes({makeNode("a", 1, 0)}, true, &down, error)) << error;
  EXPECT_EQ(down, std::vector<std::string>{"b"});  // drained c stays drained
  Cluster c;
  ASSERT_TRUE(loadClusterFromDatabase(path, 0, c, error));
  EXPECT_EQ(c.nodes[1].status, NodeStatus::Down);
  EXPECT_EQ(c.nodes[2].status, NodeStatus::Drained);
}

TEST(ResourceDb, HeartbeatTtlRule) {
  NodeRecord r;
  r.node.lastHeartbeat = 1000;
  EXPECT_EQ(effectiveStatus(r, 5000, 0), NodeStatus::Up);  // no TTL recorded: exempt
  EXPECT_EQ(effectiveStatus(r, 5000, 10), NodeStatus::Up);
  r.heartbeatTtlSeconds = 30;
  EXPECT_EQ(effectiveStatus(r, 1030, 0), NodeStatus::Up);
  EXPECT_EQ(effectiveStatus(r, 1031, 0), NodeStatus::Down);
  EXPECT_EQ(effectiveStatus(r, 1020, 10), NodeStatus::Down);  // override
  r.node.status = NodeStatus::Drained;
  EXPECT_EQ(effectiveStatus(r, 9999, 0), NodeStatus::Drained);
}

TEST_P(ResourceDbBackend, MigratesVersionOneFile) {
  const std::string path = freshDatabase("v1.db");
  // A version-1 database as streammap 0.1 wrote it (before cpu_speed, bandwidth and measured rates).
  std::string v1 = R"sql(
CREATE TABLE nodes(host TEXT PRIMARY KEY NOT NULL, sockets INTEGER NOT NULL, cores INTEGER NOT NULL,
  threads INTEGER NOT NULL, memory_bytes INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('up', 'down', 'drained')),
  source TEXT NOT NULL CHECK (source IN ('probe', 'import')), last_heartbeat INTEGER,
  heartbeat_ttl_s INTEGER, heartbeat_count INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL);
CREATE TABLE numa_nodes(host TEXT NOT NULL REFERENCES nodes(host) ON DELETE CASCADE, idx INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL, PRIMARY KEY (host, idx));
CREATE TABLE caches(host TEXT NOT NULL REFERENCES nodes(host) ON DELETE CASCADE, level INTEGER NOT NULL,
  bytes INTEGER NOT NULL, count INTEGER NOT NULL);
CREATE INDEX caches_host ON caches(host);
CREATE TABLE gpus(host TEXT NOT NULL REFERENCES nodes(host) ON DELETE CASCADE, idx INTEGER NOT NULL,
  name TEXT NOT NULL, uuid TEXT NOT NULL, cc_major INTEGER NOT NULL, cc_minor INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL, multiprocessors INTEGER NOT NULL, clock_khz INTEGER NOT NULL,
  pci_bus_id TEXT NOT NULL, numa_node INTEGER NOT NULL, PRIMARY KEY (host, idx));
INSERT INTO nodes VALUES ('old1', 2, 8, 16, 1073741824, 'drained', 'probe', 77, 90, 5, 77);
INSERT INTO gpus VALUES ('old1', 0, 'GeForce GTX 480', 'GPU-x', 2, 0, 1610612736, 15, 1401000, '0000:03:00.0', 0);
)sql";
  if (GetParam() == dispar::streammap::test::Backend::Sqlite) {
    v1 += "PRAGMA application_id = 1146310738;\nPRAGMA user_version = 1;\n";
  } else {
    // PostgreSQL's INTEGER is 32-bit; identity and version live in dispar_meta.
    for (std::size_t at; (at = v1.find("INTEGER")) != std::string::npos;) v1.replace(at, 7, "BIGINT");
    v1 += "CREATE TABLE dispar_meta(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);\n"
          "INSERT INTO dispar_meta VALUES ('application_id', '1146310738'), ('schema_version', '1');\n";
  }
  rawExec(v1);
  std::string error;
  auto db = ResourceDb::open(path, ResourceDb::OpenMode::Existing, error);
  ASSERT_TRUE(db) << error;
  EXPECT_EQ(db->openedSchemaVersion(), 1);
  NodeRecord r;
  bool found = false;
  ASSERT_TRUE(db->readRecord("old1", r, found, error)) << error;
  ASSERT_TRUE(found);
  EXPECT_EQ(r.node.status, NodeStatus::Drained);
  EXPECT_EQ(r.heartbeatCount, 5);
  EXPECT_DOUBLE_EQ(r.node.cpuSpeed, 1.0);  // the migration's default
  ASSERT_EQ(r.node.gpus.size(), 1u);
  EXPECT_EQ(r.node.gpus[0].name, "GeForce GTX 480");
  EXPECT_FALSE(r.node.gpus[0].measuredRate);
  // The new columns are writable, and the file now says version 2.
  NodeInfo n = r.node;
  n.gpus[0].measuredRate = 0.5;
  ASSERT_TRUE(db->recordNode(n, std::nullopt, nullptr, error)) << error;
  db.reset();
  db = ResourceDb::open(path, ResourceDb::OpenMode::Existing, error);
  ASSERT_TRUE(db) << error;
  EXPECT_EQ(db->openedSchemaVersion(), kResourceDbSchemaVersion);
  ASSERT_TRUE(db->readRecord("old1", r, found, error));
  EXPECT_EQ(r.node.gpus[0].measuredRate, 0.5);
  // Version 3's performance history exists in the migrated database, and it starts empty.
  std::vector<CostSample> samples;
  std::vector<PipeSample> pipes;
  ASSERT_TRUE(db->readHistory("", samples, pipes, error)) << error;
  EXPECT_TRUE(samples.empty());
  ProfileRunRecord run;
  run.program = "app";
  run.source = "p.json";
  run.samples.push_back(CostSample{});
  run.samples.back().vnode = "src";
  run.samples.back().deviceClass = "cpu";
  std::int64_t id = 0;
  ASSERT_TRUE(db->recordProfileRun(run, id, error)) << error;
  EXPECT_EQ(id, 1);
  std::string integrity;
  ASSERT_TRUE(db->integrityCheck(integrity, error)) << error;
  EXPECT_EQ(integrity, "ok");
}

TEST_P(ResourceDbBackend, RecordsProfileRunsAndReadsTheHistoryBack) {
  auto db = openDb(freshDatabase());
  std::string error;
  ProfileRunRecord run;
  run.program = "app";
  run.source = "run1.json";
  run.periodMessages = 64;
  CostSample a;
  a.vnode = "stage";
  a.fingerprint = "0123456789abcdef";
  a.replica = 1;
  a.replicas = 2;
  a.deviceClass = "gpu";
  a.deviceModel = "NVIDIA A100-SXM4-40GB";
  a.host = "n1";
  a.secondsPerMessage = 1.25e-4;
  a.speed = 0.804;
  a.features = R"({"arith_ops":12.0})";
  run.samples = {a};
  run.pipes = {PipeSample{0, "app", "data", 64, 262144}};
  std::int64_t first = 0, second = 0;
  ASSERT_TRUE(db->recordProfileRun(run, first, error)) << error;
  run.program = "other";
  ASSERT_TRUE(db->recordProfileRun(run, second, error)) << error;
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 2);
  std::vector<CostSample> samples;
  std::vector<PipeSample> pipes;
  ASSERT_TRUE(db->readHistory("app", samples, pipes, error)) << error;
  ASSERT_EQ(samples.size(), 1u);
  const CostSample& b = samples[0];
  EXPECT_EQ(b.runId, 1);
  EXPECT_EQ(b.program, "app");
  EXPECT_EQ(b.vnode, "stage");
  EXPECT_EQ(b.fingerprint, a.fingerprint);
  EXPECT_EQ(b.replica, 1);
  EXPECT_EQ(b.replicas, 2);
  EXPECT_EQ(b.deviceClass, "gpu");
  EXPECT_EQ(b.deviceModel, a.deviceModel);
  EXPECT_EQ(b.host, "n1");
  EXPECT_DOUBLE_EQ(b.secondsPerMessage, 1.25e-4);
  EXPECT_DOUBLE_EQ(b.speed, 0.804);
  EXPECT_EQ(b.features, a.features);
  EXPECT_GT(b.recordedAt, 0);
  ASSERT_EQ(pipes.size(), 1u);
  EXPECT_EQ(pipes[0].bytes, 262144u);
  ASSERT_TRUE(db->readHistory("", samples, pipes, error)) << error;
  EXPECT_EQ(samples.size(), 2u);
  // A sample the schema refuses (a device class it does not know) leaves nothing of its run behind.
  run.samples[0].deviceClass = "fpga";
  std::int64_t third = 0;
  EXPECT_FALSE(db->recordProfileRun(run, third, error));
  ASSERT_TRUE(db->readHistory("", samples, pipes, error)) << error;
  EXPECT_EQ(samples.size(), 2u);
  EXPECT_EQ(pipes.size(), 2u);
}

TEST(ResourceDb, RefusesForeignCorruptAndNewerFilesWithoutTouchingThem) {
  TempDir dir;
  std::string error;
  // Not SQLite at all.
  writeFile(dir.file("text.db"), "this is somebody's notes file, not a database\n");
  EXPECT_FALSE(ResourceDb::open(dir.file("text.db"), ResourceDb::OpenMode::CreateIfMissing, error));
  EXPECT_NE(error.find(dir.file("text.db") + ": not an SQLite database"), std::string::npos) << error;
  EXPECT_EQ(readFile(dir.file("text.db")), "this is somebody's notes file, not a database\n");
  // Another application's SQLite database.
  rawExec(dir.file("other.db"), "CREATE TABLE t(x); INSERT INTO t VALUES (1);");
  const std::string before = readFile(dir.file("other.db"));
  EXPECT_FALSE(ResourceDb::open(dir.file("other.db"), ResourceDb::OpenMode::CreateIfMissing, error));
  EXPECT_NE(error.find("another application"), std::string::npos) << error;
  EXPECT_EQ(readFile(dir.file("other.db")), before);
  // A newer schema.
  {
    auto db = openDb(dir.file("new.db"));
  }
  rawExec(dir.file("new.db"), "PRAGMA user_version = 99;");
  EXPECT_FALSE(ResourceDb::open(dir.file("new.db"), ResourceDb::OpenMode::Existing, error));
  EXPECT_NE(error.find("schema version 99 is newer"), std::string::npos) << error;
  // Corrupt: a valid header followed by garbage.
  std::string corrupt = readFile(dir.file("other.db"));
  for (std::size_t i = 100; i < corrupt.size(); ++i) corrupt[i] = static_cast<char>(i * 7);
  writeFile(dir.file("corrupt.db"), corrupt);
  EXPECT_FALSE(ResourceDb::open(dir.file("corrupt.db"), ResourceDb::OpenMode::Existing, error));
  EXPECT_EQ(error.rfind(dir.file("corrupt.db") + ": ", 0), 0u) << error;
  EXPECT_EQ(readFile(dir.file("corrupt.db")), corrupt);
  // Missing when it must exist.
  EXPECT_FALSE(ResourceDb::open(dir.file("missing.db"), ResourceDb::OpenMode::Existing, error));
  EXPECT_NE(error.find("no resource database"), std::string::npos);
}

// Many processes opening one new file at once (daemons of several nodes on a shared file, a reader
// beside a daemon): each sees the file either not yet created or created whole, never a creator's schema
// without its application id, so every open succeeds. Processes, not threads: SQLite in one process
// shares locks in ways that would hide the race.
TEST(ResourceDb, ConcurrentFirstOpensAllSucceed) {
  for (int round = 0; round < 10; ++round) {
    TempDir dir;
    const std::string path = dir.file("shared.db");
    std::vector<pid_t> children;
    for (int i = 0; i < 6; ++i) {
      const pid_t pid = ::fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        std::string error;
        const bool opened = ResourceDb::open(path, ResourceDb::OpenMode::CreateIfMissing, error) != nullptr;
        if (!opened) std::fprintf(stderr, "open failed: %s\n", error.c_str());
        ::_exit(opened ? 0 : 1);
      }
      children.push_back(pid);
    }
    for (pid_t child : children) {
      int status = 0;
      ASSERT_EQ(::waitpid(child, &status, 0), child);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round;
    }
  }
}

TEST(ResourceDb, UnwritablePathIsAnError) {
  TempDir dir;
  std::string error;
  writeFile(dir.file("plainfile"), "x");
  EXPECT_FALSE(ResourceDb::open(dir.file("plainfile") + "/sub/r.db", ResourceDb::OpenMode::CreateIfMissing, error));
  EXPECT_EQ(error.rfind(dir.file("plainfile") + "/sub/r.db: ", 0), 0u) << error;
}

// A directory the user may not write to. Root writes anywhere, so as root (CI runs as root) the check
// runs in a child process that has given up root for the 'nobody' user and group.
TEST(ResourceDb, ReadOnlyDirectoryIsAnError) {
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);  // 'nobody' must reach ro/ to be refused there
  ASSERT_EQ(::mkdir(dir.file("ro").c_str(), 0700), 0);
  ASSERT_EQ(::chmod(dir.file("ro").c_str(), 0555), 0);
  auto refused = [&] {
    std::string error;
    return !ResourceDb::open(dir.file("ro/r.db"), ResourceDb::OpenMode::CreateIfMissing, error) &&
           error.find("cannot create database") != std::string::npos;
  };
  if (geteuid() != 0) {
    EXPECT_TRUE(refused());
    return;
  }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    constexpr uid_t kNobody = 65534;
    if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(2);
    ::_exit(refused() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 2) << "could not drop root for the check";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the read-only directory was not refused";
  EXPECT_NE(::access(dir.file("ro/r.db").c_str(), F_OK), 0) << "nothing may be created there";
}

TEST(ResourceDb, DefaultPathHonoursEnvironment) {
  const char* saved = std::getenv("DISPAR_RESOURCE_DB");
  std::string keep = saved ? saved : "";
  setenv("DISPAR_RESOURCE_DB", "/some/where.db", 1);
  EXPECT_EQ(defaultDatabasePath(), "/some/where.db");
  setenv("DISPAR_RESOURCE_DB", "postgresql://dispar@db.cluster:5432/resources", 1);
  EXPECT_EQ(defaultDatabasePath(), "postgresql://dispar@db.cluster:5432/resources");
  unsetenv("DISPAR_RESOURCE_DB");
  const std::string fallback = defaultDatabasePath();
  EXPECT_EQ(fallback.size() > 0 && fallback.find("/dispar/resources.db") != std::string::npos, true) << fallback;
  if (saved) setenv("DISPAR_RESOURCE_DB", keep.c_str(), 1);
}

// Eight processes heartbeat a shared node and their own, and rewrite a shared record whose fields all
// derive from one value, for about two seconds. Every committed update must be counted and no row torn.
TEST_P(ResourceDbBackend, ConcurrentWritersLoseNoUpdates) {
  const std::string path = freshDatabase("c.db");
  {
    auto db = openDb(path);
    std::vector<NodeInfo> nodes = {makeNode("shared", 1, 0), makeNode("torn", 1, 0)};
    for (int i = 0; i < 8; ++i) nodes.push_back(makeNode("w" + std::to_string(i), 1, 0));
    std::string error;
    ASSERT_TRUE(db->recordNodes(nodes, false, nullptr, error)) << error;
  }
  std::vector<pid_t> children;
  for (int i = 0; i < 8; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::string error;
      auto db = ResourceDb::open(path, ResourceDb::OpenMode::Existing, error);
      if (!db) _exit(200);
      const std::string own = "w" + std::to_string(i);
      int count = 0;
      const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(1800);
      while (std::chrono::steady_clock::now() < end && count < 150) {  // exit codes from 200 mean failure
        if (!db->heartbeat("shared", now(), error) || !db->heartbeat(own, now(), error)) _exit(201);
        NodeInfo torn = makeNode("torn", 1 + i, i % 3);  // cores, threads and GPUs all follow i
        if (!db->recordNode(torn, std::nullopt, nullptr, error)) _exit(202);
        ++count;
      }
      _exit(count);  // <= 150
    }
    children.push_back(pid);
  }
  std::int64_t total = 0;
  std::vector<int> counts;
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_LT(WEXITSTATUS(status), 200) << "writer failed with code " << WEXITSTATUS(status);
    ASSERT_GT(WEXITSTATUS(status), 0);
    counts.push_back(WEXITSTATUS(status));
    total += WEXITSTATUS(status);
  }
  std::string error;
  auto db = ResourceDb::open(path, ResourceDb::OpenMode::Existing, error);
  ASSERT_TRUE(db) << error;
  NodeRecord r;
  bool found = false;
  ASSERT_TRUE(db->readRecord("shared", r, found, error));
  EXPECT_EQ(r.heartbeatCount, total);
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(db->readRecord("w" + std::to_string(i), r, found, error));
    EXPECT_EQ(r.heartbeatCount, counts[i]);
  }
  ASSERT_TRUE(db->readRecord("torn", r, found, error));
  const int k = r.node.cores - 1;
  ASSERT_TRUE(k >= 0 && k < 8);
  EXPECT_EQ(r.node.threads, 2 * r.node.cores);
  EXPECT_EQ(r.node.gpus.size(), static_cast<std::size_t>(k % 3));
  std::string integrity;
  ASSERT_TRUE(db->integrityCheck(integrity, error));
  EXPECT_EQ(integrity, "ok");
}

// A writer killed with SIGKILL in the middle of its loop leaves a healthy file holding its last commit.
TEST_P(ResourceDbBackend, WriterKilledMidLoopLeavesLastCommittedState) {
  const std::string path = freshDatabase("k.db");
  {
    auto db = openDb(path);
  }
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(ready[0]);
    std::string error;
    auto db = ResourceDb::open(path, ResourceDb::OpenMode::Existing, error);
    if (!db) _exit(1);
    for (int i = 1;; ++i) {
      // Every record is self-consistent: cores == i % 1000 + 1, threads == 2 * cores, i % 4 GPUs.
      std::vector<NodeInfo> nodes;
      for (int n = 0; n < 20; ++n) nodes.push_back(makeNode("k" + std::to_string(n), i % 1000 + 1, i % 4));
      if (!db->recordNodes(nodes, false, nullptr, error)) _exit(2);
      if (i == 20) (void)!write(ready[1], "x", 1);
    }
  }
  close(ready[1]);
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));

  std::string error;
  auto db = ResourceDb::open(path, ResourceDb::OpenMode::Existing, error);
  ASSERT_TRUE(db) << error;
  std::string integrity;
  ASSERT_TRUE(db->integrityCheck(integrity, error)) << error;
  EXPECT_EQ(integrity, "ok");
  std::vector<NodeRecord> records;
  ASSERT_TRUE(db->readRecords(records, error)) << error;
  ASSERT_EQ(records.size(), 20u);
  const int cores = records[0].node.cores;
  for (const NodeRecord& r : records) {  // one transaction: all 20 nodes from the same iteration
    EXPECT_EQ(r.node.cores, cores);
    EXPECT_EQ(r.node.threads, 2 * cores);
    EXPECT_EQ(r.node.gpus.size(), records[0].node.gpus.size());
  }
}

TEST(ResourceDb, ConnectionStringsAreShownWithoutPassword) {
  EXPECT_TRUE(isDatabaseUrl("postgresql://u@h/db"));
  EXPECT_TRUE(isDatabaseUrl("postgres://u@h/db"));
  EXPECT_FALSE(isDatabaseUrl("/var/lib/dispar/resources.db"));
  EXPECT_FALSE(isDatabaseUrl("postgresql.db"));
  EXPECT_EQ(displayDatabaseName("/a/b.db"), "/a/b.db");
  EXPECT_EQ(displayDatabaseName("postgresql://dispar:s3cret@db:5432/resources"),
            "postgresql://dispar@db:5432/resources");
  EXPECT_EQ(displayDatabaseName("postgres://dispar@db/resources?password=s3cret&sslmode=require"),
            "postgres://dispar@db/resources?sslmode=require");
  EXPECT_EQ(displayDatabaseName("postgresql://db/resources?password=s3cret"), "postgresql://db/resources");
  EXPECT_EQ(displayDatabaseName("postgresql://:pw@db"), "postgresql://@db");
}

namespace {

// "t_3" from "postgresql://postgres@/t_3?host=...".
std::string databaseOf(const std::string& url) {
  const std::size_t begin = url.find("@/") + 2;
  return url.substr(begin, url.find('?') - begin);
}

}  // namespace

// PostgreSQL's counterpart of the refusals above: a database of another application, or of a newer
// schema, is refused with an error naming it (without password) and left as it was.
TEST(PostgresResourceDb, RefusesForeignAndNewerDatabasesWithoutTouchingThem) {
  PostgresServer& server = PostgresServer::instance();
  std::string error;
  // Another application's tables, no dispar_meta.
  const std::string foreign = server.createDatabase();
  const std::string foreignName = databaseOf(foreign);
  server.exec(foreignName, "CREATE TABLE t(x int); INSERT INTO t VALUES (1);");
  EXPECT_FALSE(ResourceDb::open(foreign, ResourceDb::OpenMode::CreateIfMissing, error));
  EXPECT_EQ(error.rfind(foreign + ": ", 0), 0u) << error;
  EXPECT_NE(error.find("another application"), std::string::npos) << error;
  // Untouched: no dispar_meta was created (creating it again succeeds).
  server.exec(foreignName, "CREATE TABLE dispar_meta(k int); DROP TABLE dispar_meta;");
  // dispar_meta naming another application.
  const std::string other = server.createDatabase();
  const std::string otherName = databaseOf(other);
  server.exec(otherName, "CREATE TABLE dispar_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                         "INSERT INTO dispar_meta VALUES ('application_id', '42'), ('schema_version', '1');");
  EXPECT_FALSE(ResourceDb::open(other, ResourceDb::OpenMode::CreateIfMissing, error));
  EXPECT_NE(error.find("another application (dispar_meta application_id '42')"), std::string::npos) << error;
  // A newer schema.
  const std::string newer = server.createDatabase();
  const std::string newerName = databaseOf(newer);
  {
    ASSERT_TRUE(ResourceDb::open(newer, ResourceDb::OpenMode::CreateIfMissing, error)) << error;
  }
  server.exec(newerName, "UPDATE dispar_meta SET value = '99' WHERE key = 'schema_version'");
  EXPECT_FALSE(ResourceDb::open(newer, ResourceDb::OpenMode::Existing, error));
  EXPECT_NE(error.find("schema version 99 is newer"), std::string::npos) << error;
  EXPECT_FALSE(ResourceDb::open(newer, ResourceDb::OpenMode::CreateIfMissing, error));
  // An empty database when one must exist.
  const std::string empty = server.createDatabase();
  EXPECT_FALSE(ResourceDb::open(empty, ResourceDb::OpenMode::Existing, error));
  EXPECT_NE(error.find("no resource database"), std::string::npos) << error;
  // An unreachable database: the error names the connection string, never the password.
  const std::string withPassword = "postgresql://postgres:s3cret@/no_such_db?host=" + server.directory() +
                                   "&password=s3cret2&" + other.substr(other.find("port="));
  EXPECT_FALSE(ResourceDb::open(withPassword, ResourceDb::OpenMode::Existing, error));
  EXPECT_EQ(error.find("s3cret"), std::string::npos) << error;
  EXPECT_EQ(error.rfind("postgresql://postgres@/no_such_db?host=", 0), 0u) << error;
}

// The commands accept a connection string wherever they accept a path, and never print its password.
// Issue 36, item 8: a connection error was several lines (libpq's "\n\tIs the server running ...?") and
// named the C++ call; it is one line, in the user's terms, the password never shown.
TEST(PostgresResourceDb, ConnectionErrorsAreOneLineWithoutThePassword) {
  PostgresServer& server = PostgresServer::instance();
  const std::string url = server.createDatabase();
  const std::string socketDir = server.directory();
  // A socket directory where no server listens, and a TCP port nothing listens on.
  for (const std::string& bad : {"postgresql://postgres:s3cret@/x?host=" + socketDir + "/none&port=1",
                                 std::string("postgresql://bob:s3cret@127.0.0.1:1/x")}) {
    int status = 0;
    const std::string out = dispar::streammap::test::runCommand(
        std::string(DISPAR_RESOURCES_CLI) + " nodes --db '" + bad + "' 2>&1", &status);
    EXPECT_EQ(status, 1) << out;
    EXPECT_EQ(out.find("s3cret"), std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    EXPECT_EQ(out.rfind("streammap: error: postgresql://", 0), 0u) << out;
    EXPECT_NE(out.find(": cannot connect: "), std::string::npos) << out;
    EXPECT_EQ(out.find("PQconnectdb"), std::string::npos) << out;
    EXPECT_EQ(out.find('\t'), std::string::npos) << out;
  }
}

// Issue 36, item 8: 100,000 nodes took over 300 s into PostgreSQL (four round trips or more per node).
// The import writes multi-row statements; what it writes reads back the same on both backends (the
// figure itself: bench/discover/postgres-import.sh).
TEST_P(ResourceDbBackend, BatchedImportsReadBackWhatWasWritten) {
  const std::string path = freshDatabase();
  auto db = openDb(path);
  std::string error;
  std::vector<NodeInfo> nodes;
  for (int i = 0; i < 1200; ++i) {  // several batches of each table
    NodeInfo n = makeNode("n" + std::to_string(i), 1 + i % 64, i % 3);
    n.numa = {{0, 1ull << 30}, {1, 2ull << 30}};
    n.caches = {{2, 1ull << 20, 8}, {3, 32ull << 20, 2}, {3, 16ull << 20, 1}};  // two of one level
    if (!n.gpus.empty()) {
      n.gpus[0].name = "GPU \"quoted\", {braced} \\ back";
      n.gpus[0].measuredRate = 1.5;
    }
    if (i % 7 == 0) n.bandwidthBytesPerSec = 1e10 / 3;
    if (i % 5 == 0) n.latencySeconds = 1e-6 / 3;
    nodes.push_back(n);
  }
  ASSERT_TRUE(db->importNodes(nodes, ResourceDb::ImportRules{}, nullptr, nullptr, error)) << error;
  // Again, so that every batch replaces recorded NUMA nodes, caches and GPUs rather than adding to them.
  ASSERT_TRUE(db->importNodes(nodes, ResourceDb::ImportRules{}, nullptr, nullptr, error)) << error;
  std::vector<NodeRecord> records;
  ASSERT_TRUE(db->readRecords(records, error)) << error;
  ASSERT_EQ(records.size(), nodes.size());
  std::map<std::string, const NodeInfo*> written;
  for (const NodeInfo& n : nodes) written[n.host] = &n;
  for (const NodeRecord& r : records) {
    const NodeInfo& want = *written.at(r.node.host);
    EXPECT_EQ(r.node.cores, want.cores) << r.node.host;
    EXPECT_EQ(r.node.numa.size(), 2u) << r.node.host;
    ASSERT_EQ(r.node.caches.size(), 3u) << r.node.host;
    EXPECT_EQ(r.node.caches[1].bytes, 32ull << 20) << r.node.host;  // one level's caches in the order written
    EXPECT_EQ(r.node.caches[2].bytes, 16ull << 20) << r.node.host;
    EXPECT_EQ(r.node.bandwidthBytesPerSec, want.bandwidthBytesPerSec) << r.node.host;
    EXPECT_EQ(r.node.latencySeconds, want.latencySeconds) << r.node.host;
    ASSERT_EQ(r.node.gpus.size(), want.gpus.size()) << r.node.host;
    if (!want.gpus.empty()) {
      EXPECT_EQ(r.node.gpus[0].name, want.gpus[0].name);
      EXPECT_EQ(r.node.gpus[0].measuredRate, 1.5);
    }
  }
}

TEST(PostgresResourceDb, CommandsTakeConnectionStringsAndNeverPrintThePassword) {
  PostgresServer& server = PostgresServer::instance();
  const std::string url = server.createDatabase();
  const std::string withPassword = "postgresql://postgres:s3cret@/" + url.substr(url.find("@/") + 2);
  const std::string cli = std::string(DISPAR_RESOURCES_CLI) + " ";
  int status = 0;
  std::string out = dispar::streammap::test::runCommand(
      cli + "cluster import " + DISPAR_EXAMPLES_DIR + "/paper4.json --db '" + withPassword + "' 2>&1", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("imported 4 nodes"), std::string::npos) << out;
  EXPECT_NE(out.find("into " + url), std::string::npos) << out;
  EXPECT_EQ(out.find("s3cret"), std::string::npos) << out;
  out = dispar::streammap::test::runCommand("DISPAR_RESOURCE_DB='" + withPassword + "' " + cli + "nodes 2>&1", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("node4"), std::string::npos) << out;
  out = dispar::streammap::test::runCommand(cli + "node drain nosuchnode --db '" + withPassword + "' 2>&1", &status);
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find("streammap: error: " + url + ": no node 'nosuchnode' recorded"), std::string::npos) << out;
  EXPECT_EQ(out.find("s3cret"), std::string::npos) << out;
  out = dispar::streammap::test::runCommand(cli + "daemon --interval 0.01 --db '" + withPassword + "' 2>&1", &status);
  EXPECT_EQ(status, 2);  // a usage error
  EXPECT_NE(out.find("--interval: expected a number from 0.05 to 86400, got '0.01'"), std::string::npos) << out;
}
