// The host path's builtins under their CUDA names, for CUDA built-ins written inside a macro's
// definition (`#define UMUL(a, b) __umul24(a, b)`). StreamCC rewrites a built-in where it is spelt;
// inside a macro that is in the definition, shared by the kernel (compiled for the GPU) and its host
// clone. So instead the host clone starts with block-scope declarations that make the CUDA names mean
// the host functions there, and only there:
//
//   { using ::dispar::hostk::cuda_names::__umul24; const ::dispar::hostk::uint3& threadIdx = ...; ...
//
// One forwarding function per Function and Warp row of Builtins.def; the barriers keep their call site.
#ifndef DISPAR_HOSTK_CUDA_NAMES_H
#define DISPAR_HOSTK_CUDA_NAMES_H

#include <dispar/hostk/Atomics.h>
#include <dispar/hostk/Kernel.h>
#include <dispar/hostk/Math.h>
#include <dispar/hostk/Textures.h>
#include <dispar/hostk/Warp.h>

#include <utility>

namespace dispar::hostk::cuda_names {

#define DISPAR_HOSTK_CUDA_NAME_Index(CudaName, HostName)
#define DISPAR_HOSTK_CUDA_NAME_Constant(CudaName, HostName) using ::dispar::hostk::HostName;
#define DISPAR_HOSTK_CUDA_NAME_Barrier(CudaName, HostName)
#define DISPAR_HOSTK_CUDA_NAME_Function(CudaName, HostName)                                                            \
  template <class... Args>                                                                                             \
  inline auto CudaName(Args&&... args) -> decltype(::dispar::hostk::HostName(std::forward<Args>(args)...)) {           \
    return ::dispar::hostk::HostName(std::forward<Args>(args)...);                                                     \
  }
#define DISPAR_HOSTK_CUDA_NAME_Warp(CudaName, HostName) DISPAR_HOSTK_CUDA_NAME_Function(CudaName, HostName)
#define DISPAR_HOSTK_CUDA_NAME_Texture(CudaName, HostName) using ::dispar::hostk::HostName;
#define DISPAR_HOSTK_BUILTIN(Kind, CudaName, HostName, Summary) DISPAR_HOSTK_CUDA_NAME_##Kind(CudaName, HostName)
#include <dispar/hostk/Builtins.def>
#undef DISPAR_HOSTK_CUDA_NAME_Index
#undef DISPAR_HOSTK_CUDA_NAME_Constant
#undef DISPAR_HOSTK_CUDA_NAME_Barrier
#undef DISPAR_HOSTK_CUDA_NAME_Function
#undef DISPAR_HOSTK_CUDA_NAME_Warp
#undef DISPAR_HOSTK_CUDA_NAME_Texture

// The Barrier rows: the source position of the call is taken where the macro is used.
inline void __syncthreads(DISPAR_HOSTK_SITE) { ::dispar::hostk::syncthreads(file, line, column); }
inline int __syncthreads_count(int predicate, DISPAR_HOSTK_SITE) {
  return ::dispar::hostk::syncthreadsCount(predicate, file, line, column);
}
inline int __syncthreads_and(int predicate, DISPAR_HOSTK_SITE) {
  return ::dispar::hostk::syncthreadsAnd(predicate, file, line, column);
}
inline int __syncthreads_or(int predicate, DISPAR_HOSTK_SITE) {
  return ::dispar::hostk::syncthreadsOr(predicate, file, line, column);
}

}  // namespace dispar::hostk::cuda_names

#endif  // DISPAR_HOSTK_CUDA_NAMES_H
