#include "streammap/CudaArch.h"

#include <cctype>

namespace dispar::streammap {

bool parseCudaArch(const std::string& text, CudaArch& out) {
  CudaArch arch;
  std::string digits;
  if (text.rfind("sm_", 0) == 0) {
    arch.kind = CudaArch::Kind::Cubin;
    digits = text.substr(3);
  } else if (text.rfind("compute_", 0) == 0) {
    arch.kind = CudaArch::Kind::Ptx;
    digits = text.substr(8);
  } else {
    return false;
  }
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
    arch.variant = digits.back();
    digits.pop_back();
  }
  // The last digit is the minor version, the ones before it the major ("sm_100" is 10.0).
  if (digits.size() < 2 || digits.size() > 3) return false;
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  arch.major = std::stoi(digits.substr(0, digits.size() - 1));
  arch.minor = digits.back() - '0';
  out = arch;
  return true;
}

bool archRunsOn(const CudaArch& arch, int major, int minor) {
  if (arch.variant == 'a') return major == arch.major && minor == arch.minor;
  if (arch.kind == CudaArch::Kind::Cubin || arch.variant == 'f')
    return major == arch.major && minor >= arch.minor;
  return major > arch.major || (major == arch.major && minor >= arch.minor);
}

bool anyArchRunsOn(const std::vector<std::string>& archs, int major, int minor) {
  for (const std::string& name : archs) {
    CudaArch arch;
    if (parseCudaArch(name, arch) && archRunsOn(arch, major, minor)) return true;
  }
  return false;
}

}  // namespace dispar::streammap
