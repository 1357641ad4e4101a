// The seam between the MPI runtime (dispar_runtime, free of CUDA) and the GPU this rank was given
// (dispar_gpu implements it over the CUDA runtime; tests implement it over host memory). See
// docs/gpu-runtime.md.
#ifndef DISPAR_GPU_DEVICE_H
#define DISPAR_GPU_DEVICE_H

#include <cstddef>
#include <memory>
#include <string>

namespace dispar::gpu {

enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice };

/// Moves chunks between device memory and host staging buffers that MPI can address (pinned on a
/// GPU). Each slot has one staging buffer and at most one copy in flight; copies are asynchronous so
/// that the PCIe copy of one chunk overlaps the MPI transfer of another.
class CopyEngine {
 public:
  virtual ~CopyEngine() = default;
  virtual int slots() const = 0;
  /// Bytes each staging buffer holds.
  virtual std::size_t capacity() const = 0;
  virtual void* staging(int slot) = 0;
  /// Starts copying `bytes` from device memory at `source` into staging(slot).
  virtual void startToHost(int slot, const void* source, std::size_t bytes) = 0;
  /// Starts copying the first `bytes` of staging(slot) to device memory at `target`.
  virtual void startToDevice(int slot, void* target, std::size_t bytes) = 0;
  /// Whether the copy last started in `slot` has completed (or none was started). Never blocks.
  virtual bool finished(int slot) = 0;
};

/// How device-memory messages travel (docs/gpu-runtime.md, "Transfer paths").
struct TransferSettings {
  std::size_t chunkBytes = std::size_t{1} << 20;  // DISPAR_CHUNK_BYTES
  int stagingSlots = 3;                           // at least 2: double buffering
  bool mpiAddressable = false;                    // CUDA-aware MPI: device pointers go to MPI directly
};

/// What a device is, for run profiles: its model as its vendor names it ("NVIDIA A100-SXM4-80GB") and
/// what streammap's GPU speed estimate needs (docs/streammap.md); 0 where unknown.
struct DeviceDescription {
  std::string model = "GPU";
  int multiprocessors = 0, clockKHz = 0;
  int ccMajor = 0, ccMinor = 0;  // compute capability
};

/// The device one rank computes on: its memory and how to move data in and out of it.
class Device {
 public:
  virtual ~Device() = default;
  /// Device memory for `bytes` (bytes > 0); throws on failure.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* pointer) noexcept = 0;
  /// Synchronous copy; for DeviceToDevice both pointers are device memory.
  virtual void copy(void* target, const void* source, std::size_t bytes, CopyKind kind) = 0;
  virtual void zero(void* target, std::size_t bytes) = 0;
  /// Waits for the work the VNODE queued on the default stream (before MPI reads device memory itself).
  virtual void synchronize() = 0;
  /// Whether that work is still running (without waiting): split_for's GPU thread computes CPU chunks
  /// meanwhile. A device that cannot tell says false.
  virtual bool busy() { return false; }
  virtual DeviceDescription describe() const { return {}; }
  virtual std::unique_ptr<CopyEngine> makeCopyEngine(int slots, std::size_t capacity) = 0;
  virtual const TransferSettings& transfers() const = 0;
};

/// Who is asking for a device: one rank whose VNODE is CG.
struct RankInfo {
  const char* program;
  const char* vnode;
  const char* location;  // "app.dsp:12:1"
  int rank;
  int replica;
  int localRank;  // rank among the job's ranks on this node (MPI_COMM_TYPE_SHARED)
  int localSize;
};

/// Chooses and opens the device of a CG rank at start-up. nvcc-built programs pass one to
/// dispar::rt::run (dispar::gpu::CudaBackend); without one every CG rank runs on the host path.
class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  /// The device `rank` computes on, or nullptr for the host path. Throws std::runtime_error whose
  /// text is the whole message to abort the job with.
  virtual std::unique_ptr<Device> start(const RankInfo& rank) const = 0;
};

namespace detail {
/// The device this rank computes on while dispar::rt::run executes; nullptr on the host path.
Device* activeDevice();
}  // namespace detail

}  // namespace dispar::gpu

#endif  // DISPAR_GPU_DEVICE_H
