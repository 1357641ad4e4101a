// dispar::device_vector<T>: an owning, resizable array in the memory kernels use. On a rank that runs
// on a GPU it is device memory (cudaMalloc); on the host path (no GPU, DISPAR_DEVICE=host, a build
// without CUDA) it is host memory, so data() can be handed to a kernel or to its host clone alike.
// Ports take it directly: OutPort<T>::write(const device_vector<T>&), InPort<T>::read(device_vector<T>&).
#ifndef DISPAR_DEVICE_VECTOR_H
#define DISPAR_DEVICE_VECTOR_H

#include <dispar/dispar.h>

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

namespace dispar::gpu::detail {
// Memory of the space the rank computes in (dispar_runtime routes them to the active device).
/// `bytes` > 0; sets `onDevice` to the space the memory is in.
void* allocate(std::size_t bytes, bool& onDevice);
void release(void* pointer, bool onDevice) noexcept;
void copy(void* target, bool targetOnDevice, const void* source, bool sourceOnDevice, std::size_t bytes);
void zero(void* target, bool onDevice, std::size_t bytes);
/// Whether new allocations go to device memory.
bool deviceActive();
}  // namespace dispar::gpu::detail

namespace dispar {

template <class T>
class device_vector {
  static_assert(std::is_trivially_copyable<T>::value, "dispar: device_vector elements must be trivially copyable");

 public:
  using value_type = T;
  using size_type = std::size_t;

  device_vector() = default;
  /// `count` zero-byte elements.
  explicit device_vector(std::size_t count) { resize(count); }
  /// A copy of `values` in the rank's memory.
  explicit device_vector(const std::vector<T>& values) { assign(values); }
  device_vector(const device_vector& other) { assign(other.data_, other.size_, other.onDevice_); }
  device_vector(device_vector&& other) noexcept { swap(other); }
  ~device_vector() { releaseStorage(); }

  device_vector& operator=(const device_vector& other) {
    if (this != &other) assign(other.data_, other.size_, other.onDevice_);
    return *this;
  }
  device_vector& operator=(device_vector&& other) noexcept {
    device_vector moved(std::move(other));
    swap(moved);
    return *this;
  }
  device_vector& operator=(const std::vector<T>& values) {
    assign(values);
    return *this;
  }

  void assign(const std::vector<T>& values) { assign(values.data(), values.size(), false); }
  /// Copies `count` elements from host memory at `values`.
  void assign(const T* values, std::size_t count) { assign(values, count, false); }

  /// The elements, copied to host memory.
  std::vector<T> to_host() const {
    std::vector<T> values;
    copy_to(values);
    return values;
  }
  /// Copies the elements into `values`, resizing it.
  void copy_to(std::vector<T>& values) const {
    values.resize(size_);
    if (size_ != 0) gpu::detail::copy(values.data(), false, data_, onDevice_, bytes());
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t size_bytes() const { return bytes(); }
  std::size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  /// Whether the elements are in device memory (false on the host path).
  bool on_device() const { return onDevice_; }

  /// Keeps the first min(size(), count) elements; new elements are zero bytes.
  void resize(std::size_t count) {
    const std::size_t kept = count < size_ ? count : size_;
    reserveExact(count, kept);
    if (count > kept) gpu::detail::zero(data_ + kept, onDevice_, (count - kept) * sizeof(T));
    size_ = count;
  }
  /// Like resize() but the contents afterwards are unspecified: for a buffer about to be overwritten
  /// (a port read, a kernel's output). Moves the storage to the rank's current memory space.
  void resize_for_overwrite(std::size_t count) {
    reserveExact(count, 0);
    size_ = count;
  }
  void clear() { size_ = 0; }

  void swap(device_vector& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
    std::swap(onDevice_, other.onDevice_);
  }

 private:
  std::size_t bytes() const { return size_ * sizeof(T); }

  void assign(const T* values, std::size_t count, bool valuesOnDevice) {
    reserveExact(count, 0);
    size_ = count;
    if (count != 0) gpu::detail::copy(data_, onDevice_, values, valuesOnDevice, count * sizeof(T));
  }

  /// Storage for `count` elements in the current space, keeping the first `kept`.
  void reserveExact(std::size_t count, std::size_t kept) {
    const bool sameSpace = onDevice_ == gpu::detail::deviceActive() || data_ == nullptr;
    if (count <= capacity_ && sameSpace) return;
    if (count == 0) {
      releaseStorage();
      return;
    }
    bool onDevice = false;
    T* fresh = static_cast<T*>(gpu::detail::allocate(count * sizeof(T), onDevice));
    if (kept != 0) gpu::detail::copy(fresh, onDevice, data_, onDevice_, kept * sizeof(T));
    releaseStorage();
    data_ = fresh;
    capacity_ = count;
    onDevice_ = onDevice;
  }

  void releaseStorage() noexcept {
    if (data_ != nullptr) gpu::detail::release(data_, onDevice_);
    data_ = nullptr;
    size_ = 0;
    capacity_ = 0;
    onDevice_ = false;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  bool onDevice_ = false;
};

// Port overloads declared in dispar.h.
template <class T>
void OutPort<T>::write(const device_vector<T>& values) {
  if (values.on_device())
    detail::portWriteDevice(*state_, values.data(), values.size());
  else
    detail::portWrite(*state_, values.data(), values.size());
}

template <class T>
bool InPort<T>::read(device_vector<T>& values) {
  return detail::portReadDevice(*state_, &InPort::resizeDeviceVector, &values, "a message of any length");
}

template <class T>
void Pipe<T>::write(const device_vector<T>& values) const {
  out().write(values);
}

template <class T>
bool Pipe<T>::read(device_vector<T>& values) const {
  return in().read(values);
}

template <class T>
void* InPort<T>::resizeDeviceVector(void* ctx, std::size_t count, detail::DestinationMode mode) {
  // Never offers its storage as is: it may be in another memory space than the read would choose.
  if (mode == detail::DestinationMode::AlreadySized) return nullptr;
  auto& values = *static_cast<device_vector<T>*>(ctx);
  values.resize_for_overwrite(count);
  return count == 0 ? static_cast<void*>(&values) : static_cast<void*>(values.data());
}

}  // namespace dispar

#endif  // DISPAR_DEVICE_VECTOR_H
