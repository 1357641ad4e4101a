#include "BlockRunner.h"

#include "Diagnostics.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>

namespace dispar::hostk::detail {

__thread ThreadContext* currentThread = nullptr;
__thread ThreadLoopBlock* currentLoopBlock = nullptr;

struct BlockRunner::Fiber {
  Fiber(BlockRunner& owner, std::size_t stackBytes, std::size_t index)
      : runner(&owner), stack(stackBytes, FiberStack::colorFor(index)) {
    restart();
  }
  /// Points the context at a fresh start of fiberMain (also drops whatever the stack held).
  void restart() { context.prepare(stack.low(), stack.bytes(), &BlockRunner::fiberMain, this); }

  BlockRunner* runner;
  FiberStack stack;
  ExecutionContext context;
  ThreadContext* thread = nullptr;        ///< the CUDA thread on this fiber, while it has one
  BarrierSite site{};                     ///< where that thread waits, while it waits
  const BarrierSite* askingAt = nullptr;  ///< where it asks __activemask, while it asks (null: anywhere)
  bool atGridSync = false;                ///< the barrier it waits at is grid_group::sync()
};

BlockRunner::BlockRunner(const HostConfig& config) : config_(config) {}

BlockRunner::~BlockRunner() = default;

bool BlockRunner::run(const KernelLaunch& launch, const uint3& blockIdx) {
  if (launch.form == CloneForm::GridLoops) return runGridLoops(launch, blockNumber(blockIdx, launch.gridDim), 1);
  launch_ = &launch;
  blockIdx_ = blockIdx;
  threadCount_ = static_cast<unsigned>(launch.blockDim.volume());
  nextThread_ = 0;
  nextThreadIdx_ = uint3{0, 0, 0};
  failed_ = false;
  arrivedTrue_ = 0;
  shared_.startBlock(launch.dynamicSharedBytes);
  if (launch.form == CloneForm::ThreadLoops) {
    runThreadLoops();
    launch_ = nullptr;
    return !failed_;
  }
  warpCount_ = (threadCount_ + kWarpLanes - 1) / kWarpLanes;
  if (warps_.size() < warpCount_) warps_.resize(warpCount_);
  for (unsigned w = 0; w < warpCount_; ++w) warps_[w] = WarpState{};
  laneMeeting_.assign(threadCount_, nullptr);
  freeMeetings_.clear();
  for (const auto& meeting : meetings_) freeMeetings_.push_back(meeting.get());
  warpsWaiting_ = 0;

  // The fibers pass control among themselves (see pickNext) and come back here once the block is
  // over: every thread exited, or one failed.
  running_ = &takeIdleFiber();
  ExecutionContext::switchTo(scheduler_, running_->context);
  running_ = nullptr;
  currentThread = nullptr;
  if (failed_) abandonSuspendedFibers();
  launch_ = nullptr;
  return !failed_;
}

void BlockRunner::invokeClone(const ThreadContext& thread) {
  try {
    launch_->invoke(launch_->closure);
  } catch (const std::exception& error) {
    recordFailure(thread, error.what());
  } catch (...) {
    recordFailure(thread, "an exception that is not a std::exception");
  }
}

void BlockRunner::runThreadLoops() {
  // Cleared only after a block in which threads returned early: most blocks have none.
  if (loopExitedDirty_ || loopExited_.size() < threadCount_)
    loopExited_.assign(std::max<std::size_t>(threadCount_, loopExited_.size()), 0);
  scratch_.startBlock();
  loopExitedDirty_ = runLoopClone(loopExited_.data(), 0, 1) > 0;
}

bool BlockRunner::runGridLoops(const KernelLaunch& launch, std::uint64_t first, std::uint64_t count) {
  launch_ = &launch;
  blockIdx_ = blockIndex(first, launch.gridDim);
  threadCount_ = static_cast<unsigned>(launch.blockDim.volume());
  failed_ = false;
  // No shared memory, scratch or early exits: the frontend gives this form only to kernels without them.
  runLoopClone(nullptr, first, count);
  launch_ = nullptr;
  return !failed_;
}

unsigned BlockRunner::runLoopClone(unsigned char* exited, std::uint64_t firstBlock, std::uint64_t blockCount) {
  loopThread_ = ThreadContext{uint3{0, 0, 0}, blockIdx_, launch_->blockDim, launch_->gridDim, this, nullptr, 0};
  ThreadLoopBlock block{&loopThread_, exited, 0, threadCount_, false, firstBlock, blockCount};
  currentLoopBlock = &block;
  currentThread = &loopThread_;
  invokeClone(loopThread_);
  failed_ = failed_ || block.failed;
  currentThread = nullptr;
  currentLoopBlock = nullptr;
  return block.exitedCount;
}

void BlockRunner::threadLoopFailed(ThreadLoopBlock& block, const char* what) {
  block.failed = true;
  recordFailure(*block.thread, what);
}

BlockRunner::Fiber* BlockRunner::pickNext() {
  if (failed_) return nullptr;
  if (readyCursor_ < ready_.size()) return ready_[readyCursor_++];
  if (nextThread_ < threadCount_) return &takeIdleFiber();
  // Every thread has started and none can run: a warp whose meeting could open has opened already.
  if (warpsWaiting_ > 0) reportWarpDeadlock();
  if (!waiting_.empty()) {
    openBarrier();  // every thread has started and every live one waits
    return ready_[readyCursor_++];
  }
  return nullptr;  // every thread has exited
}

void BlockRunner::switchAway(Fiber& self, Fiber* next) {
  if (next == &self) return;  // this fiber is also the next to run
  running_ = next;
  ExecutionContext::switchTo(self.context, next != nullptr ? next->context : scheduler_);
  // Someone switched back to this fiber (and set running_ to it): its thread runs again.
  currentThread = self.thread;
}

void BlockRunner::fiberMain(void* argument) {
  Fiber& fiber = *static_cast<Fiber*>(argument);
  BlockRunner& runner = *fiber.runner;
  for (;;) {
    runner.runThreads(fiber);
    runner.idle_.push_back(&fiber);
    runner.switchAway(fiber, runner.pickNext());
  }
}

void BlockRunner::runThreads(Fiber& fiber) {
  // The thread's identity lives on its fiber's stack, so it travels with the fiber across barriers.
  ThreadContext thread{};
  thread.blockIdx = blockIdx_;
  thread.blockDim = launch_->blockDim;
  thread.gridDim = launch_->gridDim;
  thread.runner = this;
  thread.fiber = &fiber;
  fiber.thread = &thread;
  const dim3 shape = launch_->blockDim;
  while (nextThread_ < threadCount_ && !failed_) {
    thread.linearIndex = nextThread_++;
    thread.threadIdx = nextThreadIdx_;
    if (++nextThreadIdx_.x == shape.x) {
      nextThreadIdx_.x = 0;
      if (++nextThreadIdx_.y == shape.y) {
        nextThreadIdx_.y = 0;
        ++nextThreadIdx_.z;
      }
    }
    currentThread = &thread;
    invokeClone(thread);
    threadExited(thread.linearIndex);
  }
  currentThread = nullptr;
  fiber.thread = nullptr;
}

BlockRunner::Fiber& BlockRunner::takeIdleFiber() {
  if (idle_.empty()) {
    fibers_.push_back(std::make_unique<Fiber>(*this, config_.stackBytes, fibers_.size()));
    return *fibers_.back();
  }
  Fiber* fiber = idle_.back();
  idle_.pop_back();
  return *fiber;
}

namespace {

bool sameSite(const BarrierSite& a, const BarrierSite& b) {
  return a.line == b.line && a.column == b.column && (a.file == b.file || std::strcmp(a.file, b.file) == 0);
}

}  // namespace

void BlockRunner::openBarrier() {
  const Fiber& first = *waiting_.front();
  for (const Fiber* other : waiting_) {
    if (sameSite(other->site, first.site) && other->atGridSync == first.atGridSync) continue;
    const uint3& a = first.thread->threadIdx;
    const uint3& b = other->thread->threadIdx;
    fatal("divergent __syncthreads in kernel: in block (%u,%u,%u) thread (%u,%u,%u) waits at %s:%u:%u "
          "while thread (%u,%u,%u) waits at %s:%u:%u; every live thread of a block must reach the same "
          "barrier",
          blockIdx_.x, blockIdx_.y, blockIdx_.z, a.x, a.y, a.z, first.site.file, first.site.line, first.site.column,
          b.x, b.y, b.z, other->site.file, other->site.line, other->site.column);
  }
  if (first.atGridSync) {
    // This OS thread runs only this block (runCooperative): it may wait here for the others.
    for (Fiber* fiber : waiting_) fiber->atGridSync = false;
    launch_->gridBarrier->arriveAndWait();
  }
  lastOutcome_ = BarrierOutcome{arrivedTrue_, static_cast<unsigned>(waiting_.size())};
  arrivedTrue_ = 0;
  ready_.clear();  // all resumed: a barrier opens only when no thread is left to run
  readyCursor_ = 0;
  ready_.swap(waiting_);
  for (unsigned w = 0; w < warpCount_; ++w) warps_[w].atBarrier = 0;
}

void BlockRunner::release(Fiber* fiber) {
  if (readyCursor_ == ready_.size()) {
    ready_.clear();
    readyCursor_ = 0;
  }
  ready_.push_back(fiber);
}

unsigned BlockRunner::existingLanes(unsigned warp) const {
  const unsigned first = warp * kWarpLanes;
  const unsigned count = threadCount_ - first >= kWarpLanes ? kWarpLanes : threadCount_ - first;
  return count == kWarpLanes ? ~0u : (1u << count) - 1u;
}

BlockRunner::Meeting* BlockRunner::takeMeeting() {
  if (freeMeetings_.empty()) {
    meetings_.push_back(std::make_unique<Meeting>());
    return meetings_.back().get();
  }
  Meeting* meeting = freeMeetings_.back();
  freeMeetings_.pop_back();
  return meeting;
}

void BlockRunner::leaveMeeting(unsigned linearIndex) {
  Meeting*& meeting = laneMeeting_[linearIndex];
  if (meeting != nullptr && --meeting->readers == 0) freeMeetings_.push_back(meeting);
  meeting = nullptr;
}

void BlockRunner::threadExited(unsigned linearIndex) {
  leaveMeeting(linearIndex);
  const unsigned w = linearIndex / kWarpLanes;
  WarpState& warp = warps_[w];
  warp.exited |= 1u << (linearIndex % kWarpLanes);
  if (warp.arrived != 0) tryOpenWarp(w);
  if (warp.askingActive != 0) tryAnswerActive(w);
}

void BlockRunner::tryAnswerActive(unsigned w) {
  // The lanes that ask together are the ones on the same path: every other lane has gone on to
  // something else (a meeting, the block barrier) or returned. The host cannot see branches; this is
  // what it can see of them.
  WarpState& warp = warps_[w];
  const unsigned held = warp.arrived | warp.askingActive | warp.atBarrier | warp.exited;
  if ((existingLanes(w) & ~held) != 0) return;
  // Lanes that ask at different places (the two sides of a branch) are told apart.
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    if (!(warp.askingActive >> lane & 1u)) continue;
    const BarrierSite* site = warp.lanes[lane]->askingAt;
    unsigned together = 0;
    for (unsigned other = 0; other < kWarpLanes; ++other) {
      if (!(warp.askingActive >> other & 1u)) continue;
      const BarrierSite* otherSite = warp.lanes[other]->askingAt;
      if (site == nullptr || otherSite == nullptr || sameSite(*site, *otherSite)) together |= 1u << other;
    }
    warp.activeAnswer[lane] = together;
  }
  for (unsigned lane = 0; lane < kWarpLanes; ++lane)
    if (warp.askingActive >> lane & 1u) release(warp.lanes[lane]);
  warp.askingActive = 0;
  if (warp.arrived == 0) --warpsWaiting_;
}

unsigned BlockRunner::activeLanes(const BarrierSite* site) {
  Fiber& fiber = *running_;
  fiber.askingAt = site;
  const unsigned linear = fiber.thread->linearIndex;
  const unsigned w = linear / kWarpLanes;
  leaveMeeting(linear);
  WarpState& warp = warps_[w];
  if (warp.arrived == 0 && warp.askingActive == 0) ++warpsWaiting_;
  warp.askingActive |= 1u << (linear % kWarpLanes);
  warp.lanes[linear % kWarpLanes] = &fiber;
  tryAnswerActive(w);
  if (warp.arrived != 0) tryOpenWarp(w);  // a meeting may have waited for this lane's arrival elsewhere
  switchAway(fiber, pickNext());
  fiber.askingAt = nullptr;
  return warp.activeAnswer[linear % kWarpLanes];
}

void BlockRunner::tryOpenWarp(unsigned w) {
  WarpState& warp = warps_[w];
  const unsigned live = existingLanes(w) & ~warp.exited;
  const bool waited = warp.arrived != 0;
  for (unsigned i = 0; i < warp.collectingCount;) {
    Meeting& meeting = *warp.collecting[i];
    if ((meeting.mask & live & ~meeting.arrived) != 0) {
      ++i;
      continue;
    }
    meeting.participants = meeting.arrived;
    meeting.readers = 0;
    for (unsigned lane = 0; lane < kWarpLanes; ++lane)
      if (meeting.arrived >> lane & 1u) {
        release(warp.lanes[lane]);
        laneMeeting_[w * kWarpLanes + lane] = &meeting;
        ++meeting.readers;
      }
    warp.arrived &= ~meeting.arrived;
    warp.collecting[i] = warp.collecting[--warp.collectingCount];
  }
  if (waited && warp.arrived == 0 && warp.askingActive == 0) --warpsWaiting_;
}

const WarpRound& BlockRunner::warpArrive(unsigned mask, const void* value, std::size_t bytes, bool predicate,
                                         const char* what) {
  Fiber& fiber = *running_;
  const unsigned linear = fiber.thread->linearIndex;
  const unsigned w = linear / kWarpLanes;
  const unsigned bit = 1u << (linear % kWarpLanes);
  leaveMeeting(linear);
  WarpState& warp = warps_[w];
  if (warp.arrived == 0 && warp.askingActive == 0) ++warpsWaiting_;
  Meeting* found = nullptr;
  for (unsigned i = 0; i < warp.collectingCount && found == nullptr; ++i)
    if (warp.collecting[i]->mask == (mask | bit)) found = warp.collecting[i];
  if (found == nullptr) {
    found = takeMeeting();
    found->mask = mask | bit;
    found->arrived = 0;
    found->predicates = 0;
    found->what = what;
    warp.collecting[warp.collectingCount++] = found;
  }
  Meeting& round = *found;
  round.arrived |= bit;
  warp.arrived |= bit;
  if (predicate) round.predicates |= bit;
  if (bytes > 0) std::memcpy(round.values[linear % kWarpLanes], value, bytes);
  warp.lanes[linear % kWarpLanes] = &fiber;
  tryOpenWarp(w);
  if (warp.askingActive != 0) tryAnswerActive(w);
  switchAway(fiber, pickNext());
  return round;
}

void BlockRunner::reportWarpDeadlock() const {
  for (unsigned w = 0; w < warpCount_; ++w) {
    const WarpState& warp = warps_[w];
    if (warp.collectingCount == 0) continue;  // __activemask is answered before every lane can be held
    const Meeting& meeting = *warp.collecting[0];
    const unsigned missing = meeting.mask & existingLanes(w) & ~warp.exited & ~meeting.arrived;
    fatal("warp-level primitive that cannot complete in kernel: in block (%u,%u,%u) lanes 0x%08x of warp %u "
          "wait in %s for lanes 0x%08x, which %s; every live lane named by the mask must reach the primitive",
          blockIdx_.x, blockIdx_.y, blockIdx_.z, meeting.arrived, w, meeting.what, missing,
          waiting_.empty() ? "wait at another warp-level primitive" : "wait at __syncthreads");
  }
  fatal("internal error: a warp was counted as waiting but none waits");
}

BarrierOutcome BlockRunner::arrive(const BarrierSite& site, bool predicate) {
  Fiber& fiber = *running_;
  fiber.site = site;
  arrivedTrue_ += predicate ? 1u : 0u;
  waiting_.push_back(&fiber);
  const unsigned linear = fiber.thread->linearIndex;
  WarpState& warp = warps_[linear / kWarpLanes];
  warp.atBarrier |= 1u << (linear % kWarpLanes);
  if (__builtin_expect(warp.askingActive != 0, 0)) tryAnswerActive(linear / kWarpLanes);
  switchAway(fiber, pickNext());
  return lastOutcome_;
}

void BlockRunner::gridArrive(const BarrierSite& site) {
  if (launch_->gridBarrier == nullptr) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "grid.sync() at %s:%u:%u in a launch that is not cooperative: launch the kernel with "
                  "cudaLaunchCooperativeKernel",
                  site.file, site.line, site.column);
    throw std::logic_error(text);
  }
  running_->atGridSync = true;
  arrive(site, true);
}

void BlockRunner::abandonSuspendedFibers() {
  // A thread failed: the block is over. Threads parked at a barrier never resume; their fibers start
  // afresh for the next block (their frames are dropped without running destructors).
  auto restart = [this](Fiber* fiber) {
    fiber->thread = nullptr;
    fiber->atGridSync = false;
    fiber->restart();
    idle_.push_back(fiber);
  };
  for (Fiber* fiber : waiting_) restart(fiber);
  for (std::size_t i = readyCursor_; i < ready_.size(); ++i) restart(ready_[i]);
  for (unsigned w = 0; w < warpCount_; ++w) {
    WarpState& warp = warps_[w];
    for (unsigned lane = 0; lane < kWarpLanes; ++lane)
      if ((warp.arrived | warp.askingActive) >> lane & 1u) restart(warp.lanes[lane]);
    warp.arrived = warp.askingActive = 0;
    warp.collectingCount = 0;
  }
  warpsWaiting_ = 0;
  waiting_.clear();
  ready_.clear();
  readyCursor_ = 0;
}

void BlockRunner::recordFailure(const ThreadContext& thread, const char* what) {
  if (failed_) return;
  failed_ = true;
  char text[512];
  std::snprintf(text, sizeof text, "kernel threw at block (%u,%u,%u) thread (%u,%u,%u): %s", thread.blockIdx.x,
                thread.blockIdx.y, thread.blockIdx.z, thread.threadIdx.x, thread.threadIdx.y, thread.threadIdx.z, what);
  failure_ = text;
}

bool BlockRunner::isGuardAddress(const void* fiber, const void* address) const {
  return fiber != nullptr && static_cast<const Fiber*>(fiber)->stack.guards(address);
}

// ---- Thread loops: the entry points forEachThread and PerThread call.

void threadLoopFailed(ThreadLoopBlock& block) {
  try {
    throw;
  } catch (const std::exception& error) {
    block.thread->runner->threadLoopFailed(block, error.what());
  } catch (...) {
    block.thread->runner->threadLoopFailed(block, "an exception that is not a std::exception");
  }
}

void* blockScratch(std::size_t count, std::size_t size, std::size_t alignment) {
  return runningThread("per-thread storage").runner->blockScratch(count, size, alignment);
}

}  // namespace dispar::hostk::detail

// ---- The barrier entry points a host clone calls. Defined here so that arrive() and the context
// switch inline into them: fewer frames to return through after every switch.

namespace dispar::hostk {
namespace {

inline detail::BarrierOutcome barrier(const char* file, unsigned line, unsigned column, bool predicate) {
  detail::ThreadContext& thread = detail::runningThread("__syncthreads");
  // Thread loops have no barrier to wait at: the frontend makes every barrier a segment boundary.
  if (__builtin_expect(detail::currentLoopBlock != nullptr, 0))
    detail::fatal("internal error: a barrier at %s:%u was reached inside a thread-loop segment", file, line);
  return thread.runner->arrive(detail::BarrierSite{file, line, column}, predicate);
}

}  // namespace

void syncthreads(const char* file, unsigned line, unsigned column) { barrier(file, line, column, true); }

int syncthreadsCount(int predicate, const char* file, unsigned line, unsigned column) {
  return static_cast<int>(barrier(file, line, column, predicate != 0).trueCount);
}

int syncthreadsAnd(int predicate, const char* file, unsigned line, unsigned column) {
  const detail::BarrierOutcome outcome = barrier(file, line, column, predicate != 0);
  return outcome.trueCount == outcome.participants ? 1 : 0;
}

int syncthreadsOr(int predicate, const char* file, unsigned line, unsigned column) {
  return barrier(file, line, column, predicate != 0).trueCount != 0 ? 1 : 0;
}

namespace detail {

void gridSync(const char* file, unsigned line, unsigned column) {
  ThreadContext& thread = runningThread("grid.sync()");
  if (__builtin_expect(currentLoopBlock != nullptr, 0))
    fatal("internal error: grid.sync() at %s:%u was reached inside a thread-loop segment", file, line);
  thread.runner->gridArrive(BarrierSite{file, line, column});
}

bool inCooperativeLaunch() { return runningThread("grid_group::is_valid").runner->cooperative(); }

}  // namespace detail

}  // namespace dispar::hostk
