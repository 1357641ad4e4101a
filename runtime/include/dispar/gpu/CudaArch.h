// CUDA code images as nvcc names them (sm_80, sm_90a, compute_90) and which devices can run them.
// Header-only and dependency-free: the runtime (start-up check), streammap check and disparcc
// (--cuda-arch) share these rules.
#ifndef DISPAR_GPU_CUDAARCH_H
#define DISPAR_GPU_CUDAARCH_H

#include <cctype>
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
inline std::optional<CudaArch> parseCudaArch(const std::string& text) {
  CudaArch arch;
  std::string digits;
  if (text.rfind("sm_", 0) == 0) {
    arch.kind = CudaArch::Kind::Cubin;
    digits = text.substr(3);
  } else if (text.rfind("compute_", 0) == 0) {
    arch.kind = CudaArch::Kind::Ptx;
    digits = text.substr(8);
  } else {
    return std::nullopt;
  }
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
    arch.variant = digits.back();
    digits.pop_back();
  }
  // The last digit is the minor version: sm_80 is 8.0, sm_100 is 10.0, sm_121 is 12.1.
  if (digits.size() < 2 || digits.size() > 3) return std::nullopt;
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  if (digits.front() == '0') return std::nullopt;
  arch.major = std::stoi(digits.substr(0, digits.size() - 1));
  arch.minor = digits.back() - '0';
  return arch;
}

/// Whether a device of compute capability major.minor runs `arch`: a cubin sm_XY runs on X.Y' with
/// Y' >= Y (sm_XYa only on X.Y); PTX compute_XY is compiled by the driver for any X'.Y' >= X.Y
/// (compute_XYa only on X.Y, compute_XYf on X.Y' with Y' >= Y).
inline bool archRunsOn(const CudaArch& arch, int major, int minor) {
  if (arch.variant == 'a') return major == arch.major && minor == arch.minor;
  if (arch.kind == CudaArch::Kind::Cubin || arch.variant == 'f') return major == arch.major && minor >= arch.minor;
  return major > arch.major || (major == arch.major && minor >= arch.minor);
}

/// Whether any of `archs` runs on major.minor. Unparsable names count as running nowhere.
inline bool anyArchRunsOn(const std::vector<std::string>& archs, int major, int minor) {
  for (const std::string& name : archs)
    if (const auto arch = parseCudaArch(name); arch && archRunsOn(*arch, major, minor)) return true;
  return false;
}

/// The names of `archs` that do not parse (for the start-up message).
inline std::vector<std::string> invalidArchs(const std::vector<std::string>& archs) {
  std::vector<std::string> invalid;
  for (const std::string& name : archs)
    if (!parseCudaArch(name)) invalid.push_back(name);
  return invalid;
}

}  // namespace dispar::gpu

#endif  // DISPAR_GPU_CUDAARCH_H
