// Textures and surfaces on the host path (Textures.h): CUDA arrays, texture objects over arrays, linear
// and pitched memory, every filter, address and read mode, and surface objects, against values computed
// here from CUDA's documented formulas (Programming Guide, "Texture Fetching").
#include <dispar/hostk.h>

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace hk = ::dispar::hostk;

struct Float4 {
  float x, y, z, w;
};
struct UChar4 {
  unsigned char x, y, z, w;
};

hk::cudaTextureDesc sampling(hk::cudaTextureAddressMode mode, hk::cudaTextureFilterMode filter, bool normalized,
                             hk::cudaTextureReadMode read = hk::cudaReadModeElementType) {
  hk::cudaTextureDesc d{};
  d.addressMode[0] = d.addressMode[1] = d.addressMode[2] = mode;
  d.filterMode = filter;
  d.readMode = read;
  d.normalizedCoords = normalized ? 1 : 0;
  return d;
}

/// Creates a texture object over CUDA array `array` with sampling `d`.
hk::cudaError_t createArrayTexture(hk::cudaTextureObject_t* t, hk::cudaArray_t array, const hk::cudaTextureDesc& d) {
  hk::cudaResourceDesc r{};
  r.resType = hk::cudaResourceTypeArray;
  r.res.array.array = array;
  return hk::cudaCreateTextureObject(t, &r, &d, nullptr);
}

/// Copies `values`, width x height x depth floats packed row after row, into the 3-D (or layered) `array`.
hk::cudaError_t copyVolume(hk::cudaArray_t array, std::vector<float>& values, std::size_t width, std::size_t height,
                           std::size_t depth) {
  hk::cudaMemcpy3DParms copy{};
  copy.srcPtr = hk::make_cudaPitchedPtr(values.data(), width * sizeof(float), width, height);
  copy.dstArray = array;
  copy.extent = hk::make_cudaExtent(width, height, depth);
  copy.kind = hk::cudaMemcpyHostToDevice;
  return hk::cudaMemcpy3D(&copy);
}

/// A W x H float array with texel (x, y) = x + 100 y, and a texture over it.
class FloatArray : public ::testing::Test {
 protected:
  static constexpr int kW = 8, kH = 4;
  void SetUp() override {
    const hk::cudaChannelFormatDesc desc = hk::cudaCreateChannelDesc<float>();
    EXPECT_EQ(desc.x, 32);
    EXPECT_EQ(desc.y, 0);
    EXPECT_EQ(desc.f, hk::cudaChannelFormatKindFloat);
    ASSERT_EQ(hk::cudaMallocArray(&array_, &desc, kW, kH), hk::cudaSuccess);
    std::vector<float> texels(kW * kH);
    for (int y = 0; y < kH; ++y)
      for (int x = 0; x < kW; ++x) texels[y * kW + x] = value(x, y);
    ASSERT_EQ(hk::cudaMemcpy2DToArray(array_, 0, 0, texels.data(), kW * sizeof(float), kW * sizeof(float), kH,
                                      hk::cudaMemcpyHostToDevice),
              hk::cudaSuccess);
  }
  void TearDown() override { EXPECT_EQ(hk::cudaFreeArray(array_), hk::cudaSuccess); }
  static float value(int x, int y) { return float(x + 100 * y); }

  hk::cudaTextureObject_t texture(const hk::cudaTextureDesc& d) {
    hk::cudaTextureObject_t t = 0;
    EXPECT_EQ(createArrayTexture(&t, array_, d), hk::cudaSuccess);
    return t;
  }

  hk::cudaArray_t array_ = nullptr;
};

TEST_F(FloatArray, PointSamplingReadsTheTexelUnderTheCoordinateAndClampsOutside) {
  const hk::cudaTextureObject_t t = texture(sampling(hk::cudaAddressModeClamp, hk::cudaFilterModePoint, false));
  EXPECT_EQ(hk::tex2D<float>(t, 3.5f, 2.5f), value(3, 2));
  EXPECT_EQ(hk::tex2D<float>(t, 3.99f, 2.01f), value(3, 2));
  EXPECT_EQ(hk::tex2D<float>(t, -5.0f, 9.0f), value(0, kH - 1));
  float out = 0;
  hk::tex2D(&out, t, 7.5f, 0.5f);
  EXPECT_EQ(out, value(7, 0));
  EXPECT_EQ(hk::cudaDestroyTextureObject(t), hk::cudaSuccess);
}

TEST_F(FloatArray, LinearFilteringWeighsTheNearestTexelsWithNineBitWeights) {
  const hk::cudaTextureObject_t t = texture(sampling(hk::cudaAddressModeClamp, hk::cudaFilterModeLinear, false));
  for (float x : {0.5f, 1.0f, 2.3f, 4.77f, 6.501f})
    for (float y : {0.5f, 1.25f, 2.9f}) {
      const float xb = x - 0.5f, yb = y - 0.5f;
      const int i = int(std::floor(xb)), j = int(std::floor(yb));
      const float a = std::round((xb - std::floor(xb)) * 256) / 256, b = std::round((yb - std::floor(yb)) * 256) / 256;
      auto q = [](float w) { return std::round(w * 256) / 256; };  // each corner's weight in 8 bits too
      const float expected = q((1 - a) * (1 - b)) * value(i, j) + q(a * (1 - b)) * value(i + 1, j) +
                             q((1 - a) * b) * value(i, j + 1) + q(a * b) * value(i + 1, j + 1);
      EXPECT_NEAR(hk::tex2D<float>(t, x, y), expected, 1e-3f) << x << ", " << y;
    }
  // The weight is quantised: 1/1000 of a texel is no step at all.
  EXPECT_EQ(hk::tex2D<float>(t, 2.501f, 1.5f), value(2, 1));
  EXPECT_EQ(hk::cudaDestroyTextureObject(t), hk::cudaSuccess);
}

/// Each corner's weight, in 256ths, of linear filtering a 2x2 (or 2x2x2) float array at fractions
/// `fraction` (in 256ths) past the first texel's centre: one array per corner, 1 there and 0 elsewhere.
std::vector<int> cornerWeightsAt(const std::vector<int>& fraction) {
  const int dimensions = int(fraction.size()), corners = 1 << dimensions;
  const hk::cudaChannelFormatDesc f = hk::cudaCreateChannelDesc<float>();
  const hk::cudaTextureDesc linear = sampling(hk::cudaAddressModeClamp, hk::cudaFilterModeLinear, false);
  std::vector<int> weights;
  for (int corner = 0; corner < corners; ++corner) {
    std::vector<float> texels(corners, 0.0f);
    texels[corner] = 1.0f;
    hk::cudaArray_t a = nullptr;
    if (dimensions == 2) {
      EXPECT_EQ(hk::cudaMallocArray(&a, &f, 2, 2), hk::cudaSuccess);
      EXPECT_EQ(hk::cudaMemcpy2DToArray(a, 0, 0, texels.data(), 2 * sizeof(float), 2 * sizeof(float), 2,
                                        hk::cudaMemcpyHostToDevice),
                hk::cudaSuccess);
    } else {
      EXPECT_EQ(hk::cudaMalloc3DArray(&a, &f, hk::make_cudaExtent(2, 2, 2), 0u), hk::cudaSuccess);
      EXPECT_EQ(copyVolume(a, texels, 2, 2, 2), hk::cudaSuccess);
    }
    hk::cudaTextureObject_t t = 0;
    EXPECT_EQ(createArrayTexture(&t, a, linear), hk::cudaSuccess);
    float at[3] = {0.5f, 0.5f, 0.5f};
    for (int d = 0; d < dimensions; ++d) at[d] += float(fraction[d]) / 256.0f;
    const float w = dimensions == 2 ? hk::tex2D<float>(t, at[0], at[1]) : hk::tex3D<float>(t, at[0], at[1], at[2]);
    weights.push_back(int(std::lround(w * 256.0f)));
    EXPECT_EQ(hk::cudaDestroyTextureObject(t), hk::cudaSuccess);
    EXPECT_EQ(hk::cudaFreeArray(a), hk::cudaSuccess);
  }
  return weights;
}

// Corner weights an NVIDIA H200 gave (tests/gpu_probes/texture_weights.dsp, 2026-11-30), corner c upper
// along axis d when bit d is set. Most are rounding ties of a corner's product of fractions, where
// rounding each corner alone goes the wrong way for some corners (and, in 3-D, often off a tie too); the
// weights always add up to 256.
TEST(HostTextures, LinearFilterWeightsAreTheGpusIncludingRoundingTies) {
  const struct {
    std::vector<int> fraction, weights;
  } measured[] = {
      {{28, 32}, {200, 24, 28, 4}},
      {{41, 128}, {108, 20, 107, 21}},
      {{90, 64}, {125, 67, 41, 23}},
      {{128, 215}, {21, 20, 107, 108}},
      {{164, 224}, {12, 20, 80, 144}},
      {{245, 67, 59}, {6, 140, 2, 49, 2, 41, 1, 15}},
      {{165, 232, 30}, {8, 14, 72, 132, 1, 2, 10, 17}},
      {{245, 207, 128}, {1, 24, 4, 99, 1, 24, 4, 99}},
      {{88, 16, 112}, {88, 47, 6, 3, 68, 37, 5, 2}},
      {{136, 88, 171}, {26, 30, 14, 15, 53, 60, 27, 31}},
      {{184, 192, 34}, {16, 40, 46, 120, 3, 6, 7, 18}},
  };
  for (const auto& m : measured) {
    std::string at;
    for (int f : m.fraction) at += std::to_string(f) + "/256 ";
    EXPECT_EQ(cornerWeightsAt(m.fraction), m.weights) << "at fractions " << at;
  }
}

TEST_F(FloatArray, NormalizedCoordinatesWrapMirrorAndBorder) {
  const hk::cudaTextureObject_t wrap = texture(sampling(hk::cudaAddressModeWrap, hk::cudaFilterModePoint, true));
  EXPECT_EQ(hk::tex2D<float>(wrap, 1.0f + 2.5f / kW, 0.5f / kH), value(2, 0));
  EXPECT_EQ(hk::tex2D<float>(wrap, -0.5f / kW, -0.5f / kH), value(kW - 1, kH - 1));
  const hk::cudaTextureObject_t mirror = texture(sampling(hk::cudaAddressModeMirror, hk::cudaFilterModePoint, true));
  EXPECT_EQ(hk::tex2D<float>(mirror, 1.0f + 0.5f / kW, 0.5f / kH), value(kW - 1, 0));  // reflected
  EXPECT_EQ(hk::tex2D<float>(mirror, -0.5f / kW, 0.5f / kH), value(0, 0));
  hk::cudaTextureDesc d = sampling(hk::cudaAddressModeBorder, hk::cudaFilterModePoint, true);
  d.borderColor[0] = -7.0f;
  const hk::cudaTextureObject_t border = texture(d);
  EXPECT_EQ(hk::tex2D<float>(border, 1.2f, 0.5f), -7.0f);
  EXPECT_EQ(hk::tex2D<float>(border, 0.5f, 0.5f), value(kW / 2, kH / 2));
  for (hk::cudaTextureObject_t t : {wrap, mirror, border}) EXPECT_EQ(hk::cudaDestroyTextureObject(t), hk::cudaSuccess);
}

TEST(HostTextures, NormalizedFloatReadsOfBytesAndFetchesFromLinearMemory) {
  hk::cudaChannelFormatDesc desc = hk::cudaCreateChannelDesc(8, 8, 8, 8, hk::cudaChannelFormatKindUnsigned);
  std::vector<UChar4> texels = {{0, 51, 255, 1}, {255, 0, 0, 0}};
  void* linear = nullptr;
  ASSERT_EQ(hk::cudaMalloc(&linear, texels.size() * sizeof(UChar4)), hk::cudaSuccess);
  ASSERT_EQ(hk::cudaMemcpy(linear, texels.data(), texels.size() * sizeof(UChar4), hk::cudaMemcpyHostToDevice),
            hk::cudaSuccess);
  hk::cudaResourceDesc r{};
  r.resType = hk::cudaResourceTypeLinear;
  r.res.linear.devPtr = linear;
  r.res.linear.desc = desc;
  r.res.linear.sizeInBytes = texels.size() * sizeof(UChar4);
  hk::cudaTextureDesc d =
      sampling(hk::cudaAddressModeClamp, hk::cudaFilterModePoint, false, hk::cudaReadModeNormalizedFloat);
  hk::cudaTextureObject_t t = 0;
  ASSERT_EQ(hk::cudaCreateTextureObject(&t, &r, &d, nullptr), hk::cudaSuccess);
  const Float4 first = hk::tex1Dfetch<Float4>(t, 0);
  EXPECT_EQ(first.x, 0.0f);
  EXPECT_FLOAT_EQ(first.y, 51.0f / 255.0f);
  EXPECT_EQ(first.z, 1.0f);
  EXPECT_FLOAT_EQ(first.w, 1.0f / 255.0f);
  EXPECT_EQ(hk::tex1Dfetch<Float4>(t, 9).x, 1.0f);  // clamped to the last texel
  EXPECT_EQ(hk::cudaDestroyTextureObject(t), hk::cudaSuccess);
  // Read as elements, the same memory gives the bytes themselves.
  d.readMode = hk::cudaReadModeElementType;
  ASSERT_EQ(hk::cudaCreateTextureObject(&t, &r, &d, nullptr), hk::cudaSuccess);
  const UChar4 raw = hk::tex1Dfetch<UChar4>(t, 0);
  EXPECT_EQ(raw.y, 51);
  EXPECT_EQ(raw.z, 255);
  // Linear filtering of integers needs normalized float reads, as in CUDA.
  hk::cudaTextureObject_t refused = 0;
  d.filterMode = hk::cudaFilterModeLinear;
  EXPECT_EQ(hk::cudaCreateTextureObject(&refused, &r, &d, nullptr), hk::cudaErrorInvalidValue);
  EXPECT_EQ(hk::cudaGetLastError(), hk::cudaErrorInvalidValue);
  EXPECT_EQ(hk::cudaDestroyTextureObject(t), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaFree(linear), hk::cudaSuccess);
}

TEST(HostTextures, PitchedLayeredAndThreeDimensionalTextures) {
  // Pitched memory from cudaMallocPitch, as a 2-D texture.
  void* pitched = nullptr;
  std::size_t pitch = 0;
  ASSERT_EQ(hk::cudaMallocPitch(&pitched, &pitch, 5 * sizeof(int), 3), hk::cudaSuccess);
  EXPECT_GE(pitch, 5 * sizeof(int));
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x) reinterpret_cast<int*>(static_cast<char*>(pitched) + y * pitch)[x] = 10 * y + x;
  hk::cudaResourceDesc r{};
  r.resType = hk::cudaResourceTypePitch2D;
  r.res.pitch2D = {pitched, hk::cudaCreateChannelDesc<int>(), 5, 3, pitch};
  const hk::cudaTextureDesc point = sampling(hk::cudaAddressModeClamp, hk::cudaFilterModePoint, false);
  hk::cudaTextureObject_t t = 0;
  ASSERT_EQ(hk::cudaCreateTextureObject(&t, &r, &point, nullptr), hk::cudaSuccess);
  EXPECT_EQ(hk::tex2D<int>(t, 4.5f, 2.5f), 24);
  EXPECT_EQ(hk::cudaDestroyTextureObject(t), hk::cudaSuccess);

  // A layered 2-D array of 3 layers and a 3-D array, filled through cudaMemcpy3D.
  const hk::cudaChannelFormatDesc f = hk::cudaCreateChannelDesc<float>();
  std::vector<float> volume(4 * 2 * 3);
  for (std::size_t i = 0; i < volume.size(); ++i) volume[i] = float(i);
  for (unsigned flags : {hk::kCudaArrayLayered, 0u}) {
    hk::cudaArray_t a = nullptr;
    ASSERT_EQ(hk::cudaMalloc3DArray(&a, &f, hk::make_cudaExtent(4, 2, 3), flags), hk::cudaSuccess);
    ASSERT_EQ(copyVolume(a, volume, 4, 2, 3), hk::cudaSuccess);
    if (flags == hk::kCudaArrayLayered) {
      ASSERT_EQ(createArrayTexture(&t, a, point), hk::cudaSuccess);
      EXPECT_EQ(hk::tex2DLayered<float>(t, 1.5f, 1.5f, 2), volume[2 * 8 + 1 * 4 + 1]);
    } else {
      const hk::cudaTextureDesc linear = sampling(hk::cudaAddressModeClamp, hk::cudaFilterModeLinear, false);
      ASSERT_EQ(createArrayTexture(&t, a, linear), hk::cudaSuccess);
      // Halfway between every pair of neighbours along z only: the mean of the two slices.
      EXPECT_FLOAT_EQ(hk::tex3D<float>(t, 1.5f, 0.5f, 1.0f), (volume[0 * 8 + 1] + volume[1 * 8 + 1]) / 2);
    }
    EXPECT_EQ(hk::cudaDestroyTextureObject(t), hk::cudaSuccess);
    EXPECT_EQ(hk::cudaFreeArray(a), hk::cudaSuccess);
  }
  EXPECT_EQ(hk::cudaFree(pitched), hk::cudaSuccess);
}

// A kernel writing a surface, trapping out of bounds.
void host_surfaceScale(hk::cudaSurfaceObject_t surface, int width, int shift) {
  const int x = static_cast<int>(hk::threadIdx().x) + shift, y = static_cast<int>(hk::blockIdx().x);
  const float v = hk::surf2Dread<float>(surface, x * 4, y);
  hk::surf2Dwrite(v * 2.0f + float(width), surface, x * 4, y);
}

TEST(HostSurfaces, KernelsReadAndWriteThroughSurfacesAndOutOfBoundsTrapsByDefault) {
  const hk::cudaChannelFormatDesc f = hk::cudaCreateChannelDesc<float>();
  hk::cudaArray_t a = nullptr;
  hk::cudaResourceDesc r{};
  r.resType = hk::cudaResourceTypeArray;
  hk::cudaSurfaceObject_t s = 0;
  ASSERT_EQ(hk::cudaMallocArray(&a, &f, 6, 2), hk::cudaSuccess);
  r.res.array.array = a;
  EXPECT_EQ(hk::cudaCreateSurfaceObject(&s, &r), hk::cudaErrorInvalidValue);  // not cudaArraySurfaceLoadStore
  EXPECT_EQ(hk::cudaFreeArray(a), hk::cudaSuccess);
  ASSERT_EQ(hk::cudaMallocArray(&a, &f, 6, 2, hk::kCudaArraySurfaceLoadStore), hk::cudaSuccess);
  r.res.array.array = a;
  ASSERT_EQ(hk::cudaCreateSurfaceObject(&s, &r), hk::cudaSuccess);
  std::vector<float> in = {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15}, out(12);
  ASSERT_EQ(hk::cudaMemcpy2DToArray(a, 0, 0, in.data(), 24, 24, 2, hk::cudaMemcpyHostToDevice), hk::cudaSuccess);
  ASSERT_EQ(hk::launch(2, 6, 0, &host_surfaceScale, s, 6, 0), hk::cudaSuccess);
  ASSERT_EQ(hk::cudaMemcpy2DFromArray(out.data(), 24, a, 0, 0, 24, 2, hk::cudaMemcpyDeviceToHost), hk::cudaSuccess);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(out[i], in[i] * 2 + 6) << i;
  // Zero and clamp boundary modes, from the host (the fetch functions need no kernel).
  EXPECT_EQ(hk::surf2Dread<float>(s, 6 * 4, 0, hk::cudaBoundaryModeZero), 0.0f);
  EXPECT_EQ(hk::surf2Dread<float>(s, 99 * 4, 1, hk::cudaBoundaryModeClamp), out[11]);
  testing::internal::CaptureStderr();
  EXPECT_EQ(hk::launch(2, 6, 0, &host_surfaceScale, s, 6, 1), hk::cudaErrorLaunchFailure);
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("surface read out of bounds (cudaBoundaryModeTrap): x 24 bytes, y"), std::string::npos) << log;
  EXPECT_EQ(hk::cudaDestroySurfaceObject(s), hk::cudaSuccess);
  EXPECT_EQ(hk::cudaFreeArray(a), hk::cudaSuccess);
}

}  // namespace
