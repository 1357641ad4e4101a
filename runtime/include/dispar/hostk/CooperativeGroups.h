// Cooperative groups on the host path, with CUDA's names and semantics for what a block holds: the
// thread block (this_thread_block, sync, thread_rank, group_index, thread_index, dim_threads, size)
// and its tiles of up to 32 threads (tiled_partition<N> and tiled_partition(g, n): sync, shfl,
// shfl_up, shfl_down, shfl_xor, any, all, ballot, match_any, match_all, thread_rank,
// meta_group_rank, meta_group_size), plus reduce, inclusive_scan and exclusive_scan over a tile.
//
// StreamCC rewrites every cooperative-groups name in a kernel's host clone (`cg::thread_block`,
// `cooperative_groups::sync`, ...) to this namespace. Grid, cluster and coalesced groups are not here:
// the frontend reports them as unsupported on the host path (docs/cuda.md).
#ifndef DISPAR_HOSTK_COOPERATIVE_GROUPS_H
#define DISPAR_HOSTK_COOPERATIVE_GROUPS_H

#include <dispar/hostk/Kernel.h>
#include <dispar/hostk/Types.h>
#include <dispar/hostk/Warp.h>

#include <cstring>
#include <type_traits>
#include <utility>

namespace dispar::hostk::cooperative_groups {

namespace detail {
inline unsigned blockRank() { return ::dispar::hostk::detail::runningThread("cooperative groups").linearIndex; }
inline unsigned blockSize() {
  const dim3& shape = ::dispar::hostk::blockDim();
  return shape.x * shape.y * shape.z;
}
/// The lanes of the tile of `size` threads (a power of two up to 32) that holds `lane`.
constexpr unsigned tileMask(unsigned size, unsigned lane) {
  return size >= 32 ? ~0u : ((1u << size) - 1u) << (lane / size * size);
}
[[noreturn]] void badTileSize(unsigned size);
}  // namespace detail

/// Any group: a whole block, or a tile of it made at run time by tiled_partition(parent, n).
class thread_group {
 public:
  void sync(DISPAR_HOSTK_SITE) const {
    if (isBlock_)
      syncthreads(file, line, column);
    else
      syncwarp(detail::tileMask(size_, detail::blockRank() % 32));
  }
  unsigned long long size() const { return size_; }
  unsigned long long num_threads() const { return size_; }
  unsigned long long thread_rank() const { return isBlock_ ? detail::blockRank() : detail::blockRank() % size_; }
  bool is_valid() const { return size_ != 0; }

 protected:
  thread_group(bool isBlock, unsigned size) : isBlock_(isBlock), size_(size) {}

 private:
  friend thread_group tiled_partition(const thread_group& parent, unsigned tileSize);
  bool isBlock_;
  unsigned size_;
};

/// The running thread's block. Stateless (every member reads the running thread), so trivially
/// copyable: thread loops can keep it across a barrier or recompute it.
class thread_block {
 public:
  void sync(DISPAR_HOSTK_SITE) const { syncthreads(file, line, column); }
  unsigned thread_rank() const { return detail::blockRank(); }
  unsigned size() const { return detail::blockSize(); }
  unsigned num_threads() const { return detail::blockSize(); }
  dim3 group_index() const { return blockIdx(); }
  dim3 thread_index() const { return threadIdx(); }
  dim3 dim_threads() const { return blockDim(); }
  dim3 group_dim() const { return blockDim(); }
  bool is_valid() const { return true; }
  operator thread_group() const { return BlockGroup(); }

 private:
  struct BlockGroup : thread_group {
    BlockGroup() : thread_group(true, detail::blockSize()) {}
  };
};

inline thread_block this_thread_block() { return thread_block(); }

/// A tile of Size threads (1, 2, 4, 8, 16 or 32) of a block or of a larger tile: consecutive thread
/// ranks within one warp. ParentT is the group it was partitioned from; every tile converts to
/// thread_block_tile<Size>.
template <unsigned Size, class ParentT = void>
class thread_block_tile;

template <unsigned Size>
class thread_block_tile<Size, void> {
  static_assert(Size >= 1 && Size <= 32 && (Size & (Size - 1)) == 0,
                "dispar hostk: tiles have 1, 2, 4, 8, 16 or 32 threads on the host path");

 public:
  static constexpr unsigned num_threads() { return Size; }
  static constexpr unsigned long long size() { return Size; }
  unsigned thread_rank() const { return detail::blockRank() % Size; }
  unsigned meta_group_rank() const { return metaRank_; }
  unsigned meta_group_size() const { return metaSize_; }
  bool is_valid() const { return true; }
  void sync(DISPAR_HOSTK_SITE) const { syncwarp(mask()); }

  template <class T>
  T shfl(T var, int srcRank) const {
    return shflSync(mask(), var, srcRank, Size);
  }
  template <class T>
  T shfl_up(T var, unsigned delta) const {
    return shflUpSync(mask(), var, delta, Size);
  }
  template <class T>
  T shfl_down(T var, unsigned delta) const {
    return shflDownSync(mask(), var, delta, Size);
  }
  template <class T>
  T shfl_xor(T var, unsigned laneMask) const {
    return shflXorSync(mask(), var, static_cast<int>(laneMask), Size);
  }
  int any(int predicate) const { return anySync(mask(), predicate); }
  int all(int predicate) const { return allSync(mask(), predicate); }
  /// Bit n set when the tile's thread of rank n has a non-zero predicate.
  unsigned ballot(int predicate) const { return toRanks(ballotSync(mask(), predicate)); }
  template <class T>
  unsigned match_any(T value) const {
    return toRanks(matchAnySync(mask(), value));
  }
  template <class T>
  unsigned match_all(T value, int& predicate) const {
    return toRanks(matchAllSync(mask(), value, &predicate));
  }

  operator thread_group() const { return TileGroup(); }

 protected:
  thread_block_tile(unsigned metaRank, unsigned metaSize) : metaRank_(metaRank), metaSize_(metaSize) {}

 private:
  template <unsigned, class>
  friend class thread_block_tile;
  struct TileGroup : thread_group {
    TileGroup() : thread_group(false, Size) {}
  };
  unsigned mask() const { return detail::tileMask(Size, detail::blockRank() % 32); }
  unsigned toRanks(unsigned lanes) const {
    const unsigned base = detail::blockRank() % 32 / Size * Size;
    return Size >= 32 ? lanes : (lanes >> base) & ((1u << Size) - 1u);
  }
  unsigned metaRank_;
  unsigned metaSize_;
};

template <unsigned Size, class ParentT>
class thread_block_tile : public thread_block_tile<Size, void> {
 public:
  thread_block_tile(unsigned metaRank, unsigned metaSize) : thread_block_tile<Size, void>(metaRank, metaSize) {}
};

/// tiled_partition<Size>(parent): the tile of the parent (a block or a larger tile) holding this thread.
template <unsigned Size, class ParentT>
thread_block_tile<Size, ParentT> tiled_partition(const ParentT& parent) {
  const unsigned rank = static_cast<unsigned>(parent.thread_rank());
  const unsigned parentSize = static_cast<unsigned>(parent.size());
  return thread_block_tile<Size, ParentT>(rank / Size, (parentSize + Size - 1) / Size);
}

/// tiled_partition(parent, n): a tile of n threads (1, 2, 4, 8, 16 or 32) as a thread_group.
inline thread_group tiled_partition(const thread_group& parent, unsigned tileSize) {
  if (tileSize == 0 || tileSize > 32 || (tileSize & (tileSize - 1)) != 0) detail::badTileSize(tileSize);
  if (tileSize == parent.size()) return parent;
  return thread_group(false, tileSize);
}

/// The running thread alone.
inline thread_block_tile<1, void> this_thread() { return tiled_partition<1>(this_thread_block()); }

template <class Group>
void sync(const Group& group, DISPAR_HOSTK_SITE) {
  group.sync(file, line, column);
}
template <class Group>
auto thread_rank(const Group& group) -> decltype(group.thread_rank()) {
  return group.thread_rank();
}
template <class Group>
auto group_size(const Group& group) -> decltype(group.size()) {
  return group.size();
}

// The operations of reduce and the scans (<cooperative_groups/reduce.h>, <cooperative_groups/scan.h>).
// As in CUDA, less and greater pick the smaller and the larger value.
template <class T>
struct plus {
  T operator()(const T& a, const T& b) const { return a + b; }
};
template <class T>
struct less {
  T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <class T>
struct greater {
  T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <class T>
struct bit_and {
  T operator()(const T& a, const T& b) const { return a & b; }
};
template <class T>
struct bit_or {
  T operator()(const T& a, const T& b) const { return a | b; }
};
template <class T>
struct bit_xor {
  T operator()(const T& a, const T& b) const { return a ^ b; }
};

namespace detail {
/// Every thread of `tile` deposits `value`; `fold` then sees the tile's values in rank order.
template <unsigned Size, class T, class Fold>
auto overTile(const thread_block_tile<Size, void>& tile, const T& value, Fold fold) {
  ::dispar::hostk::detail::checkWarpValue<T>();
  const unsigned lane = blockRank() % 32;
  const unsigned mask = tileMask(Size, lane);
  const auto& round =
      ::dispar::hostk::detail::warpExchange(mask, &value, sizeof(T), true, "cooperative_groups::reduce/scan");
  T values[Size];
  unsigned count = 0;
  const unsigned base = lane / Size * Size;
  for (unsigned rank = 0; rank < Size; ++rank) {
    if (!(round.participants >> (base + rank) & 1u)) continue;
    std::memcpy(&values[count++], round.values[base + rank], sizeof(T));
  }
  (void)tile;
  return fold(values, count, tile.thread_rank());
}
}  // namespace detail

/// The tile's values combined with `op`, in rank order; every thread gets the result.
template <unsigned Size, class ParentT, class T, class Op>
std::decay_t<T> reduce(const thread_block_tile<Size, ParentT>& tile, T&& value, Op&& op) {
  using V = std::decay_t<T>;
  return detail::overTile<Size>(tile, static_cast<V>(value), [&op](const V* values, unsigned count, unsigned) {
    V result = values[0];
    for (unsigned i = 1; i < count; ++i) result = op(result, values[i]);
    return result;
  });
}

/// The values of ranks 0..thread_rank() combined with `op` (plus when omitted).
template <unsigned Size, class ParentT, class T, class Op>
std::decay_t<T> inclusive_scan(const thread_block_tile<Size, ParentT>& tile, T&& value, Op&& op) {
  using V = std::decay_t<T>;
  return detail::overTile<Size>(tile, static_cast<V>(value), [&op](const V* values, unsigned count, unsigned rank) {
    V result = values[0];
    for (unsigned i = 1; i <= rank && i < count; ++i) result = op(result, values[i]);
    return result;
  });
}
template <unsigned Size, class ParentT, class T>
std::decay_t<T> inclusive_scan(const thread_block_tile<Size, ParentT>& tile, T&& value) {
  return inclusive_scan(tile, std::forward<T>(value), plus<std::decay_t<T>>());
}

/// The values of ranks 0..thread_rank()-1 combined with `op`; rank 0 gets a value-initialised T for
/// plus (CUDA leaves it undefined for other operations).
template <unsigned Size, class ParentT, class T, class Op>
std::decay_t<T> exclusive_scan(const thread_block_tile<Size, ParentT>& tile, T&& value, Op&& op) {
  using V = std::decay_t<T>;
  return detail::overTile<Size>(tile, static_cast<V>(value), [&op](const V* values, unsigned count, unsigned rank) {
    V result{};
    for (unsigned i = 0; i < rank && i < count; ++i) result = i == 0 ? values[0] : op(result, values[i]);
    return result;
  });
}
template <unsigned Size, class ParentT, class T>
std::decay_t<T> exclusive_scan(const thread_block_tile<Size, ParentT>& tile, T&& value) {
  return exclusive_scan(tile, std::forward<T>(value), plus<std::decay_t<T>>());
}

}  // namespace dispar::hostk::cooperative_groups

#endif  // DISPAR_HOSTK_COOPERATIVE_GROUPS_H
