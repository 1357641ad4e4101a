// split_for's scheduler (docs/split.md). Workers: 0 is the GPU's thread (the caller, which owns the
// rank's device), 1..T the CPU threads. One cursor hands out contiguous chunks under a lock, so every
// index goes to exactly one worker whatever the timing; each worker's chunk size follows its phase.
#include <dispar/split.h>

#include <dispar/gpu/Device.h>
#include <dispar_lang/CpuQuota.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace dispar {

const char* splitUnitName(SplitUnit unit) { return unit == SplitUnit::Cpu ? "cpu" : "gpu"; }

const char* splitPhaseName(SplitPhase phase) {
  switch (phase) {
    case SplitPhase::Profiling: return "profiling";
    case SplitPhase::Proportional: return "proportional";
    case SplitPhase::Guided: return "guided";
    case SplitPhase::Static: return "static";
    case SplitPhase::Overlap: return "overlap";
  }
  return "?";
}

namespace detail {
namespace {

using Clock = std::chrono::steady_clock;

// Below this share of the items left, chunks are guided (a rate-weighted half of each worker's share
// of what remains); above it, proportional rounds of kRoundShare of the items.
constexpr double kGuidedShare = 0.10;
constexpr double kRoundShare = 0.05;
// The first profiling chunk of each worker: a small part of the items, doubled until stable.
constexpr double kFirstChunkShare = 0.002;

int defaultCpuThreads(bool withGpu) {
  if (const char* text = std::getenv("DISPAR_SPLIT_CPU_THREADS"); text && *text) {
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (*end != '\0' || value < 1 || value > 1024)
      throw std::runtime_error(std::string("DISPAR_SPLIT_CPU_THREADS='") + text +
                               "' is not a thread count between 1 and 1024");
    return static_cast<int>(value);
  }
  const int cores = static_cast<int>(lang::usableCores());
  return std::max(1, withGpu ? cores - 1 : cores);
}

/// Rates learned at a call site: the GPU's, and one CPU thread's.
struct SiteRates {
  double gpu = 0, cpuThread = 0;
};

class SiteRegistry {
 public:
  std::optional<SiteRates> find(const std::string& site) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = sites_.find(site);
    return found == sites_.end() ? std::nullopt : std::optional<SiteRates>(found->second);
  }
  void store(const std::string& site, SiteRates rates) {
    std::lock_guard<std::mutex> lock(mutex_);
    sites_[site] = rates;
  }
  std::vector<detail::SplitSiteRates> all() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<detail::SplitSiteRates> rates;
    for (const auto& [site, learned] : sites_) rates.push_back({site, learned.gpu, learned.cpuThread});
    return rates;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, SiteRates> sites_;
};

SiteRegistry& siteRegistry() {
  static SiteRegistry* registry = new SiteRegistry();
  return *registry;
}

struct Claim {
  std::size_t begin = 0, end = 0;
  SplitPhase phase = SplitPhase::Profiling;
};

struct Worker {
  explicit Worker(SplitUnit u) : unit(u) {}
  SplitUnit unit;
  std::size_t chunk = 1;  // the next profiling chunk
  double rate = 0;        // items per second
  bool hasRate = false;
  bool profiling = true;
  std::optional<Claim> staticRange;  // a static split's one range, until taken
};

class Scheduler {
 public:
  Scheduler(std::size_t n, const SplitOptions& options, bool withGpu, int cpuThreads,
            const std::optional<SiteRates>& carried)
      : n_(n), options_(options) {
    if (withGpu)
      workers_.push_back(Worker{SplitUnit::Gpu});
    else
      workers_.push_back(Worker{SplitUnit::Cpu});  // the caller is a CPU thread too
    for (int t = 0; t < cpuThreads; ++t) workers_.push_back(Worker{SplitUnit::Cpu});
    const std::size_t count = workers_.size();
    const std::size_t first = std::max<std::size_t>(
        options.minChunk, static_cast<std::size_t>(std::ceil(kFirstChunkShare * static_cast<double>(n) / count)));
    for (Worker& worker : workers_) {
      worker.chunk = std::max<std::size_t>(1, first);
      if (carried) {
        worker.rate = worker.unit == SplitUnit::Gpu ? carried->gpu : carried->cpuThread;
        worker.hasRate = worker.rate > 0;
        worker.profiling = !worker.hasRate;
      }
    }
    if (options.staticCpuFraction >= 0) assignStatic(withGpu);
  }

  std::size_t workers() const { return workers_.size(); }
  SplitUnit unitOf(int worker) const { return workers_[static_cast<std::size_t>(worker)].unit; }

  bool claim(int index, Claim& out) {
    std::lock_guard<std::mutex> lock(mutex_);
    Worker& worker = workers_[static_cast<std::size_t>(index)];
    if (stopped_) return false;
    if (options_.staticCpuFraction >= 0) {
      if (!worker.staticRange || worker.staticRange->begin == worker.staticRange->end) return false;
      out = *worker.staticRange;
      worker.staticRange.reset();
      return true;
    }
    if (cursor_ >= n_) return false;
    const std::size_t remaining = n_ - cursor_;
    double size = 0;
    if (worker.profiling && static_cast<double>(profiled_) < options_.profilingLimit * static_cast<double>(n_)) {
      size = static_cast<double>(worker.chunk);
      out.phase = SplitPhase::Profiling;
    } else {
      worker.profiling = false;
      const double total = totalRate();
      const double rate = worker.hasRate ? worker.rate : total / static_cast<double>(workers_.size());
      if (static_cast<double>(remaining) > kGuidedShare * static_cast<double>(n_)) {
        size = rate * (kRoundShare * static_cast<double>(n_) / total);
        out.phase = SplitPhase::Proportional;
      } else {
        size = rate * static_cast<double>(remaining) / total / 2;
        out.phase = SplitPhase::Guided;
      }
    }
    std::size_t items = std::max<std::size_t>(options_.minChunk, static_cast<std::size_t>(std::ceil(size)));
    items = std::clamp<std::size_t>(items, 1, remaining);
    out.begin = cursor_;
    out.end = cursor_ + items;
    cursor_ += items;
    if (out.phase == SplitPhase::Profiling) profiled_ += items;
    return true;
  }

  /// A CPU chunk for the GPU's thread while its GPU chunk runs for about `gpuSecondsLeft` more: a
  /// quarter of what one CPU thread does in that time (at least minChunk), so that it rarely keeps the
  /// GPU waiting; nullopt-like false when nothing is left.
  bool claimOverlap(double gpuSecondsLeft, Claim& out) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_ || options_.staticCpuFraction >= 0 || cursor_ >= n_) return false;
    double threadRate = 0;
    int measured = 0;
    for (const Worker& worker : workers_)
      if (worker.unit == SplitUnit::Cpu && worker.hasRate) threadRate += worker.rate, ++measured;
    double size = static_cast<double>(options_.minChunk);
    if (measured > 0) size = std::max(size, threadRate / measured * std::max(gpuSecondsLeft, 0.0) / 4);
    const std::size_t items = std::clamp<std::size_t>(static_cast<std::size_t>(size), 1, n_ - cursor_);
    out = Claim{cursor_, cursor_ + items, SplitPhase::Overlap};
    cursor_ += items;
    return true;
  }

  /// The GPU worker's rate (0 until measured).
  double gpuRate() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Worker& worker : workers_)
      if (worker.unit == SplitUnit::Gpu && worker.hasRate) return worker.rate;
    return 0;
  }

  void report(int index, const Claim& claim, double seconds) {
    std::lock_guard<std::mutex> lock(mutex_);
    Worker& worker = workers_[static_cast<std::size_t>(index)];
    const double measured = static_cast<double>(claim.end - claim.begin) / std::max(seconds, 1e-9);
    if (claim.phase == SplitPhase::Profiling) {
      // Stable: the rate moved by less than the threshold since the previous (half as big) chunk.
      if (worker.hasRate && std::fabs(measured - worker.rate) < options_.stabilityThreshold * worker.rate)
        worker.profiling = false;
      else
        worker.chunk *= 2;
      worker.rate = measured;
    } else {
      worker.rate = worker.hasRate ? 0.5 * worker.rate + 0.5 * measured : measured;
    }
    worker.hasRate = true;
  }

  void stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
  }

  SiteRates rates() {
    std::lock_guard<std::mutex> lock(mutex_);
    SiteRates rates;
    double cpuSum = 0;
    int cpuCount = 0;
    for (const Worker& worker : workers_) {
      if (!worker.hasRate) continue;
      if (worker.unit == SplitUnit::Gpu)
        rates.gpu = worker.rate;
      else
        cpuSum += worker.rate, ++cpuCount;
    }
    if (cpuCount > 0) rates.cpuThread = cpuSum / cpuCount;
    return rates;
  }

 private:
  // Workers without a measured rate yet count at the mean of those with one.
  double totalRate() const {
    double sum = 0;
    int measured = 0;
    for (const Worker& worker : workers_)
      if (worker.hasRate) sum += worker.rate, ++measured;
    if (measured == 0) return 1;
    return sum / measured * static_cast<double>(workers_.size());
  }

  void assignStatic(bool withGpu) {
    const double fraction = std::min(1.0, options_.staticCpuFraction);
    const std::size_t cpuItems =
        withGpu ? static_cast<std::size_t>(std::llround(fraction * static_cast<double>(n_))) : n_;
    std::size_t cpuWorkers = 0;
    for (const Worker& worker : workers_) cpuWorkers += worker.unit == SplitUnit::Cpu;
    std::size_t next = 0, cpuIndex = 0;
    for (Worker& worker : workers_) {
      if (worker.unit != SplitUnit::Cpu) continue;
      const std::size_t end = cpuItems * (cpuIndex + 1) / cpuWorkers;
      worker.staticRange = Claim{next, end, SplitPhase::Static};
      next = end;
      ++cpuIndex;
    }
    for (Worker& worker : workers_)
      if (worker.unit == SplitUnit::Gpu) worker.staticRange = Claim{cpuItems, n_, SplitPhase::Static};
  }

  const std::size_t n_;
  const SplitOptions options_;
  std::mutex mutex_;
  std::vector<Worker> workers_;
  std::size_t cursor_ = 0;
  std::size_t profiled_ = 0;
  bool stopped_ = false;
};

struct Failure {
  SplitUnit unit;
  std::size_t begin, end;
  std::exception_ptr cause;
};

std::string describe(const std::exception_ptr& cause) {
  try {
    std::rethrow_exception(cause);
  } catch (const std::exception& error) {
    return error.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

}  // namespace

std::vector<SplitSiteRates> splitSiteRates() { return siteRegistry().all(); }

SplitStats runSplit(std::size_t n, const SplitBody& cpu, const SplitBody* gpu, const SplitOptions& options,
                    const char* file, int line) {
  if (options.minChunk == 0 || !(options.stabilityThreshold > 0) ||
      !(options.profilingLimit >= 0 && options.profilingLimit <= 1))
    throw std::invalid_argument(
        "split_for: minChunk must be at least 1, stabilityThreshold above 0 and profilingLimit in [0, 1]");
  SplitStats stats;
  const bool withGpu = gpu != nullptr && static_cast<bool>(*gpu);
  // The caller is the GPU's worker, or one of the CPU workers when there is no GPU body.
  const int cpuThreads = options.cpuThreads > 0 ? options.cpuThreads : defaultCpuThreads(withGpu);
  const int spawned = withGpu ? cpuThreads : cpuThreads - 1;
  stats.cpu_threads = withGpu ? cpuThreads : std::max(cpuThreads, 1);
  if (n == 0) return stats;

  const std::string site = std::string(file ? file : "?") + ":" + std::to_string(line) + (withGpu ? "" : ":cpu") + "#" +
                           std::to_string(cpuThreads);
  std::optional<SiteRates> carried;
  if (options.carryOver && options.staticCpuFraction < 0) carried = siteRegistry().find(site);
  stats.carried_over = carried.has_value();
  Scheduler scheduler(n, options, withGpu, spawned, carried);

  const Clock::time_point start = Clock::now();
  std::mutex logMutex;
  std::optional<Failure> failure;
  const auto log = [&](SplitUnit unit, int index, const Claim& claim, Clock::time_point began, double seconds) {
    std::lock_guard<std::mutex> lock(logMutex);
    stats.chunk_log.push_back(SplitChunk{unit, index, claim.begin, claim.end,
                                         std::chrono::duration<double>(began - start).count(), seconds, claim.phase});
  };
  // Stops the loop; the first failure is the one reported.
  const auto fail = [&](SplitUnit unit, const Claim& claim) {
    scheduler.stop();
    std::lock_guard<std::mutex> lock(logMutex);
    if (!failure) failure = Failure{unit, claim.begin, claim.end, std::current_exception()};
  };
  gpu::Device* const device = withGpu ? gpu::detail::activeDevice() : nullptr;
  // DTSA: while the GPU chunk is on the device, its thread computes small CPU chunks instead of waiting.
  // The GPU chunk's time ends when the thread sees the device idle: small chunks keep that close.
  // False when a CPU chunk failed (recorded).
  const auto overlap = [&](const Claim& gpuChunk, Clock::time_point began) {
    if (device == nullptr || !options.gpuThreadComputes) return true;
    const double gpuRate = scheduler.gpuRate();
    const double expected = gpuRate > 0 ? static_cast<double>(gpuChunk.end - gpuChunk.begin) / gpuRate : 0;
    Claim claim;
    while (device->busy()) {
      const Clock::time_point now = Clock::now();
      if (!scheduler.claimOverlap(expected - std::chrono::duration<double>(now - began).count(), claim)) break;
      try {
        cpu(claim.begin, claim.end);
      } catch (...) {
        fail(SplitUnit::Cpu, claim);
        return false;
      }
      log(SplitUnit::Cpu, 0, claim, now, std::chrono::duration<double>(Clock::now() - now).count());
    }
    return true;
  };
  const auto work = [&](int index) {
    const SplitUnit unit = scheduler.unitOf(index);
    const SplitBody& body = unit == SplitUnit::Gpu ? *gpu : cpu;
    Claim claim;
    while (scheduler.claim(index, claim)) {
      const Clock::time_point began = Clock::now();
      try {
        body(claim.begin, claim.end);
        if (unit == SplitUnit::Gpu) {
          if (!overlap(claim, began)) {
            if (device != nullptr) device->synchronize();  // the GPU chunk's kernels still use its buffers
            return;
          }
          if (device != nullptr) device->synchronize();
        }
      } catch (...) {
        fail(unit, claim);
        return;
      }
      const double seconds = std::chrono::duration<double>(Clock::now() - began).count();
      scheduler.report(index, claim, seconds);
      log(unit, index, claim, began, seconds);
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(spawned));
  for (int t = 1; t <= spawned; ++t) threads.emplace_back(work, t);
  work(0);
  for (std::thread& thread : threads) thread.join();
  stats.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();

  if (failure)
    throw SplitError(std::string("split_for at ") + (file ? file : "?") + ":" + std::to_string(line) + ": the " +
                         splitUnitName(failure->unit) + " body failed on items [" + std::to_string(failure->begin) +
                         ", " + std::to_string(failure->end) + "): " + describe(failure->cause),
                     failure->unit, failure->begin, failure->end, failure->cause);

  std::sort(stats.chunk_log.begin(), stats.chunk_log.end(),
            [](const SplitChunk& a, const SplitChunk& b) { return a.begin < b.begin; });
  for (const SplitChunk& chunk : stats.chunk_log) {
    const std::size_t items = chunk.end - chunk.begin;
    const double finish = chunk.startSeconds + chunk.seconds;
    if (chunk.unit == SplitUnit::Cpu) {
      stats.cpu_items += items;
      stats.cpu_seconds += chunk.seconds;
      stats.cpu_finish = std::max(stats.cpu_finish, finish);
    } else {
      stats.gpu_items += items;
      stats.gpu_seconds += chunk.seconds;
      stats.gpu_finish = std::max(stats.gpu_finish, finish);
    }
  }
  stats.chunks = stats.chunk_log.size();
  const SiteRates learned = scheduler.rates();
  stats.gpu_rate = learned.gpu;
  stats.cpu_rate = learned.cpuThread * stats.cpu_threads;
  if (options.carryOver && options.staticCpuFraction < 0) siteRegistry().store(site, learned);
  return stats;
}

}  // namespace detail
}  // namespace dispar
