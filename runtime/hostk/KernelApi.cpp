// The entry points a kernel's host clone calls for shared memory; they forward to the runner of the
// running thread. The barrier entry points live in BlockRunner.cpp, where the switch inlines into them.
#include "BlockRunner.h"
#include "Diagnostics.h"

#include <dispar/hostk/Kernel.h>

namespace dispar::hostk {
namespace detail {

void notInKernel(const char* what) {
  fatal("%s used outside a kernel running on the host path", what);
}

void* sharedSlot(std::size_t size, std::size_t alignment) {
  return runningThread("__shared__").runner->sharedSlot(size, alignment);
}

void* dynamicSharedMemory() { return runningThread("extern __shared__").runner->dynamicShared(); }

}  // namespace detail
}  // namespace dispar::hostk
