// The mapper's estimate of a GPU's throughput, relative to a reference GPU.
#ifndef STREAMMAP_GPU_SPEED_H
#define STREAMMAP_GPU_SPEED_H

#include "streammap/Cluster.h"

namespace dispar::streammap {

/// The reference GPU every estimate is relative to: an NVIDIA A100 (SXM4), 108 SMs at 1410 MHz,
/// 64 FP32 lanes per SM. Its speed is 1.0.
struct ReferenceGpu {
  static constexpr int kMultiprocessors = 108;
  static constexpr int kClockKHz = 1410000;
  static constexpr int kFp32LanesPerSm = 64;
};

/// How many times faster the reference GPU runs a CG vertex's work than one CPU core of relative speed
/// 1.0 runs it on the host path: what a CG vertex costs on a CPU when no run measured it there. An
/// assumption, not a measurement (a profile of the vertex on a CPU replaces it); streammap simulate
/// charges kernels by the same figure unless --gpu-speedup says otherwise (docs/simulation.md).
inline constexpr double kReferenceGpuSpeedupOverCore = 100;

/// FP32 lanes per SM for a compute capability (CUDA programming guide, "Arithmetic instructions").
/// Unknown or future architectures get 128, the figure of every architecture since 8.6.
int fp32LanesPerSm(int ccMajor, int ccMinor);

/// The GPU's relative speed: its measured rate when the database has one; otherwise
/// SMs x clock x FP32 lanes per SM over the reference GPU's product; 1.0 when SM count or clock is
/// unknown (zero).
double estimateGpuSpeed(const GpuInfo& gpu);

}  // namespace dispar::streammap

#endif
