// The "host device": a persistent pool of OS threads that run the blocks of a launch in parallel, each
// with its own BlockRunner (fiber stacks and shared memory allocated once, reused for every block).
// The launching thread works too, so a pool of N threads has N-1 helpers.
#ifndef DISPAR_HOSTK_HOSTDEVICE_H
#define DISPAR_HOSTK_HOSTDEVICE_H

#include "BlockRunner.h"
#include "HostConfig.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dispar::hostk::detail {

class HostDevice {
 public:
  /// The process's host device, started on first use.
  static HostDevice& instance();

  explicit HostDevice(const HostConfig& config);
  ~HostDevice();
  HostDevice(const HostDevice&) = delete;
  HostDevice& operator=(const HostDevice&) = delete;

  /// Runs every block of `launch` and returns when all have finished. False when a kernel thread
  /// failed; `failure` then says where and why.
  bool run(const KernelLaunch& launch, std::string& failure);
  /// As run, for a cooperative launch: every block at once, each on an OS thread of its own (the caller
  /// runs the first), meeting at grid_group::sync() (GridBarrier.h).
  bool runCooperative(KernelLaunch launch, std::string& failure);

  const HostConfig& config() const { return config_; }

 private:
  void helperMain();
  void runBlocks(BlockRunner& runner);
  BlockRunner& callerRunner();

  HostConfig config_;
  std::vector<std::thread> helpers_;
  std::mutex launchMutex_;  ///< one launch at a time

  // The launch in progress, shared with the helpers.
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  const KernelLaunch* launch_ = nullptr;
  std::uint64_t generation_ = 0;
  unsigned busyHelpers_ = 0;
  bool stopping_ = false;
  std::uint64_t blockCount_ = 0;
  std::uint64_t blocksPerRun_ = 1;  ///< consecutive blocks a thread takes at a time
  std::atomic<std::uint64_t> nextBlock_{0};
  std::atomic<bool> failed_{false};
  std::string failure_;  ///< guarded by mutex_
};

}  // namespace dispar::hostk::detail

#endif  // DISPAR_HOSTK_HOSTDEVICE_H
