// fusion_bench: each library-call fusion pattern as written (a loop of calls) and as disparcc's fusion
// pass rewrites it (one call), in the same run; prints both times, the ratio and the pattern's target,
// and checks that both compute the same values.
#include <cblas.h>
#include <cufft.h>
#include <fftw3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define FUSION_KERNELS unfused
#include "kernels.dsp"
#undef FUSION_KERNELS
#define FUSION_KERNELS fused
#include "kernels.fused.inc"

namespace {

// Best of `reps` runs, in milliseconds.
double bestMs(int reps, const std::function<void()>& run) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    auto start = std::chrono::steady_clock::now();
    run();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// Largest difference relative to the largest magnitude.
double relativeDifference(const double* a, const double* b, std::size_t n) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < n; ++i) {
    diff = std::max(diff, std::fabs(a[i] - b[i]));
    scale = std::max(scale, std::fabs(a[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

void fill(double* x, std::size_t n, unsigned seed) {
  for (std::size_t i = 0; i < n; ++i) x[i] = double((i * seed + 17) % 1009) / 1009.0 - 0.5;
}

bool failed = false;

void report(const char* pattern, double unfusedMs, double fusedMs, double target, double difference) {
  double ratio = unfusedMs / fusedMs;
  bool equal = difference < 1e-10;
  std::printf("%-58s %10.2f %10.2f %7.2fx  %s%s\n", pattern, unfusedMs, fusedMs, ratio,
              target > 0 ? (ratio >= target ? "target met" : "TARGET MISSED") : "no target",
              equal ? "" : "  RESULTS DIFFER");
  if (target > 0) std::printf("%-58s (target >= %.1fx)\n", "", target);
  if (!equal) failed = true;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1024;  // matrix order, vectors, FFT length and rows
  const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
  std::printf("fusion_bench: n=%d, best of %d runs; times in ms\n", n, reps);
  std::printf("%-58s %10s %10s %8s\n", "pattern", "unfused", "fused", "ratio");

  {
    std::vector<double> A(std::size_t(n) * n), x(std::size_t(n) * n), y1(x.size()), y2(x.size());
    fill(A.data(), A.size(), 7);
    fill(x.data(), x.size(), 13);
    double u = bestMs(reps, [&] { unfused::gemvLoop(A.data(), x.data(), y1.data(), n, n); });
    double f = bestMs(reps, [&] { fused::gemvLoop(A.data(), x.data(), y2.data(), n, n); });
    char name[96];
    std::snprintf(name, sizeof name, "gemv loop -> gemm (%dx%d, %d vectors)", n, n, n);
    report(name, u, f, 5.0, relativeDifference(y1.data(), y2.data(), y1.size()));
  }
  {
    std::size_t size = std::size_t(n) * n;
    fftw_complex* in = fftw_alloc_complex(size);
    fftw_complex* out1 = fftw_alloc_complex(size);
    fftw_complex* out2 = fftw_alloc_complex(size);
    fill(reinterpret_cast<double*>(in), 2 * size, 5);
    // Warm FFTW's planner for this size on both sides, so neither pays the first plan alone.
    unfused::fftRowsPlanEach(in, out1, n, 1);
    fused::fftRowsPlanEach(in, out2, n, 1);
    char name[96];
    std::snprintf(name, sizeof name, "FFT rows, plan per row -> many plan (%d x %d)", n, n);
    double u = bestMs(reps, [&] { unfused::fftRowsPlanEach(in, out1, n, n); });
    double f = bestMs(reps, [&] { fused::fftRowsPlanEach(in, out2, n, n); });
    report(name, u, f, 1.5,
           relativeDifference(reinterpret_cast<double*>(out1), reinterpret_cast<double*>(out2), 2 * size));
    std::snprintf(name, sizeof name, "FFT rows, one plan executed per row -> many (%d x %d)", n, n);
    u = bestMs(reps, [&] { unfused::fftRowsExecute(in, out1, n, n); });
    f = bestMs(reps, [&] { fused::fftRowsExecute(in, out2, n, n); });
    report(name, u, f, 0,
           relativeDifference(reinterpret_cast<double*>(out1), reinterpret_cast<double*>(out2), 2 * size));
    std::snprintf(name, sizeof name, "FFT columns, strided plan per column -> many (%d x %d)", n, n);
    unfused::fftColumnsPlanEach(in, out1, n, 1);
    fused::fftColumnsPlanEach(in, out2, n, 1);
    u = bestMs(reps, [&] { unfused::fftColumnsPlanEach(in, out1, n, n); });
    f = bestMs(reps, [&] { fused::fftColumnsPlanEach(in, out2, n, n); });
    report(name, u, f, 0,
           relativeDifference(reinterpret_cast<double*>(out1), reinterpret_cast<double*>(out2), 2 * size));
    // The same rows through cuFFT's API on the host stand-ins.
    std::snprintf(name, sizeof name, "cuFFT rows, one plan executed per row -> many (%d x %d)", n, n);
    auto* cin = reinterpret_cast<cufftDoubleComplex*>(in);
    auto* cout1 = reinterpret_cast<cufftDoubleComplex*>(out1);
    auto* cout2 = reinterpret_cast<cufftDoubleComplex*>(out2);
    unfused::cufftRowsExecute(cin, cout1, n, 1);
    fused::cufftRowsExecute(cin, cout2, n, 1);
    u = bestMs(reps, [&] { unfused::cufftRowsExecute(cin, cout1, n, n); });
    f = bestMs(reps, [&] { fused::cufftRowsExecute(cin, cout2, n, n); });
    report(name, u, f, 0,
           relativeDifference(reinterpret_cast<double*>(out1), reinterpret_cast<double*>(out2), 2 * size));
    fftw_free(in);
    fftw_free(out1);
    fftw_free(out2);
  }
  {
    const int bm = 16, blocks = n / bm;
    std::vector<double> A(std::size_t(n) * n), B(std::size_t(n) * n), c1(A.size()), c2(A.size());
    fill(A.data(), A.size(), 3);
    fill(B.data(), B.size(), 11);
    double u = bestMs(reps, [&] { unfused::gemmBlocks(A.data(), B.data(), c1.data(), bm, n, n, blocks); });
    double f = bestMs(reps, [&] { fused::gemmBlocks(A.data(), B.data(), c2.data(), bm, n, n, blocks); });
    char name[96];
    std::snprintf(name, sizeof name, "gemm on %d row blocks of %d -> one gemm (%d^3)", blocks, bm, n);
    report(name, u, f, 0, relativeDifference(c1.data(), c2.data(), c1.size()));
  }
  return failed ? 1 : 0;
}
