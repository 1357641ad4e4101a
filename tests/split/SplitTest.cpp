// split_for: every index exactly once whatever the timing, n = 0, 1 and fewer items than workers,
// exceptions from either body naming the unit and range, rates carried over at one call site, the static
// split, and the CPU-only loop. Timing never decides a pass: delays are random, assertions are about
// coverage and bookkeeping (the balance itself is measured by bench/split).
#include <dispar/split.h>

#include "AsyncDevice.h"
#include "DeviceState.h"  // runtime/src: makes a test device the active one

#include <gtest/gtest.h>

#include <cstdio>

#include <cstring>
#include <stdexcept>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

namespace {

using dispar::SplitPhase;
using dispar::SplitUnit;

// Counts how many times each index was processed, and by which unit.
struct Coverage {
  explicit Coverage(std::size_t n) : times(n), byGpu(n) {}
  std::vector<std::atomic<int>> times;
  std::vector<std::atomic<int>> byGpu;
  void mark(std::size_t begin, std::size_t end, bool gpu) {
    for (std::size_t i = begin; i < end; ++i) {
      times[i].fetch_add(1);
      if (gpu) byGpu[i].store(1);
    }
  }
  void expectEachOnce() const {
    for (std::size_t i = 0; i < times.size(); ++i) ASSERT_EQ(times[i].load(), 1) << "index " << i;
  }
};

void expectConsistent(const dispar::SplitStats& stats, std::size_t n, const Coverage& coverage) {
  EXPECT_EQ(stats.cpu_items + stats.gpu_items, n);
  EXPECT_EQ(stats.chunks, stats.chunk_log.size());
  std::size_t next = 0, gpuItems = 0;
  for (const dispar::SplitChunk& chunk : stats.chunk_log) {  // sorted, contiguous, disjoint
    EXPECT_EQ(chunk.begin, next);
    EXPECT_LT(chunk.begin, chunk.end);
    next = chunk.end;
    if (chunk.unit == SplitUnit::Gpu) gpuItems += chunk.end - chunk.begin;
  }
  EXPECT_EQ(next, n);
  EXPECT_EQ(gpuItems, stats.gpu_items);
  std::size_t markedByGpu = 0;
  for (const auto& flag : coverage.byGpu) markedByGpu += static_cast<std::size_t>(flag.load());
  EXPECT_EQ(markedByGpu, stats.gpu_items);
}

TEST(SplitFor, EveryIndexExactlyOnceUnderRandomDelays) {
  for (int trial = 0; trial < 5; ++trial) {
    const std::size_t n = 5000 + 997 * static_cast<std::size_t>(trial);
    Coverage coverage(n);
    std::mutex randomMutex;
    std::mt19937 random(static_cast<unsigned>(trial));
    const auto delay = [&] {
      std::lock_guard<std::mutex> lock(randomMutex);
      return std::uniform_int_distribution<int>(0, 200)(random);
    };
    dispar::SplitOptions options;
    options.cpuThreads = 3;
    options.carryOver = false;
    const dispar::SplitStats stats = dispar::split_for(
        n,
        [&](std::size_t b, std::size_t e) {
          std::this_thread::sleep_for(std::chrono::microseconds(delay()));
          coverage.mark(b, e, false);
        },
        [&](std::size_t b, std::size_t e) {
          std::this_thread::sleep_for(std::chrono::microseconds(delay()));
          coverage.mark(b, e, true);
        },
        options);
    coverage.expectEachOnce();
    expectConsistent(stats, n, coverage);
    EXPECT_EQ(stats.cpu_threads, 3);
  }
}

TEST(SplitFor, ZeroOneAndFewerItemsThanWorkers) {
  dispar::SplitOptions options;
  options.cpuThreads = 8;
  options.carryOver = false;
  int calls = 0;
  dispar::SplitStats none = dispar::split_for(
      0, [&](std::size_t, std::size_t) { ++calls; }, [&](std::size_t, std::size_t) { ++calls; }, options);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(none.chunks, 0u);
  for (std::size_t n : {1u, 3u, 7u}) {
    Coverage coverage(n);
    const dispar::SplitStats stats = dispar::split_for(
        n, [&](std::size_t b, std::size_t e) { coverage.mark(b, e, false); },
        [&](std::size_t b, std::size_t e) { coverage.mark(b, e, true); }, options);
    coverage.expectEachOnce();
    expectConsistent(stats, n, coverage);
  }
}

TEST(SplitFor, CpuBodyExceptionStopsTheLoopNamingUnitAndRange) {
  const std::size_t n = 20000, bad = 12345;
  Coverage coverage(n);
  dispar::SplitOptions options;
  options.cpuThreads = 2;
  options.carryOver = false;
  try {
    dispar::split_for(
        n,
        [&](std::size_t b, std::size_t e) {
          if (b <= bad && bad < e) throw std::out_of_range("bad sample");
          coverage.mark(b, e, false);
        },
        [&](std::size_t b, std::size_t e) {
          if (b <= bad && bad < e) throw std::out_of_range("bad sample");
          std::this_thread::sleep_for(std::chrono::microseconds(50));
          coverage.mark(b, e, true);
        },
        options);
    FAIL() << "no exception";
  } catch (const dispar::SplitError& error) {
    EXPECT_LE(error.begin(), bad);
    EXPECT_GT(error.end(), bad);
    const std::string unit = dispar::splitUnitName(error.unit());
    const std::string expected = "the " + unit + " body failed on items [" + std::to_string(error.begin()) + ", " +
                                 std::to_string(error.end()) + "): bad sample";
    EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("SplitTest.cpp:"), std::string::npos) << error.what();
    EXPECT_THROW(std::rethrow_exception(error.cause()), std::out_of_range);
  }
  for (std::size_t i = 0; i < n; ++i) EXPECT_LE(coverage.times[i].load(), 1) << i;  // never twice
}

TEST(SplitFor, GpuBodyExceptionIsNamed) {
  dispar::SplitOptions options;
  options.cpuThreads = 1;
  options.carryOver = false;
  try {
    dispar::split_for(
        1000, [](std::size_t, std::size_t) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); },
        [](std::size_t, std::size_t) { throw std::runtime_error("kernel 'k' launched at app.dsp:3:1 failed"); },
        options);
    FAIL() << "no exception";
  } catch (const dispar::SplitError& error) {
    EXPECT_EQ(error.unit(), SplitUnit::Gpu);
    // Which items the GPU's chunk holds depends on which unit claimed first: the CPU thread may take
    // item 0 before the GPU's thread starts. The message names the chunk's range, whatever it is.
    const std::string what = error.what();
    const std::size_t at = what.find("the gpu body failed on items [");
    ASSERT_NE(at, std::string::npos) << what;
    std::size_t begin = 0, end = 0;
    ASSERT_EQ(std::sscanf(what.c_str() + at, "the gpu body failed on items [%zu, %zu)", &begin, &end), 2) << what;
    EXPECT_LT(begin, end) << what;
    EXPECT_LE(end, 1000u) << what;
    EXPECT_NE(std::string(error.what()).find("kernel 'k' launched at app.dsp:3:1 failed"), std::string::npos);
  }
}

// The same call site twice (the loop is in one function): the second call starts from the first's
// rates, with no profiling chunk. Each chunk takes a while, so that every worker measures a rate in the
// first call (a unit that learned none would profile again).
dispar::SplitStats sharedSite(std::size_t n, Coverage& coverage) {
  dispar::SplitOptions options;
  options.cpuThreads = 2;
  const auto slow = [](std::size_t b, std::size_t e) {
    std::this_thread::sleep_for(std::chrono::microseconds(100 + 2 * (e - b)));
  };
  return dispar::split_for(
      n,
      [&](std::size_t b, std::size_t e) {
        slow(b, e);
        coverage.mark(b, e, false);
      },
      [&](std::size_t b, std::size_t e) {
        slow(b, e);
        coverage.mark(b, e, true);
      },
      options);
}

TEST(SplitFor, RatesCarryOverToTheNextCallAtTheSameSite) {
  const std::size_t n = 50000;
  Coverage first(n), second(n);
  const dispar::SplitStats a = sharedSite(n, first);
  const dispar::SplitStats b = sharedSite(n, second);
  first.expectEachOnce();
  second.expectEachOnce();
  EXPECT_FALSE(a.carried_over);
  EXPECT_TRUE(b.carried_over);
  const auto profiling = [](const dispar::SplitStats& stats) {
    std::size_t count = 0;
    for (const dispar::SplitChunk& chunk : stats.chunk_log) count += chunk.phase == SplitPhase::Profiling;
    return count;
  };
  EXPECT_GT(profiling(a), 0u);
  EXPECT_EQ(profiling(b), 0u);
  EXPECT_GT(b.gpu_rate, 0);
  EXPECT_GT(b.cpu_rate, 0);
}

TEST(SplitFor, StaticSplitGivesTheCpuItsFraction) {
  const std::size_t n = 1000;
  Coverage coverage(n);
  dispar::SplitOptions options;
  options.cpuThreads = 2;
  options.staticCpuFraction = 0.25;
  const dispar::SplitStats stats = dispar::split_for(
      n, [&](std::size_t b, std::size_t e) { coverage.mark(b, e, false); },
      [&](std::size_t b, std::size_t e) { coverage.mark(b, e, true); }, options);
  coverage.expectEachOnce();
  EXPECT_EQ(stats.cpu_items, 250u);
  EXPECT_EQ(stats.gpu_items, 750u);
  ASSERT_EQ(stats.chunks, 3u);
  EXPECT_EQ(stats.chunk_log[0].end, 125u);
  EXPECT_EQ(stats.chunk_log[2].unit, SplitUnit::Gpu);
  for (const dispar::SplitChunk& chunk : stats.chunk_log) EXPECT_EQ(chunk.phase, SplitPhase::Static);
}

TEST(SplitFor, WithoutAGpuBodyItIsAParallelLoop) {
  const std::size_t n = 30000;
  Coverage coverage(n);
  std::mutex idsMutex;
  std::set<std::thread::id> ids;
  dispar::SplitOptions options;
  options.cpuThreads = 3;
  const dispar::SplitStats stats = dispar::split_for(
      n,
      [&](std::size_t b, std::size_t e) {
        {
          std::lock_guard<std::mutex> lock(idsMutex);
          ids.insert(std::this_thread::get_id());
        }
        std::this_thread::sleep_for(std::chrono::microseconds(20));
        coverage.mark(b, e, false);
      },
      nullptr, options);
  coverage.expectEachOnce();
  EXPECT_EQ(stats.gpu_items, 0u);
  EXPECT_EQ(stats.cpu_items, n);
  EXPECT_EQ(stats.cpu_threads, 3);
  EXPECT_LE(ids.size(), 3u);  // the caller and two more threads
}

TEST(SplitFor, BadOptionsAreRefused) {
  dispar::SplitOptions options;
  options.minChunk = 0;
  EXPECT_THROW(dispar::split_for(
                   10, [](std::size_t, std::size_t) {}, [](std::size_t, std::size_t) {}, options),
               std::invalid_argument);
  options = {};
  options.profilingLimit = 2;
  EXPECT_THROW(dispar::split_for(10, [](std::size_t, std::size_t) {}, nullptr, options), std::invalid_argument);
}

// DTSA's host thread: while its GPU chunk runs, the GPU's thread takes CPU chunks (phase overlap) from
// the same cursor instead of waiting; still every index once. Off, it only waits.
TEST(SplitFor, GpuThreadComputesWhileItsKernelsRun) {
  constexpr std::size_t kItems = 3000;
  for (const bool computes : {true, false}) {
    SCOPED_TRACE(computes ? "gpu thread computes" : "gpu thread waits");
    dispar::test::AsyncDevice device;
    const dispar::gpu::detail::ScopedActiveDevice active(&device);
    Coverage coverage(kItems);
    dispar::SplitOptions options;
    options.cpuThreads = 1;
    options.carryOver = false;
    options.gpuThreadComputes = computes;
    const dispar::SplitStats stats = dispar::split_for(
        kItems,
        [&](std::size_t begin, std::size_t end) {
          std::this_thread::sleep_for(std::chrono::microseconds(20 * (end - begin)));
          coverage.mark(begin, end, false);
        },
        [&](std::size_t begin, std::size_t end) {
          device.queue(std::chrono::microseconds(4 * (end - begin)));  // "launched": returns at once
          coverage.mark(begin, end, true);
        },
        options);
    coverage.expectEachOnce();
    expectConsistent(stats, kItems, coverage);
    std::size_t overlapChunks = 0;
    for (const dispar::SplitChunk& chunk : stats.chunk_log) {
      if (chunk.phase != SplitPhase::Overlap) continue;
      ++overlapChunks;
      EXPECT_EQ(chunk.unit, SplitUnit::Cpu);
      EXPECT_EQ(chunk.worker, 0);
    }
    if (computes)
      EXPECT_GT(overlapChunks, 0u);
    else
      EXPECT_EQ(overlapChunks, 0u);
    EXPECT_EQ(device.synchronizes.load(),
              static_cast<int>(std::count_if(stats.chunk_log.begin(), stats.chunk_log.end(),
                                             [](const dispar::SplitChunk& c) { return c.unit == SplitUnit::Gpu; })));
  }
}

TEST(SplitFor, OverlapChunkExceptionIsNamedAsTheCpus) {
  dispar::test::AsyncDevice device;
  const dispar::gpu::detail::ScopedActiveDevice active(&device);
  dispar::SplitOptions options;
  options.cpuThreads = 1;
  options.carryOver = false;
  std::atomic<bool> gpuThreadFailed{false};
  const std::thread::id gpuThread = std::this_thread::get_id();
  try {
    dispar::split_for(
        2000,
        [&](std::size_t, std::size_t) {
          if (std::this_thread::get_id() == gpuThread) {
            gpuThreadFailed = true;
            throw std::runtime_error("bad row");
          }
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        },
        [&](std::size_t begin, std::size_t end) { device.queue(std::chrono::microseconds(50 * (end - begin))); },
        options);
    FAIL() << "no exception";
  } catch (const dispar::SplitError& error) {
    ASSERT_TRUE(gpuThreadFailed.load());
    EXPECT_EQ(error.unit(), SplitUnit::Cpu);
    EXPECT_NE(std::string(error.what()).find("the cpu body failed on items ["), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("bad row"), std::string::npos) << error.what();
  }
  EXPECT_FALSE(device.busy());  // the GPU chunk's work was waited for
}

}  // namespace
