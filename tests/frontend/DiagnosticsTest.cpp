// One small bad program per diagnostic: each must be reported with its message at the right line and
// column, and (for errors) make the frontend fail.
#include "FrontendTestSupport.h"

#include <gtest/gtest.h>

namespace dispar::testing {
namespace {

struct DiagnosticCase {
  const char* name;
  const char* source;    // "#include <dispar/dispar.h>" is prepended, so line 1 is the include
  const char* expected;  // "LINE:COL: error: message" (substring of the output)
  bool isError = true;
};

constexpr const char* kPrelude = "#include <dispar/dispar.h>\n";

const DiagnosticCase kCases[] = {
    {"PipeWithoutWriter", "PIPE(int, a);\nVNODE(r, IN(a)) { int v; a.read(v); }\n",
     "2:11: error: pipe 'a' has no writer; declare OUT(a) in the vnode that writes it"},
    {"PipeWithoutReader", "PIPE(int, a);\nVNODE(w, OUT(a)) { a.write(1); }\n",
     "2:11: error: pipe 'a' has no reader; declare IN(a) in the vnode that reads it"},
    {"TwoWriters", "PIPE(int, a);\nVNODE(w1, OUT(a)) {}\nVNODE(w2, OUT(a)) {}\nVNODE(r, IN(a)) {}\n",
     "4:1: error: pipe 'a' has two writers, vnodes 'w1' and 'w2'"},
    {"TwoReaders", "PIPE(int, a);\nVNODE(w, OUT(a)) {}\nVNODE(r1, IN(a)) {}\nVNODE(r2, IN(a)) {}\n",
     "5:1: error: pipe 'a' has two readers, vnodes 'r1' and 'r2'"},
    {"ReadTypeMismatch",
     "PIPE(float, a);\nVNODE(w, OUT(a)) { a.write(1.0f); }\nVNODE(r, IN(a)) { double d; a.read(d); }\n",
     "4:36: error: pipe 'a' carries 'float', but this read uses 'double'"},
    {"WriteVectorTypeMismatch",
     "#include <vector>\nPIPE(float, a);\nVNODE(w, OUT(a)) { std::vector<int> v; a.write(v); }\n"
     "VNODE(r, IN(a)) {}\n",
     "4:48: error: pipe 'a' carries 'float', but this write uses 'std::vector<int>'"},
    {"PortNotDeclared",
     "PIPE(int, a);\nPIPE(int, b);\nVNODE(w, OUT(a)) { a.write(1); b.write(2); }\n"
     "VNODE(r, IN(a), IN(b)) {}\n",
     "4:32: error: pipe 'b' is used in vnode 'w', which does not declare it; add IN(b) or OUT(b) to its ports"},
    {"PipeUsedOutsideVnode", "PIPE(int, a);\nvoid helper() { a.write(1); }\nVNODE(w, OUT(a)) {}\nVNODE(r, IN(a)) {}\n",
     "3:17: error: pipe 'a' can only be used through a port"},
    {"VnodeDefinedTwice", "PIPE(int, a);\nVNODE(w, OUT(a)) {}\nVNODE(r, IN(a)) {}\nVNODE(r, IN(a)) {}\n",
     "5:1: error: vnode 'r' is defined more than once"},
    {"UserMain", "PIPE(int, a);\nVNODE(w, OUT(a)) {}\nVNODE(r, IN(a)) {}\nint main() { return 0; }\n",
     "5:5: error: a DISPAR program must not define 'main'"},
    {"UnknownDirective", "#pragma streamap resorce(cpu)\nVNODE(w) {}\n",
     "2:18: error: unknown streamap directive 'resorce'"},
    {"MissingDirective", "#pragma streamap\nVNODE(w) {}\n",
     "2:17: error: expected a streamap directive after '#pragma streamap'"},
    {"UnknownClause", "#pragma streamap resource(cpu) replica(2)\nVNODE(w) {}\n",
     "2:32: error: unknown clause 'replica' in 'resource' directive"},
    {"ClauseOfOtherDirective", "#pragma streamap resource(cpu) volume(2)\nVNODE(w) {}\n",
     "2:32: error: clause 'volume' is not allowed in a 'resource' directive"},
    {"DuplicateClause", "#pragma streamap resource(cpu) replicas(2) replicas(3)\nVNODE(w) {}\n",
     "2:44: error: clause 'replicas' appears more than once"},
    {"ReplicasZero", "#pragma streamap resource(cpu) replicas(0)\nVNODE(w) {}\n",
     "2:41: error: argument '0' to clause 'replicas' is out of range; expected a positive integer"},
    {"ReplicasNotANumber", "#pragma streamap resource(cpu) replicas(2.5)\nVNODE(w) {}\n",
     "2:41: error: invalid argument '2.5' to clause 'replicas'; expected a positive integer"},
    {"ReplicasNotAConstant", "int n = 2;\n#pragma streamap resource(cpu) replicas(n)\nVNODE(w) {}\n",
     "3:41: error: 'n' in clause 'replicas' is not a constant expression: 'n' is not a file-scope constant"},
    {"ReplicasExpressionNotConstant",
     "constexpr int kBands = 4;\nint n = 2;\n#pragma streamap resource(cpu) replicas(kBands - n)\nVNODE(w) {}\n",
     "4:41: error: 'kBands - n' in clause 'replicas' is not a constant expression: 'n' is not a file-scope constant"},
    {"ReplicasExpressionZero",
     "constexpr int kWidth[] = {2, 0};\n#pragma streamap resource(cpu) replicas(kWidth[1] * 3)\nVNODE(w) {}\n",
     "3:41: error: argument 'kWidth[1] * 3 = 0' to clause 'replicas' is out of range"},
    {"MemberReplicasZero",
     "constexpr int kWidth[] = {2, 0};\nPIPE_ARRAY(int, a, 2);\n#pragma streamap resource(cpu) replicas(kWidth[i])\n"
     "VNODE_ARRAY(w, 2, i, OUT(a[i])) {}\nVNODE(r, IN(a[0]), IN(a[1])) {}\n",
     "4:41: error: argument 'kWidth[i] (i = 1) = 0' to clause 'replicas' is out of range"},
    {"MemberCostZero",
     "constexpr double kCost[] = {2.5, 0.0};\nPIPE_ARRAY(int, a, 2);\n#pragma streamap resource(cpu) cost(kCost[i])\n"
     "VNODE_ARRAY(w, 2, i, OUT(a[i])) {}\nVNODE(r, IN(a[0]), IN(a[1])) {}\n",
     "4:37: error: argument 'kCost[i] (i = 1) = 0' to clause 'cost' is out of range; expected a positive number"},
    {"MemberResourceNotAResource",
     "PIPE_ARRAY(int, a, 2);\n#pragma streamap resource(i + 1)\n"
     "VNODE_ARRAY(w, 2, i, OUT(a[i])) {}\nVNODE(r, IN(a[0]), IN(a[1])) {}\n",
     "3:27: error: 'i + 1' in clause 'resource' is not a constant expression: its value is a number, not cpu or gpu"},
    {"ResourceArithmetic", "#pragma streamap resource(gpu + 1)\nVNODE(w) {}\n",
     "2:27: error: 'gpu + 1' in clause 'resource' is not a constant expression: 'gpu' is not a number (operator '+')"},
    {"ReplicasFromAFraction",
     "constexpr double kHalf = 2.5;\n#pragma streamap resource(cpu) replicas(kHalf * 1)\nVNODE(w) {}\n",
     "3:41: error: 'kHalf * 1' in clause 'replicas' is not a constant expression: its value 2.5 is not an integer"},
    {"TwoReadersWithoutSplit", "PIPE(int, a);\nVNODE(w, OUT(a)) {}\nVNODE(r1, IN(a)) {}\nVNODE(r2, IN(a)) {}\n",
     "5:1: error: pipe 'a' has two readers, vnodes 'r1' and 'r2'; several VNODEs read one pipe only as its "
     "'communication(a)' directive says: split(duplicate) (each gets every message), split(rr) / split(rr(w...)) "
     "(the stream dealt across them) or split(demand) (each message to one with room)"},
    {"InitialOffTheWritersTurns",
     "PIPE(int, p);\n#pragma streamap communication(p) initial(3)\n#pragma streamap resource(cpu) replicas(2)\n"
     "VNODE(a, OUT(p)) {}\nVNODE(b, IN(p)) {}\n",
     "3:43: error: pipe 'p': initial(3) is not a multiple of 2, the writer replicas' turns (its replica count): their "
     "outputs would take each other's turns"},
    {"WindowNotConstant",
     "int depth = 4;\nPIPE(int, p);\n#pragma streamap communication(p) window(2 * depth)\n"
     "VNODE(a, OUT(p)) {}\nVNODE(b, IN(p)) {}\n",
     "4:42: error: '2 * depth' in clause 'window' is not a constant expression: 'depth' is not a file-scope "
     "constant"},
    {"SplitWeightNotConstant",
     "int n = 1;\nPIPE(int, p);\n#pragma streamap communication(p) split(rr(2, n))\n"
     "VNODE(a, OUT(p)) {}\n#pragma streamap resource(cpu) replicas(2)\nVNODE(b, IN(p)) {}\n",
     "4:47: error: 'n' in clause 'split' is not a constant expression: 'n' is not a file-scope constant"},
    {"SplitWeightZero",
     "constexpr int kW[] = {1, 0};\nPIPE(int, p);\n#pragma streamap communication(p) split(rr(kW))\n"
     "VNODE(a, OUT(p)) {}\n#pragma streamap resource(cpu) replicas(2)\nVNODE(b, IN(p)) {}\n",
     "4:44: error: argument 'kW[1] = 0' to clause 'split' is out of range; expected a positive integer"},
    {"SplitWeightsMismatch",
     "PIPE(int, p);\n#pragma streamap communication(p) split(rr(2, 1, 1))\n"
     "VNODE(a, OUT(p)) {}\n#pragma streamap resource(cpu) replicas(2)\nVNODE(b, IN(p)) {}\n",
     "3:41: error: pipe 'p': split(rr(...)) has 3 weights but the reader has 2 replicas"},
    {"JoinWeightsMismatch",
     "PIPE(int, p);\n#pragma streamap communication(p) join(rr(2, 1))\n"
     "VNODE(a, OUT(p)) {}\nVNODE(b, IN(p)) {}\n",
     "3:40: error: pipe 'p': join(rr(...)) has 2 weights but the writer has 1 replica"},
    {"SplitWeightsUnclosed",
     "PIPE(int, p);\n#pragma streamap communication(p) split(rr(2, 1)\nVNODE(a, OUT(p)) {}\nVNODE(b, IN(p)) {}\n",
     "3:49: error: expected ')' to close clause 'split'"},
    {"JoinDuplicate",
     "PIPE(int, p);\n#pragma streamap communication(p) join(duplicate)\nVNODE(a, OUT(p)) {}\nVNODE(b, IN(p)) {}\n",
     "3:40: error: invalid argument 'duplicate' to clause 'join'; expected 'rr' or 'rr(v0, ...)' with a positive "
     "weight per writer replica"},
    {"ReplicasConstantZero", "constexpr int kNone = 0;\n#pragma streamap resource(cpu) replicas(kNone)\nVNODE(w) {}\n",
     "3:41: error: argument 'kNone = 0' to clause 'replicas' is out of range"},
    {"ReplicasNegative", "#pragma streamap resource(cpu) replicas(-2)\nVNODE(w) {}\n",
     "2:41: error: argument '-2' to clause 'replicas' is out of range"},
    {"ResourceKindUnknown", "#pragma streamap resource(fpga)\nVNODE(w) {}\n",
     "2:27: error: invalid argument 'fpga' to clause 'resource'; expected 'cpu' or 'gpu'"},
    {"CostNotPositive", "#pragma streamap resource(cpu) cost(0)\nVNODE(w) {}\n",
     "2:37: error: argument '0' to clause 'cost' is out of range; expected a positive number"},
    {"MemoryMalformed", "#pragma streamap resource(cpu) memory(12 parsecs)\nVNODE(w) {}\n",
     "2:39: error: invalid argument '12 parsecs' to clause 'memory'; expected a byte size"},
    {"MissingParen", "#pragma streamap resource(cpu) replicas 2\nVNODE(w) {}\n",
     "2:41: error: expected '(' after clause 'replicas'"},
    {"UnclosedParen", "#pragma streamap resource(cpu) replicas(2\nVNODE(w) {}\n",
     "2:42: error: expected ')' to close clause 'replicas'"},
    {"StrayToken", "#pragma streamap resource(cpu) ;\nVNODE(w) {}\n",
     "2:32: error: unexpected ';' in streamap directive"},
    {"DirectiveNotBeforeVnode", "#pragma streamap resource(cpu)\nint x = 1;\nVNODE(w) {}\n",
     "2:18: error: 'resource' directive must be followed by a VNODE"},
    {"DirectiveAtEndOfFile", "VNODE(w) {}\n#pragma streamap resource(gpu)\n",
     "3:18: error: 'resource' directive must be followed by a VNODE"},
    {"DirectiveInsideFunction", "VNODE(w) {\n#pragma streamap resource(gpu)\n}\n",
     "3:18: error: streamap directive must appear at file scope"},
    {"DirectiveAfterTheVnodeOfItsMacro",
     "#define STAGE(n) VNODE(n) {} _Pragma(\"streamap resource(cpu) replicas(2)\")\nSTAGE(a)\nVNODE(b) {}\n",
     "error: 'resource' directive from macro 'STAGE' must come before a VNODE that the same expansion of 'STAGE' "
     "defines"},
    {"DirectiveBeforeAMacroWithTwoVnodes",
     "#define PAIR(x, y) VNODE(x) {} VNODE(y) {}\n#pragma streamap resource(cpu) replicas(2)\nPAIR(a, b)\n",
     "3:18: error: 'resource' directive is followed by macro 'PAIR', which defines 2 VNODEs ('a', 'b'...); write "
     "the directive in the macro, before the VNODE it is for"},
    {"CommunicationUnknownPipe", "#pragma streamap communication(nosuch) volume(8)\nVNODE(w) {}\n",
     "2:32: error: 'communication' directive names 'nosuch', which is not a PIPE"},
    {"CommunicationTwice",
     "PIPE(int, a);\n#pragma streamap communication(a) volume(8)\n#pragma streamap communication(a) order(any)\n"
     "VNODE(w, OUT(a)) {}\nVNODE(r, IN(a)) {}\n",
     "4:18: error: pipe 'a' already has a 'communication' directive"},
    {"PushedItemOfAnotherType", "PIPE(int, a);\nVNODE(w, OUT(a)) { a.push(2.5); }\nVNODE(r, IN(a)) {}\n",
     "3:27: error: pipe 'a' carries 'int', but this push uses 'double'"},
    // Writes are checked as reads are: a value enters a pipe unchanged or not at all (docs/language.md).
    {"WriteDoubleToIntPipe", "PIPE(int, a);\nVNODE(w, OUT(a)) { double d = 2.7; a.write(d); }\nVNODE(r, IN(a)) {}\n",
     "3:44: error: pipe 'a' carries 'int', but this write uses 'double'"},
    {"WriteDoubleToIntPipeNote",
     "PIPE(int, a);\nVNODE(w, OUT(a)) { double d = 2.7; a.write(d); }\nVNODE(r, IN(a)) {}\n",
     "3:44: note: 'double' to 'int' can change the value; a write converts only where no value can change"},
    {"WriteLongToIntPipe", "PIPE(int, a);\nVNODE(w, OUT(a)) { long v = 1; a.write(v); }\nVNODE(r, IN(a)) {}\n",
     "3:40: error: pipe 'a' carries 'int', but this write uses 'long'"},
    {"WriteIntToFloatPipe", "PIPE(float, a);\nVNODE(w, OUT(a)) { int v = 1; a.write(v); }\nVNODE(r, IN(a)) {}\n",
     "3:39: error: pipe 'a' carries 'float', but this write uses 'int'"},
    {"WriteIntLiteralToDoublePipe", "PIPE(double, a);\nVNODE(w, OUT(a)) { a.write(0); }\nVNODE(r, IN(a)) {}\n",
     "3:28: error: pipe 'a' carries 'double', but this write uses 'int'"},
    {"WriteDoubleToFloatPipe", "PIPE(float, a);\nVNODE(w, OUT(a)) { a.write(0.5); }\nVNODE(r, IN(a)) {}\n",
     "3:28: error: pipe 'a' carries 'float', but this write uses 'double'"},
    {"WriteEnumToIntPipe",
     "enum Colour { Red, Green };\nPIPE(int, a);\nVNODE(w, OUT(a)) { a.write(Green); }\nVNODE(r, IN(a)) {}\n",
     "4:28: error: pipe 'a' carries 'int', but this write uses 'Colour'"},
    {"WriteIntToEnumPipe",
     "enum class Colour { Red, Green };\nPIPE(Colour, a);\nVNODE(w, OUT(a)) { a.write(1); }\nVNODE(r, IN(a)) {}\n",
     "4:28: error: pipe 'a' carries 'Colour', but this write uses 'int'"},
    {"WriteClassWithConversion",
     "struct Meters { double v; operator double() const { return v; } };\nPIPE(double, a);\n"
     "VNODE(w, OUT(a)) { Meters m{2}; a.write(m); }\nVNODE(r, IN(a)) {}\n",
     "4:41: error: pipe 'a' carries 'double', but this write uses 'Meters'"},
    {"WriteVectorOfDoubleToIntPipe",
     "#include <vector>\nPIPE(int, a);\nVNODE(w, OUT(a)) { std::vector<double> v(3); a.write(v); }\n"
     "VNODE(r, IN(a)) {}\n",
     "4:54: error: pipe 'a' carries 'int', but this write uses 'std::vector<double>'"},
    {"WriteVectorOfIntToLongPipe",
     "#include <vector>\nPIPE(long, a);\nVNODE(w, OUT(a)) { std::vector<int> v(3); a.write(v); }\n"
     "VNODE(r, IN(a)) {}\n",
     "4:51: error: pipe 'a' carries 'long', but this write uses 'std::vector<int>'"},
    {"WritePointerOfFloatToDoublePipe",
     "PIPE(double, a);\nVNODE(w, OUT(a)) { float f[2] = {1, 2}; a.write(f, 2); }\nVNODE(r, IN(a)) {}\n",
     "3:49: error: pipe 'a' carries 'double', but this write uses 'float[2]'"},
    {"WriteDoubleToArrayElement",
     "PIPE_ARRAY(int, chain, 2);\nVNODE(w, OUT(chain[0])) { chain[0].write(1.5); }\nVNODE(m, IN(chain[0]), "
     "OUT(chain[1])) {}\nVNODE(r, IN(chain[1])) {}\n",
     "3:42: error: pipe 'chain' carries 'int', but this write uses 'double'"},
    {"PushLongToIntPipe", "PIPE(int, a);\nVNODE(w, OUT(a)) { long v = 1; a.push(v); }\nVNODE(r, IN(a)) {}\n",
     "3:39: error: pipe 'a' carries 'int', but this push uses 'long'"},
    {"PopOutsideItsVnode", "PIPE(int, a);\nVNODE(w, OUT(a)) {}\nVNODE(r, IN(a)) {}\nint f() { return a.pop(); }\n",
     "5:18: error: pipe 'a' can only be used through a port"},
    {"PortDeclaredTwice", "PIPE(int, a);\nVNODE(w, OUT(a), IN(a)) {}\n",
     "3:21: error: vnode 'w' declares pipe 'a' twice"},
    {"ArrayIndexOutOfRange",
     "PIPE_ARRAY(int, chain, 4);\nVNODE(src, OUT(chain[0])) {}\n"
     "VNODE_ARRAY(stage, 3, i, IN(chain[i]), OUT(chain[i + 2])) {}\nVNODE(snk, IN(chain[3])) {}\n",
     "4:50: error: index 4 is out of range for pipe array 'chain' of 4 pipes (in vnode 'stage[2]')"},
    {"ArrayIndexNotConstant", "int k = 1;\nPIPE_ARRAY(int, chain, 4);\nVNODE_ARRAY(stage, 3, i, IN(chain[i + k])) {}\n",
     "4:35: error: index of pipe array 'chain' must be an integer constant expression in 'i'"},
    {"TwoMembersWriteOneElement",
     "PIPE_ARRAY(int, parts, 4);\nVNODE_ARRAY(split, 3, i, OUT(parts[i / 2])) {}\nVNODE_ARRAY(join, 4, i, "
     "IN(parts[i])) {}\n",
     "3:36: error: pipe 'parts[0]' has two writers, vnodes 'split[0]' and 'split[1]'"},
    {"UndeclaredElementInBody",
     "PIPE_ARRAY(int, chain, 4);\nVNODE(src, OUT(chain[0])) {}\n"
     "VNODE_ARRAY(stage, 3, i, IN(chain[i]), OUT(chain[i + 1])) { chain[i + 2].write(1); }\n",
     "4:61: error: pipe 'chain[2]' is used in vnode 'stage[0]', which does not declare it"},
    {"ReadFromAnOutPort", "PIPE(int, a);\nVNODE(w, OUT(a)) { int x; a.read(x); }\nVNODE(r, IN(a)) {}\n",
     "3:27: error: vnode 'w' reads from pipe 'a', which it declares OUT(a)"},
    {"PortUsedForItemsAndMessages", "PIPE(int, a);\nVNODE(w, OUT(a)) { a.push(1); a.write(2); }\nVNODE(r, IN(a)) {}\n",
     "3:31: error: vnode 'w' uses pipe 'a' with message call 'write' and, before, item call 'push'; a port is used "
     "with messages (read/write) or with items (push/peek/pop/wait_items/flush), not both"},
    {"PortUsedForMessagesThenItems",
     "PIPE(int, a);\nVNODE(w, OUT(a)) { a.write(2); }\nVNODE(r, IN(a)) { int x; a.read(x); a.pop(); }\n",
     "4:37: error: vnode 'r' uses pipe 'a' with item call 'pop' and, before, message call 'read'"},
    {"EmptyVnodeArray",
     "constexpr int kNone = 0;\nPIPE(int, a);\nVNODE(w, OUT(a)) {}\nVNODE_ARRAY(r, kNone, i, IN(a)) {}\n",
     "5:1: error: vnode array 'r' has 0 members; it needs at least one"},
    // Issue 36, item 7: a PIPE_ARRAY of 2^31 elements took 8 GB before ending in bad_alloc; now the
    // declaration is the error, nothing is expanded and nothing else is reported.
    {"PipeArrayBeyondTheLimit",
     "PIPE_ARRAY(int, huge, 2147483647);\nVNODE(w, OUT(huge[0])) {}\nVNODE(r, IN(huge[0])) {}\n",
     "2:17: error: pipe array 'huge' has 2147483647 members, more than the limit of 65536"},
    {"VnodeArrayBeyondTheLimit", "PIPE(int, a);\nVNODE(w, OUT(a)) {}\nVNODE_ARRAY(r, 65537, i, IN(a)) {}\n",
     "4:1: error: vnode array 'r' has 65537 members, more than the limit of 65536"},
    {"GraphBeyondTheLimit",
     "PIPE_ARRAY(int, p1, 65536);\nPIPE_ARRAY(int, p2, 65536);\nPIPE_ARRAY(int, p3, 65536);\n"
     "PIPE_ARRAY(int, p4, 65536);\nPIPE(int, p5);\nVNODE(w, OUT(p5)) {}\nVNODE(r, IN(p5)) {}\n",
     "6:11: error: pipe array 'p5' would make the program 262145 pipes, more than the limit of 262144"},
    {"NotAPipe", "int notAPipe;\nVNODE(w, IN(notAPipe)) {}\n",
     "3:13: error: IN and OUT take a pipe or an element of a pipe array"},
    {"CxxErrorInUserCode", "PIPE(int, a);\nVNODE(w, OUT(a)) { undeclared_function(3); }\nVNODE(r, IN(a)) {}\n",
     "3:20: error: use of undeclared identifier 'undeclared_function'"},
    {"NoVnodes", "int x;\n", "1:1: error: the program defines no VNODE"},
    {"VnodeWithoutPorts", "VNODE(alone) {}\n", "2:1: warning: vnode 'alone' has no ports", false},
    {"Cycle", "PIPE(int, a);\nPIPE(int, b);\nVNODE(p, OUT(a), IN(b)) {}\nVNODE(q, IN(a), OUT(b)) {}\n",
     "4:1: warning: the pipes form a cycle (p -> q -> p)", false},
    // 17 and 16 share no factor: every writer replica links to all 16 readers (272 links, more than 8 x 17).
    {"ManyReplicaLinks",
     "PIPE(int, a);\n#pragma streamap resource(cpu) replicas(17)\nVNODE(w, OUT(a)) {}\n"
     "#pragma streamap resource(cpu) replicas(16)\nVNODE(r, IN(a)) {}\n",
     "2:11: warning: pipe 'a' links each of the 17 replicas of 'w' to 16 of the 16 replicas of 'r' (272 links", false},
    {"CpuVnodeUsingGpu",
     "__global__ void k(float* x) { x[threadIdx.x] = 0; }\nPIPE(int, a);\n#pragma streamap resource(cpu)\n"
     "VNODE(w, OUT(a)) { k<<<1, 32>>>(nullptr); }\nVNODE(r, IN(a)) {}\n",
     "5:1: error: vnode 'w' is declared 'resource(cpu)' but uses the GPU"},
};

class DiagnosticTest : public ::testing::TestWithParam<DiagnosticCase> {};

TEST_P(DiagnosticTest, ReportsAtLocation) {
  const DiagnosticCase& c = GetParam();
  ParseOutcome outcome = parseSource(std::string(kPrelude) + c.source);
  EXPECT_NE(outcome.diagnostics.find(c.expected), std::string::npos)
      << "expected: " << c.expected << "\nactual output:\n"
      << outcome.diagnostics;
  EXPECT_EQ(outcome.ok, !c.isError) << outcome.diagnostics;
}

INSTANTIATE_TEST_SUITE_P(Frontend, DiagnosticTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<DiagnosticCase>& info) { return info.param.name; });

// The conversions that cannot change a value are implicit: int to long, float to double, bool to int, and
// the same type through a const or reference; each compiles without a word.
TEST(Diagnostics, WritesThatCannotChangeTheValueCompile) {
  const char* source = "#include <vector>\n"
                       "PIPE(long, l);\nPIPE(double, d);\nPIPE(int, i);\nPIPE(float, f);\n"
                       "VNODE(w, OUT(l), OUT(d), OUT(i), OUT(f)) {\n"
                       "  int n = 3; const int& c = n; float x = 1.5f; short s = 2;\n"
                       "  l.write(n); l.write(c); d.write(x); i.write(true); i.write(s); i.write(c);\n"
                       "  f.write(x); std::vector<float> v(2); f.write(v); f.write(std::move(v)); f.write(&x, 1);\n"
                       "}\n"
                       "VNODE(r, IN(l), IN(d), IN(i), IN(f)) {}\n";
  ParseOutcome outcome = parseSource(std::string(kPrelude) + source);
  EXPECT_TRUE(outcome.ok) << outcome.diagnostics;
  EXPECT_EQ(outcome.diagnostics.find("error"), std::string::npos) << outcome.diagnostics;
}

// A cycle through a pipe that starts with initial(N) elements is primed: no warning. The same loop
// without it is reported, suggesting the clause.
TEST(Diagnostics, APrimedCycleIsNotReported) {
  const std::string loop = "PIPE(int, forward);\nPIPE(int, back);\n%s"
                           "VNODE(head, IN(back), OUT(forward)) {}\nVNODE(body, IN(forward), OUT(back)) {}\n";
  auto source = [&](const std::string& directive) {
    std::string text = loop;
    text.replace(text.find("%s"), 2, directive);
    return std::string(kPrelude) + text;
  };
  ParseOutcome primed = parseSource(source("#pragma streamap communication(back) initial(2)\n"));
  EXPECT_TRUE(primed.ok) << primed.diagnostics;
  EXPECT_EQ(primed.diagnostics.find("cycle"), std::string::npos) << primed.diagnostics;
  ParseOutcome unprimed = parseSource(source(""));
  EXPECT_NE(unprimed.diagnostics.find("warning: the pipes form a cycle (head -> body -> head) that no initial(N) "
                                      "clause primes"),
            std::string::npos)
      << unprimed.diagnostics;
}

// Issue 36, item 7: a VNODE_ARRAY of 60,000 members crashed the frontend (the cycle check recursed once
// per member). A ring of the largest family is assembled, and its cycle reported in a bounded message.
TEST(Diagnostics, TheLargestFamilyIsAssembledAndItsCycleReportedBriefly) {
  const std::string source = std::string(kPrelude) +
                             "constexpr int kMembers = 65536;\n"
                             "PIPE_ARRAY(int, ring, kMembers);\n"
                             "VNODE_ARRAY(stage, kMembers, i, IN(ring[i]), OUT(ring[(i + 1) % kMembers])) {}\n";
  ParseOutcome outcome = parseSource(source);
  EXPECT_TRUE(outcome.ok) << outcome.diagnostics.substr(0, 2000);
  EXPECT_NE(outcome.diagnostics.find("warning: the pipes form a cycle (stage[0] -> stage[1] -> stage[2] -> "
                                     "stage[3] -> ... (65528 more) -> stage[65532] -> stage[65533] -> "
                                     "stage[65534] -> stage[65535] -> stage[0])"),
            std::string::npos)
      << outcome.diagnostics.substr(0, 2000);
  EXPECT_LT(outcome.diagnostics.size(), 2000u);
}

TEST(Diagnostics, MissingFileIsAnError) {
  streamcc::ToolchainPaths paths = streamcc::ToolchainPaths::detect();
  frontend::FrontendOptions options;
  options.sourceFile = "/nonexistent/dir/app.dsp";
  options.runtimeIncludeDir = paths.runtimeIncludeDir;
  options.clangResourceDir = paths.clangResourceDir;
  frontend::FrontendResult result;
  std::string text;
  llvm::raw_string_ostream out(text);
  EXPECT_FALSE(frontend::runFrontend(options, result, out));
  out.flush();
  EXPECT_NE(text.find("cannot read '/nonexistent/dir/app.dsp'"), std::string::npos) << text;
}

}  // namespace
}  // namespace dispar::testing
