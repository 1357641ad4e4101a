// The cuBLAS host stand-ins against naive column-major references, through the global CUDA names a
// host-only build sees (<dispar/hostlib/CudaNames.h>): transposes, leading dimensions, increments,
// batched forms, triangular solves, symmetric products, pointer modes and status codes.
#include <dispar/cuda_shim.h>
#include <dispar/hostlib/CudaNames.h>

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

namespace {

using Z = std::complex<double>;

// A column-major matrix with a leading dimension larger than its rows (the padding must be untouched).
template <class T>
struct Matrix {
  int rows, cols, ld;
  std::vector<T> data;
  Matrix(int r, int c, int padding = 2)
      : rows(r), cols(c), ld(r + padding), data(static_cast<std::size_t>((r + padding) * c)) {}
  T& operator()(int i, int j) { return data[static_cast<std::size_t>(i + j * ld)]; }
  T operator()(int i, int j) const { return data[static_cast<std::size_t>(i + j * ld)]; }
};

double value(int i, int j, int seed) { return std::sin(0.7 * i + 1.3 * j + 0.31 * seed) + 0.1 * seed; }

template <class T>
T make(int i, int j, int seed) {
  if constexpr (std::is_same_v<T, Z>)
    return Z(value(i, j, seed), value(j, i, seed + 5));
  else
    return static_cast<T>(value(i, j, seed));
}

template <class T>
Matrix<T> filled(int r, int c, int seed) {
  Matrix<T> m(r, c);
  for (std::size_t k = 0; k < m.data.size(); ++k)
    m.data[k] = make<T>(static_cast<int>(k), 3, seed + 100);  // padding too
  for (int j = 0; j < c; ++j)
    for (int i = 0; i < r; ++i) m(i, j) = make<T>(i, j, seed);
  return m;
}

// op(A)(i, j) for cuBLAS's operations.
template <class T>
T op(const Matrix<T>& a, cublasOperation_t o, int i, int j) {
  if (o == CUBLAS_OP_N) return a(i, j);
  if constexpr (std::is_same_v<T, Z>)
    if (o == CUBLAS_OP_C) return std::conj(a(j, i));
  return a(j, i);
}

template <class T>
void expectNear(T actual, T expected, double tolerance = 1e-10) {
  EXPECT_NEAR(std::abs(actual - expected), 0.0, tolerance * (1 + std::abs(expected))) << "expected " << expected;
}

cuDoubleComplex* asCuda(Z* p) { return reinterpret_cast<cuDoubleComplex*>(p); }
const cuDoubleComplex* asCuda(const Z* p) { return reinterpret_cast<const cuDoubleComplex*>(p); }

class Cublas : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(cublasCreate(&handle_), CUBLAS_STATUS_SUCCESS); }
  void TearDown() override { EXPECT_EQ(cublasDestroy(handle_), CUBLAS_STATUS_SUCCESS); }
  cublasHandle_t handle_ = nullptr;
};

TEST_F(Cublas, GemmEveryOperationWithLeadingDimensions) {
  const int m = 5, n = 4, k = 3;
  const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
  for (cublasOperation_t ta : ops)
    for (cublasOperation_t tb : ops) {
      Matrix<Z> a = ta == CUBLAS_OP_N ? filled<Z>(m, k, 1) : filled<Z>(k, m, 1);
      Matrix<Z> b = tb == CUBLAS_OP_N ? filled<Z>(k, n, 2) : filled<Z>(n, k, 2);
      Matrix<Z> c = filled<Z>(m, n, 3);
      const Matrix<Z> before = c;
      const Z alpha(1.5, -0.5), beta(0.25, 2.0);
      ASSERT_EQ(cublasZgemm(handle_, ta, tb, m, n, k, asCuda(&alpha), asCuda(a.data.data()), a.ld,
                            asCuda(b.data.data()), b.ld, asCuda(&beta), asCuda(c.data.data()), c.ld),
                CUBLAS_STATUS_SUCCESS);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          Z sum = 0;
          for (int l = 0; l < k; ++l) sum += op(a, ta, i, l) * op(b, tb, l, j);
          expectNear(c(i, j), alpha * sum + beta * before(i, j));
        }
      for (int j = 0; j < n; ++j)
        EXPECT_EQ(c.data[static_cast<std::size_t>(m + j * c.ld)], before.data[static_cast<std::size_t>(m + j * c.ld)]);
    }
}

TEST_F(Cublas, GemmRealAndBatchedForms) {
  const int m = 4, n = 3, k = 5, batch = 3;
  std::vector<Matrix<float>> as, bs, cs;
  for (int i = 0; i < batch; ++i) {
    as.push_back(filled<float>(k, m, 10 + i));  // transposed A
    bs.push_back(filled<float>(k, n, 20 + i));
    cs.push_back(filled<float>(m, n, 30 + i));
  }
  const std::vector<Matrix<float>> before = cs;
  const float alpha = 2.0f, beta = -1.0f;
  std::vector<const float*> aPointers, bPointers;
  std::vector<float*> cPointers;
  for (int i = 0; i < batch; ++i) {
    aPointers.push_back(as[i].data.data());
    bPointers.push_back(bs[i].data.data());
    cPointers.push_back(cs[i].data.data());
  }
  ASSERT_EQ(cublasSgemmBatched(handle_, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, aPointers.data(), as[0].ld,
                               bPointers.data(), bs[0].ld, &beta, cPointers.data(), cs[0].ld, batch),
            CUBLAS_STATUS_SUCCESS);
  const auto expected = [&](int b, int i, int j) {
    double sum = 0;
    for (int l = 0; l < k; ++l) sum += double(as[b](l, i)) * bs[b](l, j);
    return alpha * sum + beta * before[b](i, j);
  };
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) EXPECT_NEAR(cs[b](i, j), expected(b, i, j), 1e-4);

  // The same products as one strided batch over contiguous storage.
  const long long strideA = static_cast<long long>(as[0].data.size()),
                  strideB = static_cast<long long>(bs[0].data.size()),
                  strideC = static_cast<long long>(cs[0].data.size());
  std::vector<float> allA, allB, allC;
  for (int b = 0; b < batch; ++b) {
    allA.insert(allA.end(), as[b].data.begin(), as[b].data.end());
    allB.insert(allB.end(), bs[b].data.begin(), bs[b].data.end());
    allC.insert(allC.end(), before[b].data.begin(), before[b].data.end());
  }
  ASSERT_EQ(cublasSgemmStridedBatched(handle_, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, allA.data(), as[0].ld,
                                      strideA, allB.data(), bs[0].ld, strideB, &beta, allC.data(), cs[0].ld, strideC,
                                      batch),
            CUBLAS_STATUS_SUCCESS);
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i)
        EXPECT_NEAR(allC[static_cast<std::size_t>(b * strideC + i + j * cs[0].ld)], expected(b, i, j), 1e-4);
}

TEST_F(Cublas, GemvWithIncrementsAndTranspose) {
  const int m = 6, n = 4;
  Matrix<double> a = filled<double>(m, n, 4);
  for (cublasOperation_t t : {CUBLAS_OP_N, CUBLAS_OP_T}) {
    const int xs = t == CUBLAS_OP_N ? n : m, ys = t == CUBLAS_OP_N ? m : n;
    std::vector<double> x(static_cast<std::size_t>(2 * xs)), y(static_cast<std::size_t>(3 * ys));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = value(static_cast<int>(i), 1, 5);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = value(static_cast<int>(i), 2, 6);
    const std::vector<double> yBefore = y;
    const double alpha = 0.75, beta = 1.5;
    ASSERT_EQ(cublasDgemv(handle_, t, m, n, &alpha, a.data.data(), a.ld, x.data(), 2, &beta, y.data(), 3),
              CUBLAS_STATUS_SUCCESS);
    for (int i = 0; i < ys; ++i) {
      double sum = 0;
      for (int l = 0; l < xs; ++l) sum += (t == CUBLAS_OP_N ? a(i, l) : a(l, i)) * x[static_cast<std::size_t>(2 * l)];
      EXPECT_NEAR(y[static_cast<std::size_t>(3 * i)], alpha * sum + beta * yBefore[static_cast<std::size_t>(3 * i)],
                  1e-12);
      EXPECT_EQ(y[static_cast<std::size_t>(3 * i + 1)], yBefore[static_cast<std::size_t>(3 * i + 1)]);
    }
  }
}

TEST_F(Cublas, GerAndConjugatedGer) {
  const int m = 4, n = 3;
  Matrix<Z> a = filled<Z>(m, n, 7);
  const Matrix<Z> before = a;
  std::vector<Z> x(m), y(n);
  for (int i = 0; i < m; ++i) x[i] = make<Z>(i, 0, 8);
  for (int j = 0; j < n; ++j) y[j] = make<Z>(j, 0, 9);
  const Z alpha(0.5, 1.0);
  ASSERT_EQ(
      cublasZgerc(handle_, m, n, asCuda(&alpha), asCuda(x.data()), 1, asCuda(y.data()), 1, asCuda(a.data.data()), a.ld),
      CUBLAS_STATUS_SUCCESS);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) expectNear(a(i, j), before(i, j) + alpha * x[i] * std::conj(y[j]));
  a = before;
  ASSERT_EQ(
      cublasZgeru(handle_, m, n, asCuda(&alpha), asCuda(x.data()), 1, asCuda(y.data()), 1, asCuda(a.data.data()), a.ld),
      CUBLAS_STATUS_SUCCESS);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) expectNear(a(i, j), before(i, j) + alpha * x[i] * y[j]);
}

// Symmetric A from one triangle: the other triangle holds garbage that must not be read.
template <class T>
Matrix<T> symmetricFromTriangle(int n, cublasFillMode_t fill, Matrix<T>& full) {
  full = filled<T>(n, n, 11);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < j; ++i) full(i, j) = full(j, i);
  Matrix<T> stored = full;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if (fill == CUBLAS_FILL_MODE_LOWER ? i < j : i > j) stored(i, j) = T(1e6);
  return stored;
}

TEST_F(Cublas, SymvRealAndComplexBothTriangles) {
  const int n = 5;
  for (cublasFillMode_t fill : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER}) {
    Matrix<Z> full(n, n);
    const Matrix<Z> a = symmetricFromTriangle<Z>(n, fill, full);
    std::vector<Z> x(n), y(n);
    for (int i = 0; i < n; ++i) {
      x[i] = make<Z>(i, 1, 12);
      y[i] = make<Z>(i, 2, 13);
    }
    const std::vector<Z> yBefore = y;
    const Z alpha(2, 1), beta(0.5, 0);
    ASSERT_EQ(cublasZsymv(handle_, fill, n, asCuda(&alpha), asCuda(a.data.data()), a.ld, asCuda(x.data()), 1,
                          asCuda(&beta), asCuda(y.data()), 1),
              CUBLAS_STATUS_SUCCESS);
    for (int i = 0; i < n; ++i) {
      Z sum = 0;
      for (int j = 0; j < n; ++j) sum += full(i, j) * x[j];
      expectNear(y[i], alpha * sum + beta * yBefore[i]);
    }
    Matrix<double> fullReal(n, n);
    const Matrix<double> real = symmetricFromTriangle<double>(n, fill, fullReal);
    std::vector<double> xr(n, 1.0), yr(n, 0.0);
    const double one = 1, zero = 0;
    ASSERT_EQ(cublasDsymv(handle_, fill, n, &one, real.data.data(), real.ld, xr.data(), 1, &zero, yr.data(), 1),
              CUBLAS_STATUS_SUCCESS);
    for (int i = 0; i < n; ++i) {
      double sum = 0;
      for (int j = 0; j < n; ++j) sum += fullReal(i, j);
      EXPECT_NEAR(yr[i], sum, 1e-12);
    }
  }
}

// A well-conditioned triangular matrix (dominant diagonal) in the given triangle.
Matrix<double> triangular(int n, cublasFillMode_t fill) {
  Matrix<double> a = filled<double>(n, n, 14);
  for (int j = 0; j < n; ++j) {
    a(j, j) = 4.0 + j;
    for (int i = 0; i < n; ++i)
      if (fill == CUBLAS_FILL_MODE_LOWER ? i < j : i > j) a(i, j) = 1e6;  // never read
  }
  return a;
}
double triangularEntry(const Matrix<double>& a, cublasFillMode_t fill, cublasDiagType_t diag, int i, int j) {
  if (i == j) return diag == CUBLAS_DIAG_UNIT ? 1.0 : a(i, i);
  return (fill == CUBLAS_FILL_MODE_LOWER ? i > j : i < j) ? a(i, j) : 0.0;
}

TEST_F(Cublas, TrsvAndTrsmSolve) {
  const int n = 5, rhs = 3;
  for (cublasFillMode_t fill : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER})
    for (cublasOperation_t t : {CUBLAS_OP_N, CUBLAS_OP_T})
      for (cublasDiagType_t diag : {CUBLAS_DIAG_NON_UNIT, CUBLAS_DIAG_UNIT}) {
        const Matrix<double> a = triangular(n, fill);
        const auto opA = [&](int i, int j) {
          return t == CUBLAS_OP_N ? triangularEntry(a, fill, diag, i, j) : triangularEntry(a, fill, diag, j, i);
        };
        std::vector<double> b(n), x(n);
        for (int i = 0; i < n; ++i) b[i] = x[i] = value(i, 0, 15);
        ASSERT_EQ(cublasDtrsv(handle_, fill, t, diag, n, a.data.data(), a.ld, x.data(), 1), CUBLAS_STATUS_SUCCESS);
        for (int i = 0; i < n; ++i) {
          double sum = 0;
          for (int j = 0; j < n; ++j) sum += opA(i, j) * x[j];
          EXPECT_NEAR(sum, b[i], 1e-10);
        }
        // op(A) X = alpha B (left) and X op(A) = alpha B (right).
        const double alpha = 1.5;
        Matrix<double> left = filled<double>(n, rhs, 16);
        const Matrix<double> leftB = left;
        ASSERT_EQ(cublasDtrsm(handle_, CUBLAS_SIDE_LEFT, fill, t, diag, n, rhs, &alpha, a.data.data(), a.ld,
                              left.data.data(), left.ld),
                  CUBLAS_STATUS_SUCCESS);
        for (int j = 0; j < rhs; ++j)
          for (int i = 0; i < n; ++i) {
            double sum = 0;
            for (int l = 0; l < n; ++l) sum += opA(i, l) * left(l, j);
            EXPECT_NEAR(sum, alpha * leftB(i, j), 1e-10);
          }
        Matrix<double> right = filled<double>(rhs, n, 17);
        const Matrix<double> rightB = right;
        ASSERT_EQ(cublasDtrsm(handle_, CUBLAS_SIDE_RIGHT, fill, t, diag, rhs, n, &alpha, a.data.data(), a.ld,
                              right.data.data(), right.ld),
                  CUBLAS_STATUS_SUCCESS);
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < rhs; ++i) {
            double sum = 0;
            for (int l = 0; l < n; ++l) sum += right(i, l) * opA(l, j);
            EXPECT_NEAR(sum, alpha * rightB(i, j), 1e-10);
          }
      }
}

TEST_F(Cublas, SyrkWritesOnlyItsTriangleAndSymmMultiplies) {
  const int n = 4, k = 3;
  for (cublasFillMode_t fill : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER}) {
    const Matrix<double> a = filled<double>(n, k, 18);
    Matrix<double> c = filled<double>(n, n, 19);
    const Matrix<double> before = c;
    const double alpha = 0.5, beta = 2.0;
    ASSERT_EQ(cublasDsyrk(handle_, fill, CUBLAS_OP_N, n, k, &alpha, a.data.data(), a.ld, &beta, c.data.data(), c.ld),
              CUBLAS_STATUS_SUCCESS);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const bool inTriangle = fill == CUBLAS_FILL_MODE_LOWER ? i >= j : i <= j;
        double sum = 0;
        for (int l = 0; l < k; ++l) sum += a(i, l) * a(j, l);
        EXPECT_NEAR(c(i, j), inTriangle ? alpha * sum + beta * before(i, j) : before(i, j), 1e-12);
      }
    Matrix<double> full(n, n);
    const Matrix<double> s = symmetricFromTriangle<double>(n, fill, full);
    const Matrix<double> b = filled<double>(n, 2, 20);
    Matrix<double> out = filled<double>(n, 2, 21);
    const Matrix<double> outBefore = out;
    ASSERT_EQ(cublasDsymm(handle_, CUBLAS_SIDE_LEFT, fill, n, 2, &alpha, s.data.data(), s.ld, b.data.data(), b.ld,
                          &beta, out.data.data(), out.ld),
              CUBLAS_STATUS_SUCCESS);
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < n; ++i) {
        double sum = 0;
        for (int l = 0; l < n; ++l) sum += full(i, l) * b(l, j);
        EXPECT_NEAR(out(i, j), alpha * sum + beta * outBefore(i, j), 1e-12);
      }
  }
}

TEST_F(Cublas, GeamTransposesAndWorksInPlace) {
  const int m = 3, n = 4;
  const Matrix<Z> a = filled<Z>(n, m, 22);  // used transposed / conjugated
  const Matrix<Z> b = filled<Z>(m, n, 23);
  Matrix<Z> c(m, n);
  const Z alpha(1, 1), beta(-2, 0.5);
  ASSERT_EQ(cublasZgeam(handle_, CUBLAS_OP_C, CUBLAS_OP_N, m, n, asCuda(&alpha), asCuda(a.data.data()), a.ld,
                        asCuda(&beta), asCuda(b.data.data()), b.ld, asCuda(c.data.data()), c.ld),
            CUBLAS_STATUS_SUCCESS);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) expectNear(c(i, j), alpha * std::conj(a(j, i)) + beta * b(i, j));
  // In place: C = alpha C + beta B.
  const Matrix<Z> cBefore = c;
  ASSERT_EQ(cublasZgeam(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, asCuda(&alpha), asCuda(c.data.data()), c.ld,
                        asCuda(&beta), asCuda(b.data.data()), b.ld, asCuda(c.data.data()), c.ld),
            CUBLAS_STATUS_SUCCESS);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) expectNear(c(i, j), alpha * cBefore(i, j) + beta * b(i, j));
  // In place with a transposed C is refused, as cuBLAS does.
  EXPECT_EQ(cublasZgeam(handle_, CUBLAS_OP_T, CUBLAS_OP_N, m, m, asCuda(&alpha), asCuda(c.data.data()), c.ld,
                        asCuda(&beta), asCuda(b.data.data()), b.ld, asCuda(c.data.data()), c.ld),
            CUBLAS_STATUS_INVALID_VALUE);
}

TEST_F(Cublas, LevelOneWithIncrements) {
  const int n = 5;
  std::vector<Z> x(2 * n), y(2 * n);
  for (int i = 0; i < 2 * n; ++i) {
    x[i] = make<Z>(i, 0, 24);
    y[i] = make<Z>(i, 0, 25);
  }
  Z dot, dotc;
  ASSERT_EQ(cublasZdotu(handle_, n, asCuda(x.data()), 2, asCuda(y.data()), 2, asCuda(&dot)), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasZdotc(handle_, n, asCuda(x.data()), 2, asCuda(y.data()), 2, asCuda(&dotc)), CUBLAS_STATUS_SUCCESS);
  Z expectedDot = 0, expectedDotc = 0;
  double norm = 0, asum = 0, largest = -1;
  int largestAt = 0;
  for (int i = 0; i < n; ++i) {
    expectedDot += x[2 * i] * y[2 * i];
    expectedDotc += std::conj(x[2 * i]) * y[2 * i];
    norm += std::norm(x[2 * i]);
    const double size = std::fabs(x[2 * i].real()) + std::fabs(x[2 * i].imag());
    asum += size;
    if (size > largest) {
      largest = size;
      largestAt = i + 1;  // cuBLAS counts from 1
    }
  }
  expectNear(dot, expectedDot);
  expectNear(dotc, expectedDotc);
  double resultNorm = 0, resultAsum = 0;
  int resultMax = 0;
  ASSERT_EQ(cublasDznrm2(handle_, n, asCuda(x.data()), 2, &resultNorm), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasDzasum(handle_, n, asCuda(x.data()), 2, &resultAsum), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasIzamax(handle_, n, asCuda(x.data()), 2, &resultMax), CUBLAS_STATUS_SUCCESS);
  EXPECT_NEAR(resultNorm, std::sqrt(norm), 1e-12);
  EXPECT_NEAR(resultAsum, asum, 1e-12);
  EXPECT_EQ(resultMax, largestAt);
  ASSERT_EQ(cublasIzamax(handle_, 0, asCuda(x.data()), 1, &resultMax), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(resultMax, 0);

  std::vector<Z> before = y;
  const Z alpha(0.5, -1);
  ASSERT_EQ(cublasZaxpy(handle_, n, asCuda(&alpha), asCuda(x.data()), 2, asCuda(y.data()), 2), CUBLAS_STATUS_SUCCESS);
  for (int i = 0; i < 2 * n; ++i) expectNear(y[i], i % 2 == 0 ? before[i] + alpha * x[i] : before[i]);
  before = y;
  const double realScale = 3;
  ASSERT_EQ(cublasZdscal(handle_, n, &realScale, asCuda(y.data()), 2), CUBLAS_STATUS_SUCCESS);
  for (int i = 0; i < 2 * n; ++i) expectNear(y[i], i % 2 == 0 ? 3.0 * before[i] : before[i]);

  std::vector<float> a{1, 2, 3, 4}, b{5, 6, 7, 8};
  ASSERT_EQ(cublasSswap(handle_, 4, a.data(), 1, b.data(), 1), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(a, (std::vector<float>{5, 6, 7, 8}));
  ASSERT_EQ(cublasScopy(handle_, 2, a.data(), 2, b.data(), 1), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(b, (std::vector<float>{5, 7, 3, 4}));
  float sdot = 0;
  ASSERT_EQ(cublasSdot(handle_, 4, a.data(), 1, b.data(), 1, &sdot), CUBLAS_STATUS_SUCCESS);
  EXPECT_FLOAT_EQ(sdot, 5 * 5 + 6 * 7 + 7 * 3 + 8 * 4);
}

TEST_F(Cublas, SettingsAndStatusCodes) {
  cudaStream_t stream = nullptr, got = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  EXPECT_EQ(cublasSetStream(handle_, stream), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasGetStream(handle_, &got), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(got, stream);
  cudaStreamDestroy(stream);
  cublasPointerMode_t mode;
  EXPECT_EQ(cublasGetPointerMode(handle_, &mode), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(mode, CUBLAS_POINTER_MODE_HOST);
  EXPECT_EQ(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_DEVICE), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasGetPointerMode(handle_, &mode), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(mode, CUBLAS_POINTER_MODE_DEVICE);
  cublasMath_t math;
  EXPECT_EQ(cublasSetMathMode(handle_, CUBLAS_TF32_TENSOR_OP_MATH), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasGetMathMode(handle_, &math), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(math, CUBLAS_TF32_TENSOR_OP_MATH);
  EXPECT_EQ(cublasSetMathMode(handle_, static_cast<cublasMath_t>(9)), CUBLAS_STATUS_INVALID_VALUE);
  int version = 0;
  EXPECT_EQ(cublasGetVersion(handle_, &version), CUBLAS_STATUS_SUCCESS);
  EXPECT_GT(version, 0);

  // Scalars through device pointers (the host path's device memory is host memory).
  double* alpha = nullptr;
  ASSERT_EQ(cudaMalloc(&alpha, sizeof(double)), cudaSuccess);
  *alpha = 2;
  std::vector<double> x{1, 2}, y{10, 20};
  EXPECT_EQ(cublasDaxpy(handle_, 2, alpha, x.data(), 1, y.data(), 1), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(y, (std::vector<double>{12, 24}));
  cudaFree(alpha);

  // Arguments cuBLAS refuses, refused the same way.
  const double one = 1;
  std::vector<double> m(16);
  EXPECT_EQ(cublasDgemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, m.data(), 2, m.data(), 2, &one, m.data(), 2),
            CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasDgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, 4, 2, 2, &one, m.data(), 3, m.data(), 2, &one, m.data(), 4),
            CUBLAS_STATUS_INVALID_VALUE);  // lda < m
  EXPECT_EQ(cublasDgemm(handle_, static_cast<cublasOperation_t>(7), CUBLAS_OP_N, 2, 2, 2, &one, m.data(), 2, m.data(),
                        2, &one, m.data(), 2),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasDgemv(handle_, CUBLAS_OP_N, -1, 2, &one, m.data(), 2, m.data(), 1, &one, m.data(), 1),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasDgemv(handle_, CUBLAS_OP_N, 2, 2, &one, m.data(), 2, m.data(), 0, &one, m.data(), 1),
            CUBLAS_STATUS_INVALID_VALUE);  // incx 0
  EXPECT_EQ(cublasDestroy(nullptr), CUBLAS_STATUS_NOT_INITIALIZED);
}

}  // namespace
