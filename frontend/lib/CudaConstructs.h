// What a CUDA name in device code is, as the host path sees it: a built-in of the rewriting table, a
// cooperative-groups entity, a block barrier, a warp-level operation. One place for these judgements,
// shared by the lowering (CudaLowering.h) and the thread-loop planner (ThreadLoops.h).
#ifndef DISPAR_FRONTEND_CUDA_CONSTRUCTS_H
#define DISPAR_FRONTEND_CUDA_CONSTRUCTS_H

#include <dispar/hostk/Builtins.h>

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"

namespace dispar::frontend {

/// The rewriting-table row of a declaration the CUDA headers (or the parse prelude) provide, or nullptr.
/// Declarations of the main file are the user's, never built-ins.
const hostk::Builtin* cudaBuiltin(const clang::Decl* decl);

/// Whether `decl` is declared in namespace cooperative_groups (the toolkit's, or the host path's when
/// parsing without a toolkit), at any depth.
bool isInCooperativeGroups(const clang::Decl* decl);

/// Whether `ns` is namespace cooperative_groups itself (or one of its inline namespaces): the qualifier
/// `cg::` or `cooperative_groups::` names it.
bool isCooperativeGroupsNamespace(const clang::NamespaceDecl* ns);

/// __syncthreads() (a Barrier row, without a predicate), thread_block::sync() or
/// cooperative_groups::sync(a thread_block): a barrier of the whole block.
bool isBlockBarrierCall(const clang::CallExpr* call);
/// Any barrier-like call of the table's Barrier rows or of a thread block (as above, or with a predicate).
bool isAnyBlockBarrierCall(const clang::CallExpr* call);

/// Whether a use of `decl` makes the lanes of a warp meet: a Warp row of the table, or a
/// cooperative-groups entity other than the thread block's.
bool isWarpLevel(const clang::Decl* decl);
/// Whether `decl` is the grid group of a cooperative launch (this_grid, grid_group and its members):
/// every block of the grid meets at its sync, which only fibers can wait at.
bool isGridLevel(const clang::Decl* decl);

}  // namespace dispar::frontend

#endif
