#include "CodeFeatures.h"

#include "AnalysisState.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

namespace dispar::frontend {

namespace {

std::optional<long long> integerConstant(const clang::Expr* expr, const clang::ASTContext& context) {
  if (!expr || expr->isValueDependent() || expr->isTypeDependent()) return std::nullopt;
  clang::Expr::EvalResult result;
  if (!expr->EvaluateAsInt(result, context)) return std::nullopt;
  std::optional<int64_t> value = result.Val.getInt().tryExtValue();
  if (!value) return std::nullopt;
  return static_cast<long long>(*value);
}

const clang::VarDecl* variableOf(const clang::Expr* expr) {
  const auto* ref = expr ? llvm::dyn_cast<clang::DeclRefExpr>(expr->IgnoreParenImpCasts()) : nullptr;
  return ref ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
}

// The comparison read as `variable OP bound`.
clang::BinaryOperatorKind reversed(clang::BinaryOperatorKind op) {
  switch (op) {
    case clang::BO_LT: return clang::BO_GT;
    case clang::BO_GT: return clang::BO_LT;
    case clang::BO_LE: return clang::BO_GE;
    case clang::BO_GE: return clang::BO_LE;
    default: return op;
  }
}

// ceil(a / b) for a >= 0, b > 0, without overflow.
long long ceilDiv(long long a, long long b) { return a / b + (a % b != 0 ? 1 : 0); }

}  // namespace

std::optional<double> constantTripCount(const clang::ForStmt* loop, const clang::ASTContext& context) {
  // for (int i = START; ...) or for (i = START; ...)
  const clang::VarDecl* variable = nullptr;
  std::optional<long long> start;
  if (const auto* decl = llvm::dyn_cast_or_null<clang::DeclStmt>(loop->getInit()); decl && decl->isSingleDecl()) {
    variable = llvm::dyn_cast<clang::VarDecl>(decl->getSingleDecl());
    if (variable) start = integerConstant(variable->getInit(), context);
  } else if (const auto* assign = llvm::dyn_cast_or_null<clang::BinaryOperator>(loop->getInit());
             assign && assign->getOpcode() == clang::BO_Assign) {
    variable = variableOf(assign->getLHS());
    start = integerConstant(assign->getRHS(), context);
  }
  if (!variable || !start || !variable->getType()->isIntegerType()) return std::nullopt;

  // i OP BOUND or BOUND OP i
  const auto* condition =
      llvm::dyn_cast_or_null<clang::BinaryOperator>(loop->getCond() ? loop->getCond()->IgnoreParenImpCasts() : nullptr);
  if (!condition) return std::nullopt;
  clang::BinaryOperatorKind op = condition->getOpcode();
  std::optional<long long> bound;
  if (variableOf(condition->getLHS()) == variable) {
    bound = integerConstant(condition->getRHS(), context);
  } else if (variableOf(condition->getRHS()) == variable) {
    bound = integerConstant(condition->getLHS(), context);
    op = reversed(op);
  }
  if (!bound) return std::nullopt;

  // ++i, i++, --i, i--, i += STEP, i -= STEP
  std::optional<long long> step;
  const clang::Expr* increment = loop->getInc() ? loop->getInc()->IgnoreParenImpCasts() : nullptr;
  if (const auto* unary = llvm::dyn_cast_or_null<clang::UnaryOperator>(increment);
      unary && unary->isIncrementDecrementOp() && variableOf(unary->getSubExpr()) == variable) {
    step = unary->isIncrementOp() ? 1 : -1;
  } else if (const auto* compound = llvm::dyn_cast_or_null<clang::CompoundAssignOperator>(increment);
             compound && variableOf(compound->getLHS()) == variable &&
             (compound->getOpcode() == clang::BO_AddAssign || compound->getOpcode() == clang::BO_SubAssign)) {
    step = integerConstant(compound->getRHS(), context);
    if (step && compound->getOpcode() == clang::BO_SubAssign) {
      if (*step == std::numeric_limits<long long>::min()) return std::nullopt;
      step = -*step;
    }
  }
  if (!step || *step == 0) return std::nullopt;

  long long distance = 0;  // how far the bound is, in the direction the loop moves
  const bool up = *step > 0;
  if (up ? llvm::SubOverflow(*bound, *start, distance) : llvm::SubOverflow(*start, *bound, distance))
    return std::nullopt;
  const long long stride = up ? *step : -*step;
  switch (op) {
    case clang::BO_LT:
      if (!up) return std::nullopt;  // counts away from the bound: it would not end
      return distance <= 0 ? 0.0 : static_cast<double>(ceilDiv(distance, stride));
    case clang::BO_GT:
      if (up) return std::nullopt;
      return distance <= 0 ? 0.0 : static_cast<double>(ceilDiv(distance, stride));
    case clang::BO_LE:
      if (!up) return std::nullopt;
      return distance < 0 ? 0.0 : static_cast<double>(distance / stride) + 1;
    case clang::BO_GE:
      if (up) return std::nullopt;
      return distance < 0 ? 0.0 : static_cast<double>(distance / stride) + 1;
    case clang::BO_NE:
      // Ends only by landing on the bound.
      if (distance < 0 || distance % stride != 0) return std::nullopt;
      return static_cast<double>(distance / stride);
    default: return std::nullopt;
  }
}

namespace {

using Counts = CodeFeatureCounter::Counts;

void addCall(Counts& into, const Counts& callee, double weight, double depth) {
  for (std::size_t f = 0; f < kCodeFeatureCount; ++f)
    if (f != static_cast<std::size_t>(CodeFeature::LoopDepth)) into.value[f] += weight * callee.value[f];
  into[CodeFeature::LoopDepth] = std::max(into[CodeFeature::LoopDepth], depth + callee[CodeFeature::LoopDepth]);
}

// What an overloaded operator counts as: the operator it spells, not a call (`v[i]` on a vector is a
// memory access as `p[i]` is, `a + b` on complex numbers arithmetic).
std::optional<CodeFeature> overloadedOperatorFeature(const clang::CXXOperatorCallExpr* call) {
  const bool unary = call->getNumArgs() == 1;
  switch (call->getOperator()) {
    case clang::OO_Plus:
    case clang::OO_Minus:
    case clang::OO_Slash:
    case clang::OO_Percent:
    case clang::OO_Caret:
    case clang::OO_Pipe:
    case clang::OO_Tilde:
    case clang::OO_LessLess:
    case clang::OO_GreaterGreater:
    case clang::OO_PlusEqual:
    case clang::OO_MinusEqual:
    case clang::OO_StarEqual:
    case clang::OO_SlashEqual:
    case clang::OO_PercentEqual:
    case clang::OO_CaretEqual:
    case clang::OO_AmpEqual:
    case clang::OO_PipeEqual:
    case clang::OO_LessLessEqual:
    case clang::OO_GreaterGreaterEqual:
    case clang::OO_PlusPlus:
    case clang::OO_MinusMinus: return CodeFeature::ArithOps;
    case clang::OO_Star: return unary ? CodeFeature::MemoryOps : CodeFeature::ArithOps;
    case clang::OO_Amp: return unary ? std::nullopt : std::optional<CodeFeature>(CodeFeature::ArithOps);
    case clang::OO_Subscript:
    case clang::OO_Arrow: return CodeFeature::MemoryOps;
    case clang::OO_AmpAmp:
    case clang::OO_PipePipe: return CodeFeature::BranchOps;
    case clang::OO_Call: return CodeFeature::CallOps;
    default: return std::nullopt;  // assignment, comparison, ...
  }
}

// Counts one function's code into `out`, at the weight and loop depth of where it stands; calls of the
// file's functions add those functions' counts (CodeFeatureCounter::countsOf) at the call's weight.
class BodyCounter : public clang::RecursiveASTVisitor<BodyCounter> {
 public:
  BodyCounter(CodeFeatureCounter& counter, const clang::ASTContext& context, Counts& out)
      : counter_(counter), context_(context), sm_(context.getSourceManager()), out_(out) {}

  // Unevaluated operands and types (array bounds, template arguments, decltype) are not run.
  bool TraverseTypeLoc(clang::TypeLoc) { return true; }
  bool TraverseUnaryExprOrTypeTraitExpr(clang::UnaryExprOrTypeTraitExpr*) { return true; }
  bool TraverseCXXTypeidExpr(clang::CXXTypeidExpr*) { return true; }
  bool TraverseCXXNoexceptExpr(clang::CXXNoexceptExpr*) { return true; }

  bool TraverseForStmt(clang::ForStmt* loop) {
    TraverseStmt(loop->getInit());
    Loop inner(*this, constantTripCount(loop, context_).value_or(1.0));
    if (loop->getCond()) add(CodeFeature::BranchOps);
    TraverseStmt(loop->getCond());
    TraverseStmt(loop->getInc());
    return TraverseStmt(loop->getBody());
  }
  bool TraverseWhileStmt(clang::WhileStmt* loop) {
    Loop inner(*this, 1.0);
    add(CodeFeature::BranchOps);
    TraverseStmt(loop->getConditionVariableDeclStmt());
    TraverseStmt(loop->getCond());
    return TraverseStmt(loop->getBody());
  }
  bool TraverseDoStmt(clang::DoStmt* loop) {
    Loop inner(*this, 1.0);
    add(CodeFeature::BranchOps);
    TraverseStmt(loop->getCond());
    return TraverseStmt(loop->getBody());
  }
  bool TraverseCXXForRangeStmt(clang::CXXForRangeStmt* loop) {
    TraverseStmt(loop->getInit());
    TraverseStmt(loop->getRangeInit());
    Loop inner(*this, 1.0);
    add(CodeFeature::BranchOps);
    return TraverseStmt(loop->getBody());
  }

  bool VisitIfStmt(clang::IfStmt*) { return add(CodeFeature::BranchOps); }
  bool VisitCaseStmt(clang::CaseStmt*) { return add(CodeFeature::BranchOps); }
  bool VisitConditionalOperator(clang::ConditionalOperator*) { return add(CodeFeature::BranchOps); }
  bool VisitBinaryConditionalOperator(clang::BinaryConditionalOperator*) { return add(CodeFeature::BranchOps); }

  bool VisitBinaryOperator(clang::BinaryOperator* op) {  // compound assignments too
    if (op->isLogicalOp()) return add(CodeFeature::BranchOps);
    if (op->isMultiplicativeOp() || op->isAdditiveOp() || op->isShiftOp() || op->isBitwiseOp() ||
        op->isCompoundAssignmentOp())
      return add(CodeFeature::ArithOps);
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* op) {
    switch (op->getOpcode()) {
      case clang::UO_Deref: return add(CodeFeature::MemoryOps);
      case clang::UO_PreInc:
      case clang::UO_PreDec:
      case clang::UO_PostInc:
      case clang::UO_PostDec:
      case clang::UO_Minus:
      case clang::UO_Not: return add(CodeFeature::ArithOps);
      default: return true;
    }
  }
  bool VisitArraySubscriptExpr(clang::ArraySubscriptExpr*) { return add(CodeFeature::MemoryOps); }
  bool VisitMemberExpr(clang::MemberExpr* member) {
    // `p->x` as written; a member named in a member function (implicitly this->x) is not.
    if (member->isArrow() && !member->getBase()->isImplicitCXXThis()) add(CodeFeature::MemoryOps);
    return true;
  }

  // A launch: its kernel's code counts apart, as kernel_*; the configuration <<<...>>> is no call.
  bool TraverseCUDAKernelCallExpr(clang::CUDAKernelCallExpr* launch) {
    add(CodeFeature::KernelLaunches);
    if (const clang::FunctionDecl* kernel = mainFileDefinition(launch->getDirectCallee(), sm_)) {
      const Counts counts = counter_.countsOf(kernel);
      out_[CodeFeature::KernelArithOps] +=
          weight_ * (counts[CodeFeature::ArithOps] + counts[CodeFeature::KernelArithOps]);
      out_[CodeFeature::KernelMemoryOps] +=
          weight_ * (counts[CodeFeature::MemoryOps] + counts[CodeFeature::KernelMemoryOps]);
    }
    if (const clang::CallExpr* config = launch->getConfig())
      for (const clang::Expr* arg : config->arguments()) TraverseStmt(const_cast<clang::Expr*>(arg));
    for (clang::Expr* arg : launch->arguments()) TraverseStmt(arg);
    return true;
  }

  bool VisitCallExpr(clang::CallExpr* call) {
    const clang::FunctionDecl* callee = call->getDirectCallee();
    // A conversion operator is a conversion (the compiler's, mostly), not a call written in the code.
    if (llvm::isa_and_nonnull<clang::CXXConversionDecl>(callee)) return true;
    if (const auto* op = llvm::dyn_cast<clang::CXXOperatorCallExpr>(call)) {
      // `chain[i]` on a PIPE_ARRAY picks a port; it touches no data.
      const bool portSelection = callee && llvm::StringRef(callee->getQualifiedNameAsString()).starts_with("dispar::");
      std::optional<CodeFeature> feature = overloadedOperatorFeature(op);
      if (feature && !portSelection) add(*feature);
    } else {
      add(CodeFeature::CallOps);
    }
    if (!callee) return true;
    if (const clang::FunctionDecl* definition = mainFileDefinition(callee, sm_)) {
      addCall(out_, counter_.countsOf(definition), weight_, depth_);
      return true;
    }
    // A lambda written in the code: counted where it is written, not at its calls.
    if (const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(callee); method && method->getParent()->isLambda())
      return true;
    if (sm_.isInMainFile(sm_.getExpansionLoc(callee->getLocation())) && callee->hasBody()) return true;
    const std::string name = callee->getIdentifier() ? callee->getName().str() : std::string();
    if (llvm::StringRef(name).starts_with("cblas_") || llvm::StringRef(name).starts_with("cublas"))
      return add(CodeFeature::LibCallsBlas);
    if (llvm::StringRef(name).starts_with("fftw") || llvm::StringRef(name).starts_with("cufft"))
      return add(CodeFeature::LibCallsFft);
    const std::string qualified = callee->getQualifiedNameAsString();
    if (llvm::StringRef(qualified).starts_with("std::") || llvm::StringRef(qualified).starts_with("dispar::"))
      return true;
    if (llvm::isa<clang::CXXOperatorCallExpr>(call)) return true;  // counted as its operator
    return add(CodeFeature::LibCallsOther);
  }

  // A constructor of the file's classes runs its code; a constructor is not a call expression.
  bool VisitCXXConstructExpr(clang::CXXConstructExpr* construct) {
    if (const clang::FunctionDecl* definition = mainFileDefinition(construct->getConstructor(), sm_))
      addCall(out_, counter_.countsOf(definition), weight_, depth_);
    return true;
  }

 private:
  // A loop's body, condition and increment: `factor` times as often, one level deeper.
  class Loop {
   public:
    Loop(BodyCounter& counter, double factor) : counter_(counter), weight_(counter.weight_), depth_(counter.depth_) {
      counter_.weight_ *= factor;
      counter_.depth_ += 1;
      double& deepest = counter_.out_[CodeFeature::LoopDepth];
      deepest = std::max(deepest, counter_.depth_);
    }
    ~Loop() {
      counter_.weight_ = weight_;
      counter_.depth_ = depth_;
    }
    Loop(const Loop&) = delete;
    Loop& operator=(const Loop&) = delete;

   private:
    BodyCounter& counter_;
    double weight_;
    double depth_;
  };

  bool add(CodeFeature feature) {
    out_[feature] += weight_;
    return true;
  }

  CodeFeatureCounter& counter_;
  const clang::ASTContext& context_;
  const clang::SourceManager& sm_;
  Counts& out_;
  double weight_ = 1.0;
  double depth_ = 0.0;
};

}  // namespace

CodeFeatureCounter::Counts CodeFeatureCounter::countsOf(const clang::FunctionDecl* fn) {
  if (auto it = done_.find(fn); it != done_.end()) return it->second;
  const std::size_t level = active_.size();
  if (auto it = std::find(active_.begin(), active_.end(), fn); it != active_.end()) {
    reachedActive_ = std::min(reachedActive_, static_cast<std::size_t>(it - active_.begin()));
    return Counts{};
  }
  const std::size_t outer = reachedActive_;
  reachedActive_ = std::numeric_limits<std::size_t>::max();
  active_.push_back(fn);
  Counts counts;
  BodyCounter body(*this, context_, counts);
  if (const auto* constructor = llvm::dyn_cast<clang::CXXConstructorDecl>(fn))
    for (const clang::CXXCtorInitializer* init : constructor->inits())
      if (init->isWritten()) body.TraverseStmt(init->getInit());
  body.TraverseStmt(fn->getBody());
  active_.pop_back();
  // Counts that miss a recursive call into a caller still active hold for this call chain only.
  if (reachedActive_ >= level) done_.try_emplace(fn, counts);
  reachedActive_ = std::min(outer, reachedActive_);
  return counts;
}

lang::CodeFeatures CodeFeatureCounter::features(const clang::FunctionDecl* vnode, double bytesWrittenPerMessage) {
  Counts counts = countsOf(vnode);
  counts[CodeFeature::BytesWrittenPerMessage] = bytesWrittenPerMessage;
  lang::CodeFeatures features;
  for (std::size_t f = 0; f < kCodeFeatureCount; ++f) features[kCodeFeatureTable[f].name] = counts.value[f];
  return features;
}

}  // namespace dispar::frontend
