// prepareHeapForLargeInputs (ProcessSetup.cpp): large buffers come from the heap, and the heap is advised
// for transparent huge pages.
#include "streammap/Commands.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

/// The VmFlags of the mapping that holds `address` (/proc/self/smaps), or empty when none holds it.
std::string vmFlagsAt(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long from = 0, to = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &from, &to) == 2) {  // a mapping's first line
      inside = from <= at && at < to;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.substr(8) + " ";
    }
  }
  return "";
}

}  // namespace

// Each test of this executable runs in its own process (gtest_discover_tests), so the set-up stays here.
TEST(ProcessSetup, LargeBuffersComeFromAHeapAdvisedForHugePages) {
  struct stat st{};
  if (::stat("/sys/kernel/mm/transparent_hugepage", &st) != 0)
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  dispar::streammap::prepareHeapForLargeInputs();
  // 64 MiB: above glibc's own mmap threshold, so without the set-up a mapping of its own, not advised.
  // Its first bytes may lie below the heap's old end, before the advised part; its middle may not.
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  void* volatile buffer = std::malloc(kBytes);
  ASSERT_NE(buffer, nullptr);
  const std::string flags = vmFlagsAt(static_cast<char*>(buffer) + kBytes / 2);
  std::free(buffer);
  EXPECT_NE(flags.find(" hg "), std::string::npos) << "VmFlags:" << flags;
}
