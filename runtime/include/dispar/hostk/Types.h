// Index and launch-shape types of the host path: what threadIdx/blockIdx/blockDim/gridDim are.
#ifndef DISPAR_HOSTK_TYPES_H
#define DISPAR_HOSTK_TYPES_H

#include <cstddef>

// With the CUDA toolkit headers present (nvcc, or a host compiler that included cuda_runtime.h), the
// launch helpers also accept CUDA's own ::dim3 / ::uint3.
#if defined(__CUDACC__) || defined(__CUDA_RUNTIME_H__) || defined(__VECTOR_TYPES_H__)
#define DISPAR_HOSTK_HAVE_CUDA_TYPES 1
#include <vector_types.h>
#else
#define DISPAR_HOSTK_HAVE_CUDA_TYPES 0
#endif

namespace dispar::hostk {

/// CUDA's uint3: the type of threadIdx and blockIdx.
struct uint3 {
  unsigned x;
  unsigned y;
  unsigned z;
#if DISPAR_HOSTK_HAVE_CUDA_TYPES
  // `uint3 t = threadIdx;` in a host clone built beside the toolkit's headers.
  constexpr operator ::uint3() const { return ::uint3{x, y, z}; }
#endif
};

/// CUDA's dim3: a launch shape whose omitted dimensions are 1.
struct dim3 {
  unsigned x;
  unsigned y;
  unsigned z;

  // Implicit on purpose: CUDA launches accept plain integers as one-dimensional shapes.
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(const uint3& v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
#if DISPAR_HOSTK_HAVE_CUDA_TYPES
  constexpr dim3(const ::dim3& v) : x(v.x), y(v.y), z(v.z) {}
  constexpr dim3(const ::uint3& v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator ::dim3() const { return ::dim3(x, y, z); }
#endif

  /// Number of elements in the shape, x * y * z.
  constexpr unsigned long long volume() const { return static_cast<unsigned long long>(x) * y * z; }
};

/// CUDA's warp width; the host path has no warps, but kernels size their work by it.
inline constexpr int warpSize = 32;

}  // namespace dispar::hostk

#endif  // DISPAR_HOSTK_TYPES_H
