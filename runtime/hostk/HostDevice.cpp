#include "HostDevice.h"

#include <algorithm>
#include <memory>
#include <system_error>

namespace dispar::hostk::detail {

HostDevice& HostDevice::instance() {
  static HostDevice device(HostConfig::fromEnvironment());
  return device;
}

HostDevice::HostDevice(const HostConfig& config) : config_(config) {
  for (unsigned i = 1; i < config_.threads; ++i) helpers_.emplace_back([this] { helperMain(); });
}

HostDevice::~HostDevice() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& helper : helpers_) helper.join();
}

BlockRunner& HostDevice::callerRunner() {
  // Every thread that launches gets its own runner, kept for its later launches.
  thread_local std::unique_ptr<BlockRunner> runner;
  if (!runner) runner = std::make_unique<BlockRunner>(config_);
  return *runner;
}

void HostDevice::helperMain() {
  BlockRunner runner(config_);
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    runBlocks(runner);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--busyHelpers_ == 0) finished_.notify_all();
    }
  }
}

namespace {

/// The blocks a host thread takes at a time: a run of consecutive blocks, so that the threads do not meet
/// at the shared counter for every block (the 65,536 blocks of a reduction ran hardly faster on two threads
/// than on one), and at least four runs per host thread, so that a slow run is made up by the others.
/// A grid-loop clone runs its run as one loop: there, runs cover whole rows of the grid where they can.
std::uint64_t blocksPerRun(const dim3& grid, unsigned threads, CloneForm form) {
  const std::uint64_t blocks = grid.volume();
  std::uint64_t run = std::max<std::uint64_t>(1, blocks / (std::uint64_t{threads} * 4));
  if (form == CloneForm::GridLoops && run > grid.x) run -= run % grid.x;
  return run;
}

}  // namespace

void HostDevice::runBlocks(BlockRunner& runner) {
  const KernelLaunch& launch = *launch_;
  const dim3 grid = launch.gridDim;
  const bool gridLoops = launch.form == CloneForm::GridLoops;
  for (;;) {
    const std::uint64_t first = nextBlock_.fetch_add(blocksPerRun_, std::memory_order_relaxed);
    if (first >= blockCount_ || failed_.load(std::memory_order_relaxed)) return;
    const std::uint64_t end = std::min(blockCount_, first + blocksPerRun_);
    bool ran = true;
    if (gridLoops) {
      ran = runner.runGridLoops(launch, first, end - first);
    } else {
      for (std::uint64_t block = first; ran && block < end; ++block) {
        if (block > first && failed_.load(std::memory_order_relaxed)) return;
        ran = runner.run(launch, blockIndex(block, grid));
      }
    }
    if (!ran) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failed_.exchange(true)) failure_ = runner.failure();
      return;
    }
  }
}

bool HostDevice::run(const KernelLaunch& launch, std::string& failure) {
  std::lock_guard<std::mutex> serial(launchMutex_);
  const std::uint64_t blocks = launch.gridDim.volume();
  const bool useHelpers = !helpers_.empty() && blocks > 1;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    launch_ = &launch;
    blockCount_ = blocks;
    blocksPerRun_ = blocksPerRun(launch.gridDim, config_.threads, launch.form);
    nextBlock_.store(0, std::memory_order_relaxed);
    failed_.store(false, std::memory_order_relaxed);
    failure_.clear();
    if (useHelpers) {
      busyHelpers_ = static_cast<unsigned>(helpers_.size());
      ++generation_;
    }
  }
  if (useHelpers) wake_.notify_all();
  runBlocks(callerRunner());
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [&] { return busyHelpers_ == 0; });
  launch_ = nullptr;
  if (!failed_.load()) return true;
  failure = failure_;
  return false;
}

bool HostDevice::runCooperative(KernelLaunch launch, std::string& failure) {
  std::lock_guard<std::mutex> serial(launchMutex_);
  const dim3 grid = launch.gridDim;
  const std::uint64_t blocks = grid.volume();
  GridBarrier barrier(blocks);
  launch.gridBarrier = &barrier;
  std::vector<std::string> failures(blocks);
  auto runBlock = [&](std::uint64_t block, BlockRunner& runner) {
    const uint3 blockIdx = blockIndex(block, grid);
    if (!runner.run(launch, blockIdx)) failures[block] = runner.failure();
    barrier.leave();
  };
  std::vector<std::thread> others;
  others.reserve(blocks - 1);
  std::uint64_t started = 1;
  try {
    for (; started < blocks; ++started)
      others.emplace_back([&, started] {
        BlockRunner runner(config_);
        runBlock(started, runner);
      });
  } catch (const std::system_error& error) {
    // The blocks that could not start never arrive: the others must not wait for them.
    failures[started] = std::string("cannot start an OS thread for each block of a cooperative launch of ") +
                        std::to_string(blocks) + " blocks: " + error.what();
    for (std::uint64_t block = started; block < blocks; ++block) barrier.leave();
  }
  runBlock(0, callerRunner());
  for (std::thread& other : others) other.join();
  for (const std::string& text : failures)
    if (!text.empty()) {
      failure = text;
      return false;
    }
  return true;
}

}  // namespace dispar::hostk::detail
