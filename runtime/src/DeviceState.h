// The device this rank computes on while dispar::rt::run executes (<dispar/gpu/Device.h>).
#ifndef DISPAR_RUNTIME_DEVICESTATE_H
#define DISPAR_RUNTIME_DEVICESTATE_H

#include <dispar/gpu/Device.h>

namespace dispar::gpu::detail {

/// Makes `device` the active one (nullptr: the host path) for the lifetime of this object.
class ScopedActiveDevice {
 public:
  explicit ScopedActiveDevice(Device* device);
  ~ScopedActiveDevice();
  ScopedActiveDevice(const ScopedActiveDevice&) = delete;
  ScopedActiveDevice& operator=(const ScopedActiveDevice&) = delete;

 private:
  Device* previous_;
};

}  // namespace dispar::gpu::detail

#endif  // DISPAR_RUNTIME_DEVICESTATE_H
