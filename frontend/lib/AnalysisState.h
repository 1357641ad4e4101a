// What the checks collect while the AST is matched, kept until the end of the translation unit, when
// ProgramAssembler turns it into the program model. Containers are vectors in match order (source
// order), never pointer-keyed maps, so output is deterministic.
#ifndef DISPAR_FRONTEND_ANALYSIS_STATE_H
#define DISPAR_FRONTEND_ANALYSIS_STATE_H

#include "frontend/Directives.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>
#include <string>
#include <vector>

namespace dispar::frontend {

struct PipeDecl {
  const clang::VarDecl* decl = nullptr;
  clang::QualType elementType;
  int count = -1;  // a PIPE_ARRAY's size; -1 for a PIPE
};

struct VnodeDecl {
  const clang::FunctionDecl* decl = nullptr;
  std::string name;          // as written, from the definition's annotation (dispar.h's VNODE in parse mode)
  std::string compiledName;  // the function it is when compiled: dispar_vnode_<name>_L<line>
  bool family = false;       // a VNODE_ARRAY
  int members = 1;           // its member count (as written: may be < 1, which is reported)
};

/// A use of a pipe or pipe array in a statement, checked against the ports of the VNODE it is in once
/// the whole program is known.
struct PipeUse {
  const clang::DeclRefExpr* ref = nullptr;
  const clang::VarDecl* pipe = nullptr;
  const clang::Expr* index = nullptr;             // the subscript, for `chain[...]`
  const clang::FunctionDecl* function = nullptr;  // the function the use is in (a lambda's: its enclosing one)
  std::string call;                               // the port call made on it ("read", "push", ...), if any
  clang::SourceLocation location;                 // of the element (`chain[i + 1]`) or the pipe
};

/// A VNODE parameter written IN(x) / OUT(x).
struct PortDeclaration {
  bool isOutput = false;
  const clang::Expr* pipe = nullptr;  // x: a pipe, or an element of a pipe array (`chain[i + 1]`)
};

/// A use of the GPU inside a function of the main file: a kernel launch or a GPU library call.
struct GpuUse {
  const clang::FunctionDecl* function = nullptr;
  clang::SourceLocation location;
};

/// An edge of the main file's call graph.
struct CallEdge {
  const clang::FunctionDecl* caller = nullptr;
  const clang::FunctionDecl* callee = nullptr;  // canonical declaration
  clang::SourceLocation location;
};

/// A construct the host path cannot run, found inside device code.
struct HostUnsupported {
  std::string construct;
  std::string reason;
  clang::SourceLocation location;
  const clang::FunctionDecl* function = nullptr;
};

/// The main file's tokens as the parser received them (macros expanded, comments and whitespace gone), in
/// order: the text of code fingerprints (CodeFingerprint).
struct MainFileTokens {
  std::vector<std::string> spellings;
  llvm::DenseMap<clang::SourceLocation, std::size_t> indexAt;  // a token's location -> its index
};

struct AnalysisState {
  DirectiveTable directives;
  MainFileTokens tokens;
  std::vector<PipeDecl> pipes;
  std::vector<VnodeDecl> vnodes;
  std::vector<PipeUse> pipeUses;
  std::vector<const clang::Decl*> topLevelDecls;  // main file, in order
  std::vector<GpuUse> gpuUses;
  std::vector<GpuUse> splitLoops;  // calls of dispar::split_for: the function shares loops with the node's cores
  std::vector<CallEdge> calls;
  std::vector<const clang::FunctionDecl*> kernels;
  std::vector<const clang::FunctionDecl*> deviceFunctions;  // __global__ / __device__ declarations
  std::vector<const clang::VarDecl*> deviceVariables;       // __constant__ / __device__ globals
  std::vector<const clang::CallExpr*> runtimeCalls;         // GPU library calls in host code
  std::vector<const clang::CUDAKernelCallExpr*> launches;
  bool launchesInDeviceCode = false;  // dynamic parallelism: a GPU build needs separate compilation
  std::vector<HostUnsupported> hostUnsupported;
  std::vector<clang::SourceLocation> hostlessArchConditionals;  // `#if __CUDA_ARCH__` with no host branch
  std::vector<clang::SourceLocation> archComparisons;           // `__CUDA_ARCH__` compared in an #if / #elif
};

/// `dispar::Pipe<T>` or `dispar::PipeArray<T, N>` → T; null type otherwise.
clang::QualType pipeElementType(clang::QualType type);
/// `dispar::PipeArray<T, N>` → N; -1 otherwise.
int pipeArraySize(clang::QualType type);
/// The IN(x) / OUT(x) a VNODE parameter was written as; nullopt for any other parameter.
std::optional<PortDeclaration> portDeclaration(const clang::ParmVarDecl* param);
/// A VNODE_ARRAY's member count, from the type of its second parameter; nullopt otherwise.
std::optional<int> familySize(const clang::ParmVarDecl* param);
/// What dispar.h's VNODE / VNODE_ARRAY (parse mode) annotate a VNODE's definition with.
struct VnodeAnnotation {
  std::string name;          // the VNODE's (or family's) name
  std::string compiledName;  // the function's name when compiled
  bool family = false;       // VNODE_ARRAY
};
/// The annotation of a VNODE's definition; nullopt for any other function.
std::optional<VnodeAnnotation> vnodeAnnotation(const clang::FunctionDecl* fn);
/// The definition of `fn` when it is code of the main file that a caller reaches only through the call:
/// written in the main file, not implicit, and not a lambda's call operator written in a function (that
/// one is code of the function it is written in). Null otherwise, and for a function without a body.
const clang::FunctionDecl* mainFileDefinition(const clang::FunctionDecl* fn, const clang::SourceManager& sm);
/// Evaluates the index of a pipe-array element: an integer constant expression in which `member` stands
/// for the VNODE_ARRAY's index parameter `indexParam` (null outside one). nullopt when it is not one.
std::optional<long long> evaluateIndex(const clang::Expr* expr, const clang::ParmVarDecl* indexParam, long long member,
                                       const clang::ASTContext& context);

}  // namespace dispar::frontend

#endif
