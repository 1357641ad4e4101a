#include "PostgresServer.h"

#include "BackendTest.h"
#include "TestSupport.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>

#ifndef DISPAR_POSTGRESQL_BINDIR
#define DISPAR_POSTGRESQL_BINDIR ""
#endif

namespace dispar::streammap::test {

namespace {

std::unique_ptr<PostgresServer> gServer;
std::string gStartFailure;  // why the first start failed: later tests fail with the same reason

// A port nobody listens on now: bind port 0 and let the kernel choose.
int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot pick a free port");
  return ntohs(address.sin_port);
}

std::string shellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

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
  if (::geteuid() == 0) {
    // The server refuses to run as root: hand the directory to an unprivileged user.
    const passwd* user = ::getpwnam("postgres");
    if (!user) user = ::getpwnam("nobody");
    if (!user) throw std::runtime_error("neither a 'postgres' nor a 'nobody' user to run the server as");
    if (::chown(dir_.c_str(), user->pw_uid, user->pw_gid) != 0)
      throw std::runtime_error("cannot hand " + dir_ + " to user " + user->pw_name);
    runAs_ = std::string("runuser -u ") + user->pw_name + " -- ";
  }
  port_ = freePort();
  int status = 0;
  const std::string initdb = "cd " + dir_ + " && " + runAs_ + bin_ + "/initdb -D " + dir_ +
                             "/data -U postgres -A trust -E UTF8 --no-sync > " + dir_ + "/initdb.log 2>&1";
  runCommand(initdb, &status);
  if (status != 0) throw std::runtime_error("initdb failed (" + initdb + "):\n" + readFile(dir_ + "/initdb.log"));
  // Unix socket only (no TCP), in the directory; durability is not under test, speed is.
  const std::string options = "-p " + std::to_string(port_) + " -k " + dir_ +
                              " -c listen_addresses='' -c fsync=off -c synchronous_commit=off"
                              " -c full_page_writes=off -c max_connections=300";
  const std::string output = pgCtl("-o " + shellQuote(options) + " start");
  if (::access((dir_ + "/data/postmaster.pid").c_str(), F_OK) != 0)
    throw std::runtime_error("pg_ctl start failed:\n" + output + readFile(dir_ + "/server.log"));
}

PostgresServer::~PostgresServer() { stop(); }

std::string PostgresServer::pgCtl(const std::string& arguments) const {
  // -l: the server's output goes to a file, never into the pipe runCommand reads (it would stay open).
  return runCommand("cd " + dir_ + " && " + runAs_ + bin_ + "/pg_ctl -D " + dir_ + "/data -l " + dir_ +
                    "/server.log -w -t 60 " + arguments + " 2>&1");
}

void PostgresServer::stop() {
  if (dir_.empty()) return;
  pgCtl("-m immediate stop");
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
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
  const std::string output = pgCtl("-m fast restart");
  if (output.find("server started") == std::string::npos) throw std::runtime_error("pg_ctl restart failed:\n" + output);
}

void BackendTest::rawExec(const std::string& sql) {
  if (GetParam() == Backend::Postgres) {
    PostgresServer::instance().exec(database_, sql);
    return;
  }
  rawSqliteExec(location_, sql);
}

}  // namespace dispar::streammap::test
