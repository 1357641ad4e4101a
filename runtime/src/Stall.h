// Hangs that explain themselves (docs/runtime.md, "Stalls"): when no instance of the job has completed a
// pipe operation for DISPAR_STALL_SECONDS and every unfinished instance waits in one, rank 0 prints the
// wait-for graph it found (each blocked instance, the pipe, what it waits for and from whom, the cycle)
// and the likely fix; with DISPAR_STALL_ABORT=1 it then ends the job with status 4.
//
// Each instance publishes what it is doing in an InstanceActivity (set by the port entry points); one
// watch thread per rank samples its instances and agrees with the other ranks' watches in rounds of one
// non-blocking all-reduce on a communicator of its own. The decision uses only the all-reduced values, so
// every rank takes it in the same round. A slow instance computing in its body is active, and keeps any
// stall from being reported.
//
// The rounds are also the job's heartbeat (docs/runtime.md, "Unreachable nodes"): a round that has not
// completed for DISPAR_HEARTBEAT_SECONDS means some rank cannot be heard. The watch then asks every other
// rank's watch directly, names those that do not answer within a few seconds and the nodes they run on,
// and ends the job with status 6: a node that failed, or a link that went down, ends the job in bounded
// time instead of after TCP's timeouts (minutes), or never.
#ifndef DISPAR_RUNTIME_STALL_H
#define DISPAR_RUNTIME_STALL_H

#include <dispar/runtime.h>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace dispar::rt {

struct RankGroups;

/// The job's exit status when a stall ends it (DISPAR_STALL_ABORT=1).
inline constexpr int kStallExit = 4;
/// The job's exit status when some rank cannot be reached (DISPAR_HEARTBEAT_SECONDS).
inline constexpr int kUnreachableExit = 6;

/// What an instance waits for inside a pipe operation.
enum class PipeWait : int {
  None = 0,
  Data,    // a read (or an item wait): the next message, or the end of the stream, from a writer
  Credit,  // a write: room in the pipe's window, which the reader gives back as it reads
  Drain,   // after its body returned: the end of its input streams, from their writers
};

/// What an instance is doing, as its watch reads it. Written by the instance's thread only.
struct alignas(64) InstanceActivity {
  std::atomic<const PipeSpec*> pipe{nullptr};  // the pipe of the operation it is in; null: none
  std::atomic<int> wait{0};                    // PipeWait
  std::atomic<int> peer{-1};                   // the instance it waits on; -1: any of the pipe's writers
  std::atomic<std::uint64_t> completed{0};     // pipe operations completed
  std::atomic<bool> finished{false};           // its body returned and its streams ended
};

/// Binds the calling thread to `activity` (nullptr: detection is off) while alive.
class ScopedActivity {
 public:
  explicit ScopedActivity(InstanceActivity* activity);
  ~ScopedActivity();
  ScopedActivity(const ScopedActivity&) = delete;
  ScopedActivity& operator=(const ScopedActivity&) = delete;
};

/// Marks the calling thread's instance as inside an operation on `pipe` while alive; its end counts as
/// progress, and restores the operation it was inside, if any. A few relaxed loads and stores and an
/// increment when detection is on, a null test when off.
class InPipeOperation {
 public:
  InPipeOperation(const PipeSpec& pipe, PipeWait wait);
  ~InPipeOperation();
  InPipeOperation(const InPipeOperation&) = delete;
  InPipeOperation& operator=(const InPipeOperation&) = delete;

 private:
  InstanceActivity* activity_;
  const PipeSpec* outerPipe_ = nullptr;
  int outerWait_ = 0;
  int outerPeer_ = -1;
};

/// Within an operation: the instance it now waits on (the link's other end).
void waitingOn(int instance);

struct StallSettings {
  double seconds = 10;  // 0: detection off
  bool abort = false;
  double heartbeatSeconds = 30;  // 0: no heartbeat
  /// Whether a watch runs at all: for stalls, for the heartbeat, or both.
  bool watching() const { return seconds > 0 || heartbeatSeconds > 0; }
};

/// DISPAR_STALL_SECONDS (default 10; 0 disables), DISPAR_STALL_ABORT (1 or 0) and DISPAR_HEARTBEAT_SECONDS
/// (default 30; 0 disables); nullopt and `error` on bad text.
std::optional<StallSettings> readStallSettings(std::string& error);

/// A number of seconds from the environment variable `name`, from 0 to 1000000: `fallback` when it is
/// unset or empty; nullopt with `error` ("NAME='x' is not a number of seconds from 0 (ZERO) to 1000000",
/// `zeroMeans` saying what 0 does) when it is not one. DISPAR_STALL_SECONDS, DISPAR_HEARTBEAT_SECONDS,
/// DISPAR_FINALIZE_SECONDS.
std::optional<double> readSecondsVariable(const char* name, double fallback, const char* zeroMeans, std::string& error);

/// The report for the instances' states, by instance (pure, for tests): one line per blocked instance,
/// the cycle of the wait-for graph if there is one, and the likely fix.
struct InstanceState {
  bool finished = false;
  int pipe = -1;  // -1: not in a pipe operation
  PipeWait wait = PipeWait::None;
  int peer = -1;
  int rank = 0;
};
std::string formatStallReport(const ProgramSpec& program, const std::vector<InstanceState>& states, double seconds);

/// The report of a rank that has not heard the job for `seconds` and whose probes `silent` did not answer
/// (pure, for tests): "dispar: "-less lines, the last saying the job ends. `nodeOfRank`: each rank's node.
std::string formatUnreachableReport(const ProgramSpec& program, const RankGroups& groups, int rank,
                                    const std::vector<std::string>& nodeOfRank, const std::vector<int>& silent,
                                    double seconds);

/// One rank's watch (collective: every rank constructs it at the same point, and destroys it after its
/// instances have finished; the destructor returns once every rank's have).
class StallWatch {
 public:
  /// `nodeOfRank`: each rank's node (gatherNodeNames(), NodeLeaders.h), for the heartbeat's report.
  StallWatch(const ProgramSpec& program, const RankGroups& groups, int rank, const StallSettings& settings,
             std::vector<InstanceActivity>& activities, std::vector<std::string> nodeOfRank);
  ~StallWatch();
  StallWatch(const StallWatch&) = delete;
  StallWatch& operator=(const StallWatch&) = delete;

 private:
  void run();
  void reportStall();
  /// Completes `request` (a collective of the watches), polling every `interval` (the watch holds no core)
  /// and answering other watches' probes meanwhile; when the heartbeat is on and the request has waited
  /// that long, probes the other ranks (checkPeers).
  void awaitRound(MPI_Request& request, std::chrono::milliseconds interval);
  /// Answers the probes that have arrived, and retires the answers sent.
  void answerProbes();
  /// Asks every other rank's watch whether it is there; ends the job naming those that do not answer.
  void checkPeers(double waitedSeconds);

  const ProgramSpec& program_;
  const RankGroups& groups_;
  const int rank_;
  const StallSettings settings_;
  std::vector<InstanceActivity>& activities_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm probeComm_ = MPI_COMM_NULL;  // probes and their answers, apart from the rounds
  MPI_Request probeIn_ = MPI_REQUEST_NULL;
  int probeFrom_ = 0;
  std::vector<MPI_Request> answers_;
  const std::vector<std::string> nodeOfRank_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool rankFinished_ = false;
  std::thread thread_;
};

}  // namespace dispar::rt

#endif  // DISPAR_RUNTIME_STALL_H
