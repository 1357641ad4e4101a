// The entry points a kernel's host clone calls for shared memory and warp-level primitives; they
// forward to the runner of the running thread. The barrier entry points live in BlockRunner.cpp, where the switch
// inlines into them.
#include "BlockRunner.h"
#include "Diagnostics.h"

#include <dispar/hostk/Kernel.h>
#include <dispar/hostk/Warp.h>

#include <atomic>

namespace dispar::hostk {
namespace detail {

void notInKernel(const char* what) { fatal("%s used outside a kernel running on the host path", what); }

unsigned newSharedKey() {
  static std::atomic<unsigned> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void* sharedSlot(unsigned key, std::size_t size, std::size_t alignment) {
  return runningThread("__shared__").runner->sharedSlot(key, size, alignment);
}

const WarpRound& warpExchange(unsigned mask, const void* value, std::size_t bytes, bool predicate, const char* what) {
  ThreadContext& thread = runningThread(what);
  // The frontend runs every kernel that reaches a warp-level primitive as fibers; thread loops run one
  // lane at a time and could not let the lanes meet.
  if (currentLoopBlock != nullptr)
    fatal("internal error: %s called from a kernel running as thread loops (docs/cuda.md, \"Warps\")", what);
  return thread.runner->warpArrive(mask, value, bytes, predicate, what);
}

unsigned laneId() { return runningThread("laneId").linearIndex % kWarpLanes; }

unsigned activeLanes() { return activeLanesAt(nullptr, 0, 0); }

unsigned activeLanesAt(const char* file, unsigned line, unsigned column) {
  ThreadContext& thread = runningThread("__activemask");
  if (currentLoopBlock != nullptr) fatal("internal error: __activemask called from a kernel running as thread loops");
  if (file == nullptr) return thread.runner->activeLanes(nullptr);
  const BarrierSite site{file, line, column};
  return thread.runner->activeLanes(&site);
}

void* dynamicSharedMemory() { return runningThread("extern __shared__").runner->dynamicShared(); }

}  // namespace detail
}  // namespace dispar::hostk

namespace dispar::hostk::cooperative_groups::detail {

void badTileSize(unsigned size) {
  ::dispar::hostk::detail::fatal("cooperative_groups::tiled_partition(parent, %u): the host path makes tiles of "
                                 "1, 2, 4, 8, 16 or 32 threads",
                                 size);
}

}  // namespace dispar::hostk::cooperative_groups::detail
