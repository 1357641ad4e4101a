#include "TestSupport.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>

namespace dispar::streammap::test {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/streammap-test-XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string runCommand(const std::string& command, int* status) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed: " + command);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
  int rc = pclose(pipe);
  if (status) *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return output;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

NodeInfo makeNode(const std::string& host, int cores, int gpus) {
  NodeInfo n;
  n.host = host;
  n.sockets = 2;
  n.cores = cores;
  n.threads = 2 * cores;
  n.memoryBytes = 64ull << 30;
  n.numa = {{0, 32ull << 30}, {1, 32ull << 30}};
  n.caches = {{3, 32ull << 20, 2}};
  n.source = RecordSource::Import;
  for (int i = 0; i < gpus; ++i) {
    GpuInfo g;
    g.index = i;
    g.name = "Tesla K20m";
    g.uuid = "GPU-" + host + "-" + std::to_string(i);
    g.ccMajor = 3;
    g.ccMinor = 5;
    g.memoryBytes = 5ull << 30;
    g.multiprocessors = 13;
    g.clockKHz = 705500;
    g.pciBusId = "0000:0" + std::to_string(i + 2) + ":00.0";
    g.numaNode = i % 2;
    n.gpus.push_back(g);
  }
  return n;
}

void rawSqliteExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  const std::string text = message ? message : "";
  sqlite3_free(message);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << text;
}

}  // namespace dispar::streammap::test
