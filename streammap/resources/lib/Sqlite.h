// Thin RAII layer over the SQLite C API. Every call goes through DISPAR_SQLITE_CHECK, which throws
// SqliteError naming the call, the source position and SQLite's message; ResourceDb turns that into
// an error string at its public boundary.
#ifndef STREAMMAP_LIB_SQLITE_H
#define STREAMMAP_LIB_SQLITE_H

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace dispar::streammap::sqlite {

class SqliteError : public std::runtime_error {
 public:
  SqliteError(const std::string& message, int code) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

/// Throws SqliteError unless `rc` is one of SQLITE_OK / SQLITE_ROW / SQLITE_DONE.
int check(int rc, sqlite3* db, const char* call, const char* file, int line);

#define DISPAR_SQLITE_CHECK(db, call) ::dispar::streammap::sqlite::check((call), (db), #call, __FILE__, __LINE__)

class Connection {
 public:
  /// `flags` as for sqlite3_open_v2. Sets a busy timeout so that concurrent writers wait.
  Connection(const std::string& path, int flags, int busyTimeoutMs);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  sqlite3* get() const { return db_; }
  void exec(const char* sql);
  /// Runs a single-value query such as "PRAGMA user_version".
  std::int64_t queryInt(const char* sql);
  std::string queryText(const char* sql);

 private:
  sqlite3* db_ = nullptr;
};

class Statement {
 public:
  /// Multi-row writes bind a placeholder per value (VALUES (?, ?), (?, ?)).
  static constexpr bool kTakesArrays = false;

  Statement(Connection& connection, const char* sql);
  ~Statement();
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
  /// Steps a statement that returns no rows, then resets it for reuse. Returns the rows it changed.
  std::int64_t run();
  void reset();

  std::int64_t columnInt(int column) const;
  double columnDouble(int column) const;
  std::string columnText(int column) const;
  bool columnIsNull(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

/// BEGIN IMMEDIATE: takes the write lock up front, so concurrent writers queue on the busy timeout
/// instead of failing with SQLITE_BUSY when upgrading a read lock. Rolls back unless committed.
class WriteTransaction {
 public:
  explicit WriteTransaction(Connection& connection);
  ~WriteTransaction();
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;
  void commit();

 private:
  Connection& connection_;
  bool done_ = false;
};

}  // namespace dispar::streammap::sqlite

#endif
