// launchKernel: CUDA's configuration checks, then the host device runs the grid.
#include "BlockRunner.h"
#include "HostDevice.h"

#include <dispar/hostk/Kernel.h>
#include <dispar/hostk/Launch.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace dispar::hostk::detail {
namespace {

bool validShape(const dim3& shape, const unsigned (&limits)[3]) {
  return shape.x >= 1 && shape.y >= 1 && shape.z >= 1 && shape.x <= limits[0] && shape.y <= limits[1] &&
         shape.z <= limits[2];
}

}  // namespace

namespace {
std::mutex& registryMutex() {
  static std::mutex mutex;
  return mutex;
}
std::vector<RegisteredKernel>& registry() {
  static std::vector<RegisteredKernel> kernels;
  return kernels;
}
}  // namespace

bool registerKernel(const void* kernel, const void* clone, CloneForm form, ArgsLauncher launchFromArgs) {
  const std::lock_guard<std::mutex> lock(registryMutex());
  registry().push_back(RegisteredKernel{kernel, clone, form, launchFromArgs});
  return true;
}

bool findKernel(const void* kernel, RegisteredKernel& found) {
  const std::lock_guard<std::mutex> lock(registryMutex());
  for (const RegisteredKernel& entry : registry())
    if (entry.kernel == kernel || entry.clone == kernel) {
      found = entry;
      return true;
    }
  return false;
}

cudaError_t launchKernel(const dim3& grid, const dim3& block, std::size_t dynamicSharedBytes, KernelInvoker invoke,
                         const void* closure, CloneForm form) {
  if (currentThread != nullptr) return recordError(cudaErrorNotSupported);  // dynamic parallelism
  if (invoke == nullptr) return recordError(cudaErrorInvalidDeviceFunction);
  if (!validShape(grid, LaunchLimits::kMaxGridDim) || !validShape(block, LaunchLimits::kMaxBlockDim) ||
      block.volume() > LaunchLimits::kMaxThreadsPerBlock)
    return recordError(cudaErrorInvalidConfiguration);
  if (dynamicSharedBytes > LaunchLimits::kMaxDynamicSharedBytes) return recordError(cudaErrorInvalidValue);

  const KernelLaunch launch{invoke, closure, grid, block, dynamicSharedBytes, form};
  std::string failure;
  if (HostDevice::instance().run(launch, failure)) return cudaSuccess;
  std::fprintf(stderr, "dispar hostk: error: %s\n", failure.c_str());
  return recordError(cudaErrorLaunchFailure);
}

}  // namespace dispar::hostk::detail

namespace dispar::hostk {

cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args, std::size_t sharedMem,
                             cudaStream_t /*stream: the host path runs every launch to its end at once*/) {
  detail::RegisteredKernel entry{};
  if (!detail::findKernel(func, entry) || entry.launchFromArgs == nullptr)
    return detail::recordError(cudaErrorInvalidDeviceFunction);
  return entry.launchFromArgs(entry.clone, entry.form, gridDim, blockDim, sharedMem, args);
}

}  // namespace dispar::hostk
