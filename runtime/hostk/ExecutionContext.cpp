#include "ExecutionContext.h"

#include "Diagnostics.h"

#include <cstdint>

#if DISPAR_HOSTK_ASM_CONTEXT

// A fresh context starts here, on its new stack, with the entry and its argument on top of it. The
// SSE/x87 control words are deliberately never switched: every fiber of a runner runs on one OS thread,
// kernels cannot change them (CUDA has no such API), and ldmxcsr/fldcw would serialise the pipeline at
// every switch (measured: it stops consecutive CUDA threads overlapping).
asm(R"(
  .text
  .globl dispar_hostk_fiber_start
  .hidden dispar_hostk_fiber_start
  .type dispar_hostk_fiber_start, @function
  .p2align 4
dispar_hostk_fiber_start:
  popq %rdi
  popq %rax
  callq *%rax
  ud2
  .size dispar_hostk_fiber_start, .-dispar_hostk_fiber_start
)");

extern "C" void dispar_hostk_fiber_start();

namespace dispar::hostk::detail {

void ExecutionContext::prepare(void* stackLow, std::size_t stackBytes, Entry entry, void* argument) {
  // dispar_hostk_fiber_start pops the argument and the entry; the stack pointer is then 16-byte
  // aligned, so its `call` enters `entry` as the ABI requires.
  auto top = reinterpret_cast<std::uintptr_t>(stackLow) + stackBytes;
  top &= ~std::uintptr_t{15};
  auto* frame = reinterpret_cast<std::uint64_t*>(top - 4 * sizeof(std::uint64_t));
  frame[0] = reinterpret_cast<std::uint64_t>(argument);
  frame[1] = reinterpret_cast<std::uint64_t>(entry);
  frame[2] = 0;  // never read: the bottom of fiber_start's frame
  frame[3] = 0;
  stackPointer_ = frame;
  resumeAddress_ = reinterpret_cast<void*>(&dispar_hostk_fiber_start);
  framePointer_ = nullptr;
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
  makecontext(&context_, reinterpret_cast<void (*)()>(&ucontextTrampoline), 4, high(e), low(e), high(a), low(a));
}

void ExecutionContext::switchTo(ExecutionContext& from, ExecutionContext& to) {
  DISPAR_HOSTK_CHECK_SYS(swapcontext(&from.context_, &to.context_));
}

const char* ExecutionContext::implementation() { return "ucontext"; }

}  // namespace dispar::hostk::detail

#endif
