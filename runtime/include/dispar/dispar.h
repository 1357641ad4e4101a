// The DISPAR language: what a .dsp file includes.
//
//   PIPE(T, name);                                  a typed one-way channel between two VNODEs
//   PIPE_ARRAY(T, name, N);                         pipes name[0] ... name[N-1]
//   VNODE(name, IN(p)..., OUT(q)...) { body }        a unit of computation and the ports it uses
//   VNODE_ARRAY(name, N, i, IN(p[i])...) { body }    VNODEs name[0] ... name[N-1]; `i` is the member's index
//   #pragma streamap resource(cpu|gpu) ...          see docs/language.md
//
// The macros expand to ordinary C++ so that Clang sees a normal AST: a PIPE is a file-scope object of
// type dispar::Pipe<T> (a PIPE_ARRAY, of dispar::PipeArray<T, N>), a VNODE is a function
// `dispar_vnode_<name>_L<line>` (a VNODE_ARRAY, `dispar_vnode_array_<name>_L<line>(const int i, ...)`)
// whose parameters are unnamed declarations: IN(x) / OUT(x) name the pipe or element `x` through
// decltype. The body uses the pipes themselves; the generated code binds each declared pipe to the
// instance's end of it before calling the VNODE. Each instance runs on its own thread (several may share
// a rank, docs/runtime.md "Rank groups"), so a binding holds for the calling thread. The frontend recognises
// exactly these shapes, checks every use of a pipe against the declarations, and StreamCC generates the
// code that binds the ports and calls the functions.
#ifndef DISPAR_DISPAR_H
#define DISPAR_DISPAR_H

#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

// The overloads that exist only to reject a wrong element type carry this mark: the frontend reports a
// call that resolves to one (PortElementTypeCheck) with the pipe's name; a compiler sees the
// static_assert instead.
#ifdef DISPAR_FRONTEND
#define DISPAR_TYPE_MISMATCH __attribute__((annotate("dispar.type_mismatch")))
#else
#define DISPAR_TYPE_MISMATCH
#endif

namespace dispar {

/// The program's command-line arguments (argv[1..]), as given to every rank.
const std::vector<std::string>& args();
/// Index of this VNODE instance among its replicas, in [0, replicas()).
int replica();
/// Number of replicas of the running VNODE (`replicas(K)` in its resource directive, default 1).
int replicas();
/// The node this instance runs on, as the launcher and the mapping file name it: SLURMD_NODENAME under
/// srun (several Slurm nodes may share one machine), MPICH's MPIR_CVAR_CH3_INTERFACE_HOSTNAME, else the
/// machine's host name.
std::string node_name();
/// Seconds on the run's clock, from an arbitrary origin, for timing a VNODE's work: a steady clock, and
/// on the SMPI target the simulated cluster's clock (a real clock there would time the simulator).
double wtime();

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
ItemWindow& portItemWindow(PortState& port, bool forPush);
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

/// The rule for a value written or pushed into a pipe of T (docs/language.md, "Element types"): a value
/// of type T, or of an arithmetic type that converts to T without narrowing by C++'s list-initialisation
/// rule (int to long, float to double, bool to int), so that no value ever changes on its way in.
/// double to int, long to int, int to float or double, and any enum or class type other than T are
/// errors; convert explicitly (static_cast<T>) where a change of value is meant.
template <class U, class T, class = void>
struct WritesWithoutNarrowing : std::false_type {};
template <class U, class T>
struct WritesWithoutNarrowing<U, T, std::void_t<decltype(T{std::declval<const U&>()})>>
    : std::bool_constant<std::is_arithmetic<U>::value && std::is_arithmetic<T>::value> {};
template <class U, class T>
inline constexpr bool kWritesWithoutNarrowing = !std::is_same<U, T>::value && WritesWithoutNarrowing<U, T>::value;
template <class U, class T>
inline constexpr bool kWriteTypeMismatch = !std::is_same<U, T>::value && !WritesWithoutNarrowing<U, T>::value;

/// A message as a std::vector: the one its writer gave up (`write(std::move(v))`), or a copy made once
/// into a vector the reader gave back. A pipe whose two ends share a rank hands it to the reader whole.
struct MovedVector {
  virtual ~MovedVector() = default;
  virtual const void* data() const = 0;
  virtual std::size_t count() const = 0;
  const void* type = nullptr;  // typeKey<T>() of the element type
};
/// One address per element type: what a reader checks before it takes a moved vector as its own.
template <class T>
const void* typeKey() {
  static const char key = 0;
  return &key;
}
template <class T>
struct TypedMovedVector final : MovedVector {
  explicit TypedMovedVector(std::vector<T>&& moved) : values(std::move(moved)) { type = typeKey<T>(); }
  const void* data() const override { return values.data(); }
  std::size_t count() const override { return values.size(); }
  std::vector<T> values;
};
/// Whether the port's next message stays inside this rank, where giving up a vector saves its copy.
bool portTakesVectors(PortState& port);
void portWriteVector(PortState& port, std::unique_ptr<MovedVector> message);
/// A vector of `type` a reader of this port gave back, to copy the next message (`bytes`) into (warm
/// memory, no allocation); nullptr when there is none.
std::unique_ptr<MovedVector> portSpareVector(PortState& port, const void* type, std::size_t bytes);
/// A copying write to a reader in this rank: one copy, into a vector the reader then takes whole.
template <class T>
void portWriteCopy(PortState& port, const T* data, std::size_t count) {
  std::unique_ptr<MovedVector> spare = portSpareVector(port, typeKey<T>(), count * sizeof(T));
  std::unique_ptr<TypedMovedVector<T>> message(spare ? static_cast<TypedMovedVector<T>*>(spare.release())
                                                     : new TypedMovedVector<T>(std::vector<T>()));
  message->values.assign(data, data + count);
  portWriteVector(port, std::move(message));
}
/// Offered a moved vector, takes it (true) when it is of the caller's type; else the runtime copies.
using AdoptFn = bool (*)(void* ctx, MovedVector& message);
/// portRead that may instead hand over a moved vector through `adopt`.
bool portReadAdopting(PortState& port, DestinationFn destination, AdoptFn adopt, void* ctx, const char* expectation);
}  // namespace detail

template <class T>
class Pipe;

/// The writing end of a pipe inside the VNODE that declares OUT(pipe).
template <class T>
class OutPort {
 public:
  using element_type = T;
  OutPort() = default;
  explicit OutPort(detail::PortState& state) : state_(&state), items_(&detail::portItemWindow(state, true)) {}

  /// One message of one element.
  void write(const T& value) { detail::portWrite(*state_, &value, 1); }
  /// One message of values.size() elements.
  void write(const std::vector<T>& values) { write(values.data(), values.size()); }
  /// The same, giving the vector up: a reader in the same rank receives it without a copy.
  void write(std::vector<T>&& values) {
    if (detail::portTakesVectors(*state_))
      detail::portWriteVector(*state_, std::make_unique<detail::TypedMovedVector<T>>(std::move(values)));
    else
      detail::portWrite(*state_, values.data(), values.size());
  }
  /// One message of `count` elements starting at `data`.
  void write(const T* data, std::size_t count) {
    if (detail::portTakesVectors(*state_))
      detail::portWriteCopy(*state_, data, count);
    else
      detail::portWrite(*state_, data, count);
  }
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

  /// An arithmetic value that converts to T without narrowing (detail::WritesWithoutNarrowing).
  template <class U, std::enable_if_t<detail::kWritesWithoutNarrowing<U, T>, int> = 0>
  void write(const U& value) {
    write(T{value});
  }
  template <class U, std::enable_if_t<detail::kWritesWithoutNarrowing<U, T>, int> = 0>
  void push(const U& item) {
    push(T{item});
  }

  // Element-type mismatches: the frontend reports them with the pipe's name and location.
  template <class U, std::enable_if_t<detail::kWriteTypeMismatch<U, T>, int> = 0>
  DISPAR_TYPE_MISMATCH void write(const U&) {
#ifndef DISPAR_FRONTEND
    static_assert(detail::kAlwaysFalse<T, U>,
                  "dispar: written value's type does not match the pipe's element type (or narrows to it)");
#endif
  }
  template <class U, std::enable_if_t<detail::kWriteTypeMismatch<U, T>, int> = 0>
  DISPAR_TYPE_MISMATCH void push(const U&) {
#ifndef DISPAR_FRONTEND
    static_assert(detail::kAlwaysFalse<T, U>,
                  "dispar: pushed item's type does not match the pipe's element type (or narrows to it)");
#endif
  }
  template <class U>
  DISPAR_TYPE_MISMATCH void write(const std::vector<U>&) {
#ifndef DISPAR_FRONTEND
    static_assert(detail::kAlwaysFalse<T, U>, "dispar: vector element type does not match the pipe's element type");
#endif
  }
  template <class U>
  DISPAR_TYPE_MISMATCH void write(const U*, std::size_t) {
#ifndef DISPAR_FRONTEND
    static_assert(detail::kAlwaysFalse<T, U>, "dispar: pointer element type does not match the pipe's element type");
#endif
  }

 private:
  detail::PortState* state_ = nullptr;
  detail::ItemWindow* items_ = nullptr;
};

/// The reading end of a pipe inside the VNODE that declares IN(pipe).
template <class T>
class InPort {
 public:
  using element_type = T;
  InPort() = default;
  explicit InPort(detail::PortState& state) : state_(&state), items_(&detail::portItemWindow(state, false)) {}

  /// Receives a one-element message; false at end of stream. A message of another size is an error.
  bool read(T& value) { return detail::portReadElement(*state_, &value); }
  /// Receives a message of any length, resizing `values`; false at end of stream.
  bool read(std::vector<T>& values) {
    return detail::portReadAdopting(*state_, &InPort::resizeVector, &InPort::adoptVector, &values,
                                    "a message of any length");
  }
  /// Receives a message of any length into device memory, resizing `values`; false at end of stream.
  /// Defined in <dispar/device_vector.h>.
  bool read(device_vector<T>& values);

  // Items (StreamIt's peek/pop), whatever the message boundaries. A port is used either with read()
  // or with these, not both.
  /// Blocks until `count` items are buffered; false when the stream ends with fewer.
  bool wait_items(std::size_t count) { return count <= buffered() || detail::portWaitItems(*state_, count); }
  /// Items buffered now (what peek can reach without waiting).
  std::size_t buffered() const { return static_cast<std::size_t>(items_->end - items_->next) / sizeof(T); }
  /// The index-th item (0 is the next to pop), waiting until it is buffered; an error when the stream
  /// ends before it.
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
  DISPAR_TYPE_MISMATCH bool read(U&) {
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
  static bool adoptVector(void* ctx, detail::MovedVector& message) {
    if (message.type != detail::typeKey<T>()) return false;
    // The reader's old storage leaves with the message.
    static_cast<std::vector<T>*>(ctx)->swap(static_cast<detail::TypedMovedVector<T>&>(message).values);
    return true;
  }
  static void* resizeDeviceVector(void* ctx, std::size_t count, detail::DestinationMode mode);
  detail::PortState* state_ = nullptr;
  detail::ItemWindow* items_ = nullptr;
};

namespace detail {
enum class PortDirection { In, Out };
/// What IN(x) / OUT(x) declare: an unnamed VNODE parameter (defaulted) whose type records the direction
/// and, through decltype, the pipe or pipe-array element `x`.
template <PortDirection Direction, class PipeType>
struct PortDecl {};
}  // namespace detail
/// IN(x) / OUT(x) as an editor shows a VNODE's parameters (`IN<decltype(x)>`).
template <class PipeType>
using IN = detail::PortDecl<detail::PortDirection::In, PipeType>;
template <class PipeType>
using OUT = detail::PortDecl<detail::PortDirection::Out, PipeType>;
namespace detail {
/// The member count of a VNODE_ARRAY, as the type of its second (unnamed, defaulted) parameter.
template <int Count>
struct FamilySize {};
/// Thrown when a VNODE uses a pipe (or element) it did not declare; `index` is -1 for a plain pipe.
[[noreturn]] void throwUndeclaredPipe(const char* name, int index);
/// Thrown for an element index outside a PIPE_ARRAY.
[[noreturn]] void throwPipeIndexOutOfRange(const char* name, long long index, int size);

/// A pipe's binding on one thread: the instance's port end and the typed ports over it (InPort<T> and
/// OutPort<T> hold two pointers whatever T is).
struct BoundPipe {
  PortState* state = nullptr;
  alignas(void*) unsigned char in[2 * sizeof(void*)];
  alignas(void*) unsigned char out[2 * sizeof(void*)];
};
/// The calling thread's bindings, by pipe id.
struct BoundPipes {
  BoundPipe* slots = nullptr;
  unsigned count = 0;
};
extern thread_local BoundPipes threadPipes;
/// A new pipe's id: its slot in every thread's bindings.
int registerPipe();
/// The calling thread's slot for pipe `id`, made on first use (generated code binds before each VNODE).
BoundPipe& bindingSlot(int id);
}  // namespace detail

/// A file-scope pipe (or one element of a PIPE_ARRAY). Inside a VNODE that declares it with IN or OUT,
/// it is that VNODE's port: the calls of InPort<T> or OutPort<T> on this rank's end. Using a pipe the
/// VNODE did not declare is a compile-time error where the frontend can decide it, else a run-time error
/// naming the pipe.
template <class T>
class Pipe {
  static_assert(std::is_trivially_copyable<T>::value, "dispar: a PIPE's element type must be trivially copyable");

 public:
  using element_type = T;
  Pipe() = default;
  explicit Pipe(const char* name, int index = -1) : name_(name), index_(index), id_(detail::registerPipe()) {}
  /// The pipe's name; for an element of a PIPE_ARRAY, the array's name (see index()).
  const char* name() const { return name_; }
  /// The element's index in its PIPE_ARRAY; -1 for a plain PIPE.
  int index() const { return index_; }

  // OutPort<T>'s calls (OUT).
  void write(const T& value) const { out().write(value); }
  void write(const std::vector<T>& values) const { out().write(values); }
  void write(std::vector<T>&& values) const { out().write(std::move(values)); }
  void write(const T* data, std::size_t count) const { out().write(data, count); }
  void write(const device_vector<T>& values) const;  // <dispar/device_vector.h>
  void close() const { out().close(); }
  void push(const T& item) const { out().push(item); }
  void flush() const { out().flush(); }
  // InPort<T>'s calls (IN).
  bool read(T& value) const { return in().read(value); }
  bool read(std::vector<T>& values) const { return in().read(values); }
  bool read(device_vector<T>& values) const;  // <dispar/device_vector.h>
  bool wait_items(std::size_t count) const { return in().wait_items(count); }
  std::size_t buffered() const { return in().buffered(); }
  T peek(std::size_t index) const { return in().peek(index); }
  T pop() const { return in().pop(); }
  void pop(std::size_t count) const { in().pop(count); }
  /// For helper functions written against ports: `void send(dispar::OutPort<float>& out)`.
  operator InPort<T>&() const { return in(); }
  operator OutPort<T>&() const { return out(); }

  template <class U, std::enable_if_t<detail::kWritesWithoutNarrowing<U, T>, int> = 0>
  void write(const U& value) const {
    out().write(T{value});
  }
  template <class U, std::enable_if_t<detail::kWritesWithoutNarrowing<U, T>, int> = 0>
  void push(const U& item) const {
    out().push(T{item});
  }

  // Element-type mismatches: the frontend reports them with the pipe's name and location.
  template <class U, std::enable_if_t<detail::kWriteTypeMismatch<U, T>, int> = 0>
  DISPAR_TYPE_MISMATCH void write(const U&) const {
#ifndef DISPAR_FRONTEND
    static_assert(detail::kAlwaysFalse<T, U>,
                  "dispar: written value's type does not match the pipe's element type (or narrows to it)");
#endif
  }
  template <class U, std::enable_if_t<detail::kWriteTypeMismatch<U, T>, int> = 0>
  DISPAR_TYPE_MISMATCH void push(const U&) const {
#ifndef DISPAR_FRONTEND
    static_assert(detail::kAlwaysFalse<T, U>,
                  "dispar: pushed item's type does not match the pipe's element type (or narrows to it)");
#endif
  }
  template <class U>
  DISPAR_TYPE_MISMATCH void write(const std::vector<U>&) const {
#ifndef DISPAR_FRONTEND
    static_assert(detail::kAlwaysFalse<T, U>, "dispar: vector element type does not match the pipe's element type");
#endif
  }
  template <class U>
  DISPAR_TYPE_MISMATCH void write(const U*, std::size_t) const {
#ifndef DISPAR_FRONTEND
    static_assert(detail::kAlwaysFalse<T, U>, "dispar: pointer element type does not match the pipe's element type");
#endif
  }
  template <class U>
  DISPAR_TYPE_MISMATCH bool read(U&) const {
#ifndef DISPAR_FRONTEND
    static_assert(detail::kAlwaysFalse<T, U>, "dispar: read target type does not match the pipe's element type");
#endif
    return false;
  }

  /// Generated code: makes this pipe the running VNODE's port on `state` (its instance's end), for the
  /// calling thread.
  void dispar_bind(detail::PortState& state) const {
    static_assert(sizeof(InPort<T>) <= sizeof(detail::BoundPipe::in) &&
                      sizeof(OutPort<T>) <= sizeof(detail::BoundPipe::out),
                  "dispar: a port is two pointers");
    detail::BoundPipe& slot = detail::bindingSlot(id_);
    ::new (static_cast<void*>(slot.in)) InPort<T>(state);
    ::new (static_cast<void*>(slot.out)) OutPort<T>(state);
    slot.state = &state;
  }

 private:
  detail::BoundPipe& bound() const {
    const detail::BoundPipes& pipes = detail::threadPipes;
    if (static_cast<unsigned>(id_) >= pipes.count || pipes.slots[id_].state == nullptr)
      detail::throwUndeclaredPipe(name_, index_);
    return pipes.slots[id_];
  }
  InPort<T>& in() const { return *std::launder(reinterpret_cast<InPort<T>*>(bound().in)); }
  OutPort<T>& out() const { return *std::launder(reinterpret_cast<OutPort<T>*>(bound().out)); }

  const char* name_ = "";
  int index_ = -1;
  int id_ = -1;  // registerPipe(); -1 until named (a PipeArray names its elements after making them)
};

/// `PIPE_ARRAY(T, name, N)`: N pipes, `name[0]` ... `name[N-1]`, each a Pipe<T>.
template <class T, int N>
class PipeArray {
  static_assert(N > 0, "dispar: a PIPE_ARRAY needs at least one pipe");

 public:
  using element_type = T;
  explicit PipeArray(const char* name) {
    for (int k = 0; k < N; ++k) elements_[k] = Pipe<T>(name, k);
  }
  static constexpr int size() { return N; }
  const Pipe<T>& operator[](long long index) const {
    if (index < 0 || index >= N) detail::throwPipeIndexOutOfRange(elements_[0].name(), index, N);
    return elements_[index];
  }

 private:
  Pipe<T> elements_[N];
};

}  // namespace dispar

#define PIPE(T, name)                                                                                                  \
  ::dispar::Pipe<T> name { #name }
#define PIPE_ARRAY(T, name, count)                                                                                     \
  ::dispar::PipeArray<T, (count)> name { #name }
#define IN(pipe) ::dispar::IN<decltype(pipe)> = {}
#define OUT(pipe) ::dispar::OUT<decltype(pipe)> = {}
// The line number keeps a second VNODE of the same name from being a C++ redefinition, so that the
// frontend can report it as a DISPAR error naming the VNODE.
#define VNODE(name, ...) DISPAR_VNODE_AT_LINE(name, __LINE__, __VA_ARGS__)
#define DISPAR_VNODE_AT_LINE(name, line, ...) DISPAR_VNODE_FUNCTION(name, line, __VA_ARGS__)
#define VNODE_ARRAY(name, count, index, ...) DISPAR_VNODE_ARRAY_AT_LINE(name, count, index, __LINE__, __VA_ARGS__)
#define DISPAR_VNODE_ARRAY_AT_LINE(name, count, index, line, ...)                                                      \
  DISPAR_VNODE_ARRAY_FUNCTION(name, count, index, line, __VA_ARGS__)
#ifndef DISPAR_FRONTEND
// The program as compiled: the VNODE is the function dispar_vnode_<name>_L<line> (dispar_vnode_array_...
// for a family), which the generated dispatch calls.
#define DISPAR_VNODE_FUNCTION(name, line, ...) void dispar_vnode_##name##_L##line(__VA_ARGS__)
#define DISPAR_VNODE_ARRAY_FUNCTION(name, count, index, line, ...)                                                     \
  void dispar_vnode_array_##name##_L##line(const int index, ::dispar::detail::FamilySize<(count)> = {}, ##__VA_ARGS__)
#else
// The program as the frontend (and an editor's clangd, through disparcc -MJ) parses it: the name token is
// the name of a declaration `dispar_vnode::L<line>::name(ports)` (one namespace per line: a VNODE defined
// twice is the frontend's error, not a C++ one), so that hovering on it shows the VNODE's ports;
// the definition's name is made without that token (a second use of it would take the hover away) and
// carries the VNODE's name and the compiled function's name (as above) in an annotation the frontend reads.
#define DISPAR_VNODE_CONCAT(a, b) DISPAR_VNODE_CONCAT_(a, b)
#define DISPAR_VNODE_CONCAT_(a, b) a##b
#define DISPAR_VNODE_FUNCTION(name, line, ...)                                                                         \
  namespace dispar_vnode::L##line {                                                                                    \
    void name(__VA_ARGS__);                                                                                            \
  }                                                                                                                    \
  [[clang::annotate("dispar.vnode", #name, "dispar_vnode_" #name "_L" #line)]] void DISPAR_VNODE_CONCAT(               \
      dispar_vnode_L##line##_, __COUNTER__)(__VA_ARGS__)
#define DISPAR_VNODE_ARRAY_FUNCTION(name, count, index, line, ...)                                                     \
  namespace dispar_vnode::L##line {                                                                                    \
    void name(const int index, ::dispar::detail::FamilySize<(count)> = {}, ##__VA_ARGS__);                             \
  }                                                                                                                    \
  [[clang::annotate("dispar.vnode_array", #name, "dispar_vnode_array_" #name "_L" #line)]] void DISPAR_VNODE_CONCAT(   \
      dispar_vnode_array_L##line##_, __COUNTER__)(const int index, ::dispar::detail::FamilySize<(count)> = {},         \
                                                  ##__VA_ARGS__)
#endif

// split_for: a loop shared by the rank's GPU and CPU cores.
#include <dispar/split.h>

#endif  // DISPAR_DISPAR_H
