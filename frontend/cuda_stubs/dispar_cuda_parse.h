// Parse-only CUDA prelude: what the frontend force-includes (-include) when it parses a CUDA program
// without a CUDA toolkit (-nocudainc). Without the toolkit nothing declares the CUDA qualifiers, the
// built-in variables, the launch configuration call behind `<<<>>>`, the device builtins or the runtime
// API, so Clang would reject every CUDA program. This header declares them, from the tables the rest of
// DISPAR already uses, so the frontend classifies and rewrites exactly as it does with a toolkit:
//   - qualifiers are Clang's CUDA attributes, so kernels carry CUDAGlobalAttr, shared arrays
//     CUDASharedAttr, ...;
//   - threadIdx, blockIdx, blockDim, gridDim and warpSize come from Clang's own builtin-variable header;
//   - every Function row of <dispar/hostk/Builtins.def> becomes a global function of that CUDA name (the
//     host-clone rewrite matches builtins by name on a declaration outside the main file);
//   - every row of <dispar/gpu/RuntimeApi.def> becomes a global runtime function (the CG classification
//     matches calls to ::cuda[A-Z]...), with global types whose enumerators take dispar::hostk's values;
//   - the device math library comes from Clang's CUDA math headers, as in Clang's CUDA wrapper;
//   - CUDA's vector types (float3, ...) and cooperative groups come from DISPAR's host-path headers;
//   - cuBLAS and cuFFT come from DISPAR's host stand-ins' global names (<dispar/hostlib/CudaNames.h>);
//   - __nanosleep is declared so that the frontend reports it as unsupported on the host path.
// Nothing here is ever compiled to code: the program itself is built with mpicxx against
// <dispar/cuda_shim.h> and the host clones.
#ifndef DISPAR_CUDA_PARSE_H
#define DISPAR_CUDA_PARSE_H

#if !defined(__clang__) || !defined(__CUDA__)
#error "dispar_cuda_parse.h is the DISPAR frontend's CUDA prelude; it is only meaningful to Clang in CUDA mode"
#endif

// CUDA qualifiers, spelt as Clang's CUDA attributes (what the toolkit's host_defines.h expands them to).
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))

// Device-side overloads of the standard math functions must be declared before <cmath> (as Clang's
// CUDA wrapper does); their definitions follow below, after the builtin variables.
#include <__clang_cuda_math_forward_declares.h>
#include <climits>
#include <cmath>
#include <cstdlib>

// The standard headers the host-kernel headers use, included outside the host+device region below.
#include <cstddef>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

// The host-kernel functions the declarations below are typed after, callable from host and device code
// alike (a builtin's declaration takes what its host-kernel function takes).
#pragma clang force_cuda_host_device begin
#include <dispar/hostk/Atomics.h>
#include <dispar/hostk/CooperativeGroups.h>
#include <dispar/hostk/Kernel.h>
#include <dispar/hostk/Launch.h>
#include <dispar/hostk/Math.h>
#include <dispar/hostk/RuntimeApi.h>
#include <dispar/hostk/Textures.h>
#include <dispar/hostk/Types.h>
#include <dispar/hostk/Warp.h>
#pragma clang force_cuda_host_device end

// The launch shapes. Clang's builtin-variable header declares them as global structs (as the toolkit's
// vector_types.h does), so they are classes here rather than aliases of the dispar::hostk ones.
struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

// float3, int2, uint4, ... and make_float3, ..., global as in vector_types.h and vector_functions.h.
#pragma clang force_cuda_host_device begin
#include <dispar/hostk/VectorTypes.h>
#pragma clang force_cuda_host_device end

// The runtime API's types, global as in the toolkit's driver_types.h. Aliases of the dispar::hostk types
// would not do: argument-dependent lookup would then find dispar::hostk::cudaMemcpy beside ::cudaMemcpy
// and the call would be ambiguous. The enumerators take their values from dispar::hostk.
// clang-format off: X-macro lists, which clang-format does not lay out stably
#define DISPAR_CUDA_PARSE_ERRORS(X)                                                                      \
  X(cudaSuccess) X(cudaErrorInvalidValue) X(cudaErrorMemoryAllocation) X(cudaErrorInvalidConfiguration) \
  X(cudaErrorInvalidDevicePointer) X(cudaErrorInvalidMemcpyDirection) X(cudaErrorInvalidDeviceFunction) \
  X(cudaErrorNoDevice) X(cudaErrorInvalidDevice) X(cudaErrorInvalidResourceHandle) X(cudaErrorNotReady) \
  X(cudaErrorLaunchOutOfResources) X(cudaErrorLaunchFailure) X(cudaErrorCooperativeLaunchTooLarge)              \
  X(cudaErrorLaunchMaxDepthExceeded) X(cudaErrorNotSupported) X(cudaErrorUnknown)
#define DISPAR_CUDA_PARSE_COPY_KINDS(X)                                                     \
  X(cudaMemcpyHostToHost) X(cudaMemcpyHostToDevice) X(cudaMemcpyDeviceToHost) X(cudaMemcpyDeviceToDevice) \
  X(cudaMemcpyDefault)
// clang-format on
#define DISPAR_CUDA_PARSE_ENUMERATOR(name) name = ::dispar::hostk::name,
enum cudaError { DISPAR_CUDA_PARSE_ERRORS(DISPAR_CUDA_PARSE_ENUMERATOR) };
enum cudaMemcpyKind { DISPAR_CUDA_PARSE_COPY_KINDS(DISPAR_CUDA_PARSE_ENUMERATOR) };
#undef DISPAR_CUDA_PARSE_ENUMERATOR
#undef DISPAR_CUDA_PARSE_ERRORS
#undef DISPAR_CUDA_PARSE_COPY_KINDS
using cudaError_t = cudaError;
struct CUstream_st;
struct CUevent_st;
using cudaStream_t = CUstream_st*;
using cudaEvent_t = CUevent_st*;

// threadIdx, blockIdx, blockDim, gridDim (convertible to dim3 and uint3, declared above) and warpSize.
#include <__clang_cuda_builtin_vars.h>

// The device math library (sqrtf, expf, std::sqrt, min, max, ...) as Clang's CUDA wrapper provides it,
// so kernels that call it parse as they do with a toolkit (the host clones call the host library).
// These headers are written for CUDA 9.2 and later; CUDA_VERSION is set for them alone.
#pragma push_macro("CUDA_VERSION")
#undef CUDA_VERSION
#define CUDA_VERSION 9020
// clang-format off: Clang's CUDA wrappers need this order
#include <__clang_cuda_libdevice_declares.h>
#include <__clang_cuda_device_functions.h>
#include <__clang_cuda_math.h>
#include <__clang_cuda_cmath.h>
// clang-format on
#pragma pop_macro("CUDA_VERSION")

#pragma clang force_cuda_host_device begin

// `k<<<grid, block, shared, stream>>>(...)` is, to Clang, a call of the launch configuration function:
// __cudaPushCallConfiguration for CUDA 9.2 and later, cudaConfigureCall before (which one Clang looks
// up depends on the CUDA version it assumes, which without a toolkit it may not know).
extern "C" unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, std::size_t sharedMem = 0,
                                                cudaStream_t stream = 0);
cudaError_t cudaConfigureCall(dim3 gridDim, dim3 blockDim, std::size_t sharedMem = 0, cudaStream_t stream = 0);

// The types of the texture and surface API, global as in CUDA's headers (the same text as dispar::hostk's).
#include <dispar/hostk/TextureTypes.inc>
cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f);
template <class T>
cudaChannelFormatDesc cudaCreateChannelDesc();

// The runtime API, one global declaration per row of RuntimeApi.def. The rows dispatched by hand carry
// no parameter list in the table: they are declared as cuda_runtime_api.h declares them, and the table
// checks that none is missing.
#define DISPAR_GPU_RUNTIME_API(name, parameters, arguments) cudaError_t name parameters;
#include <dispar/gpu/RuntimeApi.def>
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int* device);
struct cudaDeviceProp {
#define DISPAR_HOSTK_DEVICE_PROP(Type, name) Type name;
#define DISPAR_HOSTK_DEVICE_PROP_ARRAY(Type, name, count) Type name[count];
#include <dispar/hostk/DeviceProp.def>
};
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);
cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args, std::size_t sharedMem = 0,
                             cudaStream_t stream = 0);
template <class T>
cudaError_t cudaLaunchKernel(T* func, dim3 gridDim, dim3 blockDim, void** args, std::size_t sharedMem = 0,
                             cudaStream_t stream = 0);
cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                        std::size_t sharedMem = 0, cudaStream_t stream = 0);
template <class T>
cudaError_t cudaLaunchCooperativeKernel(T* func, dim3 gridDim, dim3 blockDim, void** args, std::size_t sharedMem = 0,
                                        cudaStream_t stream = 0);
template <class T>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, T func, int blockSize,
                                                          std::size_t dynamicSMemSize);
// (A using-declaration, which names an overload set too, fails for a name not declared above.)
#define DISPAR_GPU_RUNTIME_SPECIAL(name)                                                                               \
  namespace dispar_cuda_parse_check {                                                                                  \
  using ::name;                                                                                                        \
  }
#include <dispar/gpu/RuntimeApi.def>

// The symbol functions of cuda_runtime.h (global, so that they classify and rewrite as with a toolkit).
template <class T>
cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, std::size_t count, std::size_t offset = 0,
                               cudaMemcpyKind kind = cudaMemcpyHostToDevice);
template <class T>
cudaError_t cudaMemcpyToSymbolAsync(const T& symbol, const void* src, std::size_t count, std::size_t offset = 0,
                                    cudaMemcpyKind kind = cudaMemcpyHostToDevice, cudaStream_t stream = 0);
template <class T>
cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, std::size_t count, std::size_t offset = 0,
                                 cudaMemcpyKind kind = cudaMemcpyDeviceToHost);
template <class T>
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const T& symbol, std::size_t count, std::size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyDeviceToHost, cudaStream_t stream = 0);
template <class T>
cudaError_t cudaGetSymbolAddress(void** devPtr, const T& symbol);
template <class T>
cudaError_t cudaGetSymbolSize(std::size_t* size, const T& symbol);

// The typed allocation overloads of cuda_runtime.h: cudaMalloc(&floatPointer, bytes).
template <class T>
cudaError_t cudaMalloc(T** devPtr, std::size_t size);
template <class T>
cudaError_t cudaMallocHost(T** ptr, std::size_t size);
template <class T>
cudaError_t cudaMallocManaged(T** devPtr, std::size_t size, unsigned flags = 0x01);

// Flags: macros, as in CUDA's driver_types.h.
#include <dispar/hostk/FlagMacros.h>

// The device builtins, one global function per Function row of Builtins.def, taking and returning what
// the host-kernel function it is rewritten into takes and returns. Index and Constant rows (threadIdx,
// warpSize, ...) come from Clang's builtin-variable header above.
#define DISPAR_CUDA_PARSE_BUILTIN_Index(CudaName, HostName)
#define DISPAR_CUDA_PARSE_BUILTIN_Constant(CudaName, HostName)
#define DISPAR_CUDA_PARSE_BUILTIN_Function(CudaName, HostName)                                                         \
  template <class... Args>                                                                                             \
  auto CudaName(Args&&... args) -> decltype(::dispar::hostk::HostName(static_cast<Args&&>(args)...));
#define DISPAR_CUDA_PARSE_BUILTIN_Barrier(CudaName, HostName) DISPAR_CUDA_PARSE_BUILTIN_Function(CudaName, HostName)
#define DISPAR_CUDA_PARSE_BUILTIN_Warp(CudaName, HostName) DISPAR_CUDA_PARSE_BUILTIN_Function(CudaName, HostName)
#define DISPAR_CUDA_PARSE_BUILTIN_Texture(CudaName, HostName)  // declared below, as templates of the texel type
#define DISPAR_HOSTK_BUILTIN(Kind, CudaName, HostName, Summary) DISPAR_CUDA_PARSE_BUILTIN_##Kind(CudaName, HostName)
#include <dispar/hostk/Builtins.def>
#undef DISPAR_CUDA_PARSE_BUILTIN_Index
#undef DISPAR_CUDA_PARSE_BUILTIN_Constant
#undef DISPAR_CUDA_PARSE_BUILTIN_Function
#undef DISPAR_CUDA_PARSE_BUILTIN_Barrier
#undef DISPAR_CUDA_PARSE_BUILTIN_Warp
#undef DISPAR_CUDA_PARSE_BUILTIN_Texture

// cuBLAS and cuFFT (cublas_v2.h, cufft.h, cuComplex.h): the global names of builds without the toolkit,
// one per row of <dispar/hostlib/Cublas.def> and Cufft.def; cuComplex.h's functions host and device.
#include <dispar/hostlib/Complex.h>
#pragma clang force_cuda_host_device end
#include <dispar/hostlib/CudaNames.h>
#pragma clang force_cuda_host_device begin

// Device functions the host path cannot run, declared so that the frontend reports them as unsupported
// on the host path, as it does with a toolkit, rather than as unknown names.
void __nanosleep(unsigned ns);

// Textures and surfaces: the fetches, global templates of the texel type as CUDA's headers declare them
// (the Texture rows of Builtins.def, rewritten like the other builtins), in both forms. The types are
// declared with the runtime API's.
template <class T>
T tex1Dfetch(cudaTextureObject_t texture, int x);
template <class T>
T tex1D(cudaTextureObject_t texture, float x);
template <class T>
T tex2D(cudaTextureObject_t texture, float x, float y);
template <class T>
T tex3D(cudaTextureObject_t texture, float x, float y, float z);
template <class T>
T tex1DLayered(cudaTextureObject_t texture, float x, int layer);
template <class T>
T tex2DLayered(cudaTextureObject_t texture, float x, float y, int layer);
template <class T>
void tex1Dfetch(T* value, cudaTextureObject_t texture, int x);
template <class T>
void tex1D(T* value, cudaTextureObject_t texture, float x);
template <class T>
void tex2D(T* value, cudaTextureObject_t texture, float x, float y);
template <class T>
void tex3D(T* value, cudaTextureObject_t texture, float x, float y, float z);
template <class T>
void tex2DLayered(T* value, cudaTextureObject_t texture, float x, float y, int layer);
#include "dispar_surface_functions.h"

#pragma clang force_cuda_host_device end

// Device printf and assert's failure handler, as Clang's CUDA wrapper declares them (device only:
// stdio.h's and assert.h's are the host's, which a host version calls).
extern "C" __device__ int printf(const char*, ...);
extern "C" __device__ void __assert_fail(const char* assertion, const char* file, unsigned line, const char* function);

#endif  // DISPAR_CUDA_PARSE_H
