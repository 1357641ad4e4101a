// The GPU architecture the host path presents: compute capability 8.0, the newest whose device features
// it has in full. cudaGetDeviceProperties reports it, and device code compiled for the host takes the
// branches of `#if __CUDA_ARCH__ >= 700` (and every other comparison) that such a GPU takes.
//
// In kernels and __device__ functions, StreamCC spells each `__CUDA_ARCH__` that a preprocessor condition
// compares as DISPAR_CUARCH (same length, so every offset and column stays): __CUDA_ARCH__ itself where
// nvcc compiles for a GPU, this architecture in the host versions. `#ifdef __CUDA_ARCH__` and
// `defined(__CUDA_ARCH__)` keep their meaning (the host versions take the host branch). docs/cuda.md,
// "Architecture conditionals".
#ifndef DISPAR_HOSTK_ARCH_H
#define DISPAR_HOSTK_ARCH_H

#define DISPAR_HOSTK_CUDA_ARCH 800

#ifndef DISPAR_CUARCH
#ifdef __CUDA_ARCH__
#define DISPAR_CUARCH __CUDA_ARCH__
#else
#define DISPAR_CUARCH DISPAR_HOSTK_CUDA_ARCH
#endif
#endif

namespace dispar::hostk {
inline constexpr int kHostCudaArch = DISPAR_HOSTK_CUDA_ARCH;
}  // namespace dispar::hostk

#endif  // DISPAR_HOSTK_ARCH_H
