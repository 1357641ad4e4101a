// Moves the same float stream from rank 0 to rank 1 through a DISPAR pipe two ways, alternating them in
// one job: as 1 KiB messages (write(const T*, 256) / read(std::vector<T>&)), the baseline, and as items
// (push(const T&) one float at a time / pop() one at a time), which the runtime batches into messages.
// Rank 1 prints both throughputs and the ratio items / messages. Target: ratio >= 0.8.
#include <dispar/runtime.h>

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

constexpr std::size_t kFloatsPerMessage = 256;  // 1 KiB
constexpr std::size_t kMessages = 20000;        // ~20 MiB per run
constexpr std::size_t kItems = kFloatsPerMessage * kMessages;
constexpr int kRepetitions = 9;

bool itemRun = false;  // what this run measures; the same on both ranks
double bestMessages = 0;
double bestItems = 0;
double checksum = 0;  // keeps the receive loops from being optimised away

void keepBest(double& slot, double seconds) { slot = slot == 0 ? seconds : std::min(slot, seconds); }

float valueOf(std::size_t i) { return static_cast<float>(i % 1000) * 0.5f; }

void dispar_vnode_sender(dispar::OutPort<float>& stream) {
  if (itemRun) {
    for (std::size_t i = 0; i < kItems; ++i) stream.push(valueOf(i));
    return;
  }
  std::vector<float> message(kFloatsPerMessage);
  for (std::size_t m = 0; m < kMessages; ++m) {
    for (std::size_t i = 0; i < kFloatsPerMessage; ++i) message[i] = valueOf(m * kFloatsPerMessage + i);
    stream.write(message.data(), message.size());
  }
}

void dispar_vnode_receiver(dispar::InPort<float>& stream) {
  double sum = 0;
  const double start = MPI_Wtime();
  if (itemRun) {
    for (std::size_t i = 0; i < kItems; ++i) sum += stream.pop();
    keepBest(bestItems, MPI_Wtime() - start);
  } else {
    std::vector<float> message;
    while (stream.read(message))
      for (float x : message) sum += x;
    keepBest(bestMessages, MPI_Wtime() - start);
  }
  checksum += sum;
}

const dispar::rt::VnodeSpec kVnodes[] = {{"sender", 0, 1, "bench.dsp:1:1", false},
                                         {"receiver", 1, 1, "bench.dsp:9:1", false}};
const dispar::rt::PipeSpec kPipes[] = {
    {"stream", "float", sizeof(float), 0, 1, dispar::rt::MergeOrder::RoundRobin, 0, dispar::rt::SplitMode::RoundRobin}};
const dispar::rt::ProgramSpec kProgram = {"item_ports", kVnodes, 2, kPipes, 1, 2};

void dispatch(dispar::rt::Instance& instance) {
  switch (instance.vnode()) {
    case 0: {
      auto stream = instance.out<float>(0);
      dispar_vnode_sender(stream);
      break;
    }
    case 1: {
      auto stream = instance.in<float>(0);
      dispar_vnode_receiver(stream);
      break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // At the level a DISPAR program starts MPI with (the watch of stall detection is a thread).
  int provided = 0;
  MPI_Init_thread(&argc, &argv, dispar::rt::threadLevelForStallDetection(), &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "item_ports_bench: run with exactly 2 ranks (mpiexec -n 2), not %d\n", size);
    MPI_Finalize();
    return 2;
  }
  int status = 0;
  for (int r = 0; r < kRepetitions && status == 0; ++r) {
    for (bool items : {false, true}) {
      itemRun = items;
      MPI_Barrier(MPI_COMM_WORLD);
      status = dispar::rt::run(argc, argv, kProgram, dispatch);
      if (status != 0) break;
    }
  }
  if (rank == 1 && status == 0) {
    const double megabytes = static_cast<double>(kItems * sizeof(float)) / 1e6;
    std::printf("item_ports: %zu floats rank 0 -> rank 1, best of %d runs each (alternating), receive side\n", kItems,
                kRepetitions);
    std::printf("%-34s %10.1f MB/s %8.1f Mitems/s\n", "messages of 1 KiB (write/read)", megabytes / bestMessages,
                static_cast<double>(kItems) / bestMessages / 1e6);
    std::printf("%-34s %10.1f MB/s %8.1f Mitems/s\n", "items (push/pop, batched)", megabytes / bestItems,
                static_cast<double>(kItems) / bestItems / 1e6);
    std::printf("ratio items / messages = %.3f (target >= 0.8)   [checksum %.0f]\n", bestMessages / bestItems,
                checksum);
  }
  MPI_Finalize();
  return status;
}
