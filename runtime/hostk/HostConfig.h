// The host path's settings, read once from the environment when the host device starts.
#ifndef DISPAR_HOSTK_HOSTCONFIG_H
#define DISPAR_HOSTK_HOSTCONFIG_H

#include <cstddef>

namespace dispar::hostk::detail {

struct HostConfig {
  /// OS threads that run blocks (the launching thread included). DISPAR_HOST_THREADS, default
  /// std::thread::hardware_concurrency().
  unsigned threads = 1;
  /// Usable stack of each fiber (one per CUDA thread that waits at a barrier). DISPAR_HOST_STACK_BYTES
  /// (a byte count, optionally with a K or M suffix), default 64 KiB, rounded up to whole pages.
  std::size_t stackBytes = 64 * 1024;

  /// Reads the environment; a malformed value is reported and the program exits with status 2.
  static HostConfig fromEnvironment();
};

}  // namespace dispar::hostk::detail

#endif  // DISPAR_HOSTK_HOSTCONFIG_H
