#include "WarpLockstep.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace dispar::frontend {

namespace {

/// The operations of a compound assignment, by hostk::LockstepOp enumerator.
struct CompoundOperation {
  clang::BinaryOperatorKind binary;
  clang::OverloadedOperatorKind overloaded;  // in a template, where the types are not known yet
  const char* name;
};
constexpr CompoundOperation kOperations[] = {
    {clang::BO_Assign, clang::OO_Equal, "Assign"},
    {clang::BO_AddAssign, clang::OO_PlusEqual, "Add"},
    {clang::BO_SubAssign, clang::OO_MinusEqual, "Sub"},
    {clang::BO_MulAssign, clang::OO_StarEqual, "Mul"},
    {clang::BO_DivAssign, clang::OO_SlashEqual, "Div"},
    {clang::BO_RemAssign, clang::OO_PercentEqual, "Rem"},
    {clang::BO_AndAssign, clang::OO_AmpEqual, "And"},
    {clang::BO_OrAssign, clang::OO_PipeEqual, "Or"},
    {clang::BO_XorAssign, clang::OO_CaretEqual, "Xor"},
    {clang::BO_ShlAssign, clang::OO_LessLessEqual, "Shl"},
    {clang::BO_ShrAssign, clang::OO_GreaterGreaterEqual, "Shr"},
};

bool isVolatileLvalue(const clang::Expr* expr) {
  return expr->isGLValue() && expr->getType().isVolatileQualified() && !expr->getType()->isRecordType();
}

/// An assignment's parts, whether Clang built it as an operator or (in a template) as an operator call.
struct Assignment {
  const clang::Expr* target = nullptr;
  const clang::Expr* value = nullptr;
  const char* operation = nullptr;
  clang::SourceLocation operatorLoc;
};

Assignment asAssignment(const clang::Expr* expr) {
  Assignment found;
  if (const auto* op = llvm::dyn_cast<clang::BinaryOperator>(expr)) {
    for (const CompoundOperation& candidate : kOperations)
      if (candidate.binary == op->getOpcode())
        found = Assignment{op->getLHS(), op->getRHS(), candidate.name, op->getOperatorLoc()};
  } else if (const auto* call = llvm::dyn_cast<clang::CXXOperatorCallExpr>(expr); call && call->getNumArgs() == 2) {
    for (const CompoundOperation& candidate : kOperations)
      if (candidate.overloaded == call->getOperator())
        found = Assignment{call->getArg(0), call->getArg(1), candidate.name, call->getOperatorLoc()};
  }
  return found;
}

bool readsVolatile(const clang::Stmt* stmt) {
  if (const auto* expr = llvm::dyn_cast<clang::Expr>(stmt); expr && isVolatileLvalue(expr)) return true;
  for (const clang::Stmt* child : stmt->children())
    if (child && readsVolatile(child)) return true;
  return false;
}

// Every volatile store of a body, and the full expressions that are statements of their own.
class StoreScan : public clang::RecursiveASTVisitor<StoreScan> {
 public:
  bool TraverseLambdaExpr(clang::LambdaExpr*) { return true; }  // a lambda's body is another function

  bool VisitStmt(clang::Stmt* stmt) {
    // The statements a full expression can be: children of a block, bodies of branches and loops.
    auto statement = [this](const clang::Stmt* child) {
      if (const auto* expr = llvm::dyn_cast_or_null<clang::Expr>(child)) statements.insert(expr->IgnoreParens());
    };
    if (const auto* block = llvm::dyn_cast<clang::CompoundStmt>(stmt))
      for (const clang::Stmt* child : block->body()) statement(child);
    else if (const auto* branch = llvm::dyn_cast<clang::IfStmt>(stmt))
      statement(branch->getThen()), statement(branch->getElse());
    else if (const auto* loop = llvm::dyn_cast<clang::ForStmt>(stmt))
      statement(loop->getBody());
    else if (const auto* loop = llvm::dyn_cast<clang::WhileStmt>(stmt))
      statement(loop->getBody());
    else if (const auto* loop = llvm::dyn_cast<clang::DoStmt>(stmt))
      statement(loop->getBody());
    else if (const auto* label = llvm::dyn_cast<clang::LabelStmt>(stmt))
      statement(label->getSubStmt());
    else if (const auto* kase = llvm::dyn_cast<clang::SwitchCase>(stmt))
      statement(kase->getSubStmt());

    const auto* expr = llvm::dyn_cast<clang::Expr>(stmt);
    if (!expr) return true;
    if (const Assignment assignment = asAssignment(expr); assignment.target && isVolatileLvalue(assignment.target)) {
      stores.push_back(expr);
      readWrite = readWrite || assignment.operation != llvm::StringRef("Assign") || readsVolatile(assignment.value);
    } else if (const auto* unary = llvm::dyn_cast<clang::UnaryOperator>(expr);
               unary && unary->isIncrementDecrementOp() && isVolatileLvalue(unary->getSubExpr())) {
      stores.push_back(expr);
      readWrite = true;
    }
    return true;
  }

  std::vector<const clang::Expr*> stores;
  llvm::SmallPtrSet<const clang::Expr*, 32> statements;
  bool readWrite = false;  ///< some store also reads volatile memory
};

}  // namespace

WarpSynchronousCode findWarpSynchronousCode(const clang::FunctionDecl* fn) {
  WarpSynchronousCode code;
  if (!fn->doesThisDeclarationHaveABody()) return code;
  StoreScan scan;
  scan.TraverseStmt(fn->getBody());
  if (!scan.readWrite) return code;
  for (const clang::Expr* store : scan.stores) {
    const Assignment assignment = asAssignment(store);
    if (!assignment.target || !scan.statements.count(store)) {
      code.refused.push_back(store);
      continue;
    }
    code.stores.push_back(
        LockstepStore{assignment.target, assignment.value, assignment.operatorLoc, assignment.operation});
  }
  return code;
}

}  // namespace dispar::frontend
