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
// and its launches call hostk::launchThreadLoops. A `for` loop or an `if` whose header every thread of
// the block evaluates alike (it reads only parameters, constants, blockIdx/blockDim/gridDim and the
// variables of such loops) may hold barriers too: it runs once per block around its own segments, as in
//
//     for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) { forEachThread([&] { ... }); forEachThread(...); }
//
// A kernel without barriers, __shared__ memory or other block-level state (the one-element-per-thread
// kernels: stencils, element-wise maps) has independent threads: its clone runs once per run of consecutive
// blocks as one loop over their threads in the grid's row order, the "grid loops" form
// (hostk::forEachGridThread), `blockIdx` becoming the loop's too.
//
// Kernels outside these shapes keep the fiber form; the planner only decides and rewrites, it never
// reports: every form is correct.
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

  /// How the clone of a kernel runs its CUDA threads.
  enum class Form {
    Fibers,       ///< one fiber per thread
    ThreadLoops,  ///< once per block, a loop over its threads per segment
    GridLoops,    ///< once per run of blocks, one loop over their threads (no barrier, no shared memory)
  };
  /// The form of the clone of `kernel` (any declaration or specialisation of it).
  Form form(const clang::FunctionDecl* kernel) const;
  /// How the generated code names a form.
  struct FormNames {
    const char* cloneForm;    ///< hostk::detail::CloneForm's member
    const char* description;  ///< in the clone's comment and the -Rhost-path remark
    const char* launcher;     ///< the hostk function that launches such a clone
  };
  static const FormNames& names(Form form);

  /// Whether the clone of `kernel` is emitted as thread loops (either loop form): threadIdx is a loop's.
  bool usesThreadLoops(const clang::FunctionDecl* kernel) const;

  /// Why `kernel` keeps the fiber form; empty when it uses thread loops. For docs and tests.
  std::string fiberReason(const clang::FunctionDecl* kernel) const;

  /// Rewrites the clone of a thread-loop kernel into segments; leaves any other clone alone. Runs after
  /// the device-body rewrites of the same clone (builtins, __shared__), whose text it moves and wraps.
  void rewrite(const clang::FunctionDecl* kernel, clang::Rewriter& clone) const;

  /// What `threadIdx` becomes in the clone of a thread-loop kernel: the index of the segment's loop.
  static constexpr const char* kThreadIndex = "dispar_thread.idx";
  /// What `blockIdx`, `blockDim` and `gridDim` become in such a clone: members of a local read once per
  /// block (hostk::LoopBlockShape), e.g. `dispar_block.blockIdx`.
  static constexpr const char* kBlockShape = "dispar_block";

 private:
  /// A local that another segment reads: one slot per thread.
  struct Carried {
    const clang::VarDecl* var;
    const clang::DeclStmt* stmt;
    std::string storageType;
    std::string storage;              ///< the PerThread variable's name
    std::vector<bool> usedInSegment;  ///< indexed by segment
    /// A scalar whose address never escapes: a later segment copies it into a local at its start and
    /// stores it back at its end, so that the compiler keeps it in a register (a store through a `float*`
    /// could otherwise be the slot's: the samples' matrixMul ran 2x slower).
    bool copied = false;
    bool parameter = false;  ///< a parameter the kernel changes (stmt is null): slots start at its value
  };
  /// A local another segment reads whose value is a function of the thread's index and of uniform
  /// values only: recomputed at the start of each such segment instead of kept in a slot.
  struct Rematerialized {
    const clang::VarDecl* var;
    std::string type;
    std::vector<bool> usedInSegment;  ///< indexed by segment
  };
  /// A local declared without a value and used in one later segment only, which runs once per block
  /// (Rodinia's srad declares `float g2, l, num, den;` at the top and uses them after its last barrier):
  /// declared at the start of that segment, a plain local, instead of kept in a slot.
  struct Localized {
    const clang::VarDecl* var;
    std::string type;
    unsigned segment;
  };
  /// A segment that is `if (threadIdx.x < bound) ...` (or `== 0`) alone: its loop stops at `bound`.
  struct Bound {
    unsigned segment;
    const clang::Expr* bound;  ///< null: 1 (`if (threadIdx.x == 0) ...`)
    std::string type;          ///< the comparison's type
  };
  /// A segment that is a grid-stride loop alone, `for (T v = start; v < bound; v += stride) body` with
  /// `bound` and `stride` uniform, `start` a pure function of the thread, a body that never leaves the
  /// loop early and never changes `v`: run iteration by iteration across the block's threads
  /// (hostk::forEachThreadStrided), its header becoming `T v = start + k * stride; if (!(v < bound)) ...`.
  struct Strided {
    unsigned segment;
    const clang::ForStmt* loop;
    const clang::VarDecl* var;
    const clang::Expr* start;
    const clang::Expr* bound;
    const clang::Expr* stride;
    std::string type;
  };
  /// Where a segment ends or begins in the clone's text. A segment with no code of its own (two
  /// barriers in a row, a barrier before a loop holding barriers) is left out: it would only loop.
  struct SegmentEdit {
    enum Kind {
      ReplaceBarrier,    ///< `__syncthreads();` (stmt) is replaced
      InsertBefore,      ///< inserted before `loc`
      InsertAfterToken,  ///< inserted after the token at `loc`
    };
    static constexpr int kNone = -1;
    Kind kind;
    const clang::Stmt* stmt;
    clang::SourceLocation loc;
    int closes;                                   ///< the segment that ends here, or kNone
    int opens;                                    ///< the segment that begins here, or kNone
    const clang::CompoundStmt* region = nullptr;  ///< the block-level body this edit opens, if any
  };
  struct Plan {
    const clang::FunctionDecl* kernel = nullptr;  ///< canonical declaration
    const clang::FunctionDecl* definition = nullptr;
    std::string fiberReason;  ///< empty: thread loops
    unsigned segments = 0;
    std::vector<bool> segmentHasCode;  ///< indexed by segment
    std::vector<SegmentEdit> edits;
    std::vector<const clang::DeclStmt*> hoisted;  ///< __shared__, constexpr and uniform declarations, in order
    /// Uniform declarations of a block-level loop or branch body, moved to the start of that body.
    std::vector<std::pair<const clang::CompoundStmt*, const clang::DeclStmt*>> regionHoisted;
    std::vector<Carried> carried;
    std::vector<Rematerialized> rematerialized;
    std::vector<Localized> localized;
    std::vector<Bound> bounds;
    std::vector<Strided> strided;
    bool gridLoops = false;                              ///< one segment and no block-level state: Form::GridLoops
    bool needsContext = false;                           ///< segments call code that reads the running thread's context
    std::vector<const clang::ReturnStmt*> earlyReturns;  ///< returns in segments before the last
  };
  class Builder;

  Plan plan(const clang::FunctionDecl* kernel) const;
  const Plan* find(const clang::FunctionDecl* kernel) const;

  clang::ASTContext& context_;
  const AnalysisState& state_;
  std::vector<Plan> plans_;  // one per kernel definition, in source order
};

}  // namespace dispar::frontend

#endif
