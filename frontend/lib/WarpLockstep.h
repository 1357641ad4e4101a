// Legacy warp-synchronous code on the host path. Before CUDA 9 the 32 lanes of a warp ran in lock step,
// and reductions and scans finished in `volatile` shared memory without a barrier:
//
//     if (tid < 32) { volatile float* smem = sdata; smem[tid] += smem[tid + 16]; smem[tid] += smem[tid + 8]; ... }
//
// The host path runs a block's threads one after another, so a lane would read values its neighbours
// have not written yet and the answer would be silently wrong. A device function that reads and writes
// volatile memory in one statement is taken to be such code: in its host version every statement that
// stores to volatile memory becomes a lock-step store (`::dispar::hostk::lockstepStore`, Warp.h): the lane
// computes the value, waits until every lane of its warp has too, stores it, and waits again, as lanes in
// lock step do. Its kernels run as fibers (the lanes must be able to wait). A volatile store inside a
// larger expression of such a function cannot be split so, and is reported.
#ifndef DISPAR_FRONTEND_WARP_LOCKSTEP_H
#define DISPAR_FRONTEND_WARP_LOCKSTEP_H

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"

#include <string>
#include <vector>

namespace dispar::frontend {

/// `target = value;` or `target op= value;`, a statement of its own, storing to volatile memory.
struct LockstepStore {
  const clang::Expr* target;
  const clang::Expr* value;
  clang::SourceLocation operatorLoc;  ///< the `=` or `op=` token
  std::string operation;              ///< hostk::LockstepOp's enumerator: "Assign", "Add", ...
};

struct WarpSynchronousCode {
  std::vector<LockstepStore> stores;
  std::vector<const clang::Expr*> refused;  ///< volatile stores inside a larger expression
  bool any() const { return !stores.empty() || !refused.empty(); }
};

/// The lock-step stores of `fn`'s body; nothing when `fn` has no statement that reads and writes
/// volatile memory.
WarpSynchronousCode findWarpSynchronousCode(const clang::FunctionDecl* fn);

}  // namespace dispar::frontend

#endif
