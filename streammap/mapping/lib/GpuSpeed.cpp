#include "streammap/GpuSpeed.h"

namespace dispar::streammap {

namespace {

struct LanesPerSm {
  int major;
  int minor;  // -1: every minor of that major
  int lanes;
};

// FP32 lanes per SM by compute capability, first match wins.
constexpr LanesPerSm kLanesPerSm[] = {
    {3, -1, 192},                                 // Kepler
    {5, -1, 128},                                 // Maxwell
    {6, 0, 64},    {6, -1, 128},                  // Pascal: GP100 / GP10x
    {7, -1, 64},                                  // Volta, Turing
    {8, 0, 64},    {8, -1, 128},                  // Ampere: GA100 / GA10x, Ada (8.9)
    {9, -1, 128},                                 // Hopper
    {10, -1, 128}, {11, -1, 128}, {12, -1, 128},  // Blackwell
};

constexpr int kUnknownArchitectureLanes = 128;

}  // namespace

int fp32LanesPerSm(int ccMajor, int ccMinor) {
  for (const LanesPerSm& row : kLanesPerSm)
    if (row.major == ccMajor && (row.minor < 0 || row.minor == ccMinor)) return row.lanes;
  return kUnknownArchitectureLanes;
}

double estimateGpuSpeed(const GpuInfo& gpu) {
  if (gpu.measuredRate && *gpu.measuredRate > 0) return *gpu.measuredRate;
  if (gpu.multiprocessors <= 0 || gpu.clockKHz <= 0) return 1.0;
  const double reference =
      static_cast<double>(ReferenceGpu::kMultiprocessors) * ReferenceGpu::kClockKHz * ReferenceGpu::kFp32LanesPerSm;
  return static_cast<double>(gpu.multiprocessors) * gpu.clockKHz * fp32LanesPerSm(gpu.ccMajor, gpu.ccMinor) / reference;
}

}  // namespace dispar::streammap
