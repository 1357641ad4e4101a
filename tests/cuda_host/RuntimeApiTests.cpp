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
  EXPECT_EQ(hk::cudaMemcpy(&a, &b, sizeof a, static_cast<hk::cudaMemcpyKind>(7)), hk::cudaErrorInvalidMemcpyDirection);
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

TEST(RuntimeApi, DevicePropertiesAreTheHostPathsLimits) {
  hk::cudaDeviceProp prop;
  std::memset(&prop, 0x5a, sizeof prop);
  ASSERT_EQ(hk::cudaGetDeviceProperties(&prop, 0), hk::cudaSuccess);
  EXPECT_STREQ(prop.name, "DISPAR host path");
  EXPECT_EQ(prop.warpSize, 32);
  EXPECT_EQ(prop.maxThreadsPerBlock, 1024);
  EXPECT_EQ(prop.maxThreadsDim[2], 64);
  EXPECT_EQ(prop.maxGridSize[0], 2147483647);
  EXPECT_EQ(prop.sharedMemPerBlock, 48u * 1024u);
  EXPECT_EQ(prop.major, 8);
  EXPECT_GE(prop.multiProcessorCount, 1);
  EXPECT_GT(prop.totalGlobalMem, 0u);
  std::size_t free = 0, total = 0;
  ASSERT_EQ(hk::cudaMemGetInfo(&free, &total), hk::cudaSuccess);
  EXPECT_EQ(total, prop.totalGlobalMem);
  EXPECT_LE(free, total);
  EXPECT_EQ(hk::cudaGetDeviceProperties(&prop, 1), hk::cudaErrorInvalidDevice);
  EXPECT_EQ(hk::cudaGetLastError(), hk::cudaErrorInvalidDevice);
  EXPECT_EQ(hk::cudaGetDeviceProperties(nullptr, 0), hk::cudaErrorInvalidValue);
  hk::cudaGetLastError();
}

TEST(RuntimeApi, PitchedCopiesManagedMemoryAndStreamFlags) {
  // A 3x4 block of ints out of rows of 6, into rows of 5.
  std::vector<int> source(6 * 3), target(5 * 3, -1);
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<int>(i);
  ASSERT_EQ(hk::cudaMemcpy2D(target.data(), 5 * sizeof(int), source.data(), 6 * sizeof(int), 4 * sizeof(int), 3,
                             hk::cudaMemcpyHostToDevice),
            hk::cudaSuccess);
  for (int row = 0; row < 3; ++row)
    for (int col = 0; col < 5; ++col) EXPECT_EQ(target[row * 5 + col], col < 4 ? row * 6 + col : -1) << row << col;
  EXPECT_EQ(hk::cudaMemcpy2D(target.data(), 2, source.data(), 6, 4, 1, hk::cudaMemcpyHostToDevice),
            hk::cudaErrorInvalidValue);  // wider than the destination's pitch
  hk::cudaGetLastError();

  float* managed = nullptr;
  ASSERT_EQ(hk::cudaMallocManaged(&managed, 16 * sizeof(float)), hk::cudaSuccess);
  managed[15] = 2.5f;  // host code touches managed memory directly
  EXPECT_EQ(hk::cudaFree(managed), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaMallocManaged(&managed, 4, 7u), hk::cudaErrorInvalidValue);
  hk::cudaGetLastError();

  hk::cudaStream_t stream = nullptr;
  hk::cudaEvent_t timed = nullptr, untimed = nullptr;
  ASSERT_EQ(hk::cudaStreamCreateWithFlags(&stream, hk::kCudaStreamNonBlocking), hk::cudaSuccess);
  ASSERT_EQ(hk::cudaEventCreateWithFlags(&untimed, hk::kCudaEventDisableTiming), hk::cudaSuccess);
  ASSERT_EQ(hk::cudaEventCreate(&timed), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaEventRecord(untimed, stream), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaEventRecord(timed, stream), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaStreamWaitEvent(stream, untimed), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaEventQuery(untimed), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaStreamQuery(stream), hk::cudaSuccess);
  float ms = 0;
  EXPECT_EQ(hk::cudaEventElapsedTime(&ms, untimed, timed), hk::cudaErrorInvalidResourceHandle);
  hk::cudaGetLastError();
  EXPECT_EQ(hk::cudaEventCreateWithFlags(&untimed, 0x80u), hk::cudaErrorInvalidValue);
  hk::cudaGetLastError();
  hk::cudaEventDestroy(timed);
  hk::cudaEventDestroy(untimed);
  hk::cudaStreamDestroy(stream);
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
  EXPECT_EQ(hk::cudaMemcpyToSymbol(symbols::scale, values, sizeof(values), 3 * sizeof(float)),
            hk::cudaErrorInvalidValue);
  EXPECT_EQ(hk::cudaGetLastError(), hk::cudaErrorInvalidValue);
  EXPECT_EQ(hk::cudaMemcpyToSymbol(symbols::scale, values, sizeof(float), 0, hk::cudaMemcpyDeviceToHost),
            hk::cudaErrorInvalidMemcpyDirection);
  EXPECT_EQ(hk::cudaMemcpyFromSymbol(nullptr, symbols::scale, sizeof(float)), hk::cudaErrorInvalidValue);
  EXPECT_EQ(hk::cudaGetSymbolAddress(nullptr, symbols::scale), hk::cudaErrorInvalidValue);
  ASSERT_EQ(hk::cudaMemcpyFromSymbol(back, symbols::scale, sizeof(back)), hk::cudaSuccess);
  EXPECT_EQ(back[3], 4);
  (void)hk::cudaGetLastError();
}
