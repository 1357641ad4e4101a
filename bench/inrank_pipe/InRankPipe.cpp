// In-rank pipes (docs/runtime.md, "Rank groups"): a writer and a reader grouped into one rank, their pipe
// an in-memory queue. Streams messages of 64 KiB to 16 MiB with copying writes (`write(const
// std::vector&)`: one copy, into a vector the reader gave back) and with moved writes
// (`write(std::move(v))`: no copy), and compares each with memcpy of the same bytes between two
// long-lived buffers in the same run. Best of several runs per case. Run it without mpiexec (MPI
// singleton) or with `mpiexec -n 1`. With `--busy`, a process of its own spins on one core for the whole
// run, memcpy's included: the node has fewer free cores than the rank has instances, the situation
// grouping is made for (issue 38's target there: copying >= 0.5 of memcpy at every size).
#include <dispar/runtime.h>

#include <mpi.h>

#include <csignal>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

namespace rt = dispar::rt;

constexpr std::size_t kSizes[] = {std::size_t{64} << 10, std::size_t{256} << 10, std::size_t{1} << 20,
                                  std::size_t{4} << 20, std::size_t{16} << 20};
constexpr int kRepetitions = 7;
constexpr std::size_t kWarmup = 4;

std::size_t messageCount(std::size_t bytes) {
  return std::clamp<std::size_t>((std::size_t{256} << 20) / bytes, 16, 4000);
}

// What the current run streams (set before each run).
std::size_t currentBytes = 0;
bool moved = false;
double readerSeconds = 0;
std::vector<unsigned char> source;  // the copying writer's message

using Clock = std::chrono::steady_clock;

void writer(dispar::OutPort<unsigned char>& out) {
  const std::size_t count = kWarmup + messageCount(currentBytes);
  if (!moved) {
    for (std::size_t i = 0; i < count; ++i) out.write(source);
    return;
  }
  // Made before the clock starts (the reader's clock starts after the warm-up messages).
  std::vector<std::vector<unsigned char>> messages(count);
  for (auto& message : messages) message.assign(currentBytes, 0x5a);
  for (auto& message : messages) out.write(std::move(message));
}

void reader(dispar::InPort<unsigned char>& in) {
  std::vector<unsigned char> message;
  for (std::size_t i = 0; i < kWarmup; ++i) in.read(message);
  const auto start = Clock::now();
  std::size_t received = 0;
  while (in.read(message)) received += message.size();
  readerSeconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (received != messageCount(currentBytes) * currentBytes) std::fprintf(stderr, "inrank_pipe: lost bytes\n");
}

void dispatch(rt::Instance& instance) {
  if (instance.vnode() == 0) {
    auto out = instance.out<unsigned char>(0);
    writer(out);
  } else {
    auto in = instance.in<unsigned char>(0);
    reader(in);
  }
}

double pipeSeconds(int argc, char** argv) {
  static const rt::VnodeSpec vnodes[] = {{"writer", 0, 1, "inrank.dsp:1:1", false},
                                         {"reader", 1, 1, "inrank.dsp:2:1", false}};
  static const rt::PipeSpec pipes[] = {
      {"bytes", "unsigned char", 1, 0, 1, rt::MergeOrder::RoundRobin, 0, rt::SplitMode::RoundRobin}};
  static const rt::ProgramSpec program = {"inrank_pipe", vnodes, 2, pipes, 1, 2};
  rt::RunOptions options;
  options.grouping = {{0, 1}};
  if (rt::run(argc, argv, program, dispatch, options) != 0) std::fprintf(stderr, "inrank_pipe: run failed\n");
  return readerSeconds;
}

double memcpySeconds(std::vector<unsigned char>& target) {
  const std::size_t count = messageCount(currentBytes);
  const auto start = Clock::now();
  for (std::size_t i = 0; i < count; ++i) {
    std::memcpy(target.data(), source.data(), currentBytes);
    asm volatile("" : : "r"(target.data()) : "memory");  // every copy happens
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

/// A process that spins until killed, competing for the cores.
pid_t startCompetitor() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives the benchmark, however it ends
    for (volatile unsigned long spin = 0;; spin = spin + 1) {
    }
  }
  return pid;
}

int main(int argc, char** argv) {
  bool busy = false;
  for (int i = 1; i < argc; ++i) busy = busy || std::strcmp(argv[i], "--busy") == 0;
  // Before MPI starts: a child forked later would be MPI's to account for.
  const pid_t competitor = busy ? startCompetitor() : -1;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  std::printf("in-rank pipe (writer and reader grouped in one rank) vs memcpy of the same bytes, best of %d%s\n",
              kRepetitions, busy ? ", one busy process competing for the cores" : "");
  std::printf("%10s %14s %14s %10s %16s %14s\n", "bytes", "memcpy GB/s", "copying GB/s", "ratio", "moved GB/s-eq",
              "moved ratio");
  double worstCopyRatio = 1e9;
  for (std::size_t bytes : kSizes) {
    currentBytes = bytes;
    source.assign(bytes, 0x5a);
    std::vector<unsigned char> target(bytes, 0);
    double bestMemcpy = 1e9, bestCopy = 1e9, bestMoved = 1e9;
    for (int r = 0; r < kRepetitions; ++r) {
      bestMemcpy = std::min(bestMemcpy, memcpySeconds(target));
      moved = false;
      bestCopy = std::min(bestCopy, pipeSeconds(argc, argv));
      moved = true;
      bestMoved = std::min(bestMoved, pipeSeconds(argc, argv));
    }
    const double total = static_cast<double>(messageCount(bytes) * bytes);
    const double memcpyRate = total / bestMemcpy / 1e9, copyRate = total / bestCopy / 1e9,
                 movedRate = total / bestMoved / 1e9;
    worstCopyRatio = std::min(worstCopyRatio, copyRate / memcpyRate);
    std::printf("%10zu %14.2f %14.2f %9.2fx %16.1f %13.1fx\n", bytes, memcpyRate, copyRate, copyRate / memcpyRate,
                movedRate, movedRate / memcpyRate);
  }
  std::printf("worst copying ratio (target >= %.2f): %.2f\n", busy ? 0.5 : 0.8, worstCopyRatio);
  MPI_Finalize();
  if (competitor > 0) {
    ::kill(competitor, SIGKILL);
    ::waitpid(competitor, nullptr, 0);
  }
  return 0;
}
