// split_for against its baselines, measured in the same run: two units of known speed (synthetic bodies
// that busy-wait a fixed time per item; the GPU unit `ratio` times faster than the CPU unit, 1:1 to 1:16)
// each alone (their solo rates: the ideal is their sum), a static 50/50 split, and split_for's dynamic
// split. Prints the throughput as a share of the ideal (target >= 90%), the speedup over 50/50 (target
// >= 1.2x at 1:4) and how far apart the two units finish (target within 5%). One CPU worker thread, so
// that the two units are the machine's two cores.
//
// Second table: DTSA's host thread. The GPU unit is a simulated asynchronous GPU (tests/split/
// AsyncDevice.h: its work takes no core), so its thread is free while a GPU chunk runs; split_for with
// the GPU's thread computing CPU chunks meanwhile against it waiting, same run. The ideal now counts
// the GPU's thread as a second CPU thread.
#include <dispar/split.h>

#include "AsyncDevice.h"
#include "DeviceState.h"  // runtime/src: the simulated GPU as the active device

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void spin(double seconds) {
  const Clock::time_point until =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < until) {
  }
}

struct Run {
  double seconds;
  dispar::SplitStats stats;
};

Run run(std::size_t n, double cpuCost, double gpuCost, double staticFraction, bool carryOver) {
  dispar::SplitOptions options;
  options.cpuThreads = 1;
  options.staticCpuFraction = staticFraction;
  options.carryOver = carryOver;
  const Clock::time_point start = Clock::now();
  dispar::SplitStats stats = dispar::split_for(
      n, [&](std::size_t b, std::size_t e) { spin(static_cast<double>(e - b) * cpuCost); },
      [&](std::size_t b, std::size_t e) { spin(static_cast<double>(e - b) * gpuCost); }, options);
  return {std::chrono::duration<double>(Clock::now() - start).count(), stats};
}

/// split_for over the simulated GPU (`gpuCost` seconds of device time per item, no core) and one CPU
/// thread spinning `cpuCost` per item; `computes`: the GPU's thread runs CPU chunks while it waits.
Run runAsync(std::size_t n, double cpuCost, double gpuCost, bool computes) {
  dispar::test::AsyncDevice device;
  const dispar::gpu::detail::ScopedActiveDevice active(&device);
  dispar::SplitOptions options;
  options.cpuThreads = 1;
  options.carryOver = false;
  options.gpuThreadComputes = computes;
  const auto deviceTime = [](double seconds) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  };
  const Clock::time_point start = Clock::now();
  dispar::SplitStats stats = dispar::split_for(
      n, [&](std::size_t b, std::size_t e) { spin(static_cast<double>(e - b) * cpuCost); },
      [&](std::size_t b, std::size_t e) { device.queue(deviceTime(static_cast<double>(e - b) * gpuCost)); }, options);
  return {std::chrono::duration<double>(Clock::now() - start).count(), stats};
}

int overlapTable(double cpuCost, double target) {
  std::printf("\nthe GPU's thread computing while its kernels run (simulated asynchronous GPU, 1 CPU thread)\n");
  std::printf("%-6s %10s %10s %9s %9s %9s\n", "ratio", "waits", "computes", "speedup", "of ideal", "overlap");
  int missed = 0;
  for (int ratio : {1, 2, 4, 8}) {
    const double gpuCost = cpuCost / ratio;
    // Ideal: the GPU and two CPU threads (the worker and the GPU's own thread) at their solo rates.
    const std::size_t n = static_cast<std::size_t>(target / cpuCost * (2 + ratio));
    const double ideal = static_cast<double>(n) / (2 / cpuCost + 1 / gpuCost);
    const Run waits = runAsync(n, cpuCost, gpuCost, false);
    const Run computes = runAsync(n, cpuCost, gpuCost, true);
    std::size_t overlapItems = 0;
    for (const dispar::SplitChunk& chunk : computes.stats.chunk_log)
      if (chunk.phase == dispar::SplitPhase::Overlap) overlapItems += chunk.end - chunk.begin;
    const double speedup = waits.seconds / computes.seconds;
    const double share = ideal / computes.seconds;
    std::printf("1:%-4d %9.3fs %9.3fs %8.2fx %8.1f%% %8.1f%%\n", ratio, waits.seconds, computes.seconds, speedup,
                share * 100, 100.0 * static_cast<double>(overlapItems) / static_cast<double>(n));
    missed += speedup <= 1.0;
  }
  std::printf("(overlap: the share of the items the GPU's thread computed on the CPU; the ideal counts it as a\n"
              " second CPU thread)\n");
  return missed;
}

}  // namespace

int main(int argc, char** argv) {
  const double cpuCost = 20e-6;                               // seconds per item on the CPU unit
  const double target = argc > 1 ? std::atof(argv[1]) : 0.4;  // seconds of ideal work per measurement
  std::printf("split_for, synthetic units (CPU unit %.0f us per item, 1 CPU thread + the GPU's thread)\n",
              cpuCost * 1e6);
  std::printf("%-6s %10s %10s %10s %10s %9s %9s %9s %8s\n", "ratio", "cpu alone", "gpu alone", "50/50", "split_for",
              "of ideal", "vs 50/50", "finish", "gpu %");
  int missed = 0;
  for (int ratio : {1, 2, 4, 8, 16}) {
    const double gpuCost = cpuCost / ratio;
    const std::size_t n = static_cast<std::size_t>(target / cpuCost * (1 + ratio));
    const Run cpuAlone = run(n / 4, cpuCost, gpuCost, 1.0, false);
    const Run gpuAlone = run(n / 4, cpuCost, gpuCost, 0.0, false);
    const double ideal = n / (n / 4 / cpuAlone.seconds + n / 4 / gpuAlone.seconds);  // seconds at the summed rates
    const Run half = run(n, cpuCost, gpuCost, 0.5, false);
    const Run dynamic = run(n, cpuCost, gpuCost, -1, false);
    const double share = ideal / dynamic.seconds;
    const double speedup = half.seconds / dynamic.seconds;
    const double finishGap = std::fabs(dynamic.stats.cpu_finish - dynamic.stats.gpu_finish) /
                             std::max(dynamic.stats.cpu_finish, dynamic.stats.gpu_finish);
    std::printf("1:%-4d %9.3fs %9.3fs %9.3fs %9.3fs %8.1f%% %8.2fx %8.1f%% %7.1f%%\n", ratio, cpuAlone.seconds * 4,
                gpuAlone.seconds * 4, half.seconds, dynamic.seconds, share * 100, speedup, finishGap * 100,
                100.0 * dynamic.stats.gpu_items / n);
    missed += share < 0.9 || finishGap > 0.05 || (ratio == 4 && speedup < 1.2);
  }
  std::printf("(cpu/gpu alone: a quarter of the items, times scaled by 4; finish: the gap between the units' last\n"
              " chunks, as a share of the longer)\n");
  missed += overlapTable(cpuCost, target);
  std::printf("%s\n", missed == 0 ? "all targets met" : "some targets missed (is the machine busy?)");
  return 0;
}
