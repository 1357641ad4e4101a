// What the host path does with kernels that go wrong: a clear message and a dead process, never a hang
// or silent corruption. Death tests re-execute the binary ("threadsafe" style) because the host device
// runs threads of its own.
#undef NDEBUG  // kernels' assert() must fire in every build type
#include <dispar/hostk.h>

#include <gtest/gtest.h>

#include <cassert>
#include <cstdlib>

namespace {

namespace hk = ::dispar::hostk;

class HostFaults : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// __global__ void divergent() { if (threadIdx.x < 16) __syncthreads(); else __syncthreads(); }
void host_divergent() {
  if (::dispar::hostk::threadIdx().x < 16)
    ::dispar::hostk::syncthreads();
  else
    ::dispar::hostk::syncthreads();
}

TEST_F(HostFaults, DivergentBarrierIsReportedNotDeadlocked) {
  EXPECT_DEATH((void)hk::launch(2, 32, 0, &host_divergent),
               "divergent __syncthreads in kernel: in block \\([01],0,0\\) thread \\(0,0,0\\) waits at "
               ".*FaultTests.cpp:[0-9]+.* while thread \\(16,0,0\\) waits at .*FaultTests.cpp:[0-9]+");
}

// __global__ void checked(int* data) { data[threadIdx.x] = 1; __syncthreads(); assert(threadIdx.x != 5); }
void host_checked(int* data) {
  data[::dispar::hostk::threadIdx().x] = 1;
  ::dispar::hostk::syncthreads();
  assert(::dispar::hostk::threadIdx().x != 5);
  ::dispar::hostk::syncthreads();  // the other threads would wait here for thread 5 forever
}

TEST_F(HostFaults, AssertionInOneThreadEndsTheProgram) {
  int data[64] = {};
  EXPECT_DEATH((void)hk::launch(4, 64, 0, &host_checked, data), "Assertion .*threadIdx\\(\\).x != 5");
}

__attribute__((noinline)) int host_recurse(int depth) {
  volatile char frame[512];
  frame[0] = static_cast<char>(depth);
  if (depth == 0) return frame[0];
  return host_recurse(depth - 1) + frame[0];
}
void host_deep(int* out, int depth) { *out = host_recurse(depth); }

TEST_F(HostFaults, StackOverflowHitsTheGuardPageAndSaysSo) {
  int out = 0;
  EXPECT_DEATH((void)hk::launch(1, 4, 0, &host_deep, &out, 100000),
               "fiber stack overflow in kernel at block \\(0,0,0\\) thread \\(0,0,0\\); each CUDA thread has "
               "65536 bytes of stack .*DISPAR_HOST_STACK_BYTES");
}

TEST_F(HostFaults, ModerateRecursionFitsTheDefaultStack) {
  int out = -1;
  ASSERT_EQ(hk::launch(2, 8, 0, &host_deep, &out, 40), hk::cudaSuccess);
  int expected = 0;
  for (int d = 0; d <= 40; ++d) expected += static_cast<char>(d);
  EXPECT_EQ(out, expected);
}

// Lanes 0..15 shuffle with a full mask while lanes 16..31 wait at __syncthreads: on a GPU a hang.
void host_warpDeadlock(int* out) {
  const unsigned t = ::dispar::hostk::threadIdx().x;
  if (t < 16) out[t] = ::dispar::hostk::shflDownSync(0xffffffffu, static_cast<int>(t), 1u);
  ::dispar::hostk::syncthreads();
}

TEST_F(HostFaults, WarpPrimitiveWaitingForLanesAtABarrierIsReportedNotAHang) {
  std::vector<int> out(32, 0);
  EXPECT_DEATH((void)hk::launch(1, 32, 0, &host_warpDeadlock, out.data()),
               "warp-level primitive that cannot complete in kernel: in block \\(0,0,0\\) lanes 0x0000ffff of warp 0 "
               "wait in __shfl_down_sync for lanes 0xffff0000, which wait at __syncthreads");
}

void host_badTile(int* out) {
  const auto group = ::dispar::hostk::cooperative_groups::tiled_partition(
      ::dispar::hostk::cooperative_groups::this_thread_block(), 12);
  *out = static_cast<int>(group.size());
}

TEST_F(HostFaults, RunTimeTileSizesOtherThanPowersOfTwoUpTo32AreReported) {
  int out = 0;
  EXPECT_DEATH((void)hk::launch(1, 32, 0, &host_badTile, &out),
               "tiled_partition\\(parent, 12\\): the host path makes tiles of 1, 2, 4, 8, 16 or 32 threads");
}

void host_hugeShared(int* out) {
  ::dispar::hostk::SharedRef<char[50000]> big = ::dispar::hostk::sharedVariable<char[50000]>([] {});
  big[0] = 1;
  *out = big[0];
}

TEST_F(HostFaults, StaticSharedMemoryBeyondTheLimitIsReported) {
  int out = 0;
  EXPECT_DEATH((void)hk::launch(1, 1, 0, &host_hugeShared, &out), "__shared__ declarations of the kernel need "
                                                                  "more than 49152 bytes");
}

TEST_F(HostFaults, BuiltinsOutsideAKernelAreReported) {
  EXPECT_DEATH((void)hk::threadIdx(), "threadIdx used outside a kernel running on the host path");
  EXPECT_DEATH(hk::syncthreads(), "__syncthreads used outside a kernel");
}

void host_nothing() {}

TEST_F(HostFaults, MalformedThreadCountIsAClearErrorAndExitStatus2) {
  EXPECT_EXIT(
      {
        setenv("DISPAR_HOST_THREADS", "zero", 1);
        (void)hk::launch(1, 1, 0, &host_nothing);
      },
      ::testing::ExitedWithCode(2), "DISPAR_HOST_THREADS='zero' is not a thread count between 1 and 1024");
}

TEST_F(HostFaults, MalformedStackSizeIsAClearErrorAndExitStatus2) {
  EXPECT_EXIT(
      {
        setenv("DISPAR_HOST_STACK_BYTES", "12", 1);
        (void)hk::launch(1, 1, 0, &host_nothing);
      },
      ::testing::ExitedWithCode(2), "DISPAR_HOST_STACK_BYTES='12' is not a stack size between 16K and 1G");
}

}  // namespace
