// CUDA architecture names as nvcc spells them (sm_80, sm_90a, compute_90) and which devices run them.
#ifndef STREAMMAP_CUDA_ARCH_H
#define STREAMMAP_CUDA_ARCH_H

#include <string>
#include <vector>

namespace dispar::streammap {

struct CudaArch {
  enum class Kind { Cubin, Ptx };  // sm_XY: machine code; compute_XY: PTX the driver compiles
  Kind kind = Kind::Cubin;
  int major = 0;
  int minor = 0;
  char variant = 0;  // 'a' (architecture-specific), 'f' (family-specific) or 0
};

/// Parses "sm_80", "sm_90a", "sm_100f", "compute_90"; false on anything else.
bool parseCudaArch(const std::string& text, CudaArch& out);

/// Can a device of compute capability major.minor run this code? A cubin sm_XY runs on devices of the
/// same major version with minor >= Y (sm_XYa only on X.Y exactly); PTX compute_XY on any device with
/// capability >= X.Y (compute_XYa only on X.Y).
bool archRunsOn(const CudaArch& arch, int major, int minor);

/// Does any of `archs` run on major.minor? Unparsable names are ignored.
bool anyArchRunsOn(const std::vector<std::string>& archs, int major, int minor);

}  // namespace dispar::streammap

#endif
