// What run profiles and run traces cost (docs/runtime.md, "Run profiles", "Run traces"): 64 KiB messages
// from rank 0 to rank 1 through a DISPAR pipe, timed inside the reader as bench/pipe_bandwidth does, in
// turn with neither, with DISPAR_PROFILE set (every port call timed, the profile gathered and written at
// the end) and with DISPAR_TRACE set (every port call and message end recorded, the trace gathered and
// written), best of 9 each in the same run. Prints the rates and the overheads (targets: profile <= 2%,
// trace <= 5%). Run with `mpiexec -n 2`.
//
// `profile_overhead --timer-cost` (no MPI): what profiling adds to one port call, in ns, without and with
// the CPU time measured (rt::PortWaitTimer, the timer every port call runs when profiling; with the CPU
// time, a call that waits, sampling the thread CPU clock in one wait of eight), and to one
// host-path kernel launch (gpu::LaunchTimer recording into a launch log), then what tracing adds to one port
// call (rt::TraceSpanTimer) and to one message end (InstanceTrace::sent); run.sh multiplies them by the
// port calls, messages and launches of a profiled FIR run, the direct cost there.
#include "LaunchLog.h"
#include "Profile.h"
#include "Trace.h"

#include <dispar/runtime.h>

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

namespace rt = dispar::rt;

constexpr std::size_t kBytes = 64 << 10;
constexpr std::size_t kMessages = 4000;
constexpr int kRepetitions = 9;

double readerSeconds = 0;

void dispatch(rt::Instance& instance) {
  if (instance.vnode() == 0) {
    auto out = instance.out<unsigned char>(0);
    const std::vector<unsigned char> message(kBytes, 0x5a);
    for (std::size_t i = 0; i < kMessages + 4; ++i) out.write(message);
    return;
  }
  auto in = instance.in<unsigned char>(0);
  std::vector<unsigned char> message;
  for (int i = 0; i < 4; ++i) in.read(message);  // warm-up
  const double start = MPI_Wtime();
  while (in.read(message)) {
  }
  readerSeconds = MPI_Wtime() - start;
}

enum class Mode { Plain, Profiled, Traced };

double runOnce(int argc, char** argv, Mode mode, const std::string& path) {
  static const rt::VnodeSpec vnodes[] = {{"writer", 0, 1, "profile.dsp:1:1", false},
                                         {"reader", 1, 1, "profile.dsp:2:1", false}};
  static const rt::PipeSpec pipes[] = {
      {"bytes", "unsigned char", 1, 0, 1, rt::MergeOrder::RoundRobin, 0, rt::SplitMode::RoundRobin}};
  static const rt::ProgramSpec program = {"profile_overhead", vnodes, 2, pipes, 1, 2};
  unsetenv("DISPAR_PROFILE");
  unsetenv("DISPAR_TRACE");
  if (mode == Mode::Profiled) setenv("DISPAR_PROFILE", path.c_str(), 1);
  if (mode == Mode::Traced) setenv("DISPAR_TRACE", path.c_str(), 1);
  if (rt::run(argc, argv, program, dispatch) != 0) std::fprintf(stderr, "profile_overhead: run failed\n");
  double seconds = readerSeconds;
  MPI_Bcast(&seconds, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  return seconds;
}

/// Nanoseconds per call of `timed` (one timer's life), best of five rounds of 200,000.
template <class Timed>
double nanosecondsPerCall(Timed timed) {
  constexpr int kCalls = 200000;
  double best = 1e9;
  for (int round = 0; round < 5; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) timed();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, seconds / kCalls * 1e9);
  }
  return best;
}

void printTimerCosts() {
  std::atomic<double> wait{0};
  rt::PortWaits waits;
  waits.measureCpu = true;
  const double port = nanosecondsPerCall([&] { const rt::PortWaitTimer timer(&wait, nullptr); });
  // Where the CPU time is measured, a call that waits (every one, here: the upper bound) reads the
  // thread's CPU clock in one wait of PortWaits::kWaitSample.
  const double portCpu = nanosecondsPerCall([&] {
    const rt::PortWaitTimer timer(&wait, &waits);
    rt::noteWait();
  });
  dispar::gpu::detail::LaunchLog log;
  dispar::gpu::detail::setCurrentLaunchLog(&log);
  const double launch = nanosecondsPerCall([] { const dispar::gpu::LaunchTimer timer("firKernel", "fir.dsp:117:5"); });
  dispar::gpu::detail::setCurrentLaunchLog(nullptr);
  // Tracing: a port call's span (two clock reads and a record) and one message end (a clock read and a
  // record), into a buffer that never fills.
  rt::InstanceTrace trace(0, std::size_t{1} << 24);
  const double span =
      nanosecondsPerCall([&] { const rt::TraceSpanTimer timer(&trace, dispar::lang::TraceSpanKind::Write, 0); });
  std::uint64_t index = 0;
  const double messageEnd = nanosecondsPerCall([&] { trace.sent(0, 1, ++index); });
  std::printf("%.1f %.1f %.1f %.1f %.1f\n", port, portCpu, launch, span, messageEnd);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--timer-cost") == 0) {
    printTimerCosts();
    return 0;
  }
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string path = "/tmp/dispar_profile_overhead." + std::to_string(getpid()) + ".json";
  double plain = 1e9, profiled = 1e9, traced = 1e9;
  for (int r = 0; r < kRepetitions; ++r) {
    plain = std::min(plain, runOnce(argc, argv, Mode::Plain, path));
    profiled = std::min(profiled, runOnce(argc, argv, Mode::Profiled, path));
    traced = std::min(traced, runOnce(argc, argv, Mode::Traced, path));
  }
  if (rank == 0) {
    const double bytes = static_cast<double>(kMessages * kBytes);
    std::printf("run profiles and traces: %zu messages of 64 KiB, rank 0 -> rank 1, best of %d, same run\n", kMessages,
                kRepetitions);
    std::printf("  with neither:        %8.1f MB/s\n", bytes / plain / 1e6);
    std::printf("  with DISPAR_PROFILE: %8.1f MB/s, overhead %+.2f%% (target <= 2%%)\n", bytes / profiled / 1e6,
                (profiled / plain - 1) * 100);
    std::printf("  with DISPAR_TRACE:   %8.1f MB/s, overhead %+.2f%% (target <= 5%%)\n", bytes / traced / 1e6,
                (traced / plain - 1) * 100);
    std::remove(path.c_str());
  }
  MPI_Finalize();
  return 0;
}
