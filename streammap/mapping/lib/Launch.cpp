#include "streammap/Launch.h"

#include "streammap/FileDescriptor.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <spawn.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dispar::streammap {

namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};

/// Blocks the forwarded signals and SIGCHLD for this scope (they are read from a signalfd instead) and
/// restores the previous mask at the end.
class BlockedSignals {
 public:
  BlockedSignals() {
    sigemptyset(&set_);
    for (int s : kForwarded) sigaddset(&set_, s);
    sigaddset(&set_, SIGCHLD);
    ok_ = ::pthread_sigmask(SIG_BLOCK, &set_, &previous_) == 0;
  }
  ~BlockedSignals() {
    if (ok_) ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  BlockedSignals(const BlockedSignals&) = delete;
  BlockedSignals& operator=(const BlockedSignals&) = delete;
  bool ok() const { return ok_; }
  const sigset_t& set() const { return set_; }
  const sigset_t& previous() const { return previous_; }

 private:
  sigset_t set_{}, previous_{};
  bool ok_ = false;
};

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

}  // namespace

int runLauncher(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
                std::string& error) {
  std::vector<char*> cargv, cenv;
  for (const std::string& s : argv) cargv.push_back(const_cast<char*>(s.c_str()));
  cargv.push_back(nullptr);
  for (const std::string& s : environment) cenv.push_back(const_cast<char*>(s.c_str()));
  cenv.push_back(nullptr);

  const BlockedSignals blocked;
  if (!blocked.ok()) {
    error = std::string("cannot block signals: ") + std::strerror(errno);
    return -1;
  }
  const FileDescriptor signals(::signalfd(-1, &blocked.set(), SFD_CLOEXEC));
  if (signals.get() < 0) {
    error = std::string("signalfd: ") + std::strerror(errno);
    return -1;
  }
  const SpawnAttributes attributes(blocked.previous());
  pid_t pid = 0;
  if (const int rc = ::posix_spawnp(&pid, cargv[0], nullptr, attributes.get(), cargv.data(), cenv.data()); rc != 0) {
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
    signalfd_siginfo info{};
    const ssize_t got = ::read(signals.get(), &info, sizeof info);
    if (got != static_cast<ssize_t>(sizeof info)) continue;  // EINTR: look again
    if (static_cast<int>(info.ssi_signo) == SIGCHLD) continue;
    forwarded = static_cast<int>(info.ssi_signo);
    ::kill(pid, forwarded);
  }
}

}  // namespace dispar::streammap
