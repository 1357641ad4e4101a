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
constexpr const char* kVnode = "#pragma streamap resource(gpu)\n"
                               "VNODE(worker) { kernel<<<1, 32>>>(nullptr); }\n";

const UnsupportedCase kCases[] = {
    {"TextureMipmapLevel",
     "__global__ void kernel(float* x, cudaTextureObject_t texture = 0) {\n"
     "  x[threadIdx.x] = tex2DLod<float>(texture, 0.5f, 0.5f, 1.0f);\n"
     "}\n",
     "3:20: error: this texture fetch cannot run on the host path; the host path has tex1Dfetch, tex1D, tex2D, "
     "tex3D and their layered forms, without mipmaps, gathers or cubemaps (docs/cuda.md)"},
    {"DeviceLaunchInAMacro",
     "__global__ void child(float* x) { x[threadIdx.x] = 1; }\n"
     "#define CHILD(x) child<<<1, 32>>>(x)\n"
     "__global__ void kernel(float* x) {\n"
     "  if (threadIdx.x == 0) CHILD(x);\n"
     "}\n",
     "5:25: error: a kernel launch in device code written through a macro cannot run on the host path; write the "
     "launch in the kernel"},
    {"RuntimeCallWithoutStandIn",
     "__global__ void kernel(float* x) { x[threadIdx.x] = 0; }\n"
     "void rows() { void* d; size_t pitch; cudaHostRegister(&d, pitch, 0); }\n",
     "3:38: error: 'cudaHostRegister' cannot run on the host path; the host path provides only the CUDA runtime calls "
     "listed in docs/cuda.md"},
    {"CufftCallWithoutStandIn",
     "#include <cufft.h>\n"
     "__global__ void kernel(float* x) { x[threadIdx.x] = 0; }\n"
     "void plan() { cufftHandle h; cufftCreate(&h); cufftSetAutoAllocation(h, 0); }\n",
     "4:47: error: 'cufftSetAutoAllocation' cannot run on the host path"},
    {"InlinePtx",
     "__global__ void kernel(float* x) {\n"
     "  asm volatile(\"membar.gl;\");\n"
     "  x[threadIdx.x] = 0;\n"
     "}\n",
     "3:3: error: inline PTX cannot run on the host path; write the operation in CUDA C++"},
    {"SharedThroughMacro",
     "#define TILE(name) __shared__ float name[32]\n"
     "__global__ void kernel(float* x) {\n"
     "  TILE(t);\n"
     "  t[threadIdx.x] = x[threadIdx.x];\n"
     "}\n",
     "4:3: error: __shared__ declared through a macro cannot run on the host path; write the declaration in the "
     "kernel"},
    {"LaunchInsideAMacroDefinition",
     "__global__ void kernel(float* x) { x[threadIdx.x] = 0; }\n"
     "#define RUN(x) kernel<<<1, 32>>>(x)\n"
     "void run(float* x) { RUN(x); }\n",
     "4:22: error: a kernel launch inside a macro definition cannot run on the host path; write the launch in the "
     "code (a macro argument is fine)"},
    {"ArchGuardWithoutHostBranch",
     "__global__ void kernel(float* x) {\n"
     "#ifdef __CUDA_ARCH__\n"
     "  x[threadIdx.x] = 1;\n"
     "#endif\n"
     "}\n",
     "3:2: error: code under '#if __CUDA_ARCH__' with no host branch cannot run on the host path; add an #else that "
     "computes the same on the host, or compile with --no-host-path"},
    // Compared, the architecture is the host path's (8.0): `defined` still asks for a GPU compilation.
    {"DefinedArchGuardWithoutHostBranch",
     "__global__ void kernel(float* x) {\n"
     "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700\n"
     "  x[threadIdx.x] = 1;\n"
     "#endif\n"
     "}\n",
     "3:2: error: code under '#if __CUDA_ARCH__' with no host branch cannot run on the host path"},
    {"LegacyWarpSynchronousStoreInsideAnExpression",
     "__global__ void kernel(float* x) {\n"
     "  __shared__ float s[64];\n"
     "  s[threadIdx.x] = x[threadIdx.x];\n"
     "  __syncthreads();\n"
     "  if (threadIdx.x < 32) {\n"
     "    volatile float* v = s;\n"
     "    v[threadIdx.x] += v[threadIdx.x + 32];\n"
     "    x[threadIdx.x] = v[threadIdx.x] = v[threadIdx.x] + 1;\n"
     "  }\n"
     "}\n",
     "9:37: error: a volatile store inside a larger expression, in code whose lanes read each other's volatile "
     "memory without a barrier (legacy warp-synchronous code), cannot run on the host path; write the store as a "
     "statement of its own, or synchronise the lanes with __syncwarp()"},
    {"DeviceFunctionWithoutHostVersion",
     "#include <curand_kernel.h>\n"
     "__global__ void kernel(float* x) {\n"
     "  curandState state;\n"
     "  curand_init(1234, threadIdx.x, 0, &state);\n"
     "  x[threadIdx.x] = curand_uniform(&state);\n"
     "}\n",
     "5:3: error: 'curand_init', a __device__ function with no host version, cannot run on the host path"},
    {"BlockTileMemory",
     "#include <cooperative_groups.h>\n"
     "namespace cg = cooperative_groups;\n"
     "__global__ void kernel(float* x) {\n"
     "  __shared__ cg::block_tile_memory<64> scratch;\n"
     "  x[threadIdx.x] = cg::this_thread_block(scratch).thread_rank();\n"
     "}\n",
     "5:14: error: cooperative groups' 'block_tile_memory' cannot run on the host path; the host path has thread "
     "blocks, their tiles, coalesced groups and the grids of cooperative launches, not clusters (docs/cuda.md)"},
    {"SymbolThroughPointer",
     "__constant__ float scale[4];\n"
     "__global__ void kernel(float* x) { x[threadIdx.x] *= scale[0]; }\n"
     "void load(const float* h) { const float* p = scale; cudaMemcpyToSymbol(*p, h, 4); }\n",
     "4:72: error: 'cudaMemcpyToSymbol' on a symbol other than a __constant__ or __device__ variable of this file "
     "cannot run on the host path; name the variable itself"},
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
      << "expected: " << GetParam().expected << "\nactual output:\n"
      << outcome.diagnostics;
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
