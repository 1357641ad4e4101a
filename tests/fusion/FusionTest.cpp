// Library-call fusion (frontend/lib/fusion): for each pattern, the rewritten source (golden text) and the
// remark with its file:line:col; for loops that must stay as written, the missed remark saying why.
// The end-to-end test (FusionEndToEndTest.cpp) checks that fused programs compute the same results.
#include "frontend/Frontend.h"
#include "streamcc/Driver.h"

#include "clang/Tooling/Core/Replacement.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace dispar::testing {
namespace {

// Four lines of includes, the code under test from line 5, then a VNODE.
const std::string kPrelude = "#include <dispar/dispar.h>\n#include <cblas.h>\n#include <fftw3.h>\n#include <vector>\n";
const std::string kVnode = "VNODE(worker) {}\n";

struct Fusion {
  bool ok = false;
  std::string diagnostics;
  std::string code;  // the code under test after the edits
  frontend::FrontendResult result;
};

// `toolkit`: parse with the CUDA toolkit and call GPU libraries through ::dispar::gpu, as disparcc does
// where it finds one; else with DISPAR's own CUDA headers, calling the host stand-ins by name.
Fusion fuse(const std::string& code, bool fusion = true, const std::string& fileName = "test.dsp",
            bool toolkit = true) {
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("dispar-fusion-test", dir);
  std::string path = std::string(dir) + "/" + fileName;
  std::ofstream(path) << kPrelude << code << kVnode;
  frontend::FrontendOptions options = streamcc::ToolchainPaths::detect().frontendOptions(path);
  options.fusion = fusion;
  if (!toolkit) {
    options.cudaPath.clear();
    options.cudaTarget = frontend::CudaTarget::HostOnly;
  }
  options.remarkFusion = true;
  options.remarkFusionMissed = true;
  options.timeLibraryCalls = false;  // the calls' trace timers are CudaLowering's (its tests check them)
  Fusion out;
  out.result.program.name = "test";
  llvm::raw_string_ostream diagnostics(out.diagnostics);
  out.ok = frontend::runFrontend(options, out.result, diagnostics);
  diagnostics.flush();
  llvm::sys::fs::remove_directories(dir);
  llvm::Expected<std::string> edited =
      clang::tooling::applyAllReplacements(out.result.sourceText, out.result.sourceEdits);
  if (!edited) {
    ADD_FAILURE() << llvm::toString(edited.takeError());
    return out;
  }
  out.code = edited->substr(kPrelude.size(), edited->size() - kPrelude.size() - kVnode.size());
  return out;
}

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

int remarkCount(const std::string& diagnostics) {
  int n = 0;
  for (std::size_t at = diagnostics.find("remark: "); at != std::string::npos;
       at = diagnostics.find("remark: ", at + 1))
    ++n;
  return n;
}

// ---------------------------------------------------------------------------------------------------
// gemv loop -> gemm

TEST(Fusion, GemvLoopOverLocalArraysBecomesOneGemm) {
  Fusion f =
      fuse("void products() {\n"
           "  static double A[64 * 64], X[16 * 64], Y[16 * 64];\n"
           "  for (int j = 0; j < 16; ++j)\n"
           "    cblas_dgemv(CblasRowMajor, CblasNoTrans, 64, 64, 1.0, A, 64, X + j * 64, 1, 0.0, Y + j * 64, 1);\n"
           "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  // Everything is proven: the loop is replaced, its two lines kept.
  EXPECT_EQ(f.code,
            "void products() {\n"
            "  static double A[64 * 64], X[16 * 64], Y[16 * 64];\n"
            "  { cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, 16, 64, 64, 1.0, X, 64, A, 64, 0.0, Y, 64); }\n"
            "\n"
            "}\n");
  EXPECT_TRUE(
      contains(f.diagnostics, "test.dsp:7:3: remark: fused 16 calls of cblas_dgemv into one cblas_dgemm [-Rfusion]\n"))
      << f.diagnostics;
  ASSERT_EQ(f.result.fusedRanges.size(), 1u);
  EXPECT_EQ(f.result.fusedRanges[0].getLength(), f.result.sourceEdits.begin()->getLength());
}

TEST(Fusion, GemvLoopOverTheColumnsOfRowMajorMatricesBecomesOneGemm) {
  // C = A * B written a column at a time: each vector is a column of a row-major matrix (increment 64,
  // successive ones one element apart). In the column-major view that is C^T = B^T * A^T.
  Fusion f = fuse("void multiply() {\n"
                  "  static double A[64 * 64], B[64 * 16], C[64 * 16];\n"
                  "  for (int j = 0; j < 16; ++j)\n"
                  "    cblas_dgemv(CblasRowMajor, CblasNoTrans, 64, 64, 1.0, A, 64, B + j, 16, 0.0, C + j, 16);\n"
                  "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_EQ(f.code,
            "void multiply() {\n"
            "  static double A[64 * 64], B[64 * 16], C[64 * 16];\n"
            "  { cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 16, 64, 64, 1.0, B, 16, A, 64, 0.0, C, 16); }\n"
            "\n"
            "}\n");
  EXPECT_TRUE(
      contains(f.diagnostics, "test.dsp:7:3: remark: fused 16 calls of cblas_dgemv into one cblas_dgemm [-Rfusion]\n"))
      << f.diagnostics;
}

TEST(Fusion, StridedInputsAndContiguousOutputsTransposeOnlyTheInputs) {
  // Column-major A; x_j a column of a row-major matrix, y_j contiguous: Y = A^T X, X given by rows.
  Fusion f = fuse("void gather() {\n"
                  "  static float A[32 * 32], B[32 * 8], D[32 * 8];\n"
                  "  for (int j = 0; j < 8; ++j)\n"
                  "    cblas_sgemv(CblasColMajor, CblasTrans, 32, 32, 2.0f, A, 32, B + j, 8, 0.0f, D + j * 32, 1);\n"
                  "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_TRUE(contains(f.code, "{ cblas_sgemm(CblasColMajor, CblasTrans, CblasTrans, 32, 8, 32, 2.0f, A, 32, B, 8, "
                               "0.0f, D, 32); }"))
      << f.code;
}

TEST(Fusion, StridedCublasGemvLoopBecomesOneCublasGemm) {
  Fusion f = fuse("#include <cublas_v2.h>\n"
                  "void multiply(cublasHandle_t h, const double* one, const double* zero) {\n"
                  "  static double A[16 * 16], B[16 * 4], C[16 * 4];\n"
                  "  for (int j = 0; j < 4; ++j)\n"
                  "    cublasDgemv(h, CUBLAS_OP_N, 16, 16, one, A, 16, B + j * 16, 1, zero, C + j, 4);\n"
                  "}\n",
                  true, "test.dsp", false);
  ASSERT_TRUE(f.ok) << f.diagnostics;
  // Column-major A; x_j contiguous, y_j a column of a row-major 16 x 4 matrix: Y^T = X^T A^T.
  EXPECT_TRUE(contains(f.code, "cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_T, 4, 16, 16, one, B, 16, A, 16, zero, C, 4)"))
      << f.code;
}

TEST(Fusion, GemvLoopInAHelperIsGuardedByARunTimeCheck) {
  Fusion f = fuse("void products(const double* A, const double* x, double* y, int n, int count) {\n"
                  "  for (int j = 0; j < count; ++j) cblas_dgemv(CblasColMajor, CblasTrans, n, n, 2.0, A, n, x + j * "
                  "n, 1, 1.0, y + j * n, 1);\n"
                  "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  // The pointers may overlap: the loop stays, as the fallback when they do.
  EXPECT_EQ(
      f.code,
      "void products(const double* A, const double* x, double* y, int n, int count) {\n"
      "  if (count >= 1 && n >= 1 && ((const char*)(y) + sizeof(double) * count * n <= (const char*)(x) || "
      "(const char*)(x) + sizeof(double) * count * n <= (const char*)(y)) && ((const char*)(y) + sizeof(double) * "
      "count * n <= (const char*)(A) || (const char*)(A) + sizeof(double) * n * n <= (const char*)(y))) "
      "{ cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, n, count, n, 2.0, A, n, x, n, 1.0, y, n); } else "
      "for (int j = 0; j < count; ++j) cblas_dgemv(CblasColMajor, CblasTrans, n, n, 2.0, A, n, x + j * n, 1, 1.0, y + "
      "j * n, 1);\n"
      "}\n");
  EXPECT_TRUE(contains(f.diagnostics,
                       "test.dsp:6:3: remark: fused a loop of calls of cblas_dgemv into one cblas_dgemm, behind a "
                       "run-time check that runs the loop when it fails [-Rfusion]\n"))
      << f.diagnostics;
  EXPECT_TRUE(f.result.fusedRanges.empty());  // nothing replaced: the loop is still there
}

TEST(Fusion, SingleGemvLoopOfFloatsInAVnodeBody) {
  Fusion f = fuse(
      "VNODE(products) {\n"
      "  std::vector<float> a(32 * 32), x(32 * 8), y(32 * 8);\n"
      "  for (int j = 0; j < 8; j++) {\n"
      "    cblas_sgemv(CblasColMajor, CblasNoTrans, 32, 32, 1.0f, a.data(), 32, &x[j * 32], 1, 0.0f, &y[j * 32], 1);\n"
      "  }\n"
      "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_TRUE(contains(
      f.code, "  { cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 32, 8, 32, 1.0f, a.data(), 32, &x[0], 32, "
              "0.0f, &y[0], 32); }\n\n\n}\n"))
      << f.code;
  EXPECT_TRUE(
      contains(f.diagnostics, "test.dsp:7:3: remark: fused 8 calls of cblas_sgemv into one cblas_sgemm [-Rfusion]"))
      << f.diagnostics;
}

TEST(Fusion, CublasGemvLoopBecomesOneCublasGemm) {
  Fusion f = fuse("#include <cublas_v2.h>\n"
                  "void products(cublasHandle_t h, const double* A, const double* x, double* y, int n, int count) {\n"
                  "  const double one = 1.0, zero = 0.0;\n"
                  "  for (int j = 0; j < count; ++j) cublasDgemv(h, CUBLAS_OP_T, n, n, &one, A, n, x + j * n, 1, "
                  "&zero, y + j * n, 1);\n"
                  "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  // Column-major, device pointers (never known apart at compile time), the call through ::dispar::gpu.
  EXPECT_TRUE(contains(f.code, "{ ::dispar::gpu::cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, count, n, &one, A, n, x, "
                               "n, &zero, y, n); } else for"))
      << f.code;
  EXPECT_TRUE(contains(f.diagnostics,
                       "test.dsp:8:3: remark: fused a loop of calls of cublasDgemv into one cublasDgemm, behind"))
      << f.diagnostics;
}

// ---------------------------------------------------------------------------------------------------
// FFT rows -> many plan

TEST(Fusion, PlanPerRowLoopBecomesOneManyPlan) {
  Fusion f = fuse("void spectra(fftw_complex* in, fftw_complex* out, int n, int rows) {\n"
                  "  for (int r = 0; r < rows; ++r) {\n"
                  "    fftw_plan p = fftw_plan_dft_1d(n, in + r * n, out + r * n, FFTW_FORWARD, FFTW_ESTIMATE);\n"
                  "    fftw_execute(p);\n"
                  "    fftw_destroy_plan(p);\n"
                  "  }\n"
                  "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_EQ(
      f.code,
      "void spectra(fftw_complex* in, fftw_complex* out, int n, int rows) {\n"
      "  if (rows >= 1 && ((const char*)(out) + sizeof(fftw_complex) * n * rows <= (const char*)(in) || "
      "(const char*)(in) + sizeof(fftw_complex) * n * rows <= (const char*)(out))) { int dispar_fft_n = n; "
      "fftw_plan dispar_fft_plan = fftw_plan_many_dft(1, &dispar_fft_n, rows, in, nullptr, 1, n, out, nullptr, 1, n, "
      "FFTW_FORWARD, FFTW_ESTIMATE); fftw_execute(dispar_fft_plan); fftw_destroy_plan(dispar_fft_plan); } else "
      "for (int r = 0; r < rows; ++r) {\n"
      "    fftw_plan p = fftw_plan_dft_1d(n, in + r * n, out + r * n, FFTW_FORWARD, FFTW_ESTIMATE);\n"
      "    fftw_execute(p);\n"
      "    fftw_destroy_plan(p);\n"
      "  }\n"
      "}\n");
  EXPECT_TRUE(contains(f.diagnostics,
                       "test.dsp:6:3: remark: fused a loop of calls of fftw_plan_dft_1d into one fftw_plan_many_dft"))
      << f.diagnostics;
}

TEST(Fusion, InPlaceExecutionLoopWithAPlanMadeOnceBecomesOneManyPlan) {
  Fusion f = fuse("void spectra(int n) {\n"
                  "  static fftw_complex data[128 * 256];\n"
                  "  fftw_plan plan = fftw_plan_dft_1d(256, data, data, FFTW_BACKWARD, FFTW_MEASURE);\n"
                  "  for (int r = 0; r < 128; ++r) fftw_execute_dft(plan, data + r * 256, data + r * 256);\n"
                  "  fftw_destroy_plan(plan);\n"
                  "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_TRUE(contains(
      f.code, "  { int dispar_fft_n = 256; fftw_plan dispar_fft_plan = fftw_plan_many_dft(1, &dispar_fft_n, 128, data, "
              "nullptr, 1, 256, data, nullptr, 1, 256, FFTW_BACKWARD, FFTW_ESTIMATE); fftw_execute(dispar_fft_plan); "
              "fftw_destroy_plan(dispar_fft_plan); }\n  fftw_destroy_plan(plan);\n"))
      << f.code;
  EXPECT_TRUE(
      contains(f.diagnostics,
               "test.dsp:8:3: remark: fused 128 calls of fftw_execute_dft into one fftw_plan_many_dft [-Rfusion]"))
      << f.diagnostics;
}

TEST(Fusion, ExecutionLoopReadsThePlanSizeAsTheLoopDoes) {
  Fusion f = fuse("void spectra(fftw_complex* in, fftw_complex* out, int n, int rows) {\n"
                  "  fftw_plan plan = fftw_plan_dft_1d(n, in, out, FFTW_FORWARD, FFTW_ESTIMATE);\n"
                  "  for (int r = 0; r < rows; ++r) fftw_execute_dft(plan, in + r * n, out + r * n);\n"
                  "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  // The plan's `n` and the rows' `n` are one quantity: the step n >= n is proven, not checked.
  EXPECT_TRUE(contains(
      f.code, "  if (rows >= 1 && ((const char*)(out) + sizeof(fftw_complex) * n * rows <= (const char*)(in) || "
              "(const char*)(in) + sizeof(fftw_complex) * n * rows <= (const char*)(out))) { int dispar_fft_n = n; "))
      << f.code;
}

TEST(Fusion, StridedPlanPerColumnBecomesOneInterleavedManyPlan) {
  Fusion f = fuse("void columns(fftw_complex* a, int rows, int cols) {\n"
                  "  for (int c = 0; c < cols; ++c) {\n"
                  "    fftw_plan p = fftw_plan_many_dft(1, &rows, 1, a + c, nullptr, cols, 1, a + c, nullptr, cols, 1, "
                  "FFTW_FORWARD, FFTW_ESTIMATE);\n"
                  "    fftw_execute(p);\n"
                  "    fftw_destroy_plan(p);\n"
                  "  }\n"
                  "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  // In place, the columns interleaved (distance 1, stride cols): only the trip count is left to check.
  EXPECT_TRUE(contains(
      f.code,
      "  if (cols >= 1) { int dispar_fft_n = rows; fftw_plan dispar_fft_plan = fftw_plan_many_dft(1, &dispar_fft_n, "
      "cols, a, nullptr, cols, 1, a, nullptr, cols, 1, FFTW_FORWARD, FFTW_ESTIMATE); "
      "fftw_execute(dispar_fft_plan); fftw_destroy_plan(dispar_fft_plan); } else for (int c = 0;"))
      << f.code;
  EXPECT_TRUE(
      contains(f.diagnostics,
               "test.dsp:6:3: remark: fused a loop of calls of fftw_plan_many_dft into one fftw_plan_many_dft, behind"))
      << f.diagnostics;
}

const std::string kTransposingCopies =
    "#include <complex>\n"
    "void columns(const std::complex<double>* a, std::complex<double>* b, int rows, int cols) {\n"
    "  std::vector<std::complex<double>> col(rows);\n"
    "  fftw_plan plan = fftw_plan_dft_1d(rows, reinterpret_cast<fftw_complex*>(col.data()), "
    "reinterpret_cast<fftw_complex*>(col.data()),"
    " FFTW_FORWARD, FFTW_ESTIMATE);\n"
    "  for (int c = 0; c < cols; ++c) {\n"
    "    for (int r = 0; r < rows; ++r) col[r] = a[r * cols + c];\n"
    "    fftw_execute_dft(plan, reinterpret_cast<fftw_complex*>(col.data()), "
    "reinterpret_cast<fftw_complex*>(col.data()));\n"
    "    for (int r = 0; r < rows; ++r) b[r * cols + c] = col[r];\n"
    "  }\n"
    "  fftw_destroy_plan(plan);\n"
    "}\n";

// Recognised and proven, but left as written: the copies run faster than the strided plan (LibraryTables.h).
TEST(Fusion, TransposingCopiesAroundAnFftAreLeftAsWritten) {
  Fusion f = fuse(kTransposingCopies);
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_TRUE(f.result.sourceEdits.empty());
  EXPECT_TRUE(contains(
      f.diagnostics, "test.dsp:9:3: remark: loop of fftw_execute_dft calls not fused: the transforms run on copies of "
                     "the columns, which is faster than one strided plan made without measuring [-Rfusion-missed]"))
      << f.diagnostics;
}

TEST(Fusion, TransposingCopyThroughABufferReadAfterTheLoopIsNotFused) {
  std::string code = kTransposingCopies;
  code.replace(code.find("  fftw_destroy_plan(plan);\n"), 0, "  b[0] = col[0];\n");
  Fusion f = fuse(code);
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_TRUE(f.result.sourceEdits.empty());
  EXPECT_TRUE(contains(f.diagnostics,
                       "test.dsp:9:3: remark: loop of fftw_execute_dft calls not fused: the copy before the transforms "
                       "goes through 'col', which is used outside the loop [-Rfusion-missed]"))
      << f.diagnostics;
}

TEST(Fusion, RealToComplexRowsInSinglePrecision) {
  Fusion f = fuse("void spectra() {\n"
                  "  static float in[16 * 64];\n"
                  "  static fftwf_complex out[16 * 33];\n"
                  "  for (int r = 0; r < 16; ++r) {\n"
                  "    fftwf_plan p = fftwf_plan_dft_r2c_1d(64, in + r * 64, out + r * 33, FFTW_ESTIMATE);\n"
                  "    fftwf_execute(p);\n"
                  "    fftwf_destroy_plan(p);\n"
                  "  }\n"
                  "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_TRUE(contains(
      f.code,
      "  { int dispar_fft_n = 64; fftwf_plan dispar_fft_plan = fftwf_plan_many_dft_r2c(1, &dispar_fft_n, 16, in, "
      "nullptr, 1, 64, out, nullptr, 1, 33, FFTW_ESTIMATE); fftwf_execute(dispar_fft_plan); "
      "fftwf_destroy_plan(dispar_fft_plan); }\n\n\n\n\n}\n"))
      << f.code;
  EXPECT_TRUE(contains(
      f.diagnostics,
      "test.dsp:8:3: remark: fused 16 calls of fftwf_plan_dft_r2c_1d into one fftwf_plan_many_dft_r2c [-Rfusion]"))
      << f.diagnostics;
}

// ---------------------------------------------------------------------------------------------------
// gemm blocks -> one gemm

TEST(Fusion, GemmOverRowBlocksBecomesOneGemm) {
  Fusion f = fuse(
      "void blocks() {\n"
      "  static double A[8 * 32 * 48], B[48 * 40], C[8 * 32 * 40];\n"
      "  for (int b = 0; b < 8; ++b)\n"
      "    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 32, 40, 48, 1.0, A + b * 32 * 48, 48, B, 40, 0.0,\n"
      "                C + b * 32 * 40, 40);\n"
      "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_EQ(
      f.code,
      "void blocks() {\n"
      "  static double A[8 * 32 * 48], B[48 * 40], C[8 * 32 * 40];\n"
      "  { cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 256, 40, 48, 1.0, A, 48, B, 40, 0.0, C, 40); }\n"
      "\n\n"
      "}\n");
  EXPECT_TRUE(
      contains(f.diagnostics, "test.dsp:7:3: remark: fused 8 calls of cblas_dgemm into one cblas_dgemm [-Rfusion]"))
      << f.diagnostics;
}

TEST(Fusion, GemmOverColumnBlocksInAHelper) {
  Fusion f = fuse("void blocks(const float* A, const float* B, float* C, int m, int n, int k, int nb) {\n"
                  "  for (int b = 0; b < nb; ++b)\n"
                  "    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, A, m, B + b * n * k, k, "
                  "0.0f, C + b * n * m, m);\n"
                  "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_TRUE(contains(f.code, "{ cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n * nb, k, 1.0f, A, m, B, "
                               "k, 0.0f, C, m); } else for"))
      << f.code;
  EXPECT_TRUE(contains(f.diagnostics,
                       "test.dsp:6:3: remark: fused a loop of calls of cblas_sgemm into one cblas_sgemm, behind"))
      << f.diagnostics;
}

// Device vectors held by value are distinct storage: everything is proven and the loop is replaced; the
// CUDA lowering leaves the calls inside the replaced text alone (fusedRanges).
TEST(Fusion, CublasGemvLoopOnDeviceVectorsIsReplaced) {
  Fusion f = fuse("#include <dispar/device_vector.h>\n"
                  "#include <cublas_v2.h>\n"
                  "void products(cublasHandle_t h) {\n"
                  "  const double one = 1.0, zero = 0.0;\n"
                  "  dispar::device_vector<double> A(64 * 64), X(16 * 64), Y(16 * 64);\n"
                  "  for (int j = 0; j < 16; ++j) cublasDgemv(h, CUBLAS_OP_N, 64, 64, &one, A.data(), 64, X.data() + j "
                  "* 64, 1, &zero, Y.data() + j * 64, 1);\n"
                  "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_TRUE(contains(f.code, "  { ::dispar::gpu::cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 16, 64, &one, "
                               "A.data(), 64, X.data(), 64, &zero, "
                               "Y.data(), 64); }\n}\n"))
      << f.code;
  EXPECT_EQ(f.result.fusedRanges.size(), 1u);
  EXPECT_TRUE(
      contains(f.diagnostics, "test.dsp:10:3: remark: fused 16 calls of cublasDgemv into one cublasDgemm [-Rfusion]"))
      << f.diagnostics;
}

TEST(Fusion, CublasGemmLoopOverBlocksBecomesOneStridedBatch) {
  Fusion f = fuse(
      "#include <cublas_v2.h>\n"
      "void batch(cublasHandle_t h, const double* A, const double* B, double* C, int m, int n, int k, int count) {\n"
      "  const double one = 1.0, zero = 0.0;\n"
      "  for (int b = 0; b < count; ++b)\n"
      "    cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &one, A + b * m * k, m, B + b * k * n, n, &zero, C + b * "
      "m * n, m);\n"
      "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_TRUE(contains(
      f.code,
      "{ ::dispar::gpu::cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &one, A, m, k * m, B, n, "
      "k * n, &zero, C, m, m * n, count); } else for"))
      << f.code;
  EXPECT_TRUE(
      contains(f.diagnostics,
               "test.dsp:8:3: remark: fused a loop of calls of cublasDgemm into one cublasDgemmStridedBatched, behind"))
      << f.diagnostics;
}

// ---------------------------------------------------------------------------------------------------
// cuFFT executions -> one batched plan

TEST(Fusion, CufftExecutionLoopBecomesOneBatchedPlan) {
  Fusion f = fuse("#include <cufft.h>\n"
                  "void spectra(cufftDoubleComplex* in, cufftDoubleComplex* out, int n, int rows) {\n"
                  "  cufftHandle plan;\n"
                  "  cufftPlan1d(&plan, n, CUFFT_Z2Z, 1);\n"
                  "  for (int r = 0; r < rows; ++r) cufftExecZ2Z(plan, in + r * n, out + r * n, CUFFT_FORWARD);\n"
                  "  cufftDestroy(plan);\n"
                  "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  // Device pointers: the rows' disjointness is checked at run time, and so is the plan's creation; the
  // loop (lowered as any other) runs when either fails.
  EXPECT_TRUE(contains(
      f.code,
      "  { cufftHandle dispar_fft_plan; int dispar_fft_n = n; if (rows >= 1 && ((const char*)(out) + "
      "sizeof(cufftDoubleComplex) * n * rows <= (const char*)(in) || (const char*)(in) + sizeof(cufftDoubleComplex) "
      "* n * rows <= (const char*)(out)) && ::dispar::gpu::cufftPlanMany(&dispar_fft_plan, 1, "
      "&dispar_fft_n, &dispar_fft_n, 1, n, &dispar_fft_n, 1, n, CUFFT_Z2Z, rows) == CUFFT_SUCCESS) { "
      "::dispar::gpu::cufftExecZ2Z(dispar_fft_plan, in, out, CUFFT_FORWARD); "
      "::dispar::gpu::cufftDestroy(dispar_fft_plan); } else for (int r = 0; r < rows; ++r) "
      "::dispar::gpu::cufftExecZ2Z(plan, in + r * n, out + r * n, CUFFT_FORWARD); }\n"))
      << f.code;
  EXPECT_TRUE(f.result.fusedRanges.empty());
  EXPECT_TRUE(contains(f.diagnostics,
                       "test.dsp:9:3: remark: fused a loop of calls of cufftExecZ2Z into one cufftPlanMany, behind"))
      << f.diagnostics;
}

TEST(Fusion, CufftRealLoopKeepsThePlansStream) {
  Fusion f = fuse("#include <cufft.h>\n"
                  "void spectra(cudaStream_t stream, cufftReal* in, cufftComplex* out) {\n"
                  "  cufftHandle plan;\n"
                  "  cufftPlan1d(&plan, 64, CUFFT_R2C, 1);\n"
                  "  cufftSetStream(plan, stream);\n"
                  "  for (int r = 0; r < 32; ++r) {\n"
                  "    cufftExecR2C(plan, in + r * 64, out + r * 33);\n"
                  "  }\n"
                  "  cufftDestroy(plan);\n"
                  "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  // The steps are proven (64 >= 64, 33 >= 64 / 2 + 1); the fused plan runs on the loop's stream; the
  // block closes after the loop's, keeping the lines.
  EXPECT_TRUE(contains(
      f.code,
      "&& ::dispar::gpu::cufftPlanMany(&dispar_fft_plan, 1, &dispar_fft_n, &dispar_fft_n, 1, 64, &dispar_fft_n, 1, "
      "33, CUFFT_R2C, 32) == CUFFT_SUCCESS) { ::dispar::gpu::cufftSetStream(dispar_fft_plan, stream); "
      "::dispar::gpu::cufftExecR2C(dispar_fft_plan, in, out); ::dispar::gpu::cufftDestroy(dispar_fft_plan); } "
      "else for (int r = 0; r < 32; ++r) {\n"
      "    ::dispar::gpu::cufftExecR2C(plan, in + r * 64, out + r * 33);\n"
      "  } }\n"
      "  ::dispar::gpu::cufftDestroy(plan);\n"))
      << f.code;
  EXPECT_TRUE(
      contains(f.diagnostics, "test.dsp:10:3: remark: fused 32 calls of cufftExecR2C into one cufftPlanMany, behind"))
      << f.diagnostics;
}

TEST(Fusion, CufftLoopWithoutToolkitCallsTheStandInsByName) {
  const char* code =
      "#include <cufft.h>\n"
      "void spectra(cufftComplex* data, int rows) {\n"
      "  cufftHandle plan;\n"
      "  cufftPlan1d(&plan, 128, CUFFT_C2C, 1);\n"
      "  for (int r = 0; r < rows; ++r) cufftExecC2C(plan, data + r * 128, data + r * 128, CUFFT_INVERSE);\n"
      "  cufftDestroy(plan);\n"
      "}\n";
  Fusion f = fuse(code, true, "test.dsp", /*toolkit=*/false);
  ASSERT_TRUE(f.ok) << f.diagnostics;
  // In place: the same rows in and out are allowed; only the iteration needs checking.
  EXPECT_TRUE(contains(
      f.code,
      "  { cufftHandle dispar_fft_plan; int dispar_fft_n = 128; if (rows >= 1 && cufftPlanMany(&dispar_fft_plan, 1, "
      "&dispar_fft_n, &dispar_fft_n, 1, 128, &dispar_fft_n, 1, 128, CUFFT_C2C, rows) == CUFFT_SUCCESS) { "
      "cufftExecC2C(dispar_fft_plan, data, data, CUFFT_INVERSE); cufftDestroy(dispar_fft_plan); } else for"))
      << f.code;
}

// ---------------------------------------------------------------------------------------------------
// Loops that must stay as written, and why

struct Missed {
  const char* name;
  const char* code;
  const char* remark;  // expected at test.dsp:LINE:3
  int line = 6;
  bool toolkit = false;  // GPU library calls by name, not rewritten to ::dispar::gpu (the code stays as written)
};

class MissedFusion : public ::testing::TestWithParam<Missed> {};

TEST_P(MissedFusion, LoopStaysAndTheRemarkSaysWhy) {
  Fusion f = fuse(GetParam().code, true, "test.dsp", GetParam().toolkit);
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_EQ(f.code, GetParam().code);
  EXPECT_TRUE(f.result.sourceEdits.empty());
  EXPECT_TRUE(contains(f.diagnostics, "test.dsp:" + std::to_string(GetParam().line) +
                                          ":3: remark: " + GetParam().remark + " [-Rfusion-missed]\n"))
      << f.diagnostics;
  EXPECT_EQ(remarkCount(f.diagnostics), 1) << f.diagnostics;
}

const Missed kMissed[] = {
    {"OutputAliasesInput",
     "void f(double* A, double* v, int n) {\n"
     "  for (int j = 0; j < 8; ++j) cblas_dgemv(CblasRowMajor, CblasNoTrans, n, n, 1.0, A, n, v + j * n, 1, 0.0, v + j "
     "* n, 1);\n"
     "}\n",
     "loop of cblas_dgemv calls not fused: the output 'v + j * n' is also the input 'v + j * n'"},
    {"DataDependentBound",
     "void f(double* A, double* x, double* y, const int* counts, int n) {\n"
     "  for (int j = 0; j < counts[0]; ++j) cblas_dgemv(CblasRowMajor, CblasNoTrans, n, n, 1.0, A, n, x + j * n, 1, "
     "0.0, y + j * n, 1);\n"
     "}\n",
     "loop of cblas_dgemv calls not fused: the loop bound 'counts[0]' reads memory the loop may write"},
    {"LoopVariantMatrix",
     "void f(double* A, double* x, double* y, int n) {\n"
     "  for (int j = 0; j < 8; ++j) cblas_dgemv(CblasRowMajor, CblasNoTrans, n, n, 1.0, A + j * n, n, x + j * n, 1, "
     "0.0, y + j * n, 1);\n"
     "}\n",
     "loop of cblas_dgemv calls not fused: the matrix 'A + j * n' changes with the loop"},
    {"ExtraSideEffects",
     "void f(double* A, double* x, double* y, int n) {\n"
     "  for (int j = 0; j < 8; ++j) { cblas_dgemv(CblasRowMajor, CblasNoTrans, n, n, 1.0, A, n, x + j * n, 1, 0.0, y + "
     "j * n, 1); x[j] = 0; }\n"
     "}\n",
     "loop of cblas_dgemv calls not fused: the loop body has other statements besides the cblas_dgemv call"},
    {"IncrementWithoutSuccessiveVectors",
     "void f(double* A, double* x, double* y, int n) {\n"
     "  for (int j = 0; j < 8; ++j) cblas_dgemv(CblasRowMajor, CblasNoTrans, n, n, 1.0, A, n, x + 2 * j, 16, 0.0, y + "
     "j * n, 1);\n"
     "}\n",
     "loop of cblas_dgemv calls not fused: the vector increment '16' is not 1, and successive vectors x do not start "
     "at successive elements"},
    {"IncrementSmallerThanTheCount",
     "void f(double* A, double* x, double* y, int n) {\n"
     "  for (int j = 0; j < 8; ++j) cblas_dgemv(CblasRowMajor, CblasNoTrans, n, n, 1.0, A, n, x + j, 4, 0.0, y + j * "
     "n, 1);\n"
     "}\n",
     "loop of cblas_dgemv calls not fused: the vectors x overlap (their increment is less than the loop's count)"},
    {"NonUnitLoopStep",
     "void f(double* A, double* x, double* y, int n) {\n"
     "  for (int j = 0; j < 8; j += 2) cblas_dgemv(CblasRowMajor, CblasNoTrans, n, n, 1.0, A, n, x + j * n, 1, 0.0, y "
     "+ j * n, 1);\n"
     "}\n",
     "loop of cblas_dgemv calls not fused: the loop does not step by 1"},
    {"NonAffineOffset",
     "void f(double* A, double* x, double* y, int n) {\n"
     "  for (int j = 0; j < 8; ++j) cblas_dgemv(CblasRowMajor, CblasNoTrans, n, n, 1.0, A, n, x + j * n, 1, 0.0, y + j "
     "* j, 1);\n"
     "}\n",
     "loop of cblas_dgemv calls not fused: the vector y 'j * j' is not affine in 'j'"},
    {"OverlappingOutputRows",
     "void f(double* A, double* x, double* y) {\n"
     "  for (int j = 0; j < 8; ++j) cblas_dgemv(CblasRowMajor, CblasNoTrans, 16, 16, 1.0, A, 16, x + j * 16, 1, 0.0, y "
     "+ j * 4, 1);\n"
     "}\n",
     "loop of cblas_dgemv calls not fused: successive vectors y overlap (their step is less than their length)"},
    {"FftPlanWithExtraWork",
     "void f(fftw_complex* in, fftw_complex* out, int n, int rows) {\n"
     "  for (int r = 0; r < rows; ++r) { fftw_plan p = fftw_plan_dft_1d(n, in + r * n, out + r * n, FFTW_FORWARD, "
     "FFTW_ESTIMATE); "
     "fftw_execute(p); out[r][0] = 0; fftw_destroy_plan(p); }\n"
     "}\n",
     "loop of fftw_plan_dft_1d calls not fused: the loop body is not one plan of fftw_plan_dft_1d, its execution and "
     "its destruction"},
    {"FftOutputRowsOverlap",
     "void f(fftw_complex* in, fftw_complex* out, int rows) {\n"
     "  for (int r = 0; r < rows; ++r) { fftw_plan p = fftw_plan_dft_1d(64, in + r * 64, out + r * 32, FFTW_FORWARD, "
     "FFTW_ESTIMATE); "
     "fftw_execute(p); fftw_destroy_plan(p); }\n"
     "}\n",
     "loop of fftw_plan_dft_1d calls not fused: the outputs of successive transforms overlap"},
    {"FftPlanReassigned",
     "void f(fftw_complex* in, fftw_complex* out, int n) { fftw_plan plan = fftw_plan_dft_1d(n, in, out, FFTW_FORWARD, "
     "FFTW_ESTIMATE);"
     " plan = fftw_plan_dft_1d(2 * n, in, out, FFTW_FORWARD, FFTW_ESTIMATE);\n"
     "  for (int r = 0; r < 4; ++r) fftw_execute_dft(plan, in + r * n, out + r * n);\n"
     "}\n",
     "loop of fftw_execute_dft calls not fused: the plan 'plan' is assigned after its creation"},
    {"FftBodyDeclaresMore",
     "void f(fftw_complex* a, fftw_complex* b) {\n"
     "  for (int c = 0; c < 8; ++c) { const int n = 16; fftw_plan p = fftw_plan_many_dft(1, &n, 1, a + c, nullptr, 4, "
     "1, b + c, nullptr, 4, 1, "
     "FFTW_FORWARD, FFTW_ESTIMATE); fftw_execute(p); fftw_destroy_plan(p); }\n"
     "}\n",
     "loop of fftw_plan_many_dft calls not fused: the loop body is not one plan of fftw_plan_many_dft, its execution "
     "and its destruction"},
    {"FftInterleavedColumnsOverlap",
     "constexpr int kN = 16; void f(fftw_complex* a, fftw_complex* b) {\n"
     "  for (int c = 0; c < 8; ++c) { fftw_plan p = fftw_plan_many_dft(1, &kN, 1, a + c, nullptr, 4, 1, b + c, "
     "nullptr, 4, 1, "
     "FFTW_FORWARD, FFTW_ESTIMATE); fftw_execute(p); fftw_destroy_plan(p); }\n"
     "}\n",
     "loop of fftw_plan_many_dft calls not fused: the inputs of successive transforms overlap"},
    {"FftSizeNotAVariable",
     "void f(fftw_complex* a, fftw_complex* b) {\n"
     "  for (int c = 0; c < 8; ++c) { fftw_plan p = fftw_plan_many_dft(1, (const int[]){16}, 1, a + c, nullptr, 4, 1, "
     "b + c, nullptr, 4, 1, "
     "FFTW_FORWARD, FFTW_ESTIMATE); fftw_execute(p); fftw_destroy_plan(p); }\n"
     "}\n",
     "loop of fftw_plan_many_dft calls not fused: the transform size is not written '&n'"},
    {"GemmBothOperandsVary",
     "void f(double* A, double* B, double* C) {\n"
     "  for (int b = 0; b < 4; ++b) cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 8, 8, 8, 1.0, A + b * 64, "
     "8, B + b * 64, 8, 0.0, C + b * 64, 8);\n"
     "}\n",
     "loop of cblas_dgemm calls not fused: both 'A + b * 64' and 'B + b * 64' change with the loop, a batch of "
     "independent products"},
    {"GemmBlocksNotStacked",
     "void f(double* A, double* B, double* C) {\n"
     "  for (int b = 0; b < 4; ++b) cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 8, 8, 8, 1.0, A + b * 100, "
     "8, B, 8, 0.0, C + b * 64, 8);\n"
     "}\n",
     "loop of cblas_dgemm calls not fused: the blocks of A are not stacked by rows (each block must start one block "
     "after the previous)"},
    // cuFFT: the include takes a line, so the loops are on line 8.
    {"CufftPlanPassedOn",
     "#include <cufft.h>\nvoid keep(cufftHandle); void f(cufftComplex* a, cufftComplex* b) { cufftHandle p; "
     "cufftPlan1d(&p, 16, CUFFT_C2C, 1); "
     "keep(p);\n"
     "  for (int r = 0; r < 8; ++r) cufftExecC2C(p, a + r * 16, b + r * 16, CUFFT_FORWARD);\n"
     "}\n",
     "loop of cufftExecC2C calls not fused: the plan 'p' is used by other calls than cufftPlan1d, its executions, "
     "cufftSetStream and "
     "cufftDestroy",
     7},
    {"CufftPlanOfBatches",
     "#include <cufft.h>\nvoid f(cufftComplex* a, cufftComplex* b) { cufftHandle p; cufftPlan1d(&p, 16, CUFFT_C2C, "
     "2);\n"
     "  for (int r = 0; r < 8; ++r) cufftExecC2C(p, a + r * 32, b + r * 32, CUFFT_FORWARD);\n"
     "}\n",
     "loop of cufftExecC2C calls not fused: the plan 'p' is not a plan of one transform (its batch is not 1)", 7},
    {"CufftPlanOfAnotherType",
     "#include <cufft.h>\nvoid f(cufftDoubleComplex* a, cufftDoubleComplex* b) { cufftHandle p; cufftPlan1d(&p, 16, "
     "CUFFT_C2C, 1);\n"
     "  for (int r = 0; r < 8; ++r) cufftExecZ2Z(p, a + r * 16, b + r * 16, CUFFT_FORWARD);\n"
     "}\n",
     "loop of cufftExecZ2Z calls not fused: the plan 'p' is not of type CUFFT_Z2Z, which cufftExecZ2Z needs", 7},
    {"CufftOutputRowsOverlap",
     "#include <cufft.h>\nvoid f(cufftComplex* a, cufftComplex* b) { cufftHandle p; cufftPlan1d(&p, 16, CUFFT_C2C, "
     "1);\n"
     "  for (int r = 0; r < 8; ++r) cufftExecC2C(p, a + r * 16, b + r * 8, CUFFT_FORWARD);\n"
     "}\n",
     "loop of cufftExecC2C calls not fused: the outputs of successive transforms overlap", 7},
    {"CufftStreamSetAfterTheLoop",
     "#include <cufft.h>\nvoid f(cufftComplex* a, cufftComplex* b, cudaStream_t s) { cufftHandle p; cufftPlan1d(&p, "
     "16, CUFFT_C2C, 1);\n"
     "  for (int r = 0; r < 8; ++r) cufftExecC2C(p, a + r * 16, b + r * 16, CUFFT_FORWARD);\n"
     "  cufftSetStream(p, s); }\n",
     "loop of cufftExecC2C calls not fused: the plan 'p' is given its stream after the loop", 7},
    {"CufftPlanSizeOutOfScope",
     "#include <cufft.h>\nvoid f(cufftComplex* a, cufftComplex* b) { cufftHandle p; { int m = 16; cufftPlan1d(&p, m, "
     "CUFFT_C2C, 1); }\n"
     "  for (int r = 0; r < 8; ++r) cufftExecC2C(p, a + r * 16, b + r * 16, CUFFT_FORWARD);\n"
     "}\n",
     "loop of cufftExecC2C calls not fused: 'm', used by the plan's creation, is not in scope at the loop", 7},
    {"CufftPlanMadeElsewhere",
     "#include <cufft.h>\nvoid f(cufftHandle p, cufftComplex* a, cufftComplex* b) {\n"
     "  for (int r = 0; r < 8; ++r) cufftExecC2C(p, a + r * 16, b + r * 16, CUFFT_FORWARD);\n"
     "}\n",
     "loop of cufftExecC2C calls not fused: the plan 'p' is not made by one cufftPlan1d in this function", 7},
};

INSTANTIATE_TEST_SUITE_P(Fusion, MissedFusion, ::testing::ValuesIn(kMissed),
                         [](const ::testing::TestParamInfo<Missed>& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------------------
// Options and the bench

TEST(Fusion, NoFusionLeavesEveryLoopAndSaysNothing) {
  const std::string code = "void products() {\n"
                           "  static double A[64 * 64], X[16 * 64], Y[16 * 64];\n"
                           "  for (int j = 0; j < 16; ++j) cblas_dgemv(CblasRowMajor, CblasNoTrans, 64, 64, 1.0, A, "
                           "64, X + j * 64, 1, 0.0, Y + j * 64, 1);\n"
                           "}\n";
  Fusion f = fuse(code, /*fusion=*/false);
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_EQ(f.code, code);
  EXPECT_EQ(remarkCount(f.diagnostics), 0) << f.diagnostics;
}

TEST(Fusion, LoopsWithoutLibraryCallsAreNotCandidates) {
  Fusion f =
      fuse("void f(double* x) { for (int i = 0; i < 8; ++i) x[i] = 0; for (int i = 0; i < 8; i += 2) x[i] = 1; }\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_EQ(remarkCount(f.diagnostics), 0) << f.diagnostics;
}

// An unsigned loop that would not run must not reach the fused call with a wrapped-around count.
TEST(Fusion, TripCountIsCheckedWithoutSubtracting) {
  Fusion f = fuse("void products(const double* A, const double* x, double* y, unsigned first, unsigned last) {\n"
                  "  for (unsigned j = first; j < last; ++j) cblas_dgemv(CblasColMajor, CblasNoTrans, 8, 8, 1.0, A, 8, "
                  "x + j * 8, 1, 0.0, y + j * 8, 1);\n"
                  "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_TRUE(contains(f.code, "  if (last >= first + 1 && (")) << f.code;
  EXPECT_TRUE(contains(
      f.code,
      "{ cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 8, last - first, 8, 1.0, A, 8, x + 8 * first, 8, "
      "0.0, y + 8 * first, 8); } else for"))
      << f.code;
}

// In a CUDA program fusion runs before the CUDA lowering; their edits must not meet, and loops that launch
// kernels are the lowering's.
TEST(Fusion, CudaProgramGetsBothFusionAndLowering) {
  Fusion f = fuse("__global__ void scale(double* y) { y[threadIdx.x] *= 2; }\n"
                  "void products(double* y) {\n"
                  "  static double A[64 * 64], X[16 * 64];\n"
                  "  for (int j = 0; j < 16; ++j) cblas_dgemv(CblasRowMajor, CblasNoTrans, 64, 64, 1.0, A, 64, X + j * "
                  "64, 1, 0.0, y + j * 64, 1);\n"
                  "  for (int j = 0; j < 16; ++j) { cblas_dgemv(CblasRowMajor, CblasNoTrans, 64, 64, 1.0, A, 64, X + j "
                  "* 64, 1, 0.0, y + j * 64, 1); "
                  "scale<<<1, 64>>>(y + j * 64); }\n"
                  "}\n");
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_TRUE(contains(
      f.code,
      "{ cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, 16, 64, 64, 1.0, X, 64, A, 64, 0.0, y, 64); } else for"))
      << f.code;
  EXPECT_TRUE(contains(f.code, "dispar_host")) << f.code;     // the kernel's host clone: the lowering ran
  EXPECT_EQ(remarkCount(f.diagnostics), 1) << f.diagnostics;  // the loop with a launch is not a candidate
}

// bench/fusion measures the code fusion emits: its kernels, compiled through the pass at build time,
// must all fuse.
TEST(Fusion, EveryBenchKernelFuses) {
  std::ifstream in(std::string(DISPAR_SOURCE_DIR) + "/bench/fusion/kernels.dsp");
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_FALSE(text.str().empty());
  Fusion f = fuse(text.str());
  ASSERT_TRUE(f.ok) << f.diagnostics;
  EXPECT_FALSE(contains(f.diagnostics, "[-Rfusion-missed]")) << f.diagnostics;
  EXPECT_EQ(remarkCount(f.diagnostics), 6) << f.diagnostics;
}

}  // namespace
}  // namespace dispar::testing
