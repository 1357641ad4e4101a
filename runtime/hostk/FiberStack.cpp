#include "FiberStack.h"

#include "BlockRunner.h"
#include "Diagnostics.h"

#include <dispar/hostk/Kernel.h>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace dispar::hostk::detail {

FiberStack::FiberStack(std::size_t usableBytes, std::size_t colorBytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t colorPages = (colorBytes + page - 1) / page * page;
  usableBytes_ = usableBytes + colorPages - colorBytes;
  mappingBytes_ = kGuardBytes + usableBytes + colorPages;
  mapping_ = mmap(nullptr, mappingBytes_, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (mapping_ == MAP_FAILED) fatalSystemCall("mmap(fiber stack)", __FILE__, __LINE__);
  DISPAR_HOSTK_CHECK_SYS(mprotect(mapping_, kGuardBytes, PROT_NONE));
  usableLow_ = static_cast<char*>(mapping_) + kGuardBytes;
}

FiberStack::~FiberStack() { munmap(mapping_, mappingBytes_); }

bool FiberStack::guards(const void* address) const {
  const char* a = static_cast<const char*>(address);
  const char* guardLow = static_cast<const char*>(mapping_);
  return a >= guardLow && a < guardLow + kGuardBytes;
}

namespace {

struct sigaction previousSegvAction;

// Async-signal-safe output: write(2) and hand-rolled number formatting only.
void writeText(const char* text) {
  ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

void writeNumber(unsigned long long value) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  char text[24];
  for (int i = 0; i < n; ++i) text[i] = digits[n - 1 - i];
  text[n] = '\0';
  writeText(text);
}

void writeIndex(const uint3& index) {
  writeText("(");
  writeNumber(index.x);
  writeText(",");
  writeNumber(index.y);
  writeText(",");
  writeNumber(index.z);
  writeText(")");
}

void onSegv(int signal, siginfo_t* info, void* ucontext) {
  const ThreadContext* thread = currentThread;
  if (thread != nullptr && thread->runner != nullptr && thread->runner->isGuardAddress(thread->fiber, info->si_addr)) {
    writeText("dispar hostk: error: fiber stack overflow in kernel at block ");
    writeIndex(thread->blockIdx);
    writeText(" thread ");
    writeIndex(thread->threadIdx);
    writeText("; each CUDA thread has ");
    writeNumber(thread->runner->stackBytes());
    writeText(" bytes of stack on the host path (set DISPAR_HOST_STACK_BYTES to raise it)\n");
    struct sigaction fallback{};
    fallback.sa_handler = SIG_DFL;
    sigaction(SIGABRT, &fallback, nullptr);  // abort must not run someone's SIGABRT handler on this stack
    abort();
  }
  // Not ours: hand the fault to whoever handled SIGSEGV before us, or to the default action.
  if (previousSegvAction.sa_flags & SA_SIGINFO) {
    if (previousSegvAction.sa_sigaction != nullptr) {
      previousSegvAction.sa_sigaction(signal, info, ucontext);
      return;
    }
  } else if (previousSegvAction.sa_handler != SIG_DFL && previousSegvAction.sa_handler != SIG_IGN) {
    previousSegvAction.sa_handler(signal);
    return;
  }
  // Restore the default action; returning re-executes the faulting access, which then kills us.
  struct sigaction fallback{};
  fallback.sa_handler = SIG_DFL;
  sigaction(SIGSEGV, &fallback, nullptr);
}

void installHandlerOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action{};
    action.sa_sigaction = &onSegv;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    DISPAR_HOSTK_CHECK_SYS(sigaction(SIGSEGV, &action, &previousSegvAction));
  });
}

constexpr std::size_t kAltStackBytes = 64 * 1024;

}  // namespace

StackOverflowReporter::StackOverflowReporter() {
  installHandlerOnce();
  stack_t current{};
  DISPAR_HOSTK_CHECK_SYS(sigaltstack(nullptr, &current));
  if (!(current.ss_flags & SS_DISABLE)) return;  // the thread has its own; a handler will use it
  altStack_ = std::malloc(kAltStackBytes);
  if (altStack_ == nullptr) fatal("cannot allocate the alternate signal stack");
  stack_t mine{};
  mine.ss_sp = altStack_;
  mine.ss_size = kAltStackBytes;
  DISPAR_HOSTK_CHECK_SYS(sigaltstack(&mine, nullptr));
}

StackOverflowReporter::~StackOverflowReporter() {
  if (altStack_ == nullptr) return;
  stack_t disable{};
  disable.ss_flags = SS_DISABLE;
  sigaltstack(&disable, nullptr);
  std::free(altStack_);
}

}  // namespace dispar::hostk::detail
