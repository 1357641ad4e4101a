// The host stand-ins for cuBLAS and cuFFT (library dispar_hostlib): what a CG rank calls on the host
// path. One function per row of Cublas.def and Cufft.def, named host_<CUDA name> (a prefix, not the CUDA
// name itself: cublas_v2.h makes many CUDA names macros, which would rename these declarations in a
// file that includes it). Semantics are the libraries': column-major BLAS, handles, pointer modes,
// status codes; unnormalised FFTs with cuFFT's layouts. Streams are accepted and kept; every call has
// finished when it returns, so the stream order holds. See docs/libraries.md.
#ifndef DISPAR_HOSTLIB_STANDINS_H
#define DISPAR_HOSTLIB_STANDINS_H

#include <dispar/hostlib/Types.h>

#include <cstddef>
#include <type_traits>

namespace dispar::hostlib {

#define DISPAR_CUBLAS_API(name, family, parameters, arguments) cublasStatus_t host_##name parameters;
#include <dispar/hostlib/Cublas.def>
#define DISPAR_CUFFT_API(name, parameters, arguments) cufftResult host_##name parameters;
#include <dispar/hostlib/Cufft.def>

/// An argument on its way from a caller's CUDA type to the stand-in's type of the same table row. The
/// row fixes both parameter lists, so only representations differ: handles and streams (pointers),
/// enums (CUDA's values), complex numbers (float2 / double2 layouts, checked in the library).
template <class T>
struct Passed {
  T value;
  template <class U>
  operator U() const {
    if constexpr (std::is_pointer_v<U> && std::is_pointer_v<T>)
      return reinterpret_cast<U>(value);
    else if constexpr (std::is_pointer_v<U> && std::is_null_pointer_v<T>)
      return nullptr;
    else
      return static_cast<U>(value);
  }
};
template <class T>
Passed<T> pass(T value) {
  return Passed<T>{value};
}

}  // namespace dispar::hostlib

// Calls the stand-in `standIn` (host_<CUDA name>) with a table row's parenthesised `arguments`, each
// passed on to the stand-in's type. Callers paste the stand-in's name where the row's name is still as
// written (host_##name): cublas_v2.h's macros would rename it one macro level further.
#define DISPAR_HOSTLIB_FORWARD(standIn, arguments)                                                                     \
  [](auto... a) { return ::dispar::hostlib::standIn(::dispar::hostlib::pass(a)...); } arguments

#endif  // DISPAR_HOSTLIB_STANDINS_H
