// <dispar/split.h>: one data-parallel loop shared by this rank's GPU and its CPU cores (included by
// <dispar/dispar.h>). split_for(n, cpu_body, gpu_body) processes every index of [0, n) exactly once,
// some on CPU worker threads (cpu_body(begin, end), several sub-ranges at once) and the rest on the GPU
// (gpu_body(begin, end) launches kernels on the calling thread, the one that owns the rank's GPU; the
// runtime waits for the device after each chunk). How the work is divided is learned while the loop
// runs (DTSA, docs/split.md): a profiling phase of doubling chunks until each worker's rate is stable,
// then chunks proportional to the measured rates, then guided self-scheduling so that all finish
// together. Rates learned at one call site carry over to its next call in the same run.
#ifndef DISPAR_SPLIT_H
#define DISPAR_SPLIT_H

#include <cstddef>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dispar {

enum class SplitUnit { Cpu, Gpu };
/// Overlap: a CPU chunk the GPU's thread ran while its GPU chunk was still on the device.
enum class SplitPhase { Profiling, Proportional, Guided, Static, Overlap };

const char* splitUnitName(SplitUnit unit);     // "cpu", "gpu"
const char* splitPhaseName(SplitPhase phase);  // "profiling", "proportional", "guided", "static", "overlap"

struct SplitOptions {
  /// In [0, 1]: a static split instead of the dynamic one (the CPU threads take the first fraction of
  /// the items in equal parts, the GPU the rest), for comparison. Negative: dynamic.
  double staticCpuFraction = -1;
  /// No chunk is smaller (but the last).
  std::size_t minChunk = 1;
  /// Profiling ends for a worker when its rate changes by less than this between two chunks.
  double stabilityThreshold = 0.05;
  /// Profiling ends for all once this fraction of the items has been handed out in it.
  double profilingLimit = 0.20;
  /// CPU worker threads. 0: DISPAR_SPLIT_CPU_THREADS, else the cores this process may run on, less
  /// one for the GPU's host thread (all of them when there is no GPU body).
  int cpuThreads = 0;
  /// Whether learned rates are used and kept for the call site.
  bool carryOver = true;
  /// Whether the GPU's thread runs CPU chunks while its GPU chunk is still on the device (a GPU body
  /// that returns before its kernels finish: launches and asynchronous copies), instead of waiting.
  bool gpuThreadComputes = true;
};

/// One chunk as it ran.
struct SplitChunk {
  SplitUnit unit;
  int worker;  // 0: the GPU's thread (its CPU chunks have phase Overlap); 1.. the CPU threads
  std::size_t begin, end;
  double startSeconds;  // from the start of the call
  double seconds;
  SplitPhase phase;
};

struct SplitStats {
  std::size_t cpu_items = 0, gpu_items = 0;
  double cpu_seconds = 0, gpu_seconds = 0;  // busy time; the CPU's summed over its threads
  double cpu_finish = 0, gpu_finish = 0;    // when each unit's last chunk ended, from the start
  double wall_seconds = 0;
  std::size_t chunks = 0;
  double cpu_rate = 0, gpu_rate = 0;  // items per second at the end (the CPU's: all threads together)
  int cpu_threads = 0;
  bool carried_over = false;  // started from the rates of an earlier call at the same site
  std::vector<SplitChunk> chunk_log;
};

/// An exception thrown by a body: the loop stops handing out work, the other chunks in flight finish,
/// and this is thrown naming the unit and the range; cause() is the body's own exception.
class SplitError : public std::runtime_error {
 public:
  SplitError(const std::string& message, SplitUnit unit, std::size_t begin, std::size_t end, std::exception_ptr cause)
      : std::runtime_error(message), unit_(unit), begin_(begin), end_(end), cause_(std::move(cause)) {}
  SplitUnit unit() const { return unit_; }
  std::size_t begin() const { return begin_; }
  std::size_t end() const { return end_; }
  std::exception_ptr cause() const { return cause_; }

 private:
  SplitUnit unit_;
  std::size_t begin_, end_;
  std::exception_ptr cause_;
};

namespace detail {
/// The rates learned at one split_for call site in this process ("app.dsp:41#7": file, line and CPU
/// thread count), for the run profile.
struct SplitSiteRates {
  std::string site;
  double gpuRate = 0, cpuThreadRate = 0;  // items per second; 0: not measured
};
std::vector<SplitSiteRates> splitSiteRates();

using SplitBody = std::function<void(std::size_t, std::size_t)>;
/// `gpu` may be null: a parallel loop on the CPU threads alone.
SplitStats runSplit(std::size_t n, const SplitBody& cpu, const SplitBody* gpu, const SplitOptions& options,
                    const char* file, int line);
}  // namespace detail

/// Runs `cpu_body` and `gpu_body` over [0, n) as described above. The call site (file and line) keys the
/// rates carried over to the next call.
template <class CpuBody, class GpuBody>
SplitStats split_for(std::size_t n, CpuBody cpu_body, GpuBody gpu_body, const SplitOptions& options = {},
                     const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  const detail::SplitBody cpu = std::move(cpu_body);
  const detail::SplitBody gpu = std::move(gpu_body);
  return detail::runSplit(n, cpu, &gpu, options, file, line);
}

/// The CPU threads alone (a rank without a GPU body): a parallel loop with the same scheduling.
template <class CpuBody>
SplitStats split_for(std::size_t n, CpuBody cpu_body, std::nullptr_t, const SplitOptions& options = {},
                     const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  const detail::SplitBody cpu = std::move(cpu_body);
  return detail::runSplit(n, cpu, nullptr, options, file, line);
}

}  // namespace dispar

#endif  // DISPAR_SPLIT_H
