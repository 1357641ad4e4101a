// Host stand-ins for the CUDA runtime API. The "host device" is the node's memory and cores: every call is
// synchronous, so streams and events only order host work that is already ordered, and events measure
// real wall-clock time. Names, signatures and error codes follow CUDA so VNODE bodies compile unchanged.
#ifndef DISPAR_HOSTK_RUNTIMEAPI_H
#define DISPAR_HOSTK_RUNTIMEAPI_H

#include <dispar/hostk/Types.h>

#include <cstddef>

namespace dispar::hostk {

/// CUDA's error codes, with CUDA's values, for the codes the host path can produce.
enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorLaunchMaxDepthExceeded = 65,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchFailure = 719,
  cudaErrorCooperativeLaunchTooLarge = 720,
  cudaErrorNotSupported = 801,
  cudaErrorUnknown = 999,
};
using cudaError_t = cudaError;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

struct StreamState;
struct EventState;
using cudaStream_t = StreamState*;
using cudaEvent_t = EventState*;

// Flags, with CUDA's values (macros in CUDA's headers; constants here, defined as macros by the shim).
constexpr unsigned kCudaStreamDefault = 0x00;
constexpr unsigned kCudaStreamNonBlocking = 0x01;
constexpr unsigned kCudaEventDefault = 0x00;
constexpr unsigned kCudaEventBlockingSync = 0x01;
constexpr unsigned kCudaEventDisableTiming = 0x02;
constexpr unsigned kCudaMemAttachGlobal = 0x01;
constexpr unsigned kCudaMemAttachHost = 0x02;

/// What cudaGetDeviceProperties reports: the fields of <dispar/hostk/DeviceProp.def>.
struct cudaDeviceProp {
#define DISPAR_HOSTK_DEVICE_PROP(Type, name) Type name;
#define DISPAR_HOSTK_DEVICE_PROP_ARRAY(Type, name, count) Type name[count];
#include <dispar/hostk/DeviceProp.def>
};

// Memory. Device memory is host memory aligned like cudaMalloc's (256 bytes).
cudaError_t cudaMalloc(void** devPtr, std::size_t size);
cudaError_t cudaFree(void* devPtr);
cudaError_t cudaMallocHost(void** ptr, std::size_t size);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* devPtr, int value, std::size_t count);
cudaError_t cudaMemsetAsync(void* devPtr, int value, std::size_t count, cudaStream_t stream = nullptr);
/// Copies `height` rows of `width` bytes between pitched allocations.
cudaError_t cudaMemcpy2D(void* dst, std::size_t dpitch, const void* src, std::size_t spitch, std::size_t width,
                         std::size_t height, cudaMemcpyKind kind);
/// Managed memory is host memory, which host and kernels share anyway.
cudaError_t cudaMallocManaged(void** devPtr, std::size_t size, unsigned flags = kCudaMemAttachGlobal);
/// The node's available and physical memory.
cudaError_t cudaMemGetInfo(std::size_t* free, std::size_t* total);

// Typed overloads, as cuda_runtime.h provides them (cudaMalloc(&floatPtr, n)).
template <class T>
cudaError_t cudaMalloc(T** devPtr, std::size_t size) {
  return cudaMalloc(reinterpret_cast<void**>(devPtr), size);
}
template <class T>
cudaError_t cudaMallocHost(T** ptr, std::size_t size) {
  return cudaMallocHost(reinterpret_cast<void**>(ptr), size);
}
template <class T>
cudaError_t cudaMallocManaged(T** devPtr, std::size_t size, unsigned flags = kCudaMemAttachGlobal) {
  return cudaMallocManaged(reinterpret_cast<void**>(devPtr), size, flags);
}

// Device management: the host path presents exactly one device, number 0.
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaDeviceReset();
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int* device);
/// The host device as CUDA describes a GPU: its limits are the host path's launch limits, its
/// multiprocessors the OS threads that run blocks (one block each at a time), its memory the node's.
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);

// Streams.
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
/// Always cudaSuccess: the work of a stream is done when the call that queued it returns.
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags = 0);

// Events: record the host's steady clock.
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags);
/// Always cudaSuccess: recording is synchronous (CUDA, too, reports cudaSuccess for an event never recorded).
cudaError_t cudaEventQuery(cudaEvent_t event);

// Errors. The last error is per host thread, as in CUDA; every failing call above records it.
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);

namespace detail {
/// Records `error` as the calling thread's last error (unless it is cudaSuccess) and returns it.
cudaError_t recordError(cudaError_t error);
/// Copies `count` bytes into or out of a symbol of `symbolBytes` bytes at `offset`, checking the range
/// and the direction (`toSymbol`: host or device memory into the symbol).
cudaError_t copySymbol(void* symbol, std::size_t symbolBytes, void* other, std::size_t count, std::size_t offset,
                       cudaMemcpyKind kind, bool toSymbol);
}  // namespace detail

// Symbols: __constant__ and __device__ variables. On the host path a symbol is the variable's host
// copy (StreamCC pairs the two in a GPU build), and these copy in and out of it.
template <class T>
cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, std::size_t count, std::size_t offset = 0,
                               cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  return detail::copySymbol(const_cast<T*>(&symbol), sizeof(T), const_cast<void*>(src), count, offset, kind, true);
}
template <class T>
cudaError_t cudaMemcpyToSymbolAsync(const T& symbol, const void* src, std::size_t count, std::size_t offset = 0,
                                    cudaMemcpyKind kind = cudaMemcpyHostToDevice, cudaStream_t stream = nullptr) {
  (void)stream;  // synchronous, like every host-path copy
  return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}
template <class T>
cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, std::size_t count, std::size_t offset = 0,
                                 cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  return detail::copySymbol(const_cast<T*>(&symbol), sizeof(T), dst, count, offset, kind, false);
}
template <class T>
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const T& symbol, std::size_t count, std::size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyDeviceToHost, cudaStream_t stream = nullptr) {
  (void)stream;
  return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
}
template <class T>
cudaError_t cudaGetSymbolAddress(void** devPtr, const T& symbol) {
  if (devPtr == nullptr) return detail::recordError(cudaErrorInvalidValue);
  *devPtr = const_cast<T*>(&symbol);
  return cudaSuccess;
}
template <class T>
cudaError_t cudaGetSymbolSize(std::size_t* size, const T& symbol) {
  if (size == nullptr) return detail::recordError(cudaErrorInvalidValue);
  *size = sizeof(symbol);
  return cudaSuccess;
}

// Launches written as calls (CUDA's cudaLaunchKernel): the kernel named by its address (the original's
// or its clone's) runs its registered clone (Launch.h: StreamCC registers every kernel that is not a
// template), its arguments read as CUDA reads them, `args[i]` pointing to a value of parameter i's type.
// cudaErrorInvalidDeviceFunction for a kernel not registered (a template's specialization).
cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args, std::size_t sharedMem = 0,
                             cudaStream_t stream = nullptr);
template <class... Params>
cudaError_t cudaLaunchKernel(void (*func)(Params...), dim3 gridDim, dim3 blockDim, void** args,
                             std::size_t sharedMem = 0, cudaStream_t stream = nullptr) {
  return cudaLaunchKernel(reinterpret_cast<const void*>(func), gridDim, blockDim, args, sharedMem, stream);
}

// Cooperative launches (grid_group::sync, CooperativeGroups.h): every block of the grid runs at once, so
// a grid-wide barrier can open. The host path runs up to kMaxCooperativeBlocks blocks at once (an OS
// thread each), more than the occupancy below promises: a grid sized for a GPU runs here too.
// cudaErrorCooperativeLaunchTooLarge beyond that.
constexpr unsigned kMaxCooperativeBlocks = 1024;
cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                        std::size_t sharedMem = 0, cudaStream_t stream = nullptr);
template <class... Params>
cudaError_t cudaLaunchCooperativeKernel(void (*func)(Params...), dim3 gridDim, dim3 blockDim, void** args,
                                        std::size_t sharedMem = 0, cudaStream_t stream = nullptr) {
  return cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(func), gridDim, blockDim, args, sharedMem, stream);
}
/// Blocks of `blockSize` threads that one "multiprocessor" runs at once: one (a host thread runs one block
/// at a time; cudaDeviceProp::multiProcessorCount is the host threads), none when the block cannot run.
cudaError_t occupancyMaxActiveBlocks(int* numBlocks, int blockSize, std::size_t dynamicSMemSize);
template <class Kernel>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, Kernel /*func: any kernel*/, int blockSize,
                                                          std::size_t dynamicSMemSize) {
  return occupancyMaxActiveBlocks(numBlocks, blockSize, dynamicSMemSize);
}

}  // namespace dispar::hostk

#endif  // DISPAR_HOSTK_RUNTIMEAPI_H
