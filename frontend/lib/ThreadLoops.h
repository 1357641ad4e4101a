// Thread loops: the fast host form of a kernel whose barriers are all top-level statements of its body.
//
// On fibers every CUDA thread runs to a barrier, then the next; the switches between threads cost
// more than the kernel's own work when the work per thread is small. A kernel whose body is
//
//     s0; __syncthreads(); s1; __syncthreads(); s2;
//
// can instead run once per block as three loops over the block's threads, the loop boundary being the
// barrier (the "work-item loops" of MCUDA and POCL). The clone becomes
//
//     <__shared__ and constexpr declarations, hoisted>  <PerThread slots for values live across a barrier>
//     forEachThread([&] { s0 }); forEachThread([&] { s1 }); forEachThread([&] { s2 });
//
// and its launches call hostk::launchThreadLoops. Kernels outside that shape keep the fiber form; the
// planner only decides and rewrites, it never reports: both forms are correct.
#ifndef DISPAR_FRONTEND_THREAD_LOOPS_H
#define DISPAR_FRONTEND_THREAD_LOOPS_H

#include "AnalysisState.h"

#include "clang/AST/ASTContext.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include <string>
#include <vector>

namespace dispar::frontend {

class ThreadLoopPlanner {
 public:
  ThreadLoopPlanner(clang::ASTContext& context, const AnalysisState& state);

  /// Whether the clone of `kernel` (any declaration or specialisation of it) is emitted as thread loops.
  bool usesThreadLoops(const clang::FunctionDecl* kernel) const;

  /// Why `kernel` keeps the fiber form; empty when it uses thread loops. For docs and tests.
  std::string fiberReason(const clang::FunctionDecl* kernel) const;

  /// Rewrites the clone of a thread-loop kernel into segments. Runs after the device-body rewrites of
  /// the same clone (builtins, __shared__), whose text it moves and wraps.
  void rewrite(const clang::FunctionDecl* kernel, clang::Rewriter& clone) const;

 private:
  /// A top-level local that a later segment reads: one slot per thread.
  struct Carried {
    const clang::VarDecl* var;
    const clang::DeclStmt* stmt;
    std::string storageType;
    std::vector<bool> usedInSegment;  ///< indexed by segment
  };
  struct Plan {
    const clang::FunctionDecl* kernel = nullptr;  ///< canonical declaration
    const clang::FunctionDecl* definition = nullptr;
    std::string fiberReason;                     ///< empty: thread loops
    std::vector<const clang::Stmt*> barriers;    ///< top-level `__syncthreads();` statements, in order
    std::vector<const clang::DeclStmt*> hoisted; ///< __shared__ and constexpr declarations, in order
    std::vector<Carried> carried;
    std::vector<const clang::ReturnStmt*> earlyReturns;  ///< returns in segments before the last
  };

  Plan plan(const clang::FunctionDecl* kernel) const;
  const Plan* find(const clang::FunctionDecl* kernel) const;

  clang::ASTContext& context_;
  const AnalysisState& state_;
  std::vector<Plan> plans_;  // one per kernel definition, in source order
};

}  // namespace dispar::frontend

#endif
