// CUDA VNODEs end to end: .dsp programs with kernels compiled by the real disparcc (nvcc when the
// toolkit is there) and run under mpiexec. Every result is checked against a CPU computation done
// here, independently of the program. Without a GPU every CG rank runs its kernels' host clones.
#include "CudaTestSettings.h"
#include "Process.h"

#include "dispar_lang/Rtg.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <regex>
#include <sstream>
#include <vector>

namespace dispar::testing {
namespace {

// Compiles `source` (a path under the source tree) in `dir`; one architecture keeps nvcc fast.
ProcessResult compileCuda(const ScratchDir& dir, const std::string& source, const std::string& name) {
  dir.write(name + ".dsp", readFile(kSourceDir + "/" + source));
  std::vector<std::string> args = {kDisparcc, name + ".dsp", "-o", name};
  if (kHaveCuda) args.insert(args.end(), {"--cuda-arch", "sm_90"});
  return runProcess(args, dir.path(), {}, 300);
}

ProcessResult mpirun(const ScratchDir& dir, int ranks, const std::vector<std::string>& program,
                     const std::vector<std::string>& env = {}) {
  std::vector<std::string> args = {kMpiexec, "-launcher", "fork", "-n", std::to_string(ranks)};
  args.insert(args.end(), program.begin(), program.end());
  return runProcess(args, dir.path(), env);
}

// --- FIR: the same signal and taps as examples/fir/fir.dsp, convolved in double precision here ---

constexpr int kFirTaps = 32;

double firSignal(long n) {
  return float(std::sin(0.013 * n) + 0.5 * std::sin(0.37 * n) + 0.1 * (double((n * 7919) % 101) / 101.0 - 0.5));
}

std::vector<double> firTaps() {
  const double pi = std::acos(-1.0);
  std::vector<double> taps(kFirTaps);
  for (int k = 0; k < kFirTaps; ++k) {
    double m = k - (kFirTaps - 1) / 2.0;
    double sinc = m == 0 ? 0.2 : std::sin(0.2 * pi * m) / (pi * m);
    taps[k] = float(sinc * (0.54 - 0.46 * std::cos(2 * pi * k / (kFirTaps - 1))));
  }
  return taps;
}

struct FirSums {
  double sum = 0, sumOfMagnitudes = 0;
};

FirSums firReference(long samples) {
  const std::vector<double> taps = firTaps();
  FirSums sums;
  for (long n = 0; n < samples; ++n) {
    double y = 0;
    for (int k = 0; k < kFirTaps && k <= n; ++k) y += taps[k] * firSignal(n - k);
    sums.sum += y;
    sums.sumOfMagnitudes += std::fabs(y);
  }
  return sums;
}

TEST(CudaEndToEnd, FirExampleIsTheConvolutionOfTheWholeSignal) {
  ScratchDir dir;
  ProcessResult built = compileCuda(dir, "examples/fir/fir.dsp", "fir");
  ASSERT_EQ(built.status, 0) << built.output;

  lang::Rtg rtg;
  std::string error;
  ASSERT_TRUE(lang::parseRtgJson(readFile(dir.file("fir.rtg.json")), rtg, error)) << error;
  ASSERT_EQ(rtg.vertices.size(), 4u);
  EXPECT_EQ(rtg.vertices[1].vnode, "fir");
  EXPECT_EQ(rtg.vertices[1].type, lang::Requirement::CG);
  EXPECT_EQ(rtg.vertices[2].type, lang::Requirement::CG);
  EXPECT_EQ(rtg.vertices[3].type, lang::Requirement::CO);
  if (kHaveCuda) {
    EXPECT_EQ(rtg.cudaArchs, std::vector<std::string>{"sm_90"});
  }

  // 13 frames of 5000 samples: odd frame counts per replica and partial blocks in every frame.
  const std::vector<std::string> program = {"./fir", "13", "5000"};
  const FirSums expected = firReference(13L * 5000);
  auto check = [&](const ProcessResult& run) {
    std::smatch match;
    EXPECT_TRUE(
        std::regex_search(run.output, match, std::regex(R"(frames=(\d+) max_error=(\S+) checksum=(-?[0-9.]+))")))
        << run.output;
    if (match.empty()) return std::string();
    EXPECT_EQ(match[1], "13");
    EXPECT_LT(std::stod(match[2]), 1e-4);
    EXPECT_NEAR(std::stod(match[3]), expected.sum, 1e-6 * expected.sumOfMagnitudes) << run.output;
    return match[0].str();
  };
  ProcessResult run = mpirun(dir, 4, program, {"DISPAR_VERBOSE=1"});
  ASSERT_EQ(run.status, 0) << run.output;
  const std::string line = check(run);

  // Forced onto the host path: the same results, and the same output when the first run took the host
  // path too (always on a machine without a GPU; a GPU's fused multiply-adds may change the last digits).
  ProcessResult onHost = mpirun(dir, 4, program, {"DISPAR_DEVICE=host", "DISPAR_VERBOSE=1"});
  ASSERT_EQ(onHost.status, 0) << onHost.output;
  EXPECT_EQ(onHost.output.find("': GPU "), std::string::npos) << onHost.output;
  const std::string hostLine = check(onHost);
  if (run.output.find("': GPU ") == std::string::npos) {
    EXPECT_EQ(hostLine, line);
  }

  ProcessResult bad = mpirun(dir, 4, {"./fir", "-3"});
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.output.find("vnode 'source'"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("argument 1 must be a number from 1 to 2^28, got '-3'"), std::string::npos) << bad.output;
}

// --- kernels.dsp: each kernel's result against the same computation on the CPU ---

constexpr int kCount = 65536 + 123;

std::vector<long long> inputs() {
  std::vector<long long> values(kCount);
  for (int i = 0; i < kCount; ++i) values[i] = (std::uint32_t(i) * 2654435761u >> 7) % 1000u;
  return values;
}

std::map<int, std::vector<long long>> parseResults(const std::string& output) {
  std::map<int, std::vector<long long>> results;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("result ", 0) != 0) continue;
    std::istringstream fields(line.substr(7));
    int tag;
    char colon;
    fields >> tag >> colon;
    std::vector<long long>& values = results[tag];
    for (long long v; fields >> v;) values.push_back(v);
  }
  return results;
}

class CudaKernels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir;
    built_ = new ProcessResult(compileCuda(*dir_, "tests/e2e/cuda/kernels.dsp", "kernels"));
  }
  static void TearDownTestSuite() {
    delete built_;
    delete dir_;
  }
  void SetUp() override { ASSERT_EQ(built_->status, 0) << built_->output; }

  static ScratchDir* dir_;
  static ProcessResult* built_;
};
ScratchDir* CudaKernels::dir_ = nullptr;
ProcessResult* CudaKernels::built_ = nullptr;

TEST_F(CudaKernels, EveryKernelMatchesTheCpu) {
  ProcessResult run = mpirun(*dir_, 3, {"./kernels"});
  ASSERT_EQ(run.status, 0) << run.output.substr(0, 4000);
  std::map<int, std::vector<long long>> results = parseResults(run.output);
  const std::vector<long long> in = inputs();

  SCOPED_TRACE("block reduction");
  long long total = 0;
  for (long long v : in) total += v;
  EXPECT_EQ(results[1], (std::vector<long long>{total, (kCount + 255) / 256}));

  SCOPED_TRACE("histograms");
  std::vector<long long> bins(64 + 16, 0);
  for (long long v : in) {
    ++bins[v % 64];
    ++bins[64 + v % 16];
  }
  EXPECT_EQ(results[2], bins);

  SCOPED_TRACE("transpose");
  const int rows = 70, cols = 45;
  std::vector<long long> transposed(rows * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) transposed[c * rows + r] = r * 1000 + c;
  EXPECT_EQ(results[3], transposed);

  SCOPED_TRACE("3-D index map");
  const int width = 8 * 3, height = 4 * 5, depth = 2 * 7;
  std::vector<long long> map;
  for (int z = 0; z < depth; ++z)
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) map.push_back(x + 100 * y + 10000 * z);
  EXPECT_EQ(results[4], map);

  SCOPED_TRACE("dynamic shared memory");
  const int slice = 96;
  std::vector<long long> reversed;
  for (int b = 0; b < kCount / slice; ++b)
    for (int t = 0; t < slice; ++t) reversed.push_back(in[b * slice + slice - 1 - t]);
  EXPECT_EQ(results[5], reversed);

  SCOPED_TRACE("__device__ helper");
  std::vector<long long> squares;
  for (long long v : in) squares.push_back(std::min(v * v, 500000LL));
  EXPECT_EQ(results[6], squares);

  SCOPED_TRACE("templated kernel");
  std::vector<long long> scaled;
  for (long long v : in) scaled.push_back(v * 3);  // (v * 3 / 4) * 4, exact in double
  EXPECT_EQ(results[7], scaled);

  SCOPED_TRACE("windowed sums (thread loops on the host path)");
  std::vector<long long> windows;
  for (int i = 0; i < kCount; ++i) {
    long long sum = 0;
    for (int k = 0; k < 3; ++k) sum += i + k < kCount ? in[i + k] : 0;
    windows.push_back(sum * 10 + i % 7);
  }
  EXPECT_EQ(results[8], windows);

  SCOPED_TRACE("templated reduction (thread loops on the host path)");
  std::vector<long long> distances;
  for (int i = 0; i < kCount; ++i) {
    const int first = i / 128 * 128, last = std::min(first + 128, kCount);
    distances.push_back(*std::max_element(in.begin() + first, in.begin() + last) - in[i]);
  }
  EXPECT_EQ(results[9], distances);
  EXPECT_EQ(results.size(), 9u);
}

TEST_F(CudaKernels, HostPathGivesTheSameOutput) {
  ProcessResult run = mpirun(*dir_, 3, {"./kernels"});
  ProcessResult onHost = mpirun(*dir_, 3, {"./kernels"}, {"DISPAR_DEVICE=host"});
  ASSERT_EQ(run.status, 0) << run.output.substr(0, 4000);
  ASSERT_EQ(onHost.status, 0) << onHost.output.substr(0, 4000);
  EXPECT_EQ(parseResults(onHost.output), parseResults(run.output));
  EXPECT_EQ(parseResults(onHost.output).size(), 9u);
}

TEST_F(CudaKernels, FailedLaunchAbortsNamingTheVnodeAndKernel) {
  ProcessResult run = mpirun(*dir_, 3, {"./kernels", "fail"});
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.output.find("vnode 'gpu'"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("kernel 'neverRuns' launched at kernels.dsp:"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("invalid configuration argument"), std::string::npos) << run.output;
}

// CUDA as real code writes it (tests/e2e/cuda/constructs.dsp): namespaces, argument-dependent lookup,
// __device__ members and constructors, builtins in macros, __constant__ / __device__ variables and
// the symbol API, a __shared__ tile declared in a loop, warps and cooperative groups. With the toolkit
// this is the nvcc build, whose host clones run here.
TEST(CudaEndToEnd, RealCudaConstructsMatchTheCpu) {
  ScratchDir dir;
  ProcessResult built = compileCuda(dir, "tests/e2e/cuda/constructs.dsp", "constructs");
  ASSERT_EQ(built.status, 0) << built.output;
  ProcessResult run = mpirun(dir, 3, {"./constructs"});
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("constructs: ok"), std::string::npos) << run.output;
}

// The code around real kernels (tests/e2e/cuda/idioms.dsp): launches in host templates, as macro
// arguments, over several lines, with default and NULL arguments; prototypes, explicit instantiations,
// templates taking tiles, warp-aggregated atomics, printf and assert in kernels.
TEST(CudaEndToEnd, RealCudaIdiomsMatchTheCpu) {
  ScratchDir dir;
  ProcessResult built = compileCuda(dir, "tests/e2e/cuda/idioms.dsp", "idioms");
  ASSERT_EQ(built.status, 0) << built.output;
  ProcessResult run = mpirun(dir, 3, {"./idioms"});
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("idioms: kernel printf from block 0"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("idioms: ok"), std::string::npos) << run.output;
}

// Barriers in the places thread loops now reach (a branch on a uniform local, a uniform break, the
// block's cooperative-groups barriers, a macro-initialised local, locals changed between barriers, a
// bounded segment): every kernel gets
// the thread-loop form and every value matches the CPU (checked in the program's sink).
TEST(CudaEndToEnd, ThreadLoopShapesMatchTheCpu) {
  ScratchDir dir;
  dir.write("shapes.dsp", readFile(kSourceDir + "/tests/e2e/cuda/shapes.dsp"));
  std::vector<std::string> args = {kDisparcc, "shapes.dsp", "-o", "shapes", "--emit-cpp", "shapes.gen.cpp"};
  if (kHaveCuda) args.insert(args.end(), {"--cuda-arch", "sm_90"});
  ProcessResult built = runProcess(args, dir.path(), {}, 300);
  ASSERT_EQ(built.status, 0) << built.output;
  const std::string generated = readFile(dir.file("shapes.gen.cpp"));
  for (const char* kernel :
       {"uniformBranch", "uniformBreak", "groupBarriers", "macroLocal", "changingLocals", "treeSum"})
    EXPECT_NE(generated.find(std::string("// kernel '") + kernel + "': thread loops"), std::string::npos) << kernel;
  // changingLocals: `step *= 2;` runs once per block; `extra`, which some threads change alone, is per thread.
  EXPECT_NE(generated.find("step *= 2; "), std::string::npos) << generated;
  EXPECT_NE(generated.find("::dispar::hostk::PerThread<int> dispar_carried_extra; "), std::string::npos) << generated;
  EXPECT_EQ(generated.find("dispar_carried_step"), std::string::npos) << generated;
  ProcessResult run = mpirun(dir, 3, {"./shapes"});
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("shapes: ok"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace dispar::testing
