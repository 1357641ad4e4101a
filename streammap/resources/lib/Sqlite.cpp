#include "Sqlite.h"

namespace dispar::streammap::sqlite {

int check(int rc, sqlite3* db, const char* call, const char* file, int line) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return rc;
  std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  throw SqliteError(message + " (" + call + " at " + file + ":" + std::to_string(line) + ")", rc);
}

Connection::Connection(const std::string& path, int flags, int busyTimeoutMs) {
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    // sqlite3_open_v2 hands back a handle even on failure; it must still be closed.
    std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError(message, rc);
  }
  DISPAR_SQLITE_CHECK(db_, sqlite3_extended_result_codes(db_, 0));
  DISPAR_SQLITE_CHECK(db_, sqlite3_busy_timeout(db_, busyTimeoutMs));
}

Connection::~Connection() { sqlite3_close_v2(db_); }

void Connection::exec(const char* sql) { DISPAR_SQLITE_CHECK(db_, sqlite3_exec(db_, sql, nullptr, nullptr, nullptr)); }

std::int64_t Connection::queryInt(const char* sql) {
  Statement statement(*this, sql);
  return statement.step() ? statement.columnInt(0) : 0;
}

std::string Connection::queryText(const char* sql) {
  Statement statement(*this, sql);
  return statement.step() ? statement.columnText(0) : std::string();
}

Statement::Statement(Connection& connection, const char* sql) : db_(connection.get()) {
  DISPAR_SQLITE_CHECK(db_, sqlite3_prepare_v2(db_, sql, -1, &stmt_, nullptr));
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, std::int64_t value) {
  DISPAR_SQLITE_CHECK(db_, sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

Statement& Statement::bind(int index, double value) {
  DISPAR_SQLITE_CHECK(db_, sqlite3_bind_double(stmt_, index, value));
  return *this;
}

Statement& Statement::bind(int index, const std::string& value) {
  DISPAR_SQLITE_CHECK(db_,
                      sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT));
  return *this;
}

Statement& Statement::bindNull(int index) {
  DISPAR_SQLITE_CHECK(db_, sqlite3_bind_null(stmt_, index));
  return *this;
}

bool Statement::step() { return DISPAR_SQLITE_CHECK(db_, sqlite3_step(stmt_)) == SQLITE_ROW; }

std::int64_t Statement::run() {
  while (step()) {
  }
  reset();
  return sqlite3_changes64(db_);
}

void Statement::reset() {
  sqlite3_reset(stmt_);  // reports the last step's error again, which step() already threw
  DISPAR_SQLITE_CHECK(db_, sqlite3_clear_bindings(stmt_));
}

std::int64_t Statement::columnInt(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::columnDouble(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::columnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  return text ? std::string(reinterpret_cast<const char*>(text),
                            static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)))
              : std::string();
}

bool Statement::columnIsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

WriteTransaction::WriteTransaction(Connection& connection) : connection_(connection) {
  connection_.exec("BEGIN IMMEDIATE");
}

WriteTransaction::~WriteTransaction() {
  if (!done_) sqlite3_exec(connection_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void WriteTransaction::commit() {
  connection_.exec("COMMIT");
  done_ = true;
}

}  // namespace dispar::streammap::sqlite
