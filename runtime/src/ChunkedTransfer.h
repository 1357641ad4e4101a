// Large device-memory messages on the wire (docs/gpu-runtime.md, "Wire format"): one header message
// (tag kChunkedTag, a ChunkHeader) followed by ceil(total / chunk) chunk messages (tag kChunkTag) on
// the pipe's communicator, all from the same sender; the whole counts as ONE message for credits.
// Any reader accepts both this and a plain kDataTag message, so device and host ends interoperate.
//
// The pipeline stages device memory through a CopyEngine's slots (pinned buffers): while chunk k is
// on the network, chunk k+1 crosses PCIe. With no engine the chunks go straight from / into the
// caller's memory (host memory, or device memory with CUDA-aware MPI).
#ifndef DISPAR_RUNTIME_CHUNKEDTRANSFER_H
#define DISPAR_RUNTIME_CHUNKEDTRANSFER_H

#include "WireTags.h"

#include <dispar/gpu/Device.h>
#include <mpi.h>

#include <cstddef>
#include <cstdint>

namespace dispar::rt {

/// Messages below this many bytes never go through the pipeline: one copy and one send.
inline constexpr std::size_t kSmallMessageBytes = 64 * 1024;

struct ChunkHeader {
  std::uint64_t totalBytes;
  std::uint64_t chunkBytes;
};

/// Whether a device message of `bytes` is sent chunked with chunks of `chunkBytes`.
inline bool sendsChunked(std::size_t bytes, std::size_t chunkBytes) {
  return bytes >= kSmallMessageBytes && bytes > chunkBytes;
}

inline std::uint64_t chunkCount(const ChunkHeader& header) {
  return header.chunkBytes == 0 ? 0 : (header.totalBytes + header.chunkBytes - 1) / header.chunkBytes;
}

/// Waits for the copy last started in `slot`. It polls: finished() never blocks, a staged copy is at
/// most one chunk (microseconds), and the rank has nothing else to do meanwhile; a sleep would only add
/// latency. (Inside the chunk pipeline the wait also progresses MPI: ChunkedTransfer.cpp.)
void awaitCopy(gpu::CopyEngine& engine, int slot);

/// Whether `header` is one a sender could have written (a reader checks before trusting it).
bool plausibleHeader(const ChunkHeader& header);

/// Sends the chunks of `source` (header.totalBytes bytes) to `dest`. With an engine, `source` is device
/// memory staged through the engine's slots; its capacity must be at least header.chunkBytes.
/// Returns the number of chunk messages sent.
std::uint64_t sendChunks(const void* source, const ChunkHeader& header, gpu::CopyEngine* engine, int dest,
                         MPI_Comm comm);

/// Receives the chunks `header` announced from `source` into `target` (device memory with an engine).
/// Returns the number of chunk messages received.
std::uint64_t receiveChunks(void* target, const ChunkHeader& header, gpu::CopyEngine* engine, int source,
                            MPI_Comm comm);

/// Receives and drops the chunks `header` announced (a reader that rejects the message).
void discardChunks(const ChunkHeader& header, int source, MPI_Comm comm);

}  // namespace dispar::rt

#endif  // DISPAR_RUNTIME_CHUNKEDTRANSFER_H
