// A simulated GPU for split_for's tests and bench/split: work queued on it finishes a set time after it
// was queued, without using a core, as a GPU body that launches kernels and returns leaves a real one:
// busy() until then, synchronize() waits for it. Memory is host memory.
#ifndef DISPAR_TESTS_SPLIT_ASYNCDEVICE_H
#define DISPAR_TESTS_SPLIT_ASYNCDEVICE_H

#include <dispar/gpu/Device.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace dispar::test {

class AsyncDevice final : public gpu::Device {
 public:
  using Clock = std::chrono::steady_clock;
  void queue(Clock::duration work) {
    const std::lock_guard<std::mutex> lock(mutex_);
    readyAt_ = std::max(readyAt_, Clock::now()) + work;
  }
  bool busy() override {
    const std::lock_guard<std::mutex> lock(mutex_);
    return Clock::now() < readyAt_;
  }
  void synchronize() override {
    Clock::time_point until;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      until = readyAt_;
    }
    std::this_thread::sleep_until(until);
    ++synchronizes;
  }
  void* allocate(std::size_t bytes) override { return ::operator new(bytes); }
  void release(void* pointer) noexcept override { ::operator delete(pointer); }
  void copy(void* target, const void* source, std::size_t bytes, gpu::CopyKind) override {
    std::memcpy(target, source, bytes);
  }
  void zero(void* target, std::size_t bytes) override { std::memset(target, 0, bytes); }
  std::unique_ptr<gpu::CopyEngine> makeCopyEngine(int, std::size_t) override {
    throw std::logic_error("not used by split_for");
  }
  const gpu::TransferSettings& transfers() const override { return settings_; }
  std::atomic<int> synchronizes{0};

 private:
  std::mutex mutex_;
  Clock::time_point readyAt_{};
  gpu::TransferSettings settings_;
};

}  // namespace dispar::test

#endif  // DISPAR_TESTS_SPLIT_ASYNCDEVICE_H
