// What the checks collect while the AST is matched, kept until the end of the translation unit, when
// ProgramAssembler turns it into the program model. Containers are vectors in match order (source
// order), never pointer-keyed maps, so output is deterministic.
#ifndef DISPAR_FRONTEND_ANALYSIS_STATE_H
#define DISPAR_FRONTEND_ANALYSIS_STATE_H

#include "frontend/Directives.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <string>
#include <vector>

namespace dispar::frontend {

struct PipeDecl {
  const clang::VarDecl* decl = nullptr;
  clang::QualType elementType;
};

struct VnodeDecl {
  const clang::FunctionDecl* decl = nullptr;
  std::string name;  // from dispar_vnode_<name>_L<line>
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

struct AnalysisState {
  DirectiveTable directives;
  std::vector<PipeDecl> pipes;
  std::vector<VnodeDecl> vnodes;
  std::vector<const clang::Decl*> topLevelDecls;  // main file, in order
  std::vector<GpuUse> gpuUses;
  std::vector<CallEdge> calls;
  std::vector<const clang::FunctionDecl*> kernels;
  std::vector<const clang::FunctionDecl*> deviceFunctions;  // __global__ / __device__ declarations
  std::vector<const clang::VarDecl*> deviceVariables;       // __constant__ / __device__ globals
  std::vector<const clang::CallExpr*> runtimeCalls;         // GPU library calls in host code
  std::vector<const clang::CUDAKernelCallExpr*> launches;
  std::vector<HostUnsupported> hostUnsupported;
  std::vector<clang::SourceLocation> hostlessArchConditionals;  // `#if __CUDA_ARCH__` with no host branch
};

/// `dispar::Pipe<T>` → T; null type otherwise.
clang::QualType pipeElementType(clang::QualType type);
/// `dispar::InPort<T>&` / `dispar::OutPort<T>&` → T and direction; false otherwise.
bool portElementType(clang::QualType type, clang::QualType& element, bool& isOutput);
/// The VNODE name encoded in a function name `dispar_vnode_<name>_L<line>`; empty if not a VNODE.
std::string vnodeNameFromFunction(llvm::StringRef functionName);

}  // namespace dispar::frontend

#endif
