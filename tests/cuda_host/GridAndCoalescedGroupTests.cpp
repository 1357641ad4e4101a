// Grid groups (cooperative launches) and coalesced groups on the host path: hand-written host clones as
// StreamCC emits them (the CUDA source quoted above each), checked against plain CPU loops.
#include "HostKernelTestSupport.h"

#include <dispar/hostk.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <vector>

namespace {

namespace hk = ::dispar::hostk;
namespace cg = ::dispar::hostk::cooperative_groups;

// Several host threads whatever the caller's environment says (see KernelTests.cpp); fewer than the
// blocks of the cooperative launches below, which must all run at once all the same.
const bool kSeveralHostThreads = (setenv("DISPAR_HOST_THREADS", "4", /*overwrite=*/1), true);

// ---- grid groups ----

// __global__ void gridSum(const int* in, int* partial, int* out, int n) {   // the samples' reduceMultiBlockCg
//   cg::grid_group grid = cg::this_grid();
//   __shared__ int s[64];
//   int sum = 0;
//   for (int i = grid.thread_rank(); i < n; i += grid.size()) sum += in[i];
//   s[threadIdx.x] = sum;
//   __syncthreads();
//   for (int h = 32; h > 0; h /= 2) { if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h]; __syncthreads(); }
//   if (threadIdx.x == 0) partial[grid.block_rank()] = s[0];
//   grid.sync();
//   if (grid.thread_rank() == 0) { int total = 0; for (b < grid.num_blocks()) total += partial[b]; out[0] = total; }
//   grid.sync();
//   out[1 + grid.thread_rank()] = out[0] + partial[(grid.block_rank() + 1) % grid.num_blocks()] + grid.is_valid();
// }
void host_gridSum(const int* in, int* partial, int* out, int n) {
  cg::grid_group grid = cg::this_grid();
  hk::SharedRef<int[64]> s = hk::sharedVariable<int[64]>([] {});
  int sum = 0;
  for (unsigned long long i = grid.thread_rank(); i < static_cast<unsigned long long>(n); i += grid.size())
    sum += in[i];
  s[hk::threadIdx().x] = sum;
  hk::syncthreads();
  for (unsigned h = 32; h > 0; h /= 2) {
    if (hk::threadIdx().x < h) s[hk::threadIdx().x] += s[hk::threadIdx().x + h];
    hk::syncthreads();
  }
  if (hk::threadIdx().x == 0) partial[grid.block_rank()] = s[0];
  grid.sync();
  if (grid.thread_rank() == 0) {
    int total = 0;
    for (unsigned long long b = 0; b < grid.num_blocks(); ++b) total += partial[b];
    out[0] = total;
  }
  grid.sync();
  out[1 + grid.thread_rank()] = out[0] + partial[(grid.block_rank() + 1) % grid.num_blocks()] + grid.is_valid();
}

TEST(HostGridGroups, ACooperativeLaunchRunsEveryBlockAtOnceAndGridSyncOrdersThem) {
  ::dispar::testing::registerClone(&host_gridSum);
  const int n = 10000, blocks = 12, threads = 64;  // 12 blocks on 4 host threads
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 7) % 13;
  std::vector<int> partial(blocks, -1), out(1 + blocks * threads, -1);
  const int* inData = in.data();
  int* partialData = partial.data();
  int* outData = out.data();
  int count = n;
  void* args[] = {&inData, &partialData, &outData, &count};
  ASSERT_EQ(hk::cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&host_gridSum), hk::dim3(blocks),
                                            hk::dim3(threads), args),
            hk::cudaSuccess);
  const int total = std::accumulate(in.begin(), in.end(), 0);
  EXPECT_EQ(out[0], total);
  std::vector<int> expectedPartial(blocks, 0);
  for (int i = 0; i < n; ++i) expectedPartial[i % (blocks * threads) / threads] += in[i];
  EXPECT_EQ(partial, expectedPartial);
  for (int t = 0; t < blocks * threads; ++t)
    ASSERT_EQ(out[1 + t], total + expectedPartial[(t / threads + 1) % blocks] + 1) << "grid thread " << t;
}

TEST(HostGridGroups, GridSyncInALaunchThatIsNotCooperativeFailsTheLaunchNamingTheCall) {
  std::vector<int> in(64, 1), partial(2), out(1 + 128);
  EXPECT_EQ(hk::launch(2, 64, 0, &host_gridSum, in.data(), partial.data(), out.data(), 64), hk::cudaErrorLaunchFailure);
  EXPECT_EQ(hk::cudaGetLastError(), hk::cudaErrorLaunchFailure);
}

TEST(HostGridGroups, AGridLargerThanTheHostPathRunsAtOnceIsRefused) {
  ::dispar::testing::registerClone(&host_gridSum);
  void* args[] = {nullptr, nullptr, nullptr, nullptr};
  EXPECT_EQ(hk::cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&host_gridSum),
                                            hk::dim3(hk::kMaxCooperativeBlocks + 1), hk::dim3(32), args),
            hk::cudaErrorCooperativeLaunchTooLarge);
  EXPECT_EQ(hk::cudaGetLastError(), hk::cudaErrorCooperativeLaunchTooLarge);
  int blocks = -1;
  EXPECT_EQ(hk::cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, &host_gridSum, 256, 0), hk::cudaSuccess);
  EXPECT_EQ(blocks, 1);
  hk::cudaDeviceProp prop{};
  ASSERT_EQ(hk::cudaGetDeviceProperties(&prop, 0), hk::cudaSuccess);
  EXPECT_EQ(prop.cooperativeLaunch, 1);
}

// ---- coalesced groups ----

// __global__ void coalesced(const int* in, int* out) {
//   int v = in[blockIdx.x * blockDim.x + threadIdx.x];
//   int* o = out + 8 * (blockIdx.x * blockDim.x + threadIdx.x);
//   if (v % 3 == 0) {
//     cg::coalesced_group g = cg::coalesced_threads();
//     o[0] = g.size(); o[1] = g.thread_rank(); o[2] = cg::reduce(g, v, cg::plus<int>());
//     o[3] = g.shfl(v, 0); o[4] = g.ballot(v % 2 == 0); o[5] = cg::exclusive_scan(g, 1);
//   } else {
//     cg::coalesced_group g = cg::coalesced_threads();
//     o[0] = -g.size(); o[1] = g.thread_rank(); o[3] = g.shfl_down(v, 1);
//   }
//   cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
//   cg::coalesced_group same = cg::labeled_partition(warp, v % 4);
//   o[6] = same.size() * 100 + same.thread_rank();
//   cg::coalesced_group odd = cg::binary_partition(warp, v % 2);
//   cg::coalesced_group pairs = cg::tiled_partition(odd, 2);
//   o[7] = odd.size() * 10000 + pairs.size() * 100 + pairs.meta_group_rank();
// }
void host_coalesced(const int* in, int* out) {
  const unsigned index = hk::blockIdx().x * hk::blockDim().x + hk::threadIdx().x;
  const int v = in[index];
  int* o = out + 8 * index;
  if (v % 3 == 0) {
    cg::coalesced_group g = cg::coalesced_threads();
    o[0] = static_cast<int>(g.size());
    o[1] = static_cast<int>(g.thread_rank());
    o[2] = cg::reduce(g, v, cg::plus<int>());
    o[3] = g.shfl(v, 0);
    o[4] = static_cast<int>(g.ballot(v % 2 == 0));
    o[5] = cg::exclusive_scan(g, 1);
  } else {
    cg::coalesced_group g = cg::coalesced_threads();
    o[0] = -static_cast<int>(g.size());
    o[1] = static_cast<int>(g.thread_rank());
    o[3] = g.shfl_down(v, 1);
  }
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
  cg::coalesced_group same = cg::labeled_partition(warp, v % 4);
  o[6] = static_cast<int>(same.size() * 100 + same.thread_rank());
  cg::coalesced_group odd = cg::binary_partition(warp, v % 2 != 0);
  cg::coalesced_group pairs = cg::tiled_partition(odd, 2);
  o[7] = static_cast<int>(odd.size() * 10000 + pairs.size() * 100 + pairs.meta_group_rank());
}

TEST(HostCoalescedGroups, EachSideOfABranchIsAGroupOfItsOwnWithRanksCollectivesAndPartitions) {
  const int blocks = 3, threads = 64;
  std::vector<int> in(blocks * threads);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int>((i * 29 + 5) % 41);
  std::vector<int> out(8 * in.size(), -99);
  ASSERT_EQ(hk::launch(blocks, threads, 0, &host_coalesced, in.data(), out.data()), hk::cudaSuccess);
  for (std::size_t warp = 0; warp < in.size() / 32; ++warp) {
    const int* w = &in[warp * 32];
    std::vector<int> taking, others;  // lanes on each side of the branch, in lane order
    for (int lane = 0; lane < 32; ++lane) (w[lane] % 3 == 0 ? taking : others).push_back(lane);
    int sum = 0;
    unsigned even = 0;
    for (std::size_t r = 0; r < taking.size(); ++r) {
      sum += w[taking[r]];
      if (w[taking[r]] % 2 == 0) even |= 1u << r;
    }
    for (int lane = 0; lane < 32; ++lane) {
      const int* o = &out[8 * (warp * 32 + lane)];
      SCOPED_TRACE("warp " + std::to_string(warp) + " lane " + std::to_string(lane));
      const bool took = w[lane] % 3 == 0;
      const std::vector<int>& side = took ? taking : others;
      const int rank = static_cast<int>(std::find(side.begin(), side.end(), lane) - side.begin());
      EXPECT_EQ(o[0], took ? static_cast<int>(taking.size()) : -static_cast<int>(others.size()));
      EXPECT_EQ(o[1], rank);
      if (took) {
        EXPECT_EQ(o[2], sum);
        EXPECT_EQ(o[3], w[taking[0]]);
        EXPECT_EQ(static_cast<unsigned>(o[4]), even);
        EXPECT_EQ(o[5], rank);
      } else {
        EXPECT_EQ(o[3], rank + 1 < static_cast<int>(others.size()) ? w[others[rank + 1]] : w[lane]);
      }
      int sameSize = 0, sameRank = 0, oddSize = 0, oddRank = 0;
      for (int other = 0; other < 32; ++other) {
        if (w[other] % 4 == w[lane] % 4) sameSize += 1, sameRank += other < lane;
        if ((w[other] % 2 != 0) == (w[lane] % 2 != 0)) oddSize += 1, oddRank += other < lane;
      }
      const int pairSize = std::min(2, oddSize - oddRank / 2 * 2);
      EXPECT_EQ(o[6], sameSize * 100 + sameRank);
      EXPECT_EQ(o[7], oddSize * 10000 + pairSize * 100 + oddRank / 2);
    }
  }
}

}  // namespace
