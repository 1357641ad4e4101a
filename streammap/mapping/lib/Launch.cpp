#include "streammap/Launch.h"

#include "streammap/SignalReader.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dispar::streammap {

namespace {

/// posix_spawn attributes: the child starts with the caller's original mask. Dispositions are inherited
/// as exec does: a signal ignored on purpose (`nohup` ignores SIGHUP) stays ignored in the launcher too,
/// and, being ignored, never reaches our signalfd to be forwarded.
class SpawnAttributes {
 public:
  explicit SpawnAttributes(const sigset_t& mask) {
    posix_spawnattr_init(&attr_);
    posix_spawnattr_setsigmask(&attr_, &mask);
    posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETSIGMASK);
  }
  ~SpawnAttributes() { posix_spawnattr_destroy(&attr_); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  const posix_spawnattr_t* get() const { return &attr_; }

 private:
  posix_spawnattr_t attr_;
};

int exitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

/// posix_spawn file actions (RAII): at most a redirect of standard error.
class SpawnFileActions {
 public:
  SpawnFileActions() { posix_spawn_file_actions_init(&actions_); }
  ~SpawnFileActions() { posix_spawn_file_actions_destroy(&actions_); }
  SpawnFileActions(const SpawnFileActions&) = delete;
  SpawnFileActions& operator=(const SpawnFileActions&) = delete;
  void redirectStderr(const std::string& path) {
    posix_spawn_file_actions_addopen(&actions_, STDERR_FILENO, path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  const posix_spawn_file_actions_t* get() const { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

}  // namespace

int runLauncher(const std::vector<std::string>& argv, const std::vector<std::string>& environment, std::string& error,
                const std::string& stderrPath) {
  std::vector<char*> cargv, cenv;
  for (const std::string& s : argv) cargv.push_back(const_cast<char*>(s.c_str()));
  cargv.push_back(nullptr);
  for (const std::string& s : environment) cenv.push_back(const_cast<char*>(s.c_str()));
  cenv.push_back(nullptr);

  // The forwarded signals and SIGCHLD (the launcher ended) arrive here instead of interrupting us.
  SignalReader signals({SIGINT, SIGTERM, SIGHUP, SIGCHLD});
  if (!signals.error().empty()) {
    error = signals.error();
    return -1;
  }
  const SpawnAttributes attributes(signals.previousMask());
  pid_t pid = 0;
  SpawnFileActions files;
  if (!stderrPath.empty()) files.redirectStderr(stderrPath);
  if (const int rc = ::posix_spawnp(&pid, cargv[0], files.get(), attributes.get(), cargv.data(), cenv.data());
      rc != 0) {
    error = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return -1;
  }
  int forwarded = 0;  // the last signal passed on
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    // After an interrupt the launcher's own status says little (hydra exits 0, or 15 on SIGTERM): the
    // job did not run to its end, and the status says which signal stopped it, as a shell would.
    if (done == pid) return forwarded != 0 ? 128 + forwarded : exitStatus(status);
    if (done < 0 && errno != EINTR) {
      error = std::string("waitpid: ") + std::strerror(errno);
      return -1;
    }
    const int signal = signals.wait(-1);
    if (signal == 0 || signal == SIGCHLD) continue;  // look at the launcher again
    forwarded = signal;
    ::kill(pid, forwarded);
  }
}

}  // namespace dispar::streammap
