// dispar::rt::run: the main of every generated program. One MPI rank runs one VNODE instance.
#include "DeviceState.h"
#include "MpiHandles.h"
#include "Ports.h"
#include "Program.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace dispar {
namespace {

/// Who this process is while run() executes; what dispar::args() and friends report.
struct InstanceContext {
  std::vector<std::string> args;
  int replica = 0;
  int replicas = 1;
};

const InstanceContext kOutsideRun{};
const InstanceContext* currentContext = nullptr;

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
int replicas() { return context().replicas; }

}  // namespace dispar

namespace dispar::rt {
namespace {

constexpr int kLaunchErrorExit = 2;  // wrong rank count, bad environment, bad program description
constexpr int kFailureExit = 3;      // a VNODE failed; the MPI_Abort error code

/// Initialises MPI unless the caller already did (tests run several programs in one process), and
/// finalises it only in the first case.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv) {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
      MPI_Init(argc, argv);
      owns_ = true;
    }
  }
  ~MpiSession() {
    if (owns_) MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  bool owns_ = false;
};

void report(const std::string& message) {
  std::fflush(stdout);
  // One write per line so that lines of different ranks do not interleave.
  std::fprintf(stderr, "dispar: %s\n", message.c_str());
  std::fflush(stderr);
}

[[noreturn]] void abortJob(const std::string& message) {
  report(message);
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
  explicit EarlyExitGuard(const std::string& who) {
    static const bool registered = std::atexit(&EarlyExitGuard::onExit) == 0;
    (void)registered;
    running = who;
  }
  ~EarlyExitGuard() { running.clear(); }
  EarlyExitGuard(const EarlyExitGuard&) = delete;
  EarlyExitGuard& operator=(const EarlyExitGuard&) = delete;

 private:
  static void onExit() {
    if (running.empty()) return;
    const std::string who = std::move(running);
    abortJob(who + " called exit() before its body returned: its pipes were not finished (return from the "
                   "VNODE body instead)");
  }
  static inline std::string running;
};

/// The VNODE instance of this rank: one communicator per pipe and the port ends it owns.
class RankInstance final : public Instance {
 public:
  RankInstance(const ProgramSpec& program, InstanceId id, unsigned programWindow) : program_(program), id_(id) {
    // Every rank duplicates one communicator per pipe, in pipe order (collective over all ranks).
    communicators_.reserve(static_cast<std::size_t>(program.pipeCount));
    for (int p = 0; p < program.pipeCount; ++p) communicators_.push_back(Communicator::duplicate(MPI_COMM_WORLD));
    ports_.resize(static_cast<std::size_t>(program.pipeCount));
    const std::string owner = std::string("vnode '") + program.vnodes[id.vnode].name + "'";
    for (const PortPlan& plan : planPorts(program, id)) {
      const PipeSpec& pipe = program.pipes[plan.pipe];
      const unsigned window = effectiveWindow(pipe, programWindow);
      const MPI_Comm comm = communicators_[static_cast<std::size_t>(plan.pipe)].get();
      auto& slot = ports_[static_cast<std::size_t>(plan.pipe)];
      if (plan.role == PortRole::Writer)
        slot = std::make_unique<OutPortEnd>(pipe, comm, window, owner, plan.peers);
      else
        slot = std::make_unique<InPortEnd>(pipe, comm, window, owner, plan.peers);
    }
  }

  int vnode() const override { return id_.vnode; }
  int replica() const override { return id_.replica; }

  detail::PortState& port(int pipe) override {
    if (pipe < 0 || pipe >= program_.pipeCount || !ports_[static_cast<std::size_t>(pipe)])
      throw PipeError(std::string("vnode '") + program_.vnodes[id_.vnode].name + "' has no port on pipe " +
                      (pipe >= 0 && pipe < program_.pipeCount ? std::string("'") + program_.pipes[pipe].name + "'"
                                                              : std::to_string(pipe)));
    return *ports_[static_cast<std::size_t>(pipe)];
  }

  /// After the VNODE returns: end every output stream first (downstream can then finish), then
  /// consume what is left of the inputs, then collect the outputs' last credits.
  void finish() {
    for (auto& port : ports_)
      if (auto* out = dynamic_cast<OutPortEnd*>(port.get())) out->close();
    for (auto& port : ports_)
      if (auto* in = dynamic_cast<InPortEnd*>(port.get())) in->finish();
    for (auto& port : ports_)
      if (auto* out = dynamic_cast<OutPortEnd*>(port.get())) out->finish();
  }

 private:
  const ProgramSpec& program_;
  InstanceId id_;
  std::vector<Communicator> communicators_;                // destroyed after the ports that use them
  std::vector<std::unique_ptr<detail::PortState>> ports_;  // by pipe; null where this instance has no end
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

/// This rank's position among the job's ranks on its node (collective over MPI_COMM_WORLD).
std::pair<int, int> localRankAndSize() {
  MPI_Comm shared = MPI_COMM_NULL;
  DISPAR_MPI(MPI_Comm_split_type, MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(shared, &rank);
  MPI_Comm_size(shared, &size);
  MPI_Comm_free(&shared);
  return {rank, size};
}

bool verbose() {
  const char* text = std::getenv("DISPAR_VERBOSE");
  return text != nullptr && std::string(text) == "1";
}

/// The device of a CG rank (nullptr: the host path). Every rank calls it: finding the local rank is
/// collective. Aborts the job when the backend refuses the rank's device.
std::unique_ptr<gpu::Device> startDevice(const ProgramSpec& program, InstanceId id, int rank,
                                         const gpu::DeviceBackend* devices) {
  const VnodeSpec& vnode = program.vnodes[id.vnode];
  if (devices == nullptr) {
    if (vnode.usesGpu && verbose())
      report("rank " + std::to_string(rank) + " vnode '" + vnode.name +
             "': host path (the program was built without CUDA)");
    return nullptr;
  }
  const auto [localRank, localSize] = localRankAndSize();
  if (!vnode.usesGpu) return nullptr;
  try {
    const gpu::RankInfo info{program.program, vnode.name, vnode.location, rank, id.replica, localRank, localSize};
    return devices->start(info);
  } catch (const std::exception& error) {
    abortJob(error.what());
  }
}

}  // namespace

int run(int argc, char** argv, const ProgramSpec& program, DispatchFn dispatch) {
  return run(argc, argv, program, dispatch, nullptr);
}

int run(int argc, char** argv, const ProgramSpec& program, DispatchFn dispatch, const gpu::DeviceBackend* devices) {
  MpiSession session(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  // Every rank sees the same spec and size, so all of them leave here together: no hang.
  const std::string problem = validateProgram(program);
  if (!problem.empty()) {
    if (rank == 0) report("invalid program description: " + problem);
    return kLaunchErrorExit;
  }
  if (size != program.rankCount) {
    if (rank == 0) report(rankCountMismatch(program, size));
    return kLaunchErrorExit;
  }

  const InstanceId id = *instanceOfRank(program, rank);
  const VnodeSpec& vnode = program.vnodes[id.vnode];
  InstanceContext context;
  for (int i = 1; i < argc; ++i) context.args.emplace_back(argv[i]);
  context.replica = id.replica;
  context.replicas = vnode.replicas;
  ScopedContext scope(context);

  // Declared before the instance: its ports' staging buffers go before the device does.
  const std::unique_ptr<gpu::Device> device = startDevice(program, id, rank, devices);
  const gpu::detail::ScopedActiveDevice activeDevice(device.get());

  std::unique_ptr<RankInstance> instance;
  try {
    const unsigned window = agreedProgramWindow(rank);
    if (window == 0) return kLaunchErrorExit;
    instance = std::make_unique<RankInstance>(program, id, window);
  } catch (const std::exception& error) {
    abortJob("rank " + std::to_string(rank) + " could not set up its ports: " + error.what());
  }

  const std::string who = std::string("vnode '") + vnode.name + "' (replica " + std::to_string(id.replica) +
                          ", rank " + std::to_string(rank) + ")";
  try {
    const EarlyExitGuard guard(who);
    dispatch(*instance);
    instance->finish();
  } catch (const std::exception& error) {
    abortJob(who + " failed: " + error.what());
  } catch (...) {
    abortJob(who + " failed: an exception that is not a std::exception");
  }
  instance.reset();
  return 0;
}

}  // namespace dispar::rt
