// How dispar_hostk reports what it cannot recover from: one line on stderr, then abort. Used for
// states a kernel cannot return from (divergent barriers, stack overflow, broken system calls).
#ifndef DISPAR_HOSTK_DIAGNOSTICS_H
#define DISPAR_HOSTK_DIAGNOSTICS_H

namespace dispar::hostk::detail {

/// Prints "dispar hostk: error: <message>" to stderr and aborts.
[[noreturn]] void fatal(const char* format, ...) __attribute__((format(printf, 1, 2)));

/// Reports a failed system call with its name, location and errno text, then aborts.
[[noreturn]] void fatalSystemCall(const char* call, const char* file, int line);

}  // namespace dispar::hostk::detail

/// Checks a POSIX call that returns -1 (or MAP_FAILED) on failure.
#define DISPAR_HOSTK_CHECK_SYS(call)                                                                                   \
  do {                                                                                                                 \
    if ((call) == -1) ::dispar::hostk::detail::fatalSystemCall(#call, __FILE__, __LINE__);                             \
  } while (false)

#endif  // DISPAR_HOSTK_DIAGNOSTICS_H
