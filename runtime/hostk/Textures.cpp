// CUDA arrays, texture and surface objects, and their fetches on the host path (Textures.h).
#include <dispar/hostk/Textures.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace dispar::hostk {

/// A CUDA array: texels row after row, slice after slice (a layered array's layers are its slices).
struct cudaArray {
  cudaChannelFormatDesc desc;
  std::size_t width, height, depth;  ///< as allocated: height 0 for 1-D, depth 0 for 1-D and 2-D
  unsigned flags;
  std::size_t elementBytes;
  std::vector<unsigned char> data;

  std::size_t rowBytes() const { return width * elementBytes; }
  std::size_t rows() const { return std::max<std::size_t>(height, 1); }
  std::size_t slices() const { return std::max<std::size_t>(depth, 1); }
};

namespace {

constexpr std::uint32_t kTextureMagic = 0x54455854;  // "TEXT"
constexpr std::uint32_t kSurfaceMagic = 0x53555246;  // "SURF"

/// What a texture or surface object reads: where its texels are and how they are laid out, and (for a
/// texture) how it samples them.
struct ObjectState {
  std::uint32_t magic;
  unsigned char* base;
  cudaChannelFormatDesc format;
  std::size_t elementBytes;
  int components;              ///< components per texel (1 to 4)
  int bits[4];                 ///< of each component
  std::size_t componentAt[4];  ///< byte offset of each component in the texel
  std::size_t extent[3];       ///< texels along x, y, z (1 where the resource has no such dimension)
  std::size_t layers;          ///< of a layered array; 0 otherwise
  std::size_t rowPitch;        ///< bytes from one row to the next
  std::size_t slicePitch;      ///< bytes from one slice (or layer) to the next
  bool linear;                 ///< a cudaResourceTypeLinear resource: tex1Dfetch only
  cudaTextureDesc sampling;
};

std::size_t channelBits(const cudaChannelFormatDesc& d) { return std::size_t(d.x) + d.y + d.z + d.w; }

bool validChannels(const cudaChannelFormatDesc& d) {
  if (d.f != cudaChannelFormatKindSigned && d.f != cudaChannelFormatKindUnsigned && d.f != cudaChannelFormatKindFloat)
    return false;
  const int bits[4] = {d.x, d.y, d.z, d.w};
  for (int c = 0; c < 4; ++c) {
    if (bits[c] != 0 && bits[c] != 8 && bits[c] != 16 && bits[c] != 32) return false;
    if (c > 0 && bits[c] != 0 && bits[c - 1] == 0) return false;                           // components come in order
    if (d.f == cudaChannelFormatKindFloat && bits[c] != 0 && bits[c] != 32) return false;  // no half texels
  }
  return d.x != 0;
}

ObjectState& objectOf(unsigned long long handle, std::uint32_t magic, const char* what) {
  auto* state = reinterpret_cast<ObjectState*>(static_cast<std::uintptr_t>(handle));
  if (state == nullptr || state->magic != magic)
    throw std::runtime_error(std::string(what) + ": not a live object (0x" + std::to_string(handle) + ")");
  return *state;
}

/// The texel format of `o`, with its layout worked out once (a fetch reads it for every texel).
void setFormat(ObjectState& o, const cudaChannelFormatDesc& format) {
  o.format = format;
  const int bits[4] = {format.x, format.y, format.z, format.w};
  o.components = 0;
  std::size_t offset = 0;
  for (int c = 0; c < 4; ++c) {
    o.bits[c] = bits[c];
    o.componentAt[c] = offset;
    offset += std::size_t(bits[c]) / 8;
    o.components += bits[c] != 0;
  }
  o.elementBytes = offset;
}

/// The value of type `T` at `p`, which may be unaligned.
template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

/// An integer component of `bits` bits at `p`, read as `I8`, `I16` or `I32` (signed or not).
template <class I8, class I16, class I32>
double integerComponent(const unsigned char* p, int bits) {
  if (bits == 8) return load<I8>(p);
  if (bits == 16) return load<I16>(p);
  return load<I32>(p);
}

/// Component `c` of the texel at `p`, as an exact value: integers as they are, floats as floats.
double component(const ObjectState& o, const unsigned char* p, int c) {
  p += o.componentAt[c];
  switch (o.format.f) {
    case cudaChannelFormatKindFloat: return load<float>(p);
    case cudaChannelFormatKindSigned: return integerComponent<std::int8_t, std::int16_t, std::int32_t>(p, o.bits[c]);
    default: return integerComponent<std::uint8_t, std::uint16_t, std::uint32_t>(p, o.bits[c]);
  }
}

/// The texel's components as the read mode returns them: cudaReadModeNormalizedFloat maps 8- and 16-bit
/// integers onto [0, 1] (unsigned) or [-1, 1] (signed), as CUDA does.
detail::Texel readTexel(const ObjectState& o, const unsigned char* p) {
  detail::Texel t{{0, 0, 0, 0}};
  const int* bits = o.bits;
  const bool normalize = o.sampling.readMode == cudaReadModeNormalizedFloat && o.format.f != cudaChannelFormatKindFloat;
  for (int c = 0; c < o.components; ++c) {
    double v = component(o, p, c);
    if (normalize && bits[c] < 32) {
      if (o.format.f == cudaChannelFormatKindUnsigned)
        v = float(v) / float((1u << bits[c]) - 1u);
      else
        v = std::max(float(v) / float((1u << (bits[c] - 1)) - 1u), -1.0f);
    }
    t.v[c] = v;
  }
  return t;
}

/// An integer texel index along a dimension of `n` texels, by the address mode; false for a texel
/// outside the texture with cudaAddressModeBorder.
bool address(long long& i, long long n, cudaTextureAddressMode mode, bool normalized) {
  // Wrap and mirror need normalized coordinates; otherwise CUDA clamps.
  if (!normalized && (mode == cudaAddressModeWrap || mode == cudaAddressModeMirror)) mode = cudaAddressModeClamp;
  switch (mode) {
    case cudaAddressModeWrap: i = ((i % n) + n) % n; return true;
    case cudaAddressModeMirror: {
      const long long m = ((i % (2 * n)) + 2 * n) % (2 * n);
      i = m < n ? m : 2 * n - 1 - m;
      return true;
    }
    case cudaAddressModeBorder: return i >= 0 && i < n;
    default: i = std::clamp<long long>(i, 0, n - 1); return true;
  }
}

detail::Texel borderTexel(const ObjectState& o) {
  detail::Texel t{};
  for (int c = 0; c < 4; ++c) t.v[c] = o.sampling.borderColor[c];
  return t;
}

/// The texel at integer indices (already addressed) of layer `layer`.
detail::Texel texelAt(const ObjectState& o, const long long (&i)[3], std::size_t layer) {
  const unsigned char* p = o.base + (o.layers > 0 ? layer : std::size_t(i[2])) * o.slicePitch +
                           std::size_t(i[1]) * o.rowPitch + std::size_t(i[0]) * o.elementBytes;
  return readTexel(o, p);
}

/// A linear filter's per-axis fraction in 9-bit fixed point with 8 fractional bits, rounded to nearest
/// (CUDA Programming Guide, "Linear Filtering"), in 256ths.
int filterFraction(float fraction) { return static_cast<int>(std::lround(fraction * 256.0f)); }

/// Each corner's weight, in 256ths, of linear filtering over `dimensions` axes whose fractions (in 256ths)
/// are `fraction`; corner c is upper along axis d when bit d of c is set. The weights are split off one
/// axis at a time, each part rounded to 256ths, as an NVIDIA H200 computes them: first along z (exact),
/// then along x within each z slice (ties up), then along y within each x part (ties up above x's lower
/// texel, down below it). Every bilinear weight at all 65536 fraction pairs, and the trilinear ones at
/// 65536 random fraction triples, probed on the GPU, are exactly these; rounding each corner's product
/// of fractions alone was off by one 256th at 1.6% (bilinear) and 60% (trilinear) of them.
void cornerWeights(const int (&fraction)[3], int dimensions, int (&weight)[8]) {
  auto upperPart = [](int total, int f, bool tiesUp) { return (total * f + (tiesUp ? 128 : 127)) >> 8; };
  const int slices = dimensions == 3 ? 2 : 1;
  for (int z = 0; z < slices; ++z) {
    const int slice = dimensions == 3 ? (z ? fraction[2] : 256 - fraction[2]) : 256;
    const int xUpper = upperPart(slice, fraction[0], true);
    const int xPart[2] = {slice - xUpper, xUpper};
    for (int x = 0; x < 2; ++x) {
      if (dimensions == 1) {
        weight[x] = xPart[x];
        continue;
      }
      const int yUpper = upperPart(xPart[x], fraction[1], x == 1);
      weight[z * 4 + x] = xPart[x] - yUpper;
      weight[z * 4 + 2 + x] = yUpper;
    }
  }
}

}  // namespace

cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f) {
  return cudaChannelFormatDesc{x, y, z, w, f};
}

namespace {

cudaError_t allocateArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, std::size_t width, std::size_t height,
                          std::size_t depth, unsigned flags) {
  if (array == nullptr || desc == nullptr || !validChannels(*desc) || width == 0)
    return detail::recordError(cudaErrorInvalidValue);
  if ((flags & ~(kCudaArrayLayered | kCudaArraySurfaceLoadStore)) != 0)
    return detail::recordError(cudaErrorInvalidValue);
  if ((flags & kCudaArrayLayered) && depth == 0) return detail::recordError(cudaErrorInvalidValue);
  auto* state = new (std::nothrow) cudaArray{*desc, width, height, depth, flags, channelBits(*desc) / 8, {}};
  if (state == nullptr) return detail::recordError(cudaErrorMemoryAllocation);
  try {
    state->data.assign(state->rowBytes() * state->rows() * state->slices(), 0);
  } catch (const std::bad_alloc&) {
    delete state;
    return detail::recordError(cudaErrorMemoryAllocation);
  }
  *array = state;
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, std::size_t width,
                            std::size_t height, unsigned flags) {
  if (flags & kCudaArrayLayered) return detail::recordError(cudaErrorInvalidValue);  // layered: cudaMalloc3DArray
  return allocateArray(array, desc, width, height, 0, flags);
}

cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent,
                              unsigned flags) {
  return allocateArray(array, desc, extent.width, extent.height, extent.depth, flags);
}

cudaError_t cudaFreeArray(cudaArray_t array) {
  delete array;  // freeing null is fine, as in CUDA
  return cudaSuccess;
}

cudaError_t cudaGetChannelDesc(cudaChannelFormatDesc* desc, cudaArray_const_t array) {
  if (desc == nullptr || array == nullptr) return detail::recordError(cudaErrorInvalidValue);
  *desc = array->desc;
  return cudaSuccess;
}

cudaError_t cudaMallocPitch(void** devPtr, std::size_t* pitch, std::size_t width, std::size_t height) {
  if (pitch == nullptr) return detail::recordError(cudaErrorInvalidValue);
  // Rows start at a GPU's usual pitch alignment, so that code indexing by the pitch is exercised.
  constexpr std::size_t kPitchAlignment = 512;
  *pitch = (width + kPitchAlignment - 1) / kPitchAlignment * kPitchAlignment;
  return cudaMalloc(devPtr, *pitch * height);
}

cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, std::size_t wOffset, std::size_t hOffset, const void* src,
                                std::size_t spitch, std::size_t width, std::size_t height, cudaMemcpyKind kind) {
  if (dst == nullptr || (src == nullptr && width * height != 0)) return detail::recordError(cudaErrorInvalidValue);
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
    return detail::recordError(cudaErrorInvalidMemcpyDirection);
  if (spitch < width || wOffset + width > dst->rowBytes() || hOffset + height > dst->rows())
    return detail::recordError(cudaErrorInvalidValue);
  for (std::size_t r = 0; r < height; ++r)
    std::memcpy(dst->data.data() + (hOffset + r) * dst->rowBytes() + wOffset,
                static_cast<const unsigned char*>(src) + r * spitch, width);
  return cudaSuccess;
}

cudaError_t cudaMemcpy2DFromArray(void* dst, std::size_t dpitch, cudaArray_const_t src, std::size_t wOffset,
                                  std::size_t hOffset, std::size_t width, std::size_t height, cudaMemcpyKind kind) {
  if (src == nullptr || (dst == nullptr && width * height != 0)) return detail::recordError(cudaErrorInvalidValue);
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
    return detail::recordError(cudaErrorInvalidMemcpyDirection);
  if (dpitch < width || wOffset + width > src->rowBytes() || hOffset + height > src->rows())
    return detail::recordError(cudaErrorInvalidValue);
  for (std::size_t r = 0; r < height; ++r)
    std::memcpy(static_cast<unsigned char*>(dst) + r * dpitch,
                src->data.data() + (hOffset + r) * src->rowBytes() + wOffset, width);
  return cudaSuccess;
}

namespace {

/// One side of a 3-D copy: its bytes' address of (x in bytes, y, z), and its bounds.
struct CopySide {
  unsigned char* base;
  std::size_t rowBytes, rowPitch, slicePitch, rows, slices, elementBytes;
};

bool sideOf(cudaArray_t array, const cudaPitchedPtr& pointer, CopySide& side) {
  if (array != nullptr) {
    side = CopySide{array->data.data(), array->rowBytes(), array->rowBytes(),  array->rowBytes() * array->rows(),
                    array->rows(),      array->slices(),   array->elementBytes};
    return true;
  }
  if (pointer.ptr == nullptr) return false;
  const std::size_t rows = std::max<std::size_t>(pointer.ysize, 1);
  side = CopySide{static_cast<unsigned char*>(pointer.ptr),
                  pointer.pitch,
                  pointer.pitch,
                  pointer.pitch * rows,
                  rows,
                  std::size_t(-1),
                  1};
  return true;
}

}  // namespace

cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p) {
  if (p == nullptr) return detail::recordError(cudaErrorInvalidValue);
  if (p->kind < cudaMemcpyHostToHost || p->kind > cudaMemcpyDefault)
    return detail::recordError(cudaErrorInvalidMemcpyDirection);
  CopySide src{}, dst{};
  if (!sideOf(p->srcArray, p->srcPtr, src) || !sideOf(p->dstArray, p->dstPtr, dst))
    return detail::recordError(cudaErrorInvalidValue);
  // An array's extent and position count elements; between two pitched pointers, bytes.
  const std::size_t unit = p->srcArray != nullptr ? src.elementBytes : p->dstArray != nullptr ? dst.elementBytes : 1;
  const std::size_t width = p->extent.width * unit;
  const std::size_t height = std::max<std::size_t>(p->extent.height, 1),
                    depth = std::max<std::size_t>(p->extent.depth, 1);
  const std::size_t srcX = p->srcPos.x * (p->srcArray != nullptr ? src.elementBytes : 1);
  const std::size_t dstX = p->dstPos.x * (p->dstArray != nullptr ? dst.elementBytes : 1);
  if (srcX + width > src.rowBytes || dstX + width > dst.rowBytes || p->srcPos.y + height > src.rows ||
      p->dstPos.y + height > dst.rows || (src.slices != std::size_t(-1) && p->srcPos.z + depth > src.slices) ||
      (dst.slices != std::size_t(-1) && p->dstPos.z + depth > dst.slices))
    return detail::recordError(cudaErrorInvalidValue);
  for (std::size_t z = 0; z < depth; ++z)
    for (std::size_t y = 0; y < height; ++y)
      std::memcpy(dst.base + (p->dstPos.z + z) * dst.slicePitch + (p->dstPos.y + y) * dst.rowPitch + dstX,
                  src.base + (p->srcPos.z + z) * src.slicePitch + (p->srcPos.y + y) * src.rowPitch + srcX, width);
  return cudaSuccess;
}

namespace {

/// The texels a resource description names, into `o` (without the sampling).
cudaError_t describeResource(const cudaResourceDesc& r, ObjectState& o, bool surface) {
  switch (r.resType) {
    case cudaResourceTypeArray: {
      const cudaArray* a = r.res.array.array;
      if (a == nullptr) return cudaErrorInvalidValue;
      if (surface && !(a->flags & kCudaArraySurfaceLoadStore)) return cudaErrorInvalidValue;
      o.base = const_cast<unsigned char*>(a->data.data());
      setFormat(o, a->desc);
      const bool layered = (a->flags & kCudaArrayLayered) != 0;
      o.extent[0] = a->width;
      o.extent[1] = a->rows();
      o.extent[2] = layered ? 1 : a->slices();
      o.layers = layered ? a->depth : 0;
      o.rowPitch = a->rowBytes();
      o.slicePitch = a->rowBytes() * a->rows();
      o.linear = false;
      return cudaSuccess;
    }
    case cudaResourceTypeLinear:
      if (surface || r.res.linear.devPtr == nullptr || !validChannels(r.res.linear.desc)) return cudaErrorInvalidValue;
      o.base = static_cast<unsigned char*>(r.res.linear.devPtr);
      setFormat(o, r.res.linear.desc);
      o.extent[0] = r.res.linear.sizeInBytes / o.elementBytes;
      o.extent[1] = o.extent[2] = 1;
      o.layers = 0;
      o.rowPitch = o.slicePitch = r.res.linear.sizeInBytes;
      o.linear = true;
      return o.extent[0] > 0 ? cudaSuccess : cudaErrorInvalidValue;
    case cudaResourceTypePitch2D:
      if (surface || r.res.pitch2D.devPtr == nullptr || !validChannels(r.res.pitch2D.desc))
        return cudaErrorInvalidValue;
      o.base = static_cast<unsigned char*>(r.res.pitch2D.devPtr);
      setFormat(o, r.res.pitch2D.desc);
      o.extent[0] = r.res.pitch2D.width;
      o.extent[1] = r.res.pitch2D.height;
      o.extent[2] = 1;
      o.layers = 0;
      o.rowPitch = r.res.pitch2D.pitchInBytes;
      o.slicePitch = o.rowPitch * o.extent[1];
      o.linear = false;
      if (o.extent[0] == 0 || o.extent[1] == 0 || o.rowPitch < o.extent[0] * o.elementBytes)
        return cudaErrorInvalidValue;
      return cudaSuccess;
    default: return cudaErrorInvalidValue;  // mipmapped arrays: not on the host path
  }
}

/// A new texture (with `sampling`) or surface (without) object over `resource`, into `handle`.
cudaError_t createObject(unsigned long long* handle, std::uint32_t magic, const cudaResourceDesc* resource,
                         const cudaTextureDesc* sampling) {
  if (handle == nullptr || resource == nullptr) return detail::recordError(cudaErrorInvalidValue);
  auto o = std::make_unique<ObjectState>();
  o->magic = magic;
  if (const cudaError_t error = describeResource(*resource, *o, magic == kSurfaceMagic); error != cudaSuccess)
    return detail::recordError(error);
  if (sampling != nullptr) {
    o->sampling = *sampling;
    // Linear filtering returns floats: of float texels, or of integer ones read as normalized floats.
    if (o->sampling.filterMode == cudaFilterModeLinear && o->format.f != cudaChannelFormatKindFloat &&
        o->sampling.readMode != cudaReadModeNormalizedFloat)
      return detail::recordError(cudaErrorInvalidValue);
  }
  *handle = reinterpret_cast<std::uintptr_t>(o.release());
  return cudaSuccess;
}

cudaError_t destroyObject(unsigned long long handle, std::uint32_t magic) {
  if (handle == 0) return cudaSuccess;
  auto* o = reinterpret_cast<ObjectState*>(static_cast<std::uintptr_t>(handle));
  if (o->magic != magic) return detail::recordError(cudaErrorInvalidValue);
  o->magic = 0;
  delete o;
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaCreateTextureObject(cudaTextureObject_t* texture, const cudaResourceDesc* resource,
                                    const cudaTextureDesc* description, const cudaResourceViewDesc* view) {
  if (description == nullptr || view != nullptr) return detail::recordError(cudaErrorInvalidValue);
  return createObject(texture, kTextureMagic, resource, description);
}

cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texture) { return destroyObject(texture, kTextureMagic); }

cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* surface, const cudaResourceDesc* resource) {
  return createObject(surface, kSurfaceMagic, resource, nullptr);
}

cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surface) { return destroyObject(surface, kSurfaceMagic); }

namespace detail {

Texel textureFetchLinear(cudaTextureObject_t texture, int x) {
  const ObjectState& o = objectOf(texture, kTextureMagic, "tex1Dfetch");
  long long i = x;
  // tex1Dfetch takes no filtering and unnormalized indices: clamp, or zero past the end with border.
  if (!address(i, static_cast<long long>(o.extent[0]), o.sampling.addressMode[0], false)) return Texel{};
  return readTexel(o, o.base + std::size_t(i) * o.elementBytes);
}

Texel textureFetch(cudaTextureObject_t texture, float x, float y, float z, int layer, int dimensions) {
  const ObjectState& o = objectOf(texture, kTextureMagic, "tex1D/tex2D/tex3D");
  if (o.linear) throw std::runtime_error("a texture over linear memory is read with tex1Dfetch");
  const float coordinates[3] = {x, y, z};
  const bool normalized = o.sampling.normalizedCoords != 0;
  const std::size_t slice =
      o.layers > 0 ? std::size_t(std::clamp<long long>(layer, 0, static_cast<long long>(o.layers) - 1)) : 0;
  if (o.sampling.filterMode != cudaFilterModeLinear) {
    long long index[3] = {0, 0, 0};
    for (int d = 0; d < dimensions; ++d) {
      const float u = normalized ? coordinates[d] * float(o.extent[d]) : coordinates[d];
      index[d] = static_cast<long long>(std::floor(u));
      if (!address(index[d], static_cast<long long>(o.extent[d]), o.sampling.addressMode[d], normalized))
        return borderTexel(o);
    }
    return texelAt(o, index, slice);
  }
  // Linear filtering: the 2, 4 or 8 nearest texels weighted in 256ths, as the GPU weighs them.
  long long first[3] = {0, 0, 0};
  int fraction[3] = {0, 0, 0};
  for (int d = 0; d < dimensions; ++d) {
    const float u = (normalized ? coordinates[d] * float(o.extent[d]) : coordinates[d]) - 0.5f;
    const float below = std::floor(u);
    first[d] = static_cast<long long>(below);
    fraction[d] = filterFraction(u - below);
  }
  int weight[8];
  cornerWeights(fraction, dimensions, weight);
  float sum[4] = {0, 0, 0, 0};
  for (int corner = 0; corner < (1 << dimensions); ++corner) {
    long long index[3] = {0, 0, 0};
    bool inside = true;
    for (int d = 0; d < dimensions; ++d) {
      index[d] = first[d] + ((corner >> d) & 1);
      inside = address(index[d], static_cast<long long>(o.extent[d]), o.sampling.addressMode[d], normalized) && inside;
    }
    const float w = float(weight[corner]) / 256.0f;
    const Texel t = inside ? texelAt(o, index, slice) : borderTexel(o);
    for (int c = 0; c < 4; ++c) sum[c] += w * float(t.v[c]);
  }
  return Texel{{sum[0], sum[1], sum[2], sum[3]}};
}

namespace {

/// The byte address of a surface access, or nullptr when out of bounds with cudaBoundaryModeZero.
unsigned char* surfaceAddress(cudaSurfaceObject_t surface, std::size_t bytes, int x, int y, int z, int layer,
                              cudaSurfaceBoundaryMode mode, const char* what) {
  ObjectState& o = objectOf(surface, kSurfaceMagic, what);
  long long at[3] = {x, y, z};
  const long long limit[3] = {static_cast<long long>(o.extent[0] * o.elementBytes - bytes) + 1,
                              static_cast<long long>(o.extent[1]), static_cast<long long>(o.extent[2])};
  for (int d = 0; d < 3; ++d) {
    if (at[d] >= 0 && at[d] < limit[d]) continue;
    if (mode == cudaBoundaryModeZero) return nullptr;
    if (mode == cudaBoundaryModeClamp) {
      at[d] = std::clamp<long long>(at[d], 0, limit[d] - 1);
      if (d == 0) at[0] = at[0] / static_cast<long long>(o.elementBytes) * static_cast<long long>(o.elementBytes);
      continue;
    }
    throw std::runtime_error(std::string(what) + " out of bounds (cudaBoundaryModeTrap): x " + std::to_string(x) +
                             " bytes, y " + std::to_string(y) + ", z " + std::to_string(z));
  }
  const std::size_t slice = o.layers > 0
                                ? std::size_t(std::clamp<long long>(layer, 0, static_cast<long long>(o.layers) - 1))
                                : std::size_t(at[2]);
  return o.base + slice * o.slicePitch + std::size_t(at[1]) * o.rowPitch + std::size_t(at[0]);
}

}  // namespace

void surfaceRead(cudaSurfaceObject_t surface, void* value, std::size_t bytes, int x, int y, int z, int layer,
                 cudaSurfaceBoundaryMode mode) {
  if (const unsigned char* p = surfaceAddress(surface, bytes, x, y, z, layer, mode, "surface read"))
    std::memcpy(value, p, bytes);
  else
    std::memset(value, 0, bytes);
}

void surfaceWrite(cudaSurfaceObject_t surface, const void* value, std::size_t bytes, int x, int y, int z, int layer,
                  cudaSurfaceBoundaryMode mode) {
  if (unsigned char* p = surfaceAddress(surface, bytes, x, y, z, layer, mode, "surface write"))
    std::memcpy(p, value, bytes);
}

}  // namespace detail
}  // namespace dispar::hostk
