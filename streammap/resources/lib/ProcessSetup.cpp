#include "streammap/Commands.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace dispar::streammap {

void prepareHeapForLargeInputs() {
  constexpr int kLargestBlockKept = 1 << 30;
  mallopt(M_MMAP_THRESHOLD, kLargestBlockKept);
  mallopt(M_TRIM_THRESHOLD, kLargestBlockKept);

  // Grow the heap once by kHugeHeap (address space only: nothing is touched) and advise the kernel to
  // back it with transparent huge pages, as glibc's `glibc.malloc.hugetlb=1` tunable would; only the
  // environment can set that. Where brk cannot grow (strict overcommit) or THP is off, nothing changes.
  constexpr std::size_t kHugeHeap = std::size_t{512} << 20;
  constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
  mallopt(M_TOP_PAD, static_cast<int>(kHugeHeap));
  const auto before = reinterpret_cast<std::uintptr_t>(sbrk(0));
  void* volatile grow = std::malloc(1 << 20);  // volatile: a malloc/free pair may be optimised away
  std::free(grow);
  const auto after = reinterpret_cast<std::uintptr_t>(sbrk(0));
  mallopt(M_TOP_PAD, 128 << 10);  // later growth: glibc's default step (mallopt(3))
  const std::uintptr_t from = (before + kHugePage - 1) & ~(kHugePage - 1);
  if (after > from) madvise(reinterpret_cast<void*>(from), after - from, MADV_HUGEPAGE);
}

}  // namespace dispar::streammap
