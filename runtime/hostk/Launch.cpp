// launchKernel: CUDA's configuration checks, then the host device runs the grid.
#include "BlockRunner.h"
#include "HostDevice.h"

#include <dispar/hostk/Kernel.h>
#include <dispar/hostk/Launch.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace dispar::hostk::detail {
namespace {

bool validShape(const dim3& shape, const unsigned (&limits)[3]) {
  return shape.x >= 1 && shape.y >= 1 && shape.z >= 1 && shape.x <= limits[0] && shape.y <= limits[1] &&
         shape.z <= limits[2];
}

/// CUDA's limit on nested launches (dynamic parallelism).
constexpr unsigned kMaxNestingDepth = 24;

/// Dynamic parallelism: a launch from a kernel's thread runs the child grid there and then, every block in
/// turn on this OS thread (a runner per nesting depth), before the parent thread goes on. CUDA lets a
/// child grid run at any time before its parent grid ends, so this is one of the schedules a GPU may take.
thread_local unsigned nestedDepth = 0;  ///< grids launched from kernels, running on this OS thread

bool runNested(const KernelLaunch& launch, std::string& failure) {
  thread_local std::vector<std::unique_ptr<BlockRunner>> runners;
  unsigned& depth = nestedDepth;
  if (runners.size() <= depth) runners.push_back(std::make_unique<BlockRunner>(HostDevice::instance().config()));
  BlockRunner& runner = *runners[depth];
  ThreadContext* const parentThread = currentThread;
  ThreadLoopBlock* const parentLoopBlock = currentLoopBlock;
  ++depth;
  bool ok = true;
  const dim3 grid = launch.gridDim;
  for (std::uint64_t block = 0; ok && block < grid.volume(); ++block) {
    const uint3 blockIdx = blockIndex(block, grid);
    currentThread = nullptr;
    currentLoopBlock = nullptr;
    ok = runner.run(launch, blockIdx);
  }
  --depth;
  currentThread = parentThread;
  currentLoopBlock = parentLoopBlock;
  if (!ok) failure = "in a grid launched from a kernel: " + runner.failure();
  return ok;
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
                         const void* closure, CloneForm form, GridKind kind) {
  const bool nested = currentThread != nullptr;
  if (nested && nestedDepth + 1 >= kMaxNestingDepth) return recordError(cudaErrorLaunchMaxDepthExceeded);
  if (nested && kind == GridKind::Cooperative) return recordError(cudaErrorNotSupported);
  if (invoke == nullptr) return recordError(cudaErrorInvalidDeviceFunction);
  if (!validShape(grid, LaunchLimits::kMaxGridDim) || !validShape(block, LaunchLimits::kMaxBlockDim) ||
      block.volume() > LaunchLimits::kMaxThreadsPerBlock)
    return recordError(cudaErrorInvalidConfiguration);
  if (dynamicSharedBytes > LaunchLimits::kMaxDynamicSharedBytes) return recordError(cudaErrorInvalidValue);

  const KernelLaunch launch{invoke, closure, grid, block, dynamicSharedBytes, form};
  std::string failure;
  HostDevice& device = HostDevice::instance();
  if (nested                          ? runNested(launch, failure)
      : kind == GridKind::Cooperative ? device.runCooperative(launch, failure)
                                      : device.run(launch, failure))
    return cudaSuccess;
  std::fprintf(stderr, "dispar hostk: error: %s\n", failure.c_str());
  return recordError(cudaErrorLaunchFailure);
}

void launchFromKernelFailed(const char* kernel, const char* site, cudaError_t error) {
  throw std::runtime_error(std::string("the launch of kernel '") + kernel + "' at " + site +
                           " (dynamic parallelism) failed: " + cudaGetErrorString(error));
}

}  // namespace dispar::hostk::detail

namespace dispar::hostk {

cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args, std::size_t sharedMem,
                             cudaStream_t /*stream: the host path runs every launch to its end at once*/) {
  detail::RegisteredKernel entry{};
  if (!detail::findKernel(func, entry) || entry.launchFromArgs == nullptr)
    return detail::recordError(cudaErrorInvalidDeviceFunction);
  return entry.launchFromArgs(entry.clone, entry.form, detail::GridKind::Independent, gridDim, blockDim, sharedMem,
                              args);
}

cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                        std::size_t sharedMem, cudaStream_t /*stream: as cudaLaunchKernel*/) {
  detail::RegisteredKernel entry{};
  if (!detail::findKernel(func, entry) || entry.launchFromArgs == nullptr)
    return detail::recordError(cudaErrorInvalidDeviceFunction);
  // Before the arguments are read, as CUDA checks the configuration first.
  if (gridDim.volume() > kMaxCooperativeBlocks) return detail::recordError(cudaErrorCooperativeLaunchTooLarge);
  return entry.launchFromArgs(entry.clone, entry.form, detail::GridKind::Cooperative, gridDim, blockDim, sharedMem,
                              args);
}

cudaError_t occupancyMaxActiveBlocks(int* numBlocks, int blockSize, std::size_t dynamicSMemSize) {
  if (numBlocks == nullptr || blockSize <= 0) return detail::recordError(cudaErrorInvalidValue);
  *numBlocks = static_cast<unsigned>(blockSize) <= LaunchLimits::kMaxThreadsPerBlock &&
                       dynamicSMemSize <= LaunchLimits::kMaxDynamicSharedBytes
                   ? 1
                   : 0;
  return cudaSuccess;
}

}  // namespace dispar::hostk
