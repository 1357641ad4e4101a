// ::dispar::gpu::cublasXxx and ::dispar::gpu::cufftXxx: what StreamCC turns every cuBLAS / cuFFT call of a
// CG VNODE into, in programs compiled with nvcc (generated code includes this header when the program
// calls them). On a GPU rank they call the real library, loaded at the first call (LibraryLoader.h: the
// binary does not link it, so it starts on nodes without CUDA libraries); on the host path they call
// dispar_hostlib's stand-ins. One row of Cublas.def / Cufft.def each.
#ifndef DISPAR_GPU_LIBRARYDISPATCH_H
#define DISPAR_GPU_LIBRARYDISPATCH_H

#include <cublas_v2.h>
#include <cufft.h>
#include <dispar/dispar.h>
#include <dispar/gpu/LibraryLoader.h>
#include <dispar/hostlib/StandIns.h>

#define DISPAR_GPU_LIBRARY_STRINGIFY_(x) #x
#define DISPAR_GPU_LIBRARY_STRINGIFY(x) DISPAR_GPU_LIBRARY_STRINGIFY_(x)

namespace dispar::gpu {

// `name` expands to the library's symbol (cublasSgemm -> cublasSgemm_v2) everywhere but in host_##name.
#define DISPAR_CUBLAS_API(name, family, parameters, arguments)                                                  \
  inline cublasStatus_t name parameters {                                                                        \
    if (::dispar::gpu::onHost())                                                                                 \
      return static_cast<cublasStatus_t>(                                                                        \
          [](auto... a) { return ::dispar::hostlib::host_##name(::dispar::hostlib::pass(a)...); } arguments);    \
    static const auto real = ::dispar::gpu::librarySymbol<decltype(&::name)>(                                    \
        ::dispar::gpu::GpuLibrary::Cublas, DISPAR_GPU_LIBRARY_STRINGIFY(CUBLAS_VER_MAJOR), DISPAR_GPU_LIBRARY_STRINGIFY(name)); \
    return real arguments;                                                                                       \
  }
#include <dispar/hostlib/Cublas.def>

#define DISPAR_CUFFT_API(name, parameters, arguments)                                                            \
  inline cufftResult name parameters {                                                                           \
    if (::dispar::gpu::onHost())                                                                                 \
      return static_cast<cufftResult>(                                                                           \
          [](auto... a) { return ::dispar::hostlib::host_##name(::dispar::hostlib::pass(a)...); } arguments);    \
    static const auto real = ::dispar::gpu::librarySymbol<decltype(&::name)>(                                    \
        ::dispar::gpu::GpuLibrary::Cufft, DISPAR_GPU_LIBRARY_STRINGIFY(CUFFT_VER_MAJOR), DISPAR_GPU_LIBRARY_STRINGIFY(name)); \
    return real arguments;                                                                                       \
  }
#include <dispar/hostlib/Cufft.def>

}  // namespace dispar::gpu

#endif  // DISPAR_GPU_LIBRARYDISPATCH_H
