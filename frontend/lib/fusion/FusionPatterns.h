// The fusion patterns, one class each: which library calls make a loop look like the pattern, and,
// given the canonical loop, either the one call that replaces it (with the conditions it needs) or why
// it cannot.
#ifndef DISPAR_FRONTEND_FUSION_PATTERNS_H
#define DISPAR_FRONTEND_FUSION_PATTERNS_H

#include "LoopAnalysis.h"

#include "frontend/Frontend.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"

#include <memory>
#include <string>
#include <vector>

namespace dispar::frontend::fusion {

/// What replaces a loop: `statement` (one C++ statement, a block), run instead of the loop when
/// `guard`'s run-time condition holds. A fused call that needs a resource the loop did not (a bigger
/// plan) declares it in `setup` and makes it in `acquire`, a condition tested after the guard's: when
/// it fails, the loop runs as written.
struct FusedLoop {
  std::string fusedName;  // the library call it becomes, for the remark
  std::string statement;
  Guard guard;
  std::string setup;
  std::string acquire;
};

/// Where a pattern's trigger call was found.
struct LoopSite {
  const CanonicalLoop& loop;
  const clang::CallExpr* trigger;       // the library call that made the loop a candidate
  const clang::FunctionDecl* function;  // the function the loop is in
  const FrontendOptions& options;       // how GPU library calls are spelt (libraryCallSpelling)
};

class FusionPattern {
 public:
  virtual ~FusionPattern() = default;
  /// True when a call of `name` in a loop body makes the loop a candidate for this pattern.
  virtual bool triggers(llvm::StringRef name) const = 0;
  virtual Analysed<FusedLoop> fuse(const LoopSite& site, LoopAnalysis& analysis) const = 0;
};

/// for (j) cblas_?gemv(..., A, lda, x + j*sx, 1, beta, y + j*sy, 1) -> one cblas_?gemm (and cublas?gemv ->
/// cublas?gemm).
class GemvLoopToGemm : public FusionPattern {
 public:
  bool triggers(llvm::StringRef name) const override;
  Analysed<FusedLoop> fuse(const LoopSite& site, LoopAnalysis& analysis) const override;
};

/// for (b) cblas_?gemm on the b-th block of A (or B) and of C -> one cblas_?gemm on the stacked blocks;
/// for (b) cublas?gemm on the b-th blocks -> one cublas?gemmStridedBatched.
class GemmBlocksToGemm : public FusionPattern {
 public:
  bool triggers(llvm::StringRef name) const override;
  Analysed<FusedLoop> fuse(const LoopSite& site, LoopAnalysis& analysis) const override;
};

/// for (r) { plan 1-D; execute; destroy } or for (r) fftw_execute_dft(plan, in + r*d, out + r*d)
/// -> one fftw_plan_many_dft, executed once and destroyed (and the r2c / c2r and fftwf_ forms).
class FftLoopToManyPlan : public FusionPattern {
 public:
  bool triggers(llvm::StringRef name) const override;
  Analysed<FusedLoop> fuse(const LoopSite& site, LoopAnalysis& analysis) const override;
};

/// for (r) cufftExec?2?(plan, in + r*d, out + r*e[, direction]), the plan made once by cufftPlan1d in this
/// function -> one cufftPlanMany of the loop's transforms, executed once and destroyed.
class CufftLoopToManyPlan : public FusionPattern {
 public:
  bool triggers(llvm::StringRef name) const override;
  Analysed<FusedLoop> fuse(const LoopSite& site, LoopAnalysis& analysis) const override;
};

/// Every pattern, in the order they are tried.
std::vector<std::unique_ptr<FusionPattern>> makeFusionPatterns();

/// The callee's name of a direct call to a declared function, as users write it (cuBLAS's `_v2` suffix,
/// which cublas_v2.h's macros add, removed); empty otherwise.
llvm::StringRef calleeName(const clang::CallExpr* call);

/// The call a statement is (`f(x);`), ignoring implicit nodes; null otherwise.
const clang::CallExpr* asCall(const clang::Stmt* stmt);

/// Why an expression of a plan's creation, written again at `usedAt` (the loop), may not have the same
/// value there: it may only read variables the function never changes and that are in scope at
/// `usedAt` (empty when it is fixed).
std::string whyNotFixed(const clang::Expr* expr, const clang::FunctionDecl* function, LoopAnalysis& analysis,
                        const clang::Stmt* usedAt);

/// `count` calls' regions: the first at `pointer`'s value at the loop start, `(count - 1) * step + length`
/// elements long.
Region loopRegion(const std::string& name, const AffinePointer& pointer, const CanonicalLoop& loop, const Poly& length,
                  const std::string& elementBytes);

}  // namespace dispar::frontend::fusion

#endif
