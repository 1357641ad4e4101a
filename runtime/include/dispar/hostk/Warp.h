// Warp-level primitives on the host path: shuffles, votes, warp reductions and matching, __syncwarp,
// __activemask. A warp is 32 consecutive threads of a block (by linear thread index, x fastest), as on
// the GPU. Each primitive is a meeting point of the warp: every lane deposits its value and waits until
// every live lane named by the mask has arrived, then reads the others' values. So a shuffle sees every
// lane's value even though the host runs one CUDA thread at a time (each lane on its own fiber).
// Kernels that use them run as fibers (docs/cuda.md, "Warps").
#ifndef DISPAR_HOSTK_WARP_H
#define DISPAR_HOSTK_WARP_H

#include <dispar/hostk/Kernel.h>

#include <cstddef>
#include <cstring>
#include <type_traits>

namespace dispar::hostk {
namespace detail {

inline constexpr unsigned kWarpLanes = 32;
/// The largest value one lane can pass through a shuffle (a double4, a 32-byte struct).
inline constexpr std::size_t kWarpValueBytes = 32;

/// What the lanes of one meeting deposited.
struct WarpRound {
  unsigned participants = 0;  ///< the lanes that arrived
  unsigned predicates = 0;    ///< the lanes that arrived with a non-zero predicate
  alignas(16) unsigned char values[kWarpLanes][kWarpValueBytes];
};

/// The running lane deposits `bytes` of `value` and its predicate, and waits for every live lane that
/// the waiting lanes' masks name. The round stays valid until the lane's next warp-level call. `what`
/// names the primitive in error reports.
const WarpRound& warpExchange(unsigned mask, const void* value, std::size_t bytes, bool predicate, const char* what);
/// The running thread's lane (0..31).
unsigned laneId();
/// Once every lane of the running thread's warp is held somewhere (or has returned): the lanes that ask
/// with it (activeLanes: anywhere; activeLanesAt: at the same source position, so that the two sides of a
/// branch are told apart).
unsigned activeLanes();
unsigned activeLanesAt(const char* file, unsigned line, unsigned column);

/// A shuffle segment's width: a power of two from 1 to 32 (anything else counts as 32).
constexpr unsigned segmentWidth(int width) {
  return width >= 1 && width <= 32 && (width & (width - 1)) == 0 ? static_cast<unsigned>(width) : 32u;
}

template <class T>
constexpr void checkWarpValue() {
  static_assert(std::is_trivially_copyable_v<T>, "dispar hostk: warp shuffles move trivially copyable values");
  static_assert(sizeof(T) <= kWarpValueBytes, "dispar hostk: a warp shuffle moves at most 32 bytes per lane");
}

/// `lane`'s value in `round`, or `own` when that lane did not take part (it returned, or is past the
/// end of a partial warp): reading an inactive lane is undefined in CUDA.
template <class T>
T laneValue(const WarpRound& round, unsigned lane, const T& own) {
  if (lane >= kWarpLanes || !(round.participants >> lane & 1u)) return own;
  T value;
  std::memcpy(&value, round.values[lane], sizeof(T));
  return value;
}

template <class T>
const WarpRound& deposit(unsigned mask, const T& var, const char* what) {
  checkWarpValue<T>();
  return warpExchange(mask, &var, sizeof(T), true, what);
}

}  // namespace detail

/// __shfl_sync: `var` of lane `srcLane` (modulo `width`) of this lane's segment.
template <class T>
T shflSync(unsigned mask, T var, int srcLane, int width = 32) {
  const unsigned lane = detail::laneId();
  const detail::WarpRound& round = detail::deposit(mask, var, "__shfl_sync");
  const unsigned w = detail::segmentWidth(width);
  return detail::laneValue(round, lane / w * w + static_cast<unsigned>(srcLane) % w, var);
}

/// __shfl_up_sync: `var` of the lane `delta` below in this lane's segment; its own below the segment.
template <class T>
T shflUpSync(unsigned mask, T var, unsigned delta, int width = 32) {
  const unsigned lane = detail::laneId();
  const detail::WarpRound& round = detail::deposit(mask, var, "__shfl_up_sync");
  const unsigned w = detail::segmentWidth(width);
  if (lane % w < delta) return var;
  return detail::laneValue(round, lane - delta, var);
}

/// __shfl_down_sync: `var` of the lane `delta` above in this lane's segment; its own past the segment.
template <class T>
T shflDownSync(unsigned mask, T var, unsigned delta, int width = 32) {
  const unsigned lane = detail::laneId();
  const detail::WarpRound& round = detail::deposit(mask, var, "__shfl_down_sync");
  const unsigned w = detail::segmentWidth(width);
  if (lane % w + delta >= w) return var;
  return detail::laneValue(round, lane + delta, var);
}

/// __shfl_xor_sync: `var` of lane (this lane xor `laneMask`); its own when that lane is in a later segment.
template <class T>
T shflXorSync(unsigned mask, T var, int laneMask, int width = 32) {
  const unsigned lane = detail::laneId();
  const detail::WarpRound& round = detail::deposit(mask, var, "__shfl_xor_sync");
  const unsigned w = detail::segmentWidth(width);
  const unsigned source = lane ^ static_cast<unsigned>(laneMask);
  if (source >= lane / w * w + w) return var;
  return detail::laneValue(round, source, var);
}

/// __ballot_sync: bit n set when lane n of `mask` took part with a non-zero predicate.
inline unsigned ballotSync(unsigned mask, int predicate) {
  const detail::WarpRound& round = detail::warpExchange(mask, nullptr, 0, predicate != 0, "__ballot_sync");
  return round.predicates & mask;
}

/// __any_sync: non-zero when any lane of `mask` has a non-zero predicate.
inline int anySync(unsigned mask, int predicate) {
  const detail::WarpRound& round = detail::warpExchange(mask, nullptr, 0, predicate != 0, "__any_sync");
  return (round.predicates & mask) != 0 ? 1 : 0;
}

/// __all_sync: non-zero when every lane of `mask` that took part has a non-zero predicate.
inline int allSync(unsigned mask, int predicate) {
  const detail::WarpRound& round = detail::warpExchange(mask, nullptr, 0, predicate != 0, "__all_sync");
  return (round.predicates & mask) == (round.participants & mask) ? 1 : 0;
}

/// __syncwarp: the lanes of `mask` meet.
inline void syncwarp(unsigned mask = 0xffffffffu) { (void)detail::warpExchange(mask, nullptr, 0, true, "__syncwarp"); }

/// __activemask: the lanes of this warp that call it together. The lane waits until every other lane
/// of its warp is held somewhere (here, at another warp-level primitive, at __syncthreads) or has
/// returned; the lanes waiting at this call are the active ones. Inside `if (pred) { m = __activemask();
/// ... } else { m = __activemask(); ... }` that is exactly the lanes that took each branch, as on the GPU.
inline unsigned activemask(DISPAR_HOSTK_SITE) { return detail::activeLanesAt(file, line, column); }

/// The assignments of a lock-step store.
enum class LockstepOp { Assign, Add, Sub, Mul, Div, Rem, And, Or, Xor, Shl, Shr };

/// A store of legacy warp-synchronous code (`smem[tid] += smem[tid + 16];` in `volatile` shared memory,
/// no barrier), which StreamCC rewrites into `lockstepStore<LockstepOp::Add>(smem[tid], smem[tid + 16])`
/// (frontend/lib/WarpLockstep.h). The lanes of a warp ran such code in lock step: every lane read before
/// any lane wrote. Here the lane computes its value, waits until every other lane of its warp is held
/// (at this store, another warp-level point or a barrier) or has returned, stores, and waits again so
/// that no lane reads on before every lane has stored.
template <LockstepOp Op, class T, class V>
void lockstepStore(volatile T& target, const V& value) {
  T stored;
  if constexpr (Op == LockstepOp::Assign) {
    stored = value;
  } else {
    const T old = target;
    if constexpr (Op == LockstepOp::Add) stored = old + value;
    if constexpr (Op == LockstepOp::Sub) stored = old - value;
    if constexpr (Op == LockstepOp::Mul) stored = old * value;
    if constexpr (Op == LockstepOp::Div) stored = old / value;
    if constexpr (Op == LockstepOp::Rem) stored = old % value;
    if constexpr (Op == LockstepOp::And) stored = old & value;
    if constexpr (Op == LockstepOp::Or) stored = old | value;
    if constexpr (Op == LockstepOp::Xor) stored = old ^ value;
    if constexpr (Op == LockstepOp::Shl) stored = old << value;
    if constexpr (Op == LockstepOp::Shr) stored = old >> value;
  }
  (void)detail::activeLanes();
  target = stored;
  (void)detail::activeLanes();
}

namespace detail {
/// Folds the values of the lanes of `mask` that took part, in lane order.
template <class T, class Op>
T warpFold(unsigned mask, T value, Op op, const char* what) {
  const WarpRound& round = deposit(mask, value, what);
  bool first = true;
  T result{};
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    if (!((round.participants & mask) >> lane & 1u)) continue;
    T other;
    std::memcpy(&other, round.values[lane], sizeof(T));
    result = first ? other : op(result, other);
    first = false;
  }
  return result;
}
}  // namespace detail

/// __reduce_add_sync, __reduce_min_sync, __reduce_max_sync (int and unsigned), __reduce_and_sync,
/// __reduce_or_sync, __reduce_xor_sync (unsigned): the operation over the lanes of `mask`.
template <class T>
T reduceAddSync(unsigned mask, T value) {
  return detail::warpFold(mask, value, [](T a, T b) { return static_cast<T>(a + b); }, "__reduce_add_sync");
}
template <class T>
T reduceMinSync(unsigned mask, T value) {
  return detail::warpFold(mask, value, [](T a, T b) { return b < a ? b : a; }, "__reduce_min_sync");
}
template <class T>
T reduceMaxSync(unsigned mask, T value) {
  return detail::warpFold(mask, value, [](T a, T b) { return a < b ? b : a; }, "__reduce_max_sync");
}
inline unsigned reduceAndSync(unsigned mask, unsigned value) {
  return detail::warpFold(mask, value, [](unsigned a, unsigned b) { return a & b; }, "__reduce_and_sync");
}
inline unsigned reduceOrSync(unsigned mask, unsigned value) {
  return detail::warpFold(mask, value, [](unsigned a, unsigned b) { return a | b; }, "__reduce_or_sync");
}
inline unsigned reduceXorSync(unsigned mask, unsigned value) {
  return detail::warpFold(mask, value, [](unsigned a, unsigned b) { return a ^ b; }, "__reduce_xor_sync");
}

/// __match_any_sync: the lanes of `mask` whose `value` equals this lane's.
template <class T>
unsigned matchAnySync(unsigned mask, T value) {
  const detail::WarpRound& round = detail::deposit(mask, value, "__match_any_sync");
  unsigned same = 0;
  for (unsigned lane = 0; lane < detail::kWarpLanes; ++lane)
    if (((round.participants & mask) >> lane & 1u) && std::memcmp(round.values[lane], &value, sizeof(T)) == 0)
      same |= 1u << lane;
  return same;
}

/// __match_all_sync: `mask` (and *predicate = 1) when every lane of `mask` has the same `value`, else 0.
template <class T>
unsigned matchAllSync(unsigned mask, T value, int* predicate) {
  const detail::WarpRound& round = detail::deposit(mask, value, "__match_all_sync");
  const unsigned taking = round.participants & mask;
  bool all = true;
  for (unsigned lane = 0; lane < detail::kWarpLanes; ++lane)
    if ((taking >> lane & 1u) && std::memcmp(round.values[lane], &value, sizeof(T)) != 0) all = false;
  if (predicate != nullptr) *predicate = all ? 1 : 0;
  return all ? mask : 0u;
}

}  // namespace dispar::hostk

#endif  // DISPAR_HOSTK_WARP_H
