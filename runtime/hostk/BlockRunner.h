// Runs the CUDA threads of one block at a time on one OS thread, each CUDA thread on a fiber.
//
// Fibers run threads back to back: a fiber takes the next thread that has not started, runs it to its
// end and takes the next. Only a thread that reaches a barrier keeps its fiber; the following threads
// start on another fiber. Once every thread has started and every live one waits, the barrier opens and
// the waiting fibers resume in arrival order. Fibers hand control straight to the next one (one switch
// per hand-over, no trip through a scheduler), and return to the runner when the block is over. A
// kernel without barriers therefore runs all its threads on one fiber: one switch in, one out, per block.
//
// A clone the frontend emitted as thread loops (Kernel.h) runs on the OS thread's own stack instead:
// once per block, its segments looping over per-thread contexts that the runner prepares.
//
// The block's memory (__shared__ arenas, thread-loop scratch) is BlockMemory.h's; this class schedules
// the threads, and holds the barrier and warp meetings, whose state is the fibers' own.
#ifndef DISPAR_HOSTK_BLOCKRUNNER_H
#define DISPAR_HOSTK_BLOCKRUNNER_H

#include "BlockMemory.h"
#include "ExecutionContext.h"
#include "FiberStack.h"
#include "GridBarrier.h"
#include "HostConfig.h"

#include <dispar/hostk/Kernel.h>
#include <dispar/hostk/Launch.h>
#include <dispar/hostk/Warp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dispar::hostk::detail {

/// One launch, as every block of it sees it.
struct KernelLaunch {
  KernelInvoker invoke;
  const void* closure;
  dim3 gridDim;
  dim3 blockDim;
  std::size_t dynamicSharedBytes;
  CloneForm form;
  GridBarrier* gridBarrier = nullptr;  ///< a cooperative launch's (HostDevice::runCooperative), else none
};

/// The index of block number `block` of `grid` (x fastest), as the runners number the blocks of a launch.
inline uint3 blockIndex(std::uint64_t block, const dim3& grid) {
  return uint3{static_cast<unsigned>(block % grid.x), static_cast<unsigned>(block / grid.x % grid.y),
               static_cast<unsigned>(block / grid.x / grid.y)};
}

/// The number of block `blockIdx` of `grid`: blockIndex's inverse.
inline std::uint64_t blockNumber(const uint3& blockIdx, const dim3& grid) {
  return blockIdx.x + std::uint64_t{grid.x} * (blockIdx.y + std::uint64_t{grid.y} * blockIdx.z);
}

/// Where a barrier call is in the source (filled in at the call by __builtin_FILE/LINE/COLUMN, so
/// that the optimiser duplicating a call cannot make one barrier look like two).
struct BarrierSite {
  const char* file;
  unsigned line;
  unsigned column;
};

/// What an opening barrier tells each thread it releases.
struct BarrierOutcome {
  unsigned trueCount;     ///< threads that arrived with a non-zero predicate
  unsigned participants;  ///< threads the barrier released
};

class BlockRunner {
 public:
  explicit BlockRunner(const HostConfig& config);
  ~BlockRunner();
  BlockRunner(const BlockRunner&) = delete;
  BlockRunner& operator=(const BlockRunner&) = delete;

  /// Runs every thread of block `blockIdx`. False when a thread threw; failure() says which and why.
  bool run(const KernelLaunch& launch, const uint3& blockIdx);
  /// Runs `count` consecutive blocks from block number `first` (x fastest) of a grid-loop clone, in one
  /// call of the clone. As run otherwise.
  bool runGridLoops(const KernelLaunch& launch, std::uint64_t first, std::uint64_t count);
  const std::string& failure() const { return failure_; }

  // Called from the running CUDA thread.
  [[gnu::always_inline]] inline BarrierOutcome arrive(const BarrierSite& site, bool predicate);
  /// grid_group::sync(): a barrier of the block that, once every live thread waits at it, waits for the
  /// grid's other blocks too. Throws in a launch that is not cooperative.
  void gridArrive(const BarrierSite& site);
  bool cooperative() const { return launch_ != nullptr && launch_->gridBarrier != nullptr; }
  const WarpRound& warpArrive(unsigned mask, const void* value, std::size_t bytes, bool predicate, const char* what);
  /// The lanes of the warp asking at `site` together with the running one (all that ask at the same time
  /// when `site` is null).
  unsigned activeLanes(const BarrierSite* site);
  void* sharedSlot(unsigned key, std::size_t size, std::size_t alignment) {
    return shared_.slot(key, size, alignment, blockIdx_);
  }
  void* dynamicShared() const { return shared_.dynamic(); }
  void threadLoopFailed(ThreadLoopBlock& block, const char* what);
  void* blockScratch(std::size_t count, std::size_t size, std::size_t alignment) {
    return scratch_.allocate(count, size, alignment);
  }

  // Called from the SIGSEGV handler: async-signal-safe.
  bool isGuardAddress(const void* fiber, const void* address) const;
  std::size_t stackBytes() const { return config_.stackBytes; }

 private:
  struct Fiber;
  /// One meeting of lanes at a warp-level primitive, with what they deposited. It stays alive until
  /// every lane it released has made its next warp-level call (or returned): a lane reads the meeting
  /// after it resumes, while others, released from it too, may already be meeting again.
  struct Meeting : WarpRound {
    unsigned readers = 0;
    unsigned mask = 0;           ///< the lanes it is for: the mask its lanes called with
    unsigned arrived = 0;        ///< its lanes that are waiting in it
    const char* what = nullptr;  ///< the primitive its first lane called
  };
  /// The lanes of one warp that wait at warp-level primitives (__shfl_sync, __ballot_sync, a tile's
  /// sync, ...). Lanes meet with the lanes that call with the same mask; lanes with other masks (another
  /// tile, the other side of a branch) meet apart, at the same time.
  struct WarpState {
    unsigned arrived = 0;            ///< lanes waiting in any meeting
    unsigned exited = 0;             ///< lanes whose thread has returned
    unsigned atBarrier = 0;          ///< lanes waiting at __syncthreads
    unsigned askingActive = 0;       ///< lanes waiting in __activemask
    unsigned activeAnswer[32] = {};  ///< what the last __activemask gave each lane
    Meeting* collecting[32] = {};    ///< the meetings lanes are arriving at, one per mask
    unsigned collectingCount = 0;
    Fiber* lanes[32] = {};
  };

  /// run() for a thread-loop clone.
  void runThreadLoops();
  /// Calls a loop clone (thread or grid loops) with the running block set up for it; returns how many
  /// threads returned early. `exited`: the per-thread flags (null for grid loops, which have none).
  unsigned runLoopClone(unsigned char* exited, std::uint64_t firstBlock, std::uint64_t blockCount);
  /// Calls the clone; an exception escaping it fails the block, named after `thread`.
  [[gnu::always_inline]] inline void invokeClone(const ThreadContext& thread);
  static void fiberMain(void* fiber);
  [[gnu::always_inline]] inline void runThreads(Fiber& fiber);
  Fiber& takeIdleFiber();
  /// The fiber to run next, or nullptr when the block is over.
  Fiber* pickNext();
  /// Suspends `self` and runs `next` (the runner when nullptr); returns when `self` runs again.
  [[gnu::always_inline]] inline void switchAway(Fiber& self, Fiber* next);
  void openBarrier();
  void release(Fiber* fiber);
  void threadExited(unsigned linearIndex);
  void tryOpenWarp(unsigned warp);
  /// __activemask's lanes learn who asks with them once every lane of the warp is held somewhere.
  void tryAnswerActive(unsigned warp);
  /// The lane is done with the meeting it was last released from.
  void leaveMeeting(unsigned linearIndex);
  Meeting* takeMeeting();
  [[noreturn]] void reportWarpDeadlock() const;
  unsigned existingLanes(unsigned warp) const;
  void abandonSuspendedFibers();
  void recordFailure(const ThreadContext& thread, const char* what);

  HostConfig config_;
  StackOverflowReporter overflowReporter_;
  ExecutionContext scheduler_;
  std::vector<std::unique_ptr<Fiber>> fibers_;
  std::vector<Fiber*> idle_;
  std::vector<Fiber*> waiting_;  ///< at the current barrier, in arrival order
  std::vector<Fiber*> ready_;    ///< released by the last barrier; those from readyCursor_ on wait to resume
  std::size_t readyCursor_ = 0;
  Fiber* running_ = nullptr;

  // The block being run.
  const KernelLaunch* launch_ = nullptr;
  uint3 blockIdx_{};
  unsigned threadCount_ = 0;
  unsigned nextThread_ = 0;
  uint3 nextThreadIdx_{};
  bool failed_ = false;
  std::string failure_;

  // Barrier state.
  unsigned arrivedTrue_ = 0;
  BarrierOutcome lastOutcome_{};

  // Thread loops: the context every thread runs with in turn, who has returned, PerThread storage.
  ThreadContext loopThread_{};
  std::vector<unsigned char> loopExited_;
  bool loopExitedDirty_ = false;
  BlockScratch scratch_;

  // Warps of the block being run (fibers only).
  std::vector<WarpState> warps_;
  std::vector<Meeting*> laneMeeting_;  ///< per thread: the meeting it was last released from
  std::vector<std::unique_ptr<Meeting>> meetings_;
  std::vector<Meeting*> freeMeetings_;
  unsigned warpCount_ = 0;
  unsigned warpsWaiting_ = 0;  ///< warps with lanes waiting at a warp-level primitive

  BlockSharedMemory shared_;
};

}  // namespace dispar::hostk::detail

#endif  // DISPAR_HOSTK_BLOCKRUNNER_H
