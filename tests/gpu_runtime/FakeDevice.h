// A Device over host memory whose copy engine completes a copy only when it is polled a second
// time, so that a pipeline that uses a staging buffer before its copy is done sends wrong bytes. It
// drives the runtime's device paths (chunking, staging, credits) without a GPU.
#ifndef DISPAR_TESTS_GPU_RUNTIME_FAKEDEVICE_H
#define DISPAR_TESTS_GPU_RUNTIME_FAKEDEVICE_H

#include <dispar/gpu/Device.h>

#include <cstring>
#include <memory>
#include <new>
#include <set>
#include <vector>

namespace dispar::test {

/// What the fake devices of this process did (they come and go with each run()).
struct FakeDeviceCounters {
  int startsToHost = 0;
  int startsToDevice = 0;
  int wrongKindCopies = 0;  // a copy whose kind does not match where its pointers are
  int synchronizes = 0;
};
inline FakeDeviceCounters fakeCounters;

class DeferredCopyEngine final : public gpu::CopyEngine {
 public:
  DeferredCopyEngine(int slots, std::size_t capacity)
      : capacity_(capacity), buffers_(static_cast<std::size_t>(slots)), pending_(static_cast<std::size_t>(slots)) {
    for (auto& buffer : buffers_) buffer.assign(capacity, 0xEE);
  }
  int slots() const override { return static_cast<int>(buffers_.size()); }
  std::size_t capacity() const override { return capacity_; }
  void* staging(int slot) override { return buffers_[static_cast<std::size_t>(slot)].data(); }
  void startToHost(int slot, const void* source, std::size_t bytes) override {
    ++fakeCounters.startsToHost;
    start(slot, staging(slot), source, bytes);
  }
  void startToDevice(int slot, void* target, std::size_t bytes) override {
    ++fakeCounters.startsToDevice;
    start(slot, target, staging(slot), bytes);
  }
  bool finished(int slot) override {
    Pending& pending = pending_[static_cast<std::size_t>(slot)];
    if (!pending.active) return true;
    if (!pending.polled) {  // not yet: the copy is "still on the bus"
      pending.polled = true;
      return false;
    }
    std::memcpy(pending.target, pending.source, pending.bytes);
    pending.active = false;
    return true;
  }

 private:
  struct Pending {
    bool active = false;
    bool polled = false;
    void* target = nullptr;
    const void* source = nullptr;
    std::size_t bytes = 0;
  };
  void start(int slot, void* target, const void* source, std::size_t bytes) {
    Pending& pending = pending_[static_cast<std::size_t>(slot)];
    if (pending.active) ++fakeCounters.wrongKindCopies;  // a slot reused under a running copy
    pending = {true, false, target, source, bytes};
  }
  std::size_t capacity_;
  std::vector<std::vector<unsigned char>> buffers_;
  std::vector<Pending> pending_;
};

class HostMemoryDevice final : public gpu::Device {
 public:
  explicit HostMemoryDevice(gpu::TransferSettings transfers) : transfers_(transfers) {}
  void* allocate(std::size_t bytes) override {
    void* pointer = ::operator new(bytes, std::align_val_t{256});
    live_.insert(pointer);
    return pointer;
  }
  void release(void* pointer) noexcept override {
    live_.erase(pointer);
    ::operator delete(pointer, std::align_val_t{256});
  }
  void copy(void* target, const void* source, std::size_t bytes, gpu::CopyKind kind) override {
    const bool targetOnDevice = kind != gpu::CopyKind::DeviceToHost;
    const bool sourceOnDevice = kind != gpu::CopyKind::HostToDevice;
    if (onDevice(target) != targetOnDevice || onDevice(source) != sourceOnDevice) ++fakeCounters.wrongKindCopies;
    std::memcpy(target, source, bytes);
  }
  void zero(void* target, std::size_t bytes) override { std::memset(target, 0, bytes); }
  void synchronize() override { ++fakeCounters.synchronizes; }
  std::unique_ptr<gpu::CopyEngine> makeCopyEngine(int slots, std::size_t capacity) override {
    return std::make_unique<DeferredCopyEngine>(slots, capacity);
  }
  const gpu::TransferSettings& transfers() const override { return transfers_; }

 private:
  /// Whether `pointer` is a device allocation (device_vector and the runtime copy whole ones).
  bool onDevice(const void* pointer) const { return live_.count(const_cast<void*>(pointer)) != 0; }
  gpu::TransferSettings transfers_;
  std::set<void*> live_;
};

/// Gives every CG rank a HostMemoryDevice with these settings.
class FakeBackend final : public gpu::DeviceBackend {
 public:
  explicit FakeBackend(gpu::TransferSettings transfers) : transfers_(transfers) {}
  std::unique_ptr<gpu::Device> start(const gpu::RankInfo&) const override {
    return std::make_unique<HostMemoryDevice>(transfers_);
  }

 private:
  gpu::TransferSettings transfers_;
};

}  // namespace dispar::test

#endif  // DISPAR_TESTS_GPU_RUNTIME_FAKEDEVICE_H
