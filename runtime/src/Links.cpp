#include "Links.h"

#include "Ports.h"
#include "Profile.h"
#include "Program.h"

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace dispar::rt {
namespace {

void pauseCpu() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

/// Whether this thread was lately taken off its core for another thread: two involuntary context switches
/// (getrusage(RUSAGE_THREAD)) in a 10 ms window, after which it stays so for 200 ms (sleeping instead of
/// spinning, the thread is no longer preempted, so the sign would vanish with the cure). A waiter that
/// spins then holds a core the thread it waits for needs. A hypervisor's preemption of the whole machine
/// does not count, unlike a gap between two polls (tried first: this VM makes such gaps with nothing else
/// running). bench/inrank_pipe --busy: a writer and a reader sharing one core beside a busy process copied
/// at 0.07-0.30 of memcpy's speed while the waiter spun.
bool threadPreemptedLately(std::chrono::steady_clock::time_point now) {
  constexpr auto kWindow = std::chrono::milliseconds(10);
  constexpr auto kHold = std::chrono::milliseconds(200);
  thread_local std::chrono::steady_clock::time_point nextCheck{};
  thread_local long switches = -1;
  thread_local bool preempted = false;
  if (now < nextCheck) return preempted;
  rusage usage{};
  if (::getrusage(RUSAGE_THREAD, &usage) != 0) return preempted = false;
  preempted = switches >= 0 && usage.ru_nivcsw - switches >= 2;
  switches = usage.ru_nivcsw;
  nextCheck = now + (preempted ? kHold : kWindow);
  return preempted;
}

}  // namespace

std::atomic<bool> Waiting::crowded_{false};

void Waiting::pause() {
  noteWait();
  // Crowded: yield the core every few polls, not at every one. A yield is a system call and a pass
  // through the scheduler (about a microsecond here), which a wait of a few microseconds would pay at
  // every poll; a few CPU pauses in between still hand the core over within microseconds.
  thread_local unsigned polls = 0;
  if (crowded() && ++polls % kPollsPerYield == 0)
    std::this_thread::yield();
  else
    pauseCpu();
}

void Doorbell::ring() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++rings_;
  }
  rung_.notify_all();
}

std::uint64_t Doorbell::rings() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rings_;
}

void Doorbell::wait(std::uint64_t seen) {
  noteWait();
  std::unique_lock<std::mutex> lock(mutex_);
  rung_.wait(lock, [&] { return rings_ != seen; });
}

std::size_t LocalLink::bytesOf(const Message& message) const { return message.size(elementBytes_); }

void LocalLink::push(Message message) {
  // About to wait for room: the instance's pushed items go out first (PendingItems). Read without the
  // lock, which the flush may need (it may push to this very link).
  if (!message.end && queued_.load(std::memory_order_acquire) >= window_) PendingItems::flushBeforeWaiting();
  bool wake = false;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    const std::size_t bytes = bytesOf(message);
    // End of stream never waits, as the MPI writer's end message does not.
    if (!message.end) {
      ++writersWaiting_;
      const auto room = [&] {
        return queue_.size() < window_ && (queue_.empty() || queuedBytes_ + bytes <= kQueuedBytesLimit);
      };
      if (!room()) noteWait();
      changed_.wait(lock, room);
      --writersWaiting_;
    }
    queuedBytes_ += bytes;
    queue_.push_back(std::move(message));
    queued_.store(queue_.size(), std::memory_order_release);
    wake = readersWaiting_ > 0;
  }
  if (wake) changed_.notify_all();
  if (doorbell_) doorbell_->ring();
}

std::atomic<std::int64_t> LocalLink::spinNanoseconds_{LocalLink::kSpinWithCores.count()};

void LocalLink::setSpin(std::chrono::nanoseconds spin) {
  spinNanoseconds_.store(spin.count(), std::memory_order_relaxed);
}

template <class Ready>
void LocalLink::spinUntil(Ready ready) {
  using Clock = std::chrono::steady_clock;
  const std::int64_t spin = spinNanoseconds_.load(std::memory_order_relaxed);
  // Where the instances have a core each (the long spin), a thread that is being preempted shares its core
  // with another process: it sleeps at once. Where they outnumber the cores, every thread is preempted
  // and the short spin stays (sleeping at once there cost Task Bench's stencil at W = 8 a fifth).
  const bool longSpin = spin > kSpinWithoutCores.count();
  if (ready()) return;
  const Clock::time_point start = Clock::now(), until = start + std::chrono::nanoseconds(spin);
  if (longSpin && threadPreemptedLately(start)) return;
  for (unsigned round = 1; !ready(); ++round) {
    Waiting::pause();
    if (round % 64 != 0) continue;
    const Clock::time_point now = Clock::now();  // one clock read serves both tests
    if (now >= until || (longSpin && threadPreemptedLately(now))) return;
  }
}

LocalLink::Delivery LocalLink::pop() {
  // A reader usually outpaces its writer (taking a message costs no copy) and would sleep and be woken
  // for every message, which costs more than a large copy: wait awake first, where there are cores.
  if (queued_.load(std::memory_order_acquire) == 0) PendingItems::flushBeforeWaiting();
  spinUntil([&] { return queued_.load(std::memory_order_acquire) != 0; });
  Message message;
  bool wake = false;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    ++readersWaiting_;
    if (queue_.empty()) noteWait();
    changed_.wait(lock, [&] { return !queue_.empty(); });
    --readersWaiting_;
    message = std::move(queue_.front());
    queue_.pop_front();
    queuedBytes_ -= bytesOf(message);
    queued_.store(queue_.size(), std::memory_order_release);
    delivering_ = true;
    wake = writersWaiting_ > 0;
  }
  if (wake) changed_.notify_all();
  if (roomDoorbell_) roomDoorbell_->ring();
  return Delivery(*this, std::move(message));
}

std::optional<std::uint64_t> LocalLink::peekSequence() const {
  if (queued_.load(std::memory_order_acquire) == 0) return std::nullopt;
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.front().end ? kEndOfSequence : queue_.front().sequence;
}

std::uint64_t LocalLink::nextSequence() {
  if (queued_.load(std::memory_order_acquire) == 0) PendingItems::flushBeforeWaiting();
  spinUntil([&] { return queued_.load(std::memory_order_acquire) != 0; });
  std::unique_lock<std::mutex> lock(mutex_);
  ++readersWaiting_;
  if (queue_.empty()) noteWait();
  changed_.wait(lock, [&] { return !queue_.empty(); });
  --readersWaiting_;
  return queue_.front().end ? kEndOfSequence : queue_.front().sequence;
}

void LocalLink::delivered(std::unique_ptr<detail::MovedVector> spare) {
  constexpr std::size_t kSpares = 8;
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    delivering_ = false;
    if (spare && spares_.size() < kSpares) spares_.push_back(std::move(spare));
    spareCount_.store(spares_.size(), std::memory_order_release);
    wake = writersWaiting_ > 0;
  }
  if (wake) changed_.notify_all();
}

std::unique_ptr<detail::MovedVector> LocalLink::takeSpare(const void* type, std::size_t bytes) {
  if (bytes >= kLargeCopyBytes) spinUntil([&] { return spareCount_.load(std::memory_order_acquire) != 0; });
  std::unique_lock<std::mutex> lock(mutex_);
  if (bytes >= kLargeCopyBytes && spares_.empty() && (!queue_.empty() || delivering_)) {
    ++writersWaiting_;
    noteWait();
    changed_.wait(lock, [&] { return !spares_.empty() || (queue_.empty() && !delivering_); });
    --writersWaiting_;
  }
  if (spares_.empty() || spares_.back()->type != type) return nullptr;
  std::unique_ptr<detail::MovedVector> spare = std::move(spares_.back());
  spares_.pop_back();
  spareCount_.store(spares_.size(), std::memory_order_release);
  return spare;
}

bool LocalLink::ready() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !queue_.empty();
}

LinkTable::LinkTable(const ProgramSpec& program, const RankGroups& groups, int rank, unsigned programWindow) {
  const std::vector<bool> sequenced = sequencedPipes(program);
  for (int p = 0; p < program.pipeCount; ++p) {
    const PipeSpec& pipe = program.pipes[p];
    const VnodeSpec& writer = program.vnodes[pipe.writerVnode];
    const lang::LogicalStream stream = logicalStream(program, pipe);
    for (int w = 0; w < writer.replicas; ++w) {
      for (int r : lang::distinctInOrder(stream.writerPeers(w))) {
        const int writerInstance = writer.firstRank + w;
        const int readerInstance = rt::readerInstance(program, pipe, r);
        const int writerRank = groups.rankOfInstance[static_cast<std::size_t>(writerInstance)];
        const int readerRank = groups.rankOfInstance[static_cast<std::size_t>(readerInstance)];
        if (writerRank != rank && readerRank != rank) continue;
        Link& link = links_[{p, writerInstance, readerInstance}];
        link.writerRank = writerRank;
        link.readerRank = readerRank;
        if (writerRank == readerRank)
          link.local = std::make_shared<LocalLink>(effectiveWindow(pipe, programWindow), pipe.elementBytes);
        else
          link.comm = Communicator::ofPair(MPI_COMM_WORLD, writerRank, readerRank);
      }
    }
    // A split(demand) writer waits for room on any of its links: its local links ring one doorbell.
    if (pipe.split == SplitMode::Demand)
      for (int w = 0; w < writer.replicas; ++w) {
        const int writerInstance = writer.firstRank + w;
        if (groups.rankOfInstance[static_cast<std::size_t>(writerInstance)] != rank) continue;
        auto doorbell = std::make_shared<Doorbell>();
        for (int r : lang::distinctInOrder(stream.writerPeers(w)))
          if (const auto& local = links_[{p, writerInstance, rt::readerInstance(program, pipe, r)}].local)
            local->setRoomDoorbell(doorbell);
        roomDoorbells_[{p, writerInstance}] = std::move(doorbell);
      }
    // A reader that merges several links as they come, or by sequence number, waits on all of them at
    // once: its local links ring one doorbell.
    if (pipe.order != MergeOrder::Any && !sequenced[static_cast<std::size_t>(p)]) continue;
    for (int r = 0; r < stream.readers(); ++r) {
      const int readerInstance = rt::readerInstance(program, pipe, r);
      if (groups.rankOfInstance[static_cast<std::size_t>(readerInstance)] != rank) continue;
      const std::vector<int> writers = lang::distinctInOrder(stream.readerPeers(r));
      if (writers.size() < 2) continue;
      auto doorbell = std::make_shared<Doorbell>();
      for (int w : writers)
        if (const auto& local = links_[{p, writer.firstRank + w, readerInstance}].local) local->setDoorbell(doorbell);
      doorbells_[{p, readerInstance}] = std::move(doorbell);
    }
  }
}

LinkEnd LinkTable::end(int pipe, int writer, int reader, PortRole role) const {
  const auto found = links_.find({pipe, writer, reader});
  if (found == links_.end())
    throw std::logic_error("dispar: no link from instance " + std::to_string(writer) + " to " + std::to_string(reader) +
                           " on pipe " + std::to_string(pipe) + " in this rank");
  LinkEnd end;
  end.local = found->second.local;
  end.comm = found->second.comm.get();
  end.peer = role == PortRole::Writer ? 1 : 0;
  end.peerRank = role == PortRole::Writer ? found->second.readerRank : found->second.writerRank;
  if (role == PortRole::Reader)
    if (const auto doorbell = doorbells_.find({pipe, reader}); doorbell != doorbells_.end())
      end.doorbell = doorbell->second;
  if (role == PortRole::Writer)
    if (const auto doorbell = roomDoorbells_.find({pipe, writer}); doorbell != roomDoorbells_.end())
      end.roomDoorbell = doorbell->second;
  return end;
}

}  // namespace dispar::rt
