// Every death of a rank named (issue 36): a signal that kills a rank, a fault in a VNODE body (SIGSEGV,
// abort()) or a signal from outside (SIGTERM from the launcher), prints one line naming the rank, the
// instance whose thread faulted and every instance the rank ran (dispar_lang/RankDeath.h), before the
// signal's previous action runs: the MPI library's "BAD TERMINATION" banner names a process id only.
#ifndef DISPAR_RT_DEATH_REPORT_H
#define DISPAR_RT_DEATH_REPORT_H

#include <memory>
#include <string>

namespace dispar::rt {

/// Installs the handlers for this rank (after MPI_Init, whose libraries' handlers it then chains to), and
/// records the rank for `streammap run` ($DISPAR_RANK_REGISTRY), which names a rank killed by SIGKILL.
/// `instances`: "vnode 'a' (replica 0), vnode 'b' (replica 0)".
void installDeathReport(int rank, const std::string& instances);

/// Marks in `streammap run`'s registry how this rank ended (dispar_lang/RankDeath.h, "rank-R.end"): its
/// run returned `status`, or it ends the job (`aborted`). Nothing before installDeathReport, or without a
/// registry.
void recordRankEnd(bool aborted, int status = 0);

/// While alive, the calling thread runs instance `who` ("vnode 'a' (replica 0, rank 3)"), which a fault
/// on this thread names; and the thread has an alternate signal stack, so that a stack overflow in the
/// VNODE body is reported too.
class RunningInstance {
 public:
  explicit RunningInstance(const std::string& who);
  ~RunningInstance();
  RunningInstance(const RunningInstance&) = delete;
  RunningInstance& operator=(const RunningInstance&) = delete;

 private:
  std::unique_ptr<char[]> stack_;
  bool stackInstalled_ = false;
};

}  // namespace dispar::rt

#endif
