// A throw-away PostgreSQL server for the tests of the resource database's PostgreSQL backend:
// postgres_server.sh (beside this file: initdb and pg_ctl from DISPAR_POSTGRESQL_BINDIR) in a fresh
// temporary directory, listening only on a unix socket in that directory. Under root (CI) it runs as the
// 'postgres' system user (else 'nobody'), which owns the directory. It starts the first time a test asks for it
// and is stopped and deleted once the test binary's tests have run, whether they passed or not (a
// GoogleTest global environment).
#ifndef STREAMMAP_RESOURCES_POSTGRES_SERVER_H
#define STREAMMAP_RESOURCES_POSTGRES_SERVER_H

#include <string>

namespace dispar::streammap::test {

class PostgresServer {
 public:
  /// The server, started on first use. Throws std::runtime_error saying why it cannot start (e.g. the
  /// server binaries are missing), so that the asking test fails.
  static PostgresServer& instance();

  /// Creates a new, empty database (t_1, t_2, ...) and returns its connection string.
  std::string createDatabase();
  /// The connection string of database `name`.
  std::string url(const std::string& name) const;
  /// Runs SQL (several statements allowed) in database `name` as the superuser; throws on failure.
  void exec(const std::string& name, const std::string& sql) const;
  /// pg_ctl restart -m fast: every client connection is cut.
  void restart();
  const std::string& directory() const { return dir_; }

  /// Stops the server and deletes its directory (only in the process that started it).
  static void shutdown();

  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

 private:
  PostgresServer();
  void stop();

  std::string bin_, dir_;
  int port_ = 0;
  int next_ = 0;
  int owner_ = 0;  // pid of the process that started it
};

}  // namespace dispar::streammap::test

#endif
