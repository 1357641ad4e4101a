// What a kernel's host clone calls while it runs: its thread's indices, block barriers, shared memory.
// A clone runs its CUDA threads in one of three ways (docs/cuda.md, "Execution model"):
// - fibers: the clone is one CUDA thread; each runs on a fiber and __syncthreads switches fibers;
// - thread loops: the frontend split the kernel at its barriers into segments (frontend/lib/
//   ThreadLoops.h), and the clone runs once per block, each segment a loop over the threads
//   (forEachThread); values live across a barrier are kept per thread (PerThread);
// - grid loops: a kernel without barriers or shared memory runs once per run of consecutive blocks, one
//   loop over their threads in the grid's row order (forEachGridThread).
// Either way `detail::currentThread` points at the running CUDA thread, so the builtins are plain loads.
#ifndef DISPAR_HOSTK_KERNEL_H
#define DISPAR_HOSTK_KERNEL_H

#include <dispar/hostk/Types.h>

#include <cstddef>
#include <type_traits>

namespace dispar::hostk {
namespace detail {

class BlockRunner;

/// The identity of the CUDA thread a fiber is running. Lives on that fiber's stack.
struct ThreadContext {
  uint3 threadIdx;
  uint3 blockIdx;
  dim3 blockDim;
  dim3 gridDim;
  BlockRunner* runner;   ///< runs the block; owns its barrier and shared memory
  void* fiber;           ///< the fiber running this thread (for stack-overflow reports)
  unsigned linearIndex;  ///< x + y * blockDim.x + z * blockDim.x * blockDim.y
};

/// The block a thread-loop clone is running. One context serves every thread in turn: a segment
/// only needs the running thread's identity, and nothing in a thread-loop kernel keeps state in its
/// context across a barrier (the frontend checks that no __shared__ declaration is made per thread).
struct ThreadLoopBlock {
  ThreadContext* thread;  ///< the running thread's context (segments that need it); else thread (0,0,0)'s
  unsigned char* exited;  ///< per thread: returned before the last segment
  unsigned exitedCount;   ///< how many have
  unsigned count;
  bool failed;  ///< a thread threw: the remaining segments do not run
  /// A grid-loop clone's blocks: `blockCount` consecutive blocks from number `firstBlock` (x fastest).
  unsigned long long firstBlock = 0;
  unsigned long long blockCount = 1;
};

/// The running block of a thread-loop clone on this OS thread, or nullptr.
extern __thread ThreadLoopBlock* currentLoopBlock;

/// The running CUDA thread of this OS thread, or nullptr outside kernels. `__thread` rather than
/// thread_local: no dynamic initialisation, so every access is a single TLS load.
extern __thread ThreadContext* currentThread;

[[noreturn]] void notInKernel(const char* what);

inline ThreadContext& runningThread(const char* what) {
  ThreadContext* thread = currentThread;
  if (__builtin_expect(thread == nullptr, 0)) notInKernel(what);
  return *thread;
}

/// Called in a catch handler: records that the running thread of the block threw (the exception in
/// flight says what); the block fails and its later segments are skipped. Not inline, so that this
/// header need not include <exception> (the CUDA parse of a .dsp includes it before the wrappers).
void threadLoopFailed(ThreadLoopBlock& block);
/// Uninitialised storage for `count` objects of `size` bytes in the running block, valid until the
/// block ends.
void* blockScratch(std::size_t count, std::size_t size, std::size_t alignment);

/// A number for one __shared__ declaration (one instantiation of it), unique in the process.
unsigned newSharedKey();
/// The running block's storage for the __shared__ declaration numbered `key` (see sharedVariable).
void* sharedSlot(unsigned key, std::size_t size, std::size_t alignment);
/// The dynamic shared memory of the running block.
void* dynamicSharedMemory();

}  // namespace detail

inline const uint3& threadIdx() { return detail::runningThread("threadIdx").threadIdx; }
inline const uint3& blockIdx() { return detail::runningThread("blockIdx").blockIdx; }
inline const dim3& blockDim() { return detail::runningThread("blockDim").blockDim; }
inline const dim3& gridDim() { return detail::runningThread("gridDim").gridDim; }

// The barrier's source position is a defaulted argument so that it is taken at the call, as written:
// divergence is judged by source position, which code duplication in the optimiser cannot change.
#if defined(__has_builtin)
#if __has_builtin(__builtin_COLUMN)
#define DISPAR_HOSTK_CALL_COLUMN() __builtin_COLUMN()
#endif
#endif
#ifndef DISPAR_HOSTK_CALL_COLUMN
#define DISPAR_HOSTK_CALL_COLUMN() 0u  // GCC before 13: barriers on one line count as one site
#endif
// Kept defined: the cooperative-groups header declares barriers with the same trailing parameters.
#define DISPAR_HOSTK_SITE                                                                                              \
  const char *file = __builtin_FILE(), unsigned line = __builtin_LINE(), unsigned column = DISPAR_HOSTK_CALL_COLUMN()

/// __syncthreads(): returns once every live thread of the block has reached a barrier. Threads that
/// have exited do not count (as on sm_70+ GPUs). Live threads waiting at different __syncthreads
/// calls are reported as a divergent barrier and the program aborts.
void syncthreads(DISPAR_HOSTK_SITE);
/// __syncthreads_count(p): a barrier that returns how many threads passed a non-zero predicate.
int syncthreadsCount(int predicate, DISPAR_HOSTK_SITE);
/// __syncthreads_and(p): a barrier that returns non-zero when every thread's predicate is non-zero.
int syncthreadsAnd(int predicate, DISPAR_HOSTK_SITE);
/// __syncthreads_or(p): a barrier that returns non-zero when any thread's predicate is non-zero.
int syncthreadsOr(int predicate, DISPAR_HOSTK_SITE);

/// __threadfence(), __threadfence_block(), __threadfence_system().
inline void threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/// `__shared__ T name[N];` becomes `SharedRef<T[N]> name = sharedVariable<T[N]>([] {});`
template <class T>
using SharedRef = T&;

/// The running block's instance of one __shared__ declaration. As in CUDA, a block has one instance
/// per declaration wherever it is written: in a loop, in a branch, in a device function called many
/// times, every execution in the block names the same storage. The declaration is told apart by
/// `Site`, the type of the lambda written at it (unique per declaration and per template instantiation
/// of the function holding it). Like CUDA's, the storage is not initialised.
template <class T, class Site>
inline T& sharedVariable(Site) {
  static const unsigned key = detail::newSharedKey();
  return *static_cast<T*>(detail::sharedSlot(key, sizeof(T), alignof(T)));
}

/// `extern __shared__ T name[];` becomes `T* name = dynamicShared<T>();`: the block's dynamic shared
/// memory, of the size given at launch, aligned to 16 bytes.
template <class T>
inline T* dynamicShared() {
  return static_cast<T*>(detail::dynamicSharedMemory());
}

/// The CUDA thread a segment of a thread-loop clone runs as. The frontend rewrites `threadIdx` in the
/// segments of such a clone to `dispar_thread.idx`: a plain loop variable the compiler can see through.
struct LoopThread {
  uint3 idx;
  unsigned linear;  ///< x + y * blockDim.x + z * blockDim.x * blockDim.y
};

/// The block a thread-loop clone runs: the frontend rewrites `blockIdx`, `blockDim` and `gridDim` in such
/// a clone to `dispar_block.blockIdx`, ..., a local read once per block, so that the compiler sees them
/// constant across the segments' loops (a store through an `unsigned*` could otherwise be the context's).
struct LoopBlockShape {
  uint3 blockIdx;
  dim3 blockDim;
  dim3 gridDim;
};

namespace detail {
/// Runs `segment` for the threads of the block with threadIdx.x < xEnd that have not returned, in
/// threadIdx order (x fastest). With `UpdatesContext` the running thread's context follows, for
/// segments that call code reading it (a __device__ function's threadIdx, cooperative groups).
template <bool UpdatesContext, class Segment>
inline void runSegment(unsigned xEnd, Segment& segment) {
  ThreadLoopBlock& block = *currentLoopBlock;
  if (block.failed) return;
  ThreadContext& context = *block.thread;
  const dim3 shape = context.blockDim;
  LoopThread current{uint3{0, 0, 0}, 0};
  try {
    if (block.exitedCount == 0 && shape.y == 1 && shape.z == 1) {
      // The common case: a one-dimensional block where every thread is live.
      for (unsigned x = 0; x < xEnd; ++x) {
        if constexpr (UpdatesContext) {
          context.threadIdx.x = x;
          context.linearIndex = x;
        }
        current = LoopThread{uint3{x, 0, 0}, x};
        segment(current);
      }
    } else if (block.exitedCount == 0) {
      // Every thread live (the 2-D tiles of stencils and matrix products): no per-thread check.
      for (unsigned z = 0; z < shape.z; ++z)
        for (unsigned y = 0; y < shape.y; ++y) {
          const unsigned row = (z * shape.y + y) * shape.x;
          for (unsigned x = 0; x < xEnd; ++x) {
            current = LoopThread{uint3{x, y, z}, row + x};
            if constexpr (UpdatesContext) {
              context.threadIdx = current.idx;
              context.linearIndex = current.linear;
            }
            segment(current);
          }
        }
    } else {
      const unsigned char* const exited = block.exited;
      for (unsigned z = 0; z < shape.z; ++z)
        for (unsigned y = 0; y < shape.y; ++y) {
          const unsigned row = (z * shape.y + y) * shape.x;
          for (unsigned x = 0; x < xEnd; ++x) {
            if (exited[row + x]) continue;
            current = LoopThread{uint3{x, y, z}, row + x};
            if constexpr (UpdatesContext) {
              context.threadIdx = current.idx;
              context.linearIndex = current.linear;
            }
            segment(current);
          }
        }
    }
  } catch (...) {
    context.threadIdx = current.idx;  // names the thread that threw
    threadLoopFailed(block);
  }
  context.threadIdx = uint3{0, 0, 0};
  context.linearIndex = 0;
}
}  // namespace detail

/// The running thread-loop block's index and shape (LoopBlockShape).
inline LoopBlockShape loopBlockShape() {
  const detail::ThreadContext& thread = *detail::currentLoopBlock->thread;
  return LoopBlockShape{thread.blockIdx, thread.blockDim, thread.gridDim};
}

namespace detail {
/// Calls `visit(x)` for x = 0 .. width - 1, the threads of block `b` along x, leaving the running one in
/// `x`. With IntIndex (the grid's rows fit in an `int`) the loop's variable is the thread's place in the
/// row of the grid as an `int`, b * width + x, and x is derived from it: the kernel's usual
/// `int i = blockIdx.x * blockDim.x + threadIdx.x` then folds to the loop's variable, and g++ walks
/// `a[i]` with a pointer instead of recomputing and sign-extending the index per element (saxpy: 9
/// instructions per element, as its plain loop, against 16).
template <bool IntIndex, class Visit>
[[gnu::always_inline]] inline void forEachThreadOfRow(unsigned b, unsigned width, unsigned& x, Visit&& visit) {
  if constexpr (IntIndex) {
    const int base = static_cast<int>(b * width);
    for (int g = base; g < base + static_cast<int>(width); ++g) {
      x = static_cast<unsigned>(g - base);
      visit(x);
    }
  } else {
    for (x = 0; x < width; ++x) visit(x);
  }
}

/// forEachGridThread's loops over the threads of blocks `first` to `last` of the row of the grid that
/// `where` names, for one-dimensional blocks and for any. Each is a function of its own, not inlined, with
/// its own copy of the segment (which captures the kernel's parameters by value) and its loop variables
/// as locals: the register allocator sees one small loop nest, and nothing it stores can be taken for the
/// kernel's values (a 1-D and a 2-D nest in one function ran saxpy 2x slower than its loop). A thread
/// that throws is named in `failed`.
template <bool UpdatesContext, bool IntIndex, class Segment>
[[gnu::noinline]] void gridRowOneDimensional(Segment segment, LoopBlockShape where, ThreadContext& context,
                                             unsigned first, unsigned last, LoopBlockShape& failed,
                                             LoopThread& failedThread) {
  const unsigned width = where.blockDim.x;
  unsigned x = 0;
  try {
    for (unsigned b = first; b < last; ++b) {
      where.blockIdx.x = b;
      forEachThreadOfRow<IntIndex>(b, width, x, [&](unsigned tx) {
        if constexpr (UpdatesContext) {
          context.blockIdx = where.blockIdx;
          context.threadIdx = uint3{tx, 0, 0};
          context.linearIndex = tx;
        }
        segment(static_cast<const LoopBlockShape&>(where), LoopThread{uint3{tx, 0, 0}, tx});
      });
    }
  } catch (...) {
    failed = where;
    failedThread = LoopThread{uint3{x, 0, 0}, x};
    throw;
  }
}

template <bool UpdatesContext, bool IntIndex, class Segment>
[[gnu::noinline]] void gridRow(Segment segment, LoopBlockShape where, ThreadContext& context, unsigned first,
                               unsigned last, LoopBlockShape& failed, LoopThread& failedThread) {
  const dim3 shape = where.blockDim;
  unsigned x = 0, y = 0, z = 0;
  try {
    for (z = 0; z < shape.z; ++z)
      for (y = 0; y < shape.y; ++y)
        for (unsigned b = first; b < last; ++b) {
          where.blockIdx.x = b;
          forEachThreadOfRow<IntIndex>(b, shape.x, x, [&](unsigned tx) {
            const LoopThread thread{uint3{tx, y, z}, (z * shape.y + y) * shape.x + tx};
            if constexpr (UpdatesContext) {
              context.blockIdx = where.blockIdx;
              context.threadIdx = thread.idx;
              context.linearIndex = thread.linear;
            }
            segment(static_cast<const LoopBlockShape&>(where), thread);
          });
        }
  } catch (...) {
    failed = where;
    failedThread = LoopThread{uint3{x, y, z}, (z * shape.y + y) * shape.x + x};
    throw;
  }
}
}  // namespace detail

/// The body of a grid-loop clone (a kernel without barriers, __shared__ memory or block-level state, whose
/// threads are independent): runs `segment(LoopBlockShape, LoopThread)` for every thread of the clone's
/// run of blocks, row by row across the blocks, as a loop over the whole grid would: the threads of one
/// row of the grid, which read consecutive elements in the usual `blockIdx.x * blockDim.x + threadIdx.x`,
/// run one after the other, and the loop over them carries no per-block work. Any order is one CUDA
/// allows: no thread waits for another. The segment captures by value (the frontend writes `[=]`).
template <bool UpdatesContext = true, class Segment>
inline void forEachGridThread(const Segment& segment) {
  detail::ThreadLoopBlock& block = *detail::currentLoopBlock;
  detail::ThreadContext& context = *block.thread;
  const dim3 shape = context.blockDim;
  const dim3 grid = context.gridDim;
  LoopBlockShape where{uint3{0, 0, 0}, shape, grid};
  LoopThread failedThread{uint3{0, 0, 0}, 0};
  // Whether every thread's place in its row of the grid, blockIdx.x * blockDim.x + threadIdx.x, fits in an int.
  const bool intIndex = static_cast<unsigned long long>(grid.x) * shape.x <= 2147483647ull;
  try {
    for (unsigned long long linear = block.firstBlock, end = block.firstBlock + block.blockCount; linear < end;) {
      // The blocks from `linear` to the end of its row of the grid (or of the run).
      const unsigned first = static_cast<unsigned>(linear % grid.x);
      const unsigned long long rowLeft = grid.x - first;
      const unsigned last = first + static_cast<unsigned>(end - linear < rowLeft ? end - linear : rowLeft);
      where.blockIdx = uint3{first, static_cast<unsigned>(linear / grid.x % grid.y),
                             static_cast<unsigned>(linear / grid.x / grid.y)};
      if (shape.y == 1 && shape.z == 1)
        intIndex ? detail::gridRowOneDimensional<UpdatesContext, true>(segment, where, context, first, last, where,
                                                                       failedThread)
                 : detail::gridRowOneDimensional<UpdatesContext, false>(segment, where, context, first, last, where,
                                                                        failedThread);
      else
        intIndex ? detail::gridRow<UpdatesContext, true>(segment, where, context, first, last, where, failedThread)
                 : detail::gridRow<UpdatesContext, false>(segment, where, context, first, last, where, failedThread);
      linear += last - first;
    }
  } catch (...) {
    context.blockIdx = where.blockIdx;  // names the thread that threw
    context.threadIdx = failedThread.idx;
    detail::threadLoopFailed(block);
  }
  context.threadIdx = uint3{0, 0, 0};
  context.linearIndex = 0;
}

/// One segment of a thread-loop clone: runs `segment(LoopThread)` for every thread of the block that
/// has not returned. Replaces the fibers of a kernel whose barriers all sit between segments: the loop
/// boundary is the barrier.
template <bool UpdatesContext = true, class Segment>
inline void forEachThread(Segment&& segment) {
  detail::runSegment<UpdatesContext>(detail::currentLoopBlock->thread->blockDim.x, segment);
}

/// A segment that is `if (threadIdx.x < bound) ...` and nothing else: the threads at or past `bound`
/// would do nothing in it, so the loop stops there (the tree reduction's shrinking halves). `bound` is
/// the comparison's value, in the comparison's type.
template <bool UpdatesContext = true, class Bound, class Segment>
inline void forEachThreadBelow(Bound bound, Segment&& segment) {
  const unsigned width = detail::currentLoopBlock->thread->blockDim.x;
  unsigned end = width;
  if constexpr (std::is_signed_v<Bound>) {
    if (bound <= 0) return;
  }
  if (static_cast<unsigned long long>(bound) < width) end = static_cast<unsigned>(bound);
  detail::runSegment<UpdatesContext>(end, segment);
}

/// A segment that is a grid-stride loop alone, `for (int i = start; i < bound; i += stride) body`, with
/// `bound` and `stride` uniform (the CUDA idiom for any grid size). Run thread after thread, each thread
/// would sweep the whole range `stride` apart, a page or more between reads; here every thread of the
/// block runs its k-th iteration before any runs its (k+1)-th, so the block reads consecutive elements,
/// as a warp does. Any order of the threads is a schedule CUDA allows: there is no barrier in a segment.
/// `segment(thread, k, more)` runs iteration k of `thread`, and clears `more` when the loop has ended.
template <bool UpdatesContext = true, class Segment>
inline void forEachThreadStrided(Segment&& segment) {
  detail::ThreadLoopBlock& block = *detail::currentLoopBlock;
  auto* running = static_cast<unsigned char*>(detail::blockScratch(block.count, 1, 1));
  for (unsigned i = 0; i < block.count; ++i) running[i] = 1;
  for (long long iteration = 0;; ++iteration) {
    bool any = false;
    auto step = [&](const LoopThread thread) {
      if (!running[thread.linear]) return;
      bool more = true;
      segment(thread, iteration, more);
      if (more)
        any = true;
      else
        running[thread.linear] = 0;
    };
    detail::runSegment<UpdatesContext>(block.thread->blockDim.x, step);
    if (!any || block.failed) return;
  }
}

/// `return;` inside a segment before the last barrier: the thread takes no part in later segments.
inline void exitThread(const LoopThread& thread) {
  detail::ThreadLoopBlock& block = *detail::currentLoopBlock;
  block.exited[thread.linear] = 1;
  ++block.exitedCount;
}

/// A local variable of a thread-loop clone that lives across a barrier: one slot per CUDA thread,
/// uninitialised like a local; `slots[thread]` is that thread's.
template <class T>
class PerThread {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_default_constructible_v<T>,
                "dispar hostk: a variable kept across __syncthreads on the host path must be trivially copyable");

 public:
  PerThread() : slots_(static_cast<T*>(detail::blockScratch(detail::currentLoopBlock->count, sizeof(T), alignof(T)))) {}
  /// Every thread's slot holding `initial`: a kernel parameter that threads change.
  explicit PerThread(const T& initial) : PerThread() {
    for (unsigned i = 0; i < detail::currentLoopBlock->count; ++i) slots_[i] = initial;
  }
  T& operator[](const LoopThread& thread) const { return slots_[thread.linear]; }
  T& set(const LoopThread& thread, const T& value) const { return slots_[thread.linear] = value; }

 private:
  T* slots_;
};

}  // namespace dispar::hostk

#endif  // DISPAR_HOSTK_KERNEL_H
