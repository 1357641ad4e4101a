#include "Ports.h"

#include "MpiBytes.h"
#include "Stall.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

#ifdef DISPAR_TARGET_SMPI
#include <dispar/smpi/SimulatedGpu.h>
#include <simgrid/s4u/Actor.hpp>
#endif

namespace dispar::detail {

PortState::PortState(const rt::PipeSpec& pipe, unsigned window, std::string owner)
    : pipe_(pipe), window_(window), batch_(rt::creditBatch(window)), owner_(std::move(owner)) {}

std::string PortState::describe() const { return std::string("pipe '") + pipe_.name + "' (" + pipe_.elementType + ")"; }

// Typed ports never reach these: an InPort has no write and an OutPort no read.
void PortState::write(const void*, std::size_t) {
  throw rt::PipeError(describe() + ": " + owner_ + " writes to an input port");
}
bool PortState::read(DestinationFn, void*, const char*) {
  throw rt::PipeError(describe() + ": " + owner_ + " reads from an output port");
}
bool PortState::readElement(void*) { throw rt::PipeError(describe() + ": " + owner_ + " reads from an output port"); }
void PortState::close() { throw rt::PipeError(describe() + ": " + owner_ + " closes an input port"); }
void PortState::writeDevice(const void*, std::size_t, gpu::Device&) {
  throw rt::PipeError(describe() + ": " + owner_ + " writes to an input port");
}
bool PortState::readDevice(DestinationFn, void*, const char*, gpu::Device&) {
  throw rt::PipeError(describe() + ": " + owner_ + " reads from an output port");
}

void PortState::writeVector(std::unique_ptr<MovedVector>) {
  throw rt::PipeError(describe() + ": " + owner_ + " writes to an input port");
}
bool PortState::readAdopting(DestinationFn destination, AdoptFn, void* ctx, const char* expectation) {
  return read(destination, ctx, expectation);
}

void PortState::useFor(Access access) {
  if (access_ == access) return;
  if (access_ == Access::Unset) {
    access_ = access;
    return;
  }
  throw rt::PipeError(describe() + ": " + owner_ +
                      (access == Access::Items
                           ? " uses item calls (push/peek/pop) on a port it used for messages (read/write)"
                           : " uses message calls (read/write) on a port it used for items (push/peek/pop)") +
                      "; a port is used one way or the other");
}

void PortState::makeRoom() { throw rt::PipeError(describe() + ": " + owner_ + " pushes to an input port"); }
void PortState::flush() { throw rt::PipeError(describe() + ": " + owner_ + " flushes an input port"); }
bool PortState::waitItems(std::size_t) {
  throw rt::PipeError(describe() + ": " + owner_ + " waits for items on an output port");
}
void PortState::peek(std::size_t, void*) {
  throw rt::PipeError(describe() + ": " + owner_ + " peeks at an output port");
}
void PortState::pop(void*) { throw rt::PipeError(describe() + ": " + owner_ + " pops from an output port"); }
void PortState::drop(std::size_t) { throw rt::PipeError(describe() + ": " + owner_ + " pops from an output port"); }

gpu::CopyEngine& PortState::copyEngine(gpu::Device& device, std::size_t capacity) {
  // Room for the largest message that skips the pipeline, too.
  capacity = std::max({capacity, device.transfers().chunkBytes, rt::kSmallMessageBytes});
  if (!engine_ || engine_->capacity() < capacity) {
    engine_.reset();
    engine_ = device.makeCopyEngine(std::max(2, device.transfers().stagingSlots), capacity);
  }
  return *engine_;
}

thread_local BoundPipes threadPipes;

namespace {
thread_local std::vector<BoundPipe> threadSlots;  // threadPipes' storage
std::atomic<int> registeredPipes{0};
}  // namespace

int registerPipe() { return registeredPipes.fetch_add(1, std::memory_order_relaxed); }

BoundPipe& bindingSlot(int id) {
  if (id < 0) throw std::logic_error("dispar: binding a pipe that has no name");
  if (threadSlots.size() <= static_cast<std::size_t>(id)) {
    threadSlots.resize(static_cast<std::size_t>(id) + 1);
    threadPipes = {threadSlots.data(), static_cast<unsigned>(threadSlots.size())};
  }
  return threadSlots[static_cast<std::size_t>(id)];
}

void unbindPipes() {
  for (BoundPipe& slot : threadSlots) slot.state = nullptr;
  rt::instanceSequence() = {};
}

namespace {
/// What every entry point from VNODE code does around the call: its time counts as the instance's
/// waiting in its ports when profiling (rt::PortWaitTimer; the inline item fast paths never get here),
/// it is a read or write span when tracing (rt::TraceSpanTimer), and the instance is in a pipe operation
/// for stall detection (Stall.h): an output port's waits are for room, an input port's for data.
class PortCall {
 public:
  explicit PortCall(PortState& port)
      : timer_(port.waitSlot(), port.cpuSlot()),
        span_(port.trace(), port.isOutput() ? lang::TraceSpanKind::Write : lang::TraceSpanKind::Read, port.pipeIndex()),
        operation_(port.spec(), port.isOutput() ? rt::PipeWait::Credit : rt::PipeWait::Data) {}

 private:
  rt::PortWaitTimer timer_;
  rt::TraceSpanTimer span_;
  rt::InPipeOperation operation_;
};
}  // namespace

// The entry points from VNODE code.
void portWrite(PortState& port, const void* data, std::size_t count) {
  const PortCall call(port);
  port.write(data, count);
}
bool portTakesVectors(PortState& port) { return port.takesVectors(); }
void portWriteVector(PortState& port, std::unique_ptr<MovedVector> message) {
  const PortCall call(port);
  port.writeVector(std::move(message));
}
std::unique_ptr<MovedVector> portSpareVector(PortState& port, const void* type, std::size_t bytes) {
  const PortCall call(port);
  return port.spareVector(type, bytes);
}
bool portReadAdopting(PortState& port, DestinationFn destination, AdoptFn adopt, void* ctx, const char* expectation) {
  const PortCall call(port);
  return port.readAdopting(destination, adopt, ctx, expectation);
}
bool portRead(PortState& port, DestinationFn destination, void* ctx, const char* expectation) {
  const PortCall call(port);
  return port.read(destination, ctx, expectation);
}
bool portReadElement(PortState& port, void* element) {
  const PortCall call(port);
  return port.readElement(element);
}
void portClose(PortState& port) {
  const PortCall call(port);
  port.close();
}
ItemWindow& portItemWindow(PortState& port, bool forPush) { return port.itemWindow(forPush); }
void portMakeRoom(PortState& port) {
  const PortCall call(port);
  port.makeRoom();
}
void portFlush(PortState& port) {
  const PortCall call(port);
  port.flush();
}
bool portWaitItems(PortState& port, std::size_t count) {
  const PortCall call(port);
  return port.waitItems(count);
}
void portPeek(PortState& port, std::size_t index, void* item) {
  const PortCall call(port);
  port.peek(index, item);
}
void portPop(PortState& port, void* item) {
  const PortCall call(port);
  port.pop(item);
}
void portDrop(PortState& port, std::size_t count) {
  const PortCall call(port);
  port.drop(count);
}

void throwUndeclaredPipe(const char* name, int index) {
  const std::string pipe = std::string(name) + (index >= 0 ? "[" + std::to_string(index) + "]" : "");
  throw rt::PipeError("pipe '" + pipe + "' is not one of its ports; declare IN(" + pipe + ") or OUT(" + pipe + ")");
}

void throwPipeIndexOutOfRange(const char* name, long long index, int size) {
  throw rt::PipeError("pipe array '" + std::string(name) + "' has " + std::to_string(size) + " pipes; index " +
                      std::to_string(index) + " is out of range");
}

void portWriteDevice(PortState& port, const void* data, std::size_t count) {
  const PortCall call(port);
  if (gpu::Device* device = gpu::detail::activeDevice())
    port.writeDevice(data, count, *device);
  else
    port.write(data, count);
}
bool portReadDevice(PortState& port, DestinationFn destination, void* ctx, const char* expectation) {
  const PortCall call(port);
  if (gpu::Device* device = gpu::detail::activeDevice()) return port.readDevice(destination, ctx, expectation, *device);
  return port.read(destination, ctx, expectation);
}

}  // namespace dispar::detail

namespace dispar::rt {
namespace {

std::string plural(std::uint64_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

/// A byte vector as a read destination sized in elements (the item buffer's staging message). Kept at
/// its size between messages, so that messages of the same size take the no-probe path.
struct ElementBytes {
  std::vector<unsigned char>& bytes;
  std::size_t elementBytes;

  static void* destination(void* ctx, std::size_t elements, detail::DestinationMode mode) {
    auto& self = *static_cast<ElementBytes*>(ctx);
    const std::size_t size = elements * self.elementBytes;
    if (mode == detail::DestinationMode::AlreadySized && self.bytes.size() != size) return nullptr;
    self.bytes.resize(size);
    return size == 0 ? static_cast<void*>(&self.bytes) : static_cast<void*>(self.bytes.data());
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Writer

namespace {
/// Messages up to this size leave a blocking MPI_Send at once (MPI's eager protocol, in every MPI we
/// build for); larger ones wait for the reader to take them.
constexpr MPI_Count kLargestEagerBytes = 4096;
int sendWaiting(const void* buffer, MPI_Count bytes, int dest, int tag, MPI_Comm comm);
// Waiting without holding a core: see pollPatiently.
constexpr std::chrono::microseconds kBusyWait{2000};
constexpr std::chrono::microseconds kLongestSleep{500};
template <class Ready>
void pollPatiently(Ready ready, std::chrono::nanoseconds busy = kBusyWait);
}  // namespace

InstanceSequence& instanceSequence() {
  thread_local InstanceSequence sequence;  // each instance runs on its own thread
  return sequence;
}

OutPortEnd::OutPortEnd(const PipeSpec& pipe, unsigned window, std::string owner, std::vector<LinkEnd> links,
                       std::vector<std::size_t> turns, std::optional<PortPlan::Sequence> sequence)
    : PortState(pipe, window, std::move(owner)), turns_(std::move(turns)),
      batchBytes_(std::max<std::size_t>(1, kItemBatchBytes / pipe.elementBytes) * pipe.elementBytes),
      sequence_(std::move(sequence)) {
  isOutput_ = true;
  links_.reserve(links.size());
  for (LinkEnd& end : links) links_.emplace_back(std::move(end));
}

void OutPortEnd::write(const void* data, std::size_t count) {
  useFor(Access::Messages);
  send(data, count, nullptr);
}

void OutPortEnd::writeDevice(const void* data, std::size_t count, gpu::Device& device) {
  useFor(Access::Messages);
  send(data, count, &device);
}

bool OutPortEnd::takesVectors() const {
  if (closed_ || links_.empty() || pipe_.split == SplitMode::Duplicate) return false;
  // Under split(demand) the link is chosen when the message goes: any of them may be.
  if (demand()) return std::all_of(links_.begin(), links_.end(), [](const Link& link) { return link.end.isLocal(); });
  return links_[turns_[next_]].end.isLocal();
}

void OutPortEnd::writeVector(std::unique_ptr<detail::MovedVector> message) {
  useFor(Access::Messages);
  if (!takesVectors()) {
    send(message->data(), message->count(), nullptr);
    return;
  }
  ++traffic_.messages;
  traffic_.bytes += message->count() * pipe_.elementBytes;
  LocalLink::Message moved;
  moved.moved = std::move(message);
  if (sequence_) moved.sequence = takeSequence();
  Link& link = nextLink();
  if (trace_ != nullptr) trace_->sent(pipeIndex_, link.end.peerInstance, link.sent);
  link.end.local->push(std::move(moved));
}

std::unique_ptr<detail::MovedVector> OutPortEnd::spareVector(const void* type, std::size_t bytes) {
  return takesVectors() && !demand() ? links_[turns_[next_]].end.local->takeSpare(type, bytes) : nullptr;
}

std::uint64_t OutPortEnd::takeSequence() {
  const std::uint64_t own = numbered_++;
  const InstanceSequence& read = instanceSequence();
  if (read.known) return read.number;
  const std::size_t turns = sequence_->positions.size();
  return own / turns * static_cast<std::uint64_t>(sequence_->cycle) +
         static_cast<std::uint64_t>(sequence_->positions[own % turns]);
}

OutPortEnd::Link& OutPortEnd::nextLink() {
  if (demand()) return demandLink();
  Link& link = links_[turns_[next_]];
  waitingOn(link.end.peerInstance);
  if (++next_ == turns_.size()) next_ = 0;
  ++link.sent;
  return link;
}

void OutPortEnd::makeRoom() {
  useFor(Access::Items);
  if (closed_) throw PipeError(describe() + ": " + owner_ + " pushes after closing the port");
  if (itemWindow_.next == nullptr) {
    itemBatch_.resize(batchBytes_);
    itemWindow_ = {itemBatch_.data(), itemBatch_.data() + itemBatch_.size()};
    if (dealsItems()) {
      dealt_.resize(links_.size());
      for (DealtBatch& batch : dealt_) batch.bytes.resize(batchBytes_);
    }
    return;
  }
  if (dealsItems())
    dealStaged();
  else
    flush();
}

template <std::size_t Bytes>
void OutPortEnd::dealItems(const unsigned char* item, const unsigned char* end) {
  const std::size_t itemBytes = pipe_.elementBytes;
  for (; item != end; item += itemBytes) {
    const std::size_t link = turns_[next_];
    if (++next_ == turns_.size()) next_ = 0;
    DealtBatch& batch = dealt_[link];
    std::memcpy(batch.bytes.data() + batch.fill, item, Bytes == 0 ? itemBytes : Bytes);
    batch.fill += itemBytes;
    if (batch.fill == batch.bytes.size()) sendDealt(link);
  }
}

void OutPortEnd::dealStaged() {
  const unsigned char* begin = itemBatch_.data();
  switch (pipe_.elementBytes) {
    case 4: dealItems<4>(begin, itemWindow_.next); break;
    case 8: dealItems<8>(begin, itemWindow_.next); break;
    default: dealItems<0>(begin, itemWindow_.next); break;
  }
  itemWindow_.next = itemBatch_.data();
}

void OutPortEnd::sendDealt(std::size_t index) {
  DealtBatch& batch = dealt_[index];
  Link& link = links_[index];
  ++traffic_.messages;
  traffic_.bytes += batch.fill;
  ++link.sent;
  waitingOn(link.end.peerInstance);
  if (sequence_) outgoing_ = takeSequence();
  // (Nested when a wait for this send flushes the other links' batches: restored after.)
  const bool wasSending = std::exchange(sendingBatch_, true);
  const std::size_t wasSendingLink = std::exchange(sendingLink_, index);
  try {
    sendTo(link, batch.bytes.data(), batch.fill / pipe_.elementBytes, nullptr);
  } catch (...) {
    sendingBatch_ = wasSending;
    sendingLink_ = wasSendingLink;
    throw;
  }
  sendingBatch_ = wasSending;
  sendingLink_ = wasSendingLink;
  batch.fill = 0;
}

void OutPortEnd::flush() {
  if (dealsItems()) {
    if (itemWindow_.next == nullptr) return;
    // A send of one link's batch waits: the other links' batches go, so that no reader waits for
    // items this port holds (their turns were taken; the staged items wait for their turns).
    if (sendingBatch_) {
      for (std::size_t link = 0; link < dealt_.size(); ++link)
        if (link != sendingLink_ && dealt_[link].fill != 0) sendDealt(link);
      return;
    }
    dealStaged();
    for (std::size_t link = 0; link < dealt_.size(); ++link)
      if (dealt_[link].fill != 0) sendDealt(link);
    return;
  }
  // (Not again while this batch is being sent: a send that waits flushes the instance's batches.)
  if (sendingBatch_ || itemWindow_.next == nullptr || itemWindow_.next == itemBatch_.data()) return;
  const auto bytes = static_cast<std::size_t>(itemWindow_.next - itemBatch_.data());
  sendingBatch_ = true;
  try {
    send(itemBatch_.data(), bytes / pipe_.elementBytes, nullptr);
  } catch (...) {
    sendingBatch_ = false;
    throw;
  }
  sendingBatch_ = false;
  itemWindow_.next = itemBatch_.data();
}

void OutPortEnd::send(const void* data, std::size_t count, gpu::Device* device) {
  if (closed_) throw PipeError(describe() + ": " + owner_ + " writes after closing the port");
  if (count > static_cast<std::size_t>(INT64_MAX) / pipe_.elementBytes)
    throw PipeError(describe() + ": a message of " + std::to_string(count) + " elements is too large");
  ++traffic_.messages;
  traffic_.bytes += count * pipe_.elementBytes;
  if (sequence_) outgoing_ = takeSequence();
  if (pipe_.split == SplitMode::Duplicate) {
    for (Link& link : links_) {
      ++link.sent;
      waitingOn(link.end.peerInstance);
      sendTo(link, data, count, device);
    }
    return;
  }
  sendTo(nextLink(), data, count, device);
}

// `link.sent` already counts this message.
void OutPortEnd::sendTo(Link& link, const void* data, std::size_t count, gpu::Device* device) {
  const std::size_t bytes = count * pipe_.elementBytes;
  if (trace_ != nullptr) trace_->sent(pipeIndex_, link.end.peerInstance, link.sent);
  if (link.end.isLocal()) {
    // The queue waits for room itself. Device memory leaves the device here, as it would for MPI.
    LocalLink::Message message;
    message.sequence = outgoing_;
    message.bytes.resize(bytes);
    if (device != nullptr)
      device->copy(message.bytes.data(), data, bytes, gpu::CopyKind::DeviceToHost);
    else if (bytes != 0)
      std::memcpy(message.bytes.data(), data, bytes);
    link.end.local->push(std::move(message));
    return;
  }
  while (link.sent - 1 - link.credits * batch_ >= window_) awaitCredit(link);
  // The number goes right before the message: a reader takes it, then the message with any tag.
  if (sequence_) DISPAR_MPI(MPI_Send, &outgoing_, 1, MPI_UINT64_T, link.end.peer, kSequenceTag, link.end.comm);
  const bool staged = device != nullptr && !device->transfers().mpiAddressable;
  announce(link, bytes, staged && sendsChunked(bytes, device->transfers().chunkBytes));
  if (staged) {
    sendFromDevice(link.end, data, bytes, *device);
  } else {
    // CUDA-aware MPI reads device memory itself, once the kernels that write it are done.
    if (device != nullptr) device->synchronize();
    if (demand() && device == nullptr && static_cast<MPI_Count>(bytes) > kLargestEagerBytes)
      sendBuffered(link, data, bytes);
    else
      DISPAR_MPI(sendWaiting, data, static_cast<MPI_Count>(bytes), link.end.peer, kDataTag, link.end.comm);
  }
}

void OutPortEnd::sendBuffered(Link& link, const void* data, std::size_t bytes) {
  constexpr std::size_t kSpareBuffers = 2;
  while (!link.buffered.empty() && link.buffered.front().request.test()) {
    if (link.spareBuffers.size() < kSpareBuffers) link.spareBuffers.push_back(std::move(link.buffered.front().bytes));
    link.buffered.pop_front();
  }
  std::vector<unsigned char> copy;
  if (!link.spareBuffers.empty()) {
    copy = std::move(link.spareBuffers.back());
    link.spareBuffers.pop_back();
  }
  copy.resize(bytes);  // a spare of the same size, as a stream's messages usually are: no fill
  std::memcpy(copy.data(), data, bytes);
  Link::BufferedSend& send = link.buffered.emplace_back();
  send.bytes = std::move(copy);
  DISPAR_MPI(mpi::isendBytes, send.bytes.data(), static_cast<MPI_Count>(bytes), link.end.peer, kDataTag, link.end.comm,
             send.request.slot());
}

void OutPortEnd::sendFromDevice(const LinkEnd& to, const void* data, std::size_t bytes, gpu::Device& device) {
  const std::size_t chunkBytes = device.transfers().chunkBytes;
  gpu::CopyEngine& engine = copyEngine(device, chunkBytes);
  if (!sendsChunked(bytes, chunkBytes)) {
    // Small: the pipeline would cost more than it hides. One copy, one plain message.
    if (bytes != 0) {
      engine.startToHost(0, data, bytes);
      awaitCopy(engine, 0);
    }
    DISPAR_MPI(mpi::sendBytes, engine.staging(0), static_cast<MPI_Count>(bytes), to.peer, kDataTag, to.comm);
    return;
  }
  const ChunkHeader header{bytes, chunkBytes};
  DISPAR_MPI(MPI_Send, &header, static_cast<int>(sizeof header), MPI_BYTE, to.peer, kChunkedTag, to.comm);
  sendChunks(data, header, &engine, to.peer, to.comm);
}

void OutPortEnd::announce(Link& link, std::size_t bytes, bool chunked) {
  // The reader may have posted a receive of exactly lastBytes into its own buffer, any tag: anything
  // else must come after a marker, which that receive takes instead (empty, so it never truncates).
  // While the size is unknown the reader probes, so no marker is needed.
  if (link.lastBytes && (chunked || *link.lastBytes != bytes))
    DISPAR_MPI(MPI_Send, nullptr, 0, MPI_BYTE, link.end.peer, kSizeChangeTag, link.end.comm);
  if (chunked)
    link.lastBytes.reset();
  else
    link.lastBytes = bytes;
}

namespace {

// Waiting without holding a core (docs/runtime.md, "Stalls"): MPI's blocking calls poll the network
// for as long as they wait, a whole core for a reader behind a slow producer, or forever in a deadlock.
// These complete the same operations, polling busily for kBusyWait (as MPI would: a stream that flows
// never gets further), then sleeping between polls, up to kLongestSleep. Under SMPI the blocking calls
// wait in simulated time, and are used as they are.

/// Polls `ready` (true when done) busily for `busy`, then with growing sleeps; the instance's pushed
/// items go out first (PendingItems).
template <class Ready>
void pollPatiently(Ready ready, std::chrono::nanoseconds busy) {
  if (ready()) return;
  noteWait();
  PendingItems::flushBeforeWaiting();
  const auto start = std::chrono::steady_clock::now();
  std::chrono::microseconds sleep{10};
  while (!ready()) {
    if (std::chrono::steady_clock::now() - start < busy) {
      Waiting::pause();  // yields the core where instances outnumber cores
      continue;
    }
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, kLongestSleep);
  }
}

#ifndef DISPAR_TARGET_SMPI
/// Completes `request` (of a message of `bytes`), waiting as above; returns MPI's error code. The busy
/// phase grows by the time the message takes at 1 GB/s: MPI moves a large message while it is polled,
/// and a sleeping poll would slow the transfer itself (16 MiB messages at half speed).
int completeWaiting(MPI_Request& request, MPI_Count bytes, MPI_Status* status) {
  int code = MPI_SUCCESS;
  pollPatiently(
      [&] {
        int done = 0;
        code = MPI_Test(&request, &done, status);
        return done != 0 || code != MPI_SUCCESS;
      },
      kBusyWait + std::chrono::nanoseconds(bytes));
  return code;
}
#endif

/// MPI_Recv of `bytes` into `buffer`, waiting as above; posted at once, so a message that comes later
/// lands in `buffer` without an extra copy. Returns MPI's error code (MPI_ERR_TRUNCATE for a longer
/// message, with `status` filled in as MPI_Recv's).
int receiveWaiting(void* buffer, MPI_Count bytes, int source, int tag, MPI_Comm comm, MPI_Status* status) {
#ifdef DISPAR_TARGET_SMPI
  return mpi::recvBytes(buffer, bytes, source, tag, comm, status);
#else
  MPI_Request request = MPI_REQUEST_NULL;
  const int posted = mpi::irecvBytes(buffer, bytes, source, tag, comm, &request);
  if (posted != MPI_SUCCESS) return posted;
  return completeWaiting(request, bytes, status);
#endif
}

/// MPI_Send of `bytes` from `buffer`, waiting as above once it is larger than MPI's eager messages: a
/// blocking send of a large message polls inside MPI until the reader takes it, holding a core the reader
/// may need where instances outnumber cores (milliseconds per message, for the scheduler's time slice).
/// Smaller ones are sent at once, as MPI_Send does.
int sendWaiting(const void* buffer, MPI_Count bytes, int dest, int tag, MPI_Comm comm) {
#ifdef DISPAR_TARGET_SMPI
  return mpi::sendBytes(buffer, bytes, dest, tag, comm);
#else
  if (bytes <= kLargestEagerBytes) return mpi::sendBytes(buffer, bytes, dest, tag, comm);
  MPI_Request request = MPI_REQUEST_NULL;
  const int posted = mpi::isendBytes(buffer, bytes, dest, tag, comm, &request);
  if (posted != MPI_SUCCESS) return posted;
  return completeWaiting(request, bytes, MPI_STATUS_IGNORE);
#endif
}

/// Returns once a message from `end`'s other side can be received, waiting as above, for a blocking
/// receive that must report a longer message as MPI_ERR_TRUNCATE: MPICH raises that error of a completed
/// request (receiveWaiting's MPI_Test) on MPI_COMM_WORLD, whose handler ends the job. receiveWaiting is
/// for receives whose size the protocol guarantees.
void awaitArrival(const LinkEnd& end) {
#ifndef DISPAR_TARGET_SMPI
  pollPatiently([&] {
    int found = 0;
    DISPAR_MPI(MPI_Iprobe, end.peer, MPI_ANY_TAG, end.comm, &found, MPI_STATUS_IGNORE);
    return found != 0;
  });
#else
  (void)end;
#endif
}

/// mpi::mprobe (a matched probe of the next message from `end`'s other side), waiting as above.
void probeWaiting(const LinkEnd& end, mpi::Message* message, MPI_Status* status) {
#ifdef DISPAR_TARGET_SMPI
  DISPAR_MPI(mpi::mprobe, end.peer, MPI_ANY_TAG, end.comm, message, status);
#else
  pollPatiently([&] {
    int found = 0;
    DISPAR_MPI(mpi::improbe, end.peer, MPI_ANY_TAG, end.comm, &found, message, status);
    return found != 0;
  });
#endif
}

}  // namespace

namespace {

// The pause of a reader polling MPI links: a yield while spinning, then a sleep of the poll interval.
void pauseBetweenPolls(bool spinning) {
  noteWait();
  constexpr std::chrono::microseconds kPollInterval{20};
#ifdef DISPAR_TARGET_SMPI
  // SimGrid would time a real yield or sleep as a CPU burst of the rank: noise, and real time that every
  // simulated rank spends in turn. The probes themselves cost simulated time (smpi/iprobe, set by
  // streammap simulate); the sleep is the same interval in simulated time, on an idle core.
  if (spinning) return;
  const smpi::UntimedSection untimed;
  simgrid::s4u::this_actor::sleep_for(std::chrono::duration<double>(kPollInterval).count());
#else
  if (spinning)
    std::this_thread::yield();
  else
    std::this_thread::sleep_for(kPollInterval);
#endif
}

}  // namespace

void OutPortEnd::awaitCredit(Link& link) {
  waitingOn(link.end.peerInstance);
  DISPAR_MPI(receiveWaiting, nullptr, 0, link.end.peer, kCreditTag, link.end.comm, MPI_STATUS_IGNORE);
  ++link.credits;
}

std::uint64_t OutPortEnd::unconsumed(Link& link) {
  if (link.end.isLocal()) {
    // The count first: a reader leaves before it drains, so a drained queue shows its leaving.
    const std::uint64_t queued = link.end.local->queued();
    link.readerGone = link.end.local->readerLeft();
    return queued;
  }
  auto arrived = [&](int tag) {
    int found = 0;
    DISPAR_MPI(MPI_Iprobe, link.end.peer, tag, link.end.comm, &found, MPI_STATUS_IGNORE);
    if (found) DISPAR_MPI(MPI_Recv, nullptr, 0, MPI_BYTE, link.end.peer, tag, link.end.comm, MPI_STATUS_IGNORE);
    return found != 0;
  };
  while (arrived(kCreditTag)) ++link.credits;
  if (!link.readerGone && arrived(kReaderGoneTag)) link.readerGone = true;
  return link.sent - link.credits * batch_;
}

OutPortEnd::Link& OutPortEnd::demandLink() {
  // A reader replica asks for work by taking what it has: the message goes to the link with the fewest
  // unconsumed messages below the window, ties in turn from after the last one chosen (equal readers
  // then alternate, as under split(rr)).
  // A reader whose VNODE returned asks for nothing (what reaches it is dropped), unless all have
  // returned: the stream then drains into them, as under split(rr).
  std::size_t chosen = links_.size();
  auto choose = [&] {
    std::uint64_t fewest = window_;
    bool allGone = true;
    for (std::size_t k = 0; k < links_.size(); ++k) {
      const std::size_t index = (next_ + k) % links_.size();
      const std::uint64_t waiting = unconsumed(links_[index]);
      allGone = allGone && links_[index].readerGone;
      if (waiting < fewest && !links_[index].readerGone) {
        fewest = waiting;
        chosen = index;
      }
    }
    if (chosen == links_.size() && allGone)
      for (std::size_t k = 0; k < links_.size() && chosen == links_.size(); ++k)
        if (unconsumed(links_[(next_ + k) % links_.size()]) < window_) chosen = (next_ + k) % links_.size();
    return chosen != links_.size();
  };
  if (!choose()) {
    waitingOn(-1);  // any of its readers
#ifdef DISPAR_TARGET_SMPI
    for (unsigned idle = 0; !choose(); ++idle) pauseBetweenPolls(idle < 64);
#else
    const bool allLocal =
        std::all_of(links_.begin(), links_.end(), [](const Link& link) { return link.end.isLocal(); });
    if (allLocal && links_.front().end.roomDoorbell) {
      Doorbell& room = *links_.front().end.roomDoorbell;
      PendingItems::flushBeforeWaiting();
      for (std::uint64_t rings = room.rings(); !choose(); rings = room.rings()) room.wait(rings);
    } else {
      pollPatiently(choose);
    }
#endif
  }
  next_ = (chosen + 1) % links_.size();
  Link& link = links_[chosen];
  waitingOn(link.end.peerInstance);
  ++link.sent;
  return link;
}

void OutPortEnd::close() {
  if (closed_) return;
  flush();
  closed_ = true;
  itemWindow_ = {};  // a push after this takes the slow path, which reports it
  // Non-blocking, so a writer never waits on a reader merely to say it is done.
  for (Link& link : links_) {
    if (link.end.isLocal()) {
      LocalLink::Message end;
      end.end = true;
      end.sequence = kEndOfSequence;
      link.end.local->push(std::move(end));
    } else {
      DISPAR_MPI(MPI_Isend, nullptr, 0, MPI_BYTE, link.end.peer, kEndTag, link.end.comm, link.endOfStream.slot());
    }
  }
}

void OutPortEnd::finish() {
  close();
  for (Link& link : links_) {
    if (link.end.isLocal()) continue;  // no credits: the queue itself bounds what is unconsumed
    for (Link::BufferedSend& send : link.buffered) send.request.wait();
    link.buffered.clear();
    link.endOfStream.wait();
    // The reader consumes every message (it drains when its VNODE returns) and so returns exactly
    // sent / batch credits; take them all so none is left unmatched when the communicator goes.
    while (link.credits < link.sent / batch_) awaitCredit(link);
    // Under split(demand) every reader says once that it has returned.
    if (demand() && !link.readerGone) {
      DISPAR_MPI(receiveWaiting, nullptr, 0, link.end.peer, kReaderGoneTag, link.end.comm, MPI_STATUS_IGNORE);
      link.readerGone = true;
    }
  }
}

namespace {
thread_local const std::function<void()>* pendingFlush = nullptr;
thread_local bool flushingPending = false;
}  // namespace

PendingItems::PendingItems(std::function<void()> flush) : flush_(std::move(flush)) { pendingFlush = &flush_; }
PendingItems::~PendingItems() { pendingFlush = nullptr; }

void PendingItems::flushBeforeWaiting() {
  if (pendingFlush == nullptr || flushingPending) return;
  flushingPending = true;
  try {
    (*pendingFlush)();
  } catch (...) {
    flushingPending = false;
    throw;
  }
  flushingPending = false;
}

// ---------------------------------------------------------------------------------------------
// Reader

InPortEnd::InPortEnd(const PipeSpec& pipe, unsigned window, std::string owner, std::vector<LinkEnd> links,
                     const std::vector<std::size_t>& turns, bool sequenced)
    : PortState(pipe, window, std::move(owner)), sequenced_(sequenced) {
  links_.reserve(links.size());
  // Round-robin order takes the links in their turns (a link of weight 2 twice); "any" polls each once.
  if (pipe.order == MergeOrder::RoundRobin) open_ = turns;
  for (LinkEnd& end : links) {
    if (pipe.order != MergeOrder::RoundRobin) open_.push_back(links_.size());
    hasMpiLinks_ = hasMpiLinks_ || !end.isLocal();
    if (end.doorbell) doorbell_ = end.doorbell;
    links_.emplace_back(std::move(end));
  }
  // A sequenced pipe merges whole messages by their numbers, items included.
  dealtItems_ = pipe.order == MergeOrder::RoundRobin && open_.size() > 1 && !sequenced_;
  if (dealtItems_) pending_.resize(links_.size());
  if (pipe.order == MergeOrder::Any && links_.size() > 1 && !doorbell_)
    throw std::logic_error("dispar: a reader of several links in \"any\" order has no doorbell");
}

InPortEnd::Arrival InPortEnd::nextArrival() {
  if (sequenced_) return nextInSequence();
  if (pipe_.order == MergeOrder::Any && open_.size() > 1) {
    waitingOn(-1);  // any of its writers
    return awaitAnyLink();
  }
  Arrival arrival;
  arrival.link = open_[cursor_];
  waitingOn(links_[arrival.link].end.peerInstance);
  return arrival;
}

InPortEnd::Arrival InPortEnd::awaitAnyLink() {
  // MPI has no probe over several communicators: poll them, with the local queues. Only local links:
  // sleep on the doorbell they ring. With MPI links: spin briefly (as MPI's own blocking calls do),
  // then poll every few microseconds so that the rank's other threads keep their cores.
  constexpr unsigned kSpinRounds = 64;
  for (unsigned idle = 0;; ++idle) {
    const std::uint64_t rings = doorbell_->rings();
    for (std::size_t k = 0; k < open_.size(); ++k) {
      Arrival arrival;
      arrival.link = open_[(pollStart_ + k) % open_.size()];
      const LinkEnd& end = links_[arrival.link].end;
      if (end.isLocal()) {
        if (!end.local->ready()) continue;
      } else {
        int found = 0;
        DISPAR_MPI(mpi::improbe, end.peer, MPI_ANY_TAG, end.comm, &found, &arrival.message, &arrival.status);
        if (!found) continue;
        arrival.probed = true;
      }
      ++pollStart_;
      return arrival;
    }
    if (idle == 0) PendingItems::flushBeforeWaiting();
    if (!hasMpiLinks_)
      doorbell_->wait(rings);
    else
      pauseBetweenPolls(idle < kSpinRounds);
  }
}

void InPortEnd::take(std::size_t index, std::uint64_t number) {
  due_ = index;
  if (number == kEndOfSequence) return;
  InstanceSequence& sequence = instanceSequence();
  // Items pushed so far came from the messages numbered before: they go out with that number.
  if (sequence.known && sequence.number != number) PendingItems::flushBeforeWaiting();
  sequence = {true, number};
}

std::optional<std::uint64_t> InPortEnd::tryHead(std::size_t index) {
  const Link& link = links_[index];
  if (!link.stash.empty()) return link.stash.front().sequence;
  return tryUnstashedHead(index);
}

LocalLink::Message InPortEnd::unstash(std::size_t index) {
  Link& link = links_[index];
  LocalLink::Message message = std::move(link.stash.front());
  link.stash.pop_front();
  link.stashedBytes -= message.bytes.size();
  return message;
}

std::optional<std::uint64_t> InPortEnd::tryUnstashedHead(std::size_t index) {
  Link& link = links_[index];
  if (link.end.isLocal()) return link.end.local->peekSequence();
  if (link.head) return link.head;
  // The writer sends each message's number right before it and nothing before its end of stream.
  MPI_Status status;
  int found = 0;
  DISPAR_MPI(MPI_Iprobe, link.end.peer, MPI_ANY_TAG, link.end.comm, &found, &status);
  if (!found) return std::nullopt;
  if (status.MPI_TAG == kEndTag) return link.head = kEndOfSequence;
  MPI_Count bytes = 0;
  DISPAR_MPI(mpi::receivedBytes, &status, &bytes);
  if (status.MPI_TAG != kSequenceTag || bytes != static_cast<MPI_Count>(sizeof(std::uint64_t)))
    throwProtocolError(link.end.peerRank,
                       "a message with tag " + std::to_string(status.MPI_TAG) + " where its sequence number was due");
  std::uint64_t number = 0;
  DISPAR_MPI(MPI_Recv, &number, 1, MPI_UINT64_T, link.end.peer, kSequenceTag, link.end.comm, MPI_STATUS_IGNORE);
  return link.head = number;
}

std::uint64_t InPortEnd::headOf(std::size_t index) {
  const Link& link = links_[index];
  waitingOn(link.end.peerInstance);
  if (link.end.isLocal()) return link.end.local->nextSequence();
  std::optional<std::uint64_t> head = tryHead(index);
#ifdef DISPAR_TARGET_SMPI
  if (!head) {  // a blocking probe waits in simulated time
    DISPAR_MPI(MPI_Probe, link.end.peer, MPI_ANY_TAG, link.end.comm, MPI_STATUS_IGNORE);
    head = tryHead(index);
  }
#else
  if (!head) pollPatiently([&] { return (head = tryHead(index)).has_value(); });
#endif
  return *head;
}

void InPortEnd::stashMessage(std::size_t index) {
  Link& link = links_[index];
  LocalLink::Message message;
  message.sequence = *link.head;
  for (;;) {
    mpi::Message probed;
    MPI_Status status;
    probeWaiting(link.end, &probed, &status);
    MPI_Count bytes = 0;
    DISPAR_MPI(mpi::receivedBytes, &status, &bytes);
    if (status.MPI_TAG == kSizeChangeTag) {  // empty: the message follows
      DISPAR_MPI(mpi::mrecvBytes, nullptr, 0, &probed, MPI_STATUS_IGNORE);
      applyControl(status.MPI_TAG, index);
      continue;
    }
    if (status.MPI_TAG == kChunkedTag) {
      link.lastBytes.reset();
      const ChunkHeader header = receiveHeader(probed, status, index);
      message.bytes.resize(static_cast<std::size_t>(header.totalBytes));
      receiveChunks(message.bytes.data(), header, nullptr, link.end.peer, link.end.comm);
    } else if (status.MPI_TAG == kDataTag) {
      link.lastBytes = static_cast<std::size_t>(bytes);
      message.bytes.resize(static_cast<std::size_t>(bytes));
      DISPAR_MPI(mpi::mrecvBytes, message.bytes.data(), bytes, &probed, MPI_STATUS_IGNORE);
    } else {
      std::vector<unsigned char> discard(static_cast<std::size_t>(bytes));
      DISPAR_MPI(mpi::mrecvBytes, discard.data(), bytes, &probed, MPI_STATUS_IGNORE);
      throwProtocolError(link.end.peerRank,
                         "a message with tag " + std::to_string(status.MPI_TAG) + " after its sequence number");
    }
    link.stashedBytes += message.bytes.size();
    link.stash.push_back(std::move(message));
    link.head.reset();
    return;
  }
}

void InPortEnd::stashAhead() {
  // Stashed messages are not consumed yet, so a writer's window bounds them already (checked anyway);
  // their bytes are bounded as an in-rank link bounds its queue's.
  for (std::size_t index : open_) {
    Link& link = links_[index];
    if (link.end.isLocal()) continue;
    for (;;) {
      const std::optional<std::uint64_t> head = tryUnstashedHead(index);
      if (!head || *head == kEndOfSequence || link.stash.size() >= window_) break;
      if (!link.stash.empty() && link.stashedBytes >= LocalLink::kQueuedBytesLimit) break;
      stashMessage(index);
    }
  }
}

std::size_t InPortEnd::awaitSmallestHead() {
  // Each writer's numbers grow, so once every open link shows its next number the smallest is the next
  // message of the merged stream; a link at its end goes first (it holds nothing back). While one link
  // shows none, the others' messages are received ahead, into their stashes: their writers may be held
  // in sends of large messages this merge takes only later (one of them may even be what the silent
  // link waits for, when its writer deals the stream), and a fast replica of a stream dealt on demand
  // would otherwise be held to the pace of the slowest.
  for (unsigned idle = 0;; ++idle) {
    const std::uint64_t rings = doorbell_ ? doorbell_->rings() : 0;
    std::size_t next = links_.size(), silent = links_.size();
    std::uint64_t smallest = 0;
    for (std::size_t index : open_) {
      const std::optional<std::uint64_t> head = tryHead(index);
      if (!head) {
        silent = index;
        continue;
      }
      if (*head == kEndOfSequence) return index;
      if (next == links_.size() || *head < smallest) {
        next = index;
        smallest = *head;
      }
    }
    if (silent == links_.size()) return next;
    waitingOn(links_[silent].end.peerInstance);
    if (idle == 0) PendingItems::flushBeforeWaiting();
    stashAhead();
    if (!hasMpiLinks_ && doorbell_)
      doorbell_->wait(rings);
    else
      pauseBetweenPolls(idle < 64);
  }
}

InPortEnd::Arrival InPortEnd::nextInSequence() {
  Arrival arrival;
  if (!due_ && pipe_.order == MergeOrder::Any && links_.size() > 1) {
    waitingOn(-1);  // any of its writers
    arrival = awaitAnyLink();
    if (!arrival.probed) {
      take(arrival.link, links_[arrival.link].end.local->nextSequence());
      return arrival;
    }
    if (arrival.status.MPI_TAG == kEndTag) return arrival;  // receive() ends the link
    MPI_Count bytes = 0;
    DISPAR_MPI(mpi::receivedBytes, &arrival.status, &bytes);
    const int source = links_[arrival.link].end.peerRank;
    if (arrival.status.MPI_TAG != kSequenceTag || bytes != static_cast<MPI_Count>(sizeof(std::uint64_t))) {
      std::vector<unsigned char> discard(static_cast<std::size_t>(bytes));
      DISPAR_MPI(mpi::mrecvBytes, discard.data(), bytes, &arrival.message, MPI_STATUS_IGNORE);
      throwProtocolError(source, "a message with tag " + std::to_string(arrival.status.MPI_TAG) +
                                     " where its sequence number was due");
    }
    std::uint64_t number = 0;
    DISPAR_MPI(mpi::mrecvBytes, &number, bytes, &arrival.message, MPI_STATUS_IGNORE);
    take(arrival.link, number);
    return Arrival{arrival.link};
  }
  if (!due_) {
    // One writer: its order. Several: the merge.
    const bool several =
        std::any_of(open_.begin(), open_.end(), [&](std::size_t index) { return index != open_.front(); });
    const std::size_t next = several ? awaitSmallestHead() : open_.front();
    const std::uint64_t number = several ? *tryHead(next) : headOf(next);
    // Taken: the message itself comes next, from the stash or else the link (at the end, end of stream).
    if (links_[next].stash.empty()) links_[next].head.reset();
    take(next, number);
  }
  arrival.link = *due_;
  waitingOn(links_[arrival.link].end.peerInstance);
  return arrival;
}

void InPortEnd::consumed(std::size_t index) {
  Link& link = links_[index];
  due_.reset();
  if (trace_ != nullptr) trace_->taken(pipeIndex_, link.end.peerInstance, link.received + 1);
  if (++link.received % batch_ == 0 && !link.end.isLocal()) {
    link.credit.wait();  // the previous credit: an empty eager message, long delivered
    DISPAR_MPI(MPI_Isend, nullptr, 0, MPI_BYTE, link.end.peer, kCreditTag, link.end.comm, link.credit.slot());
  }
  receivedFrom_ = index;
  // Turn by turn for messages; waitDealtItems takes the turns item by item.
  if (pipe_.order == MergeOrder::RoundRobin && access_ != Access::Items && ++cursor_ == open_.size()) cursor_ = 0;
}

void InPortEnd::ended(std::size_t index) {
  due_.reset();
  // Every turn of the ended link leaves the rotation; the next turn now sits where the current one was.
  std::size_t before = 0;
  for (std::size_t k = 0; k < cursor_ && k < open_.size(); ++k) before += open_[k] == index ? 1 : 0;
  open_.erase(std::remove(open_.begin(), open_.end(), index), open_.end());
  cursor_ -= before;
  if (cursor_ >= open_.size()) cursor_ = 0;
}

void InPortEnd::throwSizeMismatch(const char* expectation, const std::string& received) const {
  throw PipeError(describe() + ": " + owner_ + " expected " + expectation + ", received " + received);
}

void InPortEnd::throwScalarMismatch(const std::string& received) const {
  throwSizeMismatch(
      ("a message of exactly one element (" + plural(pipe_.elementBytes, "byte") + ", read into a scalar)").c_str(),
      received);
}

void InPortEnd::throwProtocolError(int source, const std::string& what) const {
  throw PipeError(describe() + ": " + owner_ + " received " + what + " from rank " + std::to_string(source) +
                  " (a pipe protocol error)");
}

std::string InPortEnd::describeReceived(std::size_t bytes) const {
  if (bytes == 0) return "an empty message";
  if (bytes % pipe_.elementBytes != 0)
    return plural(bytes, "byte") + ", not a whole number of " + std::to_string(pipe_.elementBytes) + "-byte elements";
  return plural(bytes, "byte") + " (" + plural(bytes / pipe_.elementBytes, "element") + ")";
}

bool InPortEnd::read(detail::DestinationFn destination, void* ctx, const char* expectation) {
  useFor(Access::Messages);
  return receive(destination, ctx, expectation, nullptr);
}

bool InPortEnd::readAdopting(detail::DestinationFn destination, detail::AdoptFn adopt, void* ctx,
                             const char* expectation) {
  useFor(Access::Messages);
  return receive(destination, ctx, expectation, nullptr, adopt);
}

bool InPortEnd::readDevice(detail::DestinationFn destination, void* ctx, const char* expectation, gpu::Device& device) {
  useFor(Access::Messages);
  return receive(destination, ctx, expectation, &device);
}

std::size_t InPortEnd::bufferedItems() const {
  return static_cast<std::size_t>(itemWindow_.end - itemWindow_.next) / pipe_.elementBytes;
}

bool InPortEnd::waitItems(std::size_t count) {
  useFor(Access::Items);
  if (dealtItems_) return waitDealtItems(count);
  while (bufferedItems() < count) {
    if (bufferedItems() == 0) {
      // Everything was popped: the message becomes the buffer, received straight into it (same-size
      // messages then take the no-probe path, as the buffer keeps the last message's size).
      ElementBytes target{items_, pipe_.elementBytes};
      if (!receive(&ElementBytes::destination, &target, "a message of any length", nullptr)) return false;
    } else {
      // Keep what is not popped yet, then append the message after it.
      ElementBytes target{incoming_, pipe_.elementBytes};
      if (!receive(&ElementBytes::destination, &target, "a message of any length", nullptr)) return false;
      items_.erase(items_.begin(), items_.begin() + (itemWindow_.next - items_.data()));
      items_.insert(items_.end(), incoming_.begin(), incoming_.end());
    }
    itemWindow_ = {items_.data(), items_.data() + items_.size()};
  }
  return true;
}

bool InPortEnd::waitDealtItems(std::size_t count) {
  if (bufferedItems() >= count) return true;
  // Keep what is not popped yet; append one item per turn after it.
  items_.erase(items_.begin(), items_.begin() + (itemWindow_.next - items_.data()));
  const std::size_t itemBytes = pipe_.elementBytes;
  bool more = true;
  while (items_.size() < count * itemBytes) {
    if (open_.empty()) {
      more = false;
      break;
    }
    const std::size_t link = open_[cursor_];
    Pending& pending = pending_[link];
    if (pending.taken == pending.bytes.size()) {
      // Only this link's next message: receive() stops at its end (then its turns leave the rotation).
      ElementBytes target{incoming_, itemBytes};
      if (!receive(&ElementBytes::destination, &target, "a message of any length", nullptr)) continue;
      Pending& from = pending_[receivedFrom_];
      from.bytes.erase(from.bytes.begin(), from.bytes.begin() + static_cast<std::ptrdiff_t>(from.taken));
      from.taken = 0;
      from.bytes.insert(from.bytes.end(), incoming_.begin(), incoming_.end());
      continue;
    }
    items_.insert(items_.end(), pending.bytes.begin() + static_cast<std::ptrdiff_t>(pending.taken),
                  pending.bytes.begin() + static_cast<std::ptrdiff_t>(pending.taken + itemBytes));
    pending.taken += itemBytes;
    if (++cursor_ == open_.size()) cursor_ = 0;
  }
  itemWindow_ = {items_.data(), items_.data() + items_.size()};
  return more;
}

void InPortEnd::peek(std::size_t index, void* item) {
  useFor(Access::Items);
  // As StreamIt's peek: waits for the item (its writer may be a rate behind).
  if (index >= bufferedItems() && !waitItems(index + 1))
    throw PipeError(describe() + ": " + owner_ + " peeks at item " + std::to_string(index) +
                    " but the stream ended with " + plural(bufferedItems(), "item") + " left");
  std::memcpy(item, itemWindow_.next + index * pipe_.elementBytes, pipe_.elementBytes);
}

void InPortEnd::pop(void* item) {
  if (!waitItems(1)) throw PipeError(describe() + ": " + owner_ + " pops at the end of the stream");
  std::memcpy(item, itemWindow_.next, pipe_.elementBytes);
  itemWindow_.next += pipe_.elementBytes;
}

void InPortEnd::drop(std::size_t count) {
  if (!waitItems(count))
    throw PipeError(describe() + ": " + owner_ + " pops " + plural(count, "item") + " but the stream ended with " +
                    plural(bufferedItems(), "item") + " left");
  itemWindow_.next += count * pipe_.elementBytes;
}

bool InPortEnd::applyControl(int tag, std::size_t link) {
  switch (tag) {
    case kSizeChangeTag: links_[link].lastBytes.reset(); return true;
    case kEndTag: ended(link); return true;
    case kSequenceTag: return true;  // only finish() meets one: nothing reads after it
    default: return false;
  }
}

ChunkHeader InPortEnd::receiveHeader(mpi::Message& message, const MPI_Status& status, std::size_t index) {
  MPI_Count bytes = 0;
  DISPAR_MPI(mpi::receivedBytes, &status, &bytes);
  ChunkHeader header{0, 0};
  if (bytes != static_cast<MPI_Count>(sizeof header)) {
    std::vector<unsigned char> discard(static_cast<std::size_t>(bytes));
    DISPAR_MPI(mpi::mrecvBytes, discard.data(), bytes, &message, MPI_STATUS_IGNORE);
  } else {
    DISPAR_MPI(mpi::mrecvBytes, &header, static_cast<MPI_Count>(sizeof header), &message, MPI_STATUS_IGNORE);
  }
  if (bytes != static_cast<MPI_Count>(sizeof header) || !plausibleHeader(header))
    throw PipeError(describe() + ": " + owner_ + " received a malformed chunked-message header from rank " +
                    std::to_string(links_[index].end.peerRank));
  return header;
}

void InPortEnd::receivePlain(mpi::Message& message, MPI_Count bytes, void* target, gpu::Device* device) {
  const auto size = static_cast<std::size_t>(bytes);
  if (device == nullptr || device->transfers().mpiAddressable || size == 0) {
    DISPAR_MPI(mpi::mrecvBytes, target, bytes, &message, MPI_STATUS_IGNORE);
    return;
  }
  // A plain message into device memory: through a staging buffer, or, when a host writer sent more
  // than one holds, through host memory in one piece (the writer chose not to chunk it).
  gpu::CopyEngine& engine = copyEngine(*device, 0);
  if (size <= engine.capacity()) {
    DISPAR_MPI(mpi::mrecvBytes, engine.staging(0), bytes, &message, MPI_STATUS_IGNORE);
    engine.startToDevice(0, target, size);
    awaitCopy(engine, 0);
    return;
  }
  std::vector<unsigned char> bounce(size);
  DISPAR_MPI(mpi::mrecvBytes, bounce.data(), bytes, &message, MPI_STATUS_IGNORE);
  device->copy(target, bounce.data(), size, gpu::CopyKind::HostToDevice);
}

InPortEnd::SameSize InPortEnd::receiveSameSize(detail::DestinationFn destination, void* ctx, std::size_t index) {
  Link& link = links_[index];
  const int source = link.end.peerRank;
  if (!link.lastBytes || *link.lastBytes % pipe_.elementBytes != 0) return SameSize::NotTried;
  const std::size_t bytes = *link.lastBytes;
  void* target = destination(ctx, bytes / pipe_.elementBytes, detail::DestinationMode::AlreadySized);
  if (target == nullptr) return SameSize::NotTried;
  // Any tag: this data message, end of stream or a size-change marker. The last two are empty, so the
  // caller's buffer is untouched unless data of exactly its size arrives.
  MPI_Status status;
  const int code =
      receiveWaiting(target, static_cast<MPI_Count>(bytes), link.end.peer, MPI_ANY_TAG, link.end.comm, &status);
  if (code != MPI_SUCCESS) {
    int errorClass = MPI_SUCCESS;
    MPI_Error_class(code, &errorClass);
    if (errorClass != MPI_ERR_TRUNCATE) throwMpiFailure(code, "receiveWaiting", __FILE__, __LINE__);
    // A writer always sends a marker before a message of another size, so this is not a size the
    // caller got wrong. The message was received (truncated): count it, and probe from now on.
    link.lastBytes.reset();
    consumed(index);
    throwProtocolError(source, "a message longer than the last one (" + plural(bytes, "byte") +
                                   ") without a size-change marker");
  }
  switch (status.MPI_TAG) {
    case kDataTag: {
      MPI_Count received = 0;
      DISPAR_MPI(mpi::receivedBytes, &status, &received);
      consumed(index);
      if (received == static_cast<MPI_Count>(bytes)) return SameSize::Received;
      link.lastBytes = static_cast<std::size_t>(received);
      throwProtocolError(source, describeReceived(static_cast<std::size_t>(received)) + " after a message of " +
                                     plural(bytes, "byte") + " without a size-change marker");
    }
    case kEndTag:
    case kSizeChangeTag:
      applyControl(status.MPI_TAG, index);
      return status.MPI_TAG == kEndTag ? SameSize::Ended : SameSize::Changed;
    default: {
      // Only a chunked-message header could get here, and a writer announces those too.
      link.lastBytes.reset();
      MPI_Count received = 0;
      DISPAR_MPI(mpi::receivedBytes, &status, &received);
      ChunkHeader header{0, 0};
      if (status.MPI_TAG == kChunkedTag && received == static_cast<MPI_Count>(sizeof header)) {
        std::memcpy(&header, target, sizeof header);
        if (plausibleHeader(header)) discardChunks(header, link.end.peer, link.end.comm);
        consumed(index);
      }
      throwProtocolError(source,
                         "a message with tag " + std::to_string(status.MPI_TAG) + " without a size-change marker");
    }
  }
}

// The message's vector goes back to the writer when its Delivery ends: after a swap, the reader's
// previous one.
void InPortEnd::deliverLocal(LocalLink::Message& message, detail::DestinationFn destination, void* ctx,
                             const char* expectation, gpu::Device* device, detail::AdoptFn adopt) {
  if (message.moved && adopt != nullptr && adopt(ctx, *message.moved)) return;
  const void* source = message.data();
  const std::size_t bytes = message.size(pipe_.elementBytes);
  void* target = bytes % pipe_.elementBytes == 0
                     ? destination(ctx, bytes / pipe_.elementBytes, detail::DestinationMode::Resize)
                     : nullptr;
  if (target == nullptr) throwSizeMismatch(expectation, describeReceived(bytes));
  if (bytes == 0) return;
  if (device != nullptr)
    device->copy(target, source, bytes, gpu::CopyKind::HostToDevice);
  else
    std::memcpy(target, source, bytes);
}

bool InPortEnd::receive(detail::DestinationFn destination, void* ctx, const char* expectation, gpu::Device* device,
                        detail::AdoptFn adopt) {
  while (!open_.empty()) {
    Arrival arrival = nextArrival();
    const std::size_t index = arrival.link;
    const LinkEnd& from = links_[index].end;
    // Items dealt turn by turn want this link's next message, not the next link's after its end.
    const bool oneLink = dealtItems_ && access_ == Access::Items;
    if (!links_[index].stash.empty()) {
      LocalLink::Message stashed = unstash(index);
      consumed(index);
      deliverLocal(stashed, destination, ctx, expectation, device, adopt);
      return true;
    }
    if (from.isLocal()) {
      if (popLocal(index, [&](LocalLink::Message& message) {
            deliverLocal(message, destination, ctx, expectation, device, adopt);
          }))
        return true;
      if (oneLink) return false;
      continue;
    }
    if (!arrival.probed) {
      // Into host memory: no probe round when the size is the last one.
      if (device == nullptr) {
        const SameSize outcome = receiveSameSize(destination, ctx, index);
        if (outcome == SameSize::Received) return true;
        if (outcome == SameSize::Ended && oneLink) return false;
        if (outcome != SameSize::NotTried) continue;  // ended, or the next message's size is probed
      }
      probeWaiting(from, &arrival.message, &arrival.status);
    }
    mpi::Message& message = arrival.message;
    const MPI_Status& status = arrival.status;
    if (status.MPI_TAG == kSizeChangeTag || status.MPI_TAG == kEndTag) {  // empty control messages
      DISPAR_MPI(mpi::mrecvBytes, nullptr, 0, &message, MPI_STATUS_IGNORE);
      applyControl(status.MPI_TAG, index);
      if (status.MPI_TAG == kEndTag && oneLink) return false;
      continue;
    }
    if (status.MPI_TAG == kChunkedTag) {
      links_[index].lastBytes.reset();
      const ChunkHeader header = receiveHeader(message, status, index);
      const auto size = static_cast<std::size_t>(header.totalBytes);
      void* target = size % pipe_.elementBytes == 0
                         ? destination(ctx, size / pipe_.elementBytes, detail::DestinationMode::Resize)
                         : nullptr;
      if (target == nullptr) {
        discardChunks(header, from.peer, from.comm);
        consumed(index);
        throwSizeMismatch(expectation, describeReceived(size));
      }
      gpu::CopyEngine* engine = nullptr;
      if (device != nullptr && !device->transfers().mpiAddressable)
        engine = &copyEngine(*device, static_cast<std::size_t>(header.chunkBytes));
      receiveChunks(target, header, engine, from.peer, from.comm);
      consumed(index);
      return true;
    }
    // The matched probe told the size: let the caller size its buffer, receive straight into it.
    MPI_Count bytes = 0;
    DISPAR_MPI(mpi::receivedBytes, &status, &bytes);
    const auto size = static_cast<std::size_t>(bytes);
    links_[index].lastBytes = size;  // as the writer's, even if the caller rejects the message
    void* target = size % pipe_.elementBytes == 0
                       ? destination(ctx, size / pipe_.elementBytes, detail::DestinationMode::Resize)
                       : nullptr;
    if (target == nullptr) {
      std::vector<unsigned char> discard(size);
      DISPAR_MPI(mpi::mrecvBytes, discard.data(), bytes, &message, MPI_STATUS_IGNORE);
      throwSizeMismatch(expectation, describeReceived(size));
    }
    receivePlain(message, bytes, target, device);
    consumed(index);
    return true;
  }
  return false;
}

bool InPortEnd::readElement(void* element) {
  useFor(Access::Messages);
  const auto elementBytes = static_cast<MPI_Count>(pipe_.elementBytes);
  while (!open_.empty()) {
    Arrival arrival = nextArrival();
    const std::size_t index = arrival.link;
    const LinkEnd& from = links_[index].end;
    MPI_Status status;
    if (!links_[index].stash.empty()) {
      const LocalLink::Message stashed = unstash(index);
      consumed(index);
      const std::size_t bytes = stashed.size(pipe_.elementBytes);
      if (bytes != pipe_.elementBytes) throwScalarMismatch(describeReceived(bytes));
      std::memcpy(element, stashed.data(), bytes);
      return true;
    }
    if (from.isLocal()) {
      if (popLocal(index, [&](LocalLink::Message& message) {
            const std::size_t bytes = message.size(pipe_.elementBytes);
            if (bytes != pipe_.elementBytes) throwScalarMismatch(describeReceived(bytes));
            std::memcpy(element, message.data(), bytes);
          }))
        return true;
      continue;
    }
    if (arrival.probed) {
      // "any" order found it by probing: receive it whole, whatever its size.
      if (arrival.status.MPI_TAG == kChunkedTag) {
        links_[index].lastBytes.reset();
        const ChunkHeader header = receiveHeader(arrival.message, arrival.status, index);
        discardChunks(header, from.peer, from.comm);
        consumed(index);
        throwScalarMismatch(describeReceived(static_cast<std::size_t>(header.totalBytes)));
      }
      MPI_Count bytes = 0;
      DISPAR_MPI(mpi::receivedBytes, &arrival.status, &bytes);
      if (bytes == elementBytes) {
        DISPAR_MPI(mpi::mrecvBytes, element, bytes, &arrival.message, &status);
      } else {
        std::vector<unsigned char> whole(static_cast<std::size_t>(bytes));
        DISPAR_MPI(mpi::mrecvBytes, whole.data(), bytes, &arrival.message, &status);
        if (bytes > elementBytes) {
          links_[index].lastBytes = static_cast<std::size_t>(bytes);
          consumed(index);
          throwScalarMismatch(describeReceived(static_cast<std::size_t>(bytes)));
        }
      }
    } else {
      // No probe round: receive into the element; a longer message fails with MPI_ERR_TRUNCATE.
      awaitArrival(from);
      const int code = mpi::recvBytes(element, elementBytes, from.peer, MPI_ANY_TAG, from.comm, &status);
      if (code != MPI_SUCCESS) {
        int errorClass = MPI_SUCCESS;
        MPI_Error_class(code, &errorClass);
        if (errorClass == MPI_ERR_TRUNCATE) {
          // Its size is unknown here: the link probes next.
          links_[index].lastBytes.reset();
          // The message was received, truncated: count it, so that its writer gets every credit and a
          // VNODE that catches this error and reads on cannot leave the writer waiting. MPI fills in the
          // tag of a truncated receive (MPICH does; otherwise the counts stay as they were).
          if (status.MPI_TAG == kDataTag) consumed(index);
          // MPI does not say how long the message was, only that it did not fit.
          throwScalarMismatch("a longer message (more than " + plural(pipe_.elementBytes, "byte") + ")");
        }
        throwMpiFailure(code, "mpi::recvBytes", __FILE__, __LINE__);
      }
    }
    if (applyControl(status.MPI_TAG, index)) continue;  // empty: the element is untouched
    if (status.MPI_TAG == kChunkedTag) {
      links_[index].lastBytes.reset();
      // The element buffer (at least a header long, or MPI would have truncated) holds the header.
      ChunkHeader header{0, 0};
      std::memcpy(&header, element, sizeof header);
      discardChunks(header, from.peer, from.comm);
      consumed(index);
      throwScalarMismatch(describeReceived(static_cast<std::size_t>(header.totalBytes)));
    }
    MPI_Count bytes = 0;
    DISPAR_MPI(mpi::receivedBytes, &status, &bytes);
    links_[index].lastBytes = static_cast<std::size_t>(bytes);
    consumed(index);  // it was received; keep the credit accounting exact
    if (bytes != elementBytes) throwScalarMismatch(describeReceived(static_cast<std::size_t>(bytes)));
    return true;
  }
  return false;
}

void InPortEnd::finish() {
  // Under split(demand) a writer deals no more to a reader whose VNODE returned.
  if (pipe_.split == SplitMode::Demand)
    for (Link& link : links_) {
      if (link.end.isLocal())
        link.end.local->leaveReading();
      else
        DISPAR_MPI(MPI_Isend, nullptr, 0, MPI_BYTE, link.end.peer, kReaderGoneTag, link.end.comm, link.gone.slot());
    }
  // A VNODE may return before its inputs end; consume the rest so writers waiting for credit finish.
  std::vector<unsigned char> scratch;
  while (!open_.empty()) {
    Arrival arrival = nextArrival();
    const std::size_t index = arrival.link;
    const LinkEnd& from = links_[index].end;
    if (!links_[index].stash.empty()) {
      unstash(index);
      consumed(index);
      continue;
    }
    if (from.isLocal()) {
      popLocal(index, [](LocalLink::Message&) {});
      continue;
    }
    if (!arrival.probed) probeWaiting(from, &arrival.message, &arrival.status);
    const MPI_Status& status = arrival.status;
    MPI_Count bytes = 0;
    DISPAR_MPI(mpi::receivedBytes, &status, &bytes);
    scratch.resize(static_cast<std::size_t>(bytes));
    DISPAR_MPI(mpi::mrecvBytes, scratch.data(), bytes, &arrival.message, MPI_STATUS_IGNORE);
    if (applyControl(status.MPI_TAG, index)) continue;  // markers take no credit; end closes the link
    // Mirror the writer's size as reads do, though nothing reads after this.
    if (status.MPI_TAG == kDataTag)
      links_[index].lastBytes = scratch.size();
    else
      links_[index].lastBytes.reset();
    if (status.MPI_TAG == kChunkedTag) {
      ChunkHeader header{0, 0};
      if (scratch.size() == sizeof header) std::memcpy(&header, scratch.data(), sizeof header);
      if (plausibleHeader(header)) discardChunks(header, from.peer, from.comm);
    }
    consumed(index);
  }
  for (Link& link : links_) {
    link.credit.wait();
    link.gone.wait();
  }
}

}  // namespace dispar::rt
