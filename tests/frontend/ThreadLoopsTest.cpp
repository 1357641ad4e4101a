// Which kernels' host clones the frontend emits as thread loops (frontend/lib/ThreadLoops.h), what the
// emitted clone looks like, and why the others keep the fiber form.
#include "FrontendTestSupport.h"

#include "clang/Tooling/Core/Replacement.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace dispar::testing {
namespace {

std::string emittedSource(const std::string& source) {
  ParseOutcome outcome = parseSource(source);
  EXPECT_TRUE(outcome.ok) << outcome.diagnostics;
  llvm::Expected<std::string> edited =
      clang::tooling::applyAllReplacements(outcome.result.sourceText, outcome.result.sourceEdits);
  if (!edited) {
    ADD_FAILURE() << llvm::toString(edited.takeError());
    return "";
  }
  return *edited;
}

std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

constexpr const char* kFir = "#include <dispar/dispar.h>\n"
                             "constexpr int kTaps = 16;\n"
                             "__global__ void fir(const float* in, float* out, const float* taps, int n) {\n"
                             "  __shared__ float sharedTaps[kTaps];\n"
                             "  int t = threadIdx.x;\n"
                             "  if (t < kTaps) sharedTaps[t] = taps[t];\n"
                             "  int i = blockIdx.x * blockDim.x + t;\n"
                             "  if (i >= n) return;\n"
                             "  constexpr int kHalf = kTaps / 2;\n"
                             "  __syncthreads();\n"
                             "  float acc = 0.0f;\n"
                             "  for (int k = 0; k < kTaps; ++k) acc += sharedTaps[k] * in[i + k];\n"
                             "  out[i] = acc + kHalf * 0;\n"
                             "}\n"
                             "#pragma streamap resource(gpu)\n"
                             "VNODE(worker) { fir<<<4, 256>>>(nullptr, nullptr, nullptr, 0); }\n";

TEST(ThreadLoops, KernelWithTopLevelBarrierIsEmittedAsSegments) {
  const std::string emitted = emittedSource(kFir);
  const std::size_t clone = emitted.find("namespace dispar_host {");
  ASSERT_NE(clone, std::string::npos) << emitted;
  const std::string host = emitted.substr(clone, emitted.find("}  // namespace dispar_host") - clone);
  EXPECT_NE(host.find("// kernel 'fir': thread loops"), std::string::npos) << host;
  // __shared__ and constexpr declarations are hoisted out of the loops, values live across the barrier
  // get a slot per thread, the barrier becomes a segment boundary and the early return an exit.
  // threadIdx is the segment loop's index; nothing in the segments reads the thread's context.
  EXPECT_NE(
      host.find("{ const ::dispar::hostk::LoopBlockShape dispar_block = ::dispar::hostk::loopBlockShape(); "
                "::dispar::hostk::SharedRef<float[16]> sharedTaps = ::dispar::hostk::sharedVariable<float[16]>([] {}); "
                "constexpr int kHalf = kTaps / 2; "
                "::dispar::hostk::PerThread<int> dispar_carried_i; "
                "::dispar::hostk::forEachThread<false>([&](const ::dispar::hostk::LoopThread dispar_thread) {"),
      std::string::npos)
      << host;
  EXPECT_NE(host.find("auto& i = dispar_carried_i.set(dispar_thread, dispar_block.blockIdx.x * "
                      "dispar_block.blockDim.x + t);"),
            std::string::npos)
      << host;
  EXPECT_NE(host.find("int t = dispar_thread.idx.x;"), std::string::npos) << "t is not used after the barrier";
  EXPECT_NE(host.find("if (i >= n) return ::dispar::hostk::exitThread(dispar_thread);"), std::string::npos) << host;
  EXPECT_NE(
      host.find("}); ::dispar::hostk::forEachThread<false>([&](const ::dispar::hostk::LoopThread dispar_thread) { "
                "auto i = dispar_carried_i[dispar_thread]; "),
      std::string::npos)
      << host;
  EXPECT_EQ(occurrences(host, "forEachThread<false>("), 2u) << host;
  EXPECT_EQ(host.find("syncthreads"), std::string::npos) << host;
  // The clone keeps the kernel's line count, so its #line stays exact (then the line registering it).
  EXPECT_EQ(occurrences(host, "\n"), 2u + 12u + 1u) << host;
  EXPECT_NE(host.find("static const bool dispar_registered_fir_L3 = ::dispar::hostk::detail::registerKernel("),
            std::string::npos)
      << host;
  EXPECT_NE(emitted.find("::dispar::hostk::launchThreadLoops(4, 256, 0, &::dispar_host::fir"), std::string::npos)
      << emitted;
}

// A tree reduction: the barrier sits in a loop that every thread runs alike.
constexpr const char* kReduction = "#include <dispar/dispar.h>\n"
                                   "__global__ void reduce(const int* in, long long* out) {\n"
                                   "  __shared__ long long sums[256];\n"
                                   "  unsigned t = threadIdx.x;\n"
                                   "  sums[t] = in[blockIdx.x * blockDim.x + t];\n"
                                   "  __syncthreads();\n"
                                   "  for (unsigned half = blockDim.x / 2; half > 0; half >>= 1) {\n"
                                   "    if (t < half) sums[t] += sums[t + half];\n"
                                   "    __syncthreads();\n"
                                   "  }\n"
                                   "  if (blockDim.x >= 64) {\n"
                                   "    if (t == 0) out[blockIdx.x] = sums[0];\n"
                                   "  }\n"
                                   "}\n"
                                   "#pragma streamap resource(gpu)\n"
                                   "VNODE(worker) { reduce<<<4, 256>>>(nullptr, nullptr); }\n";

TEST(ThreadLoops, UniformLoopHoldingABarrierRunsOncePerBlockAroundItsSegments) {
  const std::string emitted = emittedSource(kReduction);
  EXPECT_NE(emitted.find("// kernel 'reduce': thread loops"), std::string::npos) << emitted;
  // `t` is threadIdx.x: each segment recomputes it rather than keeping a slot per thread.
  EXPECT_EQ(emitted.find("PerThread"), std::string::npos) << emitted;
  // The segments between the first barrier and the loop, and at the end of the loop body, have no code:
  // they are left out rather than looping over the threads for nothing. The loop's segment is
  // `if (t < half) ...` alone: it loops over the first `half` threads only.
  EXPECT_NE(emitted.find(
                "  }); \n"
                "  for (unsigned half = dispar_block.blockDim.x / 2; half > 0; half >>= 1) { "
                "::dispar::hostk::forEachThreadBelow<false>(static_cast<unsigned int>(half), "
                "[&](const ::dispar::hostk::LoopThread dispar_thread) { const unsigned int t = dispar_thread.idx.x; \n"
                "    if (t < half) sums[t] += sums[t + half];\n"
                "    }); \n"
                "  } ::dispar::hostk::forEachThread<false>([&](const ::dispar::hostk::LoopThread dispar_thread) { "
                "const unsigned int t = dispar_thread.idx.x; \n"),
            std::string::npos)
      << emitted;
  EXPECT_NE(emitted.find("::dispar::hostk::launchThreadLoops(4, 256, 0, &::dispar_host::reduce"), std::string::npos)
      << emitted;
}

// A template kernel: the clone is a template too, its slots typed by the template parameter, and a
// launch of a specialisation launches the clone's specialisation. (The loop variable is kept out of
// expressions of type T: an operator of T could take it by reference, so the planner would not call
// the loop uniform.)
constexpr const char* kTemplate =
    "#include <dispar/dispar.h>\n"
    "template <typename T, int Threads>\n"
    "__global__ void scaleByFirst(T* data) {\n"
    "  __shared__ T first;\n"
    "  T mine = data[blockIdx.x * Threads + threadIdx.x];\n"
    "  if (threadIdx.x == 0) first = mine;\n"
    "  __syncthreads();\n"
    "  for (int round = 0; round < Threads / 64; ++round) {\n"
    "    data[(blockIdx.x * Threads + threadIdx.x + round) % (Threads * gridDim.x)] = mine * first;\n"
    "    __syncthreads();\n"
    "  }\n"
    "}\n"
    "#pragma streamap resource(gpu)\n"
    "VNODE(worker) { scaleByFirst<float, 128><<<4, 128>>>(nullptr); }\n";

TEST(ThreadLoops, TemplateKernelKeepsItsParametersInTheClone) {
  const std::string emitted = emittedSource(kTemplate);
  EXPECT_NE(emitted.find("// kernel 'scaleByFirst': thread loops"), std::string::npos) << emitted;
  EXPECT_NE(emitted.find("::dispar::hostk::PerThread<T> dispar_carried_mine; "), std::string::npos) << emitted;
  EXPECT_NE(
      emitted.find("  for (int round = 0; round < Threads / 64; ++round) { ::dispar::hostk::forEachThread<false>("),
      std::string::npos)
      << emitted;
  EXPECT_NE(emitted.find("::dispar::hostk::launchThreadLoops(4, 128, 0, &::dispar_host::scaleByFirst<float, 128>"),
            std::string::npos)
      << emitted;
}

// A local every thread computes alike is computed once per block, before the segments (and may steer a
// loop holding a barrier); one whose computation could trap (a division by a parameter) stays where the
// kernel wrote it, after the early return that guards it.
TEST(ThreadLoops, UniformLocalsAreComputedOncePerBlockUnlessTheyCouldTrap) {
  const std::string emitted = emittedSource("#include <dispar/dispar.h>\n"
                                            "__global__ void kernel(int* x, int n, int parts) {\n"
                                            "  __shared__ int s[256];\n"
                                            "  if (parts == 0) return;\n"
                                            "  const int rounds = n * 2;\n"
                                            "  const int per = n / parts;\n"
                                            "  s[threadIdx.x] = per;\n"
                                            "  __syncthreads();\n"
                                            "  for (int r = 0; r < rounds; ++r) {\n"
                                            "    if (r == 3) break;\n"
                                            "    x[threadIdx.x] += s[(threadIdx.x + r) % 256];\n"
                                            "    __syncthreads();\n"
                                            "  }\n"
                                            "}\n"
                                            "#pragma streamap resource(gpu)\n"
                                            "VNODE(worker) { kernel<<<4, 256>>>(nullptr, 0, 1); }\n");
  EXPECT_NE(emitted.find("// kernel 'kernel': thread loops"), std::string::npos) << emitted;
  EXPECT_NE(
      emitted.find("sharedVariable<int[256]>([] {}); const int rounds = n * 2; ::dispar::hostk::forEachThread<false>("),
      std::string::npos)
      << emitted;
  EXPECT_NE(
      emitted.find(
          "  if (parts == 0) return ::dispar::hostk::exitThread(dispar_thread);\n  \n  const int per = n / parts;"),
      std::string::npos)
      << emitted;
  // The uniform break stays at block level, between two segments.
  EXPECT_NE(emitted.find("{ \n    if (r == 3) break; ::dispar::hostk::forEachThread<false>("), std::string::npos)
      << emitted;
}

// GPU Gems 3's scan: `offset` starts alike in every thread and changes only by statements of its own, by
// uniform amounts, in the block-level loops. It is one block-level value, changed once per block between
// the segments, so the segments that read it are `if (thid < d)` alone and stop at `d`; `thid == 0` runs
// one thread.
constexpr const char* kBlellochScan =
    "#include <dispar/dispar.h>\n"
    "__global__ void prescan(int* out, const int* in) {\n"
    "  __shared__ int temp[512];\n"
    "  int thid = threadIdx.x;\n"
    "  int offset = 1;\n"
    "  temp[2 * thid] = in[2 * thid];\n"
    "  temp[2 * thid + 1] = in[2 * thid + 1];\n"
    "  for (int d = 256; d > 0; d >>= 1) {\n"
    "    __syncthreads();\n"
    "    if (thid < d) temp[offset * (2 * thid + 2) - 1] += temp[offset * (2 * thid + 1) - 1];\n"
    "    offset *= 2;\n"
    "  }\n"
    "  if (thid == 0) temp[511] = 0;\n"
    "  for (int d = 1; d < 512; d *= 2) {\n"
    "    offset >>= 1;\n"
    "    __syncthreads();\n"
    "    if (thid < d) {\n"
    "      int t = temp[offset * (2 * thid + 1) - 1];\n"
    "      temp[offset * (2 * thid + 1) - 1] = temp[offset * (2 * thid + 2) - 1];\n"
    "      temp[offset * (2 * thid + 2) - 1] += t;\n"
    "    }\n"
    "  }\n"
    "  __syncthreads();\n"
    "  out[2 * thid] = temp[2 * thid];\n"
    "}\n"
    "#pragma streamap resource(gpu)\n"
    "VNODE(worker) { prescan<<<1, 256>>>(nullptr, nullptr); }\n";

TEST(ThreadLoops, LocalsEveryThreadChangesAlikeAreChangedOncePerBlock) {
  const std::string emitted = emittedSource(kBlellochScan);
  EXPECT_NE(emitted.find("// kernel 'prescan': thread loops"), std::string::npos) << emitted;
  EXPECT_EQ(emitted.find("PerThread"), std::string::npos) << emitted;
  EXPECT_NE(emitted.find("sharedVariable<int[512]>([] {}); int offset = 1; ::dispar::hostk::forEachThread<false>("),
            std::string::npos)
      << emitted;
  EXPECT_NE(emitted.find("    ::dispar::hostk::forEachThreadBelow<false>(static_cast<int>(d), [&](const "
                         "::dispar::hostk::LoopThread dispar_thread) { const int thid = dispar_thread.idx.x; \n"
                         "    if (thid < d) temp[offset * (2 * thid + 2) - 1] += temp[offset * (2 * thid + 1) - 1];\n"
                         "    }); offset *= 2; \n"),
            std::string::npos)
      << emitted;
  EXPECT_NE(emitted.find("::dispar::hostk::forEachThreadBelow<false>(static_cast<unsigned>(1), [&](const "
                         "::dispar::hostk::LoopThread dispar_thread) { const int thid = dispar_thread.idx.x; \n"
                         "  if (thid == 0) temp[511] = 0;\n"),
            std::string::npos)
      << emitted;
  EXPECT_NE(emitted.find("}); for (int d = 1; d < 512; d *= 2) { \n    offset >>= 1; \n    "
                         "::dispar::hostk::forEachThreadBelow<false>(static_cast<int>(d), "),
            std::string::npos)
      << emitted;
}

// A local that some thread changes on its own (`if (t == 3) ++k;`), or whose address escapes, stays per
// thread, even where its other changes are uniform.
TEST(ThreadLoops, LocalsAThreadChangesOnItsOwnStayPerThread) {
  const std::string emitted = emittedSource("#include <dispar/dispar.h>\n"
                                            "__device__ void bump(int* p) { *p += 1; }\n"
                                            "__global__ void kernel(int* out) {\n"
                                            "  __shared__ int s[64];\n"
                                            "  int t = threadIdx.x;\n"
                                            "  int k = 1, m = 2;\n"
                                            "  int a = 0;\n"
                                            "  int e = 5;\n"
                                            "  s[t] = t;\n"
                                            "  k *= 2;\n"
                                            "  if (t == 3) ++k;\n"
                                            "  a += 1;\n"
                                            "  bump(&e);\n"
                                            "  __syncthreads();\n"
                                            "  a *= 2;\n"
                                            "  out[t] = s[63 - t] + k + m + a + e;\n"
                                            "}\n"
                                            "#pragma streamap resource(gpu)\n"
                                            "VNODE(worker) { kernel<<<1, 64>>>(nullptr); }\n");
  EXPECT_NE(emitted.find("// kernel 'kernel': thread loops"), std::string::npos) << emitted;
  EXPECT_NE(emitted.find("::dispar::hostk::PerThread<int> dispar_carried_k; "), std::string::npos) << emitted;
  EXPECT_NE(emitted.find("::dispar::hostk::PerThread<int> dispar_carried_e; "), std::string::npos) << emitted;
  EXPECT_EQ(emitted.find("dispar_carried_a"), std::string::npos) << emitted;
  EXPECT_NE(emitted.find("int a = 0; "), std::string::npos) << emitted;
}

TEST(ThreadLoops, KernelWithoutBarrierOrSharedMemoryIsOneLoopOverTheGrid) {
  const std::string emitted = emittedSource("#include <dispar/dispar.h>\n"
                                            "__global__ void axpy(float* y, const float* x, float a, int n) {\n"
                                            "  const int scale = 2;\n"
                                            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                            "  if (i < n) y[i] += a * x[i] * scale;\n"
                                            "}\n"
                                            "#pragma streamap resource(gpu)\n"
                                            "VNODE(worker) { axpy<<<4, 256>>>(nullptr, nullptr, 2.0f, 0); }\n");
  EXPECT_NE(emitted.find("// kernel 'axpy': grid loops"), std::string::npos) << emitted;
  // The block's index and shape are the loop's, as the thread's index is; the parameters are captured by
  // value; a uniform local is computed in the loop, where the block's index is known.
  EXPECT_NE(emitted.find("{ ::dispar::hostk::forEachGridThread<false>([=](const ::dispar::hostk::LoopBlockShape& "
                         "dispar_block, const ::dispar::hostk::LoopThread dispar_thread) { const int scale = 2; \n"
                         "  \n"
                         "  int i = dispar_block.blockIdx.x * dispar_block.blockDim.x + dispar_thread.idx.x;\n"),
            std::string::npos)
      << emitted;
  EXPECT_NE(emitted.find("::dispar::hostk::detail::CloneForm::GridLoops"), std::string::npos) << emitted;
  EXPECT_NE(emitted.find("::dispar::hostk::launchGridLoops(4, 256, 0, &::dispar_host::axpy"), std::string::npos)
      << emitted;
}

// A kernel without a barrier keeps the per-block form when it has block-level state: shared memory, or
// a parameter some thread changes (kept per thread).
TEST(ThreadLoops, KernelWithoutBarrierButWithBlockStateIsOneThreadLoopPerBlock) {
  const std::string emitted =
      emittedSource("#include <dispar/dispar.h>\n"
                    "__global__ void shared(int* x) {\n"
                    "  __shared__ int s[32];\n"
                    "  s[threadIdx.x] = x[threadIdx.x];\n"
                    "  x[threadIdx.x] = s[threadIdx.x] + 1;\n"
                    "}\n"
                    "__global__ void walk(int* x, int n) {\n"
                    "  x += blockIdx.x * blockDim.x;\n"
                    "  if (threadIdx.x < n) x[threadIdx.x] = 1;\n"
                    "}\n"
                    "#pragma streamap resource(gpu)\n"
                    "VNODE(worker) { shared<<<4, 32>>>(nullptr); walk<<<4, 32>>>(nullptr, 0); }\n");
  EXPECT_NE(emitted.find("// kernel 'shared': thread loops\n"), std::string::npos) << emitted;
  EXPECT_NE(emitted.find("// kernel 'walk': thread loops\n"), std::string::npos) << emitted;
  EXPECT_EQ(emitted.find("forEachGridThread"), std::string::npos) << emitted;
}

TEST(ThreadLoops, LocalsDeclaredTogetherAreSplitAndTheCarriedOnesKeptPerThread) {
  // Rodinia's srad declares its locals in one statement and reads some after the last barrier.
  const std::string emitted = emittedSource("#include <dispar/dispar.h>\n"
                                            "__global__ void kernel(float* out, const float* in) {\n"
                                            "  __shared__ float tile[64];\n"
                                            "  float n, s = 1.0f, g2;\n"
                                            "  tile[threadIdx.x] = in[threadIdx.x];\n"
                                            "  __syncthreads();\n"
                                            "  n = tile[(threadIdx.x + 63) % 64];\n"
                                            "  g2 = n * s;\n"
                                            "  tile[threadIdx.x] = g2;\n"
                                            "  __syncthreads();\n"
                                            "  out[threadIdx.x] = n + tile[threadIdx.x];\n"
                                            "}\n"
                                            "#pragma streamap resource(gpu)\n"
                                            "VNODE(worker) { kernel<<<1, 64>>>(nullptr, nullptr); }\n");
  EXPECT_NE(emitted.find("// kernel 'kernel': thread loops"), std::string::npos) << emitted;
  EXPECT_NE(emitted.find("::dispar::hostk::PerThread<float> dispar_carried_n; "), std::string::npos) << emitted;
  EXPECT_NE(emitted.find("  auto& n = dispar_carried_n[dispar_thread]; auto& s = dispar_carried_s.set(dispar_thread, "
                         "1.0f); \n"),
            std::string::npos)
      << emitted;
  // g2 is given a value and read in the second segment only: a plain local of it.
  // n and s are scalars whose address never escapes: a later segment works on a copy, stored back at its end.
  EXPECT_NE(emitted.find("auto s = dispar_carried_s[dispar_thread]; float g2; \n  n = tile[(dispar_thread.idx.x + 63) "
                         "% 64];\n"),
            std::string::npos)
      << emitted;
  EXPECT_EQ(emitted.find("dispar_carried_g2"), std::string::npos) << emitted;
  EXPECT_NE(emitted.find("dispar_carried_n[dispar_thread] = n; dispar_carried_s[dispar_thread] = s; }); "),
            std::string::npos)
      << emitted;
}

TEST(ThreadLoops, SharedTilesDeclaredInAUniformLoopAreHoisted) {
  // The CUDA samples' matrixMul declares its tiles inside the loop over them.
  const std::string emitted = emittedSource("#include <dispar/dispar.h>\n"
                                            "__global__ void kernel(float* c, const float* a, int tiles) {\n"
                                            "  float sum = 0;\n"
                                            "  for (int t = 0; t < tiles; ++t) {\n"
                                            "    __shared__ float As[16];\n"
                                            "    As[threadIdx.x] = a[t * 16 + threadIdx.x];\n"
                                            "    __syncthreads();\n"
                                            "    for (int k = 0; k < 16; ++k) sum += As[k];\n"
                                            "    __syncthreads();\n"
                                            "  }\n"
                                            "  c[threadIdx.x] = sum;\n"
                                            "}\n"
                                            "#pragma streamap resource(gpu)\n"
                                            "VNODE(worker) { kernel<<<1, 16>>>(nullptr, nullptr, 0); }\n");
  EXPECT_NE(emitted.find("// kernel 'kernel': thread loops"), std::string::npos) << emitted;
  EXPECT_NE(emitted.find("loopBlockShape(); ::dispar::hostk::SharedRef<float[16]> As = "), std::string::npos)
      << emitted;
}

TEST(ThreadLoops, AtomicsOnSharedMemoryArePlainUpdates) {
  const std::string emitted = emittedSource("#include <dispar/dispar.h>\n"
                                            "__global__ void kernel(unsigned* bins, const unsigned char* data) {\n"
                                            "  __shared__ unsigned hist[256];\n"
                                            "  hist[threadIdx.x] = 0;\n"
                                            "  __syncthreads();\n"
                                            "  atomicAdd(&hist[data[threadIdx.x]], 1u);\n"
                                            "  atomicMax(hist + 1, 2u);\n"
                                            "  __syncthreads();\n"
                                            "  atomicAdd(&bins[threadIdx.x], hist[threadIdx.x]);\n"
                                            "}\n"
                                            "#pragma streamap resource(gpu)\n"
                                            "VNODE(worker) { kernel<<<1, 256>>>(nullptr, nullptr); }\n");
  // One OS thread runs a block: its shared memory needs no atomic instruction; global memory does.
  EXPECT_NE(emitted.find("::dispar::hostk::block_shared::atomicAdd(&hist[data[dispar_thread.idx.x]], 1u);"),
            std::string::npos)
      << emitted;
  EXPECT_NE(emitted.find("::dispar::hostk::block_shared::atomicMax(hist + 1, 2u);"), std::string::npos) << emitted;
  EXPECT_NE(emitted.find("::dispar::hostk::atomicAdd(&bins[dispar_thread.idx.x], hist[dispar_thread.idx.x]);"),
            std::string::npos)
      << emitted;
}

TEST(ThreadLoops, ParametersThreadsChangeAreKeptPerThread) {
  // The CUDA samples' convolution moves its pointers to the thread's element first.
  const std::string emitted = emittedSource("#include <dispar/dispar.h>\n"
                                            "__global__ void kernel(float* dst, const float* src, int pitch) {\n"
                                            "  __shared__ float tile[64];\n"
                                            "  src += blockIdx.x * pitch + threadIdx.x;\n"
                                            "  dst += blockIdx.x * pitch + threadIdx.x;\n"
                                            "  tile[threadIdx.x] = src[0];\n"
                                            "  __syncthreads();\n"
                                            "  dst[0] = tile[63 - threadIdx.x] + pitch;\n"
                                            "}\n"
                                            "#pragma streamap resource(gpu)\n"
                                            "VNODE(worker) { kernel<<<2, 64>>>(nullptr, nullptr, 64); }\n");
  EXPECT_NE(emitted.find("// kernel 'kernel': thread loops"), std::string::npos) << emitted;
  EXPECT_NE(emitted.find("::dispar::hostk::PerThread<float *> dispar_carried_dst(dst); "), std::string::npos)
      << emitted;
  EXPECT_NE(
      emitted.find("{ auto dst = dispar_carried_dst[dispar_thread]; \n  dst[0] = tile[63 - dispar_thread.idx.x] + "
                   "pitch;\n dispar_carried_dst[dispar_thread] = dst; }); }"),
      std::string::npos)
      << emitted;
}

TEST(ThreadLoops, AChangedParameterAndACarriedLocalOfItsNameGetSlotsOfTheirOwn) {
  const std::string emitted = emittedSource("#include <dispar/dispar.h>\n"
                                            "__global__ void kernel(int* out, int n) {\n"
                                            "  n += threadIdx.x;\n"
                                            "  if (blockIdx.x == 0) {\n"
                                            "    int n = 2 * threadIdx.x + out[0];\n"
                                            "    __syncthreads();\n"
                                            "    out[threadIdx.x] = n;\n"
                                            "  }\n"
                                            "  __syncthreads();\n"
                                            "  out[threadIdx.x] += n;\n"
                                            "}\n"
                                            "#pragma streamap resource(gpu)\n"
                                            "VNODE(worker) { kernel<<<1, 32>>>(nullptr, 0); }\n");
  EXPECT_NE(emitted.find("// kernel 'kernel': thread loops"), std::string::npos) << emitted;
  EXPECT_NE(emitted.find("::dispar::hostk::PerThread<int> dispar_carried_n; "), std::string::npos) << emitted;
  EXPECT_NE(emitted.find("::dispar::hostk::PerThread<int> dispar_carried_n_2(n); "), std::string::npos) << emitted;
}

TEST(ThreadLoops, GridStrideLoopsRunIterationByIterationAcrossTheBlock) {
  const std::string emitted =
      emittedSource("#include <dispar/dispar.h>\n"
                    "__global__ void count(unsigned* bins, const unsigned char* data, int n) {\n"
                    "  __shared__ unsigned hist[256];\n"
                    "  hist[threadIdx.x] = 0;\n"
                    "  __syncthreads();\n"
                    "  for (int pos = blockIdx.x * blockDim.x + threadIdx.x; pos < n; pos += blockDim.x * gridDim.x)\n"
                    "    atomicAdd(&hist[data[pos]], 1u);\n"
                    "  __syncthreads();\n"
                    "  atomicAdd(&bins[threadIdx.x], hist[threadIdx.x]);\n"
                    "}\n"
                    "#pragma streamap resource(gpu)\n"
                    "VNODE(worker) { count<<<4, 256>>>(nullptr, nullptr, 0); }\n");
  EXPECT_NE(emitted.find("::dispar::hostk::forEachThreadStrided<false>([&](const ::dispar::hostk::LoopThread "
                         "dispar_thread, const long long dispar_iteration, bool& dispar_more) { \n"
                         "  int pos = static_cast<int>(dispar_block.blockIdx.x * dispar_block.blockDim.x + "
                         "dispar_thread.idx.x) + static_cast<int>(dispar_iteration) * static_cast<int>("
                         "dispar_block.blockDim.x * dispar_block.gridDim.x); if (!(pos < n)) dispar_more = false; "
                         "else\n"
                         "    ::dispar::hostk::block_shared::atomicAdd(&hist[data[pos]], 1u);\n"),
            std::string::npos)
      << emitted;
  // A loop that may leave early, or whose start reads memory, runs thread after thread as written.
  const std::string early =
      emittedSource("#include <dispar/dispar.h>\n"
                    "__global__ void find(int* out, const int* data, int n) {\n"
                    "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)\n"
                    "    if (data[i] == 7) { out[0] = i; break; }\n"
                    "}\n"
                    "#pragma streamap resource(gpu)\n"
                    "VNODE(worker) { find<<<4, 256>>>(nullptr, nullptr, 0); }\n");
  EXPECT_EQ(early.find("forEachThreadStrided"), std::string::npos) << early;
  EXPECT_NE(early.find("// kernel 'find': grid loops"), std::string::npos) << early;
}

struct FiberCase {
  const char* name;
  const char* kernel;  // declares `kernel`, launched as `launch`
  const char* launch;
  const char* reason;
};

const FiberCase kFiberCases[] = {
    {"BarrierInThreadDependentLoop",
     "__global__ void kernel(int* x, int n) {\n"
     "  for (int r = 0; r < threadIdx.x; ++r) { x[threadIdx.x] += r; __syncthreads(); }\n"
     "}\n",
     "kernel<<<1, 32>>>(nullptr, 0)",
     "a barrier is inside a loop or branch whose condition may differ between threads"},
    {"BarrierInBranchOnALocal",
     "__global__ void kernel(int* x, int n) {\n"
     "  int limit = x[threadIdx.x];\n"
     "  if (limit > 4) { x[threadIdx.x] = 1; __syncthreads(); }\n"
     "}\n",
     "kernel<<<1, 32>>>(nullptr, 0)",
     "a barrier is inside a loop or branch whose condition may differ between threads"},
    {"LoopVariableChangedInTheBody",
     "__global__ void kernel(int* x, int n) {\n"
     "  for (int r = 0; r < n; ++r) { r += x[threadIdx.x]; __syncthreads(); }\n"
     "}\n",
     "kernel<<<1, 32>>>(nullptr, 0)",
     "a barrier is inside a loop or branch whose condition may differ between threads"},
    {"BreakInLoopWithBarrier",
     "__global__ void kernel(int* x, int n) {\n"
     "  for (int r = 0; r < n; ++r) { if (x[threadIdx.x]) break; __syncthreads(); }\n"
     "}\n",
     "kernel<<<1, 32>>>(nullptr, 0)", "a loop holding a barrier has a break or continue that not every thread takes"},
    {"ContinueInSwitchInLoopWithBarrier",
     "__global__ void kernel(int* x, int n) {\n"
     "  for (int r = 0; r < n; ++r) { switch (x[threadIdx.x]) { case 1: break; default: continue; } __syncthreads(); "
     "}\n"
     "}\n",
     "kernel<<<1, 32>>>(nullptr, 0)", "a loop holding a barrier has a break or continue that not every thread takes"},
    {"BarrierInDoLoop",
     "__global__ void kernel(int* x, int n) {\n"
     "  do { x[threadIdx.x] = n; __syncthreads(); } while (n > 0);\n"
     "}\n",
     "kernel<<<1, 32>>>(nullptr, 0)", "a barrier is inside a do, switch or range-based for statement"},
    {"WarpShuffle",
     "__global__ void kernel(int* x, int n) {\n"
     "  x[threadIdx.x] = __shfl_down_sync(0xffffffffu, x[threadIdx.x], 1);\n"
     "  __syncthreads();\n"
     "}\n",
     "kernel<<<1, 32>>>(nullptr, 0)", "it uses the warp-level '__shfl_down_sync' (the lanes of a warp meet there)"},
    {"ThreadIndexInLambda",
     "__global__ void kernel(int* x, int n) {\n"
     "  auto at = [x]() { return x[threadIdx.x]; };\n"
     "  __syncthreads();\n"
     "  x[0] = at();\n"
     "}\n",
     "kernel<<<1, 32>>>(nullptr, 0)", "threadIdx is used inside a lambda"},
    {"BarrierVote",
     "__global__ void kernel(int* x, int n) {\n"
     "  __syncthreads_count(x[threadIdx.x] > n);\n"
     "}\n",
     "kernel<<<1, 32>>>(nullptr, 0)", "it uses __syncthreads_count"},
    {"AssignsStructParameter",
     "struct Pair { int a, b; };\n"
     "__global__ void kernel(int* x, Pair p) {\n"
     "  p.a += threadIdx.x;\n"
     "  __syncthreads();\n"
     "  x[threadIdx.x] = p.a;\n"
     "}\n",
     "kernel<<<1, 32>>>(nullptr, Pair{})", "it assigns to parameter 'p', which cannot be kept per thread"},
    {"ArrayAcrossBarrier",
     "__global__ void kernel(int* x, int n) {\n"
     "  int a[2] = {n, n};\n"
     "  __syncthreads();\n"
     "  x[threadIdx.x] = a[1];\n"
     "}\n",
     "kernel<<<1, 32>>>(nullptr, 0)", "'a' is a reference or array used across a barrier"},
    {"SeveralDeclaratorsAcrossBarrier",
     "__global__ void kernel(int* x, int n) {\n"
     "  int a = n, b[2] = {1, 2};\n"
     "  __syncthreads();\n"
     "  x[threadIdx.x] = a + b[0];\n"
     "}\n",
     "kernel<<<1, 32>>>(nullptr, 0)",
     "'a' is used across a barrier and declared with others that cannot be declared alone"},
    {"HelperWithBarrier",
     "__device__ void helper() { __syncthreads(); }\n"
     "__global__ void kernel(int* x, int n) {\n"
     "  x[threadIdx.x] = n;\n"
     "  __syncthreads();\n"
     "  helper();\n"
     "}\n",
     "kernel<<<1, 32>>>(nullptr, 0)",
     "it calls 'helper', which has a barrier, __shared__ memory or a warp-level operation"},
    {"NestedShared",
     "__global__ void kernel(int* x, int n) {\n"
     "  if (n) { __shared__ int s; s = n; x[0] = s; }\n"
     "  __syncthreads();\n"
     "}\n",
     "kernel<<<1, 32>>>(nullptr, 0)", "a __shared__ declaration is not a statement of the body or of a uniform block"},
    {"Goto",
     "__global__ void kernel(int* x, int n) {\n"
     "  if (n) goto done;\n"
     "  x[threadIdx.x] = 1;\n"
     "done:\n"
     "  __syncthreads();\n"
     "}\n",
     "kernel<<<1, 32>>>(nullptr, 0)", "it uses goto or labels"},
    {"TemplateLocalOfDeducedType",
     "template <class T>\n"
     "__global__ void kernel(T* x, int n) {\n"
     "  auto v = x[threadIdx.x] * n;\n"
     "  __syncthreads();\n"
     "  x[threadIdx.x] = v;\n"
     "}\n",
     "kernel<int><<<1, 32>>>(nullptr, 0)",
     "'v' is used across a barrier and its type is deduced from a template parameter"},
};

class FiberFormTest : public ::testing::TestWithParam<FiberCase> {};

TEST_P(FiberFormTest, KeepsFibersAndSaysWhy) {
  const FiberCase& c = GetParam();
  const std::string emitted = emittedSource(std::string("#include <dispar/dispar.h>\n") + c.kernel +
                                            "#pragma streamap resource(gpu)\nVNODE(worker) { " + c.launch + "; }\n");
  EXPECT_NE(emitted.find(std::string("// kernel 'kernel': fibers, because ") + c.reason + "\n"), std::string::npos)
      << emitted;
  EXPECT_EQ(emitted.find("forEachThread"), std::string::npos) << emitted;
  EXPECT_EQ(emitted.find("launchThreadLoops"), std::string::npos) << emitted;
  EXPECT_NE(emitted.find("::dispar::hostk::launch(1, 32, 0, &::dispar_host::kernel"), std::string::npos) << emitted;
}

INSTANTIATE_TEST_SUITE_P(ThreadLoops, FiberFormTest, ::testing::ValuesIn(kFiberCases),
                         [](const ::testing::TestParamInfo<FiberCase>& info) { return info.param.name; });

}  // namespace
}  // namespace dispar::testing
