#include "streammap/Daemon.h"

#include "dispar_lang/OutputTarget.h"

#include "streammap/AtomicFiles.h"
#include "streammap/CommandLine.h"
#include "streammap/Discovery.h"
#include "streammap/FileDescriptor.h"
#include "streammap/ResourceDb.h"
#include "streammap/SignalReader.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>

namespace dispar::streammap {

namespace {

void log(const std::string& message) {
  std::fprintf(stderr, "streammap daemon[%d]: %s\n", static_cast<int>(getpid()), message.c_str());
  std::fflush(stderr);
}

// One daemon per node and database (and per pid file): an flock held for the daemon's lifetime (the
// kernel drops it when the process dies, however it dies). The file holds the owner's pid, for the
// refusal message, which says what the other daemon holds (`holding`).
class InstanceLock {
 public:
  bool acquire(const std::string& path, const std::string& holding, std::string& error) {
    fd_ = std::make_unique<FileDescriptor>(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (fd_->get() < 0) {
      error = path + ": cannot open lock file: " + std::strerror(errno);
      return false;
    }
    if (::flock(fd_->get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK) {
        error = path + ": cannot lock: " + std::strerror(errno);
        return false;
      }
      char buf[32] = {};
      ssize_t n = ::pread(fd_->get(), buf, sizeof buf - 1, 0);
      std::string pid = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "unknown";
      while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
      error = "another daemon (pid " + pid + ") already " + holding + " (lock " + path + ")";
      return false;
    }
    std::string pid = std::to_string(getpid()) + "\n";
    if (::ftruncate(fd_->get(), 0) != 0 ||
        ::pwrite(fd_->get(), pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
      error = path + ": cannot write pid: " + std::strerror(errno);
      return false;
    }
    return true;
  }

 private:
  std::unique_ptr<FileDescriptor> fd_;
};

/// A pid file's text: digits, then a newline.
bool isPidText(const std::string& text) {
  return text.size() > 1 && text.back() == '\n' && text.find_first_not_of("0123456789") == text.size() - 1;
}

// The --pidfile, written atomically and removed on exit. Its own lock (PATH.lock) keeps a second daemon
// given the same pid file (for another node) from overwriting it, and from removing it on exit while the
// first one still runs.
class PidFile {
 public:
  bool write(const std::string& path, std::string& error) {
    if (!lock_.acquire(path + ".lock", "owns the pid file " + path, error)) return false;
    // Holding the lock, an existing pid file is a stale one (its daemon is gone): replaced. A file that
    // is not a pid file (a user's file, given by mistake) is never overwritten, nor later removed; a
    // device or FIFO is refused by writeFileAtomically.
    lang::OutputTarget target;
    if (!lang::resolveOutputTarget(path, target, error)) return false;  // never read a FIFO or a device
    std::string text;
    if (target.exists && readFile(target.path, text, error) && !isPidText(text)) {
      error = path + ": exists and is not a pid file; not replaced (name another --pidfile)";
      return false;
    }
    error.clear();
    if (!writeFileAtomically(path, std::to_string(getpid()) + "\n", error)) return false;
    path_ = path;
    return true;
  }
  ~PidFile() {
    // Removed only while it is still the regular file holding our pid: ours, under our lock.
    struct stat st{};
    std::string text, error;
    if (!path_.empty() && ::lstat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode) && readFile(path_, text, error) &&
        text == std::to_string(getpid()) + "\n")
      ::unlink(path_.c_str());
  }

 private:
  InstanceLock lock_;
  std::string path_;
};

}  // namespace

std::string daemonLockPath(const std::string& dbPath, const std::string& host) {
  if (!isDatabaseUrl(dbPath)) return dbPath + ".daemon." + host + ".lock";
  // FNV-1a: a stable name for the database that keeps the password out of the file system.
  std::uint64_t hash = 14695981039346656037ull;
  for (char c : displayDatabaseName(dbPath)) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/streammap-daemon." + hex + "." + host + ".lock";
}

int runDaemon(const DaemonOptions& options) {
  const std::string host = options.probe.hostName.empty() ? localHostName() : options.probe.hostName;
  const int ttl = options.ttlSeconds > 0 ? options.ttlSeconds
                                         : std::max(1, static_cast<int>(std::ceil(3 * options.intervalSeconds)));
  const int waitMs = std::max(1, static_cast<int>(std::lround(options.intervalSeconds * 1000)));
  const std::string dbName = displayDatabaseName(options.dbPath);
  ProbeOptions probeOptions = options.probe;
  probeOptions.hostName = host;

  std::string error;
  std::unique_ptr<ResourceDb> db = ResourceDb::open(options.dbPath, ResourceDb::OpenMode::CreateIfMissing, error);
  if (!db) return reportError(error);
  InstanceLock lock;
  if (!lock.acquire(daemonLockPath(options.dbPath, host), "keeps this node's record", error)) return reportError(error);
  PidFile pidFile;
  if (!options.pidFile.empty() && !pidFile.write(options.pidFile, error)) return reportError(error);
  // SIGTERM and SIGINT read from a signalfd: the wait between ticks ends at once.
  SignalReader signals({SIGTERM, SIGINT});
  if (!signals.error().empty()) return reportError(signals.error());

  char interval[32];
  std::snprintf(interval, sizeof interval, "%g", options.intervalSeconds);
  std::string probeText;
  if (options.probeIntervalSeconds > 0) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", options.probeIntervalSeconds);
    probeText = std::string(", probe every ") + text + " s";
  }
  log("keeping " + host + " in " + dbName + " (interval " + interval + " s" + probeText + ", ttl " +
      std::to_string(ttl) + " s)");
  const double probeInterval =
      options.probeIntervalSeconds > 0 ? options.probeIntervalSeconds : options.intervalSeconds;
  using Clock = std::chrono::steady_clock;
  Clock::time_point lastProbe{};
  bool first = true;
  bool recorded = false;  // the record is written: heartbeats alone keep it alive until the next probe
  for (;;) {
    bool reconnected = false;
    const bool connected = db->reconnectIfLost(reconnected, error);
    if (reconnected) log("reconnected to " + dbName);
    const bool probeDue = !recorded || Clock::now() - lastProbe >= std::chrono::duration<double>(probeInterval);
    if (!connected) {
      // The server is still away: keep running, the next interval tries again.
      log("warning: " + error);
      recorded = false;
    } else if (!probeDue) {
      if (!db->heartbeat(host, std::time(nullptr), error)) {
        // The record went (an import with --replace) or the update failed: probe and record next time.
        log("warning: " + error);
        recorded = false;
      }
    } else {
      const ProbeResult probe = probeLocalNode(probeOptions);
      lastProbe = Clock::now();
      NodeChanges changes;
      recorded = db->recordNode(probe.node, ttl, &changes, error) &&
                 db->heartbeat(host, probe.node.lastHeartbeat.value_or(std::time(nullptr)), error);
      if (!recorded) {
        // Transient (a full disk, a server that went away): keep running, the next interval retries.
        log("warning: " + error);
      } else if (first) {
        log((changes.isNew ? "recorded " : "refreshed ") + summarizeNode(probe.node));
        for (const std::string& w : probe.warnings) log("warning: " + w);
        first = false;
      } else {
        for (const std::string& change : changes.descriptions) log(host + " changed: " + change);
        if (!changes.descriptions.empty())
          for (const std::string& w : probe.warnings) log("warning: " + w);
      }
    }
    if (const int signal = signals.wait(waitMs)) {
      log(std::string("received ") + (signal == SIGTERM ? "SIGTERM" : "SIGINT") + ", stopping");
      return 0;
    }
  }
}

}  // namespace dispar::streammap
