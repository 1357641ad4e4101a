// bench_device_pipe: moves a device buffer from rank 0's GPU to rank 1's GPU, 64 KiB to 256 MiB, two
// ways, and prints both and their ratio:
//   unpipelined  cudaMemcpy of the whole buffer to pinned memory, MPI_Send; MPI_Recv, cudaMemcpy up
//   pipelined    the runtime's device-pipe path: header + chunks through pinned slots, PCIe copies
//                overlapping MPI (ChunkedTransfer.cpp with CudaCopyEngine), DISPAR_CHUNK_BYTES chunks
// Target (README.md): pipelined >= 1.5x from 4 MiB up, never slower. Run: mpiexec -n 2 bench_device_pipe
#include "ChunkedTransfer.h"
#include "CudaDevice.h"

#include <dispar/gpu/Settings.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

namespace gpu = dispar::gpu;
namespace rt = dispar::rt;

int localRank() {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int rank = 0;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_free(&node);
  return rank;
}

/// Every rank opens a GPU; false (after rank 0 has said why) when one cannot.
bool openDevice(int rank) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  int ok = error == cudaSuccess && count > 0 ? 1 : 0;
  if (ok) ok = cudaSetDevice(localRank() % count) == cudaSuccess ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all && rank == 0)
    std::fprintf(stderr, "bench_device_pipe: needs a GPU on every rank (%s)\n",
                 error != cudaSuccess ? cudaGetErrorString(error) : "no device visible");
  return all != 0;
}

/// The mean time of `repeats` rounds of `body` on both ranks, between barriers.
template <class Body>
double timedRounds(int repeats, Body&& body) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < repeats; ++i) body();
  MPI_Barrier(MPI_COMM_WORLD);
  return (MPI_Wtime() - start) / repeats;
}

double unpipelined(int rank, void* device, std::size_t bytes, gpu::PinnedBuffer& host, int repeats) {
  return timedRounds(repeats, [&] {
    if (rank == 0) {
      DISPAR_CUDA(cudaMemcpy(host.get(), device, bytes, cudaMemcpyDeviceToHost));
      MPI_Send_c(host.get(), static_cast<MPI_Count>(bytes), MPI_BYTE, 1, 0, MPI_COMM_WORLD);
    } else {
      MPI_Recv_c(host.get(), static_cast<MPI_Count>(bytes), MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      DISPAR_CUDA(cudaMemcpy(device, host.get(), bytes, cudaMemcpyHostToDevice));
    }
  });
}

double pipelined(int rank, void* device, std::size_t bytes, gpu::CopyEngine& engine, std::size_t chunk, int repeats) {
  return timedRounds(repeats, [&] {
    const rt::ChunkHeader header{bytes, chunk};
    if (rank == 0) {
      if (rt::sendsChunked(bytes, chunk)) {
        MPI_Send(&header, sizeof header, MPI_BYTE, 1, rt::kChunkedTag, MPI_COMM_WORLD);
        rt::sendChunks(device, header, &engine, 1, MPI_COMM_WORLD);
      } else {  // what the port does for a small message: one copy, one send
        engine.startToHost(0, device, bytes);
        while (!engine.finished(0)) {
        }
        MPI_Send_c(engine.staging(0), static_cast<MPI_Count>(bytes), MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      }
    } else {
      MPI_Status status;
      MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
      if (status.MPI_TAG == rt::kChunkedTag) {
        rt::ChunkHeader received{0, 0};
        MPI_Recv(&received, sizeof received, MPI_BYTE, 0, rt::kChunkedTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        rt::receiveChunks(device, received, &engine, 0, MPI_COMM_WORLD);
      } else {
        MPI_Recv_c(engine.staging(0), static_cast<MPI_Count>(bytes), MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        engine.startToDevice(0, device, bytes);
        while (!engine.finished(0)) {
        }
      }
    }
  });
}

/// The three stages of a transfer, each alone, in seconds: the copy down to pinned memory on rank 0, the
/// MPI transfer between pinned buffers, the copy up on rank 1 (each timed between barriers, so on both
/// ranks). The unpipelined path runs them one after the other; pipelining overlaps them, so it can gain
/// at most their sum over the slowest: the ceiling the table prints beside the ratio.
struct Stages {
  double toHost = 0, mpi = 0, toDevice = 0;
  double ceiling() const { return (toHost + mpi + toDevice) / std::max({toHost, mpi, toDevice}); }
};

Stages stages(int rank, void* device, std::size_t bytes, gpu::PinnedBuffer& host, int repeats) {
  Stages out;
  out.toHost = timedRounds(repeats, [&] {
    if (rank == 0) DISPAR_CUDA(cudaMemcpy(host.get(), device, bytes, cudaMemcpyDeviceToHost));
  });
  out.mpi = timedRounds(repeats, [&] {
    if (rank == 0)
      MPI_Send_c(host.get(), static_cast<MPI_Count>(bytes), MPI_BYTE, 1, 0, MPI_COMM_WORLD);
    else
      MPI_Recv_c(host.get(), static_cast<MPI_Count>(bytes), MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  });
  out.toDevice = timedRounds(repeats, [&] {
    if (rank == 1) DISPAR_CUDA(cudaMemcpy(device, host.get(), bytes, cudaMemcpyHostToDevice));
  });
  return out;
}

std::string sizeName(std::size_t bytes) {
  return bytes >= (1u << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes >> 10) + " KiB";
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "bench_device_pipe: run with exactly 2 ranks (mpiexec -n 2)\n");
    MPI_Finalize();
    return 2;
  }
  if (!openDevice(rank)) {
    MPI_Finalize();
    return 2;
  }
  int status = 0;
  try {
    const std::size_t chunk = gpu::parseChunkBytes(std::getenv("DISPAR_CHUNK_BYTES"));
    constexpr std::size_t kLargest = std::size_t{256} << 20;
    void* device = nullptr;
    DISPAR_CUDA(cudaMalloc(&device, kLargest));
    DISPAR_CUDA(cudaMemset(device, 0x5A, kLargest));
    gpu::PinnedBuffer whole(kLargest);
    gpu::CudaCopyEngine engine(3, std::max(chunk, rt::kSmallMessageBytes));
    if (rank == 0)
      std::printf("# device-to-device pipe, 2 ranks, chunk %zu bytes, 3 pinned slots\n"
                  "# stages alone (GB/s): copy to host, MPI between pinned buffers, copy to device; ceiling: what\n"
                  "# overlapping them can gain at most, their summed time over the slowest one's\n"
                  "%10s %16s %16s %8s %9s %9s %9s %8s\n",
                  chunk, "size", "unpipelined GB/s", "pipelined GB/s", "ratio", "to host", "MPI", "to device",
                  "ceiling");
    for (std::size_t bytes = 64 << 10; bytes <= kLargest; bytes *= 4) {
      const int repeats = static_cast<int>(std::clamp<std::size_t>((std::size_t{1} << 30) / bytes, 3, 200));
      pipelined(rank, device, bytes, engine, chunk, 1);  // warm-up of both paths
      unpipelined(rank, device, bytes, whole, 1);
      const double plain = unpipelined(rank, device, bytes, whole, repeats);
      const double piped = pipelined(rank, device, bytes, engine, chunk, repeats);
      const Stages alone = stages(rank, device, bytes, whole, repeats);
      if (rank == 0)
        std::printf("%10s %16.2f %16.2f %7.2fx %9.2f %9.2f %9.2f %7.2fx\n", sizeName(bytes).c_str(),
                    bytes / plain / 1e9, bytes / piped / 1e9, plain / piped, bytes / alone.toHost / 1e9,
                    bytes / alone.mpi / 1e9, bytes / alone.toDevice / 1e9, alone.ceiling());
    }
    std::fflush(stdout);
    DISPAR_CUDA(cudaFree(device));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_device_pipe: rank %d: %s\n", rank, error.what());
    MPI_Abort(MPI_COMM_WORLD, 3);
    status = 3;
  }
  MPI_Finalize();
  return status;
}
