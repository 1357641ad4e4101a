// Helpers shared by the streammap_resources tests.
#ifndef STREAMMAP_RESOURCES_TEST_SUPPORT_H
#define STREAMMAP_RESOURCES_TEST_SUPPORT_H

#include "streammap/Cluster.h"

#include <string>

namespace dispar::streammap::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// Runs a shell command, returns its standard output (and sets `status` to its exit status).
std::string runCommand(const std::string& command, int* status = nullptr);

std::string readFile(const std::string& path);
void writeFile(const std::string& path, const std::string& text);

/// A described node with `gpus` made-up GPUs.
NodeInfo makeNode(const std::string& host, int cores, int gpus);

/// Runs SQL on a raw SQLite connection to the file `path`, independent of the code under test; a
/// failure fails the calling test.
void rawSqliteExec(const std::string& path, const std::string& sql);

}  // namespace dispar::streammap::test

#endif
