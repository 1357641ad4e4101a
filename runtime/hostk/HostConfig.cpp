#include "HostConfig.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace dispar::hostk::detail {
namespace {

constexpr unsigned long long kMaxThreads = 1024;
constexpr unsigned long long kMinStackBytes = 16 * 1024;
constexpr unsigned long long kMaxStackBytes = 1ull << 30;

[[noreturn]] void badSetting(const char* name, const char* value, const char* expected) {
  std::fprintf(stderr, "dispar hostk: error: %s='%s' is not %s\n", name, value, expected);
  std::exit(2);
}

/// Parses a decimal count with an optional K/M/G binary suffix; false when malformed.
bool parseCount(const char* text, unsigned long long& value) {
  errno = 0;
  char* end = nullptr;
  value = std::strtoull(text, &end, 10);
  if (end == text || errno != 0 || *text == '-') return false;
  unsigned shift = 0;
  switch (*end) {
    case '\0': break;
    case 'k':
    case 'K':
      shift = 10;
      ++end;
      break;
    case 'm':
    case 'M':
      shift = 20;
      ++end;
      break;
    case 'g':
    case 'G':
      shift = 30;
      ++end;
      break;
    default: return false;
  }
  if (*end != '\0' || value > (~0ull >> shift)) return false;
  value <<= shift;
  return true;
}

}  // namespace

HostConfig HostConfig::fromEnvironment() {
  HostConfig config;
  const unsigned hardware = std::thread::hardware_concurrency();
  config.threads = hardware == 0 ? 1 : hardware;
  if (const char* text = std::getenv("DISPAR_HOST_THREADS"); text && *text) {
    unsigned long long value = 0;
    if (!parseCount(text, value) || value == 0 || value > kMaxThreads)
      badSetting("DISPAR_HOST_THREADS", text, "a thread count between 1 and 1024");
    config.threads = static_cast<unsigned>(value);
  }
  if (const char* text = std::getenv("DISPAR_HOST_STACK_BYTES"); text && *text) {
    unsigned long long value = 0;
    if (!parseCount(text, value) || value < kMinStackBytes || value > kMaxStackBytes)
      badSetting("DISPAR_HOST_STACK_BYTES", text, "a stack size between 16K and 1G");
    config.stackBytes = static_cast<std::size_t>(value);
  }
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  config.stackBytes = (config.stackBytes + page - 1) / page * page;
  return config;
}

}  // namespace dispar::hostk::detail
