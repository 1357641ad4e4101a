// Host stand-ins for the CUDA runtime API. The "host device" is the node's memory and cores: every call is
// synchronous, so streams and events only order host work that is already ordered, and events measure
// real wall-clock time. Names, signatures and error codes follow CUDA so VNODE bodies compile unchanged.
#ifndef DISPAR_HOSTK_RUNTIMEAPI_H
#define DISPAR_HOSTK_RUNTIMEAPI_H

#include <cstddef>

namespace dispar::hostk {

/// CUDA's error codes, with CUDA's values, for the codes the host path can produce.
enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchFailure = 719,
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

// Typed overloads, as cuda_runtime.h provides them (cudaMalloc(&floatPtr, n)).
template <class T>
cudaError_t cudaMalloc(T** devPtr, std::size_t size) {
  return cudaMalloc(reinterpret_cast<void**>(devPtr), size);
}
template <class T>
cudaError_t cudaMallocHost(T** ptr, std::size_t size) {
  return cudaMallocHost(reinterpret_cast<void**>(ptr), size);
}

// Device management: the host path presents exactly one device, number 0.
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaDeviceReset();
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int* device);

// Streams.
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);

// Events: record the host's steady clock.
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t event);

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

}  // namespace dispar::hostk

#endif  // DISPAR_HOSTK_RUNTIMEAPI_H
