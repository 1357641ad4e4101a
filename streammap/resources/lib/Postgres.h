// Thin RAII layer over libpq, the PostgreSQL counterpart of Sqlite.h. Every call whose outcome matters
// goes through DISPAR_PG_CHECK, which throws PostgresError naming the call, the source position, the
// server's message and its SQLSTATE; ResourceDb turns that into an error string at its public boundary.
// Connection strings only ever reach messages through redactConnectionString (no password).
#ifndef STREAMMAP_LIB_POSTGRES_H
#define STREAMMAP_LIB_POSTGRES_H

#include <libpq-fe.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dispar::streammap::postgres {

class PostgresError : public std::runtime_error {
 public:
  PostgresError(const std::string& message, std::string sqlState, bool connectionLost)
      : std::runtime_error(message), sqlState_(std::move(sqlState)), connectionLost_(connectionLost) {}
  /// Five-character SQLSTATE ("40001"), empty when the failure happened on the client side.
  const std::string& sqlState() const { return sqlState_; }
  /// True when the connection to the server is gone (the next operation must reconnect first).
  bool connectionLost() const { return connectionLost_; }
  /// Serialization failure or deadlock: the transaction may simply be run again.
  bool retryable() const { return sqlState_ == "40001" || sqlState_ == "40P01"; }

 private:
  std::string sqlState_;
  bool connectionLost_;
};

/// An owned PGresult (PQclear on destruction).
class Result {
 public:
  explicit Result(PGresult* result = nullptr) : result_(result) {}
  ~Result() { PQclear(result_); }
  Result(Result&& other) noexcept : result_(other.result_) { other.result_ = nullptr; }
  Result& operator=(Result&& other) noexcept;
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;

  PGresult* get() const { return result_; }
  int rows() const { return PQntuples(result_); }
  /// Rows an INSERT/UPDATE/DELETE touched.
  std::int64_t affected() const;
  bool isNull(int row, int column) const { return PQgetisnull(result_, row, column) != 0; }
  std::string text(int row, int column) const;
  std::int64_t integer(int row, int column) const;
  double real(int row, int column) const;

 private:
  PGresult* result_;
};

/// Throws PostgresError unless `result` reports success; returns it otherwise.
Result check(PGresult* result, PGconn* connection, const char* call, const char* file, int line);

#define DISPAR_PG_CHECK(connection, call)                                                                              \
  ::dispar::streammap::postgres::check((call), (connection), #call, __FILE__, __LINE__)

class Connection {
 public:
  /// Connects with a URI (postgresql://...) or key=value string. Throws PostgresError naming the
  /// server's reason; the message never contains the password.
  explicit Connection(const std::string& conninfo);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  PGconn* get() const { return connection_; }
  bool isOk() const { return PQstatus(connection_) == CONNECTION_OK; }
  /// Re-establishes a lost connection with the same parameters. Throws PostgresError when it fails.
  void reset();

  /// Runs one or more statements without parameters.
  void exec(const std::string& sql);

 private:
  PGconn* connection_ = nullptr;
};

/// One statement with the surface of sqlite::Statement, so that code templated on the statement type
/// serves both backends. SQLite's "?N" placeholders are rewritten to "$N". Parameters travel as text;
/// the statement runs at the first step() or run().
class Statement {
 public:
  /// Multi-row writes bind one array per column (unnest(?::bigint[], ...)): a statement's parameters cost
  /// the server more than its rows do.
  static constexpr bool kTakesArrays = true;

  Statement(Connection& connection, const std::string& sql);
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, const std::string& value);
  Statement& bindNull(int index);
  template <typename T>
  Statement& bindOptional(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bindNull(index);
  }

  /// True while a row is available.
  bool step();
  /// Runs a statement that returns no rows, clears the bindings for reuse; returns the rows it touched.
  std::int64_t run();

  std::int64_t columnInt(int column) const { return result_.integer(row_, column); }
  double columnDouble(int column) const { return result_.real(row_, column); }
  std::string columnText(int column) const { return result_.text(row_, column); }
  bool columnIsNull(int column) const { return result_.isNull(row_, column); }

 private:
  void execute();
  Connection& connection_;
  std::string sql_;
  std::vector<std::optional<std::string>> params_;
  Result result_;
  int row_ = -1;
  bool executed_ = false;
};

/// Runs every statement between construction and commit() as one transaction; rolls back unless
/// committed. `begin` is the BEGIN statement (isolation level and access mode).
class Transaction {
 public:
  Transaction(Connection& connection, const char* begin);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Connection& connection_;
  bool done_ = false;
};

/// True for the connection strings this layer handles: postgresql://... and postgres://...
bool isConnectionUri(const std::string& text);

/// The connection string without its password (userinfo "user:secret@" becomes "user@", a
/// "password=" query parameter is dropped), for messages and logs.
std::string redactConnectionString(const std::string& conninfo);

}  // namespace dispar::streammap::postgres

#endif
