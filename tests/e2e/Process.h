// Runs a command (argument vector, no shell) and captures its exit status and output.
#ifndef DISPAR_TESTS_E2E_PROCESS_H
#define DISPAR_TESTS_E2E_PROCESS_H

#include <string>
#include <vector>

namespace dispar::testing {

struct ProcessResult {
  int status = -1;     // exit status; 128 + signal when killed
  std::string output;  // stdout and stderr, interleaved
};

/// Runs `argv` in `workingDir` with extra environment `env` ("NAME=value"), killing it after
/// `timeoutSeconds` (status then 124).
ProcessResult runProcess(const std::vector<std::string>& argv, const std::string& workingDir = ".",
                         const std::vector<std::string>& env = {}, int timeoutSeconds = 120);

/// A fresh directory under the system temporary directory, removed with its contents on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  void write(const std::string& name, const std::string& contents) const;

 private:
  std::string path_;
};

std::string readFile(const std::string& path);
bool fileExists(const std::string& path);

}  // namespace dispar::testing

#endif
