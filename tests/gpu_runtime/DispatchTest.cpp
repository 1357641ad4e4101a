// The ::dispar::gpu dispatchers on the host path (no device active, as on a rank without a GPU):
// they reach the hostk stand-ins with CUDA's types, and the last error and checkLaunch see hostk's
// errors. Compiled against the real cuda_runtime.h; needs no GPU and no driver.
#include <cuda_runtime.h>  // first: as in an nvcc build, <dispar/gpu.h> then provides the dispatchers
#include <dispar/gpu.h>
#include <gtest/gtest.h>

#include <vector>

namespace {

namespace gpu = dispar::gpu;

TEST(Dispatch, OutsideADeviceRunsOnTheHost) { EXPECT_TRUE(gpu::onHost()); }

TEST(Dispatch, MemoryStreamsAndEventsReachTheStandIns) {
  float* device = nullptr;
  ASSERT_EQ(gpu::cudaMalloc(&device, 4 * sizeof(float)), cudaSuccess);
  const std::vector<float> in{1, 2, 3, 4};
  cudaStream_t stream = nullptr;
  ASSERT_EQ(gpu::cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(gpu::cudaMemcpyAsync(device, in.data(), 4 * sizeof(float), cudaMemcpyHostToDevice, stream), cudaSuccess);
  cudaEvent_t done = nullptr;
  ASSERT_EQ(gpu::cudaEventCreate(&done), cudaSuccess);
  ASSERT_EQ(gpu::cudaEventRecord(done, stream), cudaSuccess);
  ASSERT_EQ(gpu::cudaEventSynchronize(done), cudaSuccess);
  std::vector<float> out(4);
  ASSERT_EQ(gpu::cudaMemcpy(out.data(), device, 4 * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(out, in);
  EXPECT_EQ(gpu::cudaEventDestroy(done), cudaSuccess);
  EXPECT_EQ(gpu::cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(gpu::cudaFree(device), cudaSuccess);
  int count = 0;
  EXPECT_EQ(gpu::cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(gpu::cudaSetDevice(0), cudaSuccess);
}

TEST(Dispatch, LastErrorIsHostksOnTheHostPath) {
  int value = 0;
  EXPECT_EQ(gpu::cudaMemcpy(&value, &value, sizeof value, static_cast<cudaMemcpyKind>(42)),
            cudaErrorInvalidMemcpyDirection);
  EXPECT_EQ(gpu::cudaPeekAtLastError(), cudaErrorInvalidMemcpyDirection);
  EXPECT_EQ(gpu::cudaGetLastError(), cudaErrorInvalidMemcpyDirection);
  EXPECT_EQ(gpu::cudaGetLastError(), cudaSuccess);
  EXPECT_STRNE(gpu::cudaGetErrorString(cudaErrorInvalidMemcpyDirection), "");
}

TEST(Dispatch, CheckLaunchThrowsNamingKernelAndLocation) {
  EXPECT_NO_THROW(gpu::checkLaunch("scale", "fir.dsp:20:5"));
  EXPECT_EQ(gpu::cudaSetDevice(3), cudaErrorInvalidDevice);  // leaves a last error
  try {
    gpu::checkLaunch("scale", "fir.dsp:20:5");
    FAIL() << "no error";
  } catch (const gpu::CudaError& error) {
    EXPECT_EQ(std::string(error.what()), std::string("kernel 'scale' launched at fir.dsp:20:5 failed: ") +
                                             dispar::hostk::cudaGetErrorString(dispar::hostk::cudaErrorInvalidDevice));
  }
  EXPECT_EQ(gpu::cudaGetLastError(), cudaSuccess);
}

}  // namespace
