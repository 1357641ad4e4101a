// The cuFFT host stand-ins against a naive DFT, through the global CUDA names a host-only build sees:
// 1-D, 2-D and 3-D, batches, advanced layouts, R2C/C2R sizes and padding, unnormalised inverses,
// status codes, and plans made and executed from many threads at once.
#include <dispar/cuda_shim.h>
#include <dispar/hostlib/CudaNames.h>

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <thread>
#include <vector>

namespace {

using Z = std::complex<double>;

// The naive multi-dimensional DFT of a row-major array of shape `n` (sign -1 forward, +1 inverse).
std::vector<Z> dft(const std::vector<Z>& in, const std::vector<int>& n, int sign) {
  std::size_t total = 1;
  for (int d : n) total *= static_cast<std::size_t>(d);
  std::vector<Z> out(total);
  const double pi = std::acos(-1.0);
  std::vector<int> k(n.size()), x(n.size());
  for (std::size_t outIndex = 0; outIndex < total; ++outIndex) {
    std::size_t rest = outIndex;
    for (int d = static_cast<int>(n.size()) - 1; d >= 0; --d) {
      k[d] = static_cast<int>(rest % n[d]);
      rest /= n[d];
    }
    Z sum = 0;
    for (std::size_t inIndex = 0; inIndex < total; ++inIndex) {
      std::size_t r = inIndex;
      double phase = 0;
      for (int d = static_cast<int>(n.size()) - 1; d >= 0; --d) {
        x[d] = static_cast<int>(r % n[d]);
        r /= n[d];
        phase += double(k[d]) * x[d] / n[d];
      }
      sum += in[inIndex] * std::polar(1.0, sign * 2 * pi * phase);
    }
    out[outIndex] = sum;
  }
  return out;
}

Z sample(int i, int seed) { return Z(std::sin(0.9 * i + seed), std::cos(0.4 * i * i + 0.5 * seed)); }

cufftDoubleComplex* asCuda(Z* p) { return reinterpret_cast<cufftDoubleComplex*>(p); }

void expectClose(const std::vector<Z>& actual, const std::vector<Z>& expected, double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i)
    EXPECT_LT(std::abs(actual[i] - expected[i]), tolerance) << "at " << i << ": " << actual[i] << " vs " << expected[i];
}

TEST(Cufft, SinglePrecisionC2COutOfPlaceMatchesTheDft) {
  const int n = 12;
  std::vector<Z> reference(n);
  std::vector<cufftComplex> in(n), out(n);
  for (int i = 0; i < n; ++i) {
    reference[i] = sample(i, 1);
    in[i] = make_cuComplex(static_cast<float>(reference[i].real()), static_cast<float>(reference[i].imag()));
  }
  cufftHandle plan;
  ASSERT_EQ(cufftPlan1d(&plan, n, CUFFT_C2C, 1), CUFFT_SUCCESS);
  ASSERT_EQ(cufftExecC2C(plan, in.data(), out.data(), CUFFT_FORWARD), CUFFT_SUCCESS);
  std::vector<Z> actual(n);
  for (int i = 0; i < n; ++i) actual[i] = Z(cuCrealf(out[i]), cuCimagf(out[i]));
  expectClose(actual, dft(reference, {n}, -1), 1e-4);
  EXPECT_EQ(cufftDestroy(plan), CUFFT_SUCCESS);
}

TEST(Cufft, InverseIsUnnormalisedAndBatchesAreIndependent) {
  const int n = 16, batch = 3;
  std::vector<Z> data(n * batch);
  for (int i = 0; i < n * batch; ++i) data[i] = sample(i, 2);
  const std::vector<Z> original = data;
  cufftHandle plan;
  ASSERT_EQ(cufftPlan1d(&plan, n, CUFFT_Z2Z, batch), CUFFT_SUCCESS);
  ASSERT_EQ(cufftExecZ2Z(plan, asCuda(data.data()), asCuda(data.data()), CUFFT_FORWARD), CUFFT_SUCCESS);  // in place
  for (int b = 0; b < batch; ++b) {
    const std::vector<Z> row(original.begin() + b * n, original.begin() + (b + 1) * n);
    expectClose(std::vector<Z>(data.begin() + b * n, data.begin() + (b + 1) * n), dft(row, {n}, -1), 1e-10);
  }
  ASSERT_EQ(cufftExecZ2Z(plan, asCuda(data.data()), asCuda(data.data()), CUFFT_INVERSE), CUFFT_SUCCESS);
  std::vector<Z> scaled(original.size());
  for (std::size_t i = 0; i < original.size(); ++i) scaled[i] = double(n) * original[i];
  expectClose(data, scaled, 1e-9);
  cufftDestroy(plan);
}

TEST(Cufft, RealTransformsHaveCuFftSizes) {
  const int n = 10;
  std::vector<double> real(n);
  std::vector<Z> asComplex(n);
  for (int i = 0; i < n; ++i) {
    real[i] = sample(i, 3).real();
    asComplex[i] = real[i];
  }
  cufftHandle forward, inverse;
  ASSERT_EQ(cufftPlan1d(&forward, n, CUFFT_D2Z, 1), CUFFT_SUCCESS);
  ASSERT_EQ(cufftPlan1d(&inverse, n, CUFFT_Z2D, 1), CUFFT_SUCCESS);
  std::vector<Z> half(n / 2 + 2, Z(-7, -7));  // one more than the transform writes
  ASSERT_EQ(cufftExecD2Z(forward, real.data(), asCuda(half.data())), CUFFT_SUCCESS);
  const std::vector<Z> full = dft(asComplex, {n}, -1);
  expectClose(std::vector<Z>(half.begin(), half.begin() + n / 2 + 1),
              std::vector<Z>(full.begin(), full.begin() + n / 2 + 1), 1e-10);
  EXPECT_EQ(half.back(), Z(-7, -7));
  std::vector<double> back(n);
  ASSERT_EQ(cufftExecZ2D(inverse, asCuda(half.data()), back.data()), CUFFT_SUCCESS);
  for (int i = 0; i < n; ++i) EXPECT_NEAR(back[i], n * real[i], 1e-9);

  // In place: the real input padded to 2 * (n / 2 + 1) values, as cuFFT and FFTW lay it out.
  std::vector<double> padded(2 * (n / 2 + 1), 0.0);
  for (int i = 0; i < n; ++i) padded[i] = real[i];
  ASSERT_EQ(cufftExecD2Z(forward, padded.data(), reinterpret_cast<cufftDoubleComplex*>(padded.data())), CUFFT_SUCCESS);
  for (int k = 0; k <= n / 2; ++k) {
    EXPECT_NEAR(padded[2 * k], full[k].real(), 1e-10);
    EXPECT_NEAR(padded[2 * k + 1], full[k].imag(), 1e-10);
  }
  cufftDestroy(forward);
  cufftDestroy(inverse);
}

TEST(Cufft, TwoAndThreeDimensionsAreRowMajor) {
  for (const std::vector<int>& shape : {std::vector<int>{4, 6}, std::vector<int>{2, 3, 5}}) {
    int total = 1;
    for (int d : shape) total *= d;
    std::vector<Z> data(total);
    for (int i = 0; i < total; ++i) data[i] = sample(i, 4);
    const std::vector<Z> expected = dft(data, shape, -1);
    cufftHandle plan;
    ASSERT_EQ(shape.size() == 2 ? cufftPlan2d(&plan, shape[0], shape[1], CUFFT_Z2Z)
                                : cufftPlan3d(&plan, shape[0], shape[1], shape[2], CUFFT_Z2Z),
              CUFFT_SUCCESS);
    std::vector<Z> out(total);
    ASSERT_EQ(cufftExecZ2Z(plan, asCuda(data.data()), asCuda(out.data()), CUFFT_FORWARD), CUFFT_SUCCESS);
    expectClose(out, expected, 1e-9);
    cufftDestroy(plan);
  }
}

TEST(Cufft, AdvancedLayoutTransformsColumns) {
  // A 6 x 8 row-major matrix: the 8 columns are the batch (stride 8, distance 1), through
  // cufftCreate + cufftMakePlanMany.
  const int rows = 6, cols = 8;
  std::vector<Z> matrix(rows * cols);
  for (int i = 0; i < rows * cols; ++i) matrix[i] = sample(i, 5);
  std::vector<Z> out(rows * cols);
  cufftHandle plan;
  ASSERT_EQ(cufftCreate(&plan), CUFFT_SUCCESS);
  int n[] = {rows}, embed[] = {rows};
  std::size_t work = 99;
  ASSERT_EQ(cufftMakePlanMany(plan, 1, n, embed, cols, 1, embed, cols, 1, CUFFT_Z2Z, cols, &work), CUFFT_SUCCESS);
  EXPECT_EQ(work, 0u);
  ASSERT_EQ(cufftExecZ2Z(plan, asCuda(matrix.data()), asCuda(out.data()), CUFFT_FORWARD), CUFFT_SUCCESS);
  for (int c = 0; c < cols; ++c) {
    std::vector<Z> column(rows), result(rows);
    for (int r = 0; r < rows; ++r) {
      column[r] = matrix[r * cols + c];
      result[r] = out[r * cols + c];
    }
    expectClose(result, dft(column, {rows}, -1), 1e-10);
  }
  EXPECT_EQ(cufftMakePlan1d(plan, 4, CUFFT_Z2Z, 1, &work), CUFFT_INVALID_PLAN);  // made once only
  cufftDestroy(plan);
}

TEST(Cufft, StatusCodes) {
  cufftHandle plan = -1;
  EXPECT_EQ(cufftPlan1d(&plan, 0, CUFFT_C2C, 1), CUFFT_INVALID_SIZE);
  EXPECT_EQ(cufftPlan1d(&plan, 8, CUFFT_C2C, 0), CUFFT_INVALID_SIZE);
  EXPECT_EQ(cufftPlan1d(&plan, 8, static_cast<cufftType>(0x7f), 1), CUFFT_INVALID_TYPE);
  EXPECT_EQ(plan, -1);  // untouched by failed plans
  ASSERT_EQ(cufftPlan1d(&plan, 8, CUFFT_R2C, 1), CUFFT_SUCCESS);
  std::vector<cufftComplex> data(8);
  EXPECT_EQ(cufftExecC2C(plan, data.data(), data.data(), CUFFT_FORWARD), CUFFT_INVALID_PLAN);  // not a C2C plan
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  EXPECT_EQ(cufftSetStream(plan, stream), CUFFT_SUCCESS);
  cudaStreamDestroy(stream);
  EXPECT_EQ(cufftDestroy(plan), CUFFT_SUCCESS);
  EXPECT_EQ(cufftDestroy(plan), CUFFT_INVALID_PLAN);
  EXPECT_EQ(cufftExecC2C(plan, data.data(), data.data(), CUFFT_FORWARD), CUFFT_INVALID_PLAN);
  ASSERT_EQ(cufftPlan1d(&plan, 8, CUFFT_C2C, 1), CUFFT_SUCCESS);
  EXPECT_EQ(cufftExecC2C(plan, data.data(), data.data(), 0), CUFFT_INVALID_VALUE);  // no such direction
  cufftDestroy(plan);
  int version = 0;
  EXPECT_EQ(cufftGetVersion(&version), CUFFT_SUCCESS);
  EXPECT_GT(version, 0);
}

// Plans made, executed and destroyed from several threads at once, sharing shapes (and so the cached
// FFTW plans) across threads: every result still matches the DFT.
TEST(Cufft, PlansAreMadeAndRunConcurrently) {
  const int threads = 8, rounds = 20;
  std::vector<std::thread> workers;
  std::vector<int> failures(threads, 0);
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([t, &failures] {
      const int n = 8 + 4 * (t % 3);
      std::vector<Z> input(n);
      for (int i = 0; i < n; ++i) input[i] = sample(i, t);
      const std::vector<Z> expected = dft(input, {n}, -1);
      for (int round = 0; round < rounds; ++round) {
        cufftHandle plan;
        if (cufftPlan1d(&plan, n, CUFFT_Z2Z, 1) != CUFFT_SUCCESS) {
          ++failures[t];
          continue;
        }
        std::vector<Z> data = input;
        if (cufftExecZ2Z(plan, asCuda(data.data()), asCuda(data.data()), CUFFT_FORWARD) != CUFFT_SUCCESS) ++failures[t];
        for (int i = 0; i < n; ++i)
          if (std::abs(data[i] - expected[i]) > 1e-9) ++failures[t];
        cufftDestroy(plan);
      }
    });
  for (std::thread& worker : workers) worker.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

}  // namespace
