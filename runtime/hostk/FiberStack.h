// Fiber stacks: mmap'd, with a PROT_NONE guard region below each one so that an overflow faults
// instead of silently corrupting the neighbouring stack; a SIGSEGV handler on an alternate signal
// stack turns such a fault into a message that names the kernel thread and the stack size.
#ifndef DISPAR_HOSTK_FIBERSTACK_H
#define DISPAR_HOSTK_FIBERSTACK_H

#include <cstddef>

namespace dispar::hostk::detail {

class FiberStack {
 public:
  /// Maps at least `usableBytes` (a multiple of the page size) plus the guard region. The top of the
  /// stack sits `colorBytes` below the end of the mapping: fibers whose stacks start at different
  /// offsets modulo 64 KiB do not all compete for the same cache sets (with every top at the same
  /// offset, a block of 256 waiting fibers thrashed a handful of L1/L2 sets).
  FiberStack(std::size_t usableBytes, std::size_t colorBytes);
  ~FiberStack();
  FiberStack(const FiberStack&) = delete;
  FiberStack& operator=(const FiberStack&) = delete;

  /// The usable stack is [low(), low() + bytes()); it grows down from its top.
  void* low() const { return usableLow_; }
  std::size_t bytes() const { return usableBytes_; }
  /// Cache colour of the fiber with index `index`: distinct 64-byte multiples below 64 KiB.
  static std::size_t colorFor(std::size_t index) { return index * 1088 % (64 * 1024); }
  /// Whether `address` lies in this stack's guard region.
  bool guards(const void* address) const;

  /// Guard region size: large enough that ordinary frames cannot jump over it.
  static constexpr std::size_t kGuardBytes = 64 * 1024;

 private:
  void* mapping_ = nullptr;
  std::size_t mappingBytes_ = 0;
  void* usableLow_ = nullptr;
  std::size_t usableBytes_ = 0;
};

/// While alive, the calling OS thread has an alternate signal stack (unless it already had one) and
/// the process has the stack-overflow reporter installed.
class StackOverflowReporter {
 public:
  StackOverflowReporter();
  ~StackOverflowReporter();
  StackOverflowReporter(const StackOverflowReporter&) = delete;
  StackOverflowReporter& operator=(const StackOverflowReporter&) = delete;

 private:
  void* altStack_ = nullptr;
};

}  // namespace dispar::hostk::detail

#endif  // DISPAR_HOSTK_FIBERSTACK_H
