// What the lowering emits for CUDA constructs that used to break host clones: __device__ functions in
// namespaces, called through argument-dependent lookup, as members or constructors; CUDA builtins in
// macros; __shared__ in loops; __constant__ variables and the symbol API; cooperative groups. The
// end-to-end tests (tests/e2e/cuda/constructs.dsp) compile and run the same constructs.
#include "FrontendTestSupport.h"

#include "clang/Tooling/Core/Replacement.h"

#include <gtest/gtest.h>

#include <fstream>

namespace dispar::testing {
namespace {

std::string emitted(const std::string& kernels, frontend::CudaTarget target = frontend::CudaTarget::GpuAndHost) {
  const std::string source = "#include <dispar/dispar.h>\n" + kernels +
                             "#pragma streamap resource(gpu)\nVNODE(worker) { kernel<<<1, 32>>>(nullptr); }\n";
  ParseOutcome outcome = parseSource(source, "test.dsp", target);
  EXPECT_TRUE(outcome.ok) << outcome.diagnostics;
  llvm::Expected<std::string> edited =
      clang::tooling::applyAllReplacements(outcome.result.sourceText, outcome.result.sourceEdits);
  if (!edited) {
    ADD_FAILURE() << llvm::toString(edited.takeError());
    return "";
  }
  return *edited;
}

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

TEST(CudaLowering, DeviceFunctionInANamespaceBecomesHostDeviceWhereItIs) {
  const std::string out =
      emitted("namespace mathx { __device__ float twice(float x) { return 2 * x + threadIdx.x * 0; } }\n"
              "__global__ void kernel(float* x) { x[threadIdx.x] = mathx::twice(x[threadIdx.x]); }\n");
  // One function for both sides: the original body on the GPU, the rewritten one on the host.
  EXPECT_TRUE(contains(out, "namespace mathx { __host__ __device__ float twice(float x) \n#ifdef __CUDA_ARCH__\n"
                            "#line 2 \""))
      << out;
  EXPECT_TRUE(contains(out, "{ return 2 * x + threadIdx.x * 0; }\n#else\n#line 2 \"")) << out;
  EXPECT_TRUE(contains(out, "{ return 2 * x + ::dispar::hostk::threadIdx().x * 0; }\n#endif\n")) << out;
  // The kernel's clone calls it as written: no dispar_host copy of it exists to call instead.
  // A kernel without a barrier is one loop over the grid's threads; the device function reads the thread's
  // context, which the loop keeps up to date.
  EXPECT_TRUE(contains(out, "::dispar::hostk::forEachGridThread<true>([=](const ::dispar::hostk::LoopBlockShape& "
                            "dispar_block, const ::dispar::hostk::LoopThread dispar_thread) "
                            "{  x[dispar_thread.idx.x] = mathx::twice(x[dispar_thread.idx.x]);"))
      << out;
  EXPECT_FALSE(contains(out, "mathx::dispar_host")) << out;
}

TEST(CudaLowering, DeviceFunctionWithNothingToRewriteKeepsOneBody) {
  const std::string out = emitted("struct P { float a; };\n"
                                  "__device__ float get(P p) { return p.a; }\n"
                                  "__global__ void kernel(float* x) { P p{x[0]}; x[threadIdx.x] = get(p); }\n");
  EXPECT_TRUE(contains(out, "__host__ __device__ float get(P p) { return p.a; }")) << out;
  EXPECT_FALSE(contains(out, "#ifdef __CUDA_ARCH__")) << out;
}

TEST(CudaLowering, DeviceMembersAndConstructorsInTemplatesBecomeHostDevice) {
  const std::string out =
      emitted("template <class T> struct SharedMemory {\n"
              "  __device__ T* pointer() { extern __shared__ int raw[]; return (T*)raw; }\n"
              "};\n"
              "struct Acc {\n"
              "  float total;\n"
              "  __device__ Acc(float start) : total(start + threadIdx.x) {}\n"
              "};\n"
              "__global__ void kernel(float* x) { Acc a(SharedMemory<float>().pointer()[0]); x[0] = a.total; }\n");
  EXPECT_TRUE(contains(out, "__host__ __device__ T* pointer() \n#ifdef __CUDA_ARCH__\n")) << out;
  EXPECT_TRUE(contains(out, "{ int* raw = ::dispar::hostk::dynamicShared<int>();  return (T*)raw; }")) << out;
  // A constructor's initialisers are part of what differs.
  EXPECT_TRUE(contains(out, "__host__ __device__ Acc(float start) \n#ifdef __CUDA_ARCH__\n")) << out;
  EXPECT_TRUE(contains(out, ": total(start + ::dispar::hostk::threadIdx().x) {}\n#endif")) << out;
}

TEST(CudaLowering, SharedDeclarationIsOneInstancePerBlockWhereverItIsWritten) {
  const std::string out = emitted("__global__ void kernel(float* x) {\n"
                                  "  for (int r = 0; r < 8; ++r) { __shared__ float tile[32]; tile[threadIdx.x] = r; "
                                  "__syncthreads(); x[r] += tile[0]; }\n"
                                  "}\n");
  // The lambda's type names the declaration; sharedVariable gives each its block's one instance.
  EXPECT_TRUE(
      contains(out, "::dispar::hostk::SharedRef<float[32]> tile = ::dispar::hostk::sharedVariable<float[32]>([] {});"))
      << out;
}

TEST(CudaLowering, BuiltinsInsideMacroDefinitionsAreDeclaredAtTheTopOfTheHostVersion) {
  const std::string out = emitted("#define UMUL(a, b) __umul24(a, b)\n"
                                  "#define TID threadIdx.x\n"
                                  "__global__ void kernel(unsigned* x) { x[TID] = UMUL(TID, 3u); __syncthreads(); }\n");
  // threadIdx is then the thread's context, which the thread loops keep up to date.
  EXPECT_TRUE(contains(out,
                       "void kernel(unsigned* x) { using ::dispar::hostk::cuda_names::__umul24; "
                       "const auto& threadIdx = ::dispar::hostk::threadIdx(); const ::dispar::hostk::LoopBlockShape "
                       "dispar_block = ::dispar::hostk::loopBlockShape(); ::dispar::hostk::forEachThread<true>("))
      << out;
  EXPECT_TRUE(contains(out, "x[TID] = UMUL(TID, 3u); });")) << out;
}

TEST(CudaLowering, ConstantVariableGetsAHostCopyThatCloneAndSymbolCallsUse) {
  const std::string out =
      emitted("namespace filt { __constant__ float taps[4] = {1, 2, 3, 4}; }\n"
              "__global__ void kernel(float* x) { x[threadIdx.x] *= filt::taps[threadIdx.x % 4]; }\n"
              "void load(const float* h) { cudaMemcpyToSymbol(filt::taps, h, 4 * sizeof(float)); }\n");
  EXPECT_TRUE(contains(out, "namespace dispar_host {\n#line 2 \"")) << out;
  EXPECT_TRUE(contains(out, " float taps[4] = {1, 2, 3, 4};\n}  // namespace dispar_host\n")) << out;
  EXPECT_TRUE(contains(out, "x[dispar_thread.idx.x] *= ::filt::dispar_host::taps[dispar_thread.idx.x % 4];")) << out;
  EXPECT_TRUE(contains(
      out, "::dispar::gpu::cudaMemcpyToSymbol(::dispar::gpu::symbol(filt::taps, ::filt::dispar_host::taps), h,"))
      << out;
}

TEST(CudaLowering, CooperativeGroupsNamesBecomeTheHostPaths) {
  const std::string out = emitted("#include <cooperative_groups.h>\n"
                                  "namespace cg = cooperative_groups;\n"
                                  "__global__ void kernel(float* x) {\n"
                                  "  cg::thread_block cta = cg::this_thread_block();\n"
                                  "  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);\n"
                                  "  x[cta.thread_rank()] = tile.shfl_down(x[cta.thread_rank()], 1);\n"
                                  "  cooperative_groups::sync(cta);\n"
                                  "}\n");
  EXPECT_TRUE(contains(out, "::dispar::hostk::cooperative_groups::thread_block cta = "
                            "::dispar::hostk::cooperative_groups::this_thread_block();"))
      << out;
  EXPECT_TRUE(contains(out, "::dispar::hostk::cooperative_groups::thread_block_tile<32> tile = "
                            "::dispar::hostk::cooperative_groups::tiled_partition<32>(cta);"))
      << out;
  EXPECT_TRUE(contains(out, "::dispar::hostk::cooperative_groups::sync(cta);")) << out;
  EXPECT_TRUE(contains(out, "// kernel 'kernel': fibers, because it uses the warp-level")) << out;
}

TEST(CudaLowering, DeviceFunctionTakingATileGetsAHostOverload) {
  const std::string out = emitted(
      "#include <cooperative_groups.h>\n"
      "namespace cg = cooperative_groups;\n"
      "__device__ float warpSum(cg::thread_block_tile<32> tile, float v) {\n"
      "  for (int o = 16; o > 0; o /= 2) v += tile.shfl_down(v, o);\n"
      "  return v;\n"
      "}\n"
      "__global__ void kernel(float* x) { x[0] = warpSum(cg::tiled_partition<32>(cg::this_thread_block()), x[0]); }\n");
  // The original stays for the GPU; the overload beside it takes the host path's tile.
  EXPECT_TRUE(contains(out, "__device__ float warpSum(cg::thread_block_tile<32> tile, float v) {")) << out;
  EXPECT_TRUE(
      contains(out, " float warpSum(::dispar::hostk::cooperative_groups::thread_block_tile<32> tile, float v) {"))
      << out;
}

TEST(CudaLowering, WarpPrimitivesAreRewrittenAndTheKernelRunsAsFibers) {
  const std::string out =
      emitted("__global__ void kernel(int* x) {\n"
              "  int v = x[threadIdx.x];\n"
              "  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);\n"
              "  if (__all_sync(__activemask(), v > 0)) x[threadIdx.x] = __ballot_sync(0xffffffffu, v > 1);\n"
              "}\n");
  EXPECT_TRUE(contains(out, "v += ::dispar::hostk::shflDownSync(0xffffffffu, v, o);")) << out;
  EXPECT_TRUE(contains(out, "if (::dispar::hostk::allSync(::dispar::hostk::activemask(), v > 0))")) << out;
  EXPECT_TRUE(contains(out, "::dispar::hostk::ballotSync(0xffffffffu, v > 1)")) << out;
}

// cuBLAS and cuFFT calls go through ::dispar::gpu like runtime calls, named as written (cublas_v2.h makes
// cublasSgemm a macro for cublasSgemm_v2), also inside a checking macro's argument, each timed for run
// traces by a LibraryCallTimer naming the function and where it is called; the program records which
// libraries it calls.
TEST(CudaLowering, LibraryCallsAreDispatchedAndRecorded) {
  const std::string kernels =
      "#include <cublas_v2.h>\n#include <cufft.h>\n"
      "#define CHECK(call) ((call) == 0 ? (void)0 : abort())\n"
      "__global__ void kernel(float* x) { x[threadIdx.x] = 0; }\n"
      "void work(float* a, cufftComplex* f) {\n"
      "  cublasHandle_t h; CHECK(cublasCreate(&h));\n"
      "  const float one = 1;\n"
      "  cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, 2, 2, 2, &one, a, 2, a, 2, &one, a, 2);\n"
      "  cufftHandle p; cufftPlan1d(&p, 8, CUFFT_C2C, 1); cufftExecC2C(p, f, f, CUFFT_FORWARD);\n"
      "}\n";
  const std::string out = emitted(kernels);
  // ((void)::dispar::gpu::LibraryCallTimer("F", "FILE:LINE:COLUMN"), ::dispar::gpu::F)(...), emitted()'s
  // first line being its include of dispar.h.
  const auto timerOf = [](const std::string& function) {
    return "((void)::dispar::gpu::LibraryCallTimer(\"" + function + "\", \"";
  };
  const auto timedAt = [](const std::string& function, const std::string& at) {
    return ".dsp:" + at + "\"), ::dispar::gpu::" + function + ")";
  };
  EXPECT_TRUE(contains(out, "CHECK(" + timerOf("cublasCreate"))) << out;
  EXPECT_TRUE(contains(out, timedAt("cublasCreate", "7:27") + "(&h));")) << out;
  EXPECT_TRUE(contains(out, "  " + timerOf("cublasSgemm"))) << out;
  EXPECT_TRUE(contains(out, timedAt("cublasSgemm", "9:3") + "(h, CUBLAS_OP_N,")) << out;
  EXPECT_TRUE(contains(out, timedAt("cufftPlan1d", "10:18") + "(&p, 8, CUFFT_C2C, 1); " + timerOf("cufftExecC2C")))
      << out;
  EXPECT_TRUE(contains(out, timedAt("cufftExecC2C", "10:52") + "(p,")) << out;
  const std::string source = "#include <dispar/dispar.h>\n" + kernels +
                             "#pragma streamap resource(gpu)\nVNODE(worker) { kernel<<<1, 32>>>(nullptr); }\n";
  ParseOutcome outcome = parseSource(source, "test.dsp", frontend::CudaTarget::GpuAndHost);
  EXPECT_EQ(outcome.result.gpuLibraries, (std::vector<std::string>{"cublas", "cufft"}));
}

TEST(CudaLowering, TemplateKernelSpecializationsAreRegisteredWhereTheyCanBeNamed) {
  // Launches through a pointer and cudaLaunchKernel find a clone by its registration. Each
  // specialization the file uses is registered at the end of the file, except those it cannot name
  // there (a function's local class, a class in an anonymous namespace) and explicit specializations,
  // which are kernels of their own.
  const std::string out = emitted("__global__ void kernel(int*) {}\n"
                                  "struct Pixel { int v; };\n"
                                  "namespace { struct Hidden { int v; }; }\n"
                                  "template <class T> __global__ void fill(T* out) { out[threadIdx.x] = T{}; }\n"
                                  "template <> __global__ void fill<double>(double* out) { out[threadIdx.x] = 1.0; }\n"
                                  "void launches(float* f, Pixel* p, Hidden* h, double* d) {\n"
                                  "  struct Local { int v; };\n"
                                  "  Local* l = nullptr;\n"
                                  "  fill<<<1, 32>>>(f);\n"
                                  "  void (*k)(Pixel*) = &fill<Pixel>;\n"
                                  "  k<<<1, 32>>>(p);\n"
                                  "  fill<<<1, 32>>>(h);\n"
                                  "  fill<<<1, 32>>>(l);\n"
                                  "  fill<<<1, 32>>>(d);\n"
                                  "}\n");
  const std::size_t block = out.find("// The specializations of the template kernels this file uses");
  ASSERT_NE(block, std::string::npos) << out;
  const std::string registrations = out.substr(block);
  EXPECT_TRUE(contains(registrations, "(&::dispar_host::fill<float>)")) << registrations;
  EXPECT_TRUE(contains(registrations, "(&::fill<Pixel>)")) << registrations;
  EXPECT_TRUE(contains(registrations, "argsLauncherFor(static_cast<void (*)(Pixel *)>(&::dispar_host::fill<Pixel>))"))
      << registrations;
  EXPECT_FALSE(contains(registrations, "Hidden")) << registrations;
  EXPECT_FALSE(contains(registrations, "Local")) << registrations;
  EXPECT_FALSE(contains(registrations, "fill<double>")) << registrations;
}

TEST(CudaLowering, WithoutAGpuBuildTheHostVersionsReplaceTheOriginals) {
  const std::string out =
      emitted("namespace mathx { __device__ float twice(float x) { return 2 * x + threadIdx.x * 0; } }\n"
              "__constant__ float scale[2];\n"
              "__global__ void kernel(float* x) { x[threadIdx.x] = mathx::twice(x[0]) * scale[0]; }\n",
              frontend::CudaTarget::HostOnly);
  // A host function: the qualifiers go, the body is the host version.
  EXPECT_TRUE(
      contains(out, "namespace mathx {  float twice(float x) { return 2 * x + ::dispar::hostk::threadIdx().x * 0; } }"))
      << out;
  EXPECT_FALSE(contains(out, "#ifdef __CUDA_ARCH__")) << out;
  // The variable itself is the host's: no copy, no renamed references.
  EXPECT_FALSE(contains(out, "dispar_host::scale")) << out;
}

TEST(CudaLowering, TemplateKernelLaunchedInATemplateDeducesItsArgumentsLikeCuda) {
  const std::string out = emitted("template <class T> __global__ void scale(const T* in, T* out, int n = 2) {\n"
                                  "  out[threadIdx.x] = in[threadIdx.x] * n;\n"
                                  "}\n"
                                  "template <class T> void run(const T* in, T* out) { scale<<<1, 32>>>(in, out); }\n"
                                  "__global__ void kernel(float* x) {}\n");
  // Beside the clone, a declaration whose deduction is the kernel's: the launch names the specialization
  // through it without evaluating its arguments.
  EXPECT_TRUE(contains(out, "template <class T> auto dispar_deduce_scale(const T* in, T* out, int n = 2) -> "
                            "::dispar::hostk::detail::KernelOf<decltype(&scale<T>), &scale<T>>;"))
      << out;
  EXPECT_TRUE(contains(out, "::dispar::hostk::launchGridLoops(1, 32, 0, decltype(::dispar_host::dispar_deduce_scale("
                            "in, out))::value, in, out, 2)"))
      << out;
}

TEST(CudaLowering, LegacyWarpSynchronousStoresRunInLockStep) {
  const std::string out = emitted("__global__ void kernel(float* x) {\n"
                                  "  __shared__ float s[64];\n"
                                  "  s[threadIdx.x] = x[threadIdx.x];\n"
                                  "  __syncthreads();\n"
                                  "  if (threadIdx.x < 32) {\n"
                                  "    volatile float* v = s;\n"
                                  "    v[threadIdx.x] += v[threadIdx.x + 32];\n"
                                  "    v[threadIdx.x] = v[threadIdx.x] + v[threadIdx.x + 16];\n"
                                  "  }\n"
                                  "  if (threadIdx.x == 0) x[0] = s[0];\n"
                                  "}\n");
  EXPECT_TRUE(contains(out, "::dispar::hostk::lockstepStore<::dispar::hostk::LockstepOp::Add>(v[::dispar::hostk::"
                            "threadIdx().x] , v[::dispar::hostk::threadIdx().x + 32]);"))
      << out;
  EXPECT_TRUE(contains(out, "::dispar::hostk::lockstepStore<::dispar::hostk::LockstepOp::Assign>(v[::dispar::hostk::"
                            "threadIdx().x] , v[::dispar::hostk::threadIdx().x] + v[::dispar::hostk::threadIdx().x + "
                            "16]);"))
      << out;
  EXPECT_TRUE(contains(out, "kernel 'kernel': fibers, because its lanes read each other's volatile memory")) << out;
  // Stores to memory that is not volatile, and the GPU's kernel, stay as written.
  EXPECT_TRUE(contains(out, "if (::dispar::hostk::threadIdx().x == 0) x[0] = s[0];")) << out;
  EXPECT_TRUE(contains(out, "    v[threadIdx.x] += v[threadIdx.x + 32];\n")) << out;
}

TEST(CudaLowering, VolatileStoresAloneAreNotWarpSynchronous) {
  // A flag written through a volatile pointer, never read back: no lock step, thread loops as before.
  const std::string out = emitted("__global__ void kernel(float* x) {\n"
                                  "  volatile int* flag = (volatile int*)x;\n"
                                  "  __syncthreads();\n"
                                  "  if (threadIdx.x == 0) *flag = 1;\n"
                                  "}\n");
  EXPECT_FALSE(contains(out, "lockstepStore")) << out;
  EXPECT_TRUE(contains(out, "kernel 'kernel': thread loops")) << out;
}

TEST(CudaLowering, ArchComparisonsInDeviceCodeTakeTheHostArchitecturesBranch) {
  const std::string source = "__device__ float widen(float v) {\n"
                             "#if __CUDA_ARCH__ <= 130\n"
                             "  return v;\n"
                             "#else\n"
                             "  return v + threadIdx.x;\n"
                             "#endif\n"
                             "}\n"
                             "__global__ void kernel(float* x) {\n"
                             "#if __CUDA_ARCH__ < 700\n"
                             "  x[0] = 0;\n"
                             "#elif __CUDA_ARCH__ >= 700\n"
                             "  x[threadIdx.x] = widen(1);\n"
                             "#endif\n"
                             "#ifdef __CUDA_ARCH__\n"
                             "  x[1] = 1;\n"
                             "#else\n"
                             "  x[1] = 2;\n"
                             "#endif\n"
                             "}\n";
  const std::string out = emitted(source);
  // The host versions are made from the branches an 8.0 GPU compiles, with DISPAR_CUARCH in the
  // comparisons (dispar/hostk/Arch.h); `defined` keeps asking whether the code is compiled for a GPU.
  EXPECT_TRUE(contains(out, "  return v + ::dispar::hostk::threadIdx().x;\n#endif\n}\n#endif\n")) << out;
  EXPECT_TRUE(contains(out, "#if DISPAR_CUARCH < 700\n  x[0] = 0;\n#elif DISPAR_CUARCH >= 700\n")) << out;
  EXPECT_TRUE(contains(out, "  x[dispar_thread.idx.x] = widen(1);\n")) << out;
  EXPECT_TRUE(contains(out, "#ifdef __CUDA_ARCH__\n  x[1] = 1;\n#else\n  x[1] = 2;\n")) << out;
  // The GPU's kernel stays as written.
  EXPECT_TRUE(contains(out, "__global__ void kernel(float* x) {\n#if __CUDA_ARCH__ < 700\n")) << out;
  // Host-only builds too.
  const std::string hostOnly = emitted(source, frontend::CudaTarget::HostOnly);
  EXPECT_TRUE(contains(hostOnly, "  x[dispar_thread.idx.x] = widen(1);\n")) << hostOnly;
}

TEST(CudaLowering, HostPathRemarksNameEachKernelsForm) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("dispar-host-path-remarks", dir));
  const std::string path = std::string(dir) + "/app.dsp";
  std::ofstream(path) << "#include <dispar/dispar.h>\n"
                         "__global__ void scale(float* x) { x[threadIdx.x] *= 2; }\n"
                         "__global__ void sum(float* x) {\n"
                         "  float v = x[threadIdx.x];\n"
                         "  v += __shfl_down_sync(0xffffffffu, v, 1);\n"
                         "  x[threadIdx.x] = v;\n"
                         "}\n"
                         "#pragma streamap resource(gpu)\n"
                         "VNODE(worker) { scale<<<1, 32>>>(nullptr); sum<<<1, 32>>>(nullptr); }\n";
  frontend::FrontendOptions options = streamcc::ToolchainPaths::detect().frontendOptions(path);
  options.remarkHostPath = true;
  frontend::FrontendResult result;
  std::string diagnostics;
  llvm::raw_string_ostream out(diagnostics);
  EXPECT_TRUE(frontend::runFrontend(options, result, out)) << diagnostics;
  out.flush();
  llvm::sys::fs::remove_directories(dir);
  EXPECT_TRUE(contains(diagnostics, "app.dsp:2:17: remark: kernel 'scale' runs on the host path as grid loops "
                                    "[-Rhost-path]"))
      << diagnostics;
  EXPECT_TRUE(contains(diagnostics, "app.dsp:3:17: remark: kernel 'sum' runs on the host path as fibers, because it "
                                    "uses the warp-level '__shfl_down_sync' (the lanes of a warp meet there) "
                                    "[-Rhost-path]"))
      << diagnostics;
}

}  // namespace
}  // namespace dispar::testing
