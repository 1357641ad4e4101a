// ::dispar::gpu::cudaXxx: what StreamCC turns every CUDA runtime call of a CG VNODE into, in programs
// compiled with nvcc. Each calls the real CUDA runtime when this rank runs on a GPU and the
// dispar::hostk stand-in on the host path (hostk's error codes equal CUDA's). On a GPU the rank sees
// exactly one device, number 0: the one the mapping gave it (as the host path does).
#ifndef DISPAR_GPU_RUNTIMEDISPATCH_H
#define DISPAR_GPU_RUNTIMEDISPATCH_H

#include <cuda_runtime.h>
#include <dispar/dispar.h>
#include <dispar/gpu/Errors.h>
#include <dispar/hostk.h>

#include <cstddef>

namespace dispar::gpu {

/// The CUDA ordinal of this rank's GPU (meaningful when !onHost()). Defined in dispar_gpu.
int assignedDevice();

namespace detail {
// Handles and enums, CUDA's to hostk's: same representation, distinct types.
template <class T>
T toHostk(T value) {
  return value;
}
inline hostk::cudaStream_t toHostk(cudaStream_t stream) { return reinterpret_cast<hostk::cudaStream_t>(stream); }
inline hostk::cudaStream_t* toHostk(cudaStream_t* stream) { return reinterpret_cast<hostk::cudaStream_t*>(stream); }
inline hostk::cudaEvent_t toHostk(cudaEvent_t event) { return reinterpret_cast<hostk::cudaEvent_t>(event); }
inline hostk::cudaEvent_t* toHostk(cudaEvent_t* event) { return reinterpret_cast<hostk::cudaEvent_t*>(event); }
inline hostk::cudaMemcpyKind toHostk(cudaMemcpyKind kind) { return static_cast<hostk::cudaMemcpyKind>(kind); }
inline hostk::cudaError_t toHostk(cudaError_t error) { return static_cast<hostk::cudaError_t>(error); }
inline cudaError_t fromHostk(hostk::cudaError_t error) { return static_cast<cudaError_t>(error); }

// Textures and surfaces: CUDA's structs and hostk's have the same members in the same order (hostk's
// TextureTypes.inc copies driver_types.h and texture_types.h); the asserts hold the layouts together.
static_assert(sizeof(cudaChannelFormatDesc) == sizeof(hostk::cudaChannelFormatDesc));
static_assert(sizeof(cudaResourceDesc) == sizeof(hostk::cudaResourceDesc) &&
              offsetof(cudaResourceDesc, flags) == offsetof(hostk::cudaResourceDesc, flags) &&
              offsetof(cudaResourceDesc, res.pitch2D.pitchInBytes) ==
                  offsetof(hostk::cudaResourceDesc, res.pitch2D.pitchInBytes));
static_assert(sizeof(cudaTextureDesc) == sizeof(hostk::cudaTextureDesc) &&
              offsetof(cudaTextureDesc, seamlessCubemap) == offsetof(hostk::cudaTextureDesc, seamlessCubemap));
static_assert(sizeof(cudaMemcpy3DParms) == sizeof(hostk::cudaMemcpy3DParms) &&
              offsetof(cudaMemcpy3DParms, kind) == offsetof(hostk::cudaMemcpy3DParms, kind));
inline hostk::cudaArray_t toHostk(cudaArray_t array) { return reinterpret_cast<hostk::cudaArray_t>(array); }
inline hostk::cudaArray_t* toHostk(cudaArray_t* array) { return reinterpret_cast<hostk::cudaArray_t*>(array); }
inline hostk::cudaArray_const_t toHostk(cudaArray_const_t array) {
  return reinterpret_cast<hostk::cudaArray_const_t>(array);
}
inline hostk::cudaChannelFormatDesc* toHostk(cudaChannelFormatDesc* desc) {
  return reinterpret_cast<hostk::cudaChannelFormatDesc*>(desc);
}
inline const hostk::cudaChannelFormatDesc* toHostk(const cudaChannelFormatDesc* desc) {
  return reinterpret_cast<const hostk::cudaChannelFormatDesc*>(desc);
}
inline hostk::cudaExtent toHostk(cudaExtent extent) { return {extent.width, extent.height, extent.depth}; }
inline const hostk::cudaMemcpy3DParms* toHostk(const cudaMemcpy3DParms* p) {
  return reinterpret_cast<const hostk::cudaMemcpy3DParms*>(p);
}
inline const hostk::cudaResourceDesc* toHostk(const cudaResourceDesc* resource) {
  return reinterpret_cast<const hostk::cudaResourceDesc*>(resource);
}
inline const hostk::cudaTextureDesc* toHostk(const cudaTextureDesc* description) {
  return reinterpret_cast<const hostk::cudaTextureDesc*>(description);
}
inline const hostk::cudaResourceViewDesc* toHostk(const cudaResourceViewDesc* view) {
  return reinterpret_cast<const hostk::cudaResourceViewDesc*>(view);
}
}  // namespace detail

#define DISPAR_GPU_RUNTIME_API(name, parameters, arguments)                                                            \
  inline cudaError_t name parameters {                                                                                 \
    if (::dispar::gpu::onHost())                                                                                       \
      return ::dispar::gpu::detail::fromHostk(                                                                         \
          [](auto... a) { return ::dispar::hostk::name(::dispar::gpu::detail::toHostk(a)...); } arguments);            \
    return ::name arguments;                                                                                           \
  }
#include <dispar/gpu/RuntimeApi.def>

// Typed overloads, as cuda_runtime.h has them (cudaMalloc(&floatPointer, bytes)).
template <class T>
cudaError_t cudaMalloc(T** devPtr, std::size_t size) {
  return cudaMalloc(reinterpret_cast<void**>(devPtr), size);
}
template <class T>
cudaError_t cudaMallocHost(T** ptr, std::size_t size) {
  return cudaMallocHost(reinterpret_cast<void**>(ptr), size);
}
template <class T>
cudaError_t cudaMallocManaged(T** devPtr, std::size_t size, unsigned flags = cudaMemAttachGlobal) {
  return cudaMallocManaged(reinterpret_cast<void**>(devPtr), size, flags);
}

// Symbols. StreamCC passes each __constant__ / __device__ variable together with its host copy
// (`symbol(coeffs, ::dispar_host::coeffs)`): the GPU's on a GPU, the host copy on the host path.
template <class T>
struct Symbol {
  const T& device;
  const T& host;
};
template <class T>
Symbol<T> symbol(const T& device, const T& host) {
  return Symbol<T>{device, host};
}
template <class T>
cudaError_t cudaMemcpyToSymbol(Symbol<T> symbol, const void* src, std::size_t count, std::size_t offset = 0,
                               cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  if (onHost())
    return detail::fromHostk(hostk::cudaMemcpyToSymbol(symbol.host, src, count, offset, detail::toHostk(kind)));
  return ::cudaMemcpyToSymbol(symbol.device, src, count, offset, kind);
}
template <class T>
cudaError_t cudaMemcpyToSymbolAsync(Symbol<T> symbol, const void* src, std::size_t count, std::size_t offset = 0,
                                    cudaMemcpyKind kind = cudaMemcpyHostToDevice, cudaStream_t stream = 0) {
  if (onHost())
    return detail::fromHostk(hostk::cudaMemcpyToSymbolAsync(symbol.host, src, count, offset, detail::toHostk(kind),
                                                            detail::toHostk(stream)));
  return ::cudaMemcpyToSymbolAsync(symbol.device, src, count, offset, kind, stream);
}
template <class T>
cudaError_t cudaMemcpyFromSymbol(void* dst, Symbol<T> symbol, std::size_t count, std::size_t offset = 0,
                                 cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  if (onHost())
    return detail::fromHostk(hostk::cudaMemcpyFromSymbol(dst, symbol.host, count, offset, detail::toHostk(kind)));
  return ::cudaMemcpyFromSymbol(dst, symbol.device, count, offset, kind);
}
template <class T>
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, Symbol<T> symbol, std::size_t count, std::size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyDeviceToHost, cudaStream_t stream = 0) {
  if (onHost())
    return detail::fromHostk(hostk::cudaMemcpyFromSymbolAsync(dst, symbol.host, count, offset, detail::toHostk(kind),
                                                              detail::toHostk(stream)));
  return ::cudaMemcpyFromSymbolAsync(dst, symbol.device, count, offset, kind, stream);
}
template <class T>
cudaError_t cudaGetSymbolAddress(void** devPtr, Symbol<T> symbol) {
  if (onHost()) return detail::fromHostk(hostk::cudaGetSymbolAddress(devPtr, symbol.host));
  return ::cudaGetSymbolAddress(devPtr, symbol.device);
}
template <class T>
cudaError_t cudaGetSymbolSize(std::size_t* size, Symbol<T> symbol) {
  if (onHost()) return detail::fromHostk(hostk::cudaGetSymbolSize(size, symbol.host));
  return ::cudaGetSymbolSize(size, symbol.device);
}

inline cudaError_t cudaGetDeviceCount(int* count) {
  if (onHost()) return detail::fromHostk(hostk::cudaGetDeviceCount(count));
  if (count == nullptr) return cudaErrorInvalidValue;
  *count = 1;
  return cudaSuccess;
}

inline cudaError_t cudaSetDevice(int device) {
  if (onHost()) return detail::fromHostk(hostk::cudaSetDevice(device));
  // Device 0 is this rank's GPU. Any other number goes to CUDA as -1 so that CUDA itself reports (and
  // records as its last error) cudaErrorInvalidDevice.
  return ::cudaSetDevice(device == 0 ? assignedDevice() : -1);
}

inline cudaError_t cudaGetDevice(int* device) {
  if (onHost()) return detail::fromHostk(hostk::cudaGetDevice(device));
  int real = 0;
  const cudaError_t error = ::cudaGetDevice(&real);
  if (error == cudaSuccess && device != nullptr) *device = real == assignedDevice() ? 0 : real;
  return error;
}

// On the host path, the fields of <dispar/hostk/DeviceProp.def> as hostk reports them and 0 elsewhere.
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (!onHost()) return ::cudaGetDeviceProperties(prop, device == 0 ? assignedDevice() : -1);
  hostk::cudaDeviceProp host{};
  const cudaError_t error = detail::fromHostk(hostk::cudaGetDeviceProperties(&host, device));
  if (error != cudaSuccess) return error;
  *prop = cudaDeviceProp{};
#define DISPAR_HOSTK_DEVICE_PROP(Type, name) prop->name = host.name;
#define DISPAR_HOSTK_DEVICE_PROP_ARRAY(Type, name, count)                                                              \
  for (int i = 0; i < (count); ++i) prop->name[i] = host.name[i];
#include <dispar/hostk/DeviceProp.def>
  return cudaSuccess;
}

// The last error: hostk's (the host path, and the dispatchers) first, then CUDA's on a GPU. Both are
// read (and so reset) every time.
inline cudaError_t cudaGetLastError() {
  const cudaError_t host = detail::fromHostk(hostk::cudaGetLastError());
  const cudaError_t device = onHost() ? cudaSuccess : ::cudaGetLastError();
  return host != cudaSuccess ? host : device;
}
inline cudaError_t cudaPeekAtLastError() {
  const cudaError_t host = detail::fromHostk(hostk::cudaPeekAtLastError());
  const cudaError_t device = onHost() ? cudaSuccess : ::cudaPeekAtLastError();
  return host != cudaSuccess ? host : device;
}

inline const char* cudaGetErrorString(cudaError_t error) {
  return onHost() ? hostk::cudaGetErrorString(detail::toHostk(error)) : ::cudaGetErrorString(error);
}
inline const char* cudaGetErrorName(cudaError_t error) {
  return onHost() ? hostk::cudaGetErrorName(detail::toHostk(error)) : ::cudaGetErrorName(error);
}

// A launch written as a call: the kernel's registered clone on the host path (hostk::cudaLaunchKernel).
inline cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                    std::size_t sharedMem = 0, cudaStream_t stream = 0) {
  if (onHost())
    return detail::fromHostk(
        hostk::cudaLaunchKernel(func, gridDim, blockDim, args, sharedMem, detail::toHostk(stream)));
  return ::cudaLaunchKernel(func, gridDim, blockDim, args, sharedMem, stream);
}
template <class... Params>
cudaError_t cudaLaunchKernel(void (*func)(Params...), dim3 gridDim, dim3 blockDim, void** args,
                             std::size_t sharedMem = 0, cudaStream_t stream = 0) {
  return ::dispar::gpu::cudaLaunchKernel(reinterpret_cast<const void*>(func), gridDim, blockDim, args, sharedMem,
                                         stream);
}

// A cooperative launch (grid_group::sync): every block at once, on the host path too.
inline cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                               std::size_t sharedMem = 0, cudaStream_t stream = 0) {
  if (onHost())
    return detail::fromHostk(
        hostk::cudaLaunchCooperativeKernel(func, gridDim, blockDim, args, sharedMem, detail::toHostk(stream)));
  return ::cudaLaunchCooperativeKernel(func, gridDim, blockDim, args, sharedMem, stream);
}
template <class... Params>
cudaError_t cudaLaunchCooperativeKernel(void (*func)(Params...), dim3 gridDim, dim3 blockDim, void** args,
                                        std::size_t sharedMem = 0, cudaStream_t stream = 0) {
  return ::dispar::gpu::cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(func), gridDim, blockDim, args,
                                                    sharedMem, stream);
}
template <class Kernel>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, Kernel func, int blockSize,
                                                          std::size_t dynamicSMemSize) {
  if (onHost())
    return detail::fromHostk(
        hostk::cudaOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, func, blockSize, dynamicSMemSize));
  return ::cudaOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, func, blockSize, dynamicSMemSize);
}

/// Called by generated code after a kernel launch: a failed launch (bad configuration, no kernel
/// image, ...) throws CudaError, which aborts the job naming the VNODE, the kernel and the error.
inline void checkLaunch(const char* kernel, const char* location) {
  // Qualified: ADL would also find CUDA's own functions of these names.
  const cudaError_t error = ::dispar::gpu::cudaGetLastError();
  if (error != cudaSuccess)
    throw CudaError(describeLaunchFailure(kernel, location, ::dispar::gpu::cudaGetErrorString(error)));
}

}  // namespace dispar::gpu

#endif  // DISPAR_GPU_RUNTIMEDISPATCH_H
