// CUDA code images as nvcc names them (sm_80, sm_90a, compute_90) and which devices can run them.
#ifndef DISPAR_GPU_CUDAARCH_H
#define DISPAR_GPU_CUDAARCH_H

#include <optional>
#include <string>
#include <vector>

namespace dispar::gpu {

struct CudaArch {
  enum class Kind { Cubin, Ptx };  // sm_XY: machine code; compute_XY: PTX the driver compiles
  Kind kind = Kind::Cubin;
  int major = 0;
  int minor = 0;
  char variant = 0;  // 'a' (architecture-specific), 'f' (family-specific) or 0
};

/// Parses "sm_80", "sm_90a", "sm_100f", "compute_90"; nullopt on anything else.
std::optional<CudaArch> parseCudaArch(const std::string& text);

/// Whether a device of compute capability major.minor runs `arch`: a cubin sm_XY runs on X.Y' with
/// Y' >= Y (sm_XYa only on X.Y); PTX compute_XY is compiled by the driver for any X'.Y' >= X.Y
/// (compute_XYa only on X.Y, compute_XYf on X.Y' with Y' >= Y).
bool archRunsOn(const CudaArch& arch, int major, int minor);

/// Whether any of `archs` runs on major.minor. Unparsable names count as running nowhere.
bool anyArchRunsOn(const std::vector<std::string>& archs, int major, int minor);

/// The names of `archs` that do not parse (for the start-up message).
std::vector<std::string> invalidArchs(const std::vector<std::string>& archs);

}  // namespace dispar::gpu

#endif  // DISPAR_GPU_CUDAARCH_H
