// Textures and surfaces on the host path: CUDA arrays, texture and surface objects, and the fetches a
// kernel makes through them (tex1Dfetch, tex1D, tex2D, tex3D, tex1DLayered, tex2DLayered; surf1D/2D/3D
// read and write), with CUDA's names, types and answers: point and linear filtering (the weights in 9-bit
// fixed point with 8 fractional bits, as the CUDA Programming Guide's "Texture Fetching" appendix
// documents), normalized coordinates, the wrap, clamp, mirror and border address modes, and
// cudaReadModeNormalizedFloat for 8- and 16-bit integer texels.
//
// A texture or surface object is a handle to the host path's description of it (Textures.cpp); the
// memory it reads is the host's, as every "device" allocation of the host path is.
#ifndef DISPAR_HOSTK_TEXTURES_H
#define DISPAR_HOSTK_TEXTURES_H

#include <dispar/hostk/RuntimeApi.h>
#include <dispar/hostk/Types.h>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace dispar::hostk {

// ---- Types, with CUDA's names, members and values.
#include <dispar/hostk/TextureTypes.inc>

// Array flags (macros in CUDA's headers; constants here, defined as macros by the shim).
constexpr unsigned kCudaArrayDefault = 0x00;
constexpr unsigned kCudaArrayLayered = 0x01;
constexpr unsigned kCudaArraySurfaceLoadStore = 0x02;

// ---- The runtime API.

cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f);

namespace detail {
template <class T, class = void>
struct HasY : std::false_type {};
template <class T>
struct HasY<T, std::void_t<decltype(std::declval<T&>().y)>> : std::true_type {};
template <class T, class = void>
struct HasZ : std::false_type {};
template <class T>
struct HasZ<T, std::void_t<decltype(std::declval<T&>().z)>> : std::true_type {};
template <class T, class = void>
struct HasW : std::false_type {};
template <class T>
struct HasW<T, std::void_t<decltype(std::declval<T&>().w)>> : std::true_type {};

/// The element type and component count of a texel type: a scalar, or one of CUDA's vector types (the
/// toolkit's or the shim's: found by their members x, y, z, w, whichever declares them).
template <class T, bool = std::is_arithmetic_v<T>>
struct TexelType {
  using Element = T;
  static constexpr int kCount = 1;
};
template <class T>
struct TexelType<T, false> {
  using Element = std::remove_reference_t<decltype(std::declval<T&>().x)>;
  static constexpr int kCount = 1 + HasY<T>::value + HasZ<T>::value + HasW<T>::value;
};
}  // namespace detail

/// cudaCreateChannelDesc<T>(): the channels of a texel of type T.
template <class T>
cudaChannelFormatDesc cudaCreateChannelDesc() {
  using Traits = detail::TexelType<T>;
  using E = typename Traits::Element;
  static_assert(std::is_arithmetic_v<E>, "dispar hostk: cudaCreateChannelDesc<T> takes a scalar or a vector type");
  const int bits = static_cast<int>(sizeof(E) * 8);
  const cudaChannelFormatKind kind = std::is_floating_point_v<E> ? cudaChannelFormatKindFloat
                                     : std::is_signed_v<E>       ? cudaChannelFormatKindSigned
                                                                 : cudaChannelFormatKindUnsigned;
  return cudaCreateChannelDesc(bits, Traits::kCount > 1 ? bits : 0, Traits::kCount > 2 ? bits : 0,
                               Traits::kCount > 3 ? bits : 0, kind);
}

cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, std::size_t width,
                            std::size_t height = 0, unsigned flags = 0);
cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent,
                              unsigned flags = 0);
cudaError_t cudaFreeArray(cudaArray_t array);
cudaError_t cudaGetChannelDesc(cudaChannelFormatDesc* desc, cudaArray_const_t array);
cudaError_t cudaMallocPitch(void** devPtr, std::size_t* pitch, std::size_t width, std::size_t height);
/// `wOffset` and `width` in bytes, `hOffset` and `height` in rows (of a 2-D array, or of layer 0).
cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, std::size_t wOffset, std::size_t hOffset, const void* src,
                                std::size_t spitch, std::size_t width, std::size_t height, cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DFromArray(void* dst, std::size_t dpitch, cudaArray_const_t src, std::size_t wOffset,
                                  std::size_t hOffset, std::size_t width, std::size_t height, cudaMemcpyKind kind);
/// Between an array and pitched memory (or two of either); extent in elements for an array, the
/// width in bytes between two pitched pointers.
cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p);
cudaError_t cudaCreateTextureObject(cudaTextureObject_t* texture, const cudaResourceDesc* resource,
                                    const cudaTextureDesc* description, const cudaResourceViewDesc* view);
cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texture);
cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* surface, const cudaResourceDesc* resource);
cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surface);

// ---- Fetches, from kernels.

namespace detail {
/// A texel as a fetch returns it, before conversion to the caller's type: integers exactly, floats,
/// or normalized floats.
struct Texel {
  double v[4];
};
Texel textureFetchLinear(cudaTextureObject_t texture, int x);
Texel textureFetch(cudaTextureObject_t texture, float x, float y, float z, int layer, int dimensions);
/// Surface reads and writes: `x` in bytes, as CUDA takes it; false when out of bounds with
/// cudaBoundaryModeZero (a read then gives zeros, a write does nothing).
void surfaceRead(cudaSurfaceObject_t surface, void* value, std::size_t bytes, int x, int y, int z, int layer,
                 cudaSurfaceBoundaryMode mode);
void surfaceWrite(cudaSurfaceObject_t surface, const void* value, std::size_t bytes, int x, int y, int z, int layer,
                  cudaSurfaceBoundaryMode mode);

template <class T>
T texelAs(const Texel& texel) {
  using Traits = TexelType<T>;
  using E = typename Traits::Element;
  if constexpr (Traits::kCount == 1 && std::is_arithmetic_v<T>) {
    return static_cast<T>(texel.v[0]);
  } else {
    T value{};
    auto* components = reinterpret_cast<E*>(&value);
    for (int c = 0; c < Traits::kCount; ++c) components[c] = static_cast<E>(texel.v[c]);
    return value;
  }
}
}  // namespace detail

template <class T>
T tex1Dfetch(cudaTextureObject_t texture, int x) {
  return detail::texelAs<T>(detail::textureFetchLinear(texture, x));
}
template <class T>
T tex1D(cudaTextureObject_t texture, float x) {
  return detail::texelAs<T>(detail::textureFetch(texture, x, 0, 0, 0, 1));
}
template <class T>
T tex2D(cudaTextureObject_t texture, float x, float y) {
  return detail::texelAs<T>(detail::textureFetch(texture, x, y, 0, 0, 2));
}
template <class T>
T tex3D(cudaTextureObject_t texture, float x, float y, float z) {
  return detail::texelAs<T>(detail::textureFetch(texture, x, y, z, 0, 3));
}
template <class T>
T tex1DLayered(cudaTextureObject_t texture, float x, int layer) {
  return detail::texelAs<T>(detail::textureFetch(texture, x, 0, 0, layer, 1));
}
template <class T>
T tex2DLayered(cudaTextureObject_t texture, float x, float y, int layer) {
  return detail::texelAs<T>(detail::textureFetch(texture, x, y, 0, layer, 2));
}
// The forms that write through a pointer.
template <class T>
void tex1Dfetch(T* value, cudaTextureObject_t texture, int x) {
  *value = tex1Dfetch<T>(texture, x);
}
template <class T>
void tex1D(T* value, cudaTextureObject_t texture, float x) {
  *value = tex1D<T>(texture, x);
}
template <class T>
void tex2D(T* value, cudaTextureObject_t texture, float x, float y) {
  *value = tex2D<T>(texture, x, y);
}
template <class T>
void tex3D(T* value, cudaTextureObject_t texture, float x, float y, float z) {
  *value = tex3D<T>(texture, x, y, z);
}
template <class T>
void tex2DLayered(T* value, cudaTextureObject_t texture, float x, float y, int layer) {
  *value = tex2DLayered<T>(texture, x, y, layer);
}

// The boundary mode is taken as an int: CUDA's enumerators (a toolkit build's host clone passes them) and
// the host path's have the same values.
template <class T>
T surf1Dread(cudaSurfaceObject_t surface, int x, int mode = cudaBoundaryModeTrap) {
  T value{};
  detail::surfaceRead(surface, &value, sizeof(T), x, 0, 0, -1, static_cast<cudaSurfaceBoundaryMode>(mode));
  return value;
}
template <class T>
T surf2Dread(cudaSurfaceObject_t surface, int x, int y, int mode = cudaBoundaryModeTrap) {
  T value{};
  detail::surfaceRead(surface, &value, sizeof(T), x, y, 0, -1, static_cast<cudaSurfaceBoundaryMode>(mode));
  return value;
}
template <class T>
T surf3Dread(cudaSurfaceObject_t surface, int x, int y, int z, int mode = cudaBoundaryModeTrap) {
  T value{};
  detail::surfaceRead(surface, &value, sizeof(T), x, y, z, -1, static_cast<cudaSurfaceBoundaryMode>(mode));
  return value;
}
template <class T>
T surf2DLayeredread(cudaSurfaceObject_t surface, int x, int y, int layer, int mode = cudaBoundaryModeTrap) {
  T value{};
  detail::surfaceRead(surface, &value, sizeof(T), x, y, 0, layer, static_cast<cudaSurfaceBoundaryMode>(mode));
  return value;
}
template <class T>
void surf1Dread(T* value, cudaSurfaceObject_t surface, int x, int mode = cudaBoundaryModeTrap) {
  *value = surf1Dread<T>(surface, x, mode);
}
template <class T>
void surf2Dread(T* value, cudaSurfaceObject_t surface, int x, int y, int mode = cudaBoundaryModeTrap) {
  *value = surf2Dread<T>(surface, x, y, mode);
}
template <class T>
void surf3Dread(T* value, cudaSurfaceObject_t surface, int x, int y, int z, int mode = cudaBoundaryModeTrap) {
  *value = surf3Dread<T>(surface, x, y, z, mode);
}
template <class T>
void surf1Dwrite(T value, cudaSurfaceObject_t surface, int x, int mode = cudaBoundaryModeTrap) {
  detail::surfaceWrite(surface, &value, sizeof(T), x, 0, 0, -1, static_cast<cudaSurfaceBoundaryMode>(mode));
}
template <class T>
void surf2Dwrite(T value, cudaSurfaceObject_t surface, int x, int y, int mode = cudaBoundaryModeTrap) {
  detail::surfaceWrite(surface, &value, sizeof(T), x, y, 0, -1, static_cast<cudaSurfaceBoundaryMode>(mode));
}
template <class T>
void surf3Dwrite(T value, cudaSurfaceObject_t surface, int x, int y, int z, int mode = cudaBoundaryModeTrap) {
  detail::surfaceWrite(surface, &value, sizeof(T), x, y, z, -1, static_cast<cudaSurfaceBoundaryMode>(mode));
}
template <class T>
void surf2DLayeredwrite(T value, cudaSurfaceObject_t surface, int x, int y, int layer,
                        int mode = cudaBoundaryModeTrap) {
  detail::surfaceWrite(surface, &value, sizeof(T), x, y, 0, layer, static_cast<cudaSurfaceBoundaryMode>(mode));
}

}  // namespace dispar::hostk

#endif  // DISPAR_HOSTK_TEXTURES_H
