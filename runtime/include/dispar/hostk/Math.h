// Host versions of the CUDA math intrinsics and integer/bit helpers kernels commonly use. The fast
// intrinsics (__expf, __sinf, ...) are computed with the full-precision library function: at least as
// accurate as on the GPU, so results may differ from a GPU run in the last bits, never by more.
#ifndef DISPAR_HOSTK_MATH_H
#define DISPAR_HOSTK_MATH_H

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
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

inline float fdividef(float x, float y) { return x / y; }
inline float norm3df(float a, float b, float c) {
  return static_cast<float>(std::sqrt(double(a) * a + double(b) * b + double(c) * c));
}
inline float rnorm3df(float a, float b, float c) {
  return static_cast<float>(1.0 / std::sqrt(double(a) * a + double(b) * b + double(c) * c));
}
inline float norm4df(float a, float b, float c, float d) {
  return static_cast<float>(std::sqrt(double(a) * a + double(b) * b + double(c) * c + double(d) * d));
}
inline double norm3d(double a, double b, double c) { return std::sqrt(a * a + b * b + c * c); }
inline double rnorm3d(double a, double b, double c) { return 1.0 / std::sqrt(a * a + b * b + c * c); }

namespace detail {
/// `operation()` under the rounding mode `mode` (the directed-rounding intrinsics: _rz, _ru, _rd).
template <class Operation>
inline auto withRounding(int mode, Operation operation) {
  const int saved = std::fegetround();
  std::fesetround(mode);
  const auto result = operation();
  std::fesetround(saved);
  return result;
}
}  // namespace detail

// Directed rounding: the operands go through volatile so the operation happens at run time, under the
// mode set around it.
inline float __fadd_rz(float x, float y) {
  return detail::withRounding(FE_TOWARDZERO, [&] {
    volatile float a = x, b = y;
    return a + b;
  });
}
inline float __fmul_rz(float x, float y) {
  return detail::withRounding(FE_TOWARDZERO, [&] {
    volatile float a = x, b = y;
    return a * b;
  });
}
inline float __fdiv_rn(float x, float y) { return x / y; }
inline float __fdiv_rz(float x, float y) {
  return detail::withRounding(FE_TOWARDZERO, [&] {
    volatile float a = x, b = y;
    return a / b;
  });
}
inline double __dadd_rn(double x, double y) { return x + y; }
inline double __dmul_rn(double x, double y) { return x * y; }
inline double __ddiv_rn(double x, double y) { return x / y; }
inline double __dsqrt_rn(double x) { return std::sqrt(x); }

// Conversions. Out-of-range values saturate, as the GPU's conversions do; NaN becomes 0.
namespace detail {
template <class Integer, class Real>
inline Integer saturatingConvert(Real x) {
  if (std::isnan(x)) return 0;
  if (x <= static_cast<Real>(std::numeric_limits<Integer>::min())) return std::numeric_limits<Integer>::min();
  if (x >= static_cast<Real>(std::numeric_limits<Integer>::max())) return std::numeric_limits<Integer>::max();
  return static_cast<Integer>(x);
}
}  // namespace detail
inline unsigned __float2uint_rn(float x) { return detail::saturatingConvert<unsigned>(std::nearbyint(x)); }
inline unsigned __float2uint_rz(float x) { return detail::saturatingConvert<unsigned>(std::trunc(x)); }
inline long long __float2ll_rn(float x) { return detail::saturatingConvert<long long>(std::nearbyint(x)); }
inline long long __float2ll_rz(float x) { return detail::saturatingConvert<long long>(std::trunc(x)); }
inline float __uint2float_rn(unsigned x) { return static_cast<float>(x); }
inline float __int2float_rz(int x) {
  return detail::withRounding(FE_TOWARDZERO, [&] {
    volatile int a = x;
    return static_cast<float>(a);
  });
}
inline int __float2int_rd(float x) { return detail::saturatingConvert<int>(std::floor(x)); }
inline int __float2int_ru(float x) { return detail::saturatingConvert<int>(std::ceil(x)); }
inline unsigned __float2uint_rd(float x) { return detail::saturatingConvert<unsigned>(std::floor(x)); }
inline unsigned __float2uint_ru(float x) { return detail::saturatingConvert<unsigned>(std::ceil(x)); }
inline int __double2int_rz(double x) { return detail::saturatingConvert<int>(std::trunc(x)); }
inline int __double2int_rd(double x) { return detail::saturatingConvert<int>(std::floor(x)); }
inline int __double2int_ru(double x) { return detail::saturatingConvert<int>(std::ceil(x)); }
inline float __double2float_rn(double x) { return static_cast<float>(x); }
inline float __ll2float_rn(long long x) { return static_cast<float>(x); }
inline double __int2double_rn(int x) { return static_cast<double>(x); }

/// Read-only data cache load: a plain load on the host.
template <class T>
inline T __ldg(const T* address) {
  return *address;
}

// The cache-hinted loads and stores (CacheHints.def): the hints are for the GPU's caches; on the host,
// plain accesses.
#define DISPAR_HOSTK_PLAIN_LOAD(name)                                                                                  \
  template <class T>                                                                                                   \
  inline T name(const T* address) {                                                                                    \
    return *address;                                                                                                   \
  }
#define DISPAR_HOSTK_PLAIN_STORE(name)                                                                                 \
  template <class T>                                                                                                   \
  inline void name(T* address, T value) {                                                                              \
    *address = value;                                                                                                  \
  }
DISPAR_HOSTK_PLAIN_LOAD(__ldca)
DISPAR_HOSTK_PLAIN_LOAD(__ldcg)
DISPAR_HOSTK_PLAIN_LOAD(__ldcs)
DISPAR_HOSTK_PLAIN_LOAD(__ldlu)
DISPAR_HOSTK_PLAIN_LOAD(__ldcv)
DISPAR_HOSTK_PLAIN_STORE(__stwb)
DISPAR_HOSTK_PLAIN_STORE(__stcg)
DISPAR_HOSTK_PLAIN_STORE(__stcs)
DISPAR_HOSTK_PLAIN_STORE(__stwt)
#undef DISPAR_HOSTK_PLAIN_STORE
#undef DISPAR_HOSTK_PLAIN_LOAD

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
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
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
inline long long __mul64hi(long long x, long long y) {
  return static_cast<long long>((static_cast<__int128>(x) * static_cast<__int128>(y)) >> 64);
}
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(x) * y) >> 64);
}

// Integer sums of absolute differences, halving adds, byte permutation.
inline unsigned __sad(int x, int y, unsigned z) {
  return z + static_cast<unsigned>(x > y ? static_cast<long long>(x) - y : static_cast<long long>(y) - x);
}
inline unsigned __usad(unsigned x, unsigned y, unsigned z) { return z + (x > y ? x - y : y - x); }
inline int __hadd(int x, int y) { return static_cast<int>((static_cast<long long>(x) + y) >> 1); }
inline int __rhadd(int x, int y) { return static_cast<int>((static_cast<long long>(x) + y + 1) >> 1); }
inline unsigned __uhadd(unsigned x, unsigned y) {
  return static_cast<unsigned>((static_cast<unsigned long long>(x) + y) >> 1);
}
inline unsigned __urhadd(unsigned x, unsigned y) {
  return static_cast<unsigned>((static_cast<unsigned long long>(x) + y + 1) >> 1);
}
/// Byte i of the result is byte (s >> 4i) & 7 of the 8 bytes y:x (x the low four).
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const unsigned long long bytes = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned result = 0;
  for (unsigned i = 0; i < 4; ++i)
    result |= static_cast<unsigned>((bytes >> (8 * ((s >> (4 * i)) & 7u))) & 0xffu) << (8 * i);
  return result;
}

// Funnel shifts: the 64 bits hi:lo shifted, the 32 bits that come out.
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
  return static_cast<unsigned>((((static_cast<unsigned long long>(hi) << 32) | lo) << (shift & 31u)) >> 32);
}
inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned shift) {
  const unsigned s = shift < 32u ? shift : 32u;
  return static_cast<unsigned>((((static_cast<unsigned long long>(hi) << 32) | lo) << s) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  return static_cast<unsigned>(((static_cast<unsigned long long>(hi) << 32) | lo) >> (shift & 31u));
}
inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned shift) {
  const unsigned s = shift < 32u ? shift : 32u;
  return static_cast<unsigned>(((static_cast<unsigned long long>(hi) << 32) | lo) >> s);
}
/// Four-way byte dot product plus an accumulator: signed bytes for int, unsigned for unsigned.
inline int __dp4a(int a, int b, int c) {
  int sum = c;
  for (int i = 0; i < 4; ++i)
    sum += static_cast<signed char>(static_cast<unsigned>(a) >> (8 * i)) *
           static_cast<signed char>(static_cast<unsigned>(b) >> (8 * i));
  return sum;
}
inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {
  unsigned sum = c;
  for (int i = 0; i < 4; ++i) sum += ((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
  return sum;
}

// Classification, as CUDA's device headers declare it for float and double.
template <class T, class = std::enable_if_t<std::is_floating_point_v<T>>>
inline bool isfinite(T x) {
  return std::isfinite(x);
}
template <class T, class = std::enable_if_t<std::is_floating_point_v<T>>>
inline bool isnan(T x) {
  return std::isnan(x);
}
template <class T, class = std::enable_if_t<std::is_floating_point_v<T>>>
inline bool isinf(T x) {
  return std::isinf(x);
}
template <class T, class = std::enable_if_t<std::is_floating_point_v<T>>>
inline bool signbit(T x) {
  return std::signbit(x);
}

// CUDA's math functions that the C library lacks, computed in double.
namespace detail {
constexpr double kPi = 3.141592653589793238462643383279502884;
constexpr double kTwoOverSqrtPi = 1.128379167095512573896158903121545172;
// sin(pi x) and cos(pi x) after reducing x to [-1, 1], so that integers and half-integers give exact
// zeros, as CUDA's sinpi/cospi do.
inline double sinPi(double x) {
  if (!std::isfinite(x)) return std::numeric_limits<double>::quiet_NaN();
  const double r = std::remainder(x, 2.0);
  if (r == std::trunc(r)) return std::copysign(0.0, x);
  return std::sin(kPi * r);
}
inline double cosPi(double x) {
  if (!std::isfinite(x)) return std::numeric_limits<double>::quiet_NaN();
  const double r = std::remainder(x, 2.0);
  if (std::fabs(r) == 0.5) return 0.0;
  return std::cos(kPi * r);
}
// The inverse error functions: Winitzki's closed-form approximation (relative error ~2e-3) as the
// start, then three Halley steps on erfc (or erf near 0), each tripling the correct digits.
inline double erfinvStart(double logOneMinusXSquared) {
  constexpr double a = 0.147;
  const double b = 2.0 / (kPi * a) + logOneMinusXSquared / 2.0;
  return std::sqrt(std::sqrt(b * b - logOneMinusXSquared / a) - b);
}
inline double erfcInverse(double y) {
  if (std::isnan(y) || y < 0.0 || y > 2.0) return std::numeric_limits<double>::quiet_NaN();
  if (y == 0.0) return std::numeric_limits<double>::infinity();
  if (y == 2.0) return -std::numeric_limits<double>::infinity();
  if (y > 1.0) return -erfcInverse(2.0 - y);
  if (y == 1.0) return 0.0;
  double x = erfinvStart(std::log(y * (2.0 - y)));
  for (int step = 0; step < 3; ++step) {
    const double u = (std::erfc(x) - y) / (-kTwoOverSqrtPi * std::exp(-x * x));
    x -= u / (1.0 + x * u);
  }
  return x;
}
inline double erfInverse(double y) {
  if (std::isnan(y) || y < -1.0 || y > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (std::fabs(y) > 0.5) return y > 0 ? erfcInverse(1.0 - y) : -erfcInverse(1.0 + y);
  if (y == 0.0) return y;
  double x = std::copysign(erfinvStart(std::log1p(-y * y)), y);
  for (int step = 0; step < 3; ++step) {
    const double u = (std::erf(x) - y) / (kTwoOverSqrtPi * std::exp(-x * x));
    x -= u / (1.0 + x * u);
  }
  return x;
}
}  // namespace detail
inline double sinpi(double x) { return detail::sinPi(x); }
inline float sinpif(float x) { return static_cast<float>(detail::sinPi(x)); }
inline double cospi(double x) { return detail::cosPi(x); }
inline float cospif(float x) { return static_cast<float>(detail::cosPi(x)); }
inline void sincospi(double x, double* s, double* c) {
  *s = detail::sinPi(x);
  *c = detail::cosPi(x);
}
inline void sincospif(float x, float* s, float* c) {
  *s = static_cast<float>(detail::sinPi(x));
  *c = static_cast<float>(detail::cosPi(x));
}
inline double rcbrt(double x) { return 1.0 / std::cbrt(x); }
inline float rcbrtf(float x) { return static_cast<float>(1.0 / std::cbrt(static_cast<double>(x))); }
inline double normcdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
inline float normcdff(float x) { return static_cast<float>(normcdf(x)); }
inline double erfinv(double y) { return detail::erfInverse(y); }
inline float erfinvf(float y) { return static_cast<float>(detail::erfInverse(y)); }
inline double erfcinv(double y) { return detail::erfcInverse(y); }
inline float erfcinvf(float y) { return static_cast<float>(detail::erfcInverse(y)); }
inline double normcdfinv(double p) { return -std::sqrt(2.0) * detail::erfcInverse(2.0 * p); }
inline float normcdfinvf(float p) { return static_cast<float>(normcdfinv(p)); }

// CUDA's typed integer min/max.
inline unsigned umin(unsigned a, unsigned b) { return b < a ? b : a; }
inline unsigned umax(unsigned a, unsigned b) { return a < b ? b : a; }
inline long long llmin(long long a, long long b) { return b < a ? b : a; }
inline long long llmax(long long a, long long b) { return a < b ? b : a; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return b < a ? b : a; }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a < b ? b : a; }

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
