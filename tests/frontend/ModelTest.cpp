// The program model the frontend extracts: VNODEs, ports, pipes, directives, classification.
#include "FrontendTestSupport.h"

#include "dispar_lang/Rtg.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace dispar::testing {
namespace {

std::string readExample(const std::string& relative) {
  std::ifstream in(std::string(DISPAR_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Clang hands the consumer the call operators of generic lambdas it instantiates when a function
// ends; they must not count as the declaration that follows a directive.
TEST(Model, GenericLambdasDoNotHideTheVnodeADirectiveAppliesTo) {
  ParseOutcome outcome =
      parseSource("#include <dispar/dispar.h>\n"
                  "PIPE(int, a);\n"
                  "VNODE(src, OUT(a)) { auto send = [&](auto v) { a.write(int(v)); }; send(1); send(2.0); }\n"
                  "#pragma streamap resource(cpu) replicas(2)\n"
                  "VNODE(snk, IN(a)) { auto same = [](auto x) { return x; }; int v; while (a.read(v)) same(v); }\n");
  ASSERT_TRUE(outcome.ok) << outcome.diagnostics;
  ASSERT_EQ(outcome.result.program.vnodes.size(), 2u);
  EXPECT_EQ(outcome.result.program.vnodes[1].replicas, 2);
}

// A directive a macro produces (`_Pragma` in its body) belongs to the VNODE of the same expansion, not to
// the next VNODE of the file (issue 11: every stage used to shift its directive onto its successor).
TEST(Model, DirectivesFromMacrosApplyToTheVnodeOfTheSameExpansion) {
  ParseOutcome outcome =
      parseSource("#include <dispar/dispar.h>\n"
                  "#include <cstdio>\n"
                  "#define STAGE(name, I, O, K) _Pragma(\"streamap resource(cpu) replicas(2)\") \\\n"
                  "  VNODE(name, IN(I), OUT(O)) { int x; while (I.read(x)) O.write(x * K); }\n"
                  "#define ON_CPU3 _Pragma(\"streamap resource(cpu) replicas(2) cost(3)\")\n"
                  "#define PLAIN(name, I, O) VNODE(name, IN(I), OUT(O)) { int x; while (I.read(x)) O.write(x); }\n"
                  "PIPE(int, a); PIPE(int, b); PIPE(int, c); PIPE(int, d); PIPE(int, e);\n"
                  "VNODE(src, OUT(a)) { for (int i = 0; i < 10; ++i) a.write(i); }\n"
                  "STAGE(s1, a, b, 2)\n"
                  "STAGE(s2, b, c, 3)\n"
                  "ON_CPU3 PLAIN(p1, c, d)\n"  // a directive-only macro, then a macro defining one VNODE
                  "#pragma streamap resource(cpu) replicas(2) cost(4)\n"
                  "PLAIN(p2, d, e)\n"  // a file directive before a macro defining one VNODE
                  "VNODE(snk, IN(e)) { long s = 0; int x; while (e.read(x)) s += x; std::printf(\"s=%ld\\n\", s); }\n");
  ASSERT_TRUE(outcome.ok) << outcome.diagnostics;
  const lang::ProgramModel& p = outcome.result.program;
  ASSERT_EQ(p.vnodes.size(), 6u);
  struct Expected {
    const char* name;
    int replicas;
    double cost;
  };
  const Expected expected[] = {{"src", 1, 1.0}, {"s1", 2, 1.0}, {"s2", 2, 1.0},
                               {"p1", 2, 3.0},  {"p2", 2, 4.0}, {"snk", 1, 1.0}};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(p.vnodes[i].name, expected[i].name);
    EXPECT_EQ(p.vnodes[i].replicas, expected[i].replicas) << p.vnodes[i].name;
    EXPECT_EQ(p.vnodes[i].cost, expected[i].cost) << p.vnodes[i].name;
  }
}

// Counts from constant expressions: replicas(kBands - 1), per member of a family from its index
// (replicas(kWidth[i])), weights from constant expressions; and a pipe read by several VNODEs under
// split(duplicate), readers in source order.
TEST(Model, ConstantExpressionsPerMemberCountsAndSeveralReaders) {
  ParseOutcome outcome =
      parseSource("#include <dispar/dispar.h>\n"
                  "constexpr int kBands = 3;\n"
                  "constexpr int kWidth[kBands] = {1, 3, 2};\n"
                  "constexpr int kWeights[] = {2, 1};\n"
                  "PIPE(int, input); PIPE(int, dealt); PIPE_ARRAY(int, out, kBands);\n"
                  "#pragma streamap communication(input) split(duplicate)\n"
                  "#pragma streamap communication(dealt) join(rr(kWeights[0] * 2, kBands - 2)) window(kBands * 8)\n"
                  "VNODE(src, OUT(input)) {}\n"
                  "#pragma streamap resource(cpu) replicas(kWidth[i])\n"
                  "VNODE_ARRAY(band, kBands, i, IN(input), OUT(out[i])) {}\n"
                  "#pragma streamap resource(cpu) replicas(kBands - 1)\n"
                  "VNODE(other, IN(input), OUT(dealt)) {}\n"
                  "VNODE(sink, IN(out[0]), IN(out[1]), IN(out[2]), IN(dealt)) {}\n");
  ASSERT_TRUE(outcome.ok) << outcome.diagnostics;
  const lang::ProgramModel& p = outcome.result.program;
  ASSERT_EQ(p.vnodes.size(), 6u);
  EXPECT_EQ(p.vnodes[1].replicas, 1);  // band[0]
  EXPECT_EQ(p.vnodes[2].replicas, 3);
  EXPECT_EQ(p.vnodes[3].replicas, 2);
  EXPECT_EQ(p.vnodes[4].replicas, 2);  // other
  EXPECT_EQ(p.pipes[0].readers, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(p.pipes[1].joinWeights, (std::vector<int>{4, 1}));
  EXPECT_EQ(p.pipes[1].window, 24u);
  EXPECT_EQ(p.pipes[1].readers, (std::vector<int>{5}));
}

// Per-member resource and cost in a family (resource(i < kOnGpu ? gpu : cpu), cost(kCost[i])), floating
// constants and C's conditional, whose unchosen operand is not evaluated (kWidth[i] for i = 3 is outside).
TEST(Model, PerMemberResourceAndCost) {
  ParseOutcome outcome =
      parseSource("#include <dispar/dispar.h>\n"
                  "constexpr int kMembers = 4, kOnGpu = 1;\n"
                  "constexpr double kCost[kMembers] = {4.0, 0.5, 1.5, 2};\n"
                  "constexpr int kWidth[] = {1, 2, 3};\n"
                  "PIPE_ARRAY(int, out, kMembers);\n"
                  "#pragma streamap resource(i < kOnGpu ? gpu : cpu) cost(kCost[i] * 2) "
                  "replicas(i < 3 ? kWidth[i] : 1)\n"
                  "VNODE_ARRAY(stage, kMembers, i, OUT(out[i])) {}\n"
                  "#pragma streamap resource(kOnGpu > 1 || kCost[1] < 1 ? cpu : gpu) cost(kCost[3] / 4 + 1)\n"
                  "VNODE(sink, IN(out[0]), IN(out[1]), IN(out[2]), IN(out[3])) {}\n");
  ASSERT_TRUE(outcome.ok) << outcome.diagnostics;
  const lang::ProgramModel& p = outcome.result.program;
  ASSERT_EQ(p.vnodes.size(), 5u);
  const lang::Requirement requirement[] = {lang::Requirement::CG, lang::Requirement::CO, lang::Requirement::CO,
                                           lang::Requirement::CO, lang::Requirement::CO};
  const double cost[] = {8.0, 1.0, 3.0, 4.0, 1.5};
  const int replicas[] = {1, 2, 3, 1, 1};
  for (std::size_t v = 0; v < 5; ++v) {
    EXPECT_EQ(p.vnodes[v].requirement, requirement[v]) << p.vnodes[v].name;
    EXPECT_TRUE(p.vnodes[v].requirementDeclared) << p.vnodes[v].name;
    EXPECT_DOUBLE_EQ(p.vnodes[v].cost, cost[v]) << p.vnodes[v].name;
    EXPECT_TRUE(p.vnodes[v].costDeclared) << p.vnodes[v].name;
    EXPECT_EQ(p.vnodes[v].replicas, replicas[v]) << p.vnodes[v].name;
  }
}

// Port indices from constant tables (edge[kTarget[i][1] * 2 + 1]): an element of a constant array, at
// indices computed from the member, as the clauses' kWidth[i] is; a ring whose member i writes to the
// table's target, read back where each element lands.
TEST(Model, PortIndicesFromConstantTables) {
  ParseOutcome outcome = parseSource(
      "#include <dispar/dispar.h>\n"
      "constexpr int kWidth = 3;\n"
      "constexpr int kTarget[kWidth][2] = {{1, 2}, {2, 0}, {0, 1}};\n"
      "PIPE_ARRAY(int, edge, kWidth * 2);\n"
      "VNODE_ARRAY(column, kWidth, i, IN(edge[i * 2]), IN(edge[(i * 2) + 1]), OUT(edge[kTarget[i][0] * 2]),\n"
      "            OUT(edge[kTarget[i][1] * 2 + 1])) {}\n");
  ASSERT_TRUE(outcome.ok) << outcome.diagnostics;
  const lang::ProgramModel& p = outcome.result.program;
  ASSERT_EQ(p.pipes.size(), 6u);
  // edge[2t + k] is read by t and written by the member whose k-th target is t.
  const int writer[] = {2, 1, 0, 2, 1, 0};
  for (int e = 0; e < 6; ++e) {
    EXPECT_EQ(p.pipes[e].writer, writer[e]) << p.pipes[e].name;
    EXPECT_EQ(p.pipes[e].readers, (std::vector<int>{e / 2})) << p.pipes[e].name;
  }
  // An index past the table is not a constant: the diagnostic names the array and the index's name.
  ParseOutcome past = parseSource("#include <dispar/dispar.h>\n"
                                  "constexpr int kTarget[2] = {1, 0};\n"
                                  "PIPE_ARRAY(int, edge, 3);\n"
                                  "VNODE_ARRAY(column, 3, i, IN(edge[i]), OUT(edge[kTarget[i]])) {}\n");
  EXPECT_FALSE(past.ok);
  EXPECT_NE(past.diagnostics.find("index of pipe array 'edge' must be an integer constant expression in 'i'"),
            std::string::npos)
      << past.diagnostics;
}

TEST(Model, PipelineExample) {
  ParseOutcome outcome = parseSource(readExample("examples/pipeline/pipeline.dsp"));
  ASSERT_TRUE(outcome.ok) << outcome.diagnostics;
  const lang::ProgramModel& p = outcome.result.program;
  ASSERT_EQ(p.vnodes.size(), 3u);
  EXPECT_EQ(p.vnodes[0].name, "source");
  EXPECT_EQ(p.vnodes[1].name, "square");
  EXPECT_EQ(p.vnodes[2].name, "sink");
  EXPECT_EQ(p.vnodes[1].replicas, 3);
  EXPECT_EQ(p.rankCount(), 5);
  EXPECT_EQ(p.firstRank(2), 4);
  for (const lang::VnodeModel& v : p.vnodes) EXPECT_EQ(v.requirement, lang::Requirement::CO) << v.name;
  EXPECT_TRUE(p.vnodes[0].requirementDeclared);
  EXPECT_FALSE(p.vnodes[2].requirementDeclared);
  ASSERT_EQ(p.pipes.size(), 2u);
  EXPECT_EQ(p.pipes[0].name, "samples");
  EXPECT_EQ(p.pipes[0].elementType, "float");
  EXPECT_EQ(p.pipes[0].elementBytes, 4u);
  EXPECT_EQ(p.pipes[0].writer, 0);
  EXPECT_EQ(p.pipes[0].readers, std::vector<int>{1});
  EXPECT_EQ(p.pipes[1].elementBytes, 8u);
  ASSERT_EQ(p.vnodes[1].ports.size(), 2u);
  EXPECT_EQ(p.vnodes[1].ports[0].direction, lang::PortDirection::In);
  EXPECT_EQ(p.vnodes[1].ports[1].direction, lang::PortDirection::Out);
  EXPECT_EQ(p.vnodes[1].location.line, 22u);
  EXPECT_FALSE(p.isCuda);
}

TEST(Model, DirectivesApply) {
  ParseOutcome outcome = parseSource(R"(#include <dispar/dispar.h>
struct Pair { int a; double b; };
PIPE(Pair, work);
#pragma streamap communication(work), volume(64KiB), order(any), window(8)
#pragma streamap resource(cpu), replicas(4), cost(2.5), memory(512MiB)
VNODE(producer, OUT(work)) {}
VNODE(consumer, IN(work)) {}
)");
  ASSERT_TRUE(outcome.ok) << outcome.diagnostics;
  const lang::ProgramModel& p = outcome.result.program;
  EXPECT_EQ(p.vnodes[0].replicas, 4);
  EXPECT_DOUBLE_EQ(p.vnodes[0].cost, 2.5);
  ASSERT_TRUE(p.vnodes[0].memoryBytes.has_value());
  EXPECT_EQ(*p.vnodes[0].memoryBytes, 512ull << 20);
  EXPECT_FALSE(p.vnodes[1].memoryBytes.has_value());
  EXPECT_EQ(p.pipes[0].elementType, "Pair");
  EXPECT_EQ(p.pipes[0].elementBytes, sizeof(int) + 4 + sizeof(double));
  ASSERT_TRUE(p.pipes[0].volume.has_value());
  EXPECT_EQ(*p.pipes[0].volume, 64u * 1024);
  EXPECT_EQ(p.pipes[0].order, lang::MergeOrder::Any);
  EXPECT_EQ(p.pipes[0].window, 8u);
}

TEST(Model, GpuUseIsFoundTransitivelyAndThroughLambdas) {
  ParseOutcome outcome = parseSource(R"(#include <dispar/dispar.h>
#include <cuda_runtime.h>
__global__ void k(float* x) { x[threadIdx.x] *= 2; }
static void launch(float* x) { k<<<1, 32>>>(x); }
static void indirect(float* x) { launch(x); }
static void allocate() { void* p; cudaMalloc(&p, 16); }
PIPE(int, a);
PIPE(int, b);
PIPE(int, c);
VNODE(viaCall, OUT(a)) { indirect(nullptr); }
VNODE(viaLambda, IN(a), OUT(b)) { auto f = [] { allocate(); }; f(); }
VNODE(direct, IN(b), OUT(c)) { k<<<1, 1>>>(nullptr); }
VNODE(cpuOnly, IN(c)) { int v; while (c.read(v)) {} }
)");
  ASSERT_TRUE(outcome.ok) << outcome.diagnostics;
  const lang::ProgramModel& p = outcome.result.program;
  EXPECT_TRUE(p.isCuda);
  ASSERT_EQ(p.vnodes.size(), 4u);
  EXPECT_EQ(p.vnodes[0].requirement, lang::Requirement::CG);
  EXPECT_EQ(p.vnodes[1].requirement, lang::Requirement::CG);
  EXPECT_EQ(p.vnodes[2].requirement, lang::Requirement::CG);
  EXPECT_EQ(p.vnodes[3].requirement, lang::Requirement::CO);
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].name, "k");
  EXPECT_EQ(p.launches.size(), 2u);
}

// split_for: with a GPU body the VNODE uses the GPU and its node's cores; with `nullptr` (the CPU-only
// loop) only the cores; found through the file's functions too. The RTG carries it as "node_cores".
TEST(Model, SplitLoopsUseTheNodesCores) {
  ParseOutcome outcome = parseSource(R"(#include <dispar/dispar.h>
#include <cuda_runtime.h>
__global__ void k(float* x, int first) { x[first + threadIdx.x] *= 2; }
static void sweep(float* x) {
  dispar::split_for(1024, [&](std::size_t b, std::size_t e) { for (auto i = b; i < e; ++i) x[i] *= 2; },
                    [&](std::size_t b, std::size_t e) { k<<<1, static_cast<int>(e - b)>>>(x, static_cast<int>(b)); });
}
PIPE(int, a);
PIPE(int, b);
VNODE(both, OUT(a)) { sweep(nullptr); }
VNODE(cpuLoop, IN(a), OUT(b)) { dispar::split_for(10, [](std::size_t, std::size_t) {}, nullptr); }
VNODE(plain, IN(b)) { int v; while (b.read(v)) {} }
)");
  ASSERT_TRUE(outcome.ok) << outcome.diagnostics;
  const lang::ProgramModel& p = outcome.result.program;
  ASSERT_EQ(p.vnodes.size(), 3u);
  EXPECT_EQ(p.vnodes[0].requirement, lang::Requirement::CG);
  EXPECT_TRUE(p.vnodes[0].usesNodeCores);
  EXPECT_EQ(p.vnodes[1].requirement, lang::Requirement::CO);
  EXPECT_TRUE(p.vnodes[1].usesNodeCores);
  EXPECT_FALSE(p.vnodes[2].usesNodeCores);
  const lang::Rtg rtg = lang::buildRtg(p, {});
  EXPECT_TRUE(rtg.vertices[0].usesNodeCores);
  const std::string json = lang::writeRtgJson(rtg);
  lang::Rtg back;
  std::string error;
  ASSERT_TRUE(lang::parseRtgJson(json, back, error)) << error;
  EXPECT_TRUE(back.vertices[0].usesNodeCores);
  EXPECT_TRUE(back.vertices[1].usesNodeCores);
  EXPECT_FALSE(back.vertices[2].usesNodeCores);
  EXPECT_EQ(json.find("\"node_cores\"", json.find("\"plain\"")), std::string::npos);  // written only when set
}

TEST(Model, CudaDetection) {
  EXPECT_TRUE(frontend::looksLikeCuda("__global__ void k() {}"));
  EXPECT_TRUE(frontend::looksLikeCuda("#include <cufft.h>\n"));
  EXPECT_TRUE(frontend::looksLikeCuda("k<<<1, 2>>>();"));
  EXPECT_FALSE(frontend::looksLikeCuda("#include <vector>\nint main_like() { return 1 << 3; }"));
}

}  // namespace
}  // namespace dispar::testing
