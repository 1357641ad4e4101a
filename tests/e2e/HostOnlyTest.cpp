// Host-only builds: with no CUDA toolkit (DISPAR_CUDA_PATH naming a directory without bin/nvcc), disparcc
// parses CUDA programs through its own CUDA prelude, builds them with mpicxx, says so in one warning, and
// the kernels run on the host. Results are checked against values computed here.
#include "Process.h"

#include "dispar_lang/Rtg.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace dispar::testing {
namespace {

const std::string kDisparcc = DISPARCC_PATH;
const std::string kMpiexec = MPIEXEC_PATH;
const std::vector<std::string> kNoToolkit = {"DISPAR_CUDA_PATH=/nonexistent"};

// A CG vnode between two CPU vnodes. Its kernels use static and dynamic shared memory, barriers,
// atomics (int and 64-bit), a __device__ helper, a 2-D grid and a templated kernel; the host side uses
// <cuda_runtime.h>, cudaMalloc (typed and void**), cudaMemcpy, cudaMemset and cudaGetLastError.
constexpr int kFrames = 3;
constexpr int kCount = 1000;
constexpr int kThreads = 128;
constexpr int kBins = 8;
constexpr const char* kProgram = R"(#include <dispar/dispar.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr int kFrames = 3;
constexpr int kCount = 1000;
constexpr int kThreads = 128;
constexpr int kBins = 8;

#define CHECK(call) check((call), #call)
void check(cudaError_t code, const char* call) {
  if (code == cudaSuccess) return;
  std::fprintf(stderr, "%s failed: %s\n", call, cudaGetErrorString(code));
  std::abort();
}

PIPE(int, values);
PIPE(long long, results);

#pragma streamap resource(cpu)
VNODE(source, OUT(values)) {
  std::vector<int> frame(kCount);
  for (int f = 0; f < kFrames; ++f) {
    for (int i = 0; i < kCount; ++i) frame[i] = (i * 7 + f * 13) % 101;
    values.write(frame);
  }
}

// The device math library parses as with a toolkit (min(x, 0) and sqrtf(x * x) - x add nothing).
__device__ int square(int x) { return x * x + min(x, 0) + static_cast<int>(sqrtf(static_cast<float>(x * x))) - x; }

// Sum of squares by a tree reduction in shared memory, and a histogram by atomics; a 2-D grid of blocks.
__global__ void reduce(const int* in, int n, unsigned long long* total, int* bins) {
  __shared__ int partial[kThreads];
  int block = blockIdx.y * gridDim.x + blockIdx.x;
  int i = block * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? square(in[i]) : 0;
  if (i < n) atomicAdd(&bins[in[i] % kBins], 1);
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(total, (unsigned long long)partial[0]);
}

// Reverses each block's slice through dynamic shared memory.
template <typename T>
__global__ void reverseBlocks(const T* in, T* out, int n) {
  extern __shared__ T slice[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) slice[threadIdx.x] = in[i];
  __syncthreads();
  int from = blockDim.x - 1 - threadIdx.x;
  int source = blockIdx.x * blockDim.x + from;
  if (i < n && source < n) out[i] = slice[from];
  if (i < n && source >= n) out[i] = -1;
}

VNODE(gpu, IN(values), OUT(results)) {
  std::vector<int> frame;
  int* in = nullptr;
  int* reversed = nullptr;
  unsigned long long* total = nullptr;
  int* bins = nullptr;
  CHECK(cudaMalloc(reinterpret_cast<void**>(&in), kCount * sizeof(int)));
  CHECK(cudaMalloc(&reversed, kCount * sizeof(int)));
  CHECK(cudaMalloc(&total, sizeof(unsigned long long)));
  CHECK(cudaMalloc(&bins, kBins * sizeof(int)));
  while (values.read(frame)) {
    CHECK(cudaMemcpy(in, frame.data(), kCount * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(total, 0, sizeof(unsigned long long)));
    CHECK(cudaMemset(bins, 0, kBins * sizeof(int)));
    dim3 grid(4, 2);  // 8 blocks of kThreads cover kCount
    reduce<<<grid, kThreads>>>(in, kCount, total, bins);
    CHECK(cudaGetLastError());
    int blocks = (kCount + kThreads - 1) / kThreads;
    reverseBlocks<int><<<blocks, kThreads, kThreads * sizeof(int)>>>(in, reversed, kCount);
    CHECK(cudaGetLastError());

    unsigned long long sum = 0;
    std::vector<int> binCounts(kBins), back(kCount);
    CHECK(cudaMemcpy(&sum, total, sizeof sum, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(binCounts.data(), bins, kBins * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(back.data(), reversed, kCount * sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<long long> result = {static_cast<long long>(sum)};
    for (int count : binCounts) result.push_back(count);
    for (int v : back) result.push_back(v);
    results.write(result);
  }
  CHECK(cudaFree(in));
  CHECK(cudaFree(reversed));
  CHECK(cudaFree(total));
  CHECK(cudaFree(bins));
}

#pragma streamap resource(cpu)
VNODE(sink, IN(results)) {
  std::vector<long long> result;
  int frame = 0;
  while (results.read(result)) {
    std::printf("frame %d:", frame++);
    for (long long v : result) std::printf(" %lld", v);
    std::printf("\n");
  }
}
)";

// What the sink prints for kProgram, computed on the CPU.
std::string expectedOutput() {
  std::ostringstream out;
  for (int f = 0; f < kFrames; ++f) {
    std::vector<int> frame(kCount);
    for (int i = 0; i < kCount; ++i) frame[i] = (i * 7 + f * 13) % 101;
    long long sum = 0;
    std::vector<long long> bins(kBins);
    for (int v : frame) {
      sum += static_cast<long long>(v) * v;
      ++bins[v % kBins];
    }
    out << "frame " << f << ": " << sum;
    for (long long count : bins) out << " " << count;
    for (int i = 0; i < kCount; ++i) {
      int block = i / kThreads, from = kThreads - 1 - i % kThreads, source = block * kThreads + from;
      out << " " << (source < kCount ? frame[source] : -1);
    }
    out << "\n";
  }
  return out.str();
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class HostOnly : public ::testing::Test {
 protected:
  // A DISPAR_CUDA_PATH inherited from the environment would come before ours in the child's.
  void SetUp() override { unsetenv("DISPAR_CUDA_PATH"); }

  ProcessResult compile(std::vector<std::string> args) {
    args.insert(args.begin(), kDisparcc);
    return runProcess(args, dir_.path(), kNoToolkit);
  }
  ProcessResult mpirun(int ranks, const std::string& program) {
    return runProcess({kMpiexec, "-launcher", "fork", "-n", std::to_string(ranks), program}, dir_.path());
  }
  /// Builds tests/e2e/cuda/NAME.dsp, runs it on `ranks` ranks, expects its sink's "NAME: ok".
  void expectProgramPasses(const std::string& name, int ranks) {
    dir_.write(name + ".dsp", readFile(std::string(DISPAR_SOURCE_DIR) + "/tests/e2e/cuda/" + name + ".dsp"));
    ProcessResult built = compile({name + ".dsp", "-o", name});
    ASSERT_EQ(built.status, 0) << built.output;
    ProcessResult run = mpirun(ranks, "./" + name);
    ASSERT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find(name + ": ok"), std::string::npos) << run.output;
  }
  lang::Rtg readRtg(const std::string& name) {
    lang::Rtg rtg;
    std::string error;
    EXPECT_TRUE(lang::parseRtgJson(readFile(dir_.file(name)), rtg, error)) << error;
    return rtg;
  }

  ScratchDir dir_;
};

TEST_F(HostOnly, CudaProgramBuildsWithOneWarningAndRunsItsKernelsOnTheHost) {
  dir_.write("app.dsp", kProgram);
  ProcessResult built = compile({"app.dsp", "-o", "app", "--emit-cpp", "app.gen.cpp"});
  ASSERT_EQ(built.status, 0) << built.output;
  std::vector<std::string> lines = linesOf(built.output);
  ASSERT_EQ(lines.size(), 1u) << built.output;
  EXPECT_NE(lines[0].find("disparcc: warning: no CUDA toolkit found"), std::string::npos) << built.output;

  lang::Rtg rtg = readRtg("app.rtg.json");
  EXPECT_TRUE(rtg.cudaArchs.empty());
  ASSERT_EQ(rtg.vertices.size(), 3u);
  EXPECT_EQ(rtg.vertices[0].type, lang::Requirement::CO);
  EXPECT_EQ(rtg.vertices[1].vnode, "gpu");
  EXPECT_EQ(rtg.vertices[1].type, lang::Requirement::CG);
  EXPECT_EQ(rtg.vertices[2].type, lang::Requirement::CO);

  // The kernels were replaced by their host clones, with every CUDA builtin rewritten.
  std::string generated = readFile(dir_.file("app.gen.cpp"));
  EXPECT_EQ(generated.find("<<<"), std::string::npos);
  EXPECT_EQ(generated.find("__syncthreads"), std::string::npos);
  EXPECT_EQ(generated.find("__shared__"), std::string::npos);
  EXPECT_NE(generated.find("::dispar::hostk::launchThreadLoops(grid, kThreads, 0, &::dispar_host::reduce"),
            std::string::npos)
      << generated;
  EXPECT_NE(generated.find("&::dispar_host::reverseBlocks<int>"), std::string::npos);
  EXPECT_NE(generated.find("::dispar::hostk::atomicAdd(&bins"), std::string::npos);
  EXPECT_NE(generated.find("::dispar::hostk::dynamicShared<T>()"), std::string::npos);

  ProcessResult run = mpirun(3, "./app");
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(run.output, expectedOutput());
}

// A vnode that only calls the runtime API (no kernel) is still CG, as with a toolkit.
TEST_F(HostOnly, RuntimeApiCallsAloneMakeAVnodeCg) {
  dir_.write("copy.dsp", R"(#include <dispar/dispar.h>
#include <cuda_runtime.h>
#include <cstdio>
PIPE(double, numbers);
VNODE(producer, OUT(numbers)) { for (int i = 1; i <= 100; ++i) numbers.write(0.5 * i); }
VNODE(staging, IN(numbers)) {
  double* device = nullptr;
  if (cudaMalloc(&device, sizeof(double)) != cudaSuccess) return;
  double v, back, sum = 0;
  while (numbers.read(v)) {
    cudaMemcpy(device, &v, sizeof v, cudaMemcpyHostToDevice);
    cudaMemcpy(&back, device, sizeof v, cudaMemcpyDeviceToHost);
    sum += back;
  }
  cudaFree(device);
  std::printf("sum=%.1f\n", sum);
}
)");
  ProcessResult built = compile({"copy.dsp", "-o", "copy"});
  ASSERT_EQ(built.status, 0) << built.output;
  EXPECT_EQ(linesOf(built.output).size(), 1u) << built.output;
  lang::Rtg rtg = readRtg("copy.rtg.json");
  ASSERT_EQ(rtg.vertices.size(), 2u);
  EXPECT_EQ(rtg.vertices[0].type, lang::Requirement::CO);
  EXPECT_EQ(rtg.vertices[1].type, lang::Requirement::CG);
  ProcessResult run = mpirun(2, "./copy");
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(run.output, "sum=2525.0\n");
}

// The host-path diagnostics work without a toolkit (warp functions are known, and reported, rather than
// undeclared), and a rejected program leaves no files behind.
TEST_F(HostOnly, HostPathDiagnosticsAreReported) {
  dir_.write("bad.dsp", R"(#include <dispar/dispar.h>
__global__ void scale(float* data) { asm volatile("membar.gl;"); data[threadIdx.x] *= 2; }
__global__ void shuffle(float* data) { if (threadIdx.x == 0) __nanosleep(100); }
PIPE(int, a);
VNODE(producer, OUT(a)) { a.write(1); }
VNODE(consumer, IN(a)) {
  int v;
  float* d = nullptr;
  while (a.read(v)) {
    scale<<<1, 4>>>(d);
    shuffle<<<1, 32>>>(d);
  }
}
)");
  ProcessResult built = compile({"bad.dsp", "-o", "bad"});
  EXPECT_EQ(built.status, 1) << built.output;
  EXPECT_NE(built.output.find("bad.dsp:2:38: error: inline PTX cannot run on the host path"), std::string::npos)
      << built.output;
  EXPECT_NE(built.output.find("bad.dsp:3:62: error: timed sleeps cannot run on the host path"), std::string::npos)
      << built.output;
  EXPECT_EQ(runProcess({"ls", "-A", dir_.path()}).output, "bad.dsp\n");
}

// tests/e2e/cuda/constructs.dsp without a toolkit: vector types, cooperative groups and the symbol API
// come from the host path's own headers.
TEST_F(HostOnly, RealCudaConstructsMatchTheCpu) { expectProgramPasses("constructs", 3); }

// tests/e2e/cuda/idioms.dsp without a toolkit.
TEST_F(HostOnly, RealCudaIdiomsMatchTheCpu) { expectProgramPasses("idioms", 3); }

// The thread-loop shapes of tests/e2e/cuda/shapes.dsp, built without a toolkit.
TEST_F(HostOnly, ThreadLoopShapesMatchTheCpu) { expectProgramPasses("shapes", 3); }

// A CUDA error is Clang's error, at the user's line, not an error inside the prelude.
TEST_F(HostOnly, CudaErrorsPointAtTheProgram) {
  dir_.write("typo.dsp", R"(#include <dispar/dispar.h>
__global__ void k(int* p) { p[threadIdx.x] = __synchthreads(); }
PIPE(int, a);
VNODE(producer, OUT(a)) { a.write(1); }
VNODE(consumer, IN(a)) { int v; while (a.read(v)) k<<<1, 1>>>(nullptr); }
)");
  ProcessResult built = compile({"typo.dsp", "-o", "typo"});
  EXPECT_EQ(built.status, 1) << built.output;
  EXPECT_NE(built.output.find("typo.dsp:2:46: error: use of undeclared identifier '__synchthreads'"), std::string::npos)
      << built.output;
  EXPECT_EQ(built.output.find("dispar_cuda_parse.h"), std::string::npos) << built.output;
}

}  // namespace
}  // namespace dispar::testing
