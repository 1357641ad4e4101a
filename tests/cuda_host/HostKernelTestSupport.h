// What the host-kernel tests share: random inputs, the FIR filter's CPU reference, and the registration
// of a hand-written clone.
#ifndef DISPAR_TESTS_HOST_KERNEL_TEST_SUPPORT_H
#define DISPAR_TESTS_HOST_KERNEL_TEST_SUPPORT_H

#include <dispar/hostk.h>

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

/// Registers a fiber-form clone by its own address, as StreamCC registers every kernel: what
/// cudaLaunchKernel, cudaLaunchCooperativeKernel and launches from kernels find clones by.
template <class... Params>
void registerClone(void (*clone)(Params...)) {
  ::dispar::hostk::detail::registerKernel(reinterpret_cast<const void*>(clone), reinterpret_cast<const void*>(clone),
                                          ::dispar::hostk::detail::CloneForm::Fibers,
                                          ::dispar::hostk::detail::argsLauncherFor(clone));
}

}  // namespace dispar::testing

#endif
