// CUDA's vector types (float3, int2, uint4, double2, ...) and their make_ functions, at global scope as
// vector_types.h / vector_functions.h declare them, for builds without the CUDA toolkit: the
// frontend's parse-only prelude and <dispar/cuda_shim.h> include this header, after declaring the
// global uint3 it builds with make_uint3. With the toolkit its own
// definitions are used and this header adds nothing. Sizes and alignments are CUDA's (VectorTypes.def),
// so a struct holding them has the same layout on the host path as on a GPU.
#ifndef DISPAR_HOSTK_VECTOR_TYPES_H
#define DISPAR_HOSTK_VECTOR_TYPES_H

#if !defined(__CUDACC__) && !defined(__VECTOR_TYPES_H__) && !defined(__CUDA_RUNTIME_H__)

#include <dispar/hostk/Types.h>

#define DISPAR_HOSTK_VECTOR_MEMBERS_1(E) E x;
#define DISPAR_HOSTK_VECTOR_MEMBERS_2(E) E x, y;
#define DISPAR_HOSTK_VECTOR_MEMBERS_3(E) E x, y, z;
#define DISPAR_HOSTK_VECTOR_MEMBERS_4(E) E x, y, z, w;
#define DISPAR_HOSTK_VECTOR_MAKE_1(Name, E)                                                                            \
  inline constexpr Name make_##Name(E x) { return Name{x}; }
#define DISPAR_HOSTK_VECTOR_MAKE_2(Name, E)                                                                            \
  inline constexpr Name make_##Name(E x, E y) { return Name{x, y}; }
#define DISPAR_HOSTK_VECTOR_MAKE_3(Name, E)                                                                            \
  inline constexpr Name make_##Name(E x, E y, E z) { return Name{x, y, z}; }
#define DISPAR_HOSTK_VECTOR_MAKE_4(Name, E)                                                                            \
  inline constexpr Name make_##Name(E x, E y, E z, E w) { return Name{x, y, z, w}; }
#define DISPAR_HOSTK_VECTOR(Name, Element, Count, Alignment)                                                           \
  struct alignas(Alignment) Name {                                                                                     \
    DISPAR_HOSTK_VECTOR_MEMBERS_##Count(Element)                                                                       \
  };                                                                                                                   \
  static_assert(sizeof(Name) == ((Count * sizeof(Element) + Alignment - 1) / Alignment) * Alignment,                   \
                "dispar hostk: " #Name " must have CUDA's size");                                                      \
  DISPAR_HOSTK_VECTOR_MAKE_##Count(Name, Element)
#include <dispar/hostk/VectorTypes.def>

// uint3 is the includer's (the prelude's global struct, or the shim's alias of dispar::hostk::uint3).
inline constexpr uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return uint3{x, y, z}; }

#undef DISPAR_HOSTK_VECTOR_MEMBERS_1
#undef DISPAR_HOSTK_VECTOR_MEMBERS_2
#undef DISPAR_HOSTK_VECTOR_MEMBERS_3
#undef DISPAR_HOSTK_VECTOR_MEMBERS_4
#undef DISPAR_HOSTK_VECTOR_MAKE_1
#undef DISPAR_HOSTK_VECTOR_MAKE_2
#undef DISPAR_HOSTK_VECTOR_MAKE_3
#undef DISPAR_HOSTK_VECTOR_MAKE_4

#endif  // no CUDA toolkit headers

#endif  // DISPAR_HOSTK_VECTOR_TYPES_H
