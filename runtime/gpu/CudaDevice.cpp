#include "CudaDevice.h"

#include <utility>

namespace dispar::gpu {

PinnedBuffer::PinnedBuffer(std::size_t bytes) { DISPAR_CUDA(cudaMallocHost(&data_, bytes)); }
PinnedBuffer::~PinnedBuffer() {
  if (data_ != nullptr) cudaFreeHost(data_);
}
PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept : data_(std::exchange(other.data_, nullptr)) {}

// A blocking stream: its copies wait for kernels the VNODE launched on the default stream.
CudaStream::CudaStream() { DISPAR_CUDA(cudaStreamCreate(&stream_)); }
CudaStream::~CudaStream() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

CudaEvent::CudaEvent() { DISPAR_CUDA(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
CudaEvent::~CudaEvent() {
  if (event_ != nullptr) cudaEventDestroy(event_);
}
CudaEvent::CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

CudaCopyEngine::CudaCopyEngine(int slots, std::size_t capacity) : capacity_(capacity) {
  buffers_.reserve(static_cast<std::size_t>(slots));
  events_.reserve(static_cast<std::size_t>(slots));
  for (int slot = 0; slot < slots; ++slot) {
    buffers_.emplace_back(capacity);
    events_.emplace_back();
  }
  pending_.assign(static_cast<std::size_t>(slots), 0);
}

CudaCopyEngine::~CudaCopyEngine() {
  // The buffers must not be freed under a copy still running (an aborted transfer).
  cudaStreamSynchronize(stream_.get());
}

void CudaCopyEngine::recordStart(int slot) {
  DISPAR_CUDA(cudaEventRecord(events_[static_cast<std::size_t>(slot)].get(), stream_.get()));
  pending_[static_cast<std::size_t>(slot)] = 1;
}

void CudaCopyEngine::startToHost(int slot, const void* source, std::size_t bytes) {
  DISPAR_CUDA(cudaMemcpyAsync(staging(slot), source, bytes, cudaMemcpyDeviceToHost, stream_.get()));
  recordStart(slot);
}

void CudaCopyEngine::startToDevice(int slot, void* target, std::size_t bytes) {
  DISPAR_CUDA(cudaMemcpyAsync(target, staging(slot), bytes, cudaMemcpyHostToDevice, stream_.get()));
  recordStart(slot);
}

bool CudaCopyEngine::finished(int slot) {
  auto& pending = pending_[static_cast<std::size_t>(slot)];
  if (!pending) return true;
  const cudaError_t state = cudaEventQuery(events_[static_cast<std::size_t>(slot)].get());
  if (state == cudaErrorNotReady) return false;
  if (state != cudaSuccess) throwCudaFailure(state, "cudaEventQuery(copy done)", __FILE__, __LINE__);
  pending = 0;
  return true;
}

void* CudaDevice::allocate(std::size_t bytes) {
  void* pointer = nullptr;
  DISPAR_CUDA(cudaMalloc(&pointer, bytes));
  return pointer;
}

void CudaDevice::release(void* pointer) noexcept { cudaFree(pointer); }

void CudaDevice::copy(void* target, const void* source, std::size_t bytes, CopyKind kind) {
  constexpr cudaMemcpyKind kKinds[] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice};
  DISPAR_CUDA(cudaMemcpy(target, source, bytes, kKinds[static_cast<int>(kind)]));
}

void CudaDevice::synchronize() { DISPAR_CUDA(cudaStreamSynchronize(nullptr)); }

DeviceDescription CudaDevice::describe() const {
  cudaDeviceProp properties{};
  DISPAR_CUDA(cudaGetDeviceProperties(&properties, ordinal_));
  DeviceDescription description;
  description.model = properties.name;
  description.multiprocessors = properties.multiProcessorCount;
  description.ccMajor = properties.major;
  description.ccMinor = properties.minor;
  // The clock as an attribute: CUDA 13 dropped cudaDeviceProp::clockRate.
  DISPAR_CUDA(cudaDeviceGetAttribute(&description.clockKHz, cudaDevAttrClockRate, ordinal_));
  return description;
}

bool CudaDevice::busy() {
  const cudaError_t state = cudaStreamQuery(nullptr);
  if (state == cudaErrorNotReady) return true;
  DISPAR_CUDA(state);  // an error of the queued work: reported now rather than at the next synchronize
  return false;
}

void CudaDevice::zero(void* target, std::size_t bytes) { DISPAR_CUDA(cudaMemset(target, 0, bytes)); }

std::unique_ptr<CopyEngine> CudaDevice::makeCopyEngine(int slots, std::size_t capacity) {
  return std::make_unique<CudaCopyEngine>(slots, capacity);
}

}  // namespace dispar::gpu
