// What a kernel's host clone calls while it runs: its thread's indices, block barriers, shared memory.
// Each CUDA thread runs on a fiber; `detail::currentThread` is switched with the fiber, so these are
// plain loads from the running thread's context.
#ifndef DISPAR_HOSTK_KERNEL_H
#define DISPAR_HOSTK_KERNEL_H

#include <dispar/hostk/Types.h>

#include <cstddef>

namespace dispar::hostk {
namespace detail {

class BlockRunner;

/// The identity of the CUDA thread a fiber is running. Lives on that fiber's stack.
struct ThreadContext {
  uint3 threadIdx;
  uint3 blockIdx;
  dim3 blockDim;
  dim3 gridDim;
  BlockRunner* runner;    ///< runs the block; owns its barrier and shared memory
  void* fiber;            ///< the fiber running this thread (for stack-overflow reports)
  unsigned sharedCursor;  ///< how many __shared__ declarations this thread has executed
};

/// The running CUDA thread of this OS thread, or nullptr outside kernels. `__thread` rather than
/// thread_local: no dynamic initialisation, so every access is a single TLS load.
extern __thread ThreadContext* currentThread;

[[noreturn]] void notInKernel(const char* what);

inline ThreadContext& runningThread(const char* what) {
  ThreadContext* thread = currentThread;
  if (__builtin_expect(thread == nullptr, 0)) notInKernel(what);
  return *thread;
}

/// Storage of the next __shared__ declaration of the running thread (see sharedVariable).
void* sharedSlot(std::size_t size, std::size_t alignment);
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
#define DISPAR_HOSTK_SITE \
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

#undef DISPAR_HOSTK_SITE
#undef DISPAR_HOSTK_CALL_COLUMN

/// __threadfence(), __threadfence_block(), __threadfence_system().
inline void threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/// `__shared__ T name[N];` becomes `SharedRef<T[N]> name = sharedVariable<T[N]>();`
template <class T>
using SharedRef = T&;

/// The block's storage for the running thread's next __shared__ declaration. The k-th declaration a
/// thread executes gets the k-th slot of its block, so every thread of a block must execute the same
/// __shared__ declarations in the same order (a declaration inside a loop takes a new slot per
/// iteration). Like CUDA's, the storage is not initialised.
template <class T>
inline T& sharedVariable() {
  return *static_cast<T*>(detail::sharedSlot(sizeof(T), alignof(T)));
}

/// `extern __shared__ T name[];` becomes `T* name = dynamicShared<T>();`: the block's dynamic shared
/// memory, of the size given at launch, aligned to 16 bytes.
template <class T>
inline T* dynamicShared() {
  return static_cast<T*>(detail::dynamicSharedMemory());
}

}  // namespace dispar::hostk

#endif  // DISPAR_HOSTK_KERNEL_H
