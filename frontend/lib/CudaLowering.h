// The edits that let a CUDA program's GPU VNODEs run on the host as well: a host clone of every kernel
// and device function (CUDA builtins rewritten into dispar::hostk calls, __shared__ declarations into
// per-block storage; kernels whose barriers allow it as thread loops, ThreadLoops.h), launches rewritten to choose between the GPU and the host clone at run time, and
// a diagnostic for every construct the host path cannot run. All edits are collected as Replacements
// on the main file and applied once by StreamCC.
#ifndef DISPAR_FRONTEND_CUDA_LOWERING_H
#define DISPAR_FRONTEND_CUDA_LOWERING_H

#include "AnalysisState.h"
#include "frontend/DisparDiagnostics.h"
#include "frontend/Frontend.h"

#include "clang/AST/ASTContext.h"

namespace dispar::frontend {

class ThreadLoopPlanner;

class CudaLowering {
 public:
  CudaLowering(clang::ASTContext& context, const AnalysisState& state, DisparDiagnostics& diags,
               const FrontendOptions& options)
      : context_(context), sm_(context.getSourceManager()), state_(state), diags_(diags), options_(options) {}

  /// Adds the edits to `result.sourceEdits`; reports unsupported constructs.
  void lower(FrontendResult& result);

 private:
  std::string text(clang::SourceRange range) const;
  std::string lineDirective(clang::SourceLocation loc) const;
  std::string rewriteLaunch(const clang::CUDAKernelCallExpr* launch, const ThreadLoopPlanner& loops) const;
  void add(FrontendResult& result, clang::SourceLocation begin, unsigned length, const std::string& replacement);

  clang::ASTContext& context_;
  const clang::SourceManager& sm_;
  const AnalysisState& state_;
  DisparDiagnostics& diags_;
  const FrontendOptions& options_;
};

}  // namespace dispar::frontend

#endif
