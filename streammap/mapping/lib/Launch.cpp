#include "streammap/Launch.h"

#include "dispar_lang/RankDeath.h"
#include "streammap/FileDescriptor.h"
#include "streammap/SignalReader.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace dispar::streammap {

namespace {

int exitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

void writeAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

/// The launcher's standard error, passed on to ours as it comes and read line by line for the first rank
/// a signal killed (dispar_lang/RankDeath.h).
class StderrWatch {
 public:
  void take(const char* data, std::size_t size) {
    writeAll(STDERR_FILENO, data, size);
    for (std::size_t i = 0; i < size; ++i) {
      if (data[i] != '\n') {
        if (line_.size() < 4096) line_ += data[i];
        continue;
      }
      if (rankSignal_ == 0) rankSignal_ = lang::signalOfRankDeath(line_);
      line_.clear();
    }
  }
  int rankSignal() const { return rankSignal_; }

 private:
  std::string line_;
  int rankSignal_ = 0;
};

/// The child side of the launch, between fork and exec: async-signal-safe calls only. Errors go back over
/// `report` (close-on-exec: a successful exec closes it empty).
[[noreturn]] void becomeLauncher(char* const* argv, char* const* envp, const sigset_t& mask, pid_t supervisor,
                                 const char* stderrPath, int stderrPipe, int report) {
  // The job must not outlive `streammap run`, even one killed with SIGKILL: the launcher gets SIGTERM
  // then, which it passes on to every rank as it does a ^C. (Checked against a supervisor that died
  // before the request took effect.)
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != supervisor) ::_exit(127);
  ::sigprocmask(SIG_SETMASK, &mask, nullptr);
  if (stderrPath != nullptr) {
    const int fd = ::open(stderrPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ::dup2(fd, STDERR_FILENO) < 0) {
      const int e = errno;
      writeAll(report, reinterpret_cast<const char*>(&e), sizeof e);
      ::_exit(127);
    }
  } else if (stderrPipe >= 0 && ::dup2(stderrPipe, STDERR_FILENO) < 0) {
    ::_exit(127);
  }
  environ = const_cast<char**>(envp);
  ::execvp(argv[0], argv);
  const int e = errno;
  writeAll(report, reinterpret_cast<const char*>(&e), sizeof e);
  ::_exit(127);
}

}  // namespace

int runLauncher(const std::vector<std::string>& argv, const std::vector<std::string>& environment, std::string& error,
                const std::string& stderrPath, int* rankSignal) {
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
  int pipeEnds[2];
  if (::pipe2(pipeEnds, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return -1;
  }
  FileDescriptor reportRead(pipeEnds[0]), reportWrite(pipeEnds[1]);
  FileDescriptor stderrRead, stderrWrite;
  if (stderrPath.empty()) {
    if (::pipe2(pipeEnds, O_CLOEXEC) != 0) {
      error = std::string("pipe: ") + std::strerror(errno);
      return -1;
    }
    stderrRead = FileDescriptor(pipeEnds[0]);
    stderrWrite = FileDescriptor(pipeEnds[1]);
  }
  // Dispositions are inherited as exec does: a signal ignored on purpose (`nohup` ignores SIGHUP) stays
  // ignored in the launcher too, and, being ignored, never reaches our signalfd to be forwarded.
  const pid_t supervisor = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    error = "cannot start " + argv[0] + ": fork: " + std::strerror(errno);
    return -1;
  }
  if (pid == 0)
    becomeLauncher(cargv.data(), cenv.data(), signals.previousMask(), supervisor,
                   stderrPath.empty() ? nullptr : stderrPath.c_str(), stderrWrite.get(), reportWrite.get());
  reportWrite = FileDescriptor();
  stderrWrite = FileDescriptor();
  int childError = 0;
  ssize_t n;
  do n = ::read(reportRead.get(), &childError, sizeof childError);
  while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof childError)) {
    ::waitpid(pid, nullptr, 0);
    error = "cannot start " + argv[0] + ": " + std::strerror(childError);
    return -1;
  }

  StderrWatch watch;
  int forwarded = 0;  // the last signal passed on
  int status = 0;
  bool exited = false;
  while (!exited || stderrRead.get() >= 0) {
    if (!exited) {
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid) exited = true;
      if (done < 0 && errno != EINTR) {
        error = std::string("waitpid: ") + std::strerror(errno);
        return -1;
      }
    }
    pollfd fds[2] = {{signals.fd(), POLLIN, 0}, {stderrRead.get(), POLLIN, 0}};
    // Once the launcher is gone, what its children still hold open is read until it ends or goes quiet.
    const int ready = ::poll(fds, stderrRead.get() >= 0 ? 2 : 1, exited ? 1000 : -1);
    if (ready == 0 && exited) break;
    if (fds[1].revents != 0) {
      char buffer[4096];
      const ssize_t got = ::read(stderrRead.get(), buffer, sizeof buffer);
      if (got > 0)
        watch.take(buffer, static_cast<std::size_t>(got));
      else if (got == 0 || errno != EINTR)
        stderrRead = FileDescriptor();
    }
    if (fds[0].revents != 0) {
      const int signal = signals.wait(0);
      if (signal == 0 || signal == SIGCHLD || exited) continue;  // look at the launcher again
      forwarded = signal;
      ::kill(pid, forwarded);
    }
  }
  if (rankSignal != nullptr) *rankSignal = watch.rankSignal();
  // After an interrupt the launcher's own status says little (hydra exits 0, or 15 on SIGTERM): the
  // job did not run to its end, and the status says which signal stopped it, as a shell would. So it
  // does when a rank reported a signal that killed it (hydra exits 0 when its ranks got SIGTERM from
  // elsewhere, and with the bare signal number when one faulted).
  if (forwarded != 0) return 128 + forwarded;
  if (watch.rankSignal() != 0) return 128 + watch.rankSignal();
  return exitStatus(status);
}

}  // namespace dispar::streammap
