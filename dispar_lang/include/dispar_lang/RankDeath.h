// The line a DISPAR rank prints on standard error when a signal kills it, e.g.
//   dispar: rank 3 killed by signal 11 (SIGSEGV) in vnode 'stage[2]' (replica 0); the rank ran vnode 'stage[2]'
//   (replica 0), vnode 'stage[3]' (replica 0)
// One writer, the runtime's signal handler (async-signal-safe, so it assembles the line by hand from these
// constants), and one reader, `streammap run`, which exits with 128 + the signal as a shell reports a
// command a signal killed (an MPI launcher exits 0, or with the bare signal number).
#ifndef DISPAR_LANG_RANK_DEATH_H
#define DISPAR_LANG_RANK_DEATH_H

#include <charconv>
#include <csignal>
#include <string>
#include <string_view>

namespace dispar::lang {

inline constexpr std::string_view kRankDeathPrefix = "dispar: rank ";
inline constexpr std::string_view kRankDeathSignal = " killed by signal ";

struct SignalName {
  int number;
  const char* name;
};

/// The signals a rank reports: faults in a VNODE body, and the signals that end a job from outside.
inline constexpr SignalName kReportedSignals[] = {{SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
                                                  {SIGILL, "SIGILL"},   {SIGABRT, "SIGABRT"}, {SIGTRAP, "SIGTRAP"},
                                                  {SIGSYS, "SIGSYS"},   {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},
                                                  {SIGHUP, "SIGHUP"},   {SIGQUIT, "SIGQUIT"}, {SIGKILL, "SIGKILL"}};

/// The name of a reported signal ("SIGSEGV"), or nullptr.
constexpr const char* signalName(int number) {
  for (const SignalName& s : kReportedSignals)
    if (s.number == number) return s.name;
  return nullptr;
}

/// The signal a rank-death line names, or 0 when `line` is not one.
constexpr int signalOfRankDeath(std::string_view line) {
  if (line.substr(0, kRankDeathPrefix.size()) != kRankDeathPrefix) return 0;
  std::size_t at = kRankDeathPrefix.size();
  const std::size_t rankStart = at;
  while (at < line.size() && line[at] >= '0' && line[at] <= '9') ++at;
  if (at == rankStart || line.substr(at, kRankDeathSignal.size()) != kRankDeathSignal) return 0;
  at += kRankDeathSignal.size();
  int number = 0;
  const std::size_t numberStart = at;
  while (at < line.size() && line[at] >= '0' && line[at] <= '9' && number < 1000)
    number = number * 10 + (line[at++] - '0');
  return at == numberStart || number >= 1000 ? 0 : number;
}

/// The rank a rank-death line names, or -1 when `line` is not one.
constexpr int rankOfRankDeath(std::string_view line) {
  if (signalOfRankDeath(line) == 0) return -1;
  int rank = 0;
  for (std::size_t at = kRankDeathPrefix.size(); at < line.size() && line[at] >= '0' && line[at] <= '9'; ++at) {
    if (rank > 100000000) return -1;
    rank = rank * 10 + (line[at] - '0');
  }
  return rank;
}

/// The line for a rank whose death the runtime could not report itself (SIGKILL cannot be caught):
/// written by `streammap run` from what the launcher said, in the handler's shape.
inline std::string formatRankDeath(int rank, int signal, std::string_view instances) {
  std::string line =
      std::string(kRankDeathPrefix) + std::to_string(rank) + std::string(kRankDeathSignal) + std::to_string(signal);
  if (const char* name = signalName(signal)) line += std::string(" (") + name + ")";
  if (!instances.empty()) line += "; the rank ran " + std::string(instances);
  return line;
}

// The rank registry: `streammap run` names a fresh folder in this variable, and each rank writes there, at
// start, a file "rank-R" of one line "PID HOST INSTANCES" (HOST as the launcher knows the node, INSTANCES
// as in the death line). A rank killed by SIGKILL prints nothing; the launcher then names a process id
// (hydra), or a rank (srun, mpirun), and this record turns either into the rank's instances.
inline constexpr const char* kRankRegistryVariable = "DISPAR_RANK_REGISTRY";

struct RankRecord {
  int rank = -1;
  long pid = -1;
  std::string host;
  std::string instances;
};

inline constexpr std::string_view kRankRecordPrefix = "rank-";

inline std::string rankRecordFileName(int rank) { return std::string(kRankRecordPrefix) + std::to_string(rank); }

inline std::string formatRankRecord(const RankRecord& record) {
  return std::to_string(record.pid) + " " + record.host + " " + record.instances + "\n";
}

// How a rank ended, beside its record: a file "rank-R.end" holding kRankEnded and the status its run
// returned ("ended 0"), or kRankAborted (it ended the job: a VNODE failed, a stall, an unreachable rank).
// A rank with a record and neither a death line nor an end mark ended without a word: where every rank of
// a node did so and nothing else explains the job's end, `streammap run` asks whether the node still
// answers (streammap/LauncherDeath.h, lostNodes). Where every rank ended with status 0 and the launcher
// failed after, the run's work is complete (streammap/LauncherDeath.h, everyRankEndedWell).
inline constexpr std::string_view kRankEndSuffix = ".end";
inline constexpr std::string_view kRankEnded = "ended";
inline constexpr std::string_view kRankAborted = "aborted";

inline std::string rankEndFileName(int rank) { return rankRecordFileName(rank) + std::string(kRankEndSuffix); }

/// An end mark's text.
inline std::string formatRankEnd(bool aborted, int status) {
  return aborted ? std::string(kRankAborted) + "\n" : std::string(kRankEnded) + " " + std::to_string(status) + "\n";
}

/// An end mark as read: how (kRankEnded, kRankAborted; empty: no mark) and, for kRankEnded, the status
/// (-1 where the mark names none).
struct RankEnd {
  std::string how;
  int status = -1;
};
inline RankEnd parseRankEnd(std::string_view text) {
  RankEnd end;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  const std::size_t space = text.find(' ');
  end.how = std::string(text.substr(0, space));
  if (space == std::string_view::npos || end.how != kRankEnded) return end;
  const std::string_view digits = text.substr(space + 1);
  int status = -1;
  const auto [past, error] = std::from_chars(digits.data(), digits.data() + digits.size(), status);
  if (error == std::errc() && past == digits.data() + digits.size() && status >= 0) end.status = status;
  return end;
}

/// Reads one record (the file of rank `rank`); false when `text` is not one.
inline bool parseRankRecord(int rank, std::string_view text, RankRecord& record) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  const std::size_t pidEnd = text.find(' ');
  if (pidEnd == 0 || pidEnd == std::string_view::npos || pidEnd > 18) return false;
  long pid = 0;
  for (const char c : text.substr(0, pidEnd)) {
    if (c < '0' || c > '9') return false;
    pid = pid * 10 + (c - '0');
  }
  const std::size_t hostEnd = text.find(' ', pidEnd + 1);
  if (hostEnd == std::string_view::npos || hostEnd == pidEnd + 1) return false;
  record.rank = rank;
  record.pid = pid;
  record.host = std::string(text.substr(pidEnd + 1, hostEnd - pidEnd - 1));
  record.instances = std::string(text.substr(hostEnd + 1));
  return text.find('\n') == std::string_view::npos;
}

}  // namespace dispar::lang

#endif
