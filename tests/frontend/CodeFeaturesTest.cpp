// What the frontend knows of each VNODE's code for the mapper's cost history and prediction: its code
// fingerprint and its static code features (docs/language.md, "The RTG file", "Code features").
#include "FrontendTestSupport.h"

#include "frontend/CodeFeatureTable.h"

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <regex>
#include <sstream>

namespace dispar::testing {
namespace {

const lang::VnodeModel& vnode(const lang::ProgramModel& program, const std::string& name) {
  const int index = program.findVnode(name);
  EXPECT_GE(index, 0) << name;
  return program.vnodes.at(static_cast<std::size_t>(index < 0 ? 0 : index));
}

double feature(const lang::VnodeModel& v, const std::string& name) {
  auto it = v.features.find(name);
  EXPECT_NE(it, v.features.end()) << v.name << " has no feature " << name;
  return it == v.features.end() ? -1 : it->second;
}

// Every feature of the table, and no other, for every VNODE: the vectors of all programs line up.
void expectFullFeatureVectors(const lang::ProgramModel& program) {
  for (const lang::VnodeModel& v : program.vnodes) {
    EXPECT_EQ(v.features.size(), frontend::kCodeFeatureCount) << v.name;
    for (const frontend::CodeFeatureInfo& info : frontend::kCodeFeatureTable)
      EXPECT_EQ(v.features.count(info.name), 1u) << v.name << " lacks " << info.name;
  }
}

const char* const kWeightedSource = R"(#include <dispar/dispar.h>
#include <cmath>
extern "C" void cblas_sscal(int n, float alpha, float* x, int incx);
extern "C" void fftwf_execute(void* plan);
PIPE(float, xs);
PIPE(float, ys);

VNODE(src, OUT(xs)) { for (int i = 0; i < 4; ++i) xs.write(float(i)); }

static float smooth(const float* v) {
  float s = 0;
  for (int k = 0; k < 4; k += 2) s += v[k];
  return s;
}

VNODE(work, IN(xs), OUT(ys)) {
  float a[8], b[8] = {0}, c = 1.0f, x;
  while (xs.read(x)) {
    for (int i = 0; i < 8; ++i) { a[i] = b[i] * 2.0f + c; }
    c = sqrtf(x) + std::sqrt(x);
    cblas_sscal(8, 0.5f, a, 1);
    fftwf_execute(nullptr);
    ys.write(smooth(a) + x);
  }
}

VNODE(snk, IN(ys)) { float y; while (ys.read(y)) {} }
)";

// `work`, by hand. The while loop's trip count is not constant: weight 1 (per message), depth 1.
//   while condition: branch 1; xs.read(x): call 1 (a dispar:: port call: no library call)
//   for (i < 8, ++i): trip count 8, depth 2: condition branch 8, ++i arith 8
//     a[i] = b[i] * 2.0f + c: a[i], b[i] memory 8 + 8; *, + arith 8 + 8
//   c = sqrtf(x) + std::sqrt(x): calls 2, + arith 1, sqrtf lib_calls_other 1 (std:: is not counted)
//   cblas_sscal: call 1, lib_calls_blas 1; fftwf_execute: call 1, lib_calls_fft 1
//   ys.write(smooth(a) + x): calls 2 (write, smooth), + arith 1, and smooth's code at weight 1, depth 1:
//     for (k = 0; k < 4; k += 2): trip count 2, depth 1 (so 1 + 1 = 2 under the call)
//       condition branch 2, k += 2 arith 2, s += v[k] arith 2 and memory 2
// arith 8 + 16 + 1 + 1 + 4 = 30; memory 16 + 2 = 18; branch 1 + 8 + 2 = 11;
// calls 1 + 2 + 1 + 1 + 2 = 7; loop_depth 2; bytes written per message: one float, 4.
TEST(CodeFeatures, CountsAreWeightedByConstantTripCountsAndFollowCalls) {
  ParseOutcome outcome = parseSource(kWeightedSource);
  ASSERT_TRUE(outcome.ok) << outcome.diagnostics;
  const lang::ProgramModel& p = outcome.result.program;
  expectFullFeatureVectors(p);
  const lang::VnodeModel& work = vnode(p, "work");
  EXPECT_EQ(feature(work, "arith_ops"), 30);
  EXPECT_EQ(feature(work, "memory_ops"), 18);
  EXPECT_EQ(feature(work, "branch_ops"), 11);
  EXPECT_EQ(feature(work, "call_ops"), 7);
  EXPECT_EQ(feature(work, "loop_depth"), 2);
  EXPECT_EQ(feature(work, "kernel_launches"), 0);
  EXPECT_EQ(feature(work, "kernel_arith_ops"), 0);
  EXPECT_EQ(feature(work, "kernel_memory_ops"), 0);
  EXPECT_EQ(feature(work, "lib_calls_blas"), 1);
  EXPECT_EQ(feature(work, "lib_calls_fft"), 1);
  EXPECT_EQ(feature(work, "lib_calls_other"), 1);
  EXPECT_EQ(feature(work, "bytes_written_per_message"), 4);
  // src: for (i < 4): branch 4, ++i arith 4, xs.write call 4; depth 1. snk writes nothing.
  const lang::VnodeModel& src = vnode(p, "src");
  EXPECT_EQ(feature(src, "branch_ops"), 4);
  EXPECT_EQ(feature(src, "arith_ops"), 4);
  EXPECT_EQ(feature(src, "call_ops"), 4);
  EXPECT_EQ(feature(src, "loop_depth"), 1);
  EXPECT_EQ(feature(vnode(p, "snk"), "bytes_written_per_message"), 0);
}

// The communication directive's volume, where given, is what a message carries.
TEST(CodeFeatures, BytesWrittenFollowTheCommunicationVolume) {
  ParseOutcome outcome =
      parseSource("#include <dispar/dispar.h>\n"
                  "#include <vector>\n"
                  "PIPE(float, frames);\n"
                  "PIPE(double, sums);\n"
                  "PIPE(double, copies);\n"
                  "#pragma streamap communication(frames) volume(4096)\n"
                  "VNODE(src, OUT(frames)) { frames.write(std::vector<float>(1024)); }\n"
                  "VNODE(mid, IN(frames), OUT(sums), OUT(copies)) {\n"
                  "  std::vector<float> f;\n"
                  "  while (frames.read(f)) { sums.write(double(f[0])); copies.write(double(f[1])); }\n"
                  "}\n"
                  "VNODE(snk, IN(sums), IN(copies)) { double d; while (sums.read(d) && copies.read(d)) {} }\n");
  ASSERT_TRUE(outcome.ok) << outcome.diagnostics;
  const lang::ProgramModel& p = outcome.result.program;
  EXPECT_EQ(feature(vnode(p, "src"), "bytes_written_per_message"), 4096);
  EXPECT_EQ(feature(vnode(p, "mid"), "bytes_written_per_message"), 16);
  // f[0], f[1] on a vector are memory accesses, not calls; && is a branch.
  EXPECT_EQ(feature(vnode(p, "mid"), "memory_ops"), 2);
  EXPECT_EQ(feature(vnode(p, "mid"), "call_ops"), 3);
  EXPECT_EQ(feature(vnode(p, "snk"), "branch_ops"), 2);
}

// A launch counts once per launch (its grid is not known), its kernel's operations apart from the
// host code's; the configuration <<<...>>> is no call.
//   kernel: blockIdx.x * blockDim.x + threadIdx.x: arith 2; v[i] = v[i] * k: memory 2, arith 1
//   host: for (r < 3): branch 3, ++r arith 3, 3 launches; while: branch 1; read, write: calls 2
TEST(CodeFeatures, KernelLaunchesCountTheirKernelsCodeApart) {
  ParseOutcome outcome =
      parseSource("#include <dispar/dispar.h>\n"
                  "PIPE(float, xs);\n"
                  "PIPE(float, ys);\n"
                  "__global__ void scale(float* v, float k) {\n"
                  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "  v[i] = v[i] * k;\n"
                  "}\n"
                  "VNODE(src, OUT(xs)) { xs.write(1.0f); }\n"
                  "VNODE(gpu, IN(xs), OUT(ys)) {\n"
                  "  float x; float* d = nullptr;\n"
                  "  while (xs.read(x)) { for (int r = 0; r < 3; ++r) scale<<<4, 256>>>(d, x); ys.write(x); }\n"
                  "}\n"
                  "VNODE(snk, IN(ys)) { float y; while (ys.read(y)) {} }\n",
                  "gpu.dsp");
  ASSERT_TRUE(outcome.ok) << outcome.diagnostics;
  const lang::ProgramModel& p = outcome.result.program;
  expectFullFeatureVectors(p);
  const lang::VnodeModel& gpu = vnode(p, "gpu");
  EXPECT_EQ(feature(gpu, "kernel_launches"), 3);
  EXPECT_EQ(feature(gpu, "kernel_arith_ops"), 9);
  EXPECT_EQ(feature(gpu, "kernel_memory_ops"), 6);
  EXPECT_EQ(feature(gpu, "arith_ops"), 3);
  EXPECT_EQ(feature(gpu, "memory_ops"), 0);
  EXPECT_EQ(feature(gpu, "branch_ops"), 4);
  EXPECT_EQ(feature(gpu, "call_ops"), 2);
  EXPECT_EQ(feature(gpu, "loop_depth"), 2);
}

// Loops: which trip counts are constant, and recursion counted once.
TEST(CodeFeatures, TripCountsAndRecursion) {
  ParseOutcome outcome =
      parseSource("#include <dispar/dispar.h>\n"
                  "PIPE(int, a);\n"
                  "constexpr int kN = 10;\n"
                  "int down(int n) { return n <= 0 ? 0 : down(n - 1) + 1; }\n"
                  "VNODE(src, OUT(a)) {\n"
                  "  int s = 0;\n"
                  "  for (int i = kN; i > 0; i -= 3) s += i;\n"  // 10, 7, 4, 1: 4 trips; s += i, i -= 3: 8
                  "  for (int i = 0; i <= 4; i++) s ^= i;\n"     // 5 trips: 10
                  "  for (int i = 0; i != 6; i += 2) s |= i;\n"  // 3 trips: 6
                  "  for (int i = 0; i < s; ++i) s -= 1;\n"      // not constant: 1 trip: 2
                  "  a.write(down(s));\n"                        // <=, ?: branch; - and + arith 2
                  "}\n"
                  "VNODE(snk, IN(a)) { int v; while (a.read(v)) {} }\n");
  ASSERT_TRUE(outcome.ok) << outcome.diagnostics;
  const lang::VnodeModel& src = vnode(outcome.result.program, "src");
  EXPECT_EQ(feature(src, "arith_ops"), 8 + 10 + 6 + 2 + 2);
  // Loop conditions 4 + 5 + 3 + 1, and down's ?: once.
  EXPECT_EQ(feature(src, "branch_ops"), 4 + 5 + 3 + 1 + 1);
  // a.write, down, and down's recursive call (its code not counted again).
  EXPECT_EQ(feature(src, "call_ops"), 3);
  EXPECT_EQ(feature(src, "loop_depth"), 1);
}

// Two versions of one program: the first with its comments, blank lines and indentation, the second
// with `edit` applied.
std::string fingerprintOf(const std::string& source, const std::string& name, const std::string& file = "fp.dsp") {
  ParseOutcome outcome = parseSource(source, file);
  EXPECT_TRUE(outcome.ok) << outcome.diagnostics;
  if (!outcome.ok) return {};
  const lang::VnodeModel& v = vnode(outcome.result.program, name);
  EXPECT_TRUE(std::regex_match(v.fingerprint, std::regex("[0-9a-f]{16}"))) << v.fingerprint;
  return v.fingerprint;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

const char* const kFingerprintSource = R"(#include <dispar/dispar.h>
#include <cassert>
PIPE(float, xs);
PIPE(float, ys);
static float scaled(float v) { return v * 2.0f; }
VNODE(src, OUT(xs)) { for (int i = 0; i < 4; ++i) xs.write(float(i)); }
VNODE(work, IN(xs), OUT(ys)) {
  float x;
  while (xs.read(x)) { assert(x >= 0); ys.write(scaled(x) + 1.0f); }
}
VNODE(snk, IN(ys)) { float y; while (ys.read(y)) {} }
)";

TEST(CodeFingerprint, IgnoresCommentsWhitespaceLinesAndThePath) {
  const std::string base = fingerprintOf(kFingerprintSource, "work");
  // Comments, a blank line moving everything down (assert's __LINE__ with it), other indentation, and
  // another file name (assert's __FILE__).
  std::string moved =
      replaced(kFingerprintSource, "PIPE(float, xs);", "// input\n\nPIPE(float, xs);  /* the samples */");
  moved = replaced(moved, "  float x;\n", "      float   x ;  // one sample\n");
  moved = replaced(moved, "{ return v * 2.0f; }", "{\n  // doubled\n  return v*2.0f;\n}");
  EXPECT_EQ(fingerprintOf(moved, "work", "elsewhere.dsp"), base);
  EXPECT_EQ(fingerprintOf(moved, "src", "elsewhere.dsp"), fingerprintOf(kFingerprintSource, "src"));
}

TEST(CodeFingerprint, ChangesWithAnyTokenOfTheVnodeOrWhatItCalls) {
  const std::string work = fingerprintOf(kFingerprintSource, "work");
  const std::string src = fingerprintOf(kFingerprintSource, "src");
  EXPECT_NE(work, src);
  // One token of the VNODE's body.
  EXPECT_NE(fingerprintOf(replaced(kFingerprintSource, "+ 1.0f", "+ 2.0f"), "work"), work);
  EXPECT_NE(fingerprintOf(replaced(kFingerprintSource, "x >= 0", "x > 0"), "work"), work);
  // One token of the helper it calls: `work` changes, `src`, which does not call it, does not.
  const std::string helperEdited = replaced(kFingerprintSource, "v * 2.0f", "v * 3.0f");
  EXPECT_NE(fingerprintOf(helperEdited, "work"), work);
  EXPECT_EQ(fingerprintOf(helperEdited, "src"), src);
  // The helper's signature is its code too.
  EXPECT_NE(fingerprintOf(replaced(kFingerprintSource, "scaled(float v)", "scaled(double v)"), "work"), work);
}

TEST(CodeFingerprint, FollowsCallsTransitivelyIntoKernels) {
  const char* source = "#include <dispar/dispar.h>\n"
                       "PIPE(float, xs);\n"
                       "__device__ float twice(float v) { return v * 2.0f; }\n"
                       "__global__ void scale(float* v) { v[threadIdx.x] = twice(v[threadIdx.x]); }\n"
                       "static void launch(float* d) { scale<<<1, 32>>>(d); }\n"
                       "VNODE(src, OUT(xs)) { float* d = nullptr; launch(d); xs.write(1.0f); }\n"
                       "VNODE(snk, IN(xs)) { float x; while (xs.read(x)) {} }\n";
  const std::string base = fingerprintOf(source, "src", "k.dsp");
  EXPECT_NE(fingerprintOf(replaced(source, "v * 2.0f", "v * 4.0f"), "src", "k.dsp"), base);
  EXPECT_EQ(fingerprintOf(replaced(source, "v * 2.0f", "v  *  2.0f  "), "src", "k.dsp"), base);
  EXPECT_EQ(fingerprintOf(replaced(source, "{ return v", "{\n  return v"), "src", "k.dsp"), base);
}

TEST(CodeFingerprint, VnodeArrayMembersShareTheirFunctionsFingerprint) {
  ParseOutcome outcome = parseSource("#include <dispar/dispar.h>\n"
                                     "constexpr int kStages = 3;\n"
                                     "PIPE_ARRAY(long, chain, kStages + 1);\n"
                                     "VNODE(src, OUT(chain[0])) { for (long v = 0; v < 10; ++v) chain[0].write(v); }\n"
                                     "VNODE_ARRAY(stage, kStages, i, IN(chain[i]), OUT(chain[i + 1])) {\n"
                                     "  long v;\n"
                                     "  while (chain[i].read(v)) chain[i + 1].write(v + i + 1);\n"
                                     "}\n"
                                     "VNODE(sink, IN(chain[kStages])) { long v; while (chain[kStages].read(v)) {} }\n");
  ASSERT_TRUE(outcome.ok) << outcome.diagnostics;
  const lang::ProgramModel& p = outcome.result.program;
  expectFullFeatureVectors(p);
  const lang::VnodeModel& first = vnode(p, "stage[0]");
  EXPECT_EQ(first.fingerprint.size(), 16u);
  EXPECT_EQ(vnode(p, "stage[1]").fingerprint, first.fingerprint);
  EXPECT_EQ(vnode(p, "stage[2]").fingerprint, first.fingerprint);
  EXPECT_NE(vnode(p, "src").fingerprint, first.fingerprint);
  // chain[i] selects a port: no memory access. v + i + 1 and i + 1: arith 3; while: branch 1.
  EXPECT_EQ(feature(first, "memory_ops"), 0);
  EXPECT_EQ(feature(first, "arith_ops"), 3);
  EXPECT_EQ(feature(first, "bytes_written_per_message"), 8);
}

std::string readSource(const std::string& relative) {
  std::ifstream in(std::string(DISPAR_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// docs/language.md, "Code features", lists the table verbatim.
TEST(CodeFeatures, LanguageReferenceListsTheTable) {
  const std::string docs = readSource("docs/language.md");
  const std::size_t begin = docs.find("<!-- code-features:begin -->"), end = docs.find("<!-- code-features:end -->");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  const std::string listed = docs.substr(begin, end - begin);
  for (const frontend::CodeFeatureInfo& info : frontend::kCodeFeatureTable) {
    std::string description;  // a | in a Markdown table cell is written \|
    for (const char* c = info.description; *c; ++c) description += *c == '|' ? std::string("\\|") : std::string(1, *c);
    EXPECT_NE(listed.find(std::string("| `") + info.name + "` | " + description + " |"), std::string::npos)
        << info.name << " is not in docs/language.md as the table has it";
  }
}

}  // namespace
}  // namespace dispar::testing
