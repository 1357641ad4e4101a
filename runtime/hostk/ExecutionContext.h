// A suspended flow of control on its own stack, and the switch between two of them. On x86-64 the
// switch is inline assembly at each call site: it saves the stack pointer, the frame pointer and the
// address to resume at, and jumps to the other context's (the compiler saves every other live register
// around it, as the asm clobbers them all). Elsewhere it falls back to POSIX ucontext, which is correct
// but slower (it saves the signal mask with a system call).
//
// Why no call/ret pair: a fiber resumes somewhere other than where the suspending one called the switch,
// so a `ret` there always missed the return-stack buffer, and the buffer, off by one, then missed every
// return after it (measured ~50 ns per CUDA thread at a barrier). With a jump per call site, the branch
// predictor learns each site's usual target, and the frames a resumed fiber returns through are
// predicted from the branch target buffer.
#ifndef DISPAR_HOSTK_EXECUTIONCONTEXT_H
#define DISPAR_HOSTK_EXECUTIONCONTEXT_H

#include <cstddef>

#if defined(__x86_64__) && !defined(DISPAR_HOSTK_FORCE_UCONTEXT)
#define DISPAR_HOSTK_ASM_CONTEXT 1
#else
#define DISPAR_HOSTK_ASM_CONTEXT 0
#include <ucontext.h>
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
  /// `from`.
#if DISPAR_HOSTK_ASM_CONTEXT
  [[gnu::always_inline]] static inline void switchTo(ExecutionContext& from, ExecutionContext& to) {
    // Every register but rsp and rbp is clobbered: whatever runs before control comes back may use
    // them. rbp may be the frame pointer, which cannot be clobbered, so it travels in the context.
    void* fromState = &from.stackPointer_;
    void* toState = &to.stackPointer_;
    asm volatile("leaq 1f(%%rip), %%rax\n\t"
                 "movq %%rsp, 0(%0)\n\t"
                 "movq %%rax, 8(%0)\n\t"
                 "movq %%rbp, 16(%0)\n\t"
                 "movq 0(%1), %%rsp\n\t"
                 "movq 16(%1), %%rbp\n\t"
                 "jmpq *8(%1)\n"
                 "1:"
                 : "+D"(fromState), "+S"(toState)
                 :
                 : "rax", "rbx", "rcx", "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "memory", "cc",
                   "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
                   "xmm12", "xmm13", "xmm14", "xmm15", "st", "st(1)", "st(2)", "st(3)", "st(4)", "st(5)", "st(6)",
                   "st(7)", "mm0", "mm1", "mm2", "mm3", "mm4", "mm5", "mm6", "mm7");
  }
#else
  static void switchTo(ExecutionContext& from, ExecutionContext& to);
#endif

  /// Which implementation this build uses ("x86-64 assembly" or "ucontext").
  static const char* implementation();

 private:
#if DISPAR_HOSTK_ASM_CONTEXT
  // The switch addresses these by offset (0, 8, 16): keep their order.
  void* stackPointer_ = nullptr;
  void* resumeAddress_ = nullptr;
  void* framePointer_ = nullptr;
#else
  ucontext_t context_{};
#endif
};

}  // namespace dispar::hostk::detail

#endif  // DISPAR_HOSTK_EXECUTIONCONTEXT_H
