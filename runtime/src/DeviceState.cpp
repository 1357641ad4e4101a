// The active device and the memory functions device_vector uses: device memory when a device is
// active, 256-byte aligned host memory (like cudaMalloc's) on the host path.
#include "DeviceState.h"

#include <dispar/device_vector.h>

#include <cstring>
#include <new>
#include <stdexcept>

namespace dispar::gpu::detail {
namespace {

constexpr std::align_val_t kHostAlignment{256};

Device* active = nullptr;

}  // namespace

Device* activeDevice() { return active; }

ScopedActiveDevice::ScopedActiveDevice(Device* device) : previous_(active) { active = device; }
ScopedActiveDevice::~ScopedActiveDevice() { active = previous_; }

bool deviceActive() { return active != nullptr; }

void* allocate(std::size_t bytes, bool& onDevice) {
  onDevice = active != nullptr;
  return onDevice ? active->allocate(bytes) : ::operator new(bytes, kHostAlignment);
}

void release(void* pointer, bool onDevice) noexcept {
  if (!onDevice) {
    ::operator delete(pointer, kHostAlignment);
    return;
  }
  // Device memory that outlives its run() (a static device_vector) goes with the CUDA context at exit.
  if (active != nullptr) active->release(pointer);
}

void copy(void* target, bool targetOnDevice, const void* source, bool sourceOnDevice, std::size_t bytes) {
  if (bytes == 0) return;
  if (!targetOnDevice && !sourceOnDevice) {
    std::memcpy(target, source, bytes);
    return;
  }
  if (active == nullptr) throw std::logic_error("dispar: device memory used after the device was released");
  const CopyKind kind = !targetOnDevice  ? CopyKind::DeviceToHost
                        : sourceOnDevice ? CopyKind::DeviceToDevice
                                         : CopyKind::HostToDevice;
  active->copy(target, source, bytes, kind);
}

void zero(void* target, bool onDevice, std::size_t bytes) {
  if (bytes == 0) return;
  if (!onDevice) {
    std::memset(target, 0, bytes);
    return;
  }
  if (active == nullptr) throw std::logic_error("dispar: device memory used after the device was released");
  active->zero(target, bytes);
}

}  // namespace dispar::gpu::detail

namespace dispar::gpu {
bool onHost() { return detail::activeDevice() == nullptr; }
}  // namespace dispar::gpu
