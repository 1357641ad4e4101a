// <dispar/cuda_shim.h>: the CUDA runtime names a VNODE body uses, for builds without the CUDA toolkit.
//
// When a CG VNODE is compiled host-only (no nvcc, no cuda_runtime.h), this header makes `dim3`,
// `cudaError_t`, `cudaSuccess`, `cudaMalloc`, `cudaMemcpy`, ... name the dispar::hostk stand-ins at
// global scope and turns the CUDA qualifiers (__global__, __device__, __host__, __forceinline__, ...) into
// what plain C++ understands, so the body compiles with g++ unchanged. Kernel bodies themselves go
// through StreamCC's host clones (see docs/cuda.md); this header does not emulate threadIdx or <<<>>>.
//
// Under nvcc, or after cuda_runtime.h, the real CUDA names exist and this header adds nothing.
#ifndef DISPAR_CUDA_SHIM_H
#define DISPAR_CUDA_SHIM_H

#if !defined(__CUDACC__) && !defined(__CUDA_RUNTIME_H__)

#include <dispar/hostk.h>

// Qualifiers. __restrict__ is already a g++/clang keyword. __noinline__ is left alone: libstdc++ spells
// __attribute__((__noinline__)), which a macro would break.
#ifndef __global__
#define __global__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __host__
#define __host__
#endif
#ifndef __constant__
#define __constant__
#endif
#ifndef __managed__
#define __managed__
#endif
#ifndef __forceinline__
#define __forceinline__ inline __attribute__((always_inline))
#endif
#ifndef __launch_bounds__
#define __launch_bounds__(...)
#endif
#ifndef __align__
#define __align__(n) alignas(n)
#endif
#ifndef __builtin_align__
#define __builtin_align__(n) alignas(n)
#endif

// Types.
using dim3 = ::dispar::hostk::dim3;
using uint3 = ::dispar::hostk::uint3;
using cudaError = ::dispar::hostk::cudaError;
using cudaError_t = ::dispar::hostk::cudaError_t;
using cudaMemcpyKind = ::dispar::hostk::cudaMemcpyKind;
using cudaStream_t = ::dispar::hostk::cudaStream_t;
using cudaEvent_t = ::dispar::hostk::cudaEvent_t;
using cudaDeviceProp = ::dispar::hostk::cudaDeviceProp;

// Flags: macros, as in CUDA's driver_types.h.
#include <dispar/hostk/FlagMacros.h>

// float3, int2, uint4, ... and make_float3, ... as vector_types.h and vector_functions.h have them.
#include <dispar/hostk/VectorTypes.h>

// Error codes and copy kinds.
using ::dispar::hostk::cudaErrorCooperativeLaunchTooLarge;
using ::dispar::hostk::cudaErrorInvalidConfiguration;
using ::dispar::hostk::cudaErrorInvalidDevice;
using ::dispar::hostk::cudaErrorInvalidDeviceFunction;
using ::dispar::hostk::cudaErrorInvalidDevicePointer;
using ::dispar::hostk::cudaErrorInvalidMemcpyDirection;
using ::dispar::hostk::cudaErrorInvalidResourceHandle;
using ::dispar::hostk::cudaErrorInvalidValue;
using ::dispar::hostk::cudaErrorLaunchFailure;
using ::dispar::hostk::cudaErrorLaunchMaxDepthExceeded;
using ::dispar::hostk::cudaErrorLaunchOutOfResources;
using ::dispar::hostk::cudaErrorMemoryAllocation;
using ::dispar::hostk::cudaErrorNoDevice;
using ::dispar::hostk::cudaErrorNotReady;
using ::dispar::hostk::cudaErrorNotSupported;
using ::dispar::hostk::cudaErrorUnknown;
using ::dispar::hostk::cudaMemcpyDefault;
using ::dispar::hostk::cudaMemcpyDeviceToDevice;
using ::dispar::hostk::cudaMemcpyDeviceToHost;
using ::dispar::hostk::cudaMemcpyHostToDevice;
using ::dispar::hostk::cudaMemcpyHostToHost;
using ::dispar::hostk::cudaSuccess;

// Runtime API.
using ::dispar::hostk::cudaDeviceReset;
using ::dispar::hostk::cudaDeviceSynchronize;
using ::dispar::hostk::cudaEventCreate;
using ::dispar::hostk::cudaEventCreateWithFlags;
using ::dispar::hostk::cudaEventDestroy;
using ::dispar::hostk::cudaEventElapsedTime;
using ::dispar::hostk::cudaEventQuery;
using ::dispar::hostk::cudaEventRecord;
using ::dispar::hostk::cudaEventSynchronize;
using ::dispar::hostk::cudaFree;
using ::dispar::hostk::cudaFreeHost;
using ::dispar::hostk::cudaGetDevice;
using ::dispar::hostk::cudaGetDeviceCount;
using ::dispar::hostk::cudaGetDeviceProperties;
using ::dispar::hostk::cudaGetErrorName;
using ::dispar::hostk::cudaGetErrorString;
using ::dispar::hostk::cudaGetLastError;
using ::dispar::hostk::cudaGetSymbolAddress;
using ::dispar::hostk::cudaGetSymbolSize;
using ::dispar::hostk::cudaLaunchCooperativeKernel;
using ::dispar::hostk::cudaLaunchKernel;
using ::dispar::hostk::cudaMalloc;
using ::dispar::hostk::cudaMallocHost;
using ::dispar::hostk::cudaMallocManaged;
using ::dispar::hostk::cudaMemcpy;
using ::dispar::hostk::cudaMemcpy2D;
using ::dispar::hostk::cudaMemcpyAsync;
using ::dispar::hostk::cudaMemcpyFromSymbol;
using ::dispar::hostk::cudaMemcpyFromSymbolAsync;
using ::dispar::hostk::cudaMemcpyToSymbol;
using ::dispar::hostk::cudaMemcpyToSymbolAsync;
using ::dispar::hostk::cudaMemGetInfo;
using ::dispar::hostk::cudaMemset;
using ::dispar::hostk::cudaMemsetAsync;
using ::dispar::hostk::cudaOccupancyMaxActiveBlocksPerMultiprocessor;
using ::dispar::hostk::cudaPeekAtLastError;
using ::dispar::hostk::cudaSetDevice;
using ::dispar::hostk::cudaStreamCreate;
using ::dispar::hostk::cudaStreamCreateWithFlags;
using ::dispar::hostk::cudaStreamDestroy;
using ::dispar::hostk::cudaStreamQuery;
using ::dispar::hostk::cudaStreamSynchronize;
using ::dispar::hostk::cudaStreamWaitEvent;

// Textures and surfaces: the runtime API, and the fetches for device code written outside kernels' clones.
using cudaTextureObject_t = ::dispar::hostk::cudaTextureObject_t;
using cudaSurfaceObject_t = ::dispar::hostk::cudaSurfaceObject_t;
#define DISPAR_HOSTK_TEXTURE_NAME(Name) using ::dispar::hostk::Name;
#include <dispar/hostk/TextureNames.def>
#define DISPAR_HOSTK_BUILTIN_Index(CudaName, HostName)
#define DISPAR_HOSTK_BUILTIN_Constant(CudaName, HostName)
#define DISPAR_HOSTK_BUILTIN_Function(CudaName, HostName)
#define DISPAR_HOSTK_BUILTIN_Barrier(CudaName, HostName)
#define DISPAR_HOSTK_BUILTIN_Warp(CudaName, HostName)
#define DISPAR_HOSTK_BUILTIN_Texture(CudaName, HostName) using ::dispar::hostk::HostName;
#define DISPAR_HOSTK_BUILTIN(Kind, CudaName, HostName, Summary) DISPAR_HOSTK_BUILTIN_##Kind(CudaName, HostName)
#include <dispar/hostk/Builtins.def>
#undef DISPAR_HOSTK_BUILTIN_Index
#undef DISPAR_HOSTK_BUILTIN_Constant
#undef DISPAR_HOSTK_BUILTIN_Function
#undef DISPAR_HOSTK_BUILTIN_Barrier
#undef DISPAR_HOSTK_BUILTIN_Warp
#undef DISPAR_HOSTK_BUILTIN_Texture

#endif  // !__CUDACC__ && !__CUDA_RUNTIME_H__

#endif  // DISPAR_CUDA_SHIM_H
