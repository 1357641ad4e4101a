#include "Stall.h"

#include "DeathReport.h"
#include "Grouping.h"
#include "MpiCheck.h"
#include "Program.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace dispar::rt {

namespace {

thread_local InstanceActivity* threadActivity = nullptr;

/// How often a rank with running instances samples them: a round of the watches lasts about this long.
constexpr std::chrono::milliseconds kRoundInterval{250};

std::string instanceName(const ProgramSpec& program, int instance) {
  const std::optional<InstanceId> id = instanceOfRank(program, instance);
  if (!id) return "instance " + std::to_string(instance);
  return std::string("vnode '") + program.vnodes[id->vnode].name + "' (replica " + std::to_string(id->replica) + ")";
}

/// How long a watch that probes the other ranks waits for their answers.
constexpr double kProbeAnswerSeconds = 3;
/// The probes' tags on the watch's probe communicator.
constexpr int kProbeTag = 1;
constexpr int kAnswerTag = 2;

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Writes `text` to standard error in one write, every line with the runtime's prefix.
void reportLines(const std::string& text) {
  std::string out;
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t end = text.find('\n', begin);
    out += "dispar: " + text.substr(begin, end - begin) + "\n";
    begin = end == std::string::npos ? text.size() : end + 1;
  }
  std::fflush(stdout);
  std::fputs(out.c_str(), stderr);
  std::fflush(stderr);
}

std::string pipeName(const ProgramSpec& program, int pipe) {
  return pipe >= 0 && pipe < program.pipeCount ? std::string("'") + program.pipes[pipe].name + "'" : "?";
}

}  // namespace

ScopedActivity::ScopedActivity(InstanceActivity* activity) { threadActivity = activity; }
ScopedActivity::~ScopedActivity() {
  if (threadActivity != nullptr) threadActivity->finished.store(true, std::memory_order_release);
  threadActivity = nullptr;
}

InPipeOperation::InPipeOperation(const PipeSpec& pipe, PipeWait wait) : activity_(threadActivity) {
  if (activity_ == nullptr) return;
  outerPipe_ = activity_->pipe.load(std::memory_order_relaxed);
  outerWait_ = activity_->wait.load(std::memory_order_relaxed);
  outerPeer_ = activity_->peer.load(std::memory_order_relaxed);
  activity_->peer.store(-1, std::memory_order_relaxed);
  activity_->wait.store(static_cast<int>(wait), std::memory_order_relaxed);
  activity_->pipe.store(&pipe, std::memory_order_release);
}

InPipeOperation::~InPipeOperation() {
  if (activity_ == nullptr) return;
  // Back to the operation this one was inside, if any (a flush before a read waits: PendingItems).
  activity_->peer.store(outerPeer_, std::memory_order_relaxed);
  activity_->wait.store(outerWait_, std::memory_order_relaxed);
  activity_->pipe.store(outerPipe_, std::memory_order_relaxed);
  activity_->completed.fetch_add(1, std::memory_order_release);
}

void waitingOn(int instance) {
  if (threadActivity != nullptr) threadActivity->peer.store(instance, std::memory_order_relaxed);
}

std::optional<double> readSecondsVariable(const char* name, double fallback, const char* zeroMeans,
                                          std::string& error) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(seconds) || seconds < 0 || seconds > 1e6) {
    error = std::string(name) + "='" + text + "' is not a number of seconds from 0 (" + zeroMeans + ") to 1000000";
    return std::nullopt;
  }
  return seconds;
}

std::optional<StallSettings> readStallSettings(std::string& error) {
  StallSettings settings;
  const std::optional<double> seconds =
      readSecondsVariable("DISPAR_STALL_SECONDS", settings.seconds, "no stall detection", error);
  if (!seconds) return std::nullopt;
  settings.seconds = *seconds;
  if (const char* text = std::getenv("DISPAR_STALL_ABORT"); text != nullptr && *text != '\0') {
    if (std::strcmp(text, "1") != 0 && std::strcmp(text, "0") != 0) {
      error = std::string("DISPAR_STALL_ABORT='") + text + "' is not 1 (end the job on a stall) or 0";
      return std::nullopt;
    }
    settings.abort = std::strcmp(text, "1") == 0;
  }
  const std::optional<double> heartbeat =
      readSecondsVariable("DISPAR_HEARTBEAT_SECONDS", settings.heartbeatSeconds, "no heartbeat", error);
  if (!heartbeat) return std::nullopt;
  settings.heartbeatSeconds = *heartbeat;
  return settings;
}

int threadLevelForStallDetection() {
  std::string ignored;
  const std::optional<StallSettings> settings = readStallSettings(ignored);
  return settings && settings->watching() ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
}

std::string formatStallReport(const ProgramSpec& program, const std::vector<InstanceState>& states, double seconds) {
  char secondsText[32];
  std::snprintf(secondsText, sizeof secondsText, "%g", seconds);
  std::string text = std::string("stall: no VNODE instance has completed a pipe operation for ") + secondsText +
                     " s, and every unfinished one waits in one (DISPAR_STALL_SECONDS):\n";
  bool creditInCycle = false;
  for (std::size_t i = 0; i < states.size(); ++i) {
    const InstanceState& s = states[i];
    const int instance = static_cast<int>(i);
    text += "  " + instanceName(program, instance) + ", rank " + std::to_string(s.rank) + ": ";
    if (s.finished) {
      text += "finished\n";
      continue;
    }
    if (s.pipe < 0) {
      text += "running\n";
      continue;
    }
    const std::string from = s.peer >= 0 ? instanceName(program, s.peer) : "any of its writers";
    switch (s.wait) {
      case PipeWait::Data: text += "waits to read pipe " + pipeName(program, s.pipe) + ": data from " + from; break;
      case PipeWait::Credit:
        text += "waits to write pipe " + pipeName(program, s.pipe) + ": room, which " + from +
                " gives back as it reads (the pipe's window is full)";
        break;
      case PipeWait::Drain:
        text += "has returned and waits for the end of pipe " + pipeName(program, s.pipe) + " from " + from;
        break;
      case PipeWait::None: text += "in an operation on pipe " + pipeName(program, s.pipe); break;
    }
    text += "\n";
  }

  // The wait-for graph: each blocked instance waits on one other (or on any writer: no edge). Every
  // instance has at most one edge, so following edges from each one finds every cycle.
  std::vector<int> visitedFrom(states.size(), -1);
  std::vector<int> cycle;
  for (std::size_t start = 0; start < states.size() && cycle.empty(); ++start) {
    int at = static_cast<int>(start);
    while (at >= 0 && static_cast<std::size_t>(at) < states.size() && visitedFrom[at] == -1 && states[at].pipe >= 0 &&
           !states[at].finished) {
      visitedFrom[at] = static_cast<int>(start);
      at = states[at].peer;
    }
    if (at < 0 || static_cast<std::size_t>(at) >= states.size() || visitedFrom[at] != static_cast<int>(start)) continue;
    const int first = at;
    do {
      cycle.push_back(at);
      at = states[at].peer;
    } while (at != first);
  }
  if (!cycle.empty()) {
    // "cycle: vnode 'a' (replica 0) reads 'p' from vnode 'b' (replica 0), which waits to write 'q' read by
    // vnode 'a' (replica 0)"
    text += "cycle: " + instanceName(program, cycle.front());
    for (std::size_t k = 0; k < cycle.size(); ++k) {
      const InstanceState& s = states[cycle[k]];
      creditInCycle = creditInCycle || s.wait == PipeWait::Credit;
      text += std::string(k == 0 ? "" : ", which") +
              (s.wait == PipeWait::Credit  ? " waits to write "
               : s.wait == PipeWait::Drain ? " drains "
                                           : " reads ") +
              pipeName(program, s.pipe) + (s.wait == PipeWait::Credit ? " read by " : " from ") +
              instanceName(program, cycle[(k + 1) % cycle.size()]);
    }
    text += "\n";
    if (creditInCycle)
      text += "likely fix: a writer waits for room in a full pipe while its reader waits for something that "
              "writer has not sent yet: read the inputs in the order they are written (a joiner takes one from "
              "each branch in turn), send what must be read whole as one message, or give the pipe a larger "
              "window (#pragma streamap communication(PIPE) window(N), or DISPAR_PIPE_WINDOW); docs/runtime.md, "
              "\"Graph shapes that can deadlock under bounded buffering\"\n";
    else
      text += "likely fix: every VNODE on the cycle waits to read before it writes, so nothing is ever in the "
              "loop: prime it, with #pragma streamap communication(BACK) initial(N) on its back pipe, or by "
              "writing the loop's initial messages before the first read of the back pipe; docs/language.md, "
              "\"Flow control and deadlock\"\n";
  } else {
    text += "no cycle among the instances (one waits on any of its writers, or on one outside the cycle "
            "check): a VNODE waits for a message that is never written; check the order of reads and writes "
            "against the logical stream each pipe carries (docs/runtime.md)\n";
  }
  return text;
}

std::string formatUnreachableReport(const ProgramSpec& program, const RankGroups& groups, int rank,
                                    const std::vector<std::string>& nodeOfRank, const std::vector<int>& silent,
                                    double seconds) {
  const auto nodeOf = [&](int r) {
    return r >= 0 && static_cast<std::size_t>(r) < nodeOfRank.size() ? nodeOfRank[static_cast<std::size_t>(r)]
                                                                     : std::string("?");
  };
  const auto rankName = [&](int r) {
    std::string text = "rank " + std::to_string(r) + " (";
    if (r >= 0 && r < groups.rankCount()) {
      const std::vector<int>& instances = groups.instancesOfRank[static_cast<std::size_t>(r)];
      for (std::size_t k = 0; k < instances.size(); ++k) text += (k ? ", " : "") + instanceName(program, instances[k]);
    }
    return text + ") on node '" + nodeOf(r) + "'";
  };
  char secondsText[32];
  std::snprintf(secondsText, sizeof secondsText, "%.0f", seconds);
  std::string text = rankName(rank) + " has not heard from every other rank for " + secondsText +
                     " s (DISPAR_HEARTBEAT_SECONDS), and these do not answer:\n";
  std::vector<std::string> nodes;  // the silent ranks' nodes, once each, in rank order
  for (const int r : silent) {
    text += "  " + rankName(r) + "\n";
    if (std::find(nodes.begin(), nodes.end(), nodeOf(r)) == nodes.end()) nodes.push_back(nodeOf(r));
  }
  std::string named;
  for (std::size_t k = 0; k < nodes.size(); ++k)
    named += (k == 0 ? "" : k + 1 == nodes.size() ? " and " : ", ") + ("'" + nodes[k] + "'");
  const bool sameNode = nodes.size() == 1 && nodes.front() == nodeOf(rank);
  text += (nodes.size() == 1 ? "node " : "nodes ") + named + " cannot be reached from node '" + nodeOf(rank) + "': " +
          (sameNode ? "its ranks stopped answering (stopped, or stuck outside the program)"
                    : "failed, or a link between them is down") +
          "\n";
  text += "ending the job, status " + std::to_string(kUnreachableExit) + "\n";
  return text;
}

StallWatch::StallWatch(const ProgramSpec& program, const RankGroups& groups, int rank, const StallSettings& settings,
                       std::vector<InstanceActivity>& activities, std::vector<std::string> nodeOfRank)
    : program_(program), groups_(groups), rank_(rank), settings_(settings), activities_(activities),
      nodeOfRank_(std::move(nodeOfRank)) {
  DISPAR_MPI(MPI_Comm_dup, MPI_COMM_WORLD, &comm_);
  DISPAR_MPI(MPI_Comm_dup, MPI_COMM_WORLD, &probeComm_);
  DISPAR_MPI(MPI_Irecv, &probeFrom_, 1, MPI_INT, MPI_ANY_SOURCE, kProbeTag, probeComm_, &probeIn_);
  thread_ = std::thread([this] { run(); });
}

StallWatch::~StallWatch() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    rankFinished_ = true;
  }
  wake_.notify_all();
  thread_.join();
  MPI_Comm_free(&comm_);
  // No probe can come any more (every rank has finished its rounds); answers still on their way complete
  // without us.
  MPI_Cancel(&probeIn_);
  MPI_Wait(&probeIn_, MPI_STATUS_IGNORE);
  for (MPI_Request& answer : answers_)
    if (answer != MPI_REQUEST_NULL) MPI_Request_free(&answer);
  MPI_Comm_free(&probeComm_);
}

void StallWatch::answerProbes() {
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    DISPAR_MPI(MPI_Test, &probeIn_, &arrived, &status);
    if (!arrived) break;
    answers_.push_back(MPI_REQUEST_NULL);
    static const int kHere = 1;
    DISPAR_MPI(MPI_Isend, &kHere, 1, MPI_INT, status.MPI_SOURCE, kAnswerTag, probeComm_, &answers_.back());
    DISPAR_MPI(MPI_Irecv, &probeFrom_, 1, MPI_INT, MPI_ANY_SOURCE, kProbeTag, probeComm_, &probeIn_);
  }
  if (answers_.empty()) return;
  int allSent = 0;
  DISPAR_MPI(MPI_Testall, static_cast<int>(answers_.size()), answers_.data(), &allSent, MPI_STATUSES_IGNORE);
  if (allSent) answers_.clear();
}

void StallWatch::awaitRound(MPI_Request& request, std::chrono::milliseconds interval) {
  auto waitingSince = std::chrono::steady_clock::now();
  for (int done = 0;;) {
    DISPAR_MPI(MPI_Test, &request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    answerProbes();
    const double waited = secondsSince(waitingSince);
    if (settings_.heartbeatSeconds > 0 && waited >= settings_.heartbeatSeconds) {
      checkPeers(waited);
      waitingSince = std::chrono::steady_clock::now();  // every rank answered: keep waiting, and ask again later
    }
    std::this_thread::sleep_for(interval);
  }
}

void StallWatch::checkPeers(double waitedSeconds) {
  int size = 0;
  DISPAR_MPI(MPI_Comm_size, probeComm_, &size);
  static const int kProbe = 1;
  std::vector<int> replies(static_cast<std::size_t>(size));
  std::vector<MPI_Request> probes, answersIn;
  std::vector<int> peers;
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank_) continue;
    peers.push_back(peer);
    answersIn.push_back(MPI_REQUEST_NULL);
    DISPAR_MPI(MPI_Irecv, &replies[static_cast<std::size_t>(peer)], 1, MPI_INT, peer, kAnswerTag, probeComm_,
               &answersIn.back());
    probes.push_back(MPI_REQUEST_NULL);
    DISPAR_MPI(MPI_Isend, &kProbe, 1, MPI_INT, peer, kProbeTag, probeComm_, &probes.back());
  }
  const auto asked = std::chrono::steady_clock::now();
  std::vector<bool> answered(peers.size(), false);
  std::size_t answeredCount = 0;
  while (answeredCount < peers.size() && secondsSince(asked) < kProbeAnswerSeconds) {
    answerProbes();  // another watch may be asking us at the same time
    for (std::size_t k = 0; k < peers.size(); ++k) {
      if (answered[k]) continue;
      int done = 0;
      DISPAR_MPI(MPI_Test, &answersIn[k], &done, MPI_STATUS_IGNORE);
      if (done) {
        answered[k] = true;
        ++answeredCount;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (answeredCount == peers.size()) {
    // Every rank is there: the round is slow, not lost (a rank starved of CPU, a debugger). The probes
    // to answering ranks have been received, so they complete.
    DISPAR_MPI(MPI_Waitall, static_cast<int>(probes.size()), probes.data(), MPI_STATUSES_IGNORE);
    return;
  }
  std::vector<int> silent;
  for (std::size_t k = 0; k < peers.size(); ++k)
    if (!answered[k]) silent.push_back(peers[k]);
  reportLines(formatUnreachableReport(program_, groups_, rank_, nodeOfRank_, silent, waitedSeconds));
  // As reportStall: give the launcher a moment to pass the report on before the job is torn down. The
  // requests to the silent ranks are left as they are: the process ends here.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  recordRankEnd(true);  // streammap run: this job's end is explained
  MPI_Abort(MPI_COMM_WORLD, kUnreachableExit);
}

void StallWatch::run() {
  // Rounds: sample, then one all-reduce of (active instances, blocked instances, ranks not finished,
  // pipe operations completed). A stall is `rounds` rounds in a row with nothing active, something
  // blocked and the same count of operations: every rank sees the same sums, and so decides together.
  const long long rounds =
      std::max<long long>(1, static_cast<long long>(std::ceil(settings_.seconds * 1000.0 / kRoundInterval.count())));
  long long lastCompleted = -1;
  long long stableRounds = 0;
  bool reported = false;
  for (;;) {
    bool finished = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!rankFinished_) wake_.wait_for(lock, kRoundInterval, [this] { return rankFinished_; });
      finished = rankFinished_;
    }
    long long local[4] = {0, 0, finished ? 0 : 1, 0};
    for (const InstanceActivity& activity : activities_) {
      local[3] += static_cast<long long>(activity.completed.load(std::memory_order_acquire));
      if (activity.finished.load(std::memory_order_acquire)) continue;
      if (activity.pipe.load(std::memory_order_acquire) != nullptr)
        ++local[1];
      else
        ++local[0];
    }
    long long global[4] = {};
    MPI_Request request = MPI_REQUEST_NULL;
    DISPAR_MPI(MPI_Iallreduce, local, global, 4, MPI_LONG_LONG, MPI_SUM, comm_, &request);
    // A finished rank polls often (the job's end waits for its last round); a running one less, its
    // instances keep their cores.
    awaitRound(request, finished ? std::chrono::milliseconds(1) : std::chrono::milliseconds(5));
    if (global[2] == 0) return;  // every rank's instances have finished
    if (settings_.seconds > 0 && global[0] == 0 && global[1] > 0 && global[3] == lastCompleted) {
      if (++stableRounds >= rounds && !reported) {
        reportStall();
        reported = true;
      }
    } else {
      stableRounds = 0;
    }
    lastCompleted = global[3];
  }
}

void StallWatch::reportStall() {
  // Every rank's instances' states to rank 0: five numbers each, in the order of groups_.instancesOfRank.
  const std::vector<int>& mine = groups_.instancesOfRank[static_cast<std::size_t>(rank_)];
  std::vector<int> records;
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const InstanceActivity& activity = activities_[k];
    const PipeSpec* pipe = activity.pipe.load(std::memory_order_acquire);
    records.insert(records.end(), {mine[k], activity.finished.load() ? 1 : 0,
                                   pipe != nullptr ? static_cast<int>(pipe - program_.pipes) : -1, activity.wait.load(),
                                   activity.peer.load()});
  }
  std::vector<int> counts, offsets, all;
  if (rank_ == 0) {
    for (const std::vector<int>& instances : groups_.instancesOfRank) {
      offsets.push_back(static_cast<int>(all.size()));
      counts.push_back(static_cast<int>(instances.size()) * 5);
      all.resize(all.size() + instances.size() * 5);
    }
  }
  MPI_Request request = MPI_REQUEST_NULL;
  DISPAR_MPI(MPI_Igatherv, records.data(), static_cast<int>(records.size()), MPI_INT, all.data(), counts.data(),
             offsets.data(), MPI_INT, 0, comm_, &request);
  awaitRound(request, std::chrono::milliseconds(1));
  if (rank_ != 0) return;
  std::vector<InstanceState> states(static_cast<std::size_t>(program_.rankCount));
  for (std::size_t at = 0; at + 5 <= all.size(); at += 5) {
    const int instance = all[at];
    if (instance < 0 || instance >= program_.rankCount) continue;
    InstanceState& s = states[static_cast<std::size_t>(instance)];
    s.finished = all[at + 1] != 0;
    s.pipe = all[at + 2];
    s.wait = static_cast<PipeWait>(all[at + 3]);
    s.peer = all[at + 4];
    s.rank = groups_.rankOfInstance[static_cast<std::size_t>(instance)];
  }
  std::string text = formatStallReport(program_, states, settings_.seconds);
  if (settings_.abort) text += "ending the job (DISPAR_STALL_ABORT=1), status 4\n";
  reportLines(text);
  if (!settings_.abort) return;
  // Hydra forwards output asynchronously and may tear the job down before it has passed the report on
  // (as abortJob does, give it a moment).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  recordRankEnd(true);  // streammap run: this job's end is explained
  MPI_Abort(MPI_COMM_WORLD, kStallExit);
}

}  // namespace dispar::rt
