#include "streammap/Launch.h"

#include "dispar_lang/RankDeath.h"
#include "streammap/FileDescriptor.h"
#include "streammap/SignalReader.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <thread>
#include <utility>

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

/// The launcher's standard output and error, passed on to ours as they come and read line by line for the
/// first rank a signal killed, as the rank said (dispar_lang/RankDeath.h, on standard error) and as the
/// launcher did (LauncherDeath.h: hydra prints its banner on standard output, srun and mpirun on error).
class OutputWatch {
 public:
  /// `stream`: STDOUT_FILENO or STDERR_FILENO, where the bytes go.
  void take(int stream, const char* data, std::size_t size) {
    writeAll(stream, data, size);
    std::string& line = lines_[stream == STDOUT_FILENO ? 0 : 1];
    for (std::size_t i = 0; i < size; ++i) {
      if (data[i] != '\n') {
        if (line.size() < 4096) line += data[i];
        continue;
      }
      if (stream == STDERR_FILENO) {
        if (deaths_.rankSignal == 0) deaths_.rankSignal = lang::signalOfRankDeath(line);
        if (const int rank = lang::rankOfRankDeath(line); rank >= 0) deaths_.reportedRanks.insert(rank);
      }
      launcher_.line(line);
      line.clear();
    }
  }
  LaunchDeaths deaths() const {
    LaunchDeaths deaths = deaths_;
    deaths.launcherDeath = launcher_.first();
    return deaths;
  }

 private:
  std::string lines_[2];
  LaunchDeaths deaths_;
  LauncherDeathReader launcher_;
};

/// The child side of the launch, between fork and exec: async-signal-safe calls only. Errors go back over
/// `report` (close-on-exec: a successful exec closes it empty).
[[noreturn]] void becomeLauncher(char* const* argv, char* const* envp, const sigset_t& mask, pid_t supervisor,
                                 const char* stderrPath, int stdoutPipe, int stderrPipe, int report) {
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
  } else if ((stderrPipe >= 0 && ::dup2(stderrPipe, STDERR_FILENO) < 0) ||
             (stdoutPipe >= 0 && ::dup2(stdoutPipe, STDOUT_FILENO) < 0)) {
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
                const std::string& stderrPath, LaunchDeaths* deaths, const std::string& registry) {
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
  FileDescriptor stdoutRead, stdoutWrite, stderrRead, stderrWrite;
  if (stderrPath.empty()) {
    for (auto [read, write] : {std::pair{&stdoutRead, &stdoutWrite}, std::pair{&stderrRead, &stderrWrite}}) {
      if (::pipe2(pipeEnds, O_CLOEXEC) != 0) {
        error = std::string("pipe: ") + std::strerror(errno);
        return -1;
      }
      *read = FileDescriptor(pipeEnds[0]);
      *write = FileDescriptor(pipeEnds[1]);
    }
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
                   stderrPath.empty() ? nullptr : stderrPath.c_str(), stdoutWrite.get(), stderrWrite.get(),
                   reportWrite.get());
  reportWrite = FileDescriptor();
  stdoutWrite = FileDescriptor();
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

  OutputWatch watch;
  int forwarded = 0;  // the last signal passed on
  int status = 0;
  bool exited = false;
  // When the job was told to end, and by what ("rank 3 ended the job", "SIGTERM was passed on").
  std::optional<std::chrono::steady_clock::time_point> toldToEnd;
  std::string toldBy;
  bool killedLauncher = false;
  const auto tellEnd = [&](std::string by) {
    if (toldToEnd) return;
    toldToEnd = std::chrono::steady_clock::now();
    toldBy = std::move(by);
  };
  FileDescriptor* outputs[2] = {&stdoutRead, &stderrRead};
  const int destinations[2] = {STDOUT_FILENO, STDERR_FILENO};
  const auto outputsOpen = [&] { return stdoutRead.get() >= 0 || stderrRead.get() >= 0; };
  while (!exited || outputsOpen()) {
    if (!exited) {
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid) exited = true;
      if (done < 0 && errno != EINTR) {
        error = std::string("waitpid: ") + std::strerror(errno);
        return -1;
      }
      // Nothing left to read (the outputs go to a file, or have ended): no quiet second to wait for.
      if (exited && !outputsOpen()) break;
    }
    // (poll skips the closed outputs, whose descriptors are -1.)
    pollfd fds[3] = {{signals.fd(), POLLIN, 0}, {stdoutRead.get(), POLLIN, 0}, {stderrRead.get(), POLLIN, 0}};
    // Once the launcher is gone, what its children still hold open is read until it ends or goes quiet.
    // Before, the registry and the grace period are looked at twice a second.
    const bool watching = !registry.empty() || toldToEnd;
    const int ready = ::poll(fds, 3, exited ? 1000 : watching ? 500 : -1);
    if (ready == 0 && exited) break;
    if (!exited && !toldToEnd)
      if (const std::optional<int> rank = abortingRank(registry))
        tellEnd("rank " + std::to_string(*rank) + " ended the job");
    if (!exited && toldToEnd && !killedLauncher &&
        std::chrono::steady_clock::now() - *toldToEnd >= std::chrono::duration<double>(kLauncherGraceSeconds)) {
      std::fprintf(stderr,
                   "streammap run: %s had not ended %.0f s after %s: killed it (it waits for a node it cannot "
                   "reach, whose processes of this job end on their own)\n",
                   argv[0].c_str(), kLauncherGraceSeconds, toldBy.c_str());
      ::kill(pid, SIGKILL);
      killedLauncher = true;
    }
    for (int stream = 0; stream < 2; ++stream) {
      if (fds[stream + 1].revents == 0) continue;
      char buffer[65536];
      const ssize_t got = ::read(outputs[stream]->get(), buffer, sizeof buffer);
      if (got > 0)
        watch.take(destinations[stream], buffer, static_cast<std::size_t>(got));
      else if (got == 0 || errno != EINTR)
        *outputs[stream] = FileDescriptor();
    }
    if (fds[0].revents != 0) {
      const int signal = signals.wait(0);
      if (signal == 0 || signal == SIGCHLD || exited) continue;  // look at the launcher again
      forwarded = signal;
      ::kill(pid, forwarded);
      const char* name = lang::signalName(signal);
      tellEnd(std::string(name != nullptr ? name : "a signal") + " was passed on to it");
    }
  }
  const LaunchDeaths seen = watch.deaths();
  if (deaths != nullptr) *deaths = seen;
  // After an interrupt the launcher's own status says little (hydra exits 0, or 15 on SIGTERM): the
  // job did not run to its end, and the status says which signal stopped it, as a shell would. So it
  // does when a rank reported a signal that killed it (hydra exits 0 when its ranks got SIGTERM from
  // elsewhere, and with the bare signal number when one faulted), or the launcher did (SIGKILL, which
  // no rank can report: hydra exits 255 then).
  if (forwarded != 0) return 128 + forwarded;
  if (seen.rankSignal != 0) return 128 + seen.rankSignal;
  if (seen.launcherDeath) return 128 + seen.launcherDeath->signal;
  return exitStatus(status);
}

int runQuietly(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
               double timeoutSeconds) {
  std::vector<char*> cargv, cenv;
  for (const std::string& s : argv) cargv.push_back(const_cast<char*>(s.c_str()));
  cargv.push_back(nullptr);
  for (const std::string& s : environment) cenv.push_back(const_cast<char*>(s.c_str()));
  cenv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, STDIN_FILENO);
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
    }
    ::setpgid(0, 0);  // its own group, so that a timeout ends whatever it started too
    environ = cenv.data();
    ::execvp(cargv[0], cargv.data());
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return exitStatus(status);
    if (done < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace dispar::streammap
