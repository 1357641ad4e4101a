#include "CudaConstructs.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"

namespace dispar::frontend {

namespace {

std::string_view nameOf(const clang::NamedDecl* decl) {
  if (!decl->getIdentifier()) return {};
  llvm::StringRef name = decl->getName();
  return std::string_view(name.data(), name.size());
}

/// The class a cooperative-groups member belongs to, or the entity's own name.
std::string_view cooperativeGroupsOwner(const clang::Decl* decl) {
  if (const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(decl)) return nameOf(method->getParent());
  if (const auto* named = llvm::dyn_cast<clang::NamedDecl>(decl)) return nameOf(named);
  return {};
}

bool isThreadBlock(clang::QualType type) {
  const clang::CXXRecordDecl* record = type.getNonReferenceType()->getAsCXXRecordDecl();
  return record && isInCooperativeGroups(record) && nameOf(record) == "thread_block";
}

}  // namespace

const hostk::Builtin* cudaBuiltin(const clang::Decl* decl) {
  const auto* named = llvm::dyn_cast_or_null<clang::NamedDecl>(decl);
  if (!named || !named->getIdentifier()) return nullptr;
  const clang::SourceManager& sm = decl->getASTContext().getSourceManager();
  // Clang declares builtins such as __syncthreads implicitly, at their first use: not the user's.
  if (!decl->isImplicit() && sm.isInMainFile(sm.getExpansionLoc(decl->getLocation()))) return nullptr;
  const clang::Decl* function = decl;
  if (const auto* tmpl = llvm::dyn_cast<clang::FunctionTemplateDecl>(decl)) function = tmpl->getTemplatedDecl();
  if (const auto* fn = llvm::dyn_cast<clang::FunctionDecl>(function);
      fn && !fn->getDeclContext()->getRedeclContext()->isTranslationUnit())
    return nullptr;  // std::min is not CUDA's min
  return hostk::findBuiltin(nameOf(named));
}

bool isInCooperativeGroups(const clang::Decl* decl) {
  for (const clang::DeclContext* ctx = decl->getDeclContext(); ctx; ctx = ctx->getParent())
    if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(ctx); ns && ns->getName() == "cooperative_groups")
      return true;
  return false;
}

bool isCooperativeGroupsNamespace(const clang::NamespaceDecl* ns) {
  while (ns && ns->isInline()) ns = llvm::dyn_cast<clang::NamespaceDecl>(ns->getParent());
  return ns && ns->getName() == "cooperative_groups";
}

bool isAnyBlockBarrierCall(const clang::CallExpr* call) {
  const clang::FunctionDecl* callee = call->getDirectCallee();
  if (!callee) return false;
  if (const hostk::Builtin* builtin = cudaBuiltin(callee)) return builtin->kind == hostk::BuiltinKind::Barrier;
  if (!isInCooperativeGroups(callee) || nameOf(callee) != "sync") return false;
  if (const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(callee)) {
    // The toolkit's thread_block::sync is static; a sync inherited from a base class is judged by the
    // object it is called on (through the derived-to-base cast).
    if (nameOf(method->getParent()) == "thread_block") return true;
    const auto* member = llvm::dyn_cast<clang::CXXMemberCallExpr>(call);
    return member && isThreadBlock(member->getImplicitObjectArgument()->IgnoreParenImpCasts()->getType());
  }
  return call->getNumArgs() >= 1 && isThreadBlock(call->getArg(0)->IgnoreParenImpCasts()->getType());
}

bool isBlockBarrierCall(const clang::CallExpr* call) {
  if (!isAnyBlockBarrierCall(call)) return false;
  const clang::FunctionDecl* callee = call->getDirectCallee();
  return !cudaBuiltin(callee) || nameOf(callee) == "__syncthreads";
}

bool isWarpLevel(const clang::Decl* decl) {
  if (const hostk::Builtin* builtin = cudaBuiltin(decl)) return builtin->kind == hostk::BuiltinKind::Warp;
  if (!isInCooperativeGroups(decl)) return false;
  const std::string_view owner = cooperativeGroupsOwner(decl);
  // The block's own group runs in thread loops; sync and thread_rank are judged by their argument.
  return owner != "thread_block" && owner != "this_thread_block" && owner != "sync" && owner != "thread_rank" &&
         owner != "group_size";
}

bool isGridLevel(const clang::Decl* decl) {
  if (!isInCooperativeGroups(decl)) return false;
  const std::string_view owner = cooperativeGroupsOwner(decl);
  return owner == "grid_group" || owner == "this_grid";
}

}  // namespace dispar::frontend
