// The DISPAR language: what a .dsp file includes.
//
//   PIPE(T, name);                                  a typed one-way channel between two VNODEs
//   VNODE(name, IN(p)..., OUT(q)...) { body }        a unit of computation and the ports it uses
//   #pragma streamap resource(cpu|gpu) ...          see docs/language.md
//
// The macros expand to ordinary C++ so that Clang sees a normal AST: a PIPE is a file-scope object of
// type dispar::Pipe<T>, a VNODE is a function `dispar_vnode_<name>_L<line>` whose parameters are references to
// dispar::InPort<T> / dispar::OutPort<T> named after the pipes (shadowing them inside the body). The
// frontend recognises exactly these shapes; StreamCC generates the code that calls the functions.
#ifndef DISPAR_DISPAR_H
#define DISPAR_DISPAR_H

#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace dispar {

/// The program's command-line arguments (argv[1..]), as given to every rank.
const std::vector<std::string>& args();
/// Index of this VNODE instance among its replicas, in [0, replicas()).
int replica();
/// Number of replicas of the running VNODE (`replicas(K)` in its resource directive, default 1).
int replicas();

namespace gpu {
/// Whether this rank's kernels run on the host (their host clones) rather than on a GPU. Decided once
/// at start-up (docs/gpu-runtime.md); true for CO ranks and in builds without CUDA.
bool onHost();
}  // namespace gpu

/// Device memory (<dispar/device_vector.h>); ports accept it directly.
template <class T>
class device_vector;

namespace detail {
struct PortState;  // owned by the runtime; one per port end of this rank

// How a destination is asked for room.
enum class DestinationMode {
  Resize,        // make room for exactly `count` elements
  AlreadySized,  // only if it already holds exactly `count` elements; never resize or reallocate
};
// Receives one message into a destination the caller chooses once it knows the element count.
// `destination(ctx, count, mode)` returns where to store `count` elements, or nullptr when the caller
// cannot take that many (the runtime then reports the mismatch with `expectation`) or, for
// AlreadySized, does not hold exactly that many now (the runtime then probes the message's size first).
using DestinationFn = void* (*)(void* ctx, std::size_t count, DestinationMode mode);
void portWrite(PortState& port, const void* data, std::size_t count);
bool portRead(PortState& port, DestinationFn destination, void* ctx, const char* expectation);
// Receives a message of exactly one element into `element` without a probe round.
bool portReadElement(PortState& port, void* element);
void portClose(PortState& port);
// Item-level access: items are batched into messages (docs/language.md, "Items"). The typed ports
// work inline on the port's item window, [next, end) of runtime-owned memory: an output port fills it
// (the free room of the batch being built), an input port empties it (the items received, not yet
// popped). The calls below are the slow paths: set up the window, send a full batch, receive more,
// report errors.
struct ItemWindow {
  unsigned char* next = nullptr;
  unsigned char* end = nullptr;
};
ItemWindow& portItemWindow(PortState& port);
void portMakeRoom(PortState& port);  // output: fixes item access; sends the batch if it is full
void portFlush(PortState& port);
bool portWaitItems(PortState& port, std::size_t count);
void portPeek(PortState& port, std::size_t index, void* item);
void portPop(PortState& port, void* item);
void portDrop(PortState& port, std::size_t count);
// As portWrite / portRead, for memory of the active device (<dispar/gpu/Device.h>): chunked and
// pipelined through pinned buffers. On the host path they are portWrite / portRead.
void portWriteDevice(PortState& port, const void* data, std::size_t count);
bool portReadDevice(PortState& port, DestinationFn destination, void* ctx, const char* expectation);

template <class T, class U>
inline constexpr bool kAlwaysFalse = false;
}  // namespace detail

template <class T>
class Pipe;

/// The writing end of a pipe inside the VNODE that declares OUT(pipe).
template <class T>
class OutPort {
 public:
  using element_type = T;
  explicit OutPort(detail::PortState& state) : state_(&state), items_(&detail::portItemWindow(state)) {}

  /// One message of one element.
  void write(const T& value) { detail::portWrite(*state_, &value, 1); }
  /// One message of values.size() elements.
  void write(const std::vector<T>& values) { detail::portWrite(*state_, values.data(), values.size()); }
  /// One message of `count` elements starting at `data`.
  void write(const T* data, std::size_t count) { detail::portWrite(*state_, data, count); }
  /// One message of values.size() elements from device memory (defined in <dispar/device_vector.h>).
  void write(const device_vector<T>& values);
  /// Ends the stream early (after sending any pushed items); leaving the VNODE closes every output port
  /// that is still open.
  void close() { detail::portClose(*state_); }

  // Items (StreamIt's push). A port is used either with write() or with push(), not both.
  /// Appends one item to the stream; items travel batched into messages of about 4 KiB.
  void push(const T& item) {
    if (items_->next == items_->end) detail::portMakeRoom(*state_);
    std::memcpy(items_->next, &item, sizeof(T));
    items_->next += sizeof(T);
  }
  /// Sends the items pushed so far now, rather than when the batch is full (a reader waiting on them
  /// across a feedback loop needs this); close() and leaving the VNODE flush too.
  void flush() { detail::portFlush(*state_); }

  // Element-type mismatches: the frontend reports them with the pipe's name and location.
  template <class U>
  void push(const U&) {
#ifndef DISPAR_FRONTEND
    static_assert(detail::kAlwaysFalse<T, U>, "dispar: pushed item type does not match the pipe's element type");
#endif
  }
  template <class U>
  void write(const std::vector<U>&) {
#ifndef DISPAR_FRONTEND
    static_assert(detail::kAlwaysFalse<T, U>, "dispar: vector element type does not match the pipe's element type");
#endif
  }
  template <class U>
  void write(const U*, std::size_t) {
#ifndef DISPAR_FRONTEND
    static_assert(detail::kAlwaysFalse<T, U>, "dispar: pointer element type does not match the pipe's element type");
#endif
  }

 private:
  detail::PortState* state_;
  detail::ItemWindow* items_;
};

/// The reading end of a pipe inside the VNODE that declares IN(pipe).
template <class T>
class InPort {
 public:
  using element_type = T;
  explicit InPort(detail::PortState& state) : state_(&state), items_(&detail::portItemWindow(state)) {}

  /// Receives a one-element message; false at end of stream. A message of another size is an error.
  bool read(T& value) { return detail::portReadElement(*state_, &value); }
  /// Receives a message of any length, resizing `values`; false at end of stream.
  bool read(std::vector<T>& values) {
    return detail::portRead(*state_, &InPort::resizeVector, &values, "a message of any length");
  }
  /// Receives a message of any length into device memory, resizing `values`; false at end of stream.
  /// Defined in <dispar/device_vector.h>.
  bool read(device_vector<T>& values);

  // Items (StreamIt's peek/pop), whatever the message boundaries. A port is used either with read()
  // or with these, not both.
  /// Blocks until `count` items are buffered; false when the stream ends with fewer.
  bool wait_items(std::size_t count) {
    return count <= buffered() || detail::portWaitItems(*state_, count);
  }
  /// Items buffered now (what peek can reach without waiting).
  std::size_t buffered() const { return static_cast<std::size_t>(items_->end - items_->next) / sizeof(T); }
  /// The index-th buffered item (0 is the next to pop); index < buffered(), else an error.
  T peek(std::size_t index) {
    T item;
    if (index < buffered())
      std::memcpy(&item, items_->next + index * sizeof(T), sizeof(T));
    else
      detail::portPeek(*state_, index, &item);
    return item;
  }
  /// Removes and returns the next item, waiting for it; an error at the end of the stream.
  T pop() {
    T item;
    if (items_->next != items_->end) {
      std::memcpy(&item, items_->next, sizeof(T));
      items_->next += sizeof(T);
    } else {
      detail::portPop(*state_, &item);
    }
    return item;
  }
  /// Removes the next `count` items, waiting for them; an error if the stream ends first.
  void pop(std::size_t count) {
    if (count <= buffered())
      items_->next += count * sizeof(T);
    else
      detail::portDrop(*state_, count);
  }

  template <class U>
  bool read(U&) {
#ifndef DISPAR_FRONTEND
    static_assert(detail::kAlwaysFalse<T, U>, "dispar: read target type does not match the pipe's element type");
#endif
    return false;
  }

 private:
  static void* resizeVector(void* ctx, std::size_t count, detail::DestinationMode mode) {
    auto& values = *static_cast<std::vector<T>*>(ctx);
    if (mode == detail::DestinationMode::AlreadySized && values.size() != count) return nullptr;
    values.resize(count);
    return count == 0 ? static_cast<void*>(&values) : static_cast<void*>(values.data());
  }
  static void* resizeDeviceVector(void* ctx, std::size_t count, detail::DestinationMode mode);
  detail::PortState* state_;
  detail::ItemWindow* items_;
};

/// A file-scope pipe declaration. It carries no state: the runtime creates the port ends. Using a
/// pipe directly (not through a port a VNODE declared) is rejected by the frontend.
template <class T>
class Pipe {
  static_assert(std::is_trivially_copyable<T>::value, "dispar: a PIPE's element type must be trivially copyable");

 public:
  using element_type = T;
  explicit constexpr Pipe(const char* name) : name_(name) {}
  constexpr const char* name() const { return name_; }

#ifdef DISPAR_FRONTEND
  // Declared so that a misuse parses and the frontend can say which port declaration is missing.
  template <class... A> void write(A&&...) const;
  template <class... A> bool read(A&&...) const;
  template <class... A> void push(A&&...) const;
  template <class... A> T pop(A&&...) const;
  template <class... A> T peek(A&&...) const;
  template <class... A> bool wait_items(A&&...) const;
  void flush() const;
  std::size_t buffered() const;
#endif

 private:
  const char* name_;
};

template <class P> using InPortOf = InPort<typename P::element_type>;
template <class P> using OutPortOf = OutPort<typename P::element_type>;

}  // namespace dispar

#define PIPE(T, name) ::dispar::Pipe<T> name{#name}
#define IN(pipe) ::dispar::InPortOf<decltype(pipe)>& pipe
#define OUT(pipe) ::dispar::OutPortOf<decltype(pipe)>& pipe
// The line number keeps a second VNODE of the same name from being a C++ redefinition, so that the
// frontend can report it as a DISPAR error naming the VNODE.
#define VNODE(name, ...) DISPAR_VNODE_AT_LINE(name, __LINE__, __VA_ARGS__)
#define DISPAR_VNODE_AT_LINE(name, line, ...) DISPAR_VNODE_FUNCTION(name, line, __VA_ARGS__)
#define DISPAR_VNODE_FUNCTION(name, line, ...) void dispar_vnode_##name##_L##line(__VA_ARGS__)

#endif  // DISPAR_DISPAR_H
