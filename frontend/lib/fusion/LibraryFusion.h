// Library-call fusion: a loop of BLAS or FFTW calls in the main file (VNODE bodies and the functions
// they call) becomes one better call when the analysis proves it computes the same thing:
// - a loop of cblas_?gemv over successive vectors with one matrix -> one cblas_?gemm;
// - a loop of 1-D FFTW transforms over rows -> one fftw_plan_many_dft (and r2c, c2r, fftwf_);
// - a loop of cblas_?gemm over equal blocks that tile a matrix -> one cblas_?gemm on the whole.
// The rewrite is data (tooling::Replacements in FrontendResult::sourceEdits). A loop whose conditions
// are all proven is replaced, keeping the file's line count; one that needs run-time conditions
// (arrays that may overlap, strides known only at run time) keeps the loop as the fallback:
// `if (conditions) { fused } else for (...) ...`. Every fusion is a remark at the loop (-Rfusion),
// every loop that looks fusable but is not says why (-Rfusion-missed). See docs/libraries.md.
#ifndef DISPAR_FRONTEND_FUSION_LIBRARY_FUSION_H
#define DISPAR_FRONTEND_FUSION_LIBRARY_FUSION_H

#include "frontend/DisparDiagnostics.h"
#include "frontend/Frontend.h"

#include "clang/AST/ASTContext.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace dispar::frontend {

/// How a GPU library function is called in the generated source: through ::dispar::gpu (which picks
/// the GPU library or the host stand-in at run time) when CUDA programs are built for the GPU and the
/// host, as written otherwise. Only GPU library names (cuBLAS, cuFFT), which only CUDA programs call,
/// are spelled through it.
std::string libraryCallSpelling(llvm::StringRef name, const FrontendOptions& options);

class LibraryFusion {
 public:
  LibraryFusion(clang::ASTContext& context, DisparDiagnostics& diags, const FrontendOptions& options)
      : context_(context), diags_(diags), options_(options) {}

  /// Adds the rewrites to `result.sourceEdits` and the ranges they replace to `result.fusedRanges`;
  /// reports the remarks the options ask for. Does nothing when fusion is off.
  void run(FrontendResult& result);

 private:
  clang::ASTContext& context_;
  DisparDiagnostics& diags_;
  const FrontendOptions& options_;
};

}  // namespace dispar::frontend

#endif
