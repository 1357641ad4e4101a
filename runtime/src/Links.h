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
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

namespace dispar::rt {

/// The sequence number an end of stream carries on a sequenced pipe: after every message.
inline constexpr std::uint64_t kEndOfSequence = UINT64_MAX;

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

/// How a waiting thread uses its core while it polls (docs/runtime.md, "Stalls"). Where every instance
/// on the node has a core, it polls with a CPU pause, as MPI's blocking calls do; where instances
/// outnumber the cores (of the node, or of the rank's affinity), it yields the core at every poll, so
/// that the thread whose work would end the wait runs: a spinning waiter otherwise holds the core until
/// the scheduler's time slice ends, milliseconds for every message of a loop. run() sets it.
class Waiting {
 public:
  static void setCrowded(bool crowded) { crowded_.store(crowded, std::memory_order_relaxed); }
  static bool crowded() { return crowded_.load(std::memory_order_relaxed); }
  /// One poll's pause: a CPU pause, and where crowded a yield every kPollsPerYield polls.
  static void pause();
  static constexpr unsigned kPollsPerYield = 8;

 private:
  static std::atomic<bool> crowded_;
};

/// An in-rank link: what the MPI protocol gives a pipe (at most `window` unconsumed messages, end of
/// stream), in memory. A message holds its bytes, or the vector its writer gave up.
class LocalLink {
 public:
  struct Message {
    bool end = false;
    std::uint64_t sequence = 0;  // on a sequenced pipe (PortPlan::sequence); kEndOfSequence with end
    std::vector<unsigned char> bytes;
    std::unique_ptr<detail::MovedVector> moved;  // instead of bytes

    const void* data() const { return moved ? moved->data() : bytes.data(); }
    std::size_t size(std::size_t elementBytes) const { return moved ? moved->count() * elementBytes : bytes.size(); }
  };

  /// Bytes a link holds before its writer waits, however large its window: as MPI's rendezvous
  /// protocol does for large messages, this keeps a window of large copies from filling memory.
  static constexpr std::size_t kQueuedBytesLimit = std::size_t{16} << 20;

  LocalLink(unsigned window, std::size_t elementBytes) : window_(window), elementBytes_(elementBytes) {}
  /// A message taken off the queue. When it goes, its vector (the writer's, or after the reader swapped
  /// vectors the reader's previous one) goes back to the link for the writer's next copy.
  class Delivery {
   public:
    Delivery(LocalLink& link, Message message) : link_(link), message_(std::move(message)) {}
    ~Delivery() { link_.delivered(std::move(message_.moved)); }
    Delivery(const Delivery&) = delete;
    Delivery& operator=(const Delivery&) = delete;
    Message& message() { return message_; }

   private:
    LocalLink& link_;
    Message message_;
  };

  /// Waits while `window` messages are unconsumed, or kQueuedBytesLimit bytes.
  void push(Message message);
  /// Waits for the next message.
  Delivery pop();
  bool ready() const;
  /// Messages queued, not yet taken (without the lock: a writer choosing a link with room).
  std::size_t queued() const { return queued_.load(std::memory_order_acquire); }
  /// Waits for the next message and returns its sequence number without taking it (kEndOfSequence for
  /// the end of the stream).
  std::uint64_t nextSequence();
  /// As nextSequence, without waiting: nullopt while the queue is empty.
  std::optional<std::uint64_t> peekSequence() const;
  /// A vector of element type `type` to copy a message of `bytes` into, or nullptr (the writer makes
  /// one). A large copy waits for the vector the reader is about to give back rather than filling a new
  /// one: two vectors then alternate and stay in cache, as MPI's rendezvous keeps one large message in
  /// flight.
  std::unique_ptr<detail::MovedVector> takeSpare(const void* type, std::size_t bytes);
  /// Copies at least this large wait for a given-back vector (takeSpare).
  static constexpr std::size_t kLargeCopyBytes = std::size_t{1} << 20;

  /// How long a waiting reader or writer stays awake before it sleeps: waking a sleeping thread costs
  /// tens of microseconds, more than copying a large message. Awake only where its rank's instances
  /// have a core each (kSpinWithCores); else briefly (kSpinWithoutCores), so that the threads that could
  /// make progress get the cores. run() sets it.
  static constexpr std::chrono::nanoseconds kSpinWithCores{200'000};
  static constexpr std::chrono::nanoseconds kSpinWithoutCores{2'000};
  static void setSpin(std::chrono::nanoseconds spin);
  /// Rung on every push (set before the instances start).
  void setDoorbell(std::shared_ptr<Doorbell> doorbell) { doorbell_ = std::move(doorbell); }
  /// The reader's VNODE has returned (split(demand): deal it no more; it drains what comes).
  void leaveReading() { readerLeft_.store(true, std::memory_order_release); }
  bool readerLeft() const { return readerLeft_.load(std::memory_order_acquire); }
  /// Rung on every pop: a split(demand) writer waits on it for room on any of its links.
  void setRoomDoorbell(std::shared_ptr<Doorbell> doorbell) { roomDoorbell_ = std::move(doorbell); }

 private:
  template <class Ready>
  static void spinUntil(Ready ready);
  std::size_t bytesOf(const Message& message) const;
  /// A Delivery is done: keeps its vector (a few at most) and wakes a writer waiting for one.
  void delivered(std::unique_ptr<detail::MovedVector> spare);

  const unsigned window_;
  const std::size_t elementBytes_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Message> queue_;
  std::atomic<std::size_t> queued_{0};  // queue_.size(), readable without the lock
  std::size_t queuedBytes_ = 0;
  int readersWaiting_ = 0;
  int writersWaiting_ = 0;
  bool delivering_ = false;  // a Delivery is out: its vector may come back
  std::vector<std::unique_ptr<detail::MovedVector>> spares_;
  std::atomic<std::size_t> spareCount_{0};  // spares_.size(), readable without the lock
  static std::atomic<std::int64_t> spinNanoseconds_;
  std::shared_ptr<Doorbell> doorbell_;
  std::shared_ptr<Doorbell> roomDoorbell_;
  std::atomic<bool> readerLeft_{false};
};

/// One end of a link as this rank sees it: a local link, or a communicator whose rank 0 is the writer
/// and rank 1 the reader, with `peer` the other end's rank in it.
struct LinkEnd {
  std::shared_ptr<LocalLink> local;
  MPI_Comm comm = MPI_COMM_NULL;
  int peer = 0;
  int peerRank = 0;                        // the other end's rank in MPI_COMM_WORLD, for messages
  int peerInstance = -1;                   // the other end's instance, for stall reports (set by its port)
  std::shared_ptr<Doorbell> doorbell;      // reader of several links in "any" order: rung by its local links
  std::shared_ptr<Doorbell> roomDoorbell;  // split(demand) writer: rung when a reader takes from its local links

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
  std::map<std::tuple<int, int, int>, Link> links_;                         // (pipe, writer, reader) touching this rank
  std::map<std::pair<int, int>, std::shared_ptr<Doorbell>> doorbells_;      // (pipe, reader) in this rank
  std::map<std::pair<int, int>, std::shared_ptr<Doorbell>> roomDoorbells_;  // (pipe, writer) in this rank
};

}  // namespace dispar::rt

#endif  // DISPAR_RUNTIME_LINKS_H
