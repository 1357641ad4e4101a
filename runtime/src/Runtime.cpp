// dispar::rt::run: the main of every generated program. An MPI rank runs one VNODE instance, or
// several, each on its own thread (docs/runtime.md, "Rank groups").
#include "DeathReport.h"
#include "DeviceState.h"
#include "Grouping.h"
#include "LaunchLog.h"
#include "Links.h"
#include "MpiHandles.h"
#include "NodeLeaders.h"
#include "Ports.h"
#include "Profile.h"
#include "Program.h"
#include "Stall.h"
#include "Trace.h"

#include <dispar/gpu/MapFile.h>
#include <dispar_lang/CpuQuota.h>
#ifdef DISPAR_TARGET_SMPI
#include <dispar/smpi/SimulatedGpu.h>
#endif

#include <dlfcn.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace dispar {
namespace {

/// Which instance the calling thread runs while run() executes; what dispar::args() and friends report.
struct InstanceContext {
  std::vector<std::string> args;
  int replica = 0;
  int replicas = 1;
};

const InstanceContext kOutsideRun{};
thread_local const InstanceContext* currentContext = nullptr;

const InstanceContext& context() { return currentContext ? *currentContext : kOutsideRun; }

/// Publishes a context for the duration of one run().
class ScopedContext {
 public:
  explicit ScopedContext(const InstanceContext& context) : previous_(currentContext) { currentContext = &context; }
  ~ScopedContext() { currentContext = previous_; }
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

 private:
  const InstanceContext* previous_;
};

}  // namespace

const std::vector<std::string>& args() { return context().args; }
int replica() { return context().replica; }
double wtime() { return rt::profileClockSeconds(); }
int replicas() { return context().replicas; }

}  // namespace dispar

namespace dispar::rt {
namespace {

constexpr int kLaunchErrorExit = 2;  // wrong rank count, bad environment, bad program description
constexpr int kFailureExit = 3;      // a VNODE failed; the MPI_Abort error code

void report(const std::string& message);

/// DISPAR_FINALIZE_SECONDS: how long MPI_Finalize may take once every rank has finished (MpiSession).
std::optional<double> readFinalizeSeconds(std::string& error) {
  return readSecondsVariable("DISPAR_FINALIZE_SECONDS", 10, "wait for MPI_Finalize however long it takes", error);
}

/// Initialises MPI unless the caller already did (tests run several programs in one process), and
/// finalises it only in the first case. `threaded`: instances of a rank call MPI from their own threads.
///
/// MPI_Finalize is bounded: MPICH 4.0 over UCX's TCP transport (Debian 12's MPICH) can wait in it for
/// ever when its ranks on different nodes close their connections (on the emulated cluster of
/// tests/cluster: most runs of two nodes, until every rank passed a barrier first, and most runs of three
/// or more nodes even so; a bug of the kind of openucx/ucx#8738). Every rank first passes a barrier, so
/// that once MPI_Finalize starts every rank's work is done and its output written; a rank whose
/// MPI_Finalize has not returned after DISPAR_FINALIZE_SECONDS then ends with the status it would have
/// returned, rank 0 saying so.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv, bool threaded) {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
      if (threaded)
        MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided_);
      else
        MPI_Init(argc, argv);
      owns_ = true;
    }
    if (!owns_ || threaded) MPI_Query_thread(&provided_);
  }
  ~MpiSession() {
    if (!owns_) return;
#ifdef DISPAR_TARGET_SMPI
    MPI_Finalize();  // a simulated rank cannot end the process: the simulation is one process
#else
    if (finalizeSeconds_ <= 0) {
      MPI_Finalize();
      return;
    }
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    std::fflush(nullptr);
    std::mutex mutex;
    std::condition_variable finished;
    bool done = false;
    std::thread watch([&] {
      std::unique_lock<std::mutex> lock(mutex);
      const auto limit = std::chrono::duration<double>(finalizeSeconds_);
      if (finished.wait_for(lock, limit, [&] { return done; })) return;
      if (rank == 0) {
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%g", finalizeSeconds_);
        report(std::string("warning: MPI_Finalize has not returned ") + seconds +
               " s after every rank finished (a hang of the MPI library's shutdown, e.g. MPICH over UCX's TCP "
               "transport); the run's work is complete: ending the ranks with their status "
               "(DISPAR_FINALIZE_SECONDS)");
      }
      std::fflush(nullptr);
      std::_Exit(status_);
    });
    MPI_Finalize();
    {
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
    }
    finished.notify_one();
    watch.join();
#endif
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int threadLevel() const { return provided_; }
  bool ownsMpi() const { return owns_; }
  /// The status run() returns (the process's, where a bounded MPI_Finalize ends it).
  int finish(int status) {
    status_ = status;
    recordRankEnd(false, status);
    return status;
  }
  void limitFinalize(double seconds) { finalizeSeconds_ = seconds; }

 private:
  bool owns_ = false;
  int provided_ = MPI_THREAD_SINGLE;
  int status_ = 0;
  double finalizeSeconds_ = 0;
};

const char* threadLevelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

void report(const std::string& message) {
  std::fflush(stdout);
  // One write per line so that lines of different ranks do not interleave.
  std::fprintf(stderr, "dispar: %s\n", message.c_str());
  std::fflush(stderr);
}

/// The instances of this rank whose bodies are running, for the profile a failing rank writes: what it
/// measured up to the failure (docs/runtime.md, "Run profiles").
class LiveProfile {
 public:
  struct Entry {
    const InstanceProfile* record;  // the instance's fixed fields
    const PortWaits* waits;
    double bodyStart = 0;  // profileClockSeconds()
  };
  void begin(const ProgramSpec& program, std::string path) {
    const std::lock_guard<std::mutex> lock(mutex_);
    program_ = &program;
    path_ = std::move(path);
  }
  void add(const Entry& entry) {
    const std::lock_guard<std::mutex> lock(mutex_);
    entries_.push_back(entry);
  }
  void remove(const InstanceProfile* record) {
    const std::lock_guard<std::mutex> lock(mutex_);
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.record == record; }),
                   entries_.end());
  }
  void end() {
    const std::lock_guard<std::mutex> lock(mutex_);
    program_ = nullptr;
    entries_.clear();
  }
  /// Writes this rank's running instances as an incomplete profile, when profiling.
  void writePartial(const std::string& failure) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (program_ == nullptr || path_.empty()) return;
    std::vector<InstanceProfile> lines;
    for (const Entry& entry : entries_) {
      InstanceProfile line = *entry.record;
      recordBodyTimes(line, *entry.waits, entry.bodyStart);
      lines.push_back(std::move(line));
    }
    std::string error;
    writeProfileFile(path_, profileJson(*program_, lines, {}, {}, {}, failure), error);
  }

 private:
  std::mutex mutex_;
  const ProgramSpec* program_ = nullptr;
  std::string path_;
  std::vector<Entry> entries_;
};

LiveProfile liveProfile;

[[noreturn]] void abortJob(const std::string& message) {
  report(message);
  recordRankEnd(true);  // streammap run: this job's end is explained
  liveProfile.writePartial(message);
  // Hydra forwards output asynchronously and may tear the job down before it has passed on this line
  // (seen about once in 50 runs); give it a moment. This is the failure path, time does not matter.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  MPI_Abort(MPI_COMM_WORLD, kFailureExit);
  std::_Exit(kFailureExit);  // MPI_Abort does not return; this is for a broken MPI
}

/// Names the VNODE whose body is running, for a body that calls exit() before it returns: otherwise the
/// job ends with the MPI library's "BAD TERMINATION" banner naming some process id, and nothing says
/// which VNODE left without finishing its pipes. exit() runs atexit handlers; _exit and signals do not.
class EarlyExitGuard {
 public:
  explicit EarlyExitGuard(std::string who) : who_(std::move(who)) {
    static const bool registered = std::atexit(&EarlyExitGuard::onExit) == 0;
    (void)registered;
    running = &who_;
  }
  ~EarlyExitGuard() { running = nullptr; }
  EarlyExitGuard(const EarlyExitGuard&) = delete;
  EarlyExitGuard& operator=(const EarlyExitGuard&) = delete;

 private:
  // exit() runs the handlers on the thread that called it, after destroying that thread's
  // thread_local objects: a plain pointer to the guard's name survives that and names its instance.
  static void onExit() {
    if (running == nullptr) return;
    const std::string who = *std::exchange(running, nullptr);
    abortJob(who + " called exit() before its body returned: its pipes were not finished (return from the "
                   "VNODE body instead)");
  }
  static inline thread_local const std::string* running = nullptr;
  std::string who_;
};

/// One VNODE instance of this rank: its port ends over the rank's links.
class RankInstance final : public Instance {
 public:
  RankInstance(const ProgramSpec& program, InstanceId id, const LinkTable& links, unsigned programWindow)
      : program_(program), id_(id) {
    ports_.resize(static_cast<std::size_t>(program.pipeCount));
    const int self = program.vnodes[id.vnode].firstRank + id.replica;
    const std::string owner = std::string("vnode '") + program.vnodes[id.vnode].name + "'";
    for (const PortPlan& plan : planPorts(program, id)) {
      const PipeSpec& pipe = program.pipes[plan.pipe];
      const unsigned window = effectiveWindow(pipe, programWindow);
      std::vector<LinkEnd> ends;
      for (int peer : plan.peers) {
        ends.push_back(plan.role == PortRole::Writer ? links.end(plan.pipe, self, peer, plan.role)
                                                     : links.end(plan.pipe, peer, self, plan.role));
        ends.back().peerInstance = peer;
      }
      auto& slot = ports_[static_cast<std::size_t>(plan.pipe)];
      if (plan.role == PortRole::Writer)
        slot = std::make_unique<OutPortEnd>(pipe, window, owner, std::move(ends), plan.turns, plan.sequence);
      else
        slot = std::make_unique<InPortEnd>(pipe, window, owner, std::move(ends), plan.turns, plan.sequence.has_value());
    }
  }

  int vnode() const override { return id_.vnode; }
  int replica() const override { return id_.replica; }

  /// Run traces: every port records its calls and messages in `trace`.
  void trace(InstanceTrace* trace) {
    for (std::size_t p = 0; p < ports_.size(); ++p)
      if (ports_[p]) ports_[p]->traceInto(trace, static_cast<int>(p));
  }
  /// Run profiles: every port adds the time its calls take to this instance's waits.
  void profile(bool measureCpu) {
    waits_.measureCpu = measureCpu;
    for (auto& port : ports_)
      if (port) port->profileInto(&waits_);
  }
  const PortWaits& waits() const { return waits_; }
  /// Adds what this instance's output ports wrote to `pipes` (by pipe).
  void addTraffic(std::vector<PipeTraffic>& pipes) const {
    for (std::size_t p = 0; p < ports_.size(); ++p)
      if (const auto* out = dynamic_cast<const OutPortEnd*>(ports_[p].get())) {
        pipes[p].messages += out->traffic().messages;
        pipes[p].bytes += out->traffic().bytes;
      }
  }

  detail::PortState& port(int pipe) override {
    if (pipe < 0 || pipe >= program_.pipeCount || !ports_[static_cast<std::size_t>(pipe)])
      throw PipeError(std::string("vnode '") + program_.vnodes[id_.vnode].name + "' has no port on pipe " +
                      (pipe >= 0 && pipe < program_.pipeCount ? std::string("'") + program_.pipes[pipe].name + "'"
                                                              : std::to_string(pipe)));
    return *ports_[static_cast<std::size_t>(pipe)];
  }

  /// initial(N): writes this replica's turns of the pipe's first N messages (copies of its initial
  /// value) to each output port that has them, before the body runs. Neither messages nor items are
  /// fixed for the port by it: a reader takes each as one message or one item.
  void prime() {
    for (std::size_t p = 0; p < ports_.size(); ++p) {
      auto* out = dynamic_cast<OutPortEnd*>(ports_[p].get());
      const PipeSpec& pipe = program_.pipes[p];
      if (out == nullptr || pipe.initialCount <= 0) continue;
      const InPipeOperation operation(pipe, PipeWait::Credit);
      const lang::LogicalStream stream = logicalStream(program_, pipe);
      for (int n = 0; n < pipe.initialCount; ++n)
        if (stream.writerOf(n) == id_.replica) out->writeInitial(pipe.initialValue);
    }
  }

  /// Sends the items pushed to every output port (PendingItems: before the instance waits).
  void flushItems() {
    for (auto& port : ports_)
      if (auto* out = dynamic_cast<OutPortEnd*>(port.get())) {
        const InPipeOperation operation(out->spec(), PipeWait::Credit);
        out->flush();
      }
  }

  /// After the VNODE returns: end every output stream first (downstream can then finish), then
  /// consume what is left of the inputs, then collect the outputs' last credits.
  void finish() {
    for (auto& port : ports_)
      if (auto* out = dynamic_cast<OutPortEnd*>(port.get())) {
        const InPipeOperation operation(out->spec(), PipeWait::Credit);
        out->close();
      }
    for (auto& port : ports_)
      if (auto* in = dynamic_cast<InPortEnd*>(port.get())) {
        const InPipeOperation operation(in->spec(), PipeWait::Drain);
        in->finish();
      }
    for (auto& port : ports_)
      if (auto* out = dynamic_cast<OutPortEnd*>(port.get())) {
        const InPipeOperation operation(out->spec(), PipeWait::Credit);
        out->finish();
      }
  }

 private:
  const ProgramSpec& program_;
  InstanceId id_;
  std::vector<std::unique_ptr<detail::PortState>> ports_;  // by pipe; null where this instance has no end
  PortWaits waits_;
};

/// What one instance measured for the run profile.
struct InstanceMeasure {
  bool portCpu = false;  // measure the CPU time inside port calls (an oversubscribed node)
  InstanceProfile line;
  std::vector<PipeTraffic> pipes;      // by pipe
  std::vector<KernelProfile> kernels;  // by launch site
};

/// DISPAR_PIPE_WINDOW as rank 0 sees it, so that both ends of every pipe agree. 0 when invalid.
unsigned agreedProgramWindow(int rank) {
  unsigned window = 0;
  if (rank == 0) {
    std::string error;
    if (auto parsed = parseWindowSetting(std::getenv("DISPAR_PIPE_WINDOW"), error))
      window = *parsed;
    else
      report(error);
  }
  DISPAR_MPI(MPI_Bcast, &window, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
  return window;
}

/// Stall detection as rank 0 reads it, so that every rank's watch takes part in the same rounds; off when
/// some rank's MPI cannot run the watch's thread: with a warning when the runtime asked for the level and
/// did not get it, silently when the caller initialised MPI at a lower level (collective over
/// MPI_COMM_WORLD).
StallSettings agreedStallSettings(int rank, const StallSettings& mine, int threadLevel, bool ownsMpi) {
  double values[3] = {mine.seconds, mine.abort ? 1.0 : 0.0, mine.heartbeatSeconds};
  DISPAR_MPI(MPI_Bcast, values, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int lowest = threadLevel;
  DISPAR_MPI(MPI_Allreduce, &threadLevel, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  StallSettings settings{values[0], values[1] != 0, values[2]};
  if (settings.watching() && lowest < MPI_THREAD_MULTIPLE) {
    if (rank == 0 && ownsMpi)
      report(std::string("warning: no stall detection and no heartbeat: they need MPI_THREAD_MULTIPLE, but the MPI "
                         "library provides ") +
             threadLevelName(lowest) + " (set DISPAR_STALL_SECONDS=0 and DISPAR_HEARTBEAT_SECONDS=0 to silence this)");
    settings.seconds = 0;
    settings.heartbeatSeconds = 0;
  }
  return settings;
}

/// This rank's position among the job's ranks on its node (`leaders`: nodeLeaders()).
std::pair<int, int> localRankAndSize(const std::vector<int>& leaders) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int position = 0, size = 0;
  for (std::size_t r = 0; r < leaders.size(); ++r)
    if (leaders[r] == leaders[static_cast<std::size_t>(rank)]) {
      if (static_cast<int>(r) < rank) ++position;
      ++size;
    }
  return {position, size};
}

/// Collective: whether this rank's node (`leaders`: nodeLeaders()) runs more instances than it has processors. Run
/// profiles then also measure the CPU time inside port calls (docs/runtime.md, "Run profiles"): wall time outside the
/// ports counts the time a thread waited for a core, but a thread CPU clock costs a system call per read.
/// (Not on the SMPI target, whose ranks wait in simulated time.)
#ifndef DISPAR_TARGET_SMPI
bool nodeOversubscribed(const std::vector<int>& leaders, std::size_t instancesOfThisRank) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long mine = static_cast<long>(instancesOfThisRank);
  std::vector<long> instances(leaders.size());
  DISPAR_MPI(MPI_Allgather, &mine, 1, MPI_LONG, instances.data(), 1, MPI_LONG, MPI_COMM_WORLD);
  long onNode = 0;
  for (std::size_t r = 0; r < leaders.size(); ++r)
    if (leaders[r] == leaders[static_cast<std::size_t>(rank)]) onNode += instances[r];
  const long processors = ::sysconf(_SC_NPROCESSORS_ONLN);
  return processors <= 0 || onNode > processors;
}
#endif

bool verbose() {
  const char* text = std::getenv("DISPAR_VERBOSE");
  return text != nullptr && std::string(text) == "1";
}

/// The device of a CG instance (nullptr: the host path), opened on the thread that runs it (CUDA's
/// current device is per thread). Aborts the job when the backend refuses the instance's device.
std::unique_ptr<gpu::Device> startDevice(const ProgramSpec& program, InstanceId id, int rank,
                                         const gpu::DeviceBackend* devices, std::pair<int, int> local) {
  const VnodeSpec& vnode = program.vnodes[id.vnode];
  if (devices == nullptr) {
    if (vnode.usesGpu && verbose())
      report("rank " + std::to_string(rank) + " vnode '" + vnode.name +
             "': host path (the program was built without CUDA)");
    return nullptr;
  }
  if (!vnode.usesGpu) return nullptr;
  try {
    const gpu::RankInfo info{program.program, vnode.name, vnode.location, rank, id.replica, local.first, local.second};
    return devices->start(info);
  } catch (const std::exception& error) {
    abortJob(error.what());
  }
}

/// The cores this process may run on: its affinity mask (which the launcher sets from the mapping), no
/// more than its cgroup's CPU quota (dispar_lang/CpuQuota.h).
std::size_t availableCores() { return lang::usableCores(); }

/// Libraries whose global state instances on threads share, made safe for that when they are linked:
/// FFTW's planner (docs/runtime.md, "Rank groups"; disparcc links FFTW's threads library with FFTW).
void makeLibrariesThreadSafe() {
  for (const char* name : {"fftw_make_planner_thread_safe", "fftwf_make_planner_thread_safe"})
    if (void* function = ::dlsym(RTLD_DEFAULT, name)) reinterpret_cast<void (*)()>(function)();
}

/// The grouping run() uses: the caller's, else the mapping file's, else one rank per instance. Empty
/// when it is valid, else the message. Read before MPI starts: it decides the thread level.
/// `map`: the running binary's map file when the groups come from it.
std::string chooseGroups(const ProgramSpec& program, const RunOptions& options, RankGroups& groups,
                         std::optional<gpu::MapFile>& map) {
  if (!options.grouping.empty()) {
    const std::string problem = makeGroups(program, options.grouping, groups);
    return problem.empty() ? problem : "invalid grouping: " + problem;
  }
  groups = onePerInstance(program);
  try {
    map = gpu::loadRunningMapFile();
    if (!map) return {};
    return groupsFromMap(program, map->program, map->ranks, map->path, groups);
  } catch (const std::exception& error) {
    return error.what();
  }
}

#ifdef DISPAR_TARGET_SMPI
/// The simulated GPU a CG instance's kernels are charged to is the one its mapping assigned, as the GPU
/// backend opens that GPU on a real cluster (dispar/smpi/SimulatedGpu.h).
void assignSimulatedGpu(const ProgramSpec& program, const gpu::MapFile& map, int instance) {
  const InstanceId id = *instanceOfRank(program, instance);
  const VnodeSpec& vnode = program.vnodes[id.vnode];
  if (!vnode.usesGpu) return;
  const gpu::MappedRank* mapped = map.instance(vnode.name, id.replica);
  if (mapped != nullptr && mapped->device) smpi::assignGpu(*mapped->device);
}
#endif

std::string launchMismatch(const ProgramSpec& program, const RankGroups& groups, int launchedRanks) {
  const bool fromMap = !groups.source.empty();
  if (!fromMap && !groups.threaded()) return rankCountMismatch(program, launchedRanks);
  return std::string(program.program ? program.program : "program") + " was launched with " +
         std::to_string(launchedRanks) + (launchedRanks == 1 ? " rank" : " ranks") + " but " +
         (fromMap ? "its mapping file '" + groups.source + "'" : std::string("its grouping")) + " groups its " +
         std::to_string(program.rankCount) + " VNODE instances into " + std::to_string(groups.rankCount()) +
         (groups.rankCount() == 1 ? " rank" : " ranks") + "; launch it with -n " + std::to_string(groups.rankCount()) +
         (fromMap ? " (as `streammap map` printed), or map it again" : "");
}

/// Everything one instance's thread does: its context, device and ports, the VNODE, the ends of its
/// streams. Failures abort the whole job, naming the instance.
/// `measure`: non-null when profiling, where its run-profile line goes.
/// `activity`: where it says what it does for stall detection (nullptr: detection off).
/// `trace`: non-null when tracing, its record; `traced`: its description in the trace.
void runInstance(int argc, char** argv, const ProgramSpec& program, DispatchFn dispatch, const RunOptions& options,
                 int instance, int rank, const LinkTable& links, unsigned window, std::pair<int, int> local,
                 InstanceMeasure* measure, InstanceActivity* activity, InstanceTrace* trace,
                 lang::TracedInstance* traced) {
  const ScopedActivity scopedActivity(activity);
  const InstanceId id = *instanceOfRank(program, instance);
  const VnodeSpec& vnode = program.vnodes[id.vnode];
  InstanceContext context;
  for (int i = 1; i < argc; ++i) context.args.emplace_back(argv[i]);
  context.replica = id.replica;
  context.replicas = vnode.replicas;
  ScopedContext scope(context);

  // Declared before the instance: its ports' staging buffers go before the device does.
  const std::unique_ptr<gpu::Device> device = startDevice(program, id, rank, options.devices, local);
  const gpu::detail::ScopedActiveDevice activeDevice(device.get());

  std::unique_ptr<RankInstance> ports;
  try {
    ports = std::make_unique<RankInstance>(program, id, links, window);
  } catch (const std::exception& error) {
    abortJob("rank " + std::to_string(rank) + " could not set up its ports: " + error.what());
  }

  const std::string who = std::string("vnode '") + vnode.name + "' (replica " + std::to_string(id.replica) + ", rank " +
                          std::to_string(rank) + ")";
  const PendingItems pendingItems([&ports] { ports->flushItems(); });
  if (trace != nullptr) {
    ports->trace(trace);
    *traced = {instance,   rank,       node_name(),
               vnode.name, id.replica, device ? "gpu" : vnode.usesGpu ? "host-path" : "cpu"};
  }
  if (measure != nullptr) {
    ports->profile(measure->portCpu);
    measure->line.rank = rank;
    measure->line.vnode = vnode.name;
    measure->line.replica = id.replica;
    measure->line.host = node_name();
    measure->line.device = device ? "gpu" : vnode.usesGpu ? "host-path" : "cpu";
    if (device) {
      const gpu::DeviceDescription description = device->describe();
      measure->line.deviceModel = description.model;
      measure->line.gpu = lang::ProfiledGpu{description.multiprocessors, description.clockKHz, description.ccMajor,
                                            description.ccMinor};
    } else {
      measure->line.deviceModel = cpuModel();
    }
    measure->line.fingerprint = vnode.fingerprint != nullptr ? vnode.fingerprint : "";
  }
  try {
    const EarlyExitGuard guard(who);
    const RunningInstance running(who);
    const double bodyStart = measure != nullptr ? profileClockSeconds() : 0;
    const double cpuStart = measure != nullptr && kRankOwnsThreadCpuClock ? threadCpuSeconds() : 0;
    if (measure != nullptr) liveProfile.add({&measure->line, &ports->waits(), bodyStart});
    gpu::detail::LaunchLog launches;
    launches.traceInto(trace);
    if (measure != nullptr || trace != nullptr) gpu::detail::setCurrentLaunchLog(&launches);
    if (trace != nullptr) trace->bodyStarts();
    ports->prime();
    dispatch(*ports);
    gpu::detail::setCurrentLaunchLog(nullptr);
    if (trace != nullptr) {
      trace->bodyEnds();
      launches.finish();  // the last GPU launches' spans
    }
    if (measure != nullptr) {
      // While the instance's device is open: its last GPU launches' events are waited for here.
      for (const gpu::detail::LaunchLog::Site& site : launches.finish())
        measure->kernels.push_back(KernelProfile{rank, vnode.name, id.replica, site.kernel, site.site, site.device,
                                                 site.launches, site.seconds});
      // Compute: the body's time outside its ports (the ends of its streams below are not the body's).
      recordBodyTimes(measure->line, ports->waits(), bodyStart);
      measure->line.cpuSeconds = kRankOwnsThreadCpuClock ? threadCpuSeconds() - cpuStart : measure->line.computeSeconds;
      if (ports->waits().measureCpu)
        measure->line.computeCpuSeconds =
            computeCpuSeconds(measure->line.cpuSeconds, ports->waits().cpuInPorts(), measure->line.computeSeconds);
    }
    ports->finish();
    if (measure != nullptr) {
      liveProfile.remove(&measure->line);
      measure->pipes.assign(static_cast<std::size_t>(program.pipeCount), PipeTraffic{});
      ports->addTraffic(measure->pipes);
    }
  } catch (const std::exception& error) {
    abortJob(who + " failed: " + error.what());
  } catch (...) {
    abortJob(who + " failed: an exception that is not a std::exception");
  }
  detail::unbindPipes();
}

}  // namespace

int run(int argc, char** argv, const ProgramSpec& program, DispatchFn dispatch) {
  return run(argc, argv, program, dispatch, RunOptions{});
}

int run(int argc, char** argv, const ProgramSpec& program, DispatchFn dispatch, const gpu::DeviceBackend* devices) {
  RunOptions options;
  options.devices = devices;
  return run(argc, argv, program, dispatch, options);
}

int run(int argc, char** argv, const ProgramSpec& declared, DispatchFn dispatch, const RunOptions& options) {
  const double runStart = profileClockSeconds();  // the profile's wall time (rank 0's) counts from here
  // Every rank sees the same spec, grouping and size, so all of them leave early together: no hang.
  std::string problem = validateProgram(declared);
  if (!problem.empty()) problem = "invalid program description: " + problem;
  RankGroups groups;
  std::optional<gpu::MapFile> map;
  if (problem.empty()) problem = chooseGroups(declared, options, groups, map);
  // The program as it runs: the mapping may deal pipes of the default round robin on demand
  // (docs/streammap.md, "Demand by default").
  std::vector<PipeSpec> dealtPipes;
  ProgramSpec dealt = declared;
  if (problem.empty() && map && !map->demandPipes.empty()) {
    problem = dealOnDemand(declared, map->demandPipes, dealtPipes, dealt);
    if (!problem.empty()) problem = "mapping file '" + map->path + "': " + problem;
  }
  const ProgramSpec& program = dealt;
  std::string stallError;
  std::optional<StallSettings> stall = readStallSettings(stallError);
  if (problem.empty() && !stall) problem = stallError;
  std::string traceError;
  const std::optional<TraceSettings> traceSettings = readTraceSettings(traceError);
  if (problem.empty() && !traceSettings) problem = traceError;
  std::string finalizeError;
  const std::optional<double> finalizeSeconds = readFinalizeSeconds(finalizeError);
  if (problem.empty() && !finalizeSeconds) problem = finalizeError;
#ifdef DISPAR_TARGET_SMPI
  stall = StallSettings{0, false, 0};  // a simulated job's time is SimGrid's; a watch thread cannot run there
#endif
  // The stall watch is a thread of its own that calls MPI (threadLevelForStallDetection's rule, from the
  // settings already read: off under SMPI).
  MpiSession session(&argc, &argv, groups.threaded() || (stall && stall->watching()));
  session.limitFinalize(finalizeSeconds.value_or(0));
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (problem.empty() && size != groups.rankCount()) problem = launchMismatch(program, groups, size);
#ifdef DISPAR_TARGET_SMPI
  // SMPI runs each rank as one simulated process: MPI calls from the threads of a rank group fail there.
  if (problem.empty() && groups.threaded())
    problem = "this grouping runs several VNODE instances in one rank, on threads that call MPI, which the SMPI "
              "target cannot simulate; map with --rank-per-instance (streammap simulate does)";
#endif
  if (problem.empty() && groups.threaded() && session.threadLevel() < MPI_THREAD_MULTIPLE)
    problem = std::string("this grouping runs several VNODE instances in one rank, on threads that call MPI: it needs "
                          "MPI_THREAD_MULTIPLE, but the MPI library provides ") +
              threadLevelName(session.threadLevel()) +
              "; use an MPI built with thread support, or map with --rank-per-instance";
  if (!problem.empty()) {
    if (rank == 0) report(problem);
    return session.finish(kLaunchErrorExit);
  }

  const unsigned window = agreedProgramWindow(rank);
  if (window == 0) return session.finish(kLaunchErrorExit);
  const StallSettings stallSettings = agreedStallSettings(rank, *stall, session.threadLevel(), session.ownsMpi());
  // Where the instance's GPU is chosen: its rank's position on the node (collective).
  // Each rank's node, gathered once when first needed (a collective; every rank needs it at the same
  // points, for the GPU choice, the oversubscription test, the trace's clock and the heartbeat's report).
  std::optional<std::vector<std::string>> gatheredNodes;
  const auto nodeNames = [&]() -> const std::vector<std::string>& {
    if (!gatheredNodes) gatheredNodes = gatherNodeNames();
    return *gatheredNodes;
  };
  std::optional<std::vector<int>> gatheredLeaders;
  const auto leaders = [&]() -> const std::vector<int>& {
    if (!gatheredLeaders) gatheredLeaders = nodeLeaders(nodeNames());
    return *gatheredLeaders;
  };
  const std::pair<int, int> local =
      options.devices != nullptr ? localRankAndSize(leaders()) : std::pair<int, int>{0, 1};

  std::unique_ptr<LinkTable> links;
  try {
    links = std::make_unique<LinkTable>(program, groups, rank, window);
  } catch (const std::exception& error) {
    abortJob("rank " + std::to_string(rank) + " could not set up its links: " + error.what());
  }

  const std::vector<int>& instances = groups.instancesOfRank[static_cast<std::size_t>(rank)];
  std::vector<InstanceActivity> activities(stallSettings.watching() ? instances.size() : 0);
  const auto activityOf = [&](std::size_t i) { return activities.empty() ? nullptr : &activities[i]; };
  std::unique_ptr<StallWatch> stallWatch;
  if (stallSettings.watching())
    stallWatch = std::make_unique<StallWatch>(program, groups, rank, stallSettings, activities, nodeNames());
#ifndef DISPAR_TARGET_SMPI
  {
    std::string names;
    for (const int instance : instances) {
      const InstanceId id = *instanceOfRank(program, instance);
      names += (names.empty() ? "vnode '" : ", vnode '") + std::string(program.vnodes[id.vnode].name) + "' (replica " +
               std::to_string(id.replica) + ")";
    }
    installDeathReport(rank, names);
  }
#endif
#ifdef DISPAR_TARGET_SMPI
  if (map) assignSimulatedGpu(program, *map, instances.front());  // one instance per rank there
#endif
  if (instances.size() > 1) makeLibrariesThreadSafe();
  LocalLink::setSpin(instances.size() <= availableCores() ? LocalLink::kSpinWithCores : LocalLink::kSpinWithoutCores);
#ifndef DISPAR_TARGET_SMPI
  const bool nodeCrowded = nodeOversubscribed(leaders(), instances.size());  // collective, on every rank
  Waiting::setCrowded(nodeCrowded || instances.size() > availableCores());
#else
  const bool nodeCrowded = false;  // simulated ranks wait in simulated time
#endif
  // Run traces: one clock for all ranks (collective), a record per instance.
  const bool tracing = !traceSettings->path.empty();
#ifdef DISPAR_TARGET_SMPI
  const std::vector<int> clockNodes;  // the simulated clock is one for all: no nodes to align
#else
  const std::vector<int>& clockNodes = tracing ? leaders() : std::vector<int>{};
#endif
  const auto [clockOffset, clock] = tracing ? alignTraceClock(rank, clockNodes) : std::pair<double, std::string>{};
  std::vector<InstanceTrace> traces;
  std::vector<lang::TracedInstance> traced(tracing ? instances.size() : 0);
  if (tracing)
    for (const int instance : instances) traces.emplace_back(instance, traceSettings->eventsPerInstance);
  const auto traceOf = [&](std::size_t i) { return traces.empty() ? nullptr : &traces[i]; };
  const auto tracedOf = [&](std::size_t i) { return traced.empty() ? nullptr : &traced[i]; };
  const std::string profile = profilePath();
  std::vector<InstanceMeasure> measures(profile.empty() ? 0 : instances.size());
  const auto measureOf = [&](std::size_t i) { return measures.empty() ? nullptr : &measures[i]; };
  if (!profile.empty()) liveProfile.begin(program, profile);
  const bool measurePortCpu = kRankOwnsThreadCpuClock && !profile.empty() && nodeCrowded;
  for (InstanceMeasure& measure : measures) measure.portCpu = measurePortCpu;
  if (instances.size() == 1) {
    runInstance(argc, argv, program, dispatch, options, instances.front(), rank, *links, window, local, measureOf(0),
                activityOf(0), traceOf(0), tracedOf(0));
  } else {
    std::vector<std::thread> threads;
    threads.reserve(instances.size());
    for (std::size_t i = 0; i < instances.size(); ++i)
      threads.emplace_back([&, i] {
        runInstance(argc, argv, program, dispatch, options, instances[i], rank, *links, window, local, measureOf(i),
                    activityOf(i), traceOf(i), tracedOf(i));
      });
    for (std::thread& thread : threads) thread.join();
  }
  stallWatch.reset();  // returns once every rank's instances have finished
  links.reset();
  if (tracing) {
    std::vector<InstanceTrace*> mine;
    for (InstanceTrace& trace : traces) mine.push_back(&trace);
    std::string error;
    try {
      if (!gatherTrace(*traceSettings, program, mine, traced, rank, runStart, clockOffset, clock, error))
        report("warning: no run trace: " + error);
    } catch (const std::exception& failure) {
      report(std::string("warning: no run trace: ") + failure.what());
    }
  }
  if (profile.empty()) return session.finish(0);
  liveProfile.end();
  std::vector<InstanceProfile> lines;
  std::vector<KernelProfile> kernels;
  std::vector<PipeTraffic> pipes(static_cast<std::size_t>(program.pipeCount));
  for (const InstanceMeasure& measure : measures) {
    lines.push_back(measure.line);
    kernels.insert(kernels.end(), measure.kernels.begin(), measure.kernels.end());
    for (std::size_t p = 0; p < pipes.size(); ++p) {
      pipes[p].messages += measure.pipes[p].messages;
      pipes[p].bytes += measure.pipes[p].bytes;
    }
  }
  std::vector<SplitSiteProfile> splitSites;
  for (const dispar::detail::SplitSiteRates& site : dispar::detail::splitSiteRates())
    splitSites.push_back({rank, site.site, site.gpuRate, site.cpuThreadRate});
  std::string error;
  try {
    if (!gatherProfile(profile, program, lines, pipes, kernels, splitSites, rank, runStart, error))
      report("warning: no run profile: " + error);
  } catch (const std::exception& failure) {
    report(std::string("warning: no run profile: ") + failure.what());
  }
  return session.finish(0);
}

}  // namespace dispar::rt
