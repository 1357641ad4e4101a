// Equal replicas (bench/demand/README.md): source -> two worker replicas that pass each message on ->
// sink, at bench/pipe_bandwidth's message sizes, with split(rr) and with split(demand) on the source's
// pipe (the sink merges the workers' outputs in order either way: by turns, or by sequence number).
// The two programs alternate several times per size and each keeps its best sink-side time; rank 3
// (the sink) prints the table. Driven through dispar::rt::run exactly as generated code does.
#include <dispar/runtime.h>

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

constexpr std::size_t kSizes[] = {8, 32, 128, 512, 2048, 8192, 32768, 65536, 262144, 1 << 20, 4 << 20, 16 << 20};
constexpr std::size_t kSizeCount = sizeof(kSizes) / sizeof(kSizes[0]);
constexpr int kRepetitions = 7;
constexpr std::size_t kWarmupMessages = 8;

/// Enough messages that each size moves ~16 MiB, within [24, 10000].
std::size_t messageCount(std::size_t bytes) {
  return std::clamp<std::size_t>((std::size_t{16} << 20) / bytes, 24, 10000);
}

double best[2][kSizeCount];  // [rr, demand]: best sink-side time per size
std::size_t currentSize;
int currentMode;  // 0: split(rr), 1: split(demand)
bool inOrder = true;

std::vector<unsigned char> sendBuffer(kSizes[kSizeCount - 1], 0x5a);

void dispar_vnode_source(dispar::OutPort<unsigned char>& in) {
  const std::size_t total = kWarmupMessages + messageCount(kSizes[currentSize]);
  for (std::size_t i = 0; i < total; ++i) {
    sendBuffer[0] = static_cast<unsigned char>(i);  // the sink checks the order by it
    in.write(sendBuffer.data(), kSizes[currentSize]);
  }
}

void dispar_vnode_worker(dispar::InPort<unsigned char>& in, dispar::OutPort<unsigned char>& out) {
  std::vector<unsigned char> message;
  while (in.read(message)) out.write(message);
}

void dispar_vnode_sink(dispar::InPort<unsigned char>& out) {
  const std::size_t count = messageCount(kSizes[currentSize]);
  std::vector<unsigned char> message;
  std::size_t received = 0;
  double start = 0;
  while (out.read(message)) {
    inOrder = inOrder && message.size() == kSizes[currentSize] && message[0] == static_cast<unsigned char>(received);
    if (++received == kWarmupMessages) start = MPI_Wtime();
  }
  const double seconds = MPI_Wtime() - start;
  inOrder = inOrder && received == kWarmupMessages + count;
  double& slot = best[currentMode][currentSize];
  slot = slot == 0 ? seconds : std::min(slot, seconds);
}

const dispar::rt::VnodeSpec kVnodes[] = {{"source", 0, 1, "bench.dsp:1:1", false},
                                         {"worker", 1, 2, "bench.dsp:2:1", false},
                                         {"sink", 3, 1, "bench.dsp:3:1", false}};
using dispar::rt::MergeOrder;
using dispar::rt::SplitMode;
const dispar::rt::PipeSpec kPipes[2][2] = {
    {{"in", "unsigned char", 1, 0, 1, MergeOrder::RoundRobin, 0, SplitMode::RoundRobin},
     {"out", "unsigned char", 1, 1, 2, MergeOrder::RoundRobin, 0, SplitMode::RoundRobin}},
    {{"in", "unsigned char", 1, 0, 1, MergeOrder::RoundRobin, 0, SplitMode::Demand},
     {"out", "unsigned char", 1, 1, 2, MergeOrder::RoundRobin, 0, SplitMode::RoundRobin}}};
const dispar::rt::ProgramSpec kPrograms[2] = {{"demand_equal", kVnodes, 3, kPipes[0], 2, 4},
                                              {"demand_equal", kVnodes, 3, kPipes[1], 2, 4}};

void dispatch(dispar::rt::Instance& instance) {
  switch (instance.vnode()) {
    case 0: {
      auto in = instance.out<unsigned char>(0);
      dispar_vnode_source(in);
      break;
    }
    case 1: {
      auto in = instance.in<unsigned char>(0);
      auto out = instance.out<unsigned char>(1);
      dispar_vnode_worker(in, out);
      break;
    }
    case 2: {
      auto out = instance.in<unsigned char>(1);
      dispar_vnode_sink(out);
      break;
    }
  }
}

void printTable() {
  std::printf("demand_equal: source -> 2 worker replicas -> sink, one rank each; best of %d runs per split "
              "(alternating), sink-side time\n",
              kRepetitions);
  std::printf("%10s %9s %14s %18s %7s\n", "size", "messages", "split(rr) MB/s", "split(demand) MB/s", "ratio");
  double worst = 1e9;
  for (std::size_t i = 0; i < kSizeCount; ++i) {
    const std::size_t size = kSizes[i];
    const double bytes = static_cast<double>(size * messageCount(size));
    const double rr = bytes / best[0][i] / 1e6, demand = bytes / best[1][i] / 1e6;
    worst = std::min(worst, demand / rr);
    char label[32];
    if (size >= (1 << 20))
      std::snprintf(label, sizeof label, "%zu MiB", size >> 20);
    else if (size >= 1024)
      std::snprintf(label, sizeof label, "%zu KiB", size >> 10);
    else
      std::snprintf(label, sizeof label, "%zu B", size);
    std::printf("%10s %9zu %14.1f %18.1f %7.3f\n", label, messageCount(size), rr, demand, demand / rr);
  }
  std::printf("ratio = demand / rr; lowest %.3f (target >= 0.97)\n", worst);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, dispar::rt::threadLevelForStallDetection(), &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    if (rank == 0) std::fprintf(stderr, "demand_equal: run with exactly 4 ranks (mpiexec -n 4), not %d\n", size);
    MPI_Finalize();
    return 2;
  }
  int status = 0;
  for (currentSize = 0; currentSize < kSizeCount && status == 0; ++currentSize)
    for (int r = 0; r < kRepetitions && status == 0; ++r)
      for (currentMode = 0; currentMode < 2 && status == 0; ++currentMode) {
        MPI_Barrier(MPI_COMM_WORLD);
        status = dispar::rt::run(argc, argv, kPrograms[currentMode], dispatch);
      }
  if (rank == 3 && status == 0) {
    if (!inOrder) {
      std::fprintf(stderr, "demand_equal: the sink received messages out of order or missing\n");
      status = 1;
    } else {
      printTable();
    }
  }
  MPI_Finalize();
  return status;
}
