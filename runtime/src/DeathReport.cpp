#include "DeathReport.h"

#include "dispar_lang/RankDeath.h"

#include <dispar/dispar.h>

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace dispar::rt {

namespace {

// Written once before the handlers are installed, read only by them.
char rankText[16];         // "3"
char instancesText[2048];  // "; the rank ran vnode 'a' (replica 0), ..."
struct sigaction previous[65];
thread_local const char* runningInstance = nullptr;

/// Appends `text` to buf[0..size) at `length`, truncating at the end of the buffer.
void append(char* buf, std::size_t size, std::size_t& length, const char* text) {
  for (; *text != '\0' && length + 1 < size; ++text) buf[length++] = *text;
}

void appendNumber(char* buf, std::size_t size, std::size_t& length, int value) {
  char digits[16];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0 && n < 15);
  while (n > 0 && length + 1 < size) buf[length++] = digits[--n];
}

bool isFault(int signal) { return signal == SIGSEGV || signal == SIGBUS || signal == SIGFPE || signal == SIGILL; }

void onSignal(int signal, siginfo_t*, void*) {
  // Async-signal-safe only: the line is assembled in a local buffer and written with one write(2).
  char line[2400];
  std::size_t length = 0;
  append(line, sizeof line, length, lang::kRankDeathPrefix.data());
  append(line, sizeof line, length, rankText);
  append(line, sizeof line, length, lang::kRankDeathSignal.data());
  appendNumber(line, sizeof line, length, signal);
  if (const char* name = lang::signalName(signal)) {
    append(line, sizeof line, length, " (");
    append(line, sizeof line, length, name);
    append(line, sizeof line, length, ")");
  }
  if (runningInstance != nullptr) {
    append(line, sizeof line, length, " in ");
    append(line, sizeof line, length, runningInstance);
  }
  append(line, sizeof line, length, instancesText);
  line[length++] = '\n';
  for (std::size_t written = 0; written < length;) {
    const ssize_t n = ::write(STDERR_FILENO, line + written, length - written);
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  // Then what would have happened without us: the previous handler (the MPI library's backtrace), or the
  // default action. A fault returns and faults again into it; anything else is raised again, and
  // delivered when this handler returns.
  // (The signal is blocked while this handler runs, so the raised one waits for its return.)
  sigaction(signal, &previous[signal], nullptr);
  if (!isFault(signal)) raise(signal);
}

int recordedRank = -1;  // this rank's number once its record is written

/// Writes `text` to `path` whole: under another name, then renamed; best effort.
void writeWhole(const std::string& path, const std::string& text) {
  const std::string partial = path + ".partial";
  std::FILE* file = std::fopen(partial.c_str(), "w");
  if (file == nullptr) return;
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  if (std::fclose(file) != 0 || !written || std::rename(partial.c_str(), path.c_str()) != 0)
    std::remove(partial.c_str());
}

/// This rank's record in the folder `streammap run` named (dispar_lang/RankDeath.h); best effort: a node
/// that cannot see the folder writes none.
void recordRank(int rank, const std::string& instances) {
  const char* folder = std::getenv(lang::kRankRegistryVariable);
  if (folder == nullptr || *folder == '\0') return;
  recordedRank = rank;
  lang::RankRecord record;
  record.rank = rank;
  record.pid = static_cast<long>(::getpid());
  record.host = node_name();
  for (char& c : record.host)
    if (c == ' ' || c == '\n') c = '_';
  record.instances = instances;
  writeWhole(std::string(folder) + "/" + lang::rankRecordFileName(rank), lang::formatRankRecord(record));
}

}  // namespace

void recordRankEnd(bool aborted, int status) {
  const char* folder = std::getenv(lang::kRankRegistryVariable);
  if (recordedRank < 0 || folder == nullptr || *folder == '\0') return;
  writeWhole(std::string(folder) + "/" + lang::rankEndFileName(recordedRank), lang::formatRankEnd(aborted, status));
}

void installDeathReport(int rank, const std::string& instances) {
  recordRank(rank, instances);
  std::size_t length = 0;
  appendNumber(rankText, sizeof rankText, length, rank);
  rankText[length] = '\0';
  length = 0;
  append(instancesText, sizeof instancesText, length, "; the rank ran ");
  append(instancesText, sizeof instancesText, length, instances.c_str());
  instancesText[length] = '\0';
  for (const lang::SignalName& s : lang::kReportedSignals) {
    if (s.number == SIGKILL) continue;  // cannot be caught; named by `streammap run` from the launcher
    struct sigaction old{};
    if (sigaction(s.number, nullptr, &old) != 0) continue;
    // A signal ignored on purpose (nohup) stays ignored.
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;
    previous[s.number] = old;
    struct sigaction action{};
    action.sa_sigaction = &onSignal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(s.number, &action, nullptr);
  }
}

RunningInstance::RunningInstance(const std::string& who) {
  runningInstance = who.c_str();
  constexpr std::size_t kStackBytes = 64 * 1024;
  stack_.reset(new char[kStackBytes]);
  stack_t stack{};
  stack.ss_sp = stack_.get();
  stack.ss_size = kStackBytes;
  stackInstalled_ = sigaltstack(&stack, nullptr) == 0;
}

RunningInstance::~RunningInstance() {
  runningInstance = nullptr;
  if (stackInstalled_) {
    stack_t disable{};
    disable.ss_flags = SS_DISABLE;
    sigaltstack(&disable, nullptr);
  }
}

}  // namespace dispar::rt
