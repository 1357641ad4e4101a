// The exception a failed CUDA call or kernel launch throws inside a VNODE; the runtime turns it into a
// job abort naming the VNODE ("dispar: vnode 'fir' (replica 0, rank 3) failed: cudaMemcpy(...) failed
// at ...: an illegal memory access was encountered").
#ifndef DISPAR_GPU_ERRORS_H
#define DISPAR_GPU_ERRORS_H

#include <stdexcept>
#include <string>

namespace dispar::gpu {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// "kernel 'scale' launched at fir.dsp:20:5 failed: invalid configuration argument".
inline std::string describeLaunchFailure(const char* kernel, const char* location, const char* error) {
  return std::string("kernel '") + kernel + "' launched at " + location + " failed: " + error;
}

}  // namespace dispar::gpu

#endif  // DISPAR_GPU_ERRORS_H
