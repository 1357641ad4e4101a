#include "PostgresServer.h"

#include "BackendTest.h"
#include "TestSupport.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>

#ifndef DISPAR_POSTGRESQL_BINDIR
#define DISPAR_POSTGRESQL_BINDIR ""
#endif

namespace dispar::streammap::test {

namespace {

std::unique_ptr<PostgresServer> gServer;
std::string gStartFailure;  // why the first start failed: later tests fail with the same reason

// The one recipe for a test server (also the emulated cluster's, on its bridge).
const std::string kScript = std::string(DISPAR_SOURCE_DIR) + "/tests/streammap_resources/postgres_server.sh";

// Stops the server after the last test, also when tests failed.
class PostgresEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { PostgresServer::shutdown(); }
};

[[maybe_unused]] ::testing::Environment* const gEnvironment =
    ::testing::AddGlobalTestEnvironment(new PostgresEnvironment);

}  // namespace

PostgresServer& PostgresServer::instance() {
  if (!gServer) {
    if (!gStartFailure.empty()) throw std::runtime_error(gStartFailure);
    try {
      gServer.reset(new PostgresServer());
    } catch (const std::runtime_error& e) {
      gStartFailure = e.what();
      throw;
    }
  }
  return *gServer;
}

void PostgresServer::shutdown() {
  if (gServer && gServer->owner_ == ::getpid()) gServer.reset();
}

PostgresServer::PostgresServer() : bin_(DISPAR_POSTGRESQL_BINDIR), owner_(::getpid()) {
  if (bin_.empty() || ::access((bin_ + "/initdb").c_str(), X_OK) != 0 ||
      ::access((bin_ + "/pg_ctl").c_str(), X_OK) != 0)
    throw std::runtime_error("PostgreSQL server binaries (initdb, pg_ctl) not found in '" + bin_ +
                             "': install the Debian package postgresql (scripts/setup.sh does) and re-run cmake");
  std::string pattern = "/tmp/streammap-pg-XXXXXX";
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  int status = 0;
  const std::string output = runCommand("bash " + kScript + " start " + bin_ + " " + dir_ + " 2>&1", &status);
  // "postgresql://postgres@/postgres?host=DIR&port=PORT", the last line
  const std::size_t at = output.rfind("&port=");
  if (status != 0 || at == std::string::npos) throw std::runtime_error("the test server did not start:\n" + output);
  port_ = std::atoi(output.c_str() + at + 6);
}

PostgresServer::~PostgresServer() { stop(); }

void PostgresServer::stop() {
  if (dir_.empty()) return;
  runCommand("bash " + kScript + " stop " + bin_ + " " + dir_ + " 2>&1");
  dir_.clear();
}

std::string PostgresServer::url(const std::string& name) const {
  return "postgresql://postgres@/" + name + "?host=" + dir_ + "&port=" + std::to_string(port_);
}

void PostgresServer::exec(const std::string& name, const std::string& sql) const {
  std::unique_ptr<PGconn, void (*)(PGconn*)> connection(PQconnectdb(url(name).c_str()), PQfinish);
  if (PQstatus(connection.get()) != CONNECTION_OK)
    throw std::runtime_error("cannot connect to " + url(name) + ": " + PQerrorMessage(connection.get()));
  std::unique_ptr<PGresult, void (*)(PGresult*)> result(PQexec(connection.get(), sql.c_str()), PQclear);
  const ExecStatusType status = PQresultStatus(result.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
    throw std::runtime_error("'" + sql + "' failed: " + PQerrorMessage(connection.get()));
}

std::string PostgresServer::createDatabase() {
  const std::string name = "t_" + std::to_string(++next_);
  exec("postgres", "CREATE DATABASE " + name);
  return url(name);
}

void PostgresServer::restart() {
  int status = 0;
  const std::string output = runCommand("bash " + kScript + " restart " + bin_ + " " + dir_ + " 2>&1", &status);
  if (status != 0) throw std::runtime_error("restarting the test server failed:\n" + output);
}

void BackendTest::rawExec(const std::string& sql) {
  if (GetParam() == Backend::Postgres) {
    PostgresServer::instance().exec(database_, sql);
    return;
  }
  rawSqliteExec(location_, sql);
}

}  // namespace dispar::streammap::test
