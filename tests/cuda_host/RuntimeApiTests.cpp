// The CUDA runtime API stand-ins of the host device.
#include <dispar/hostk.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace {

namespace hk = ::dispar::hostk;

TEST(RuntimeApi, MallocMemcpyEveryKindAndFree) {
  const std::size_t n = 1000;
  std::vector<int> host(n), back(n, 0);
  for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<int>(i * 7);
  int* device = nullptr;
  int* other = nullptr;
  ASSERT_EQ(hk::cudaMalloc(&device, n * sizeof(int)), hk::cudaSuccess);
  ASSERT_EQ(hk::cudaMalloc(reinterpret_cast<void**>(&other), n * sizeof(int)), hk::cudaSuccess);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(device) % 256, 0u) << "cudaMalloc aligns to 256 bytes";
  EXPECT_EQ(hk::cudaMemcpy(device, host.data(), n * sizeof(int), hk::cudaMemcpyHostToDevice), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaMemcpy(other, device, n * sizeof(int), hk::cudaMemcpyDeviceToDevice), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaMemcpy(back.data(), other, n * sizeof(int), hk::cudaMemcpyDeviceToHost), hk::cudaSuccess);
  EXPECT_EQ(back, host);
  std::vector<int> viaDefault(n, 0);
  EXPECT_EQ(hk::cudaMemcpy(viaDefault.data(), device, n * sizeof(int), hk::cudaMemcpyDefault), hk::cudaSuccess);
  EXPECT_EQ(viaDefault, host);
  std::vector<int> viaHost(n, 0);
  EXPECT_EQ(hk::cudaMemcpyAsync(viaHost.data(), host.data(), n * sizeof(int), hk::cudaMemcpyHostToHost),
            hk::cudaSuccess);
  EXPECT_EQ(viaHost, host);
  EXPECT_EQ(hk::cudaFree(device), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaFree(other), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaFree(nullptr), hk::cudaSuccess);
}

TEST(RuntimeApi, InvalidCopyDirectionIsReported) {
  (void)hk::cudaGetLastError();
  int a = 1, b = 2;
  EXPECT_EQ(hk::cudaMemcpy(&a, &b, sizeof a, static_cast<hk::cudaMemcpyKind>(7)),
            hk::cudaErrorInvalidMemcpyDirection);
  EXPECT_EQ(a, 1);
  EXPECT_EQ(hk::cudaGetLastError(), hk::cudaErrorInvalidMemcpyDirection);
  EXPECT_STREQ(hk::cudaGetErrorString(hk::cudaErrorInvalidMemcpyDirection), "invalid copy direction for memcpy");
  EXPECT_STREQ(hk::cudaGetErrorName(hk::cudaErrorInvalidConfiguration), "cudaErrorInvalidConfiguration");
  EXPECT_STREQ(hk::cudaGetErrorString(hk::cudaSuccess), "no error");
}

TEST(RuntimeApi, MemsetAndPinnedHostMemory) {
  unsigned char* device = nullptr;
  ASSERT_EQ(hk::cudaMalloc(&device, 64), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaMemset(device, 0xab, 64), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaMemsetAsync(device + 32, 0x01, 16), hk::cudaSuccess);
  float* pinned = nullptr;
  ASSERT_EQ(hk::cudaMallocHost(&pinned, 64), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaMemcpy(pinned, device, 64, hk::cudaMemcpyDeviceToHost), hk::cudaSuccess);
  const auto* bytes = reinterpret_cast<const unsigned char*>(pinned);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(bytes[i], (i >= 32 && i < 48) ? 0x01 : 0xab) << i;
  EXPECT_EQ(hk::cudaFreeHost(pinned), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaFree(device), hk::cudaSuccess);
}

TEST(RuntimeApi, OneHostDevice) {
  int count = -1, device = -1;
  EXPECT_EQ(hk::cudaGetDeviceCount(&count), hk::cudaSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(hk::cudaSetDevice(0), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaGetDevice(&device), hk::cudaSuccess);
  EXPECT_EQ(device, 0);
  EXPECT_EQ(hk::cudaSetDevice(1), hk::cudaErrorInvalidDevice);
  EXPECT_EQ(hk::cudaGetLastError(), hk::cudaErrorInvalidDevice);
  EXPECT_EQ(hk::cudaDeviceSynchronize(), hk::cudaSuccess);
}

TEST(RuntimeApi, StreamsAndEventsMeasureRealTime) {
  hk::cudaStream_t stream = nullptr;
  hk::cudaEvent_t start = nullptr, stop = nullptr;
  ASSERT_EQ(hk::cudaStreamCreate(&stream), hk::cudaSuccess);
  ASSERT_EQ(hk::cudaEventCreate(&start), hk::cudaSuccess);
  ASSERT_EQ(hk::cudaEventCreate(&stop), hk::cudaSuccess);
  float ms = -1.0f;
  EXPECT_EQ(hk::cudaEventElapsedTime(&ms, start, stop), hk::cudaErrorInvalidResourceHandle)
      << "events not yet recorded";
  ASSERT_EQ(hk::cudaEventRecord(start, stream), hk::cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_EQ(hk::cudaEventRecord(stop, stream), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaEventSynchronize(stop), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaStreamSynchronize(stream), hk::cudaSuccess);
  ASSERT_EQ(hk::cudaEventElapsedTime(&ms, start, stop), hk::cudaSuccess);
  EXPECT_GT(ms, 0.0f);
  EXPECT_EQ(hk::cudaEventDestroy(start), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaEventDestroy(stop), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaStreamDestroy(stream), hk::cudaSuccess);
  (void)hk::cudaGetLastError();
}

TEST(RuntimeApi, NullArgumentsAreErrorsNotCrashes) {
  EXPECT_EQ(hk::cudaMalloc(static_cast<void**>(nullptr), 16), hk::cudaErrorInvalidValue);
  EXPECT_EQ(hk::cudaMemset(nullptr, 0, 16), hk::cudaErrorInvalidValue);
  EXPECT_EQ(hk::cudaEventRecord(nullptr), hk::cudaErrorInvalidResourceHandle);
  EXPECT_EQ(hk::cudaGetDeviceCount(nullptr), hk::cudaErrorInvalidValue);
  (void)hk::cudaGetLastError();
}

}  // namespace

namespace symbols {
float scale[4] = {1, 2, 3, 4};  // a __constant__ variable in a build without the toolkit
int counter = 0;                // a __device__ variable
}  // namespace symbols

TEST(RuntimeApi, SymbolRoundTripsWithOffsetsAndTheirErrors) {
  namespace hk = ::dispar::hostk;
  const float values[2] = {10, 20};
  ASSERT_EQ(hk::cudaMemcpyToSymbol(symbols::scale, values, sizeof(values), sizeof(float)), hk::cudaSuccess);
  float back[4] = {};
  ASSERT_EQ(hk::cudaMemcpyFromSymbol(back, symbols::scale, sizeof(back)), hk::cudaSuccess);
  EXPECT_EQ(back[0], 1);
  EXPECT_EQ(back[1], 10);
  EXPECT_EQ(back[2], 20);
  EXPECT_EQ(back[3], 4);
  ASSERT_EQ(hk::cudaMemcpyToSymbolAsync(symbols::counter, values, 0), hk::cudaSuccess);  // nothing to copy

  void* address = nullptr;
  std::size_t size = 0;
  ASSERT_EQ(hk::cudaGetSymbolAddress(&address, symbols::counter), hk::cudaSuccess);
  EXPECT_EQ(address, &symbols::counter);
  ASSERT_EQ(hk::cudaGetSymbolSize(&size, symbols::scale), hk::cudaSuccess);
  EXPECT_EQ(size, sizeof(symbols::scale));

  // Past the end of the variable, the wrong direction, no destination: errors, nothing written.
  EXPECT_EQ(hk::cudaMemcpyToSymbol(symbols::scale, values, sizeof(values), 3 * sizeof(float)), hk::cudaErrorInvalidValue);
  EXPECT_EQ(hk::cudaGetLastError(), hk::cudaErrorInvalidValue);
  EXPECT_EQ(hk::cudaMemcpyToSymbol(symbols::scale, values, sizeof(float), 0, hk::cudaMemcpyDeviceToHost),
            hk::cudaErrorInvalidMemcpyDirection);
  EXPECT_EQ(hk::cudaMemcpyFromSymbol(nullptr, symbols::scale, sizeof(float)), hk::cudaErrorInvalidValue);
  EXPECT_EQ(hk::cudaGetSymbolAddress(nullptr, symbols::scale), hk::cudaErrorInvalidValue);
  ASSERT_EQ(hk::cudaMemcpyFromSymbol(back, symbols::scale, sizeof(back)), hk::cudaSuccess);
  EXPECT_EQ(back[3], 4);
  (void)hk::cudaGetLastError();
}
