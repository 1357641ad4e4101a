// Static features of a VNODE's code per message (docs/language.md, "Code features";
// frontend/CodeFeatureTable.h names them), for streammap's nearest-neighbour cost prediction: operations
// counted in the AST, each weighted by the trip counts of its enclosing loops where those are
// compile-time constants, the code of the file's functions that the VNODE calls counted at each call.
#ifndef DISPAR_FRONTEND_CODE_FEATURES_H
#define DISPAR_FRONTEND_CODE_FEATURES_H

#include "frontend/CodeFeatureTable.h"

#include "dispar_lang/Rtg.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/DenseMap.h"

#include <array>
#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

namespace dispar::frontend {

/// The number of times `loop` runs its body when that is a compile-time constant: `for (i = a; i OP b;
/// STEP)` with one integer variable, OP one of < <= > >= !=, STEP ++ -- += c -= c, and a, b, c integer
/// constant expressions; nullopt otherwise (and for a loop that would not end).
std::optional<double> constantTripCount(const clang::ForStmt* loop, const clang::ASTContext& context);

class CodeFeatureCounter {
 public:
  explicit CodeFeatureCounter(clang::ASTContext& context) : context_(context) {}

  /// Every feature of the table for the VNODE function `vnode`; `bytesWrittenPerMessage` is what its
  /// output pipes carry per message, which the program model knows.
  lang::CodeFeatures features(const clang::FunctionDecl* vnode, double bytesWrittenPerMessage);

  /// Per CodeFeature; LoopDepth combines by maximum, the others by weighted sums.
  struct Counts {
    std::array<double, kCodeFeatureCount> value{};
    double& operator[](CodeFeature f) { return value[static_cast<std::size_t>(f)]; }
    double operator[](CodeFeature f) const { return value[static_cast<std::size_t>(f)]; }
  };

  /// The counts of `fn`'s code, called once: its loops nest from depth 0. A function already being
  /// counted (recursion) counts nothing at the recursive call.
  Counts countsOf(const clang::FunctionDecl* fn);

 private:
  clang::ASTContext& context_;
  llvm::DenseMap<const clang::FunctionDecl*, Counts> done_;
  std::vector<const clang::FunctionDecl*> active_;  // being counted, outermost first
  // The outermost entry of active_ a recursive call reached while counting: counts that depend on a
  // caller being active are that caller's alone, not kept for other callers.
  std::size_t reachedActive_ = std::numeric_limits<std::size_t>::max();
};

}  // namespace dispar::frontend

#endif
