#include "Postgres.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace dispar::streammap::postgres {

namespace {

/// libpq's message as one line: its continuation lines ("\n\tIs the server running on that host...?")
/// joined with a space, the trailing newline dropped, so that an error is one line of a log or terminal.
std::string trimmed(const char* message) {
  std::string text;
  bool pendingSpace = false;
  for (const char* c = message ? message : ""; *c != '\0'; ++c) {
    if (*c == '\n' || *c == '\t' || *c == '\r') {
      pendingSpace = !text.empty();
      continue;
    }
    if (pendingSpace && *c != ' ') text += ' ';
    pendingSpace = false;
    text += *c;
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

/// The libpq function a checked call made ("PQexecParams"), not the C++ expression around it.
std::string functionOf(const char* call) {
  const std::string text = call ? call : "";
  return text.substr(0, text.find('('));
}

}  // namespace

Result& Result::operator=(Result&& other) noexcept {
  if (this != &other) {
    PQclear(result_);
    result_ = other.result_;
    other.result_ = nullptr;
  }
  return *this;
}

std::int64_t Result::affected() const {
  const char* n = PQcmdTuples(result_);
  return n && *n ? std::strtoll(n, nullptr, 10) : 0;
}

std::string Result::text(int row, int column) const {
  return std::string(PQgetvalue(result_, row, column), static_cast<std::size_t>(PQgetlength(result_, row, column)));
}

std::int64_t Result::integer(int row, int column) const {
  return std::strtoll(PQgetvalue(result_, row, column), nullptr, 10);
}

double Result::real(int row, int column) const { return std::strtod(PQgetvalue(result_, row, column), nullptr); }

Result check(PGresult* raw, PGconn* connection, const char* call, const char* file, int line) {
  Result result(raw);
  const ExecStatusType status = raw ? PQresultStatus(raw) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY) return result;
  std::string message = trimmed(raw ? PQresultErrorMessage(raw) : nullptr);
  if (message.empty()) message = trimmed(PQerrorMessage(connection));
  if (message.empty()) message = "unknown libpq failure";
  const char* state = raw ? PQresultErrorField(raw, PG_DIAG_SQLSTATE) : nullptr;
  const bool lost = PQstatus(connection) != CONNECTION_OK;
  if (lost) message = "connection to the server lost: " + message;
  throw PostgresError(message + " (" + functionOf(call) + " at " + file + ":" + std::to_string(line) + ")",
                      state ? state : "", lost);
}

Connection::Connection(const std::string& conninfo) {
  // Defaults first, then the caller's string (expand_dbname), so that its own settings win. A bounded
  // connect timeout and TCP keepalives keep a daemon's tick from hanging on a server that went away.
  const char* const keys[] = {"connect_timeout",
                              "keepalives_idle",
                              "keepalives_interval",
                              "keepalives_count",
                              "application_name",
                              "dbname",
                              nullptr};
  const char* const values[] = {"10", "10", "5", "3", "streammap", conninfo.c_str(), nullptr};
  connection_ = PQconnectdbParams(keys, values, 1);
  if (!connection_) throw PostgresError("out of memory allocating a libpq connection", "", true);
  if (PQstatus(connection_) != CONNECTION_OK) {
    std::string message = trimmed(PQerrorMessage(connection_));
    PQfinish(connection_);
    connection_ = nullptr;
    throw PostgresError("cannot connect: " + message, "", true);
  }
  // Notices (e.g. "relation already exists, skipping") are not errors; keep them off stderr.
  PQsetNoticeProcessor(connection_, [](void*, const char*) {}, nullptr);
}

Connection::~Connection() { PQfinish(connection_); }

void Connection::reset() {
  PQreset(connection_);
  if (PQstatus(connection_) != CONNECTION_OK)
    throw PostgresError("cannot reconnect: " + trimmed(PQerrorMessage(connection_)), "", true);
}

void Connection::exec(const std::string& sql) { DISPAR_PG_CHECK(connection_, PQexec(connection_, sql.c_str())); }

namespace {

// "?12" -> "$12": SQLite's numbered placeholders in PostgreSQL's spelling. The statements shared by both
// backends use no '?' anywhere else.
/// SQLite's placeholders in PostgreSQL's form: ?N becomes $N, and a bare ? the next number, as SQLite
/// numbers them (a statement uses one form or the other).
std::string numberedPlaceholders(const std::string& sql) {
  std::string out;
  out.reserve(sql.size() + sql.size() / 4);
  int bare = 0;
  for (std::size_t i = 0; i < sql.size(); ++i) {
    if (sql[i] != '?') {
      out += sql[i];
    } else if (i + 1 < sql.size() && sql[i + 1] >= '0' && sql[i + 1] <= '9') {
      out += '$';
    } else {
      out += '$' + std::to_string(++bare);
    }
  }
  return out;
}

}  // namespace

Statement::Statement(Connection& connection, const std::string& sql)
    : connection_(connection), sql_(numberedPlaceholders(sql)) {}

Statement& Statement::bind(int index, std::int64_t value) {
  if (params_.size() < static_cast<std::size_t>(index)) params_.resize(static_cast<std::size_t>(index));
  params_[static_cast<std::size_t>(index) - 1] = std::to_string(value);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);  // 17 significant digits: the double exactly
  if (params_.size() < static_cast<std::size_t>(index)) params_.resize(static_cast<std::size_t>(index));
  params_[static_cast<std::size_t>(index) - 1] = std::string(text);
  return *this;
}

Statement& Statement::bind(int index, const std::string& value) {
  if (params_.size() < static_cast<std::size_t>(index)) params_.resize(static_cast<std::size_t>(index));
  params_[static_cast<std::size_t>(index) - 1] = value;
  return *this;
}

Statement& Statement::bindNull(int index) {
  if (params_.size() < static_cast<std::size_t>(index)) params_.resize(static_cast<std::size_t>(index));
  params_[static_cast<std::size_t>(index) - 1].reset();
  return *this;
}

void Statement::execute() {
  std::vector<const char*> values;
  values.reserve(params_.size());
  for (const auto& v : params_) values.push_back(v ? v->c_str() : nullptr);
  PGconn* c = connection_.get();
  result_ = DISPAR_PG_CHECK(
      c, PQexecParams(c, sql_.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0));
  executed_ = true;
  row_ = -1;
}

bool Statement::step() {
  if (!executed_) execute();
  return ++row_ < result_.rows();
}

std::int64_t Statement::run() {
  execute();
  executed_ = false;
  params_.clear();
  return result_.affected();
}

Transaction::Transaction(Connection& connection, const char* begin) : connection_(connection) {
  connection_.exec(begin);
}

Transaction::~Transaction() {
  // Best effort: on a lost connection the server has rolled back already.
  if (!done_ && connection_.isOk()) PQclear(PQexec(connection_.get(), "ROLLBACK"));
}

void Transaction::commit() {
  done_ = true;  // COMMIT ends the transaction whether it succeeds or fails
  connection_.exec("COMMIT");
}

bool isConnectionUri(const std::string& text) {
  return text.rfind("postgresql://", 0) == 0 || text.rfind("postgres://", 0) == 0;
}

std::string redactConnectionString(const std::string& conninfo) {
  const std::size_t scheme = conninfo.find("://");
  if (scheme == std::string::npos) return conninfo;
  const std::size_t start = scheme + 3;
  std::size_t authorityEnd = conninfo.find_first_of("/?", start);
  if (authorityEnd == std::string::npos) authorityEnd = conninfo.size();
  std::string out = conninfo.substr(0, start);
  std::string authority = conninfo.substr(start, authorityEnd - start);
  if (std::size_t at = authority.rfind('@'); at != std::string::npos) {
    std::string user = authority.substr(0, at);
    if (std::size_t colon = user.find(':'); colon != std::string::npos) user.resize(colon);
    authority = user + authority.substr(at);
  }
  out += authority;
  std::string rest = conninfo.substr(authorityEnd);
  const std::size_t question = rest.find('?');
  if (question == std::string::npos) return out + rest;
  out += rest.substr(0, question);
  std::string query;
  std::size_t pos = question + 1;
  while (pos <= rest.size()) {
    std::size_t amp = rest.find('&', pos);
    if (amp == std::string::npos) amp = rest.size();
    std::string item = rest.substr(pos, amp - pos);
    if (!item.empty() && item.rfind("password=", 0) != 0) query += (query.empty() ? "" : "&") + item;
    pos = amp + 1;
  }
  return query.empty() ? out : out + "?" + query;
}

}  // namespace dispar::streammap::postgres
