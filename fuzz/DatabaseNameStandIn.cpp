// The map writer's one call into the resource database: hiding a PostgreSQL password. The real one
// (ResourceDb.cpp) would pull SQLite and libpq into the fuzz build; reading never calls it, and the
// round trip the map fuzzer checks holds with the identity as well.
#include "streammap/ResourceDb.h"

namespace dispar::streammap {

std::string displayDatabaseName(const std::string& location) { return location; }

}  // namespace dispar::streammap
