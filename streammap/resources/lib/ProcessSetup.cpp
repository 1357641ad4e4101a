#include "streammap/Commands.h"

#include <malloc.h>

namespace dispar::streammap {

void keepFreedMemoryForReuse() {
  constexpr int kLargestBlockKept = 1 << 30;
  mallopt(M_MMAP_THRESHOLD, kLargestBlockKept);
  mallopt(M_TRIM_THRESHOLD, kLargestBlockKept);
}

}  // namespace dispar::streammap
