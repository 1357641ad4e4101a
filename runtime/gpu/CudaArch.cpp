#include <dispar/gpu/CudaArch.h>

#include <cctype>

namespace dispar::gpu {

std::optional<CudaArch> parseCudaArch(const std::string& text) {
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

bool archRunsOn(const CudaArch& arch, int major, int minor) {
  if (arch.variant == 'a') return major == arch.major && minor == arch.minor;
  if (arch.kind == CudaArch::Kind::Cubin || arch.variant == 'f') return major == arch.major && minor >= arch.minor;
  return major > arch.major || (major == arch.major && minor >= arch.minor);
}

bool anyArchRunsOn(const std::vector<std::string>& archs, int major, int minor) {
  for (const std::string& name : archs)
    if (const auto arch = parseCudaArch(name); arch && archRunsOn(*arch, major, minor)) return true;
  return false;
}

std::vector<std::string> invalidArchs(const std::vector<std::string>& archs) {
  std::vector<std::string> invalid;
  for (const std::string& name : archs)
    if (!parseCudaArch(name)) invalid.push_back(name);
  return invalid;
}

}  // namespace dispar::gpu
