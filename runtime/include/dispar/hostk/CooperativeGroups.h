// Cooperative groups on the host path, with CUDA's names and semantics: the thread block
// (this_thread_block, sync, thread_rank, group_index, thread_index, dim_threads, size); its tiles of up
// to 32 threads (tiled_partition<N> and tiled_partition(g, n): sync, shfl, shfl_up, shfl_down, shfl_xor,
// any, all, ballot, match_any, match_all, thread_rank, meta_group_rank, meta_group_size); coalesced groups
// (coalesced_threads, labeled_partition, binary_partition, tiled_partition of a coalesced group, with
// the tiles' collectives); the grid of a cooperative launch (this_grid, grid_group::sync); and reduce,
// inclusive_scan and exclusive_scan over a tile or a coalesced group.
//
// StreamCC rewrites every cooperative-groups name in a kernel's host clone (`cg::thread_block`,
// `cooperative_groups::sync`, ...) to this namespace. Cluster groups are not here: the frontend reports
// them as unsupported on the host path (docs/cuda.md).
#ifndef DISPAR_HOSTK_COOPERATIVE_GROUPS_H
#define DISPAR_HOSTK_COOPERATIVE_GROUPS_H

#include <dispar/hostk/Kernel.h>
#include <dispar/hostk/Types.h>
#include <dispar/hostk/Warp.h>

#include <cstring>
#include <type_traits>
#include <utility>

namespace dispar::hostk::detail {
/// grid_group::sync(): the block's barrier, then the grid's (BlockRunner::gridArrive).
void gridSync(const char* file, unsigned line, unsigned column);
/// Whether the running kernel was launched with cudaLaunchCooperativeKernel.
bool inCooperativeLaunch();
}  // namespace dispar::hostk::detail

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

/// Any group: a whole block, a tile of it made at run time by tiled_partition(parent, n), or a coalesced
/// group (its lanes of the warp in `lanes_`).
class thread_group {
 public:
  void sync(DISPAR_HOSTK_SITE) const {
    if (isBlock_)
      syncthreads(file, line, column);
    else
      syncwarp(lanes_ != 0 ? lanes_ : detail::tileMask(size_, detail::blockRank() % 32));
  }
  unsigned long long size() const { return size_; }
  unsigned long long num_threads() const { return size_; }
  unsigned long long thread_rank() const {
    if (isBlock_) return detail::blockRank();
    if (lanes_ != 0) return static_cast<unsigned>(__builtin_popcount(lanes_ & ((1u << detail::blockRank() % 32) - 1u)));
    return detail::blockRank() % size_;
  }
  bool is_valid() const { return size_ != 0; }

 protected:
  thread_group(bool isBlock, unsigned size, unsigned lanes = 0) : isBlock_(isBlock), size_(size), lanes_(lanes) {}

 private:
  friend thread_group tiled_partition(const thread_group& parent, unsigned tileSize);
  bool isBlock_;
  unsigned size_;
  unsigned lanes_;  ///< a coalesced group's lanes; 0 for a block or a tile
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

/// The grid of a cooperative launch (cudaLaunchCooperativeKernel, which runs every block at once on the
/// host path). sync() in a launch that is not cooperative fails the launch, naming the call.
class grid_group {
 public:
  void sync(DISPAR_HOSTK_SITE) const { ::dispar::hostk::detail::gridSync(file, line, column); }
  unsigned long long block_rank() const {
    const dim3& grid = gridDim();
    const uint3& block = blockIdx();
    return block.x +
           static_cast<unsigned long long>(grid.x) * (block.y + static_cast<unsigned long long>(grid.y) * block.z);
  }
  unsigned long long num_blocks() const {
    const dim3& grid = gridDim();
    return static_cast<unsigned long long>(grid.x) * grid.y * grid.z;
  }
  unsigned long long thread_rank() const { return block_rank() * detail::blockSize() + detail::blockRank(); }
  unsigned long long num_threads() const { return num_blocks() * detail::blockSize(); }
  unsigned long long size() const { return num_threads(); }
  dim3 dim_blocks() const { return gridDim(); }
  dim3 group_dim() const { return gridDim(); }
  dim3 block_index() const { return blockIdx(); }
  bool is_valid() const { return ::dispar::hostk::detail::inCooperativeLaunch(); }
};

inline grid_group this_grid() { return grid_group(); }

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

/// Lanes of one warp that run together: coalesced_threads() (the lanes that reach that call together,
/// as __activemask tells them), or a part of such a group or of a tile (labeled_partition,
/// binary_partition, tiled_partition(group, n)). A thread's rank counts the group's lanes below its own;
/// ballot and the matches answer by rank, as CUDA's do.
class coalesced_group {
 public:
  unsigned long long size() const { return static_cast<unsigned>(__builtin_popcount(lanes_)); }
  unsigned long long num_threads() const { return size(); }
  unsigned long long thread_rank() const { return rankOf(detail::blockRank() % 32); }
  unsigned long long meta_group_rank() const { return metaRank_; }
  unsigned long long meta_group_size() const { return metaSize_; }
  bool is_valid() const { return lanes_ != 0; }
  void sync() const { syncwarp(lanes_); }

  template <class T>
  T shfl(T var, unsigned srcRank) const {
    return fromRank(var, srcRank < size() ? srcRank : static_cast<unsigned>(srcRank % size()), "coalesced_group::shfl");
  }
  template <class T>
  T shfl_up(T var, unsigned delta) const {
    const unsigned rank = static_cast<unsigned>(thread_rank());
    return fromRank(var, rank >= delta ? rank - delta : rank, "coalesced_group::shfl_up");
  }
  template <class T>
  T shfl_down(T var, unsigned delta) const {
    const unsigned rank = static_cast<unsigned>(thread_rank());
    return fromRank(var, rank + delta < size() ? rank + delta : rank, "coalesced_group::shfl_down");
  }
  int any(int predicate) const { return anySync(lanes_, predicate); }
  int all(int predicate) const { return allSync(lanes_, predicate); }
  unsigned ballot(int predicate) const { return toRanks(ballotSync(lanes_, predicate)); }
  template <class T>
  unsigned match_any(T value) const {
    return toRanks(matchAnySync(lanes_, value));
  }
  template <class T>
  unsigned match_all(T value, int& predicate) const {
    return toRanks(matchAllSync(lanes_, value, &predicate));
  }

  operator thread_group() const { return CoalescedGroup(lanes_); }
  /// The group's lanes of the warp (lane n: bit n).
  unsigned lanes() const { return lanes_; }

  explicit coalesced_group(unsigned lanes, unsigned metaRank = 0, unsigned metaSize = 1)
      : lanes_(lanes), metaRank_(metaRank), metaSize_(metaSize) {}

 private:
  struct CoalescedGroup : thread_group {
    explicit CoalescedGroup(unsigned lanes)
        : thread_group(false, static_cast<unsigned>(__builtin_popcount(lanes)), lanes) {}
  };
  unsigned rankOf(unsigned lane) const {
    return static_cast<unsigned>(__builtin_popcount(lanes_ & ((1u << lane) - 1u)));
  }
  unsigned laneOfRank(unsigned rank) const {
    unsigned lanes = lanes_;
    for (unsigned i = 0; i < rank; ++i) lanes &= lanes - 1u;  // drop the lowest lane, rank times
    return static_cast<unsigned>(__builtin_ctz(lanes));
  }
  /// Bit r set for each rank r whose lane is set in `lanesMask`.
  unsigned toRanks(unsigned lanesMask) const {
    unsigned ranks = 0, rank = 0;
    for (unsigned lane = 0; lane < 32; ++lane)
      if (lanes_ >> lane & 1u) ranks |= (lanesMask >> lane & 1u) << rank++;
    return ranks;
  }
  template <class T>
  T fromRank(const T& var, unsigned rank, const char* what) const {
    const auto& round = ::dispar::hostk::detail::deposit(lanes_, var, what);
    return ::dispar::hostk::detail::laneValue(round, laneOfRank(rank), var);
  }
  unsigned lanes_;
  unsigned metaRank_;
  unsigned metaSize_;
};

/// The lanes of the warp that reach this call together with the running one.
inline coalesced_group coalesced_threads(DISPAR_HOSTK_SITE) {
  return coalesced_group(::dispar::hostk::detail::activeLanesAt(file, line, column));
}

namespace detail {
template <unsigned Size, class ParentT>
unsigned lanesOf(const thread_block_tile<Size, ParentT>&) {
  return tileMask(Size, blockRank() % 32);
}
inline unsigned lanesOf(const coalesced_group& group) { return group.lanes(); }
}  // namespace detail

/// The threads of `parent` (a coalesced group or a tile) with the same `label`.
template <class ParentT>
coalesced_group labeled_partition(const ParentT& parent, int label) {
  return coalesced_group(matchAnySync(detail::lanesOf(parent), label));
}
/// The threads of `parent` whose predicate is as the running thread's.
template <class ParentT>
coalesced_group binary_partition(const ParentT& parent, bool predicate) {
  const unsigned lanes = detail::lanesOf(parent);
  const unsigned taking = ballotSync(lanes, predicate ? 1 : 0);
  return coalesced_group(predicate ? taking : lanes & ~taking);
}
/// tiled_partition(group, n) of a coalesced group: its ranks in runs of n (1, 2, 4, 8, 16 or 32).
inline coalesced_group tiled_partition(const coalesced_group& parent, unsigned tileSize) {
  if (tileSize == 0 || tileSize > 32 || (tileSize & (tileSize - 1)) != 0) detail::badTileSize(tileSize);
  const unsigned rank = static_cast<unsigned>(parent.thread_rank());
  const unsigned size = static_cast<unsigned>(parent.size());
  const unsigned first = rank / tileSize * tileSize;
  unsigned lanes = 0, seen = 0;
  for (unsigned lane = 0; lane < 32; ++lane)
    if (parent.lanes() >> lane & 1u) {
      if (seen >= first && seen < first + tileSize) lanes |= 1u << lane;
      ++seen;
    }
  return coalesced_group(lanes, rank / tileSize, (size + tileSize - 1) / tileSize);
}

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
/// Every thread of `group` (a tile or a coalesced group) deposits `value`; `fold` then sees the group's
/// values in rank order.
template <class Group, class T, class Fold>
auto overGroup(const Group& group, const T& value, Fold fold) {
  ::dispar::hostk::detail::checkWarpValue<T>();
  const unsigned lanes = lanesOf(group);
  const auto& round =
      ::dispar::hostk::detail::warpExchange(lanes, &value, sizeof(T), true, "cooperative_groups::reduce/scan");
  T values[32];
  unsigned count = 0;
  for (unsigned lane = 0; lane < 32; ++lane) {
    if (!((round.participants & lanes) >> lane & 1u)) continue;
    std::memcpy(&values[count++], round.values[lane], sizeof(T));
  }
  return fold(values, count, static_cast<unsigned>(group.thread_rank()));
}
template <class Group>
inline constexpr bool kIsWarpGroup = std::is_same_v<Group, coalesced_group>;
template <unsigned Size, class ParentT>
inline constexpr bool kIsWarpGroup<thread_block_tile<Size, ParentT>> = true;
}  // namespace detail

/// The tile's values combined with `op`, in rank order; every thread gets the result.
template <class Group, class T, class Op, class = std::enable_if_t<detail::kIsWarpGroup<Group>>>
std::decay_t<T> reduce(const Group& tile, T&& value, Op&& op) {
  using V = std::decay_t<T>;
  return detail::overGroup(tile, static_cast<V>(value), [&op](const V* values, unsigned count, unsigned) {
    V result = values[0];
    for (unsigned i = 1; i < count; ++i) result = op(result, values[i]);
    return result;
  });
}

/// The values of ranks 0..thread_rank() combined with `op` (plus when omitted).
template <class Group, class T, class Op, class = std::enable_if_t<detail::kIsWarpGroup<Group>>>
std::decay_t<T> inclusive_scan(const Group& tile, T&& value, Op&& op) {
  using V = std::decay_t<T>;
  return detail::overGroup(tile, static_cast<V>(value), [&op](const V* values, unsigned count, unsigned rank) {
    V result = values[0];
    for (unsigned i = 1; i <= rank && i < count; ++i) result = op(result, values[i]);
    return result;
  });
}
template <class Group, class T, class = std::enable_if_t<detail::kIsWarpGroup<Group>>>
std::decay_t<T> inclusive_scan(const Group& tile, T&& value) {
  return inclusive_scan(tile, std::forward<T>(value), plus<std::decay_t<T>>());
}

/// The values of ranks 0..thread_rank()-1 combined with `op`; rank 0 gets a value-initialised T for
/// plus (CUDA leaves it undefined for other operations).
template <class Group, class T, class Op, class = std::enable_if_t<detail::kIsWarpGroup<Group>>>
std::decay_t<T> exclusive_scan(const Group& tile, T&& value, Op&& op) {
  using V = std::decay_t<T>;
  return detail::overGroup(tile, static_cast<V>(value), [&op](const V* values, unsigned count, unsigned rank) {
    V result{};
    for (unsigned i = 0; i < rank && i < count; ++i) result = i == 0 ? values[0] : op(result, values[i]);
    return result;
  });
}
template <class Group, class T, class = std::enable_if_t<detail::kIsWarpGroup<Group>>>
std::decay_t<T> exclusive_scan(const Group& tile, T&& value) {
  return exclusive_scan(tile, std::forward<T>(value), plus<std::decay_t<T>>());
}

}  // namespace dispar::hostk::cooperative_groups

#endif  // DISPAR_HOSTK_COOPERATIVE_GROUPS_H
