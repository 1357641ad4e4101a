// cuComplex.h's functions (make_cuComplex, cuCmulf, cuCabs, ...) for builds without the CUDA toolkit,
// on the global float2 / double2 that cuComplex and cuDoubleComplex are in CUDA. Include after the
// global vector types (<dispar/cuda_shim.h>, or the frontend's parse prelude).
#ifndef DISPAR_HOSTLIB_COMPLEX_H
#define DISPAR_HOSTLIB_COMPLEX_H

#include <cmath>

using cuFloatComplex = float2;
using cuComplex = float2;
using cuDoubleComplex = double2;

inline cuFloatComplex make_cuFloatComplex(float r, float i) { return cuFloatComplex{r, i}; }
inline cuComplex make_cuComplex(float r, float i) { return cuComplex{r, i}; }
inline cuDoubleComplex make_cuDoubleComplex(double r, double i) { return cuDoubleComplex{r, i}; }
inline float cuCrealf(cuFloatComplex x) { return x.x; }
inline float cuCimagf(cuFloatComplex x) { return x.y; }
inline double cuCreal(cuDoubleComplex x) { return x.x; }
inline double cuCimag(cuDoubleComplex x) { return x.y; }
inline cuFloatComplex cuConjf(cuFloatComplex x) { return cuFloatComplex{x.x, -x.y}; }
inline cuDoubleComplex cuConj(cuDoubleComplex x) { return cuDoubleComplex{x.x, -x.y}; }
inline cuFloatComplex cuCaddf(cuFloatComplex a, cuFloatComplex b) { return cuFloatComplex{a.x + b.x, a.y + b.y}; }
inline cuDoubleComplex cuCadd(cuDoubleComplex a, cuDoubleComplex b) { return cuDoubleComplex{a.x + b.x, a.y + b.y}; }
inline cuFloatComplex cuCsubf(cuFloatComplex a, cuFloatComplex b) { return cuFloatComplex{a.x - b.x, a.y - b.y}; }
inline cuDoubleComplex cuCsub(cuDoubleComplex a, cuDoubleComplex b) { return cuDoubleComplex{a.x - b.x, a.y - b.y}; }
inline cuFloatComplex cuCmulf(cuFloatComplex a, cuFloatComplex b) {
  return cuFloatComplex{a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x};
}
inline cuDoubleComplex cuCmul(cuDoubleComplex a, cuDoubleComplex b) {
  return cuDoubleComplex{a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x};
}
// Division scaled as cuComplex.h does it, to avoid overflow in |b|^2.
inline cuFloatComplex cuCdivf(cuFloatComplex a, cuFloatComplex b) {
  const float s = std::fabs(b.x) + std::fabs(b.y);
  const float ars = a.x / s, ais = a.y / s, brs = b.x / s, bis = b.y / s;
  const float scale = 1.0f / (brs * brs + bis * bis);
  return cuFloatComplex{(ars * brs + ais * bis) * scale, (ais * brs - ars * bis) * scale};
}
inline cuDoubleComplex cuCdiv(cuDoubleComplex a, cuDoubleComplex b) {
  const double s = std::fabs(b.x) + std::fabs(b.y);
  const double ars = a.x / s, ais = a.y / s, brs = b.x / s, bis = b.y / s;
  const double scale = 1.0 / (brs * brs + bis * bis);
  return cuDoubleComplex{(ars * brs + ais * bis) * scale, (ais * brs - ars * bis) * scale};
}
inline float cuCabsf(cuFloatComplex x) { return std::hypot(x.x, x.y); }
inline double cuCabs(cuDoubleComplex x) { return std::hypot(x.x, x.y); }
inline cuFloatComplex cuCfmaf(cuFloatComplex x, cuFloatComplex y, cuFloatComplex d) {
  return cuCaddf(cuCmulf(x, y), d);
}
inline cuDoubleComplex cuCfma(cuDoubleComplex x, cuDoubleComplex y, cuDoubleComplex d) {
  return cuCadd(cuCmul(x, y), d);
}
inline cuDoubleComplex cuComplexFloatToDouble(cuFloatComplex x) { return cuDoubleComplex{x.x, x.y}; }
inline cuFloatComplex cuComplexDoubleToFloat(cuDoubleComplex x) {
  return cuFloatComplex{static_cast<float>(x.x), static_cast<float>(x.y)};
}

#endif  // DISPAR_HOSTLIB_COMPLEX_H
