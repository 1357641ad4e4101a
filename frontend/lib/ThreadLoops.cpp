#include "ThreadLoops.h"

#include "WarpLockstep.h"

#include "CudaConstructs.h"

#include "clang/AST/QualTypeNames.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Analysis/Analyses/ExprMutationAnalyzer.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>
#include <optional>

namespace dispar::frontend {

namespace {

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
    if (isAnyBlockBarrierCall(call)) barriers.push_back(call);
    // The user's functions may read threadIdx (a lambda written in the kernel is rewritten with it).
    if (const clang::FunctionDecl* callee = call->getDirectCallee(); callee && isUsersDecl(callee)) {
      const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(callee);
      if (!method || !method->getParent()->isLambda()) readsContext = true;
    }
    return true;
  }
  bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
    const clang::ValueDecl* decl = ref->getDecl();
    if (const auto* var = llvm::dyn_cast<clang::VarDecl>(decl)) {
      used.insert(var);
      if (var->getName() == "threadIdx" && !isUsersDecl(var)) {
        const clang::SourceManager& sm = var->getASTContext().getSourceManager();
        const clang::SourceLocation loc = ref->getLocation();
        if (loc.isMacroID() && !(sm.isMacroArgExpansion(loc) && sm.isInMainFile(sm.getSpellingLoc(loc))))
          threadIndexInMacro = true;
        if (lambdaDepth_ > 0) threadIndexInLambda = true;
      }
    }
    if (isInCooperativeGroups(decl)) readsContext = true;
    noteWarpLevel(decl);
    return true;
  }
  bool VisitMemberExpr(clang::MemberExpr* member) {
    noteWarpLevel(member->getMemberDecl());
    return true;
  }
  bool VisitUnresolvedLookupExpr(clang::UnresolvedLookupExpr* lookup) {  // a call in a template
    for (const clang::NamedDecl* found : lookup->decls())
      if (const auto* decl = llvm::dyn_cast<clang::ValueDecl>(found->getUnderlyingDecl()))
        noteWarpLevel(decl);
      else if (const auto* tmpl = llvm::dyn_cast<clang::FunctionTemplateDecl>(found->getUnderlyingDecl()))
        noteWarpLevel(tmpl->getTemplatedDecl());
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
  std::string warpLevel;            ///< the first warp-level name used, if any
  std::string gridLevel;            ///< the first grid-group name used, if any
  bool readsContext = false;        ///< calls the user's functions or uses cooperative groups
  bool threadIndexInMacro = false;  ///< threadIdx written inside a macro's definition
  bool threadIndexInLambda = false;

 private:
  static bool isUsersDecl(const clang::Decl* decl) {
    const clang::SourceManager& sm = decl->getASTContext().getSourceManager();
    return !decl->isImplicit() && sm.isInMainFile(sm.getExpansionLoc(decl->getLocation()));
  }
  void noteWarpLevel(const clang::ValueDecl* decl) {
    if (warpLevel.empty() && decl->getIdentifier() && isWarpLevel(decl)) warpLevel = decl->getNameAsString();
    if (gridLevel.empty() && decl->getIdentifier() && isGridLevel(decl)) gridLevel = decl->getNameAsString();
  }
  int lambdaDepth_ = 0;
};

/// The function as written: a template's instantiations are judged by their template.
const clang::FunctionDecl* asWritten(const clang::FunctionDecl* fn) {
  if (const clang::FunctionDecl* pattern = fn->getTemplateInstantiationPattern()) fn = pattern;
  return fn->getCanonicalDecl();
}

/// Whether a device function, or one it calls, has a barrier or declares __shared__ memory: calling it
/// from a segment would need the per-thread state that thread loops do not keep.
std::vector<const clang::FunctionDecl*> blockStateFunctions(const AnalysisState& state) {
  std::vector<const clang::FunctionDecl*> found;
  auto contains = [&found](const clang::FunctionDecl* fn) {
    return std::find(found.begin(), found.end(), asWritten(fn)) != found.end();
  };
  for (const clang::FunctionDecl* fn : state.deviceFunctions) {
    if (!fn->doesThisDeclarationHaveABody() || fn->hasAttr<clang::CUDAGlobalAttr>()) continue;
    StatementScan scan;
    scan.TraverseStmt(fn->getBody());
    if ((!scan.barriers.empty() || !scan.shared.empty() || !scan.warpLevel.empty() ||
         findWarpSynchronousCode(fn).any()) &&
        !contains(fn))
      found.push_back(asWritten(fn));
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (const CallEdge& call : state.calls)
      if (contains(call.callee) && !contains(call.caller)) {
        found.push_back(asWritten(call.caller));
        grew = true;
      }
  }
  return found;
}

/// Whether evaluating `expr` can trap: an integer division or remainder whose divisor is not a non-zero
/// constant. Such an expression is not moved to where the kernel might not have evaluated it.
bool mayTrap(const clang::Expr* expr, const clang::ASTContext& context) {
  class DivisionScan : public clang::RecursiveASTVisitor<DivisionScan> {
   public:
    explicit DivisionScan(const clang::ASTContext& context) : context_(context) {}
    bool VisitBinaryOperator(clang::BinaryOperator* op) {
      const clang::BinaryOperatorKind kind = op->getOpcode();
      if ((kind != clang::BO_Div && kind != clang::BO_Rem) || op->getType()->isRealFloatingType()) return true;
      clang::Expr::EvalResult divisor;
      if (op->getRHS()->isValueDependent() || !op->getRHS()->EvaluateAsInt(divisor, context_) ||
          divisor.Val.getInt() == 0)
        traps = true;
      return !traps;
    }
    bool traps = false;

   private:
    const clang::ASTContext& context_;
  };
  DivisionScan scan(context);
  scan.TraverseStmt(const_cast<clang::Expr*>(expr));
  return scan.traps;
}

/// The thread block of cooperative groups: stateless on the host path, so it can be kept or recomputed.
bool isCooperativeThreadBlock(clang::QualType type) {
  const clang::CXXRecordDecl* record = type->getAsCXXRecordDecl();
  return record && isInCooperativeGroups(record) && record->getName() == "thread_block";
}

/// How the clone spells `type`: cooperative-groups types are the host path's.
std::string hostTypeName(clang::QualType type, const clang::ASTContext& context) {
  if (isCooperativeThreadBlock(type)) return "::dispar::hostk::cooperative_groups::thread_block";
  clang::PrintingPolicy policy = context.getPrintingPolicy();
  policy.SuppressScope = false;
  return type->isDependentType()
             ? type.getUnqualifiedType().getAsString(policy)
             : clang::TypeName::getFullyQualifiedName(type.getUnqualifiedType(), context, policy, true);
}

/// A type can name a slot before the segments when neither it nor what it points to is a local class,
/// and, when it depends on the kernel's template parameters, it is one of them (or points to one).
bool isNameableOutsideFunction(clang::QualType type) {
  while (true) {
    if (const clang::TagDecl* tag = type->getAsTagDecl()) return !tag->getDeclContext()->isFunctionOrMethod();
    if (type->isPointerType()) {
      type = type->getPointeeType();
      continue;
    }
    return !type->isDependentType() || type->getAs<clang::TemplateTypeParmType>() != nullptr;
  }
}

/// A value a thread-loop clone may hold in a plain local of its own (a slot's copy, a parameter's or a
/// localized variable's declaration): a number, an enumerator or an object pointer.
bool isScalar(clang::QualType type) {
  return type->isArithmeticType() || type->isEnumeralType() || type->isObjectPointerType();
}

/// The locals of a kernel body that may be block-level values although they change: declared alone,
/// `T v = e;` with `T` a number or pointer, and changed only by statements of their own (`v *= 2;`,
/// `v = e;`, `++v;`) directly in a compound statement; everything else only reads them. Whether `e`,
/// the changes' values and the places of the changes are uniform is for the Builder to judge. GPU Gems 3's
/// scan halves `offset` with `offset >>= 1;` in the loop around its barriers: kept per thread, every
/// thread repeats the same arithmetic and the segments that read it can no longer stop at their bound.
class ChangingLocals : public clang::RecursiveASTVisitor<ChangingLocals> {
 public:
  ChangingLocals(clang::ASTContext& context, const clang::Stmt* body) : context_(context) {
    TraverseStmt(const_cast<clang::Stmt*>(body));
  }
  bool TraverseLambdaExpr(clang::LambdaExpr*) { return true; }
  bool VisitDeclStmt(clang::DeclStmt* stmt) {
    if (!stmt->isSingleDecl()) return true;
    const auto* var = llvm::dyn_cast<clang::VarDecl>(stmt->getSingleDecl());
    if (var && var->hasLocalStorage() && !llvm::isa<clang::ParmVarDecl>(var) && var->getInit() &&
        !var->getType()->isDependentType() && (var->getType()->isArithmeticType() || var->getType()->isPointerType()) &&
        !var->getType().isVolatileQualified() && !llvm::isa<clang::DecompositionDecl>(var))
      declared_.push_back(var);
    return true;
  }
  bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
    const auto* var = llvm::dyn_cast<clang::VarDecl>(ref->getDecl());
    if (!var || !var->hasLocalStorage()) return true;
    const clang::Stmt* child = ref;
    clang::DynTypedNodeList parents = context_.getParents(*child);
    while (parents.size() == 1 && parents[0].get<clang::ParenExpr>()) {
      child = parents[0].get<clang::ParenExpr>();
      parents = context_.getParents(*child);
    }
    const clang::Stmt* parent = parents.size() == 1 ? parents[0].get<clang::Stmt>() : nullptr;
    if (const auto* cast = llvm::dyn_cast_or_null<clang::ImplicitCastExpr>(parent);
        cast && cast->getCastKind() == clang::CK_LValueToRValue)
      return true;  // read
    const clang::Stmt* update = nullptr;
    if (const auto* op = llvm::dyn_cast_or_null<clang::BinaryOperator>(parent);
        op && op->isAssignmentOp() && op->getLHS()->IgnoreParens() == ref)
      update = op;
    if (const auto* op = llvm::dyn_cast_or_null<clang::UnaryOperator>(parent); op && op->isIncrementDecrementOp())
      update = op;
    const clang::DynTypedNodeList above = update ? context_.getParents(*update) : clang::DynTypedNodeList(parents);
    if (update && above.size() == 1 && above[0].get<clang::CompoundStmt>())
      updates_.emplace_back(var, update);
    else
      refused_.push_back(var);  // its address taken, a reference bound, a change inside an expression...
    return true;
  }

  /// The candidates, each with the statements that change it.
  std::vector<std::pair<const clang::VarDecl*, std::vector<const clang::Stmt*>>> candidates() const {
    std::vector<std::pair<const clang::VarDecl*, std::vector<const clang::Stmt*>>> found;
    for (const clang::VarDecl* var : declared_) {
      if (std::find(refused_.begin(), refused_.end(), var) != refused_.end()) continue;
      std::vector<const clang::Stmt*> changes;
      for (const auto& [changed, stmt] : updates_)
        if (changed == var) changes.push_back(stmt);
      if (!changes.empty()) found.emplace_back(var, std::move(changes));
    }
    return found;
  }

 private:
  clang::ASTContext& context_;
  std::vector<const clang::VarDecl*> declared_;
  std::vector<std::pair<const clang::VarDecl*, const clang::Stmt*>> updates_;
  std::vector<const clang::VarDecl*> refused_;
};

}  // namespace

ThreadLoopPlanner::ThreadLoopPlanner(clang::ASTContext& context, const AnalysisState& state)
    : context_(context), state_(state) {
  const std::vector<const clang::FunctionDecl*> blocking = blockStateFunctions(state);
  for (const clang::FunctionDecl* fn : state.deviceFunctions) {
    if (!fn->hasAttr<clang::CUDAGlobalAttr>() || !fn->doesThisDeclarationHaveABody() || fn->isTemplateInstantiation())
      continue;
    Plan result = plan(fn);
    if (result.fiberReason.empty())
      for (const CallEdge& call : state.calls)
        if (asWritten(call.caller) == result.kernel &&
            std::find(blocking.begin(), blocking.end(), asWritten(call.callee)) != blocking.end()) {
          result.fiberReason = "it calls '" + call.callee->getNameAsString() +
                               "', which has a barrier, __shared__ memory or a warp-level operation";
          break;
        }
    plans_.push_back(std::move(result));
  }
}

/// Splits a kernel body into segments: walks its statements, and those of the uniform loops and
/// branches that hold barriers, recording the segment of every thread-level statement.
class ThreadLoopPlanner::Builder {
 public:
  /// `kept`: locals that must stay per thread although they look like changing block-level values (an
  /// earlier build found one of their changes in thread-level code).
  Builder(clang::ASTContext& context, Plan& plan, const std::vector<const clang::VarDecl*>& kept)
      : context_(context), sm_(context.getSourceManager()), plan_(plan), kept_(kept) {}

  /// The changing block-level values of this build that a thread-level statement changes: the build is
  /// wrong for them and must be redone with them kept per thread.
  std::vector<const clang::VarDecl*> changedPerThread() const {
    std::vector<const clang::VarDecl*> found;
    for (const clang::VarDecl* var : changingUniforms_)
      for (const auto& [candidate, changes] : changing_)
        if (candidate == var)
          for (const clang::Stmt* change : changes)
            if (std::find(handledChanges_.begin(), handledChanges_.end(), change) == handledChanges_.end() &&
                std::find(found.begin(), found.end(), var) == found.end())
              found.push_back(var);
    return found;
  }

  /// False, with plan.fiberReason set, when the kernel keeps the fiber form.
  bool build(const clang::FunctionDecl* kernel) {
    const auto* body = llvm::dyn_cast_or_null<clang::CompoundStmt>(kernel->getBody());
    if (!body) return fail("it has no body");
    kernel_ = kernel;
    for (auto& candidate : ChangingLocals(context_, body).candidates())
      if (std::find(kept_.begin(), kept_.end(), candidate.first) == kept_.end())
        changing_.push_back(std::move(candidate));
    StatementScan whole;
    whole.TraverseStmt(const_cast<clang::CompoundStmt*>(body));
    if (!whole.gridLevel.empty())
      return fail("it uses the grid group's '" + whole.gridLevel +
                  "' (every block of a cooperative launch meets at grid.sync())");
    if (!whole.warpLevel.empty())
      return fail("it uses the warp-level '" + whole.warpLevel + "' (the lanes of a warp meet there)");
    if (findWarpSynchronousCode(kernel).any())
      return fail("its lanes read each other's volatile memory without a barrier (legacy warp-synchronous code, "
                  "run in lock step)");
    if (whole.threadIndexInLambda) return fail("threadIdx is used inside a lambda");
    plan_.needsContext = whole.readsContext || whole.threadIndexInMacro;
    if (!checkParameters(body)) return false;
    if (!walk(body, body)) return false;
    plan_.segments = segment_ + 1;
    if (!checkShared() || !findCarried() || !findReturns()) return false;
    carryParameters();
    plan_.segmentHasCode.assign(plan_.segments, false);
    for (const ThreadStatement& statement : statements_)
      if (std::find(plan_.hoisted.begin(), plan_.hoisted.end(), statement.stmt) == plan_.hoisted.end())
        plan_.segmentHasCode[statement.segment] = true;
    findBounds();
    findStridedLoops();
    plan_.gridLoops = plan_.segments == 1 && plan_.bounds.empty() && plan_.strided.empty() && plan_.carried.empty() &&
                      plan_.rematerialized.empty() && plan_.localized.empty() && plan_.earlyReturns.empty() &&
                      plan_.regionHoisted.empty() &&
                      std::none_of(plan_.hoisted.begin(), plan_.hoisted.end(), [](const clang::DeclStmt* decl) {
                        return std::any_of(decl->decl_begin(), decl->decl_end(),
                                           [](const clang::Decl* d) { return d->hasAttr<clang::CUDASharedAttr>(); });
                      });
    return true;
  }

 private:
  struct ThreadStatement {
    const clang::Stmt* stmt;
    unsigned segment;
    StatementScan scan;
    bool topLevel;
  };
  static constexpr const char* kNotUniform =
      "a barrier is inside a loop or branch whose condition may differ between threads";

  bool fail(std::string reason) {
    plan_.fiberReason = std::move(reason);
    return false;
  }
  bool inFile(clang::SourceLocation loc) const { return loc.isValid() && loc.isFileID() && sm_.isInMainFile(loc); }

  void edit(SegmentEdit::Kind kind, const clang::Stmt* stmt, clang::SourceLocation loc, int closes, int opens) {
    plan_.edits.push_back(SegmentEdit{kind, stmt, loc, closes, opens});
  }
  int current() const { return static_cast<int>(segment_); }

  /// Walks the statements of `region` (the kernel's body, or the body of a block-level loop or branch).
  bool walk(const clang::CompoundStmt* region, const clang::CompoundStmt* kernelBody) {
    const bool topLevel = region == kernelBody;
    for (const clang::Stmt* stmt : region->body()) {
      StatementScan scan;
      scan.TraverseStmt(const_cast<clang::Stmt*>(stmt));
      if (scan.jumps) return fail("it uses goto or labels");
      if (scan.barriers.empty()) {
        if (uniformChange(stmt)) {
          // `offset *= 2;` of a block-level value: once per block, between the segments around it.
          edit(SegmentEdit::InsertBefore, nullptr, stmt->getBeginLoc(), current(), SegmentEdit::kNone);
          ++segment_;
          edit(SegmentEdit::InsertBefore, nullptr, afterSemicolon(stmt), SegmentEdit::kNone, current());
          handledChanges_.push_back(stmt);
          continue;
        }
        if (uniformDeclaration(stmt)) {
          // Computed once per block, at the start of its region.
          const auto* decl = llvm::cast<clang::DeclStmt>(stmt);
          if (topLevel)
            plan_.hoisted.push_back(decl);
          else
            plan_.regionHoisted.emplace_back(region, decl);
          continue;
        }
        if (loopDepth_ > 0 && uniformJump(stmt)) {
          // `if (uniform) break;` in a block-level loop: every thread leaves together.
          const clang::SourceLocation after = afterSemicolon(stmt);
          if (after.isInvalid()) return fail("a break or continue comes from a macro");
          edit(SegmentEdit::InsertBefore, nullptr, stmt->getBeginLoc(), current(), SegmentEdit::kNone);
          ++segment_;
          edit(SegmentEdit::InsertBefore, nullptr, after, SegmentEdit::kNone, current());
          continue;
        }
        noteBoundCandidate(stmt);
        statements_.push_back(ThreadStatement{stmt, segment_, std::move(scan), topLevel});
        continue;
      }
      if (const auto* call = llvm::dyn_cast<clang::CallExpr>(stmt); call && scan.barriers.front() == call) {
        if (!isBlockBarrierCall(call)) return fail("it uses " + call->getDirectCallee()->getNameAsString());
        if (!inFile(call->getBeginLoc()) || !inFile(call->getEndLoc()))
          return fail("a barrier is written through a macro");
        ++segment_;
        edit(SegmentEdit::ReplaceBarrier, stmt, {}, current() - 1, current());
        continue;
      }
      for (const clang::CallExpr* barrier : scan.barriers)
        if (!isBlockBarrierCall(barrier)) return fail("it uses " + barrier->getDirectCallee()->getNameAsString());
      if (!blockLevel(stmt, kernelBody)) return false;
    }
    return true;
  }

  /// Where the statement's semicolon ends, when the statement and it are in the main file; else invalid.
  clang::SourceLocation afterSemicolon(const clang::Stmt* stmt) const {
    if (!inFile(stmt->getBeginLoc()) || !inFile(stmt->getEndLoc())) return {};
    const clang::SourceLocation after = clang::Lexer::findLocationAfterToken(
        stmt->getEndLoc(), clang::tok::semi, sm_, context_.getLangOpts(), /*SkipTrailingWhitespaceAndNewLine=*/false);
    return inFile(after) ? after : clang::SourceLocation();
  }

  /// A statement of a block-level region that changes a changing block-level value by a uniform amount.
  bool uniformChange(const clang::Stmt* stmt) const {
    const clang::Expr* target = nullptr;
    const clang::Expr* value = nullptr;
    if (const auto* op = llvm::dyn_cast<clang::BinaryOperator>(stmt); op && op->isAssignmentOp()) {
      target = op->getLHS();
      value = op->getRHS();
    } else if (const auto* op = llvm::dyn_cast<clang::UnaryOperator>(stmt); op && op->isIncrementDecrementOp()) {
      target = op->getSubExpr();
    }
    const auto* ref = target ? llvm::dyn_cast<clang::DeclRefExpr>(target->IgnoreParens()) : nullptr;
    if (!ref ||
        std::find(changingUniforms_.begin(), changingUniforms_.end(), ref->getDecl()) == changingUniforms_.end())
      return false;
    if (value && (!readsOnly(value, ValueRules{/*threadIndex=*/false, /*memory=*/false, /*assignments=*/false}) ||
                  mayTrap(value, context_)))
      return false;
    return afterSemicolon(stmt).isValid();
  }

  /// `T x = e;` whose `e` every thread computes alike and that nothing changes: a block-level value. Or
  /// one that only uniform changes of its own change (ChangingLocals): a block-level value too, changed
  /// between segments.
  bool uniformDeclaration(const clang::Stmt* stmt) {
    const auto* decl = llvm::dyn_cast<clang::DeclStmt>(stmt);
    if (!decl || !decl->isSingleDecl()) return false;
    const auto* var = llvm::dyn_cast<clang::VarDecl>(decl->getSingleDecl());
    if (!var || !var->hasLocalStorage() || !var->getInit() || var->getType()->isDependentType() ||
        llvm::isa<clang::DecompositionDecl>(var))
      return false;
    const clang::QualType type = var->getType();
    if (!(type->isArithmeticType() || type->isEnumeralType() || type->isPointerType())) return false;
    if (!inFile(decl->getBeginLoc()) || !inFile(decl->getEndLoc())) return false;
    // Computed at the start of its region, maybe before an early return that guarded it in the kernel.
    // Moved before statements that may write memory: it must not read any.
    if (!readsOnly(var->getInit(), ValueRules{/*threadIndex=*/false, /*memory=*/false, /*assignments=*/false,
                                              /*changing=*/false}) ||
        mayTrap(var->getInit(), context_))
      return false;
    if (std::any_of(changing_.begin(), changing_.end(), [var](const auto& c) { return c.first == var; })) {
      changingUniforms_.push_back(var);
      return true;
    }
    if (mutatedIn(kernel_->getBody(), var)) return false;
    uniformLocals_.push_back(var);
    return true;
  }

  /// `if (threadIdx.x < bound) ...` with a uniform bound and no else, or `if (threadIdx.x == 0) ...`
  /// (bound 1): if it turns out to be alone in its segment, the segment's loop can stop at the bound.
  void noteBoundCandidate(const clang::Stmt* stmt) {
    const auto* branch = llvm::dyn_cast<clang::IfStmt>(stmt);
    if (!branch || branch->getElse() || branch->getInit() || branch->getConditionVariable() || branch->isConsteval())
      return;
    const auto* less = llvm::dyn_cast<clang::BinaryOperator>(branch->getCond()->IgnoreParenImpCasts());
    if (!less || !isThreadIndexX(less->getLHS())) return;
    if (less->getOpcode() == clang::BO_EQ) {
      clang::Expr::EvalResult zero;
      if (!less->getRHS()->isValueDependent() && less->getRHS()->EvaluateAsInt(zero, context_) &&
          zero.Val.getInt() == 0) {
        boundCandidates_.push_back(Bound{0, nullptr, "unsigned"});
        boundStatements_.push_back(stmt);
      }
      return;
    }
    if (less->getOpcode() != clang::BO_LT) return;
    const clang::QualType type = less->getLHS()->getType();
    if (type->isDependentType() || !type->isIntegerType() || !uniform(less->getRHS()) ||
        mayTrap(less->getRHS(), context_))
      return;
    const clang::CharSourceRange range = sm_.getExpansionRange(less->getRHS()->getSourceRange());
    if (!inFile(range.getBegin()) || !inFile(range.getEnd())) return;
    clang::PrintingPolicy policy = context_.getPrintingPolicy();
    boundCandidates_.push_back(Bound{0, less->getRHS(), type.getUnqualifiedType().getAsString(policy)});
    boundStatements_.push_back(stmt);
  }

  /// `threadIdx.x`, or a local initialised to it and never changed.
  bool isThreadIndexX(const clang::Expr* expr) const {
    expr = expr->IgnoreParenImpCasts();
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(expr)) {
      const auto* var = llvm::dyn_cast<clang::VarDecl>(ref->getDecl());
      return var && var->hasLocalStorage() && !llvm::isa<clang::ParmVarDecl>(var) && var->getInit() &&
             !var->getType()->isReferenceType() && isThreadIndexX(var->getInit()) &&
             !mutatedIn(kernel_->getBody(), var);
    }
    const clang::CharSourceRange range = sm_.getExpansionRange(expr->getSourceRange());
    std::string text = clang::Lexer::getSourceText(range, sm_, context_.getLangOpts()).str();
    text.erase(std::remove_if(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\t' || c == '\n'; }),
               text.end());
    return text == "threadIdx.x";
  }

  /// Bounds for the segments that hold a candidate and nothing else.
  void findBounds() {
    for (std::size_t c = 0; c < boundStatements_.size(); ++c) {
      unsigned segment = 0, inSegment = 0;
      for (const ThreadStatement& statement : statements_)
        if (statement.stmt == boundStatements_[c]) segment = statement.segment;
      for (const ThreadStatement& statement : statements_)
        if (statement.segment == segment &&
            std::find(plan_.hoisted.begin(), plan_.hoisted.end(), statement.stmt) == plan_.hoisted.end())
          ++inSegment;
      if (inSegment != 1) continue;
      Bound bound = boundCandidates_[c];
      bound.segment = segment;
      plan_.bounds.push_back(bound);
    }
  }

  /// The segments that are a grid-stride loop alone (Plan::Strided).
  void findStridedLoops() {
    for (const ThreadStatement& statement : statements_) {
      const auto* loop = llvm::dyn_cast<clang::ForStmt>(statement.stmt);
      if (!loop || !statement.topLevel || !inFile(loop->getForLoc()) || !inFile(loop->getRParenLoc())) continue;
      unsigned inSegment = 0;
      for (const ThreadStatement& other : statements_)
        if (other.segment == statement.segment &&
            std::find(plan_.hoisted.begin(), plan_.hoisted.end(), other.stmt) == plan_.hoisted.end())
          ++inSegment;
      if (inSegment != 1) continue;
      const auto* init = llvm::dyn_cast_or_null<clang::DeclStmt>(loop->getInit());
      const auto* var = init && init->isSingleDecl() ? llvm::dyn_cast<clang::VarDecl>(init->getSingleDecl()) : nullptr;
      if (!var || !var->getInit() || !var->getType()->isIntegerType() || var->getType()->isDependentType()) continue;
      auto namesVar = [var](const clang::Expr* expr) {
        const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(expr->IgnoreParenImpCasts());
        return ref && ref->getDecl() == var;
      };
      const auto* cond = llvm::dyn_cast_or_null<clang::BinaryOperator>(loop->getCond());
      const auto* inc = llvm::dyn_cast_or_null<clang::CompoundAssignOperator>(loop->getInc());
      if (!cond || cond->getOpcode() != clang::BO_LT || !namesVar(cond->getLHS()) || !uniform(cond->getRHS()) || !inc ||
          inc->getOpcode() != clang::BO_AddAssign || !namesVar(inc->getLHS()) || !uniform(inc->getRHS()))
        continue;
      // The start is evaluated again for each iteration: it may read the thread's index, not memory.
      if (!readsOnly(var->getInit(), ValueRules{/*threadIndex=*/true, /*memory=*/false, /*assignments=*/false}))
        continue;
      if (mutatedIn(loop->getBody(), var) || leavesEarly(loop->getBody())) continue;
      plan_.strided.push_back(Strided{statement.segment, loop, var, var->getInit(), cond->getRHS(), inc->getRHS(),
                                      hostTypeName(var->getType(), context_)});
    }
  }

  /// Whether a loop body may leave the loop (or its iteration) other than by finishing it.
  static bool leavesEarly(const clang::Stmt* body) {
    class Jumps : public clang::RecursiveASTVisitor<Jumps> {
     public:
      bool VisitBreakStmt(clang::BreakStmt*) { return !(found = true); }
      bool VisitContinueStmt(clang::ContinueStmt*) { return !(found = true); }
      bool VisitReturnStmt(clang::ReturnStmt*) { return !(found = true); }
      bool VisitGotoStmt(clang::GotoStmt*) { return !(found = true); }
      bool VisitIndirectGotoStmt(clang::IndirectGotoStmt*) { return !(found = true); }
      bool TraverseLambdaExpr(clang::LambdaExpr*) { return true; }
      bool found = false;
    } jumps;
    jumps.TraverseStmt(const_cast<clang::Stmt*>(body));
    return jumps.found;
  }

  /// `if (uniform) break;` or `continue;` (braced or not, no else).
  bool uniformJump(const clang::Stmt* stmt) const {
    const auto* branch = llvm::dyn_cast<clang::IfStmt>(stmt);
    if (!branch || branch->getElse() || branch->getInit() || branch->getConditionVariable() || branch->isConsteval())
      return false;
    const clang::Stmt* then = branch->getThen();
    if (const auto* block = llvm::dyn_cast<clang::CompoundStmt>(then)) {
      if (block->size() != 1) return false;
      then = block->body_front();
    }
    return (llvm::isa<clang::BreakStmt>(then) || llvm::isa<clang::ContinueStmt>(then)) && uniform(branch->getCond());
  }

  /// A for or while loop or an if holding barriers: it runs once per block when every thread would take
  /// the same path through it, its bodies become segments of their own.
  bool blockLevel(const clang::Stmt* stmt, const clang::CompoundStmt* kernelBody) {
    std::vector<const clang::CompoundStmt*> bodies;
    const clang::Stmt* loopBody = nullptr;
    const std::size_t outer = loopVariables_.size();
    if (const auto* loop = llvm::dyn_cast<clang::ForStmt>(stmt)) {
      const auto* init = llvm::dyn_cast_or_null<clang::DeclStmt>(loop->getInit());
      if (loop->getInit() && !init) return fail(kNotUniform);
      if (init)
        for (const clang::Decl* decl : init->decls()) {
          const auto* var = llvm::dyn_cast<clang::VarDecl>(decl);
          if (!var || (var->getInit() && !uniform(var->getInit()))) return fail(kNotUniform);
          loopVariables_.push_back(var);
        }
      if ((loop->getCond() && !uniform(loop->getCond())) || (loop->getInc() && !uniform(loop->getInc())))
        return fail(kNotUniform);
      loopBody = loop->getBody();
    } else if (const auto* loop = llvm::dyn_cast<clang::WhileStmt>(stmt)) {
      if (loop->getConditionVariable() || !uniform(loop->getCond())) return fail(kNotUniform);
      loopBody = loop->getBody();
    }
    if (loopBody) {
      const auto* body = llvm::dyn_cast<clang::CompoundStmt>(loopBody);
      if (!body) return fail("a loop holding a barrier has no braces");
      for (std::size_t i = outer; i < loopVariables_.size(); ++i)
        if (mutatedIn(body, loopVariables_[i])) return fail(kNotUniform);
      bodies.push_back(body);
      const std::size_t firstStatement = statements_.size();
      ++loopDepth_;
      if (!segmentBodies(stmt, bodies, kernelBody)) return false;
      --loopDepth_;
      // A break or continue inside a segment would only leave that thread's iteration of the segment.
      for (std::size_t i = firstStatement; i < statements_.size(); ++i)
        if (leavesLoop(statements_[i].stmt))
          return fail("a loop holding a barrier has a break or continue that not every thread takes");
      loopVariables_.resize(outer);
      return true;
    }
    if (const auto* branch = llvm::dyn_cast<clang::IfStmt>(stmt)) {
      if (branch->getInit() || branch->getConditionVariable() || branch->isConsteval() || !uniform(branch->getCond()))
        return fail(kNotUniform);
      for (const clang::Stmt* part : {branch->getThen(), branch->getElse()}) {
        if (!part) continue;
        const auto* body = llvm::dyn_cast<clang::CompoundStmt>(part);
        if (!body) return fail("a branch holding a barrier has no braces");
        bodies.push_back(body);
      }
      return segmentBodies(stmt, bodies, kernelBody);
    }
    if (llvm::isa<clang::DoStmt>(stmt) || llvm::isa<clang::SwitchStmt>(stmt) || llvm::isa<clang::CXXForRangeStmt>(stmt))
      return fail("a barrier is inside a do, switch or range-based for statement");
    return fail("a barrier is inside a loop, a branch or an expression");
  }

  /// `s` closes the running segment; each body is its own run of segments; a new one follows `s`.
  bool segmentBodies(const clang::Stmt* stmt, const std::vector<const clang::CompoundStmt*>& bodies,
                     const clang::CompoundStmt* kernelBody) {
    if (!inFile(stmt->getBeginLoc()) || !inFile(stmt->getEndLoc()))
      return fail("a loop or branch holding a barrier comes from a macro");
    edit(SegmentEdit::InsertBefore, nullptr, stmt->getBeginLoc(), current(), SegmentEdit::kNone);
    for (const clang::CompoundStmt* body : bodies) {
      ++segment_;
      edit(SegmentEdit::InsertAfterToken, nullptr, body->getLBracLoc(), SegmentEdit::kNone, current());
      plan_.edits.back().region = body;
      if (!walk(body, kernelBody)) return false;
      edit(SegmentEdit::InsertBefore, nullptr, body->getRBracLoc(), current(), SegmentEdit::kNone);
    }
    ++segment_;
    edit(SegmentEdit::InsertAfterToken, nullptr, stmt->getEndLoc(), SegmentEdit::kNone, current());
    return true;
  }

  /// Whether `var` may change inside `scope` (both of the kernel as written). A template is judged by its
  /// instantiations, whose types are known: in the template itself an expression such as `data[i] = x`
  /// with a dependent `data` could be anything, and ExprMutationAnalyzer rightly assumes the worst. A
  /// template never instantiated has no clone to get wrong.
  bool mutatedIn(const clang::Stmt* scope, const clang::VarDecl* var) const {
    const clang::FunctionTemplateDecl* pattern = kernel_->getDescribedFunctionTemplate();
    if (!pattern) return clang::ExprMutationAnalyzer(*scope, context_).isMutated(var);
    for (const clang::FunctionDecl* instance : pattern->specializations()) {
      if (!instance->doesThisDeclarationHaveABody()) continue;
      const clang::Stmt* instanceScope = scope == kernel_->getBody() ? instance->getBody() : nullptr;
      const clang::VarDecl* instanceVar = nullptr;
      if (const auto* param = llvm::dyn_cast<clang::ParmVarDecl>(var)) {
        if (param->getFunctionScopeIndex() < instance->getNumParams())
          instanceVar = instance->getParamDecl(param->getFunctionScopeIndex());
      }
      // The instantiated statement and variable sit where the template's do.
      class SameLocation : public clang::RecursiveASTVisitor<SameLocation> {
       public:
        SameLocation(const clang::Stmt* stmt, const clang::VarDecl* var) : stmt_(stmt), var_(var) {}
        bool VisitStmt(clang::Stmt* stmt) {
          if (!foundStmt && stmt->getStmtClass() == stmt_->getStmtClass() &&
              stmt->getBeginLoc() == stmt_->getBeginLoc() && stmt->getEndLoc() == stmt_->getEndLoc())
            foundStmt = stmt;
          return true;
        }
        bool VisitVarDecl(clang::VarDecl* var) {
          if (!foundVar && var->getLocation() == var_->getLocation() && var->getName() == var_->getName())
            foundVar = var;
          return true;
        }
        const clang::Stmt* foundStmt = nullptr;
        const clang::VarDecl* foundVar = nullptr;

       private:
        const clang::Stmt* stmt_;
        const clang::VarDecl* var_;
      };
      SameLocation finder(scope, var);
      finder.TraverseStmt(instance->getBody());
      if (!instanceScope) instanceScope = finder.foundStmt;
      if (!instanceVar) instanceVar = finder.foundVar;
      if (!instanceScope || !instanceVar) return true;  // not found: assume the worst
      if (clang::ExprMutationAnalyzer(*instanceScope, context_).isMutated(instanceVar)) return true;
    }
    return false;
  }

  /// What an expression may read to count as uniform (the same for every thread of the block) or as a
  /// function of the thread's index.
  struct ValueRules {
    bool threadIndex = false;  ///< threadIdx and rematerialised locals
    bool memory = true;        ///< loads through pointers, arrays and references
    bool assignments = true;   ///< a loop header's `++i`, `s >>= 1` (of its own uniform variables)
    /// block-level values changed between segments: their value where the expression is evaluated, so
    /// not in what is computed elsewhere (a hoisted or recomputed declaration)
    bool changing = true;
  };

  /// Whether `expr` reads only parameters (none is assigned), constants, blockIdx/blockDim/gridDim/
  /// warpSize, the variables of enclosing uniform loops, uniform locals (declared from such values,
  /// never changed), and what `rules` adds; calls only the builtin variables' getters (and, with
  /// threadIndex, this_thread_block()).
  bool readsOnly(const clang::Expr* expr, ValueRules rules) const {
    class ValueScan : public clang::RecursiveASTVisitor<ValueScan> {
     public:
      ValueScan(const Builder& builder, ValueRules rules) : builder_(builder), rules_(rules) {}
      bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
        const clang::ValueDecl* decl = ref->getDecl();
        if (llvm::isa<clang::EnumConstantDecl>(decl) || llvm::isa<clang::FunctionDecl>(decl) ||
            llvm::isa<clang::NonTypeTemplateParmDecl>(decl))
          return true;
        const auto* var = llvm::dyn_cast<clang::VarDecl>(decl);
        if (!var) return ok = false;
        const auto has = [var](const std::vector<const clang::VarDecl*>& vars) {
          return std::find(vars.begin(), vars.end(), var) != vars.end();
        };
        const std::string name = var->getNameAsString();
        if (!builder_.sm_.isInMainFile(builder_.sm_.getExpansionLoc(var->getLocation())))
          return ok = name == "blockIdx" || name == "blockDim" || name == "gridDim" || name == "warpSize" ||
                      (rules_.threadIndex && name == "threadIdx");
        ok = var->isConstexpr() || var->isUsableInConstantExpressions(builder_.context_) ||
             (llvm::isa<clang::ParmVarDecl>(var) && !has(builder_.mutatedParameters_)) ||
             has(builder_.loopVariables_) || has(builder_.uniformLocals_) ||
             (rules_.changing && has(builder_.changingUniforms_)) ||
             (rules_.threadIndex && has(builder_.rematerialized_));
        return ok;
      }
      bool VisitArraySubscriptExpr(clang::ArraySubscriptExpr*) { return ok = ok && rules_.memory; }
      bool VisitUnaryOperator(clang::UnaryOperator* op) {
        if ((op->getOpcode() == clang::UO_Deref && !rules_.memory) ||
            (op->isIncrementDecrementOp() && !rules_.assignments))
          ok = false;
        return ok;
      }
      bool VisitBinaryOperator(clang::BinaryOperator* op) {
        return ok = ok && (rules_.assignments || !op->isAssignmentOp());
      }
      bool VisitMemberExpr(clang::MemberExpr* member) { return ok = ok && (rules_.memory || !member->isArrow()); }
      bool VisitCallExpr(clang::CallExpr* call) {
        // blockDim.x is a property: a call to the builtin variable's getter; this_thread_block() only
        // names the running block.
        const clang::FunctionDecl* callee = call->getDirectCallee();
        const auto* method = llvm::dyn_cast_or_null<clang::CXXMethodDecl>(callee);
        const bool getter = method && method->getParent()->getName().starts_with("__cuda_builtin_");
        const bool threadBlock = rules_.threadIndex && callee && isInCooperativeGroups(callee) &&
                                 callee->getIdentifier() && callee->getName() == "this_thread_block" &&
                                 call->getNumArgs() == 0;
        return ok = ok && (getter || threadBlock);
      }
      bool VisitCXXConstructExpr(clang::CXXConstructExpr* construct) {
        // Copies of the thread block (its initialisation from this_thread_block()) are the block.
        return ok = ok && rules_.threadIndex && isCooperativeThreadBlock(construct->getType());
      }
      bool VisitLambdaExpr(clang::LambdaExpr*) { return ok = false; }
      bool ok = true;

     private:
      const Builder& builder_;
      ValueRules rules_;
    };
    ValueScan scan(*this, rules);
    scan.TraverseStmt(const_cast<clang::Expr*>(expr));
    return scan.ok;
  }

  /// Uniform, as a loop's or branch's header must be to run once per block.
  bool uniform(const clang::Expr* expr) const { return readsOnly(expr, ValueRules{}); }

  /// Whether a break or continue in `body` would leave or restart the loop whose body it is.
  static bool leavesLoop(const clang::Stmt* body) {
    class JumpScan : public clang::RecursiveASTVisitor<JumpScan> {
     public:
      bool TraverseForStmt(clang::ForStmt*) { return true; }  // their own break/continue
      bool TraverseWhileStmt(clang::WhileStmt*) { return true; }
      bool TraverseDoStmt(clang::DoStmt*) { return true; }
      bool TraverseCXXForRangeStmt(clang::CXXForRangeStmt*) { return true; }
      bool TraverseSwitchStmt(clang::SwitchStmt* stmt) {  // its breaks are its own, a continue is not
        ++switches_;
        bool result = clang::RecursiveASTVisitor<JumpScan>::TraverseSwitchStmt(stmt);
        --switches_;
        return result;
      }
      bool TraverseLambdaExpr(clang::LambdaExpr*) { return true; }
      bool VisitBreakStmt(clang::BreakStmt*) { return switches_ > 0 || !(found = true); }
      bool VisitContinueStmt(clang::ContinueStmt*) { return !(found = true); }
      bool found = false;

     private:
      int switches_ = 0;
    };
    JumpScan scan;
    scan.TraverseStmt(const_cast<clang::Stmt*>(body));
    return scan.found;
  }

  bool checkShared() {
    // Every __shared__ declaration must be a statement of a block-level region (the body, or a uniform
    // loop or branch: the samples' matrixMul declares its tiles in the loop over them), to be hoisted to
    // the clone's start: a block has one instance of it wherever it is written.
    std::size_t hoistable = 0;
    std::size_t all = 0;
    std::vector<const clang::DeclStmt*> shared;
    for (const ThreadStatement& statement : statements_) {
      all += statement.scan.shared.size();
      const auto* decl = llvm::dyn_cast<clang::DeclStmt>(statement.stmt);
      if (decl && std::all_of(decl->decl_begin(), decl->decl_end(), [](const clang::Decl* d) {
            const auto* var = llvm::dyn_cast<clang::VarDecl>(d);
            return var && var->hasAttr<clang::CUDASharedAttr>();
          })) {
        hoistable += statement.scan.shared.size();
        shared.push_back(decl);
      }
    }
    if (hoistable != all) return fail("a __shared__ declaration is not a statement of the body or of a uniform block");
    // Hoisted out of its block, the name must not meet another local of the kernel.
    class Locals : public clang::RecursiveASTVisitor<Locals> {
     public:
      bool VisitVarDecl(clang::VarDecl* var) {
        names.push_back(var->getName());
        return true;
      }
      std::vector<llvm::StringRef> names;
    } locals;
    locals.TraverseStmt(const_cast<clang::Stmt*>(kernel_->getBody()));
    for (const clang::DeclStmt* decl : shared) {
      for (const clang::Decl* d : decl->decls()) {
        const llvm::StringRef name = llvm::cast<clang::VarDecl>(d)->getName();
        const bool parameter = std::any_of(kernel_->param_begin(), kernel_->param_end(),
                                           [name](const clang::ParmVarDecl* p) { return p->getName() == name; });
        if (parameter || std::count(locals.names.begin(), locals.names.end(), name) > 1)
          return fail("__shared__ '" + name.str() + "' shares its name with another variable of the kernel");
      }
      plan_.hoisted.push_back(decl);
    }
    return true;
  }

  bool checkParameters(const clang::CompoundStmt* body) {
    // Parameters are shared by all threads of the block in thread loops. One a thread changes (the
    // samples' `d_Dst += baseY * pitch + baseX;`) is kept per thread, from the launch's value; it is no
    // longer a uniform value.
    for (const clang::ParmVarDecl* param : kernel_->parameters()) {
      if (!mutatedIn(body, param)) continue;
      const clang::QualType type = param->getType();
      if (!isScalar(type) || !isNameableOutsideFunction(type))
        return fail("it assigns to parameter '" + param->getNameAsString() + "', which cannot be kept per thread");
      mutatedParameters_.push_back(param);
    }
    return true;
  }

  /// The changed parameters, kept per thread: slots filled with the launch's value before the segments.
  void carryParameters() {
    for (const clang::VarDecl* param : mutatedParameters_) {
      std::vector<bool> usedIn(plan_.segments, false);
      for (const ThreadStatement& statement : statements_)
        if (statement.scan.used.contains(param)) usedIn[statement.segment] = true;
      Carried carried{param,
                      nullptr,
                      hostTypeName(param->getType(), context_),
                      slotName(param->getNameAsString()),
                      usedIn,
                      !addressEscapes(param)};
      carried.parameter = true;
      plan_.carried.push_back(std::move(carried));
    }
  }

  /// Locals another segment uses live across a barrier: a slot per thread, or hoisted when constexpr.
  bool findCarried() {
    for (std::size_t i = 0; i < statements_.size(); ++i) {
      const auto* decl = llvm::dyn_cast<clang::DeclStmt>(statements_[i].stmt);
      if (!decl || std::find(plan_.hoisted.begin(), plan_.hoisted.end(), decl) != plan_.hoisted.end()) continue;
      for (const clang::Decl* d : decl->decls()) {
        const auto* var = llvm::dyn_cast<clang::VarDecl>(d);
        if (!var) continue;
        std::vector<bool> usedIn(plan_.segments, false);
        bool usedElsewhere = false;
        for (std::size_t j = i + 1; j < statements_.size(); ++j)
          if (statements_[j].segment != statements_[i].segment && statements_[j].scan.used.contains(var))
            usedIn[statements_[j].segment] = usedElsewhere = true;
        if (!usedElsewhere) continue;
        if (const std::optional<unsigned> segment = localizable(i, var, usedIn)) {
          plan_.localized.push_back(Localized{var, hostTypeName(var->getType(), context_), *segment});
          continue;
        }
        if (rematerializable(decl, var)) {
          plan_.rematerialized.push_back(Rematerialized{var, hostTypeName(var->getType(), context_), usedIn});
          rematerialized_.push_back(var);
          continue;
        }
        if (!carry(decl, var, usedIn)) return false;
      }
    }
    // A recomputed local whose value uses another (`int ai = thid;`) needs that one recomputed too, in
    // each segment that uses it; the others come first, in declaration order.
    for (std::size_t r = plan_.rematerialized.size(); r-- > 0;) {
      StatementScan uses;
      uses.TraverseStmt(const_cast<clang::Expr*>(plan_.rematerialized[r].var->getInit()));
      for (std::size_t earlier = 0; earlier < r; ++earlier)
        if (uses.used.contains(plan_.rematerialized[earlier].var))
          for (unsigned segment = 0; segment < plan_.segments; ++segment)
            if (plan_.rematerialized[r].usedInSegment[segment])
              plan_.rematerialized[earlier].usedInSegment[segment] = true;
    }
    // Hoisting keeps the declarations' order.
    std::sort(plan_.hoisted.begin(), plan_.hoisted.end(), [this](const clang::DeclStmt* a, const clang::DeclStmt* b) {
      return sm_.isBeforeInTranslationUnit(a->getBeginLoc(), b->getBeginLoc());
    });
    // `__shared__` itself is a macro in the CUDA headers: a declaration may begin inside one.
    for (const clang::DeclStmt* decl : plan_.hoisted)
      if (!inFile(sm_.getExpansionLoc(decl->getBeginLoc())) || !inFile(decl->getEndLoc()))
        return fail("a hoisted declaration comes from a macro");
    return true;
  }

  /// The one later segment a local without a value is used in, when that segment runs once per block
  /// (all its uses are statements of the kernel's body, not of a loop) and the local can be declared there
  /// alone by its type's name: no value can reach that segment from the declaration.
  std::optional<unsigned> localizable(std::size_t declaration, const clang::VarDecl* var,
                                      const std::vector<bool>& usedIn) const {
    if (var->getInit() || !var->hasLocalStorage() || llvm::isa<clang::DecompositionDecl>(var)) return std::nullopt;
    const clang::QualType type = var->getType();
    if (!isScalar(type) || type->isDependentType() || !isNameableOutsideFunction(type)) return std::nullopt;
    if (std::count(usedIn.begin(), usedIn.end(), true) != 1) return std::nullopt;
    const unsigned segment = static_cast<unsigned>(std::find(usedIn.begin(), usedIn.end(), true) - usedIn.begin());
    for (std::size_t j = 0; j < statements_.size(); ++j)
      if (j != declaration && statements_[j].scan.used.contains(var) &&
          (statements_[j].segment == statements_[declaration].segment || !statements_[j].topLevel))
        return std::nullopt;
    if (!statements_[declaration].topLevel) return std::nullopt;
    return segment;
  }

  /// A local whose value depends only on the thread's index and on uniform values (and other such
  /// locals), never changed: each segment recomputes it rather than keeping it in a slot.
  bool rematerializable(const clang::DeclStmt* decl, const clang::VarDecl* var) const {
    if (!decl->isSingleDecl() || !var->getInit() || var->getType()->isDependentType() ||
        llvm::isa<clang::DecompositionDecl>(var))
      return false;
    const clang::QualType type = var->getType();
    if (!(type->isArithmeticType() || type->isEnumeralType() || type->isPointerType() ||
          isCooperativeThreadBlock(type)))
      return false;
    const clang::CharSourceRange init = sm_.getExpansionRange(var->getInit()->getSourceRange());
    if (!inFile(decl->getBeginLoc()) || !inFile(init.getBegin()) || !inFile(init.getEnd())) return false;
    if (mutatedIn(kernel_->getBody(), var)) return false;
    // Memory may change across a barrier: a value computed from it must be kept, not recomputed.
    return readsOnly(var->getInit(),
                     ValueRules{/*threadIndex=*/true, /*memory=*/false, /*assignments=*/false, /*changing=*/false});
  }

  bool carry(const clang::DeclStmt* decl, const clang::VarDecl* var, const std::vector<bool>& usedIn) {
    const std::string name = var->getNameAsString();
    if (var->isConstexpr()) {
      if (!std::all_of(decl->decl_begin(), decl->decl_end(), [](const clang::Decl* other) {
            const auto* v = llvm::dyn_cast<clang::VarDecl>(other);
            return v && v->isConstexpr();
          }))
        return fail("constexpr '" + name + "' is declared together with other variables");
      if (std::find(plan_.hoisted.begin(), plan_.hoisted.end(), decl) == plan_.hoisted.end())
        plan_.hoisted.push_back(decl);
      return true;
    }
    clang::QualType type = var->getType();
    if (type->getContainedAutoType() && type->isDependentType())
      return fail("'" + name + "' is used across a barrier and its type is deduced from a template parameter");
    // `float n, w, e, s, jc;` (Rodinia's srad): the statement becomes one declaration per variable, so
    // each of the others must be declarable alone by its type's name.
    if (!decl->isSingleDecl())
      for (const clang::Decl* other : decl->decls()) {
        const auto* otherVar = llvm::dyn_cast<clang::VarDecl>(other);
        const clang::QualType otherType = otherVar ? otherVar->getType() : clang::QualType();
        if (!otherVar || otherType->isArrayType() || otherType->isReferenceType() ||
            otherType->isFunctionPointerType() || otherType->isMemberPointerType() ||
            otherType->getContainedAutoType() || otherType->isDependentType() ||
            !isNameableOutsideFunction(otherType) ||
            (otherVar->getInit() && otherVar->getInitStyle() != clang::VarDecl::CInit))
          return fail("'" + name + "' is used across a barrier and declared with others that cannot be declared alone");
      }
    if (!var->hasLocalStorage() || llvm::isa<clang::DecompositionDecl>(var))
      return fail("'" + name + "' is used across a barrier and is not a plain local");
    if (type->isReferenceType() || type->isArrayType())
      return fail("'" + name + "' is a reference or array used across a barrier");
    // A type that depends on the kernel's template parameters is checked when the clone is instantiated
    // (PerThread's static_assert); any other must be trivial here.
    // The thread block of cooperative groups is the host path's, which is trivial.
    const auto* record = type->getAsCXXRecordDecl();
    if (!isNameableOutsideFunction(type) ||
        (!type->isDependentType() && !isCooperativeThreadBlock(type) &&
         (!type.isTriviallyCopyableType(context_) || (record && !record->hasTrivialDefaultConstructor()))))
      return fail("'" + name + "' has a type that cannot be kept per thread");
    const clang::Expr* init = var->getInit();
    if (init && var->getInitStyle() == clang::VarDecl::CallInit && llvm::isa<clang::CXXConstructExpr>(init))
      return fail("'" + name + "' is constructed with arguments");
    // The initialiser may use macros (`int t = TID;`), the declaration itself may not.
    if (!inFile(decl->getBeginLoc()) || !inFile(var->getLocation()) ||
        (init && (!inFile(sm_.getExpansionRange(init->getSourceRange()).getBegin()) ||
                  !inFile(sm_.getExpansionRange(init->getSourceRange()).getEnd()))))
      return fail("'" + name + "' is declared through a macro");
    plan_.carried.push_back(Carried{var, decl, hostTypeName(type, context_), slotName(name), usedIn,
                                    isScalar(type) && !addressEscapes(var)});
    return true;
  }

  /// The PerThread slot of a carried variable: two of one name (in different scopes) get one each.
  std::string slotName(const std::string& name) const {
    std::string storage = "dispar_carried_" + name;
    for (int suffix = 2; std::any_of(plan_.carried.begin(), plan_.carried.end(),
                                     [&storage](const Carried& c) { return c.storage == storage; });
         ++suffix)
      storage = "dispar_carried_" + name + "_" + std::to_string(suffix);
    return storage;
  }

  /// Whether `var`'s address is taken, bound to a reference or captured by one anywhere in the kernel.
  bool addressEscapes(const clang::VarDecl* var) const {
    class Escapes : public clang::RecursiveASTVisitor<Escapes> {
     public:
      explicit Escapes(const clang::VarDecl* var) : var_(var) {}
      bool names(const clang::Expr* expr) const {
        const auto* ref = expr ? llvm::dyn_cast<clang::DeclRefExpr>(expr->IgnoreParens()) : nullptr;
        return ref && ref->getDecl() == var_;
      }
      bool VisitUnaryOperator(clang::UnaryOperator* op) {
        if (op->getOpcode() == clang::UO_AddrOf && names(op->getSubExpr())) escapes = true;
        return !escapes;
      }
      bool VisitCallExpr(clang::CallExpr* call) {
        const clang::FunctionDecl* callee = call->getDirectCallee();
        for (unsigned i = 0; i < call->getNumArgs(); ++i)
          if (names(call->getArg(i)) &&
              (!callee || i >= callee->getNumParams() || callee->getParamDecl(i)->getType()->isReferenceType()))
            escapes = true;
        return !escapes;
      }
      bool VisitVarDecl(clang::VarDecl* other) {
        if (other->getType()->isReferenceType() && names(other->getInit())) escapes = true;
        return !escapes;
      }
      bool VisitLambdaExpr(clang::LambdaExpr* lambda) {
        for (const clang::LambdaCapture& capture : lambda->captures())
          if (capture.capturesVariable() && capture.getCaptureKind() == clang::LCK_ByRef &&
              capture.getCapturedVar() == var_)
            escapes = true;
        return !escapes;
      }
      bool escapes = false;

     private:
      const clang::VarDecl* var_;
    } scan(var);
    scan.TraverseStmt(const_cast<clang::Stmt*>(kernel_->getBody()));
    return scan.escapes;
  }

  /// A thread that returns before the last segment takes no part in the later ones.
  bool findReturns() {
    for (const ThreadStatement& statement : statements_) {
      if (statement.segment + 1 == plan_.segments) continue;
      for (const clang::ReturnStmt* ret : statement.scan.returns) {
        if (ret->getRetValue()) return fail("a return before a barrier has a value");
        if (!inFile(ret->getReturnLoc())) return fail("a return before a barrier comes from a macro");
        plan_.earlyReturns.push_back(ret);
      }
    }
    return true;
  }

  clang::ASTContext& context_;
  const clang::SourceManager& sm_;
  Plan& plan_;
  const clang::FunctionDecl* kernel_ = nullptr;
  unsigned segment_ = 0;
  std::vector<ThreadStatement> statements_;           // every thread-level statement, in source order
  std::vector<const clang::VarDecl*> loopVariables_;  // of the enclosing uniform loops
  std::vector<const clang::VarDecl*> uniformLocals_;  // block-level values, in declaration order
  const std::vector<const clang::VarDecl*>& kept_;
  std::vector<std::pair<const clang::VarDecl*, std::vector<const clang::Stmt*>>> changing_;  // candidates
  std::vector<const clang::VarDecl*> changingUniforms_;  // block-level values changed between segments
  std::vector<const clang::Stmt*> handledChanges_;       // their changes, run once per block
  std::vector<const clang::VarDecl*> rematerialized_;
  std::vector<const clang::VarDecl*> mutatedParameters_;  // kept per thread; not uniform
  std::vector<Bound> boundCandidates_;                    // parallel to boundStatements_
  std::vector<const clang::Stmt*> boundStatements_;
  int loopDepth_ = 0;  // block-level loops around the statement walked
};

ThreadLoopPlanner::Plan ThreadLoopPlanner::plan(const clang::FunctionDecl* kernel) const {
  Plan plan;
  // A local that looked like a changing block-level value but that thread-level code changes is kept per
  // thread, and the kernel planned again.
  std::vector<const clang::VarDecl*> kept;
  bool built = false;
  for (;;) {
    plan = Plan{};
    plan.kernel = kernel->getCanonicalDecl();
    plan.definition = kernel;
    Builder builder(context_, plan, kept);
    built = builder.build(kernel);
    const std::vector<const clang::VarDecl*> perThread = builder.changedPerThread();
    if (perThread.empty()) break;
    kept.insert(kept.end(), perThread.begin(), perThread.end());
  }
  if (!built) {
    Plan fibers;
    fibers.kernel = plan.kernel;
    fibers.definition = kernel;
    fibers.fiberReason = plan.fiberReason;
    return fibers;
  }
  return plan;
}

const ThreadLoopPlanner::Plan* ThreadLoopPlanner::find(const clang::FunctionDecl* kernel) const {
  if (!kernel) return nullptr;
  // A launch names a specialisation; its clone is the template's.
  if (const clang::FunctionTemplateDecl* primary = kernel->getPrimaryTemplate()) kernel = primary->getTemplatedDecl();
  const clang::FunctionDecl* canonical = kernel->getCanonicalDecl();
  for (const Plan& plan : plans_)
    if (plan.kernel == canonical) return &plan;
  return nullptr;
}

ThreadLoopPlanner::Form ThreadLoopPlanner::form(const clang::FunctionDecl* kernel) const {
  const Plan* plan = find(kernel);
  if (!plan || !plan->fiberReason.empty()) return Form::Fibers;
  return plan->gridLoops ? Form::GridLoops : Form::ThreadLoops;
}

const ThreadLoopPlanner::FormNames& ThreadLoopPlanner::names(Form form) {
  // One row per Form, in its order.
  static constexpr FormNames kNames[] = {
      {"Fibers", "fibers", "launch"},
      {"ThreadLoops", "thread loops", "launchThreadLoops"},
      {"GridLoops", "grid loops", "launchGridLoops"},
  };
  return kNames[static_cast<int>(form)];
}

bool ThreadLoopPlanner::usesThreadLoops(const clang::FunctionDecl* kernel) const {
  return form(kernel) != Form::Fibers;
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
  // Texts the edits below copy, taken before any of them (the device-body rewrites are already in).
  auto rewritten = [&](const clang::Stmt* stmt) {
    return clone.getRewrittenText(sm.getExpansionRange(stmt->getSourceRange()));
  };
  std::vector<std::string> rematerializedInit;
  for (const Rematerialized& value : plan->rematerialized)
    rematerializedInit.push_back(rewritten(value.var->getInit()));
  std::vector<std::string> boundText;
  for (const Bound& bound : plan->bounds) boundText.push_back(bound.bound ? rewritten(bound.bound) : "1");
  // A grid-stride loop's header, from its rewritten parts (threadIdx is the segment loop's by now).
  std::vector<std::string> stridedHeader;
  for (const Strided& loop : plan->strided) {
    const clang::CharSourceRange header =
        clang::CharSourceRange::getTokenRange(loop.loop->getForLoc(), loop.loop->getRParenLoc());
    const std::string original = clone.getRewrittenText(header);
    const std::string name = loop.var->getNameAsString();
    stridedHeader.push_back(loop.type + " " + name + " = static_cast<" + loop.type + ">(" + rewritten(loop.start) +
                            ") + static_cast<" + loop.type + ">(dispar_iteration) * static_cast<" + loop.type + ">(" +
                            rewritten(loop.stride) + "); if (!(" + name + " < " + rewritten(loop.bound) +
                            ")) dispar_more = false; else" +
                            std::string(std::count(original.begin(), original.end(), '\n'), '\n'));
  }

  const std::string context = plan->needsContext ? "true" : "false";
  auto endSegment = [&](int segment) {
    if (segment == SegmentEdit::kNone || !plan->segmentHasCode[segment]) return std::string();
    std::string text;
    for (const Carried& carried : plan->carried)
      if (carried.copied && carried.usedInSegment[segment])
        text += carried.storage + "[dispar_thread] = " + carried.var->getNameAsString() + "; ";
    return text + "}); ";
  };
  auto startSegment = [&](int segment) {
    if (segment == SegmentEdit::kNone || !plan->segmentHasCode[segment]) return std::string();
    std::string text = "::dispar::hostk::forEachThread<" + context + ">(";
    std::string parameters = "const ::dispar::hostk::LoopThread dispar_thread";
    for (std::size_t b = 0; b < plan->bounds.size(); ++b)
      if (plan->bounds[b].segment == static_cast<unsigned>(segment))
        text = "::dispar::hostk::forEachThreadBelow<" + context + ">(static_cast<" + plan->bounds[b].type + ">(" +
               boundText[b] + "), ";
    for (const Strided& loop : plan->strided)
      if (loop.segment == static_cast<unsigned>(segment)) {
        text = "::dispar::hostk::forEachThreadStrided<" + context + ">(";
        parameters += ", const long long dispar_iteration, bool& dispar_more";
      }
    text += "[&](" + parameters + ") { ";
    for (std::size_t r = 0; r < plan->rematerialized.size(); ++r)
      if (plan->rematerialized[r].usedInSegment[segment])
        text += "const " + plan->rematerialized[r].type + " " + plan->rematerialized[r].var->getNameAsString() + " = " +
                rematerializedInit[r] + "; ";
    for (const Carried& carried : plan->carried)
      if (carried.usedInSegment[segment])
        text += (carried.copied ? "auto " : "auto& ") + carried.var->getNameAsString() + " = " + carried.storage +
                "[dispar_thread]; ";
    for (const Localized& local : plan->localized)
      if (local.segment == static_cast<unsigned>(segment))
        text += local.type + " " + local.var->getNameAsString() + "; ";
    return text;
  };
  // The statement's text up to and including its semicolon.
  auto withSemicolon = [&](const clang::Stmt* stmt) {
    clang::SourceLocation after =
        clang::Lexer::findLocationAfterToken(stmt->getEndLoc(), clang::tok::semi, sm, lang, false);
    if (after.isInvalid()) after = clang::Lexer::getLocForEndOfToken(stmt->getEndLoc(), 0, sm, lang);
    return clang::CharSourceRange::getCharRange(stmt->getBeginLoc(), after);
  };
  // A declaration moved elsewhere: its text, and nothing left where it was.
  auto take = [&](const clang::DeclStmt* decl) {
    const clang::CharSourceRange range = sm.getExpansionRange(decl->getSourceRange());
    std::string text = llvm::StringRef(clone.getRewrittenText(range)).rtrim().str();
    clone.ReplaceText(range, "");
    return text + " ";
  };

  // No edit adds a line, so the clone's #line stays exact.
  if (plan->gridLoops) {
    // One loop over the run's threads, the block's index and shape among the loop's values. The segment
    // captures by value: no thread changes a parameter here (one that does is kept per thread, and the
    // kernel gets thread loops), and the loop then keeps them in registers.
    std::string prologue = " ::dispar::hostk::forEachGridThread<" + context +
                           ">([=](const ::dispar::hostk::LoopBlockShape& " + kBlockShape +
                           ", const ::dispar::hostk::LoopThread dispar_thread) { ";
    for (const clang::DeclStmt* decl : plan->hoisted) prologue += take(decl);
    clone.InsertTextAfterToken(body->getLBracLoc(), prologue);
    clone.InsertTextBefore(body->getRBracLoc(), " }); ");
    return;
  }
  std::string prologue =
      std::string(" const ::dispar::hostk::LoopBlockShape ") + kBlockShape + " = ::dispar::hostk::loopBlockShape(); ";
  for (const clang::DeclStmt* decl : plan->hoisted) prologue += take(decl);
  for (const Carried& carried : plan->carried)
    prologue += "::dispar::hostk::PerThread<" + carried.storageType + "> " + carried.storage +
                (carried.parameter ? "(" + carried.var->getNameAsString() + ")" : "") + "; ";
  prologue += startSegment(0);
  clone.InsertTextAfterToken(body->getLBracLoc(), prologue);

  for (const SegmentEdit& edit : plan->edits) {
    std::string regionPrologue;
    for (const auto& [region, decl] : plan->regionHoisted)
      if (region == edit.region && edit.region != nullptr) regionPrologue += take(decl);
    const bool opensOnly = edit.closes == SegmentEdit::kNone;  // after a token: keep it apart
    const std::string text = std::string(edit.kind == SegmentEdit::InsertAfterToken || opensOnly ? " " : "") +
                             regionPrologue + endSegment(edit.closes) + startSegment(edit.opens);
    switch (edit.kind) {
      case SegmentEdit::ReplaceBarrier: clone.ReplaceText(withSemicolon(edit.stmt), text); break;
      case SegmentEdit::InsertBefore: clone.InsertTextBefore(edit.loc, text); break;
      case SegmentEdit::InsertAfterToken: clone.InsertTextAfterToken(edit.loc, text); break;
    }
  }
  clone.InsertTextBefore(body->getRBracLoc(), std::string(" ") + endSegment(static_cast<int>(plan->segments) - 1));

  // A statement declaring several variables, some carried: one declaration per variable, in order (a
  // later initialiser may read an earlier variable), on as many lines as the statement had.
  auto isLocalized = [&](const clang::VarDecl* var) {
    return std::any_of(plan->localized.begin(), plan->localized.end(),
                       [var](const Localized& local) { return local.var == var; });
  };
  std::vector<const clang::DeclStmt*> grouped;
  auto regroup = [&](const clang::Stmt* stmt) {
    const auto* decl = llvm::dyn_cast<clang::DeclStmt>(stmt);
    if (decl && std::find(grouped.begin(), grouped.end(), decl) == grouped.end()) grouped.push_back(decl);
  };
  for (const Carried& carried : plan->carried)
    if (!carried.parameter && !carried.stmt->isSingleDecl()) regroup(carried.stmt);
  // A localized variable is declared where it is used: its declaration goes (from a group: its part).
  for (const Localized& local : plan->localized)
    for (const clang::Stmt* stmt : body->body())
      if (const auto* decl = llvm::dyn_cast<clang::DeclStmt>(stmt))
        if (std::find(decl->decl_begin(), decl->decl_end(), local.var) != decl->decl_end()) regroup(decl);
  for (const clang::DeclStmt* stmt : grouped) {
    std::string declarations;
    for (const clang::Decl* d : stmt->decls()) {
      const auto* var = llvm::cast<clang::VarDecl>(d);
      const std::string name = var->getNameAsString();
      const clang::Expr* init = var->getInit();
      const std::string initText =
          init ? clone.getRewrittenText(sm.getExpansionRange(init->getSourceRange())) : std::string();
      const auto carried =
          std::find_if(plan->carried.begin(), plan->carried.end(), [var](const Carried& c) { return c.var == var; });
      if (isLocalized(var)) continue;
      if (carried == plan->carried.end())
        declarations += hostTypeName(var->getType(), context_) + " " + name + (init ? " = " + initText : "") + "; ";
      else if (init)
        declarations += "auto& " + name + " = " + carried->storage + ".set(dispar_thread, " + initText + "); ";
      else
        declarations += "auto& " + name + " = " + carried->storage + "[dispar_thread]; ";
    }
    const clang::CharSourceRange range = withSemicolon(stmt);
    const std::string original = clone.getRewrittenText(range);
    declarations += std::string(std::count(original.begin(), original.end(), '\n'), '\n');
    clone.ReplaceText(range, declarations);
  }

  for (const Carried& carried : plan->carried) {
    if (carried.parameter || std::find(grouped.begin(), grouped.end(), carried.stmt) != grouped.end()) continue;
    const std::string name = carried.var->getNameAsString();
    const clang::Expr* init = carried.var->getInit();
    if (!init) {
      clang::SourceLocation semicolon = carried.stmt->getEndLoc();
      clone.ReplaceText(clang::CharSourceRange::getCharRange(carried.stmt->getBeginLoc(), semicolon),
                        "auto& " + name + " = " + carried.storage + "[dispar_thread]");
      continue;
    }
    const clang::CharSourceRange initRange = sm.getExpansionRange(init->getSourceRange());
    clone.ReplaceText(clang::CharSourceRange::getCharRange(carried.stmt->getBeginLoc(), initRange.getBegin()),
                      "auto& " + name + " = " + carried.storage + ".set(dispar_thread, ");
    // `int x(5)`: the declaration's own `)` closes the call.
    if (carried.var->getInitStyle() != clang::VarDecl::CallInit) clone.InsertTextAfterToken(initRange.getEnd(), ")");
  }

  for (const clang::ReturnStmt* ret : plan->earlyReturns)
    clone.ReplaceText(ret->getReturnLoc(), 6, "return ::dispar::hostk::exitThread(dispar_thread)");

  for (std::size_t i = 0; i < plan->strided.size(); ++i)
    clone.ReplaceText(clang::CharSourceRange::getTokenRange(plan->strided[i].loop->getForLoc(),
                                                            plan->strided[i].loop->getRParenLoc()),
                      stridedHeader[i]);
}

}  // namespace dispar::frontend
