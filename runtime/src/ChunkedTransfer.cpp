#include "ChunkedTransfer.h"

#include "MpiBytes.h"
#include "MpiHandles.h"

#include <algorithm>
#include <vector>

namespace dispar::rt {
namespace {

/// Offsets and lengths of the chunks of one message.
class ChunkLayout {
 public:
  explicit ChunkLayout(const ChunkHeader& header) : header_(header), count_(chunkCount(header)) {}
  std::uint64_t count() const { return count_; }
  std::size_t offset(std::uint64_t k) const { return static_cast<std::size_t>(k * header_.chunkBytes); }
  std::size_t length(std::uint64_t k) const {
    return static_cast<std::size_t>(
        std::min<std::uint64_t>(header_.chunkBytes, header_.totalBytes - k * header_.chunkBytes));
  }

 private:
  ChunkHeader header_;
  std::uint64_t count_;
};

/// Gives MPI a chance to move the transfers in flight while the caller waits for a copy: MPICH
/// progresses large messages only inside MPI calls.
void progress(std::vector<Request>& requests) {
  for (Request& request : requests) {
    if (!request.active()) continue;
    int done = 0;
    DISPAR_MPI(MPI_Test, request.slot(), &done, MPI_STATUS_IGNORE);
  }
}

/// awaitCopy, progressing the chunk transfers in flight meanwhile.
void awaitCopy(gpu::CopyEngine& engine, int slot, std::vector<Request>& requests) {
  while (!engine.finished(slot)) progress(requests);
}

int slotOf(std::uint64_t k, int slots) { return static_cast<int>(k % static_cast<std::uint64_t>(slots)); }

/// Chunks in flight when no engine stages them.
constexpr int kDirectSlots = 4;

}  // namespace

void awaitCopy(gpu::CopyEngine& engine, int slot) {
  while (!engine.finished(slot)) {
  }
}

bool plausibleHeader(const ChunkHeader& header) { return header.chunkBytes != 0 || header.totalBytes == 0; }

std::uint64_t sendChunks(const void* source, const ChunkHeader& header, gpu::CopyEngine* engine, int dest,
                         MPI_Comm comm) {
  const ChunkLayout layout(header);
  const auto* bytes = static_cast<const unsigned char*>(source);
  const int slots = engine ? engine->slots() : kDirectSlots;
  std::vector<Request> sends(static_cast<std::size_t>(slots));
  auto send = [&](std::uint64_t k, const void* from) {
    DISPAR_MPI(mpi::isendBytes, from, static_cast<MPI_Count>(layout.length(k)), dest, kChunkTag, comm,
               sends[static_cast<std::size_t>(slotOf(k, slots))].slot());
  };
  if (engine == nullptr) {
    for (std::uint64_t k = 0; k < layout.count(); ++k) {
      sends[static_cast<std::size_t>(slotOf(k, slots))].wait();
      send(k, bytes + layout.offset(k));
    }
  } else {
    // Slot k % slots holds chunk k. Its copy to the host starts as soon as the send that last used the
    // slot is done, so the copy of chunk k+1 runs while chunk k is on the network.
    auto stage = [&](std::uint64_t k) {
      const int slot = slotOf(k, slots);
      sends[static_cast<std::size_t>(slot)].wait();
      engine->startToHost(slot, bytes + layout.offset(k), layout.length(k));
    };
    if (layout.count() > 0) stage(0);
    for (std::uint64_t k = 0; k < layout.count(); ++k) {
      const int slot = slotOf(k, slots);
      if (k + 1 < layout.count()) stage(k + 1);
      awaitCopy(*engine, slot, sends);
      send(k, engine->staging(slot));
    }
  }
  for (Request& request : sends) request.wait();
  return layout.count();
}

std::uint64_t receiveChunks(void* target, const ChunkHeader& header, gpu::CopyEngine* engine, int source,
                            MPI_Comm comm) {
  const ChunkLayout layout(header);
  auto* bytes = static_cast<unsigned char*>(target);
  const int slots = engine ? engine->slots() : kDirectSlots;
  std::vector<Request> receives(static_cast<std::size_t>(slots));
  auto post = [&](std::uint64_t k, void* into) {
    DISPAR_MPI(mpi::irecvBytes, into, static_cast<MPI_Count>(layout.length(k)), source, kChunkTag, comm,
               receives[static_cast<std::size_t>(slotOf(k, slots))].slot());
  };
  if (engine == nullptr) {
    for (std::uint64_t k = 0; k < layout.count(); ++k) {
      receives[static_cast<std::size_t>(slotOf(k, slots))].wait();
      post(k, bytes + layout.offset(k));
    }
    for (Request& request : receives) request.wait();
    return layout.count();
  }
  // Slot k % slots receives chunk k; once it has arrived its copy to the device starts, and once that
  // copy is done the slot takes chunk k + slots. Receives stay posted ahead of the copies.
  auto postStaged = [&](std::uint64_t k) { post(k, engine->staging(slotOf(k, slots))); };
  for (std::uint64_t k = 0; k < layout.count() && k < static_cast<std::uint64_t>(slots); ++k) postStaged(k);
  for (std::uint64_t k = 0; k < layout.count(); ++k) {
    const int slot = slotOf(k, slots);
    receives[static_cast<std::size_t>(slot)].wait();
    engine->startToDevice(slot, bytes + layout.offset(k), layout.length(k));
    if (k >= 1 && k - 1 + static_cast<std::uint64_t>(slots) < layout.count()) {
      const int previous = slotOf(k - 1, slots);
      awaitCopy(*engine, previous, receives);
      postStaged(k - 1 + static_cast<std::uint64_t>(slots));
    }
  }
  for (int slot = 0; slot < slots; ++slot) awaitCopy(*engine, slot, receives);
  return layout.count();
}

void discardChunks(const ChunkHeader& header, int source, MPI_Comm comm) {
  const ChunkLayout layout(header);
  std::vector<unsigned char> scratch;
  for (std::uint64_t k = 0; k < layout.count(); ++k) {
    scratch.resize(layout.length(k));
    DISPAR_MPI(mpi::recvBytes, scratch.data(), static_cast<MPI_Count>(scratch.size()), source, kChunkTag, comm,
               MPI_STATUS_IGNORE);
  }
}

}  // namespace dispar::rt
