// The links of a program's pipes, one per (writer instance, reader instance) pair the logical-stream
// rule connects, and how this rank reaches the other end of each (docs/runtime.md, "Rank groups"): a
// bounded in-memory queue when both instances run in this rank, else a communicator of just the two
// ranks, so that every link has its own message space whatever else the two ranks exchange.
#ifndef DISPAR_RUNTIME_LINKS_H
#define DISPAR_RUNTIME_LINKS_H

#include "Grouping.h"
#include "MpiHandles.h"

#include <dispar/dispar.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

namespace dispar::rt {

/// Wakes a reader of several links (merge order "any") when any of them gets a message.
class Doorbell {
 public:
  void ring();
  /// The number of rings so far; wait(seen) returns once it has grown past `seen`.
  std::uint64_t rings() const;
  void wait(std::uint64_t seen);

 private:
  mutable std::mutex mutex_;
  std::condition_variable rung_;
  std::uint64_t rings_ = 0;
};

/// An in-rank link: what the MPI protocol gives a pipe (at most `window` unconsumed messages, end of
/// stream), in memory. A message holds its bytes, or the vector its writer gave up.
class LocalLink {
 public:
  struct Message {
    bool end = false;
    std::vector<unsigned char> bytes;
    std::unique_ptr<detail::MovedVector> moved;  // instead of bytes
  };

  /// Bytes a link holds before its writer waits, however large its window: as MPI's rendezvous
  /// protocol does for large messages, this keeps a window of large copies from filling memory.
  static constexpr std::size_t kQueuedBytesLimit = std::size_t{16} << 20;

  LocalLink(unsigned window, std::size_t elementBytes) : window_(window), elementBytes_(elementBytes) {}
  /// Waits while `window` messages are unconsumed, or kQueuedBytesLimit bytes.
  void push(Message message);
  /// Waits for the next message.
  Message pop();
  bool ready() const;
  /// Keeps a vector the reader is done with for the writer's next copy (a few at most).
  void giveBack(std::unique_ptr<detail::MovedVector> spare);
  /// One given back of element type `type`, or nullptr.
  std::unique_ptr<detail::MovedVector> takeSpare(const void* type);
  /// Rung on every push (set before the instances start).
  void setDoorbell(std::shared_ptr<Doorbell> doorbell) { doorbell_ = std::move(doorbell); }

 private:
  std::size_t bytesOf(const Message& message) const;

  const unsigned window_;
  const std::size_t elementBytes_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Message> queue_;
  std::atomic<std::size_t> queued_{0};  // queue_.size(), readable without the lock
  std::size_t queuedBytes_ = 0;
  int readersWaiting_ = 0;
  int writersWaiting_ = 0;
  std::vector<std::unique_ptr<detail::MovedVector>> spares_;
  std::shared_ptr<Doorbell> doorbell_;
};

/// One end of a link as this rank sees it: a local link, or a communicator whose rank 0 is the writer
/// and rank 1 the reader, with `peer` the other end's rank in it.
struct LinkEnd {
  std::shared_ptr<LocalLink> local;
  MPI_Comm comm = MPI_COMM_NULL;
  int peer = 0;
  int peerRank = 0;  // the other end's rank in MPI_COMM_WORLD, for messages
  std::shared_ptr<Doorbell> doorbell;  // reader of several links in "any" order: rung by its local links

  bool isLocal() const { return local != nullptr; }
};

class LinkTable {
 public:
  /// Makes this rank's links: a communicator for each link between this rank and another (collective
  /// over the two ranks; every rank walks the links in one order, so no two wait on each other), a
  /// queue for each link inside it. `programWindow` as effectiveWindow takes it.
  LinkTable(const ProgramSpec& program, const RankGroups& groups, int rank, unsigned programWindow);

  /// This rank's end of the link from instance `writer` to instance `reader` on `pipe`, for `role`.
  LinkEnd end(int pipe, int writer, int reader, PortRole role) const;

 private:
  struct Link {
    Communicator comm;
    std::shared_ptr<LocalLink> local;
    int writerRank = 0;
    int readerRank = 0;
  };
  std::map<std::tuple<int, int, int>, Link> links_;  // (pipe, writer, reader) touching this rank
  std::map<std::pair<int, int>, std::shared_ptr<Doorbell>> doorbells_;  // (pipe, reader) in this rank
};

}  // namespace dispar::rt

#endif  // DISPAR_RUNTIME_LINKS_H
