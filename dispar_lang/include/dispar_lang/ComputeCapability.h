// A CUDA compute capability as DISPAR's files write it, "MAJOR.MINOR" ("9.0"): the cluster description's
// GPUs (docs/streammap.md) and the GPUs of run profiles (docs/runtime.md). Header-only: the runtime
// reads profiles without linking dispar_lang.
#ifndef DISPAR_LANG_COMPUTE_CAPABILITY_H
#define DISPAR_LANG_COMPUTE_CAPABILITY_H

#include <cstdio>
#include <string>

namespace dispar::lang {

/// Parses "MAJOR.MINOR" (non-negative integers, nothing else); false when `text` is not that.
inline bool parseComputeCapability(const std::string& text, int& major, int& minor) {
  int consumed = 0;
  if (text.empty() || text[0] == '+' || text[0] == '-' ||
      std::sscanf(text.c_str(), "%d.%d%n", &major, &minor, &consumed) != 2 || consumed != static_cast<int>(text.size()))
    return false;
  return major >= 0 && minor >= 0;
}

inline std::string formatComputeCapability(int major, int minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace dispar::lang

#endif
