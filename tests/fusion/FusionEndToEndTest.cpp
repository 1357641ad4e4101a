// End to end: fusion_e2e.dsp (a gemv loop, an FFT row loop and two FFT column loops) and cublas_fusion_e2e.dsp
// (cublasDgemv, cublasDgemm and cuFFT loops, on the host stand-ins) compiled by the real disparcc with fusion (the
// default) and with -fno-fusion, run under mpiexec; both print the same values, which match a naive matrix-vector
// product and DFT computed here.
#include "Process.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <vector>

namespace dispar::testing {
namespace {

const std::string kDisparcc = DISPARCC_PATH;
const std::string kMpiexec = MPIEXEC_PATH;
const std::string kSourceDir = DISPAR_SOURCE_DIR;

constexpr int N = 48, VECS = 20, LEN = 64, ROWS = 12;

std::vector<double> reference() {
  std::vector<double> A(N * N), X(N * VECS), out;
  for (int i = 0; i < N * N; ++i) A[i] = double((i * 7) % 13) / 13.0 - 0.5;
  for (int i = 0; i < N * VECS; ++i) X[i] = double((i * 5) % 11) / 11.0 - 0.5;
  for (int j = 0; j < VECS; ++j)
    for (int r = 0; r < N; ++r) {
      double sum = 0;
      for (int c = 0; c < N; ++c) sum += A[r * N + c] * X[j * N + c];
      out.push_back(sum);
    }
  const double pi = std::acos(-1.0);
  for (int row = 0; row < ROWS; ++row)
    for (int k = 0; k < LEN; ++k) {
      double re = 0, im = 0;
      for (int t = 0; t < LEN; ++t) {
        int i = row * LEN + t;
        double xr = double((i * 3) % 17) / 17.0, xi = double((i * 11) % 19) / 19.0 - 0.5;
        double angle = -2 * pi * k * t / LEN;
        re += xr * std::cos(angle) - xi * std::sin(angle);
        im += xr * std::sin(angle) + xi * std::cos(angle);
      }
      out.push_back(re);
      out.push_back(im);
    }
  // The inputs again, transformed down each column (ROWS points, stride LEN): backward in place, then
  // forward through the copies.
  for (double sign : {1.0, -1.0}) {
    std::vector<double> columns(2 * ROWS * LEN);
    for (int c = 0; c < LEN; ++c)
      for (int k = 0; k < ROWS; ++k) {
        double re = 0, im = 0;
        for (int t = 0; t < ROWS; ++t) {
          int i = t * LEN + c;
          double xr = double((i * 3) % 17) / 17.0, xi = double((i * 11) % 19) / 19.0 - 0.5;
          double angle = sign * 2 * pi * k * t / ROWS;
          re += xr * std::cos(angle) - xi * std::sin(angle);
          im += xr * std::sin(angle) + xi * std::cos(angle);
        }
        columns[2 * (k * LEN + c)] = re;
        columns[2 * (k * LEN + c) + 1] = im;
      }
    out.insert(out.end(), columns.begin(), columns.end());
  }
  return out;
}

std::vector<double> numbers(const std::string& output) {
  std::vector<double> values;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    std::istringstream field(line);
    double v;
    if (field >> v) values.push_back(v);
  }
  return values;
}

// Compiles `source` with `flags`, runs it, returns what it printed.
std::vector<double> buildAndRun(const ScratchDir& dir, const std::string& name, std::vector<std::string> flags,
                                std::string& compilerOutput, const std::string& source = "fusion_e2e.dsp",
                                const std::vector<std::string>& env = {}) {
  std::vector<std::string> args = {kDisparcc, source, "-o", name, "--emit-cpp", name + ".cpp", "-lopenblas", "-lfftw3"};
  args.insert(args.end(), flags.begin(), flags.end());
  ProcessResult built = runProcess(args, dir.path(), env, 300);
  compilerOutput = built.output;
  EXPECT_EQ(built.status, 0) << built.output;
  if (built.status != 0) return {};
  ProcessResult run = runProcess({kMpiexec, "-launcher", "fork", "-n", "2", "./" + name}, dir.path());
  EXPECT_EQ(run.status, 0) << run.output;
  return numbers(run.output);
}

// A link that misses the call fusion made (the user wrote cblas_dgemv in a loop and did not link a
// BLAS) is named at the user's loop, with the library to link, never at a temporary file.
TEST(FusionEndToEnd, LinkErrorOfAFusedCallNamesTheUsersLoopAndTheLibrary) {
  ScratchDir dir;
  dir.write("fusion_e2e.dsp", readFile(kSourceDir + "/tests/fusion/fusion_e2e.dsp"));
  ProcessResult built = runProcess({kDisparcc, "fusion_e2e.dsp", "-o", "fused", "-lfftw3"}, dir.path(), {}, 300);
  EXPECT_EQ(built.status, 1) << built.output;
  EXPECT_NE(built.output.find("fusion_e2e.dsp:20:3: error: this loop of cblas_dgemv calls became one cblas_dgemm call "
                              "(library-call fusion), and the link found no cblas_dgemm; link -lopenblas"),
            std::string::npos)
      << built.output;
  EXPECT_EQ(built.output.find(".tmp-"), std::string::npos) << built.output;
  EXPECT_FALSE(fileExists(dir.file("fused")));
}

TEST(FusionEndToEnd, FusedProgramComputesWhatTheLoopsComputed) {
  ScratchDir dir;
  dir.write("fusion_e2e.dsp", readFile(kSourceDir + "/tests/fusion/fusion_e2e.dsp"));
  std::string fusedLog, plainLog;
  std::vector<double> fused = buildAndRun(dir, "fused", {"-Rfusion", "-Rfusion-missed"}, fusedLog);
  std::vector<double> plain = buildAndRun(dir, "plain", {"-fno-fusion", "-Rfusion"}, plainLog);

  // Both loops fused (behind run-time checks: the helpers take pointers), and only with fusion on.
  EXPECT_NE(fusedLog.find("fusion_e2e.dsp:20:3: remark: fused a loop of calls of cblas_dgemv into one cblas_dgemm"),
            std::string::npos)
      << fusedLog;
  EXPECT_NE(fusedLog.find(
                "fusion_e2e.dsp:25:3: remark: fused a loop of calls of fftw_plan_dft_1d into one fftw_plan_many_dft"),
            std::string::npos)
      << fusedLog;
  EXPECT_NE(fusedLog.find(
                "fusion_e2e.dsp:34:3: remark: fused a loop of calls of fftw_plan_many_dft into one fftw_plan_many_dft"),
            std::string::npos)
      << fusedLog;
  // The copies through a buffer are recognised and left as written (faster than the strided plan).
  EXPECT_NE(fusedLog.find(
                "fusion_e2e.dsp:47:3: remark: loop of fftw_execute_dft calls not fused: the transforms run on copies"),
            std::string::npos)
      << fusedLog;
  EXPECT_EQ(fusedLog.find("[-Rfusion-missed]"), fusedLog.rfind("[-Rfusion-missed]")) << fusedLog;
  EXPECT_EQ(plainLog.find("remark:"), std::string::npos) << plainLog;
  std::string fusedSource = readFile(dir.file("fused.cpp")), plainSource = readFile(dir.file("plain.cpp"));
  EXPECT_NE(fusedSource.find("cblas_dgemm("), std::string::npos);
  EXPECT_NE(fusedSource.find("fftw_plan_many_dft("), std::string::npos);
  EXPECT_EQ(plainSource.find("cblas_dgemm("), std::string::npos);

  std::vector<double> expected = reference();
  ASSERT_EQ(fused.size(), expected.size());
  ASSERT_EQ(plain.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    double tolerance = 1e-9 * (1 + std::fabs(expected[i]));
    EXPECT_NEAR(fused[i], expected[i], tolerance) << "value " << i;
    EXPECT_NEAR(fused[i], plain[i], tolerance) << "value " << i;
  }
}

// Products whose vectors are the columns of row-major matrices (increment = the row length): the form
// C = A * B is written in, fused into one gemm each (issue 39).
TEST(FusionEndToEnd, StridedVectorProductsComputeWhatTheLoopsComputed) {
  ScratchDir dir;
  dir.write("strided_gemv_e2e.dsp", readFile(kSourceDir + "/tests/fusion/strided_gemv_e2e.dsp"));
  std::string fusedLog, plainLog;
  std::vector<double> fused =
      buildAndRun(dir, "fused", {"-Rfusion", "-Rfusion-missed"}, fusedLog, "strided_gemv_e2e.dsp");
  std::vector<double> plain = buildAndRun(dir, "plain", {"-fno-fusion"}, plainLog, "strided_gemv_e2e.dsp");
  for (int line : {17, 23, 29})
    EXPECT_NE(fusedLog.find("strided_gemv_e2e.dsp:" + std::to_string(line) +
                            ":3: remark: fused a loop of calls of cblas_dgemv into one cblas_dgemm"),
              std::string::npos)
        << fusedLog;
  EXPECT_EQ(fusedLog.find("[-Rfusion-missed]"), std::string::npos) << fusedLog;
  EXPECT_EQ(readFile(dir.file("plain.cpp")).find("cblas_dgemm("), std::string::npos);
  EXPECT_NE(readFile(dir.file("fused.cpp")).find("cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, p, n, n"),
            std::string::npos);

  constexpr int n = 24, p = 10;
  std::vector<double> A(n * n), B(n * p), X(n * p), C(n * p), D(n * p), E(n * p);
  for (int i = 0; i < n * n; ++i) A[i] = double((i * 7) % 13) / 13.0 - 0.5;
  for (int i = 0; i < n * p; ++i) B[i] = double((i * 5) % 11) / 11.0 - 0.5;
  for (int i = 0; i < n * p; ++i) X[i] = double((i * 3) % 7) / 7.0 - 0.25;
  for (int j = 0; j < p; ++j)
    for (int r = 0; r < n; ++r) {
      double c = 0, d = 0, e = 0;
      for (int k = 0; k < n; ++k) {
        c += A[r * n + k] * B[k * p + j];      // row-major A times column j of row-major B
        d += 2 * A[r * n + k] * B[k * p + j];  // column-major A transposed: A(k, r) = A[r * n + k]
        e += A[k * n + r] * X[j * n + k];      // row-major A transposed times vector j of X
      }
      C[r * p + j] = c;
      D[j * n + r] = d;
      E[r * p + j] = e;
    }
  std::vector<double> expected = C;
  expected.insert(expected.end(), D.begin(), D.end());
  expected.insert(expected.end(), E.begin(), E.end());
  ASSERT_EQ(fused.size(), expected.size());
  ASSERT_EQ(plain.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double tolerance = 1e-9 * (1 + std::fabs(expected[i]));
    EXPECT_NEAR(fused[i], expected[i], tolerance) << "value " << i;
    EXPECT_NEAR(plain[i], expected[i], tolerance) << "value " << i;
  }
}

// The cuBLAS and cuFFT patterns on the host path (no toolkit: the GPU vnode's calls run on the stand-ins).
TEST(FusionEndToEnd, FusedGpuLibraryLoopsComputeWhatTheLoopsComputed) {
  ScratchDir dir;
  dir.write("cublas_fusion_e2e.dsp", readFile(kSourceDir + "/tests/fusion/cublas_fusion_e2e.dsp"));
  const std::vector<std::string> hostOnly = {"DISPAR_CUDA_PATH=/nonexistent"};
  std::string fusedLog, plainLog;
  std::vector<double> fused = buildAndRun(dir, "fused", {"-Rfusion"}, fusedLog, "cublas_fusion_e2e.dsp", hostOnly);
  std::vector<double> plain = buildAndRun(dir, "plain", {"-fno-fusion"}, plainLog, "cublas_fusion_e2e.dsp", hostOnly);
  EXPECT_NE(
      fusedLog.find("cublas_fusion_e2e.dsp:18:3: remark: fused a loop of calls of cublasDgemv into one cublasDgemm"),
      std::string::npos)
      << fusedLog;
  EXPECT_NE(readFile(dir.file("fused.cpp")).find("cublasDgemm("), std::string::npos);

  // y_j = A^T x_j, A column-major n x n (cublasDgemv with CUBLAS_OP_T).
  constexpr int n = 24, vecs = 10;
  std::vector<double> A(n * n), X(n * vecs), expected;
  for (int i = 0; i < n * n; ++i) A[i] = double((i * 7) % 13) / 13.0 - 0.5;
  for (int i = 0; i < n * vecs; ++i) X[i] = double((i * 5) % 11) / 11.0 - 0.5;
  for (int j = 0; j < vecs; ++j)
    for (int c = 0; c < n; ++c) {
      double sum = 0;
      for (int r = 0; r < n; ++r) sum += A[r + c * n] * X[j * n + r];
      expected.push_back(sum);
    }
  // C_b = A_b B_b^T, column-major blocks (cublasDgemm with CUBLAS_OP_N, CUBLAS_OP_T).
  constexpr int m = 5, nb = 4, k = 3, blocks = 6;
  std::vector<double> BA(m * k * blocks), BB(nb * k * blocks);
  for (int i = 0; i < m * k * blocks; ++i) BA[i] = double((i * 3) % 7) / 7.0 - 0.25;
  for (int i = 0; i < nb * k * blocks; ++i) BB[i] = double((i * 5) % 9) / 9.0 - 0.5;
  for (int b = 0; b < blocks; ++b)
    for (int j = 0; j < nb; ++j)
      for (int i = 0; i < m; ++i) {
        double sum = 0;
        for (int l = 0; l < k; ++l) sum += BA[b * m * k + i + l * m] * BB[b * k * nb + j + l * nb];
        expected.push_back(sum);
      }
  EXPECT_NE(fusedLog.find("cublas_fusion_e2e.dsp:25:3: remark: fused a loop of calls of cublasDgemm into one "
                          "cublasDgemmStridedBatched"),
            std::string::npos)
      << fusedLog;
  // Unnormalised forward DFTs (cuFFT's sign -1): 5 complex rows of 16 points, then 4 real rows of 12 points
  // whose 7 non-redundant coefficients are kept.
  auto dft = [&expected](const std::vector<double>& re, const std::vector<double>& im, int n, int kept) {
    const double pi = std::acos(-1.0);
    for (int k = 0; k < kept; ++k) {
      double sumRe = 0, sumIm = 0;
      for (int j = 0; j < n; ++j) {
        double angle = -2 * pi * double(j) * double(k) / n;
        sumRe += re[j] * std::cos(angle) - im[j] * std::sin(angle);
        sumIm += re[j] * std::sin(angle) + im[j] * std::cos(angle);
      }
      expected.insert(expected.end(), {sumRe, sumIm});
    }
  };
  constexpr int len = 16, rows = 5, realLen = 12, realRows = 4;
  for (int r = 0; r < rows; ++r) {
    std::vector<double> re, im;
    for (int i = r * len; i < (r + 1) * len; ++i) {
      re.push_back(double((i * 3) % 5) - 2.0);
      im.push_back(double((i * 7) % 4) / 4.0);
    }
    dft(re, im, len, len);
  }
  std::size_t singlePrecisionFrom = expected.size();
  for (int r = 0; r < realRows; ++r) {
    std::vector<double> re, im(realLen, 0.0);
    for (int i = r * realLen; i < (r + 1) * realLen; ++i) re.push_back(double((i * 5) % 7) - 3.0);
    dft(re, im, realLen, realLen / 2 + 1);
  }
  EXPECT_NE(
      fusedLog.find("cublas_fusion_e2e.dsp:33:3: remark: fused a loop of calls of cufftExecZ2Z into one cufftPlanMany"),
      std::string::npos)
      << fusedLog;
  EXPECT_NE(
      fusedLog.find("cublas_fusion_e2e.dsp:43:3: remark: fused a loop of calls of cufftExecR2C into one cufftPlanMany"),
      std::string::npos)
      << fusedLog;
  EXPECT_NE(readFile(dir.file("fused.cpp")).find("cufftPlanMany("), std::string::npos);
  EXPECT_EQ(readFile(dir.file("plain.cpp")).find("cufftPlanMany("), std::string::npos);

  ASSERT_EQ(fused.size(), expected.size());
  ASSERT_EQ(plain.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    double tolerance =
        i < singlePrecisionFrom ? 1e-12 * (1 + std::fabs(expected[i])) : 1e-5 * (1 + std::fabs(expected[i]));
    EXPECT_NEAR(fused[i], expected[i], tolerance) << "value " << i;
    EXPECT_NEAR(fused[i], plain[i], tolerance) << "value " << i;
  }
}

}  // namespace
}  // namespace dispar::testing
