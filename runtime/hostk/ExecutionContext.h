// A suspended flow of control on its own stack, and the switch between two of them. On x86-64 the
// switch is a few instructions of assembly that save the callee-saved registers and the stack pointer
// (the fcontext technique); elsewhere it falls back to POSIX ucontext, which is correct but slower
// (it saves the signal mask with a system call).
#ifndef DISPAR_HOSTK_EXECUTIONCONTEXT_H
#define DISPAR_HOSTK_EXECUTIONCONTEXT_H

#include <cstddef>

#if defined(__x86_64__) && !defined(DISPAR_HOSTK_FORCE_UCONTEXT)
#define DISPAR_HOSTK_ASM_CONTEXT 1
#else
#define DISPAR_HOSTK_ASM_CONTEXT 0
#include <ucontext.h>
#endif

#if DISPAR_HOSTK_ASM_CONTEXT
extern "C" void dispar_hostk_switch(void** saveStackPointer, void* resumeStackPointer);
#endif

namespace dispar::hostk::detail {

class ExecutionContext {
 public:
  using Entry = void (*)(void* argument);

  ExecutionContext() = default;
  ExecutionContext(const ExecutionContext&) = delete;
  ExecutionContext& operator=(const ExecutionContext&) = delete;

  /// Makes this context start `entry(argument)` on the stack [stackLow, stackLow + stackBytes) when
  /// first switched to. `entry` must never return.
  void prepare(void* stackLow, std::size_t stackBytes, Entry entry, void* argument);

  /// Saves the running flow into `from` and resumes `to`; returns when something switches back to
  /// `from`. Inline so that a resumed fiber unwinds as few frames as possible: each return after a
  /// switch is mispredicted (the return-stack buffer holds the other fiber's calls).
#if DISPAR_HOSTK_ASM_CONTEXT
  static void switchTo(ExecutionContext& from, ExecutionContext& to) {
    dispar_hostk_switch(&from.stackPointer_, to.stackPointer_);
  }
#else
  static void switchTo(ExecutionContext& from, ExecutionContext& to);
#endif

  /// Which implementation this build uses ("x86-64 assembly" or "ucontext").
  static const char* implementation();

 private:
#if DISPAR_HOSTK_ASM_CONTEXT
  void* stackPointer_ = nullptr;
#else
  ucontext_t context_{};
#endif
};

}  // namespace dispar::hostk::detail

#endif  // DISPAR_HOSTK_EXECUTIONCONTEXT_H
