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

// One dispatcher: the stand-in on the host path, else the real function, loaded at the first call.
// `name` arrives expanded to the library's symbol (cublasSgemm -> cublasSgemm_v2), `standIn` pasted from
// the written name by the row macros below.
#define DISPAR_GPU_LIBRARY_DISPATCHER(Result, library, major, name, standIn, parameters, arguments)                    \
  inline Result name parameters {                                                                                      \
    if (::dispar::gpu::onHost()) return static_cast<Result>(DISPAR_HOSTLIB_FORWARD(standIn, arguments));               \
    static const auto real = ::dispar::gpu::librarySymbol<decltype(&::name)>(                                          \
        ::dispar::gpu::GpuLibrary::library, DISPAR_GPU_LIBRARY_STRINGIFY(major), DISPAR_GPU_LIBRARY_STRINGIFY(name));  \
    return real arguments;                                                                                             \
  }
#define DISPAR_CUBLAS_API(name, family, parameters, arguments)                                                         \
  DISPAR_GPU_LIBRARY_DISPATCHER(cublasStatus_t, Cublas, CUBLAS_VER_MAJOR, name, host_##name, parameters, arguments)
#include <dispar/hostlib/Cublas.def>
#define DISPAR_CUFFT_API(name, parameters, arguments)                                                                  \
  DISPAR_GPU_LIBRARY_DISPATCHER(cufftResult, Cufft, CUFFT_VER_MAJOR, name, host_##name, parameters, arguments)
#include <dispar/hostlib/Cufft.def>
#undef DISPAR_GPU_LIBRARY_DISPATCHER

}  // namespace dispar::gpu

#endif  // DISPAR_GPU_LIBRARYDISPATCH_H
