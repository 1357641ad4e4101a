// The Device of a rank that computes on a GPU: cudaMalloc'd memory, and copy engines of pinned
// buffers with one stream and an event per slot. RAII for every CUDA handle.
#ifndef DISPAR_GPU_CUDADEVICE_H
#define DISPAR_GPU_CUDADEVICE_H

#include <dispar/gpu/CudaCheck.h>
#include <dispar/gpu/Device.h>

#include <vector>

namespace dispar::gpu {

/// Page-locked host memory (cudaMallocHost), so that asynchronous copies really are asynchronous.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&&) = delete;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return data_; }

 private:
  void* data_ = nullptr;
};

class CudaStream {
 public:
  CudaStream();
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class CudaEvent {
 public:
  CudaEvent();
  ~CudaEvent();
  CudaEvent(CudaEvent&& other) noexcept;
  CudaEvent& operator=(CudaEvent&&) = delete;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

class CudaCopyEngine final : public CopyEngine {
 public:
  CudaCopyEngine(int slots, std::size_t capacity);
  ~CudaCopyEngine() override;

  int slots() const override { return static_cast<int>(buffers_.size()); }
  std::size_t capacity() const override { return capacity_; }
  void* staging(int slot) override { return buffers_[static_cast<std::size_t>(slot)].get(); }
  void startToHost(int slot, const void* source, std::size_t bytes) override;
  void startToDevice(int slot, void* target, std::size_t bytes) override;
  bool finished(int slot) override;

 private:
  void recordStart(int slot);

  std::size_t capacity_;
  CudaStream stream_;  // PCIe moves one direction's copies one at a time anyway
  std::vector<PinnedBuffer> buffers_;
  std::vector<CudaEvent> events_;
  std::vector<char> pending_;
};

class CudaDevice final : public Device {
 public:
  CudaDevice(int ordinal, TransferSettings transfers) : ordinal_(ordinal), transfers_(transfers) {}

  int ordinal() const { return ordinal_; }
  void* allocate(std::size_t bytes) override;
  void release(void* pointer) noexcept override;
  void copy(void* target, const void* source, std::size_t bytes, CopyKind kind) override;
  void zero(void* target, std::size_t bytes) override;
  void synchronize() override;
  bool busy() override;
  DeviceDescription describe() const override;
  std::unique_ptr<CopyEngine> makeCopyEngine(int slots, std::size_t capacity) override;
  const TransferSettings& transfers() const override { return transfers_; }

 private:
  int ordinal_;
  TransferSettings transfers_;
};

}  // namespace dispar::gpu

#endif  // DISPAR_GPU_CUDADEVICE_H
