// The baselines of bench/host_kernels/suite.dsp: each kernel's computation written as a plain C++ loop
// (serial, g++ -O2) and as the same loop with OpenMP, compiled into libhost_kernels_baselines.a, which
// the suite links. Each function computes exactly what the CUDA kernel of the same name computes over
// the whole grid.
#ifndef DISPAR_BENCH_HOST_KERNELS_BASELINES_H
#define DISPAR_BENCH_HOST_KERNELS_BASELINES_H

namespace baselines {

/// How a baseline runs: a plain loop, or the same loop with `#pragma omp parallel for`.
enum class Form { Serial, OpenMP };

/// PolyBench's fdtd-2d, one time step: ey, then ex, then hz (nx rows, ny columns; ex has ny + 1).
void fdtd2d(Form form, float* ex, float* ey, float* hz, float fict, int nx, int ny);
/// Rodinia's srad, its first kernel: the diffusion coefficient and the four derivatives of every pixel.
void srad(Form form, const float* J, float* C, float* N, float* S, float* W, float* E, int rows, int cols, float q0sqr);
/// C = A B, n x n, row-major.
void matmul(Form form, const float* A, const float* B, float* C, int n);
/// 256-bin histogram of bytes.
void histogram(Form form, const unsigned char* data, unsigned* bins, int n);
/// The exclusive scan of every segment of `segment` elements.
void segmentScan(Form form, const int* in, int* out, int n, int segment);
/// The sum of every segment of `segment` elements.
void segmentSum(Form form, const float* in, float* out, int n, int segment);
/// y = a x + y, n elements.
void saxpy(Form form, float* y, const float* x, float a, int n);

}  // namespace baselines

#endif
