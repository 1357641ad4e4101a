// CUDA's atomic functions on the host: same names, signatures and results (each returns the old value).
// Blocks of one launch run on several OS threads at once, so these are real atomic read-modify-writes:
// GCC __atomic builtins where the hardware has the operation, compare-and-swap loops otherwise. Relaxed
// ordering, like CUDA's atomics; the end of a launch orders everything before the host continues.
#ifndef DISPAR_HOSTK_ATOMICS_H
#define DISPAR_HOSTK_ATOMICS_H

namespace dispar::hostk {
namespace detail {

template <class T>
inline T atomicLoad(T* address) {
  T value;
  __atomic_load(address, &value, __ATOMIC_RELAXED);
  return value;
}

/// Replaces *address with update(old) atomically and returns old. Works for any trivially copyable T
/// (the comparison is bitwise, which is what a retry loop over a value just loaded needs).
template <class T, class Update>
inline T atomicUpdate(T* address, Update update) {
  T old = atomicLoad(address);
  T desired;
  do {
    desired = update(old);
  } while (!__atomic_compare_exchange(address, &old, &desired, /*weak=*/true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return old;
}

}  // namespace detail

// atomicAdd
inline int atomicAdd(int* address, int val) { return __atomic_fetch_add(address, val, __ATOMIC_RELAXED); }
inline unsigned atomicAdd(unsigned* address, unsigned val) {
  return __atomic_fetch_add(address, val, __ATOMIC_RELAXED);
}
inline unsigned long long atomicAdd(unsigned long long* address, unsigned long long val) {
  return __atomic_fetch_add(address, val, __ATOMIC_RELAXED);
}
inline float atomicAdd(float* address, float val) {
  return detail::atomicUpdate(address, [val](float old) { return old + val; });
}
inline double atomicAdd(double* address, double val) {
  return detail::atomicUpdate(address, [val](double old) { return old + val; });
}

// atomicSub
inline int atomicSub(int* address, int val) { return __atomic_fetch_sub(address, val, __ATOMIC_RELAXED); }
inline unsigned atomicSub(unsigned* address, unsigned val) {
  return __atomic_fetch_sub(address, val, __ATOMIC_RELAXED);
}
inline unsigned long long atomicSub(unsigned long long* address, unsigned long long val) {
  return __atomic_fetch_sub(address, val, __ATOMIC_RELAXED);
}

// atomicExch
inline int atomicExch(int* address, int val) { return __atomic_exchange_n(address, val, __ATOMIC_RELAXED); }
inline unsigned atomicExch(unsigned* address, unsigned val) {
  return __atomic_exchange_n(address, val, __ATOMIC_RELAXED);
}
inline unsigned long long atomicExch(unsigned long long* address, unsigned long long val) {
  return __atomic_exchange_n(address, val, __ATOMIC_RELAXED);
}
inline float atomicExch(float* address, float val) {
  float old;
  __atomic_exchange(address, &val, &old, __ATOMIC_RELAXED);
  return old;
}
inline double atomicExch(double* address, double val) {
  double old;
  __atomic_exchange(address, &val, &old, __ATOMIC_RELAXED);
  return old;
}

// atomicMin / atomicMax (CUDA: int, unsigned, long long, unsigned long long; float/double added here)
#define DISPAR_HOSTK_MINMAX(T)                                                                                         \
  inline T atomicMin(T* address, T val) {                                                                              \
    return detail::atomicUpdate(address, [val](T old) { return val < old ? val : old; });                              \
  }                                                                                                                    \
  inline T atomicMax(T* address, T val) {                                                                              \
    return detail::atomicUpdate(address, [val](T old) { return old < val ? val : old; });                              \
  }
DISPAR_HOSTK_MINMAX(int)
DISPAR_HOSTK_MINMAX(unsigned)
DISPAR_HOSTK_MINMAX(long long)
DISPAR_HOSTK_MINMAX(unsigned long long)
DISPAR_HOSTK_MINMAX(float)
DISPAR_HOSTK_MINMAX(double)
#undef DISPAR_HOSTK_MINMAX

// atomicCAS: stores val when *address == compare; returns the old value either way.
#define DISPAR_HOSTK_CAS(T)                                                                                            \
  inline T atomicCAS(T* address, T compare, T val) {                                                                   \
    __atomic_compare_exchange_n(address, &compare, val, /*weak=*/false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);           \
    return compare; /* on failure the builtin wrote the current value into compare */                                  \
  }
DISPAR_HOSTK_CAS(int)
DISPAR_HOSTK_CAS(unsigned)
DISPAR_HOSTK_CAS(unsigned long long)
DISPAR_HOSTK_CAS(unsigned short)
#undef DISPAR_HOSTK_CAS

// Bitwise atomics.
#define DISPAR_HOSTK_BITWISE(T)                                                                                        \
  inline T atomicAnd(T* address, T val) { return __atomic_fetch_and(address, val, __ATOMIC_RELAXED); }                 \
  inline T atomicOr(T* address, T val) { return __atomic_fetch_or(address, val, __ATOMIC_RELAXED); }                   \
  inline T atomicXor(T* address, T val) { return __atomic_fetch_xor(address, val, __ATOMIC_RELAXED); }
DISPAR_HOSTK_BITWISE(int)
DISPAR_HOSTK_BITWISE(unsigned)
DISPAR_HOSTK_BITWISE(unsigned long long)
#undef DISPAR_HOSTK_BITWISE

// atomicInc / atomicDec: CUDA's wrapping counters.
inline unsigned atomicInc(unsigned* address, unsigned val) {
  return detail::atomicUpdate(address, [val](unsigned old) { return old >= val ? 0u : old + 1u; });
}
inline unsigned atomicDec(unsigned* address, unsigned val) {
  return detail::atomicUpdate(address, [val](unsigned old) { return (old == 0u || old > val) ? val : old - 1u; });
}

// CUDA's atomic operations, for the definitions made once per operation.
// clang-format off
#define DISPAR_HOSTK_ATOMIC_OPERATIONS(X) \
  X(atomicAdd) X(atomicSub) X(atomicExch) X(atomicMin) X(atomicMax) X(atomicCAS) \
  X(atomicAnd) X(atomicOr) X(atomicXor) X(atomicInc) X(atomicDec)
// clang-format on

// Scoped atomics (atomicAdd_block, atomicAdd_system, ...): on the host every thread of a launch shares
// one coherent memory with the host program, so each scope is the device-wide operation.
#define DISPAR_HOSTK_SCOPED(operation)                                                                                 \
  template <class T, class... Values>                                                                                  \
  inline auto operation##_block(T* address, Values... values)->decltype(operation(address, values...)) {               \
    return operation(address, values...);                                                                              \
  }                                                                                                                    \
  template <class T, class... Values>                                                                                  \
  inline auto operation##_system(T* address, Values... values)->decltype(operation(address, values...)) {              \
    return operation(address, values...);                                                                              \
  }
DISPAR_HOSTK_ATOMIC_OPERATIONS(DISPAR_HOSTK_SCOPED)

// The atomics on a block's __shared__ memory. One OS thread runs a block from its start to its end (its
// fibers, or its thread loops), and no other block sees its shared memory: no other thread can touch the
// memory meanwhile, so a plain read-modify-write gives the atomic's result without the cost of a locked
// instruction (a shared-memory histogram counted 16x slower than a plain loop with them). StreamCC calls
// these where the address is a __shared__ variable's (`atomicAdd(&bins[v], 1)`, `__shared__ unsigned bins[]`).
namespace block_shared {
namespace detail {
template <class T, class Update>
inline T update(T* address, Update update) {
  const T old = *address;
  *address = update(old);
  return old;
}
}  // namespace detail

#define DISPAR_HOSTK_SHARED(T, operation, expression)                                                                  \
  inline T operation(T* address, T val) {                                                                              \
    return detail::update(address, [val](T old) { return expression; });                                               \
  }
#define DISPAR_HOSTK_SHARED_ARITHMETIC(T)                                                                              \
  DISPAR_HOSTK_SHARED(T, atomicAdd, old + val)                                                                         \
  DISPAR_HOSTK_SHARED(T, atomicExch, ((void)old, val))                                                                 \
  DISPAR_HOSTK_SHARED(T, atomicMin, val < old ? val : old)                                                             \
  DISPAR_HOSTK_SHARED(T, atomicMax, old < val ? val : old)
#define DISPAR_HOSTK_SHARED_INTEGER(T)                                                                                 \
  DISPAR_HOSTK_SHARED(T, atomicSub, old - val)                                                                         \
  DISPAR_HOSTK_SHARED(T, atomicAnd, old& val)                                                                          \
  DISPAR_HOSTK_SHARED(T, atomicOr, old | val)                                                                          \
  DISPAR_HOSTK_SHARED(T, atomicXor, old ^ val)                                                                         \
  inline T atomicCAS(T* address, T compare, T val) {                                                                   \
    return detail::update(address, [compare, val](T old) { return old == compare ? val : old; });                      \
  }
DISPAR_HOSTK_SHARED_ARITHMETIC(int)
DISPAR_HOSTK_SHARED_ARITHMETIC(unsigned)
DISPAR_HOSTK_SHARED_ARITHMETIC(unsigned long long)
DISPAR_HOSTK_SHARED_ARITHMETIC(float)
DISPAR_HOSTK_SHARED_ARITHMETIC(double)
DISPAR_HOSTK_SHARED(long long, atomicMin, val < old ? val : old)
DISPAR_HOSTK_SHARED(long long, atomicMax, old < val ? val : old)
DISPAR_HOSTK_SHARED_INTEGER(int)
DISPAR_HOSTK_SHARED_INTEGER(unsigned)
DISPAR_HOSTK_SHARED_INTEGER(unsigned long long)
inline unsigned short atomicCAS(unsigned short* address, unsigned short compare, unsigned short val) {
  return detail::update(address, [compare, val](unsigned short old) { return old == compare ? val : old; });
}
DISPAR_HOSTK_SHARED(unsigned, atomicInc, old >= val ? 0u : old + 1u)
DISPAR_HOSTK_SHARED(unsigned, atomicDec, (old == 0u || old > val) ? val : old - 1u)
#undef DISPAR_HOSTK_SHARED_INTEGER
#undef DISPAR_HOSTK_SHARED_ARITHMETIC
#undef DISPAR_HOSTK_SHARED

DISPAR_HOSTK_ATOMIC_OPERATIONS(DISPAR_HOSTK_SCOPED)
}  // namespace block_shared
#undef DISPAR_HOSTK_SCOPED
#undef DISPAR_HOSTK_ATOMIC_OPERATIONS

}  // namespace dispar::hostk

#endif  // DISPAR_HOSTK_ATOMICS_H
