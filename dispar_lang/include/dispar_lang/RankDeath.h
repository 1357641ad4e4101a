// The line a DISPAR rank prints on standard error when a signal kills it, e.g.
//   dispar: rank 3 killed by signal 11 (SIGSEGV) in vnode 'stage[2]' (replica 0); the rank ran vnode 'stage[2]'
//   (replica 0), vnode 'stage[3]' (replica 0)
// One writer, the runtime's signal handler (async-signal-safe, so it assembles the line by hand from these
// constants), and one reader, `streammap run`, which exits with 128 + the signal as a shell reports a
// command a signal killed (an MPI launcher exits 0, or with the bare signal number).
#ifndef DISPAR_LANG_RANK_DEATH_H
#define DISPAR_LANG_RANK_DEATH_H

#include <csignal>
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

}  // namespace dispar::lang

#endif
