// Launch configuration checks, CUDA-style error reporting, argument conversion.
#include "HostKernelTestSupport.h"

#include <dispar/hostk.h>

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace {

namespace hk = ::dispar::hostk;

void host_count(int* counter) { hk::atomicAdd(counter, 1); }

class LaunchErrors : public ::testing::Test {
 protected:
  void SetUp() override { (void)hk::cudaGetLastError(); }
};

TEST_F(LaunchErrors, TooManyThreadsPerBlock) {
  int counter = 0;
  EXPECT_EQ(hk::launch(1, 1025, 0, &host_count, &counter), hk::cudaErrorInvalidConfiguration);
  EXPECT_EQ(hk::launch(1, hk::dim3(32, 32, 2), 0, &host_count, &counter), hk::cudaErrorInvalidConfiguration);
  EXPECT_EQ(counter, 0);
  EXPECT_EQ(hk::cudaPeekAtLastError(), hk::cudaErrorInvalidConfiguration);
  EXPECT_EQ(hk::cudaGetLastError(), hk::cudaErrorInvalidConfiguration);
  EXPECT_EQ(hk::cudaGetLastError(), hk::cudaSuccess) << "cudaGetLastError resets the error";
}

TEST_F(LaunchErrors, BlockDimensionLimits) {
  int counter = 0;
  EXPECT_EQ(hk::launch(1, hk::dim3(1, 1, 65), 0, &host_count, &counter), hk::cudaErrorInvalidConfiguration);
  EXPECT_EQ(hk::launch(1, hk::dim3(1, 1025, 1), 0, &host_count, &counter), hk::cudaErrorInvalidConfiguration);
  EXPECT_EQ(hk::launch(1, hk::dim3(1, 1, 64), 0, &host_count, &counter), hk::cudaSuccess);
  EXPECT_EQ(counter, 64);
}

TEST_F(LaunchErrors, EmptyGridOrBlock) {
  int counter = 0;
  EXPECT_EQ(hk::launch(0, 32, 0, &host_count, &counter), hk::cudaErrorInvalidConfiguration);
  EXPECT_EQ(hk::launch(4, 0, 0, &host_count, &counter), hk::cudaErrorInvalidConfiguration);
  EXPECT_EQ(hk::launch(hk::dim3(2, 0, 1), 1, 0, &host_count, &counter), hk::cudaErrorInvalidConfiguration);
  EXPECT_EQ(hk::launch(-1, 32, 0, &host_count, &counter), hk::cudaErrorInvalidConfiguration)
      << "a negative int converts to a huge grid, as in CUDA";
  EXPECT_EQ(counter, 0);
}

TEST_F(LaunchErrors, GridDimensionLimits) {
  int counter = 0;
  EXPECT_EQ(hk::launch(hk::dim3(1, 65536, 1), 1, 0, &host_count, &counter), hk::cudaErrorInvalidConfiguration);
  EXPECT_EQ(hk::launch(hk::dim3(1, 1, 65536), 1, 0, &host_count, &counter), hk::cudaErrorInvalidConfiguration);
  EXPECT_EQ(counter, 0);
}

TEST_F(LaunchErrors, TooMuchDynamicSharedMemory) {
  int counter = 0;
  EXPECT_EQ(hk::launch(1, 1, 48 * 1024 + 1, &host_count, &counter), hk::cudaErrorInvalidValue);
  EXPECT_EQ(hk::launch(1, 1, 48 * 1024, &host_count, &counter), hk::cudaSuccess);
  EXPECT_EQ(counter, 1);
}

void host_throws(int* counter) {
  if (hk::threadIdx().x == 3 && hk::blockIdx().x == 1) throw std::runtime_error("bad sample");
  hk::syncthreads();
  hk::atomicAdd(counter, 1);
}

TEST_F(LaunchErrors, KernelThatThrowsFailsTheLaunchWithoutHanging) {
  int counter = 0;
  testing::internal::CaptureStderr();
  EXPECT_EQ(hk::launch(3, 8, 0, &host_throws, &counter), hk::cudaErrorLaunchFailure);
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("block (1,0,0) thread (3,0,0): bad sample"), std::string::npos) << log;
  EXPECT_EQ(hk::cudaGetLastError(), hk::cudaErrorLaunchFailure);
  // The host device is still usable, including the fibers that were parked at the barrier.
  EXPECT_EQ(hk::launch(3, 8, 0, &host_count, &counter), hk::cudaSuccess);
  EXPECT_GE(counter, 24);
}

// Dynamic parallelism: each parent thread's child grid runs at once, before the parent thread goes on.
void host_child(int* slots, int parent) {
  hk::atomicAdd(&slots[parent], static_cast<int>(hk::blockIdx().x * hk::blockDim().x + hk::threadIdx().x) + 1);
}
void host_parent(int* slots, int* seen) {
  const int parent = static_cast<int>(hk::blockIdx().x * hk::blockDim().x + hk::threadIdx().x);
  hk::launchFromKernel("host_child", "LaunchTests.cpp", &host_child, 2, 3)(slots, parent);
  seen[parent] = slots[parent];  // the child grid has ended
  hk::syncthreads();
}

TEST_F(LaunchErrors, ALaunchFromAKernelRunsTheChildGridBeforeTheLaunchingThreadGoesOn) {
  ::dispar::testing::registerClone(&host_child);
  std::vector<int> slots(4 * 8, 0), seen(4 * 8, -1);
  ASSERT_EQ(hk::launch(4, 8, 0, &host_parent, slots.data(), seen.data()), hk::cudaSuccess);
  for (int parent = 0; parent < 4 * 8; ++parent) {
    EXPECT_EQ(slots[parent], 1 + 2 + 3 + 4 + 5 + 6) << parent;  // the six child threads, once each
    EXPECT_EQ(seen[parent], slots[parent]) << parent;
  }
}

void host_recurse(int* depth) {
  ++*depth;
  hk::launchFromKernel("host_recurse", "LaunchTests.cpp:recurse", &host_recurse, 1, 1)(depth);
}

TEST_F(LaunchErrors, NestedLaunchesStopAtCudasDepthNamingTheLaunch) {
  ::dispar::testing::registerClone(&host_recurse);
  int depth = 0;
  testing::internal::CaptureStderr();
  EXPECT_EQ(hk::launch(1, 1, 0, &host_recurse, &depth), hk::cudaErrorLaunchFailure);
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(depth, 24);  // the host launch and 23 nested ones
  EXPECT_NE(log.find("the launch of kernel 'host_recurse' at LaunchTests.cpp:recurse (dynamic parallelism) failed: "
                     "launch would exceed maximum depth of nested launches"),
            std::string::npos)
      << log;
  // The host device is still usable.
  int counter = 0;
  EXPECT_EQ(hk::launch(2, 4, 0, &host_count, &counter), hk::cudaSuccess);
  EXPECT_EQ(counter, 8);
}

// Arguments are converted once to the clone's parameter types, as a CUDA launch converts them.
void host_scaled(float* out, float scale, int count, hk::dim3 shape) {
  const unsigned i = hk::threadIdx().x;
  if (static_cast<int>(i) < count)
    out[i] = scale * static_cast<float>(i) + static_cast<float>(shape.x * shape.y * shape.z);
}

TEST(Launch, ConvertsArgumentsToParameterTypes) {
  std::vector<float> out(10, 0.0f);
  const double scale = 0.5;                                                                       // double -> float
  const std::size_t count = 10;                                                                   // size_t -> int
  ASSERT_EQ(hk::launch(1u, 16u, 0, &host_scaled, out.data(), scale, count, 3), hk::cudaSuccess);  // int -> dim3
  for (int i = 0; i < 10; ++i) EXPECT_EQ(out[i], 0.5f * i + 3.0f);
}

TEST(Launch, ManySmallLaunchesInARow) {
  int counter = 0;
  for (int i = 0; i < 200; ++i) ASSERT_EQ(hk::launch(3, 7, 0, &host_count, &counter), hk::cudaSuccess);
  EXPECT_EQ(counter, 200 * 21);
}

void host_noParameters() {}

TEST(Launch, KernelWithoutParameters) { EXPECT_EQ(hk::launch(2, 2, 0, &host_noParameters), hk::cudaSuccess); }

}  // namespace
