// What the host-kernel tests share: random inputs, and the FIR filter's CPU reference.
#ifndef DISPAR_TESTS_HOST_KERNEL_TEST_SUPPORT_H
#define DISPAR_TESTS_HOST_KERNEL_TEST_SUPPORT_H

#include <random>
#include <vector>

namespace dispar::testing {

inline std::vector<float> randomFloats(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(n);
  for (float& v : values) v = dist(gen);
  return values;
}

/// out[i] = sum over k of taps[k] * in[i - k], samples before the first taken as zero; the same order
/// of additions as the kernels, so results compare exactly.
inline std::vector<float> referenceFir(const std::vector<float>& in, const std::vector<float>& taps) {
  std::vector<float> out(in.size());
  for (int i = 0; i < int(in.size()); ++i) {
    float acc = 0.0f;
    for (int k = 0; k < int(taps.size()); ++k)
      if (i - k >= 0) acc += taps[k] * in[i - k];
    out[i] = acc;
  }
  return out;
}

}  // namespace dispar::testing

#endif
