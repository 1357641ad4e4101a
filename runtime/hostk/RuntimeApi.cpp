// The CUDA runtime API on the host device: memory is host memory, every call is synchronous.
#include <dispar/hostk/RuntimeApi.h>

#include "HostDevice.h"

#include <dispar/hostk/Arch.h>
#include <dispar/hostk/FlagMacros.h>
#include <dispar/hostk/Launch.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace dispar::hostk {

// The macros user code spells and the constants this file checks are one set of values.
static_assert(cudaStreamDefault == kCudaStreamDefault && cudaStreamNonBlocking == kCudaStreamNonBlocking);
static_assert(cudaEventDefault == kCudaEventDefault && cudaEventBlockingSync == kCudaEventBlockingSync &&
              cudaEventDisableTiming == kCudaEventDisableTiming);
static_assert(cudaMemAttachGlobal == kCudaMemAttachGlobal && cudaMemAttachHost == kCudaMemAttachHost);

struct StreamState {};

struct EventState {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
  bool timing = true;  ///< false with cudaEventDisableTiming, as CUDA then refuses elapsed times
};

namespace detail {
namespace {

thread_local cudaError_t lastError = cudaSuccess;

/// cudaMalloc's alignment guarantee.
constexpr std::size_t kDeviceAlignment = 256;

struct ErrorText {
  cudaError_t error;
  const char* name;
  const char* description;
};

// CUDA's wording, so that logs read the same on both paths.
constexpr ErrorText kErrorTexts[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {cudaErrorLaunchMaxDepthExceeded, "cudaErrorLaunchMaxDepthExceeded",
     "launch would exceed maximum depth of nested launches"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorCooperativeLaunchTooLarge, "cudaErrorCooperativeLaunchTooLarge", "too many blocks in cooperative launch"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

const ErrorText* findErrorText(cudaError_t error) {
  for (const ErrorText& text : kErrorTexts)
    if (text.error == error) return &text;
  return nullptr;
}

cudaError_t allocate(void** pointer, std::size_t size) {
  if (pointer == nullptr) return recordError(cudaErrorInvalidValue);
  *pointer = nullptr;
  if (size == 0) return cudaSuccess;  // as CUDA: a null pointer, not an error
  void* memory = ::operator new(size, std::align_val_t{kDeviceAlignment}, std::nothrow);
  if (memory == nullptr) return recordError(cudaErrorMemoryAllocation);
  *pointer = memory;
  return cudaSuccess;
}

void release(void* pointer) {
  if (pointer != nullptr) ::operator delete(pointer, std::align_val_t{kDeviceAlignment});
}

bool validKind(cudaMemcpyKind kind) { return kind >= cudaMemcpyHostToHost && kind <= cudaMemcpyDefault; }

}  // namespace

cudaError_t recordError(cudaError_t error) {
  if (error != cudaSuccess) lastError = error;
  return error;
}

cudaError_t copySymbol(void* symbol, std::size_t symbolBytes, void* other, std::size_t count, std::size_t offset,
                       cudaMemcpyKind kind, bool toSymbol) {
  // CUDA's rule: the symbol's side is the device; the other side may be either.
  const bool direction =
      toSymbol ? (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice || kind == cudaMemcpyDefault)
               : (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice || kind == cudaMemcpyDefault);
  if (!direction) return recordError(cudaErrorInvalidMemcpyDirection);
  if (offset > symbolBytes || count > symbolBytes - offset) return recordError(cudaErrorInvalidValue);
  if (count == 0) return cudaSuccess;
  if (other == nullptr) return recordError(cudaErrorInvalidValue);
  unsigned char* at = static_cast<unsigned char*>(symbol) + offset;
  if (toSymbol)
    std::memmove(at, other, count);
  else
    std::memmove(other, at, count);
  return cudaSuccess;
}

}  // namespace detail

cudaError_t cudaMalloc(void** devPtr, std::size_t size) { return detail::allocate(devPtr, size); }
cudaError_t cudaFree(void* devPtr) {
  detail::release(devPtr);
  return cudaSuccess;
}
cudaError_t cudaMallocHost(void** ptr, std::size_t size) { return detail::allocate(ptr, size); }
cudaError_t cudaFreeHost(void* ptr) {
  detail::release(ptr);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind) {
  if (!detail::validKind(kind)) return detail::recordError(cudaErrorInvalidMemcpyDirection);
  if (count == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) return detail::recordError(cudaErrorInvalidValue);
  std::memmove(dst, src, count);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpy(dst, src, count, kind);
}

cudaError_t cudaMemset(void* devPtr, int value, std::size_t count) {
  if (count == 0) return cudaSuccess;
  if (devPtr == nullptr) return detail::recordError(cudaErrorInvalidValue);
  std::memset(devPtr, value, count);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* devPtr, int value, std::size_t count, cudaStream_t) {
  return cudaMemset(devPtr, value, count);
}

cudaError_t cudaMemcpy2D(void* dst, std::size_t dpitch, const void* src, std::size_t spitch, std::size_t width,
                         std::size_t height, cudaMemcpyKind kind) {
  if (!detail::validKind(kind)) return detail::recordError(cudaErrorInvalidMemcpyDirection);
  if (width == 0 || height == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr || width > dpitch || width > spitch)
    return detail::recordError(cudaErrorInvalidValue);
  for (std::size_t row = 0; row < height; ++row)
    std::memmove(static_cast<char*>(dst) + row * dpitch, static_cast<const char*>(src) + row * spitch, width);
  return cudaSuccess;
}

cudaError_t cudaMallocManaged(void** devPtr, std::size_t size, unsigned flags) {
  if (flags != kCudaMemAttachGlobal && flags != kCudaMemAttachHost) return detail::recordError(cudaErrorInvalidValue);
  return detail::allocate(devPtr, size);
}

cudaError_t cudaMemGetInfo(std::size_t* free, std::size_t* total) {
  if (free == nullptr || total == nullptr) return detail::recordError(cudaErrorInvalidValue);
  const auto pageBytes = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  *free = static_cast<std::size_t>(sysconf(_SC_AVPHYS_PAGES)) * pageBytes;
  *total = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) * pageBytes;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }  // launches and copies are synchronous
cudaError_t cudaDeviceReset() { return cudaSuccess; }

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return detail::recordError(cudaErrorInvalidValue);
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  return device == 0 ? cudaSuccess : detail::recordError(cudaErrorInvalidDevice);
}

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return detail::recordError(cudaErrorInvalidValue);
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (prop == nullptr) return detail::recordError(cudaErrorInvalidValue);
  if (device != 0) return detail::recordError(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "DISPAR host path");
  std::size_t free = 0;
  cudaMemGetInfo(&free, &prop->totalGlobalMem);
  prop->memPitch = prop->totalGlobalMem;
  prop->sharedMemPerBlock = LaunchLimits::kMaxStaticSharedBytes;
  prop->sharedMemPerBlockOptin = LaunchLimits::kMaxDynamicSharedBytes;
  prop->sharedMemPerMultiprocessor = LaunchLimits::kMaxStaticSharedBytes;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = LaunchLimits::kMaxThreadsPerBlock;
  prop->maxThreadsPerMultiProcessor = LaunchLimits::kMaxThreadsPerBlock;
  for (int axis = 0; axis < 3; ++axis) {
    prop->maxThreadsDim[axis] = static_cast<int>(LaunchLimits::kMaxBlockDim[axis]);
    prop->maxGridSize[axis] = static_cast<int>(LaunchLimits::kMaxGridDim[axis]);
  }
  prop->totalConstMem = 64 * 1024;  // CUDA's __constant__ limit, which programs size their tables by
  // 8.0 (Arch.h): the newest compute capability whose device features the host path has in full
  // (__reduce_*_sync are 8.0; 9.0 adds clusters, which it does not run).
  prop->major = kHostCudaArch / 100;
  prop->minor = kHostCudaArch % 100 / 10;
  prop->multiProcessorCount = static_cast<int>(detail::HostDevice::instance().config().threads);
  prop->maxBlocksPerMultiProcessor = 1;
  prop->integrated = 1;  // device memory is the host's
  prop->canMapHostMemory = 1;
  prop->unifiedAddressing = 1;
  prop->managedMemory = 1;
  prop->pageableMemoryAccess = 1;
  prop->concurrentManagedAccess = 1;
  prop->concurrentKernels = 0;  // launches run one at a time
  prop->asyncEngineCount = 0;   // copies are synchronous
  prop->cooperativeLaunch = 1;  // grid_group::sync with cudaLaunchCooperativeKernel
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  prop->l2CacheSize = l2 > 0 ? static_cast<int>(l2) : 0;
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  if (stream == nullptr) return detail::recordError(cudaErrorInvalidValue);
  *stream = new StreamState;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (stream == nullptr) return detail::recordError(cudaErrorInvalidResourceHandle);
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags) {
  if (flags != kCudaStreamDefault && flags != kCudaStreamNonBlocking) return detail::recordError(cudaErrorInvalidValue);
  return cudaStreamCreate(stream);
}

cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }

cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t event, unsigned flags) {
  if (event == nullptr) return detail::recordError(cudaErrorInvalidResourceHandle);
  if (flags != 0) return detail::recordError(cudaErrorInvalidValue);
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags) {
  if ((flags & ~(kCudaEventBlockingSync | kCudaEventDisableTiming)) != 0)
    return detail::recordError(cudaErrorInvalidValue);
  const cudaError_t error = cudaEventCreate(event);
  if (error == cudaSuccess) (*event)->timing = (flags & kCudaEventDisableTiming) == 0;
  return error;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  if (event == nullptr) return detail::recordError(cudaErrorInvalidResourceHandle);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  if (event == nullptr) return detail::recordError(cudaErrorInvalidValue);
  *event = new EventState;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
  if (event == nullptr) return detail::recordError(cudaErrorInvalidResourceHandle);
  event->time = std::chrono::steady_clock::now();
  event->recorded = true;
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (event == nullptr) return detail::recordError(cudaErrorInvalidResourceHandle);
  return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (ms == nullptr) return detail::recordError(cudaErrorInvalidValue);
  if (start == nullptr || end == nullptr) return detail::recordError(cudaErrorInvalidResourceHandle);
  if (!start->recorded || !end->recorded || !start->timing || !end->timing)
    return detail::recordError(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(end->time - start->time).count();
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (event == nullptr) return detail::recordError(cudaErrorInvalidResourceHandle);
  delete event;
  return cudaSuccess;
}

cudaError_t cudaGetLastError() {
  const cudaError_t error = detail::lastError;
  detail::lastError = cudaSuccess;
  return error;
}

cudaError_t cudaPeekAtLastError() { return detail::lastError; }

const char* cudaGetErrorString(cudaError_t error) {
  const detail::ErrorText* text = detail::findErrorText(error);
  return text != nullptr ? text->description : "unrecognized error code";
}

const char* cudaGetErrorName(cudaError_t error) {
  const detail::ErrorText* text = detail::findErrorText(error);
  return text != nullptr ? text->name : "unrecognized error code";
}

}  // namespace dispar::hostk
