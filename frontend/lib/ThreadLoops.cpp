#include "ThreadLoops.h"

#include "clang/AST/QualTypeNames.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Analysis/Analyses/ExprMutationAnalyzer.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>

namespace dispar::frontend {

namespace {

bool isBarrierCall(const clang::CallExpr* call) {
  const clang::FunctionDecl* callee = call->getDirectCallee();
  return callee && callee->getIdentifier() && callee->getName().starts_with("__syncthreads");
}

/// What one statement of a kernel body contains, as far as splitting the body at barriers cares.
class StatementScan : public clang::RecursiveASTVisitor<StatementScan> {
 public:
  bool TraverseLambdaExpr(clang::LambdaExpr* lambda) {
    ++lambdaDepth_;
    bool result = clang::RecursiveASTVisitor<StatementScan>::TraverseLambdaExpr(lambda);
    --lambdaDepth_;
    return result;
  }
  bool VisitCallExpr(clang::CallExpr* call) {
    if (isBarrierCall(call)) barriers.push_back(call);
    return true;
  }
  bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
    if (const auto* var = llvm::dyn_cast<clang::VarDecl>(ref->getDecl())) used.insert(var);
    return true;
  }
  bool VisitVarDecl(clang::VarDecl* var) {
    if (var->hasAttr<clang::CUDASharedAttr>()) shared.push_back(var);
    return true;
  }
  bool VisitReturnStmt(clang::ReturnStmt* ret) {
    if (lambdaDepth_ == 0) returns.push_back(ret);
    return true;
  }
  bool VisitGotoStmt(clang::GotoStmt*) { return jumps = true; }
  bool VisitIndirectGotoStmt(clang::IndirectGotoStmt*) { return jumps = true; }
  bool VisitLabelStmt(clang::LabelStmt*) { return jumps = true; }

  std::vector<const clang::CallExpr*> barriers;
  std::vector<const clang::VarDecl*> shared;
  std::vector<const clang::ReturnStmt*> returns;
  llvm::SmallPtrSet<const clang::VarDecl*, 16> used;  // membership only, never iterated
  bool jumps = false;

 private:
  int lambdaDepth_ = 0;
};

/// Whether a device function, or one it calls, has a barrier or declares __shared__ memory: calling it
/// from a segment would need the per-thread state that thread loops do not keep.
std::vector<const clang::FunctionDecl*> blockStateFunctions(const AnalysisState& state) {
  std::vector<const clang::FunctionDecl*> found;
  auto contains = [&found](const clang::FunctionDecl* fn) {
    return std::find(found.begin(), found.end(), fn->getCanonicalDecl()) != found.end();
  };
  for (const clang::FunctionDecl* fn : state.deviceFunctions) {
    if (!fn->doesThisDeclarationHaveABody() || fn->hasAttr<clang::CUDAGlobalAttr>()) continue;
    StatementScan scan;
    scan.TraverseStmt(fn->getBody());
    if ((!scan.barriers.empty() || !scan.shared.empty()) && !contains(fn)) found.push_back(fn->getCanonicalDecl());
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (const CallEdge& call : state.calls)
      if (contains(call.callee) && !contains(call.caller)) {
        found.push_back(call.caller->getCanonicalDecl());
        grew = true;
      }
  }
  return found;
}

/// A type is nameable outside the function when neither it nor what it points to is a local class.
bool isNameableOutsideFunction(clang::QualType type) {
  while (true) {
    if (const clang::TagDecl* tag = type->getAsTagDecl()) return !tag->getDeclContext()->isFunctionOrMethod();
    if (type->isPointerType()) {
      type = type->getPointeeType();
      continue;
    }
    return !type->isDependentType();
  }
}

}  // namespace

ThreadLoopPlanner::ThreadLoopPlanner(clang::ASTContext& context, const AnalysisState& state)
    : context_(context), state_(state) {
  const std::vector<const clang::FunctionDecl*> blocking = blockStateFunctions(state);
  for (const clang::FunctionDecl* fn : state.deviceFunctions) {
    if (!fn->hasAttr<clang::CUDAGlobalAttr>() || !fn->doesThisDeclarationHaveABody()) continue;
    Plan result = plan(fn);
    if (result.fiberReason.empty())
      for (const CallEdge& call : state.calls)
        if (call.caller->getCanonicalDecl() == result.kernel &&
            std::find(blocking.begin(), blocking.end(), call.callee) != blocking.end()) {
          result.fiberReason = "it calls '" + call.callee->getNameAsString() +
                               "', which has a barrier or __shared__ memory";
          break;
        }
    plans_.push_back(std::move(result));
  }
}

ThreadLoopPlanner::Plan ThreadLoopPlanner::plan(const clang::FunctionDecl* kernel) const {
  Plan plan;
  plan.kernel = kernel->getCanonicalDecl();
  plan.definition = kernel;
  auto fibers = [&plan](std::string reason) {
    plan.fiberReason = std::move(reason);
    plan.barriers.clear();
    plan.hoisted.clear();
    plan.carried.clear();
    plan.earlyReturns.clear();
    return plan;
  };
  if (kernel->getDescribedFunctionTemplate() || kernel->isTemplated()) return fibers("it is a template");
  const auto* body = llvm::dyn_cast_or_null<clang::CompoundStmt>(kernel->getBody());
  if (!body) return fibers("it has no body");
  const clang::SourceManager& sm = context_.getSourceManager();
  auto inFile = [&sm](clang::SourceLocation loc) { return loc.isValid() && loc.isFileID() && sm.isInMainFile(loc); };

  // Segment by segment: which top-level statements begin a new one, what each uses.
  std::vector<StatementScan> scans;
  std::vector<unsigned> segmentOf;
  unsigned segment = 0;
  for (const clang::Stmt* stmt : body->body()) {
    scans.emplace_back();
    StatementScan& scan = scans.back();
    scan.TraverseStmt(const_cast<clang::Stmt*>(stmt));
    if (scan.jumps) return fibers("it uses goto or labels");
    if (!scan.barriers.empty()) {
      const auto* call = llvm::dyn_cast<clang::CallExpr>(stmt);
      if (scan.barriers.size() != 1 || call != scan.barriers.front())
        return fibers("a barrier is inside a loop, a branch or an expression");
      if (call->getDirectCallee()->getName() != "__syncthreads")
        return fibers("it uses " + call->getDirectCallee()->getNameAsString());
      if (!inFile(call->getBeginLoc()) || !inFile(call->getEndLoc())) return fibers("a barrier is written through a macro");
      plan.barriers.push_back(stmt);
      segmentOf.push_back(segment++);
      continue;
    }
    segmentOf.push_back(segment);
  }
  if (plan.barriers.empty()) return fibers("it has no barrier (fibers run it as one loop already)");

  // Every __shared__ declaration must be a top-level statement, to be hoisted out of the loops.
  std::size_t topLevelShared = 0;
  std::size_t allShared = 0;
  for (std::size_t i = 0; i < scans.size(); ++i) {
    allShared += scans[i].shared.size();
    const auto* decl = llvm::dyn_cast<clang::DeclStmt>(body->body_begin()[i]);
    if (decl && std::all_of(decl->decl_begin(), decl->decl_end(), [](const clang::Decl* d) {
          const auto* var = llvm::dyn_cast<clang::VarDecl>(d);
          return var && var->hasAttr<clang::CUDASharedAttr>();
        })) {
      topLevelShared += scans[i].shared.size();
      plan.hoisted.push_back(decl);
    }
  }
  if (topLevelShared != allShared) return fibers("a __shared__ declaration is not at the top level of its body");

  // Parameters are shared by all threads of the block in thread loops: none may change.
  clang::ExprMutationAnalyzer mutations(*body, context_);
  for (const clang::ParmVarDecl* param : kernel->parameters())
    if (mutations.isMutated(param)) return fibers("it assigns to parameter '" + param->getNameAsString() + "'");

  // Top-level locals a later segment uses live across a barrier.
  for (std::size_t i = 0; i < scans.size(); ++i) {
    const auto* decl = llvm::dyn_cast<clang::DeclStmt>(body->body_begin()[i]);
    if (!decl || std::find(plan.hoisted.begin(), plan.hoisted.end(), decl) != plan.hoisted.end()) continue;
    for (const clang::Decl* d : decl->decls()) {
      const auto* var = llvm::dyn_cast<clang::VarDecl>(d);
      if (!var) continue;
      std::vector<bool> usedIn(segment + 1, false);
      bool usedLater = false;
      for (std::size_t j = i + 1; j < scans.size(); ++j)
        if (segmentOf[j] > segmentOf[i] && scans[j].used.contains(var)) usedIn[segmentOf[j]] = usedLater = true;
      if (!usedLater) continue;
      const std::string name = var->getNameAsString();
      if (var->isConstexpr()) {
        if (!std::all_of(decl->decl_begin(), decl->decl_end(), [](const clang::Decl* other) {
              const auto* v = llvm::dyn_cast<clang::VarDecl>(other);
              return v && v->isConstexpr();
            }))
          return fibers("constexpr '" + name + "' is declared together with other variables");
        if (std::find(plan.hoisted.begin(), plan.hoisted.end(), decl) == plan.hoisted.end()) plan.hoisted.push_back(decl);
        continue;
      }
      clang::QualType type = var->getType();
      if (!decl->isSingleDecl()) return fibers("'" + name + "' is used across a barrier and declared with others");
      if (!var->hasLocalStorage() || llvm::isa<clang::DecompositionDecl>(var))
        return fibers("'" + name + "' is used across a barrier and is not a plain local");
      if (type->isReferenceType() || type->isArrayType())
        return fibers("'" + name + "' is a reference or array used across a barrier");
      const auto* record = type->getAsCXXRecordDecl();
      if (type->isDependentType() || !isNameableOutsideFunction(type) || !type.isTriviallyCopyableType(context_) ||
          (record && !record->hasTrivialDefaultConstructor()))
        return fibers("'" + name + "' has a type that cannot be kept per thread");
      if (var->getInit() && var->getInitStyle() == clang::VarDecl::CallInit &&
          llvm::isa<clang::CXXConstructExpr>(var->getInit()))
        return fibers("'" + name + "' is constructed with arguments");
      if (!inFile(decl->getBeginLoc()) || !inFile(decl->getEndLoc()) ||
          (var->getInit() && (!inFile(var->getInit()->getBeginLoc()) || !inFile(var->getInit()->getEndLoc()))))
        return fibers("'" + name + "' is declared through a macro");
      clang::PrintingPolicy policy = context_.getPrintingPolicy();
      policy.SuppressScope = false;
      std::string spelled = clang::TypeName::getFullyQualifiedName(type.getUnqualifiedType(), context_, policy, true);
      plan.carried.push_back(Carried{var, decl, spelled, usedIn});
    }
  }
  // `__shared__` itself is a macro in the CUDA headers: a declaration may begin inside one.
  for (const clang::DeclStmt* decl : plan.hoisted)
    if (!inFile(sm.getExpansionLoc(decl->getBeginLoc())) || !inFile(decl->getEndLoc()))
      return fibers("a hoisted declaration comes from a macro");
  // Hoisting keeps the declarations' order; a constexpr hoisted above an earlier __shared__ is fine.
  std::sort(plan.hoisted.begin(), plan.hoisted.end(), [&sm](const clang::DeclStmt* a, const clang::DeclStmt* b) {
    return sm.isBeforeInTranslationUnit(a->getBeginLoc(), b->getBeginLoc());
  });

  // A thread that returns before the last barrier takes no part in the later segments.
  for (std::size_t i = 0; i < scans.size(); ++i) {
    if (segmentOf[i] == segment) continue;
    for (const clang::ReturnStmt* ret : scans[i].returns) {
      if (ret->getRetValue()) return fibers("a return before a barrier has a value");
      if (!inFile(ret->getReturnLoc())) return fibers("a return before a barrier comes from a macro");
      plan.earlyReturns.push_back(ret);
    }
  }
  return plan;
}

const ThreadLoopPlanner::Plan* ThreadLoopPlanner::find(const clang::FunctionDecl* kernel) const {
  if (!kernel) return nullptr;
  const clang::FunctionDecl* canonical = kernel->getCanonicalDecl();
  for (const Plan& plan : plans_)
    if (plan.kernel == canonical) return &plan;
  return nullptr;
}

bool ThreadLoopPlanner::usesThreadLoops(const clang::FunctionDecl* kernel) const {
  const Plan* plan = find(kernel);
  return plan && plan->fiberReason.empty();
}

std::string ThreadLoopPlanner::fiberReason(const clang::FunctionDecl* kernel) const {
  const Plan* plan = find(kernel);
  return plan ? plan->fiberReason : "it is not a kernel defined in this file";
}

void ThreadLoopPlanner::rewrite(const clang::FunctionDecl* kernel, clang::Rewriter& clone) const {
  const Plan* plan = find(kernel);
  if (!plan || !plan->fiberReason.empty()) return;
  const clang::SourceManager& sm = context_.getSourceManager();
  const clang::LangOptions& lang = context_.getLangOpts();
  const auto* body = llvm::cast<clang::CompoundStmt>(plan->definition->getBody());
  auto storage = [](const Carried& carried) { return "dispar_carried_" + carried.var->getNameAsString(); };
  auto startSegment = [&](std::size_t segment) {
    std::string text = "::dispar::hostk::forEachThread([&] { ";
    for (const Carried& carried : plan->carried)
      if (carried.usedInSegment[segment])
        text += "auto& " + carried.var->getNameAsString() + " = " + storage(carried) + ".mine(); ";
    return text;
  };
  // The statement's text up to and including its semicolon.
  auto withSemicolon = [&](const clang::Stmt* stmt) {
    clang::SourceLocation after = clang::Lexer::findLocationAfterToken(stmt->getEndLoc(), clang::tok::semi, sm, lang, false);
    if (after.isInvalid()) after = clang::Lexer::getLocForEndOfToken(stmt->getEndLoc(), 0, sm, lang);
    return clang::CharSourceRange::getCharRange(stmt->getBeginLoc(), after);
  };

  // No edit adds a line, so the clone's #line stays exact.
  std::string prologue = " ";
  for (const clang::DeclStmt* decl : plan->hoisted) {
    clang::CharSourceRange range = sm.getExpansionRange(decl->getSourceRange());
    prologue += llvm::StringRef(clone.getRewrittenText(range)).rtrim().str() + " ";
    clone.ReplaceText(range, "");
  }
  for (const Carried& carried : plan->carried)
    prologue += "::dispar::hostk::PerThread<" + carried.storageType + "> " + storage(carried) + "; ";
  prologue += startSegment(0);
  clone.InsertTextAfterToken(body->getLBracLoc(), prologue);

  for (std::size_t i = 0; i < plan->barriers.size(); ++i)
    clone.ReplaceText(withSemicolon(plan->barriers[i]), "}); " + startSegment(i + 1));
  clone.InsertTextBefore(body->getRBracLoc(), " }); ");

  for (const Carried& carried : plan->carried) {
    const std::string name = carried.var->getNameAsString();
    const clang::Expr* init = carried.var->getInit();
    if (!init) {
      clang::SourceLocation semicolon = carried.stmt->getEndLoc();
      clone.ReplaceText(clang::CharSourceRange::getCharRange(carried.stmt->getBeginLoc(), semicolon),
                        "auto& " + name + " = " + storage(carried) + ".mine()");
      continue;
    }
    clone.ReplaceText(clang::CharSourceRange::getCharRange(carried.stmt->getBeginLoc(), init->getBeginLoc()),
                      "auto& " + name + " = " + storage(carried) + ".set(");
    // `int x(5)`: the declaration's own `)` closes the call.
    if (carried.var->getInitStyle() != clang::VarDecl::CallInit) clone.InsertTextAfterToken(init->getEndLoc(), ")");
  }

  for (const clang::ReturnStmt* ret : plan->earlyReturns)
    clone.ReplaceText(ret->getReturnLoc(), 6, "return ::dispar::hostk::exitThread()");
}

}  // namespace dispar::frontend
