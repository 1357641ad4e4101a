#include "Diagnostics.h"

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace dispar::hostk::detail {

void fatal(const char* format, ...) {
  std::fputs("dispar hostk: error: ", stderr);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::fflush(stderr);
  std::abort();
}

void fatalSystemCall(const char* call, const char* file, int line) {
  const int error = errno;
  fatal("%s failed at %s:%d: %s", call, file, line, std::strerror(error));
}

}  // namespace dispar::hostk::detail
