// A VNODE body written against the CUDA runtime API compiles with plain g++ through <dispar/cuda_shim.h>
// and runs on the host device. The kernel is the host clone StreamCC would put next to it.
#include <dispar/cuda_shim.h>

#include <gtest/gtest.h>

#include <vector>

namespace {

// __global__ void saxpy(int n, float a, const float* __restrict__ x, float* y) {
//   int i = blockIdx.x * blockDim.x + threadIdx.x;
//   if (i < n) y[i] = a * x[i] + y[i];
// }
__global__ void host_saxpy(int n, float a, const float* __restrict__ x, float* y) {
  int i = ::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__host__ __device__ __forceinline__ int roundUp(int n, int multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

// The body as the programmer wrote it; only the launch line is StreamCC's rewrite.
cudaError_t runSaxpy(int n, float a, std::vector<float>& x, std::vector<float>& y) {
  float* dx = nullptr;
  float* dy = nullptr;
  cudaError_t status = cudaMalloc(&dx, n * sizeof(float));
  if (status != cudaSuccess) return status;
  cudaMalloc((void**)&dy, n * sizeof(float));
  cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  dim3 block(128);
  dim3 grid(roundUp(n, 128) / 128);
  cudaEventRecord(start, stream);
  ::dispar::hostk::launch(grid, block, 0, &host_saxpy, n, a, dx, dy);  // saxpy<<<grid, block, 0, stream>>>(...)
  cudaEventRecord(stop, stream);
  cudaStreamSynchronize(stream);
  status = cudaGetLastError();
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  cudaFree(dx);
  cudaFree(dy);
  cudaDeviceSynchronize();
  return status;
}

TEST(CudaShim, VnodeBodyCompilesAndRunsWithPlainCompiler) {
  const int n = 1000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 1.0f;
  }
  ASSERT_EQ(runSaxpy(n, 2.0f, x, y), cudaSuccess);
  for (int i = 0; i < n; ++i) ASSERT_EQ(y[i], 2.0f * i + 1.0f);
  int devices = 0;
  EXPECT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  EXPECT_EQ(devices, 1);
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
}

}  // namespace
