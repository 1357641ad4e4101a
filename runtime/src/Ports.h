// The two ends of a pipe. Each link of a pipe (a writer instance and a reader instance, Links.h) is an
// in-memory queue when both instances run in this rank, else a communicator of the two ranks with this
// protocol (docs/runtime.md): a message is one kDataTag message of exactly its bytes; end of stream is one empty
// kEndTag message per link; the reader returns one empty kCreditTag message per creditBatch() messages it has consumed,
// so a writer never has more than `window` unconsumed messages on a link. A large message from device memory may
// instead be a header and chunks (ChunkedTransfer.h); it counts as one message. Both ends remember per link the size of
// the last plain data message; a message that is not a plain one of that size is preceded by an empty kSizeChangeTag
// marker, so a reader whose buffer already has that size receives with one MPI_Recv and no probe (the "same size" fast
// path). Markers are not messages for credits.
#ifndef DISPAR_RUNTIME_PORTS_H
#define DISPAR_RUNTIME_PORTS_H

#include "ChunkedTransfer.h"
#include "Links.h"
#include "MpiBytes.h"
#include "MpiHandles.h"
#include "Profile.h"
#include "Program.h"
#include "Trace.h"
#include "WireTags.h"

#include <dispar/gpu/Device.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dispar::detail {

/// One port end owned by this rank. Typed ports (dispar.h) only reach the operations of their role.
struct PortState {
  PortState(const rt::PipeSpec& pipe, unsigned window, std::string owner);
  virtual ~PortState() = default;
  PortState(const PortState&) = delete;
  PortState& operator=(const PortState&) = delete;

  virtual void write(const void* data, std::size_t count);
  virtual bool read(DestinationFn destination, void* ctx, const char* expectation);
  virtual bool readElement(void* element);
  virtual void close();
  /// As write / read, for memory of `device` (staged through pinned buffers unless MPI is CUDA-aware).
  virtual void writeDevice(const void* data, std::size_t count, gpu::Device& device);
  virtual bool readDevice(DestinationFn destination, void* ctx, const char* expectation, gpu::Device& device);
  /// Moved vectors (dispar.h, `write(std::move(v))`): whether the next message stays in this rank,
  /// sending one, and a read that may take one whole.
  virtual bool takesVectors() const { return false; }
  virtual void writeVector(std::unique_ptr<MovedVector> message);
  virtual std::unique_ptr<MovedVector> spareVector(const void*, std::size_t) { return nullptr; }
  virtual bool readAdopting(DestinationFn destination, AdoptFn adopt, void* ctx, const char* expectation);
  // Item-level access (StreamIt's push/peek/pop, docs/language.md "Items"). A port is used either by
  // messages or by items: the first call fixes which, and the other kind is then an error. The typed
  // ports work on itemWindow inline and call these when it is exhausted.
  /// The window the typed port of that role works on: this end's own for its role (pushing on an
  /// output, popping on an input), an always-empty one for the other, so that a misused port reaches
  /// the slow path and its error instead of another role's memory.
  detail::ItemWindow& itemWindow(bool forPush) { return forPush == isOutput_ ? itemWindow_ : noItems_; }
  virtual void makeRoom();
  virtual void flush();
  virtual bool waitItems(std::size_t count);
  virtual void peek(std::size_t index, void* item);
  virtual void pop(void* item);
  virtual void drop(std::size_t count);
  /// Called when the VNODE has returned: sends end of stream / consumes what is left so that no
  /// peer waits forever, then completes every outstanding request.
  virtual void finish() = 0;

  /// "pipe 'samples' (float)": the prefix of every error about this port.
  std::string describe() const;
  /// The pipe (an element of the program's ProgramSpec::pipes) and which end this is.
  const rt::PipeSpec& spec() const { return pipe_; }
  bool isOutput() const { return isOutput_; }

  /// Run profiles: the owner's port-wait times this port adds to (nullptr: not profiling), and the slot
  /// a call on this port adds to (reads for an input port, writes for an output port).
  void profileInto(rt::PortWaits* waits) { waits_ = waits; }
  std::atomic<double>* waitSlot() { return waits_ == nullptr ? nullptr : isOutput_ ? &waits_->write : &waits_->read; }
  rt::PortWaits* cpuSlot() { return waits_ == nullptr || !waits_->measureCpu ? nullptr : waits_; }
  /// Run traces: the owner's record (nullptr: not tracing), and this port's pipe, by index.
  void traceInto(rt::InstanceTrace* trace, int pipe) { trace_ = trace, pipeIndex_ = pipe; }
  rt::InstanceTrace* trace() const { return trace_; }
  int pipeIndex() const { return pipeIndex_; }

 protected:
  enum class Access { Unset, Messages, Items };
  /// Fixes the port's access kind on first use; throws naming the pipe when the other kind was used.
  void useFor(Access access);
  /// This port's staging buffers (made on first use), holding at least `capacity` bytes each.
  gpu::CopyEngine& copyEngine(gpu::Device& device, std::size_t capacity);

  const rt::PipeSpec& pipe_;
  unsigned window_;
  unsigned batch_;
  std::string owner_;  // "vnode 'square' replica 1", for messages
  std::unique_ptr<gpu::CopyEngine> engine_;
  Access access_ = Access::Unset;
  bool isOutput_ = false;
  detail::ItemWindow itemWindow_;
  detail::ItemWindow noItems_;
  rt::PortWaits* waits_ = nullptr;
  rt::InstanceTrace* trace_ = nullptr;
  int pipeIndex_ = -1;
};

/// Forgets the calling thread's pipe bindings (an instance has finished; the next run binds afresh).
void unbindPipes();

}  // namespace dispar::detail

namespace dispar::rt {

/// Pushed items travel in messages of this many bytes (rounded down to whole items, at least one item).
inline constexpr std::size_t kItemBatchBytes = 4096;

/// Items an instance has pushed wait in its output ports' batches until a batch fills. Before the
/// instance waits (for data on a read, for room on a write) they go out: otherwise a feedback loop on
/// items deadlocks on buffering the runtime chose, not the program (docs/language.md, "Items"). An
/// instance's thread binds its ports' flush while alive; waits call flushBeforeWaiting().
class PendingItems {
 public:
  explicit PendingItems(std::function<void()> flush);
  ~PendingItems();
  PendingItems(const PendingItems&) = delete;
  PendingItems& operator=(const PendingItems&) = delete;
  /// Sends the calling thread's instance's pushed items, unless it is doing so already.
  static void flushBeforeWaiting();

 private:
  std::function<void()> flush_;
};

/// The sequence number of the sequenced message the calling thread's instance read last (PortPlan::sequence):
/// what its writes to sequenced pipes carry. Unknown before it has read one.
struct InstanceSequence {
  bool known = false;
  std::uint64_t number = 0;
};
InstanceSequence& instanceSequence();

/// The writing end: deals messages to its peers in turn (or sends each to all of them, split(duplicate);
/// or each to one with room, split(demand)), waiting for credit when a link is full.
class OutPortEnd final : public detail::PortState {
 public:
  /// `turns`: which link each message takes, in rotation (PortPlan::turns); `sequence` set when every
  /// message carries a sequence number.
  OutPortEnd(const PipeSpec& pipe, unsigned window, std::string owner, std::vector<LinkEnd> links,
             std::vector<std::size_t> turns, std::optional<PortPlan::Sequence> sequence = std::nullopt);

  void write(const void* data, std::size_t count) override;
  void writeDevice(const void* data, std::size_t count, gpu::Device& device) override;
  bool takesVectors() const override;
  void writeVector(std::unique_ptr<detail::MovedVector> message) override;
  std::unique_ptr<detail::MovedVector> spareVector(const void* type, std::size_t bytes) override;
  /// Makes room in the item window for one more item: sends the batch when it is full
  /// (kItemBatchBytes), sets the window up on first use.
  void makeRoom() override;
  /// Sends the pushed items as one message, if there are any.
  void flush() override;
  /// One element as one message, without fixing the port for messages (initial(N)).
  void writeInitial(const void* element) { send(element, 1, nullptr); }
  /// Flushes, then ends the stream.
  void close() override;
  void finish() override;
  /// Messages and bytes written so far (split(duplicate) counts a message once).
  const PipeTraffic& traffic() const { return traffic_; }

 private:
  struct Link {
    explicit Link(LinkEnd to) : end(std::move(to)) {}
    LinkEnd end;
    std::uint64_t sent = 0;
    std::uint64_t credits = 0;             // each one stands for batch_ consumed messages
    std::optional<std::size_t> lastBytes;  // of the last plain data message; the reader keeps the same
    Request endOfStream;
    bool readerGone = false;  // split(demand): its reader's VNODE has returned
    /// split(demand): messages larger than MPI's eager ones go from copies, without waiting for their
    /// reader to take them, so that the writer deals the next one to a reader that asks meanwhile
    /// instead of waiting on a busy one. At most the window of them; the oldest first.
    struct BufferedSend {
      Request request;
      std::vector<unsigned char> bytes;
    };
    std::deque<BufferedSend> buffered;
    std::vector<std::vector<unsigned char>> spareBuffers;  // of sends completed, for the next copies
  };
  void awaitCredit(Link& link);
  /// MPI link `link`'s message of `bytes` from `data`, sent from a copy (Link::buffered).
  void sendBuffered(Link& link, const void* data, std::size_t bytes);
  /// Keeps the reader's copy of link.lastBytes right: a marker first when the next message differs.
  void announce(Link& link, std::size_t bytes, bool chunked);
  /// One message to the next peer (to every peer under split(duplicate)); `device` non-null when
  /// `data` is device memory.
  void send(const void* data, std::size_t count, gpu::Device* device);
  void sendTo(Link& link, const void* data, std::size_t count, gpu::Device* device);
  void sendFromDevice(const LinkEnd& to, const void* data, std::size_t bytes, gpu::Device& device);
  /// The next peer's link (every peer's under split(duplicate) is the caller's loop). Under split(demand),
  /// the one with the fewest unconsumed messages below the window, waiting for one when all are full.
  Link& nextLink();
  Link& demandLink();
  /// Messages sent on `link` that its reader has not consumed, as far as this end knows (an MPI link
  /// takes the credits that have arrived).
  std::uint64_t unconsumed(Link& link);
  bool demand() const { return pipe_.split == SplitMode::Demand; }
  /// The sequence number of the next message (sequenced pipes): the instance's, once it has read a
  /// sequenced message; before that, this writer replica's own turn in the logical stream.
  std::uint64_t takeSequence();
  /// Pushed items dealt by turns, each item to the reader whose turn it is (split(rr) with several
  /// turns), so that weights count items exactly: pushes fill the staging batch (itemBatch_) at full
  /// speed; dealStaged() copies each staged item to its turn's link batch and sends the full ones.
  bool dealsItems() const { return pipe_.split == SplitMode::RoundRobin && turns_.size() > 1; }
  void dealStaged();
  /// dealStaged's loop, `Bytes` fixed for the common element sizes (0: pipe_.elementBytes), so that the
  /// copy of an item is a move of a register, not a call.
  template <std::size_t Bytes>
  void dealItems(const unsigned char* item, const unsigned char* end);
  void sendDealt(std::size_t link);
  struct DealtBatch {
    std::vector<unsigned char> bytes;
    std::size_t fill = 0;
  };
  std::vector<Link> links_;
  std::vector<std::size_t> turns_;  // links_ indices, one per message in rotation
  std::size_t next_ = 0;            // position in turns_ of the next message
  bool closed_ = false;
  bool sendingBatch_ = false;  // flush() is sending the item batch
  PipeTraffic traffic_;
  std::vector<unsigned char> itemBatch_;  ///< pushed items: [data, itemWindow_.next); room up to itemWindow_.end
  std::size_t batchBytes_;                ///< whole items, at least one
  std::vector<DealtBatch> dealt_;         ///< dealsItems(): per link
  std::size_t sendingLink_ = 0;           ///< dealsItems(): the link whose batch is being sent
  std::optional<PortPlan::Sequence> sequence_;
  std::uint64_t numbered_ = 0;  ///< messages numbered so far (takeSequence)
  std::uint64_t outgoing_ = 0;  ///< the sequence number of the message being sent
};

/// The reading end: merges its peers' streams in the pipe's order until all have ended. Peers are the
/// writer replicas the logical-stream rule assigns to this reader, in logical order.
class InPortEnd final : public detail::PortState {
 public:
  /// `turns`: which link each message comes from, in rotation (PortPlan::turns); `sequenced`: every
  /// message carries a sequence number, and several links merge by it (order(rr)).
  InPortEnd(const PipeSpec& pipe, unsigned window, std::string owner, std::vector<LinkEnd> links,
            const std::vector<std::size_t>& turns, bool sequenced = false);

  bool read(detail::DestinationFn destination, void* ctx, const char* expectation) override;
  bool readAdopting(detail::DestinationFn destination, detail::AdoptFn adopt, void* ctx,
                    const char* expectation) override;
  bool readDevice(detail::DestinationFn destination, void* ctx, const char* expectation, gpu::Device& device) override;
  bool readElement(void* element) override;
  /// Reads messages into the item buffer until it holds `count` items; false when the stream ends first.
  bool waitItems(std::size_t count) override;
  void peek(std::size_t index, void* item) override;
  void pop(void* item) override;
  void drop(std::size_t count) override;
  void finish() override;

 private:
  struct Link {
    explicit Link(LinkEnd from) : end(std::move(from)) {}
    LinkEnd end;
    std::uint64_t received = 0;
    std::optional<std::size_t> lastBytes;  // of the last plain data message, as the writer keeps it
    Request credit;
    Request gone;  // split(demand): kReaderGoneTag
    /// Sequenced MPI link: the number of its next message not yet received (its number message was).
    std::optional<std::uint64_t> head;
    /// Sequenced MPI link: its next messages (each with its number), received ahead while the merge
    /// waited for another link, so that its writer runs ahead as far as the window lets it instead of
    /// being held in a send the merge would only take after that other link. They come before `head`.
    std::deque<LocalLink::Message> stash;
    std::size_t stashedBytes = 0;
  };
  enum class SameSize { NotTried, Received, Ended, Changed };
  /// The link the next message comes from: in round-robin order the current one (not probed yet); in
  /// "any" order the first with a message waiting, found by polling (an MPI one probed already).
  struct Arrival {
    std::size_t link = 0;
    bool probed = false;
    mpi::Message message{};
    MPI_Status status{};
  };
  Arrival nextArrival();
  Arrival awaitAnyLink();
  /// nextArrival on a sequenced pipe: the link whose message is due (its number taken). In order(rr),
  /// the link whose next message has the smallest number, once every open link has one (an end of
  /// stream first); in order(any), the first with a message.
  Arrival nextInSequence();
  /// The number of link `index`'s next message, waiting for it (kEndOfSequence at its end).
  std::uint64_t headOf(std::size_t index);
  /// As headOf, without waiting: nullopt until it is known.
  std::optional<std::uint64_t> tryHead(std::size_t index);
  /// As tryHead, for the link's next message not stashed yet.
  std::optional<std::uint64_t> tryUnstashedHead(std::size_t index);
  /// The oldest message of link `index`'s stash, taken off it.
  LocalLink::Message unstash(std::size_t index);
  /// The merge of several links by number (nextInSequence): the link to take next, once known.
  std::size_t awaitSmallestHead();
  /// Receives MPI link `index`'s next message, whose number is known (its head), into its stash.
  void stashMessage(std::size_t index);
  /// Stashes the messages of every open MPI link whose numbers are known, while the merge waits for a
  /// silent link: up to the pipe's window of messages, and kStashedBytesLimit bytes past the first.
  void stashAhead();
  /// Link `index`'s message numbered `number` is next: the instance's writes carry the number.
  void take(std::size_t index, std::uint64_t number);
  /// One message into the caller's destination; `device` non-null when it is device memory; `adopt`
  /// non-null when the caller takes a moved vector whole.
  bool receive(detail::DestinationFn destination, void* ctx, const char* expectation, gpu::Device* device,
               detail::AdoptFn adopt = nullptr);
  /// A message of an in-rank link into the caller's destination.
  void deliverLocal(LocalLink::Message& message, detail::DestinationFn destination, void* ctx, const char* expectation,
                    gpu::Device* device, detail::AdoptFn adopt);
  /// The fast path: when the link's last size is known and the host destination already has it, one
  /// MPI_Recv straight into it. NotTried when it does not apply (the caller probes instead).
  SameSize receiveSameSize(detail::DestinationFn destination, void* ctx, std::size_t index);
  void receivePlain(mpi::Message& message, MPI_Count bytes, void* target, gpu::Device* device);
  /// Receives a chunked message's header; throws when it is malformed.
  ChunkHeader receiveHeader(mpi::Message& message, const MPI_Status& status, std::size_t index);
  void consumed(std::size_t link);
  void ended(std::size_t link);
  /// Pops the next message of local link `link`: false at its end (the link is then ended); else the
  /// message, counted as consumed, goes to `use` while the queue's vector is held.
  template <class Use>
  bool popLocal(std::size_t link, Use&& use) {
    LocalLink::Delivery delivery = links_[link].end.local->pop();
    if (delivery.message().end) {
      ended(link);
      return false;
    }
    consumed(link);
    use(delivery.message());
    return true;
  }
  /// The one place control messages act, once received (every receive path calls it): a size-change
  /// marker makes link `link` probe its next message, end of stream closes the link. False for data
  /// and chunk headers, which the caller handles.
  bool applyControl(int tag, std::size_t link);
  /// waitItems for a reader of several turns in round-robin order: items taken one turn at a time from
  /// each link's received messages (pending_), so that weights count items exactly.
  bool waitDealtItems(std::size_t count);
  [[noreturn]] void throwSizeMismatch(const char* expectation, const std::string& received) const;
  [[noreturn]] void throwScalarMismatch(const std::string& received) const;
  [[noreturn]] void throwProtocolError(int source, const std::string& what) const;
  std::string describeReceived(std::size_t bytes) const;

  std::vector<Link> links_;
  std::vector<std::size_t> open_;  // links still streaming, in rotation order (one entry per turn)
  std::size_t cursor_ = 0;         // position in open_ of the next round-robin source
  std::size_t pollStart_ = 0;      // "any" order: where the next poll starts, so no link starves
  bool hasMpiLinks_ = false;
  std::shared_ptr<Doorbell> doorbell_;  // rung by the local links; "any" order with several links
  std::size_t bufferedItems() const;
  // Items received but not popped: itemWindow_, a range of items_.
  std::vector<unsigned char> items_;
  std::vector<unsigned char> incoming_;  // the message being added to the items
  bool dealtItems_ = false;              // items taken turn by turn (waitDealtItems); set by the constructor
  struct Pending {
    std::vector<unsigned char> bytes;
    std::size_t taken = 0;
  };
  std::vector<Pending> pending_;  // dealtItems_: per link, received but not yet taken
  std::size_t receivedFrom_ = 0;  // the link receive() last took a message from
  bool sequenced_ = false;
  std::optional<std::size_t> due_;  // sequenced: the link whose next message was chosen, not yet received
};

}  // namespace dispar::rt

#endif  // DISPAR_RUNTIME_PORTS_H
