// Host versions of the CUDA math intrinsics and integer/bit helpers kernels commonly use. The fast
// intrinsics (__expf, __sinf, ...) are computed with the full-precision library function: at least as
// accurate as on the GPU, so results may differ from a GPU run in the last bits, never by more.
#ifndef DISPAR_HOSTK_MATH_H
#define DISPAR_HOSTK_MATH_H

#include <cmath>
#include <cstring>
#include <type_traits>

namespace dispar::hostk {

inline float __expf(float x) { return std::exp(x); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline void __sincosf(float x, float* s, float* c) {
  *s = std::sin(x);
  *c = std::cos(x);
}
inline float __powf(float x, float y) { return std::pow(x, y); }
inline float __fdividef(float x, float y) { return x / y; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
/// Clamps to [0, 1]; NaN becomes 0, as on the GPU.
inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }
inline float __fmaf_rn(float x, float y, float z) { return std::fma(x, y, z); }
inline double __fma_rn(double x, double y, double z) { return std::fma(x, y, z); }
inline float __fadd_rn(float x, float y) { return x + y; }
inline float __fmul_rn(float x, float y) { return x * y; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __frcp_rn(float x) { return 1.0f / x; }
/// Rounds to nearest, ties to even (the host's default rounding mode).
inline int __float2int_rn(float x) { return static_cast<int>(std::nearbyint(x)); }
inline int __float2int_rz(float x) { return static_cast<int>(x); }
inline int __double2int_rn(double x) { return static_cast<int>(std::nearbyint(x)); }
inline float __int2float_rn(int x) { return static_cast<float>(x); }

/// Read-only data cache load: a plain load on the host.
template <class T>
inline T __ldg(const T* address) {
  return *address;
}

// Bit reinterpretation.
inline int __float_as_int(float x) {
  int r;
  std::memcpy(&r, &x, sizeof r);
  return r;
}
inline unsigned __float_as_uint(float x) {
  unsigned r;
  std::memcpy(&r, &x, sizeof r);
  return r;
}
inline float __int_as_float(int x) {
  float r;
  std::memcpy(&r, &x, sizeof r);
  return r;
}
inline float __uint_as_float(unsigned x) {
  float r;
  std::memcpy(&r, &x, sizeof r);
  return r;
}
inline long long __double_as_longlong(double x) {
  long long r;
  std::memcpy(&r, &x, sizeof r);
  return r;
}
inline double __longlong_as_double(long long x) {
  double r;
  std::memcpy(&r, &x, sizeof r);
  return r;
}

// Integer intrinsics.
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
inline int __mul24(int x, int y) {
  // Sign-extended low 24 bits of each operand; the GPU keeps the low 32 bits of the product.
  const long long a = static_cast<int>(static_cast<unsigned>(x) << 8) / 256;
  const long long b = static_cast<int>(static_cast<unsigned>(y) << 8) / 256;
  return static_cast<int>(static_cast<unsigned>(static_cast<unsigned long long>(a * b)));
}
inline unsigned __umul24(unsigned x, unsigned y) { return (x & 0xffffffu) * (y & 0xffffffu); }
inline int __mulhi(int x, int y) {
  return static_cast<int>((static_cast<long long>(x) * static_cast<long long>(y)) >> 32);
}
inline unsigned __umulhi(unsigned x, unsigned y) {
  return static_cast<unsigned>((static_cast<unsigned long long>(x) * y) >> 32);
}

/// CUDA's device-side min/max: defined for every pair of arithmetic types, in their common type
/// (min(int, unsigned) is unsigned, min(float, double) is double, as in CUDA's headers).
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  return static_cast<C>(b) < static_cast<C>(a) ? static_cast<C>(b) : static_cast<C>(a);
}
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  return static_cast<C>(a) < static_cast<C>(b) ? static_cast<C>(b) : static_cast<C>(a);
}

}  // namespace dispar::hostk

#endif  // DISPAR_HOSTK_MATH_H
