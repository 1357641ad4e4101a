// cuBLAS and cuFFT in a GPU vnode, end to end (tests/e2e/cuda/libraries.dsp): compiled by the real
// disparcc, run under mpiexec, every printed value recomputed here. With the toolkit the program is the
// nvcc build whose calls go through ::dispar::gpu (the host stand-ins on this GPU-less rank); without it
// (DISPAR_CUDA_PATH=/nonexistent) the host-only build, where the toolkit's headers are DISPAR's.
#include "CudaTestSettings.h"
#include "Process.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <complex>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace dispar::testing {
namespace {

// The program's constants.
constexpr int kFrames = 2;
constexpr int kM = 5, kN = 4, kK = 3, kLda = 7;
constexpr int kFft = 8, kBatch = 3;
constexpr int kFrameSize = kLda * kK + kK * kN + kFft * kBatch;

std::vector<double> frameValues(int f) {
  std::vector<double> frame(kFrameSize);
  for (int i = 0; i < kFrameSize; ++i) frame[i] = std::sin(0.37 * i + 1.3 * f) + 0.25 * ((i * 7 + f) % 5);
  return frame;
}

// What the compute vnode sends for one frame, computed with plain loops and a naive DFT.
std::vector<double> expectedResults(int f) {
  const std::vector<double> in = frameValues(f);
  const auto a = [&](int i, int j) { return in[i + j * kLda]; };
  const auto b = [&](int i, int j) { return in[kLda * kK + i + j * kK]; };
  std::vector<double> out, c(kM * kN), y(kM);
  for (int j = 0; j < kN; ++j)
    for (int i = 0; i < kM; ++i) {
      double sum = 0;
      for (int l = 0; l < kK; ++l) sum += a(i, l) * b(l, j);
      c[i + j * kM] = 2 * sum;
    }
  out.insert(out.end(), c.begin(), c.end());
  for (int i = 0; i < kM; ++i) {
    double sum = 0;
    for (int l = 0; l < kK; ++l) sum += a(i, l) * b(l, 0);
    y[i] = sum + 0.5 * c[i];
  }
  out.insert(out.end(), y.begin(), y.end());
  double dot = 0, norm = 0, largest = -1;
  int largestAt = 0;
  for (int i = 0; i < kM; ++i) {
    dot += y[i] * c[kM + i];
    norm += y[i] * y[i];
    if (std::fabs(y[i]) > largest) {
      largest = std::fabs(y[i]);
      largestAt = i + 1;
    }
  }
  out.insert(out.end(), {dot, std::sqrt(norm), double(largestAt)});
  const double pi = std::acos(-1.0);
  const int signal = kLda * kK + kK * kN;
  const auto dft = [&](int row, int k) {
    std::complex<double> sum = 0;
    for (int t = 0; t < kFft; ++t) sum += in[signal + row * kFft + t] * std::polar(1.0, -2 * pi * k * t / kFft);
    return sum;
  };
  for (int row = 0; row < kBatch; ++row)
    for (int k = 0; k < kFft; ++k) out.insert(out.end(), {dft(row, k).real(), dft(row, k).imag()});
  for (int k = 0; k <= kFft / 2; ++k) out.insert(out.end(), {dft(0, k).real(), dft(0, k).imag()});
  return out;
}

void expectProgramOutput(const std::string& output) {
  std::map<int, std::map<int, double>> printed;  // frame -> index -> value
  std::istringstream lines(output);
  std::string word;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    int frame = 0, index = 0;
    double value = 0;
    if (fields >> word >> frame >> index >> value && word == "libraries") printed[frame][index] = value;
  }
  ASSERT_EQ(printed.size(), static_cast<std::size_t>(kFrames)) << output;
  for (int f = 0; f < kFrames; ++f) {
    const std::vector<double> expected = expectedResults(f);
    ASSERT_EQ(printed[f].size(), expected.size()) << output;
    for (std::size_t i = 0; i < expected.size(); ++i)
      EXPECT_NEAR(printed[f][static_cast<int>(i)], expected[i], 1e-9 * (1 + std::fabs(expected[i])))
          << "frame " << f << " value " << i;
  }
}

ProcessResult build(const ScratchDir& dir, const std::vector<std::string>& env) {
  dir.write("libraries.dsp", readFile(kSourceDir + "/tests/e2e/cuda/libraries.dsp"));
  std::vector<std::string> args = {kDisparcc, "libraries.dsp", "-o", "libraries"};
  if (kHaveCuda && env.empty()) args.insert(args.end(), {"--cuda-arch", "sm_90"});
  return runProcess(args, dir.path(), env, 300);
}

// Traced (docs/runtime.md, "Run traces"): every cuBLAS and cuFFT call is a span on its instance's
// device track.
ProcessResult run(const ScratchDir& dir) {
  return runProcess({kMpiexec, "-launcher", "fork", "-n", "3", "./libraries"}, dir.path(),
                    {"DISPAR_TRACE=" + dir.file("trace.json")});
}

void expectLibraryCallsTraced(const ScratchDir& dir) {
  const nlohmann::json trace = nlohmann::json::parse(readFile(dir.file("trace.json")));
  std::map<std::string, int> calls;
  for (const auto& event : trace["traceEvents"])
    if (event["ph"] == "X" && event.value("cat", "") == "library") ++calls[event["name"].get<std::string>()];
  // Per frame: one gemm, one Z2Z and one D2Z execution (kFrames frames).
  EXPECT_EQ(calls["cublasDgemm"], kFrames);
  EXPECT_EQ(calls["cufftExecZ2Z"], kFrames);
  EXPECT_EQ(calls["cufftExecD2Z"], kFrames);
  EXPECT_EQ(calls["cublasCreate"], 1);
}

TEST(LibraryEndToEnd, CublasAndCufftOnTheHostPathMatchTheReference) {
  ScratchDir dir;
  ProcessResult built = build(dir, {});
  ASSERT_EQ(built.status, 0) << built.output;
  ProcessResult result = run(dir);
  ASSERT_EQ(result.status, 0) << result.output;
  expectProgramOutput(result.output);
  expectLibraryCallsTraced(dir);
}

TEST(LibraryEndToEnd, HostOnlyBuildWithoutToolkitMatchesTheReference) {
  ScratchDir dir;
  ProcessResult built = build(dir, {"DISPAR_CUDA_PATH=/nonexistent"});
  ASSERT_EQ(built.status, 0) << built.output;
  ProcessResult result = run(dir);
  ASSERT_EQ(result.status, 0) << result.output;
  expectProgramOutput(result.output);
  expectLibraryCallsTraced(dir);
}

// A call the stand-ins do not cover stays a compile-time error naming it, where it is written (with the
// toolkit: a cuBLAS call whose name cublas_v2.h turns into its _v2 symbol, named as the user wrote it;
// without: a name DISPAR's cublas_v2.h does not declare).
TEST(LibraryEndToEnd, UnsupportedLibraryCallIsACompileTimeError) {
  ScratchDir dir;
  dir.write("rotg.dsp", R"(#include <dispar/dispar.h>
#include <cublas_v2.h>
PIPE(float, values);
#pragma streamap resource(gpu)
VNODE(rotate, OUT(values)) {
  cublasHandle_t handle;
  cublasCreate(&handle);
  float a = 1, b = 2, c, s;
  cublasSrotg(handle, &a, &b, &c, &s);
  values.write(std::vector<float>{c, s});
}
#pragma streamap resource(cpu)
VNODE(sink, IN(values)) { std::vector<float> v; while (values.read(v)) {} }
)");
  ProcessResult built = runProcess({kDisparcc, "rotg.dsp", "-o", "rotg"}, dir.path(), {}, 300);
  EXPECT_NE(built.status, 0);
  const std::string expected = kHaveCuda ? "rotg.dsp:9:3: error: 'cublasSrotg' cannot run on the host path"
                                         : "rotg.dsp:9:3: error: use of undeclared identifier 'cublasSrotg'";
  EXPECT_NE(built.output.find(expected), std::string::npos) << built.output;
  EXPECT_FALSE(fileExists(dir.file("rotg")));
}

// examples/stap: GPU vnodes on cuFFT and cuBLAS (host stand-ins here), CPU vnodes whose glue loops are
// fused. Built with fusion and with -fno-fusion: both find the injected target in every CPI (where the
// radar vnode puts it), and their outputs agree.
TEST(LibraryEndToEnd, StapFindsTheTargetFusedOrNot) {
  ScratchDir dir;
  dir.write("stap.dsp", readFile(kSourceDir + "/examples/stap/stap.dsp"));
  ProcessResult fused = runProcess({kDisparcc, "stap.dsp", "-o", "fused", "-Rfusion"}, dir.path(), {}, 300);
  ASSERT_EQ(fused.status, 0) << fused.output;
  EXPECT_NE(fused.output.find("into one fftw_plan_many_dft"), std::string::npos) << fused.output;
  EXPECT_NE(fused.output.find("fused 16 calls of cblas_zgemv into one cblas_zgemm"), std::string::npos) << fused.output;
  ProcessResult unfused = runProcess({kDisparcc, "stap.dsp", "-o", "unfused", "-fno-fusion"}, dir.path(), {}, 300);
  ASSERT_EQ(unfused.status, 0) << unfused.output;
  const int cpis = 2;
  ProcessResult a = runProcess({kMpiexec, "-launcher", "fork", "-n", "7", "./fused", std::to_string(cpis)}, dir.path());
  ProcessResult b =
      runProcess({kMpiexec, "-launcher", "fork", "-n", "7", "./unfused", std::to_string(cpis)}, dir.path());
  ASSERT_EQ(a.status, 0) << a.output;
  ASSERT_EQ(b.status, 0) << b.output;
  for (int cpi = 0; cpi < cpis; ++cpi)
    EXPECT_NE(a.output.find("stap: cpi " + std::to_string(cpi) + " target at doppler 11 beam 5 range 1300 "),
              std::string::npos)
        << a.output;
  // Same detections; total powers equal to 9 digits (the fused products sum in another order).
  std::istringstream fusedLines(a.output), unfusedLines(b.output);
  int lines = 0;
  for (std::string x, y; std::getline(fusedLines, x) && std::getline(unfusedLines, y); ++lines) {
    EXPECT_EQ(x.substr(0, x.find(" (power")), y.substr(0, y.find(" (power"))) << x << "\n" << y;
    const double px = std::stod(x.substr(x.rfind(' ') + 1)), py = std::stod(y.substr(y.rfind(' ') + 1));
    EXPECT_NEAR(px, py, 1e-8 * py);
  }
  EXPECT_EQ(lines, cpis);
}

}  // namespace
}  // namespace dispar::testing
