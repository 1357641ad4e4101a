// Warps, cooperative groups and per-block __shared__ instances on the host path: hand-written host
// clones as StreamCC emits them (the CUDA source quoted above each), checked against plain CPU loops.
#include <dispar/hostk.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <vector>

namespace {

namespace hk = ::dispar::hostk;
namespace cg = ::dispar::hostk::cooperative_groups;

// Several host threads whatever the caller's environment says (see KernelTests.cpp).
const bool kSeveralHostThreads = (setenv("DISPAR_HOST_THREADS", "4", /*overwrite=*/1), true);

// ---- __shared__: one instance per block, wherever it is declared ----

// __global__ void tiles(const int* in, int* out, int rounds) {   // the tiled matrix multiply's shape
//   int sum = 0;
//   for (int r = 0; r < rounds; ++r) {
//     __shared__ int tile[64];
//     tile[threadIdx.x] = in[r * 64 + threadIdx.x];
//     __syncthreads();
//     sum += tile[63 - threadIdx.x];
//     __syncthreads();
//   }
//   out[blockIdx.x * 64 + threadIdx.x] = sum;
// }
void host_tiles(const int* in, int* out, int rounds) {
  int sum = 0;
  for (int r = 0; r < rounds; ++r) {
    ::dispar::hostk::SharedRef<int[64]> tile = ::dispar::hostk::sharedVariable<int[64]>([] {});
    tile[::dispar::hostk::threadIdx().x] = in[r * 64 + ::dispar::hostk::threadIdx().x];
    ::dispar::hostk::syncthreads();
    sum += tile[63 - ::dispar::hostk::threadIdx().x];
    ::dispar::hostk::syncthreads();
  }
  out[::dispar::hostk::blockIdx().x * 64 + ::dispar::hostk::threadIdx().x] = sum;
}

TEST(HostShared, DeclarationInALoopIsOneInstancePerBlockHoweverOftenItRuns) {
  const int rounds = 1000;  // 1000 x 256 bytes: far beyond 48 KiB if each iteration took new storage
  std::vector<int> in(rounds * 64);
  std::iota(in.begin(), in.end(), 0);
  std::vector<int> out(3 * 64, -1);
  ASSERT_EQ(hk::launch(3, 64, 0, &host_tiles, in.data(), out.data(), rounds), hk::cudaSuccess);
  for (int b = 0; b < 3; ++b)
    for (int t = 0; t < 64; ++t) {
      long long expected = 0;
      for (int r = 0; r < rounds; ++r) expected += in[r * 64 + 63 - t];
      ASSERT_EQ(out[b * 64 + t], expected) << "block " << b << " thread " << t;
    }
}

// __device__ int* counter() { __shared__ int c; return &c; }
// template <class T> __device__ T* slot() { __shared__ T s; return &s; }
// __global__ void sharedAcrossCalls(long long* out) {
//   if (threadIdx.x == 0) *counter() = 0;
//   __syncthreads();
//   atomicAdd(counter(), 1);
//   if (threadIdx.x == 0) { *slot<int>() = 7; *slot<double>() = 0.5; }
//   __syncthreads();
//   if (threadIdx.x == 0) out[blockIdx.x] = *counter() * 1000 + *slot<int>() + long(*slot<double>() * 10);
// }
int* host_counter() {
  ::dispar::hostk::SharedRef<int> c = ::dispar::hostk::sharedVariable<int>([] {});
  return &c;
}
template <class T>
T* host_slot() {
  ::dispar::hostk::SharedRef<T> s = ::dispar::hostk::sharedVariable<T>([] {});
  return &s;
}
void host_sharedAcrossCalls(long long* out) {
  if (::dispar::hostk::threadIdx().x == 0) *host_counter() = 0;
  ::dispar::hostk::syncthreads();
  ::dispar::hostk::atomicAdd(host_counter(), 1);
  if (::dispar::hostk::threadIdx().x == 0) {
    *host_slot<int>() = 7;
    *host_slot<double>() = 0.5;
  }
  ::dispar::hostk::syncthreads();
  if (::dispar::hostk::threadIdx().x == 0)
    out[::dispar::hostk::blockIdx().x] = *host_counter() * 1000 + *host_slot<int>() + long(*host_slot<double>() * 10);
}

TEST(HostShared, DeviceFunctionCalledTwiceSharesItsInstanceAndEachInstantiationHasItsOwn) {
  std::vector<long long> out(5, -1);
  ASSERT_EQ(hk::launch(5, 96, 0, &host_sharedAcrossCalls, out.data()), hk::cudaSuccess);
  for (long long value : out) EXPECT_EQ(value, 96 * 1000 + 7 + 5);
}

// __global__ void branches(int* out) {
//   if (threadIdx.x % 2 == 0) { __shared__ int evens; if (threadIdx.x == 0) evens = 1; __syncthreads(); out[..] =
//   evens; } else { __shared__ int odds; if (threadIdx.x == 1) odds = 2; __syncthreads(); out[..] = odds; }
// }
// (Two barriers in different branches of one block are divergent in CUDA; here each branch's
// declaration is simply a different variable, written and read by one thread each.)
void host_branches(int* out) {
  const unsigned t = ::dispar::hostk::threadIdx().x;
  if (t % 2 == 0) {
    ::dispar::hostk::SharedRef<int> evens = ::dispar::hostk::sharedVariable<int>([] {});
    evens = 100 + static_cast<int>(t);
    out[t] = evens;
  } else {
    ::dispar::hostk::SharedRef<int> odds = ::dispar::hostk::sharedVariable<int>([] {});
    odds = 200 + static_cast<int>(t);
    out[t] = odds;
  }
}

TEST(HostShared, DeclarationsInDifferentBranchesAreDifferentVariables) {
  std::vector<int> out(2, 0);
  ASSERT_EQ(hk::launch(1, 2, 0, &host_branches, out.data()), hk::cudaSuccess);
  EXPECT_EQ(out[0], 100);
  EXPECT_EQ(out[1], 201);
}

// ---- warp primitives ----

// __global__ void shuffles(const int* in, int* out, int width) {
//   int i = blockIdx.x * blockDim.x + threadIdx.x, v = in[i];
//   out[6 * i + 0] = __shfl_sync(0xffffffff, v, 3, width);
//   out[6 * i + 1] = __shfl_up_sync(0xffffffff, v, 2, width);
//   out[6 * i + 2] = __shfl_down_sync(0xffffffff, v, 5, width);
//   out[6 * i + 3] = __shfl_xor_sync(0xffffffff, v, 1, width);
//   out[6 * i + 4] = __shfl_sync(0xffffffff, v, threadIdx.x + 33, width);   // srcLane modulo width
//   out[6 * i + 5] = __ballot_sync(0xffffffff, v % 3 == 0);
// }
void host_shuffles(const int* in, int* out, int width) {
  const int i =
      static_cast<int>(::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x);
  const int v = in[i];
  out[6 * i + 0] = ::dispar::hostk::shflSync(0xffffffffu, v, 3, width);
  out[6 * i + 1] = ::dispar::hostk::shflUpSync(0xffffffffu, v, 2, width);
  out[6 * i + 2] = ::dispar::hostk::shflDownSync(0xffffffffu, v, 5, width);
  out[6 * i + 3] = ::dispar::hostk::shflXorSync(0xffffffffu, v, 1, width);
  out[6 * i + 4] =
      ::dispar::hostk::shflSync(0xffffffffu, v, static_cast<int>(::dispar::hostk::threadIdx().x) + 33, width);
  out[6 * i + 5] = static_cast<int>(::dispar::hostk::ballotSync(0xffffffffu, v % 3 == 0));
}

TEST(HostWarps, ShufflesAcrossAWholeBlockSeeEveryLanesValue) {
  const int blocks = 3, threads = 256;
  std::vector<int> in(blocks * threads);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int>((i * 7919) % 1000);
  for (int width : {32, 16, 8, 4}) {
    std::vector<int> out(6 * in.size(), -1);
    ASSERT_EQ(hk::launch(blocks, threads, 0, &host_shuffles, in.data(), out.data(), width), hk::cudaSuccess);
    for (int i = 0; i < blocks * threads; ++i) {
      const int lane = i % threads % 32;
      const int warpBase = i - lane;
      const int segment = lane / width * width;
      auto at = [&](int l) { return in[warpBase + l]; };
      unsigned ballot = 0;
      for (int l = 0; l < 32; ++l) ballot |= (at(l) % 3 == 0 ? 1u : 0u) << l;
      SCOPED_TRACE("width " + std::to_string(width) + " thread " + std::to_string(i));
      EXPECT_EQ(out[6 * i + 0], at(segment + 3 % width));
      EXPECT_EQ(out[6 * i + 1], lane % width >= 2 ? at(lane - 2) : at(lane));
      EXPECT_EQ(out[6 * i + 2], lane % width + 5 < width ? at(lane + 5) : at(lane));
      EXPECT_EQ(out[6 * i + 3], at(lane ^ 1));
      EXPECT_EQ(out[6 * i + 4], at(segment + (i % threads + 33) % width));
      EXPECT_EQ(static_cast<unsigned>(out[6 * i + 5]), ballot);
    }
  }
}

// The warp-shuffle reduction of CUDA's samples, across a block whose last warp is partial, with
// doubles and a 16-byte struct.
struct Pair {
  double sum;
  long long count;
};
void host_warpSums(const double* in, double* sums, long long* counts, int n) {
  const int i =
      static_cast<int>(::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x);
  Pair p{i < n ? in[i] : 0.0, i < n ? 1 : 0};
  for (int offset = 16; offset > 0; offset /= 2) {
    const Pair other = ::dispar::hostk::shflDownSync(::dispar::hostk::activemask(), p, static_cast<unsigned>(offset));
    p.sum += other.sum;
    p.count += other.count;
  }
  if (::dispar::hostk::threadIdx().x % 32 == 0) {
    sums[i / 32] = p.sum;
    counts[i / 32] = p.count;
  }
}

TEST(HostWarps, ShuffleReductionOverPartialWarpsAndWideValues) {
  const int threads = 80, n = 70;  // 2 full warps and one of 16 lanes, 6 of which have data
  std::vector<double> in(threads);
  for (int i = 0; i < threads; ++i) in[i] = 0.25 * i;
  std::vector<double> sums(3, -1);
  std::vector<long long> counts(3, -1);
  ASSERT_EQ(hk::launch(1, threads, 0, &host_warpSums, in.data(), sums.data(), counts.data(), n), hk::cudaSuccess);
  for (int w = 0; w < 2; ++w) {
    double expected = 0;
    for (int l = 0; l < 32; ++l) expected += in[w * 32 + l];
    EXPECT_DOUBLE_EQ(sums[w], expected) << "warp " << w;
    EXPECT_EQ(counts[w], 32);
  }
  // Lanes 16..31 of the last warp do not exist: the offset-16 shuffle gives every lane its own value
  // back (reading an absent lane is undefined in CUDA; the host path returns the caller's value), so
  // the partial warp counts each of its six values twice.
  double partial = 0;
  for (int i = 64; i < n; ++i) partial += in[i];
  EXPECT_DOUBLE_EQ(sums[2], 2 * partial);
  EXPECT_EQ(counts[2], 2 * (n - 64));
}

// __global__ void votes(const int* in, int* out) {
//   int t = threadIdx.x, v = in[t];
//   if (t >= 40 && t < 48) return;                       // lanes 8..15 of warp 1 leave early
//   out[8 * t + 0] = __any_sync(0xffffffff, v > 90);
//   out[8 * t + 1] = __all_sync(0xffffffff, v >= 0);
//   out[8 * t + 2] = __reduce_add_sync(0xffffffff, v);
//   out[8 * t + 3] = __reduce_min_sync(0xffffffff, v);
//   out[8 * t + 4] = __reduce_max_sync(0xffffffff, v);
//   out[8 * t + 5] = __reduce_or_sync(0xffffffff, (unsigned)v);
//   out[8 * t + 6] = __match_any_sync(0xffffffff, v % 4);
//   __syncwarp(); out[8 * t + 7] = __activemask();
// }
void host_votes(const int* in, int* out) {
  const int t = static_cast<int>(::dispar::hostk::threadIdx().x);
  const int v = in[t];
  if (t >= 40 && t < 48) return;
  out[8 * t + 0] = ::dispar::hostk::anySync(0xffffffffu, v > 90);
  out[8 * t + 1] = ::dispar::hostk::allSync(0xffffffffu, v >= 0);
  out[8 * t + 2] = ::dispar::hostk::reduceAddSync(0xffffffffu, v);
  out[8 * t + 3] = ::dispar::hostk::reduceMinSync(0xffffffffu, v);
  out[8 * t + 4] = ::dispar::hostk::reduceMaxSync(0xffffffffu, v);
  out[8 * t + 5] = static_cast<int>(::dispar::hostk::reduceOrSync(0xffffffffu, static_cast<unsigned>(v)));
  out[8 * t + 6] = static_cast<int>(::dispar::hostk::matchAnySync(0xffffffffu, v % 4));
  ::dispar::hostk::syncwarp();
  out[8 * t + 7] = static_cast<int>(::dispar::hostk::activemask());
}

TEST(HostWarps, VotesReductionsAndMatchesCountOnlyLanesThatAreStillRunning) {
  const int threads = 64;
  std::vector<int> in(threads);
  for (int i = 0; i < threads; ++i) in[i] = (i * 37) % 97;
  std::vector<int> out(8 * threads, -1);
  ASSERT_EQ(hk::launch(1, threads, 0, &host_votes, in.data(), out.data()), hk::cudaSuccess);
  for (int t = 0; t < threads; ++t) {
    if (t >= 40 && t < 48) continue;
    const int w = t / 32;
    bool any = false, all = true;
    int sum = 0, mn = 1 << 30, mx = -1;
    unsigned orBits = 0, match = 0, active = 0;
    for (int l = 0; l < 32; ++l) {
      const int u = w * 32 + l;
      if (u >= 40 && u < 48) continue;
      const int value = in[u];
      any = any || value > 90;
      all = all && value >= 0;
      sum += value;
      mn = std::min(mn, value);
      mx = std::max(mx, value);
      orBits |= static_cast<unsigned>(value);
      if (value % 4 == in[t] % 4) match |= 1u << l;
      active |= 1u << l;
    }
    SCOPED_TRACE("thread " + std::to_string(t));
    EXPECT_EQ(out[8 * t + 0], any ? 1 : 0);
    EXPECT_EQ(out[8 * t + 1], all ? 1 : 0);
    EXPECT_EQ(out[8 * t + 2], sum);
    EXPECT_EQ(out[8 * t + 3], mn);
    EXPECT_EQ(out[8 * t + 4], mx);
    EXPECT_EQ(static_cast<unsigned>(out[8 * t + 5]), orBits);
    EXPECT_EQ(static_cast<unsigned>(out[8 * t + 6]), match);
    EXPECT_EQ(static_cast<unsigned>(out[8 * t + 7]), active);
  }
}

// Only the first warp shuffles (the tail of CUDA's reduce samples): the other warps go on to the
// block barrier without waiting for it.
void host_firstWarpOnly(const int* in, int* out) {
  ::dispar::hostk::SharedRef<int[128]> s = ::dispar::hostk::sharedVariable<int[128]>([] {});
  const unsigned t = ::dispar::hostk::threadIdx().x;
  s[t] = in[t];
  ::dispar::hostk::syncthreads();
  if (t < 32) {
    int v = s[t] + s[t + 32] + s[t + 64] + s[t + 96];
    for (int offset = 16; offset > 0; offset /= 2)
      v += ::dispar::hostk::shflDownSync(0xffffffffu, v, static_cast<unsigned>(offset));
    if (t == 0) s[0] = v;
  }
  ::dispar::hostk::syncthreads();
  out[t] = s[0];
}

TEST(HostWarps, OneWarpShufflesWhileTheOthersWaitAtTheBlockBarrier) {
  std::vector<int> in(128);
  std::iota(in.begin(), in.end(), 1);
  std::vector<int> out(128, 0);
  ASSERT_EQ(hk::launch(2, 128, 0, &host_firstWarpOnly, in.data(), out.data()), hk::cudaSuccess);
  for (int v : out) EXPECT_EQ(v, 128 * 129 / 2);
}

// Warp-aggregated atomics (NVIDIA's atomicAggInc): inside a divergent branch __activemask() names the
// lanes that took it, one leader reserves their slots, a shuffle hands out the base.
// __device__ int atomicAggInc(int* counter) {
//   unsigned mask = __activemask();
//   int leader = __ffs(mask) - 1, lane = threadIdx.x % 32, base;
//   if (lane == leader) base = atomicAdd(counter, __popc(mask));
//   base = __shfl_sync(mask, base, leader);
//   return base + __popc(mask & ((1u << lane) - 1));
// }
// __global__ void compact(const int* in, int* out, int* count, int n) {
//   int i = blockIdx.x * blockDim.x + threadIdx.x;
//   if (i < n && in[i] > 0) out[atomicAggInc(count)] = in[i];
// }
int host_atomicAggInc(int* counter) {
  const unsigned mask = ::dispar::hostk::activemask();
  const int leader = ::dispar::hostk::__ffs(static_cast<int>(mask)) - 1;
  const int lane = static_cast<int>(::dispar::hostk::threadIdx().x % 32);
  int base = 0;
  if (lane == leader) base = ::dispar::hostk::atomicAdd(counter, ::dispar::hostk::__popc(mask));
  base = ::dispar::hostk::shflSync(mask, base, leader);
  return base + ::dispar::hostk::__popc(mask & ((1u << lane) - 1));
}
void host_compact(const int* in, int* out, int* count, int n) {
  const int i =
      static_cast<int>(::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x);
  if (i < n && in[i] > 0) out[host_atomicAggInc(count)] = in[i];
}

TEST(HostWarps, ActiveMaskInADivergentBranchNamesTheLanesThatTookIt) {
  const int n = 1000;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 37) % 11 - 4;  // about 6 in 11 positive, scattered
  std::vector<int> out(n, 0);
  int count = 0;
  ASSERT_EQ(hk::launch(8, 128, 0, &host_compact, in.data(), out.data(), &count, n), hk::cudaSuccess);
  std::vector<int> expected;
  for (int v : in)
    if (v > 0) expected.push_back(v);
  ASSERT_EQ(count, static_cast<int>(expected.size()));
  std::vector<int> got(out.begin(), out.begin() + count);
  std::sort(got.begin(), got.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(got, expected);  // every slot written once: no lane outside the branch took part
}

// ---- cooperative groups ----

// __global__ void groups(const int* in, int* out) {
//   cg::thread_block cta = cg::this_thread_block();
//   __shared__ int s[128];
//   s[cta.thread_rank()] = in[blockIdx.x * 128 + cta.thread_rank()];
//   cg::sync(cta);
//   cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);
//   int v = s[cta.thread_rank()];
//   for (int o = tile.size() / 2; o > 0; o /= 2) v += tile.shfl_down(v, o);
//   cg::thread_block_tile<8> small = cg::tiled_partition<8>(tile);
//   int r8 = cg::reduce(small, s[cta.thread_rank()], cg::plus<int>());
//   int scan = cg::inclusive_scan(small, 1);
//   out[...] = {v (rank 0 of tile), r8, scan, small.meta_group_rank(), tile.meta_group_rank(), small.ballot(r8 > 0)};
// }
void host_groups(const int* in, int* out) {
  ::dispar::hostk::cooperative_groups::thread_block cta = ::dispar::hostk::cooperative_groups::this_thread_block();
  ::dispar::hostk::SharedRef<int[128]> s = ::dispar::hostk::sharedVariable<int[128]>([] {});
  const unsigned rank = cta.thread_rank();
  s[rank] = in[::dispar::hostk::blockIdx().x * 128 + rank];
  ::dispar::hostk::cooperative_groups::sync(cta);
  ::dispar::hostk::cooperative_groups::thread_block_tile<32> tile =
      ::dispar::hostk::cooperative_groups::tiled_partition<32>(cta);
  int v = s[rank];
  for (int o = static_cast<int>(tile.size()) / 2; o > 0; o /= 2) v += tile.shfl_down(v, static_cast<unsigned>(o));
  auto small = ::dispar::hostk::cooperative_groups::tiled_partition<8>(tile);
  const int r8 =
      ::dispar::hostk::cooperative_groups::reduce(small, s[rank], ::dispar::hostk::cooperative_groups::plus<int>());
  const int scan = ::dispar::hostk::cooperative_groups::inclusive_scan(small, 1);
  const int exclusive = ::dispar::hostk::cooperative_groups::exclusive_scan(small, 2);
  int* o = out + 8 * (::dispar::hostk::blockIdx().x * 128 + rank);
  o[0] = tile.thread_rank() == 0 ? v : -1;
  o[1] = r8;
  o[2] = scan;
  o[3] = static_cast<int>(small.meta_group_rank());
  o[4] = static_cast<int>(tile.meta_group_rank());
  o[5] = static_cast<int>(small.ballot(s[rank] % 2 == 0));
  o[6] = exclusive;
  o[7] =
      ::dispar::hostk::cooperative_groups::reduce(tile, s[rank], ::dispar::hostk::cooperative_groups::greater<int>());
}

TEST(HostCooperativeGroups, BlockAndTilesWithShufflesReducesAndScans) {
  const int blocks = 2;
  std::vector<int> in(blocks * 128);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int>((i * 31) % 53);
  std::vector<int> out(8 * in.size(), -7);
  ASSERT_EQ(hk::launch(blocks, 128, 0, &host_groups, in.data(), out.data()), hk::cudaSuccess);
  for (int b = 0; b < blocks; ++b)
    for (int r = 0; r < 128; ++r) {
      const int* o = &out[8 * (b * 128 + r)];
      const int* block = &in[b * 128];
      const int warp = r / 32 * 32, tile8 = r / 8 * 8;
      int warpSum = 0, warpMax = 0, sum8 = 0;
      unsigned even = 0;
      for (int l = 0; l < 32; ++l) warpSum += block[warp + l], warpMax = std::max(warpMax, block[warp + l]);
      for (int l = 0; l < 8; ++l) sum8 += block[tile8 + l], even |= (block[tile8 + l] % 2 == 0 ? 1u : 0u) << l;
      SCOPED_TRACE("block " + std::to_string(b) + " rank " + std::to_string(r));
      EXPECT_EQ(o[0], r % 32 == 0 ? warpSum : -1);
      EXPECT_EQ(o[1], sum8);
      EXPECT_EQ(o[2], r % 8 + 1);
      EXPECT_EQ(o[3], (r % 32) / 8);
      EXPECT_EQ(o[4], r / 32);
      EXPECT_EQ(static_cast<unsigned>(o[5]), even);
      EXPECT_EQ(o[6], 2 * (r % 8));
      EXPECT_EQ(o[7], warpMax);
    }
}

// thread_block's indices and a run-time tile size.
void host_blockShape(unsigned* out) {
  const auto cta = ::dispar::hostk::cooperative_groups::this_thread_block();
  const unsigned rank = cta.thread_rank();
  const ::dispar::hostk::dim3 index = cta.thread_index();
  const ::dispar::hostk::dim3 group = cta.group_index();
  const ::dispar::hostk::dim3 shape = cta.dim_threads();
  ::dispar::hostk::cooperative_groups::thread_group four = ::dispar::hostk::cooperative_groups::tiled_partition(cta, 4);
  four.sync();
  unsigned* o = out + 6 * (group.x * cta.size() + rank);
  o[0] = rank;
  o[1] = index.x + 10 * index.y + 100 * index.z;
  o[2] = static_cast<unsigned>(cta.size());
  o[3] = shape.x * shape.y * shape.z;
  o[4] = static_cast<unsigned>(four.thread_rank());
  o[5] = static_cast<unsigned>(four.size());
}

TEST(HostCooperativeGroups, ThreadBlockIndicesAndRunTimeTiles) {
  std::vector<unsigned> out(6 * 2 * 24, 0);
  ASSERT_EQ(hk::launch(2, hk::dim3(4, 3, 2), 0, &host_blockShape, out.data()), hk::cudaSuccess);
  for (unsigned b = 0; b < 2; ++b)
    for (unsigned r = 0; r < 24; ++r) {
      const unsigned* o = &out[6 * (b * 24 + r)];
      EXPECT_EQ(o[0], r);
      EXPECT_EQ(o[1], r % 4 + 10 * (r / 4 % 3) + 100 * (r / 12));
      EXPECT_EQ(o[2], 24u);
      EXPECT_EQ(o[3], 24u);
      EXPECT_EQ(o[4], r % 4);
      EXPECT_EQ(o[5], 4u);
    }
}

// ---- CUDA names inside macro definitions ----

// #define UMUL(a, b) __umul24(a, b)
// #define TID threadIdx.x
// #define SYNC() __syncthreads()
// __global__ void macros(unsigned* out) { __shared__ unsigned s[64]; s[TID] = UMUL(TID, 3u); SYNC(); out[TID] = s[63 -
// TID]; }
#define UMUL(a, b) __umul24(a, b)
#define TID threadIdx.x
#define SYNC() __syncthreads()
void host_macros(unsigned* out) {
  using ::dispar::hostk::cuda_names::__syncthreads;
  using ::dispar::hostk::cuda_names::__umul24;
  const ::dispar::hostk::uint3& threadIdx = ::dispar::hostk::threadIdx();
  ::dispar::hostk::SharedRef<unsigned[64]> s = ::dispar::hostk::sharedVariable<unsigned[64]>([] {});
  s[TID] = UMUL(TID, 3u);
  SYNC();
  out[TID] = s[63 - TID];
}
#undef UMUL
#undef TID
#undef SYNC

TEST(HostCudaNames, BuiltinsSpeltInsideMacroDefinitionsResolveToTheHostFunctions) {
  std::vector<unsigned> out(64, 0);
  ASSERT_EQ(hk::launch(1, 64, 0, &host_macros, out.data()), hk::cudaSuccess);
  for (unsigned t = 0; t < 64; ++t) EXPECT_EQ(out[t], (63 - t) * 3);
}

}  // namespace
