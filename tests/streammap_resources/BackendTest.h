// Tests that run once per resource-database backend: TEST_P on a BackendTest fixture, instantiated with
// DISPAR_INSTANTIATE_BACKENDS, run as .../Sqlite and .../Postgres.
#ifndef STREAMMAP_RESOURCES_BACKEND_TEST_H
#define STREAMMAP_RESOURCES_BACKEND_TEST_H

#include "PostgresServer.h"
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <string>

namespace dispar::streammap::test {

enum class Backend { Sqlite, Postgres };

inline std::string backendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::Sqlite ? "Sqlite" : "Postgres";
}

class BackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  /// A fresh, empty database: the file `name` in a temporary directory, or a new PostgreSQL database
  /// on the test server (started on first use; a server that cannot start fails the test).
  std::string freshDatabase(const std::string& name = "r.db") {
    if (GetParam() == Backend::Sqlite) {
      location_ = dir.file(name);
    } else {
      location_ = PostgresServer::instance().createDatabase();
      database_ = location_.substr(location_.find("@/") + 2, location_.find('?') - location_.find("@/") - 2);
    }
    return location_;
  }

  /// Runs SQL on the last fresh database through the backend's own client library, independently
  /// of the code under test.
  void rawExec(const std::string& sql);

  TempDir dir;

 private:
  std::string location_, database_;
};

#define DISPAR_INSTANTIATE_BACKENDS(Suite)                                                                             \
  INSTANTIATE_TEST_SUITE_P(                                                                                            \
      Backend, Suite,                                                                                                  \
      ::testing::Values(::dispar::streammap::test::Backend::Sqlite, ::dispar::streammap::test::Backend::Postgres),     \
      ::dispar::streammap::test::backendName)

}  // namespace dispar::streammap::test

#endif
