#include "ExecutionContext.h"

#include "Diagnostics.h"

#include <cstdint>

#if DISPAR_HOSTK_ASM_CONTEXT

// dispar_hostk_switch(void** saveStackPointer, void* resumeStackPointer)
// Pushes the System V callee-saved registers, stores the stack pointer, loads the other one and pops the
// same frame from it. The SSE/x87 control words are deliberately not switched: every fiber of a runner
// runs on one OS thread, kernels cannot change them (CUDA has no such API), and ldmxcsr/fldcw would
// serialise the pipeline at every switch (measured: it stops consecutive CUDA threads overlapping). A fresh context's frame "returns" into
// dispar_hostk_fiber_start with the entry in r13 and its argument in r12.
asm(R"(
  .text
  .globl dispar_hostk_switch
  .hidden dispar_hostk_switch
  .type dispar_hostk_switch, @function
  .p2align 4
dispar_hostk_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size dispar_hostk_switch, .-dispar_hostk_switch

  .globl dispar_hostk_fiber_start
  .hidden dispar_hostk_fiber_start
  .type dispar_hostk_fiber_start, @function
  .p2align 4
dispar_hostk_fiber_start:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size dispar_hostk_fiber_start, .-dispar_hostk_fiber_start
)");

extern "C" void dispar_hostk_fiber_start();

namespace dispar::hostk::detail {

void ExecutionContext::prepare(void* stackLow, std::size_t stackBytes, Entry entry, void* argument) {
  // Frame popped by dispar_hostk_switch, lowest address first. After its `ret` the stack pointer is
  // 16-byte aligned, so the `call` in dispar_hostk_fiber_start enters `entry` as the ABI requires.
  auto top = reinterpret_cast<std::uintptr_t>(stackLow) + stackBytes;
  top &= ~std::uintptr_t{15};
  // frame is 8 mod 16: after 6 pops and the ret (7 slots) the stack pointer is 16-byte aligned.
  auto* frame = reinterpret_cast<std::uint64_t*>(top - 9 * sizeof(std::uint64_t));
  frame[0] = 0;                                          // r15
  frame[1] = 0;                                          // r14
  frame[2] = reinterpret_cast<std::uint64_t>(entry);     // r13
  frame[3] = reinterpret_cast<std::uint64_t>(argument);  // r12
  frame[4] = 0;                                          // rbx
  frame[5] = 0;                                          // rbp
  frame[6] = reinterpret_cast<std::uint64_t>(&dispar_hostk_fiber_start);
  frame[7] = 0;  // never read: the bottom of fiber_start's frame
  stackPointer_ = frame;
}

const char* ExecutionContext::implementation() { return "x86-64 assembly"; }

}  // namespace dispar::hostk::detail

#else  // ucontext fallback

namespace dispar::hostk::detail {
namespace {

// makecontext passes int arguments only: split the pointers into 32-bit halves.
void ucontextTrampoline(unsigned entryHigh, unsigned entryLow, unsigned argHigh, unsigned argLow) {
  auto join = [](unsigned high, unsigned low) {
    return (static_cast<std::uintptr_t>(high) << 16 << 16) | static_cast<std::uintptr_t>(low);
  };
  auto entry = reinterpret_cast<ExecutionContext::Entry>(join(entryHigh, entryLow));
  entry(reinterpret_cast<void*>(join(argHigh, argLow)));
  fatal("fiber entry returned");
}

unsigned high(std::uintptr_t value) { return static_cast<unsigned>(value >> 16 >> 16); }
unsigned low(std::uintptr_t value) { return static_cast<unsigned>(value & 0xffffffffu); }

}  // namespace

void ExecutionContext::prepare(void* stackLow, std::size_t stackBytes, Entry entry, void* argument) {
  DISPAR_HOSTK_CHECK_SYS(getcontext(&context_));
  context_.uc_stack.ss_sp = stackLow;
  context_.uc_stack.ss_size = stackBytes;
  context_.uc_link = nullptr;
  const auto e = reinterpret_cast<std::uintptr_t>(entry);
  const auto a = reinterpret_cast<std::uintptr_t>(argument);
  makecontext(&context_, reinterpret_cast<void (*)()>(&ucontextTrampoline), 4, high(e), low(e), high(a),
              low(a));
}

void ExecutionContext::switchTo(ExecutionContext& from, ExecutionContext& to) {
  DISPAR_HOSTK_CHECK_SYS(swapcontext(&from.context_, &to.context_));
}

const char* ExecutionContext::implementation() { return "ucontext"; }

}  // namespace dispar::hostk::detail

#endif
