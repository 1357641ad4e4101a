// One small CUDA program per construct the host path cannot run: each must be rejected at the
// construct's line and column when kernels may run on the host, and accepted with --no-host-path
// (CudaTarget::GpuOnly), where the kernels only ever run on a GPU.
#include "FrontendTestSupport.h"

#include <gtest/gtest.h>

namespace dispar::testing {
namespace {

struct UnsupportedCase {
  const char* name;
  const char* kernels;   // line 1 is "#include <dispar/dispar.h>"; a GPU vnode launching `kernel` follows
  const char* expected;  // "LINE:COL: error: ..." (a substring of the diagnostics)
};

constexpr const char* kPrelude = "#include <dispar/dispar.h>\n";
constexpr const char* kVnode =
    "#pragma streamap resource(gpu)\n"
    "VNODE(worker) { kernel<<<1, 32>>>(nullptr); }\n";

const UnsupportedCase kCases[] = {
    {"WarpShuffle",
     "__global__ void kernel(float* x) {\n"
     "  float v = __shfl_down_sync(0xffffffffu, x[threadIdx.x], 1);\n"
     "  x[threadIdx.x] = v;\n"
     "}\n",
     "3:13: error: warp shuffles cannot run on the host path; the host path has no warps or texture units"},
    {"WarpVote",
     "__global__ void kernel(int* x) {\n"
     "  unsigned mask = __ballot_sync(0xffffffffu, x[threadIdx.x] > 0);\n"
     "  x[threadIdx.x] = int(mask);\n"
     "}\n",
     "3:19: error: warp votes cannot run on the host path; the host path has no warps or texture units"},
    {"Texture",
     "__global__ void kernel(float* x, cudaTextureObject_t texture = 0) {\n"
     "  x[threadIdx.x] = tex1Dfetch<float>(texture, threadIdx.x);\n"
     "}\n",
     "3:20: error: textures cannot run on the host path; the host path has no warps or texture units"},
    {"CooperativeGroups",
     "#include <cooperative_groups.h>\n"
     "__global__ void kernel(float* x) {\n"
     "  cooperative_groups::this_thread_block().sync();\n"
     "  x[threadIdx.x] = 0;\n"
     "}\n",
     "4:23: error: cooperative groups cannot run on the host path; use __syncthreads and shared memory"},
    {"DynamicParallelism",
     "__global__ void child(float* x) { x[threadIdx.x] = 1; }\n"
     "__global__ void kernel(float* x) {\n"
     "  if (threadIdx.x == 0) child<<<1, 32>>>(x);\n"
     "}\n",
     "4:25: error: dynamic parallelism cannot run on the host path; launch kernels from host code"},
    {"RuntimeCallWithoutStandIn",
     "__global__ void kernel(float* x) { x[threadIdx.x] = 0; }\n"
     "void copyRows(float* d, const float* h) { cudaMemcpy2D(d, 64, h, 64, 64, 4, cudaMemcpyHostToDevice); }\n",
     "3:43: error: 'cudaMemcpy2D' cannot run on the host path; the host path provides only the CUDA runtime calls "
     "listed in docs/cuda.md"},
    {"CufftCall",
     "#include <cufft.h>\n"
     "__global__ void kernel(float* x) { x[threadIdx.x] = 0; }\n"
     "void plan() { cufftHandle h; cufftPlan1d(&h, 1024, CUFFT_C2C, 1); }\n",
     "4:30: error: 'cufftPlan1d' cannot run on the host path"},
    {"InlinePtx",
     "__global__ void kernel(float* x) {\n"
     "  asm volatile(\"membar.gl;\");\n"
     "  x[threadIdx.x] = 0;\n"
     "}\n",
     "3:3: error: inline PTX cannot run on the host path; write the operation in CUDA C++"},
    {"ConstantVariable",
     "__constant__ float scale[4];\n"
     "__global__ void kernel(float* x) {\n"
     "  x[threadIdx.x] *= scale[threadIdx.x % 4];\n"
     "}\n",
     "4:21: error: __constant__ variables cannot run on the host path; pass the data as a kernel argument or in "
     "shared memory"},
    {"BuiltinInsideMacroDefinition",
     "#define THREAD threadIdx.x\n"
     "__global__ void kernel(float* x) {\n"
     "  x[THREAD] = 0;\n"
     "}\n",
     "4:5: error: 'threadIdx' inside a macro definition cannot run on the host path; write it in the kernel or "
     "pass it as a macro argument"},
};

std::string program(const UnsupportedCase& c) { return std::string(kPrelude) + c.kernels + kVnode; }

ParseOutcome parseCase(const UnsupportedCase& c, frontend::CudaTarget target) {
  return parseSource(program(c), "test.dsp", target);
}

class CudaHostPathTest : public ::testing::TestWithParam<UnsupportedCase> {
 protected:
  void SetUp() override {
    if (streamcc::ToolchainPaths::detect().cudaPath.empty())
      GTEST_SKIP() << "no CUDA toolkit found: these programs use CUDA headers (e.g. cooperative_groups.h)";
  }
};

TEST_P(CudaHostPathTest, RejectedWhereKernelsMayRunOnTheHost) {
  ParseOutcome outcome = parseCase(GetParam(), frontend::CudaTarget::GpuAndHost);
  EXPECT_FALSE(outcome.ok);
  EXPECT_NE(outcome.diagnostics.find(GetParam().expected), std::string::npos)
      << "expected: " << GetParam().expected << "\nactual output:\n" << outcome.diagnostics;
  EXPECT_NE(outcome.diagnostics.find("note: a GPU vnode runs its kernels on the host when its rank gets no GPU; "
                                     "compile with --no-host-path to require a GPU instead"),
            std::string::npos)
      << outcome.diagnostics;
}

TEST_P(CudaHostPathTest, AcceptedWithoutHostPath) {
  ParseOutcome outcome = parseCase(GetParam(), frontend::CudaTarget::GpuOnly);
  EXPECT_TRUE(outcome.ok) << outcome.diagnostics;
  EXPECT_EQ(outcome.diagnostics.find("cannot run on the host path"), std::string::npos) << outcome.diagnostics;
  EXPECT_TRUE(outcome.result.sourceEdits.empty());  // no host clones, no rewritten launches
}

INSTANTIATE_TEST_SUITE_P(Frontend, CudaHostPathTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<UnsupportedCase>& info) { return info.param.name; });

}  // namespace
}  // namespace dispar::testing
