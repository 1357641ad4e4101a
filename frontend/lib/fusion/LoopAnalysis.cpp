#include "LoopAnalysis.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <algorithm>
#include <cstdlib>
#include <functional>

namespace dispar::frontend::fusion {

// ---------------------------------------------------------------------------------------------------
// Poly

Poly Poly::constant(std::int64_t value) {
  Poly p;
  if (value != 0) p.terms_[{}] = value;
  return p;
}

Poly Poly::atom(const std::string& text) {
  Poly p;
  p.terms_[{text}] = 1;
  return p;
}

Poly Poly::operator+(const Poly& other) const {
  Poly sum = *this;
  for (const auto& [atoms, coefficient] : other.terms_) {
    std::int64_t& slot = sum.terms_[atoms];
    slot += coefficient;
    if (slot == 0) sum.terms_.erase(atoms);
  }
  return sum;
}

Poly Poly::operator-(const Poly& other) const { return *this + other * constant(-1); }

Poly Poly::operator*(const Poly& other) const {
  Poly product;
  for (const auto& [a, ca] : terms_)
    for (const auto& [b, cb] : other.terms_) {
      std::vector<std::string> atoms = a;
      atoms.insert(atoms.end(), b.begin(), b.end());
      std::sort(atoms.begin(), atoms.end());
      std::int64_t& slot = product.terms_[atoms];
      slot += ca * cb;
      if (slot == 0) product.terms_.erase(atoms);
    }
  return product;
}

std::optional<std::int64_t> Poly::constantValue() const {
  if (terms_.empty()) return 0;
  if (terms_.size() == 1 && terms_.begin()->first.empty()) return terms_.begin()->second;
  return std::nullopt;
}

std::string Poly::text() const {
  if (terms_.empty()) return "0";
  std::string out;
  auto emit = [&out](const std::vector<std::string>& atoms, std::int64_t coefficient) {
    bool negative = coefficient < 0;
    std::int64_t magnitude = std::llabs(coefficient);
    if (out.empty())
      out += negative ? "-" : "";
    else
      out += negative ? " - " : " + ";
    std::string term = (magnitude != 1 || atoms.empty()) ? std::to_string(magnitude) : "";
    for (const std::string& atom : atoms) term += (term.empty() ? "" : " * ") + atom;
    out += term;
  };
  // Added terms before subtracted ones (`last - first`), the constant last.
  for (bool positive : {true, false})
    for (const auto& [atoms, coefficient] : terms_)
      if (!atoms.empty() && (coefficient > 0) == positive) emit(atoms, coefficient);
  if (auto it = terms_.find({}); it != terms_.end()) emit({}, it->second);
  return out;
}

namespace {

// `x` or `x * y`, or a parenthesised sum, as one operand of `*` or `+`.
std::string operand(const Poly& p) {
  std::string text = p.text();
  bool simple = text.find(" + ") == std::string::npos && text.find(" - ") == std::string::npos && text[0] != '-';
  return simple ? text : "(" + text + ")";
}

// Operands whose text can stand next to `+` and `*` without parentheses.
bool isPrimary(const clang::Expr* expr) {
  const clang::Expr* e = expr->IgnoreImpCasts();
  return llvm::isa<clang::DeclRefExpr, clang::MemberExpr, clang::CallExpr, clang::IntegerLiteral,
                   clang::FloatingLiteral, clang::ParenExpr, clang::ArraySubscriptExpr, clang::CXXNamedCastExpr,
                   clang::CXXFunctionalCastExpr>(e);
}

}  // namespace

std::string AffinePointer::textAt(const Poly& i) const {
  Poly offset = index.at(i);
  if (subscripted) return "&" + leafText + "[" + offset.text() + "]";
  if (offset.isZero()) return leafText;
  return leafText + " + " + operand(offset);
}

bool AffinePointer::sameAs(const AffinePointer& other) const {
  return leafText == other.leafText && root == other.root && subscripted == other.subscripted &&
         (index.inner - other.index.inner).isZero() && (index.coefficient - other.index.coefficient).isZero() &&
         (index.offset - other.index.offset).isZero();
}

// ---------------------------------------------------------------------------------------------------
// LoopAnalysis

clang::CharSourceRange LoopAnalysis::fileRange(clang::SourceRange range) const {
  clang::CharSourceRange chars =
      clang::Lexer::makeFileCharRange(clang::CharSourceRange::getTokenRange(range), sm_, context_.getLangOpts());
  if (chars.isInvalid() || !sm_.isInMainFile(chars.getBegin())) return {};
  return chars;
}

std::string LoopAnalysis::text(const clang::Expr* expr) const {
  clang::CharSourceRange chars = fileRange(expr->getSourceRange());
  if (chars.isInvalid()) return "";
  return clang::Lexer::getSourceText(chars, sm_, context_.getLangOpts()).str();
}

std::optional<std::int64_t> LoopAnalysis::constant(const clang::Expr* expr) const {
  if (expr->isValueDependent() || expr->isTypeDependent()) return std::nullopt;
  clang::Expr::EvalResult result;
  if (!expr->EvaluateAsInt(result, context_)) return std::nullopt;
  return result.Val.getInt().getExtValue();
}

bool LoopAnalysis::mentions(const clang::Stmt* stmt, const clang::VarDecl* var) {
  if (!stmt) return false;
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(stmt); ref && ref->getDecl() == var) return true;
  for (const clang::Stmt* child : stmt->children())
    if (mentions(child, var)) return true;
  return false;
}

bool LoopAnalysis::onlyRead(const clang::VarDecl* var, const clang::Stmt* where) const {
  if (var->getType().isConstQualified()) return true;
  if (!where) return true;
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(where); ref && ref->getDecl() == var) {
    // A read is an lvalue-to-rvalue conversion; anything else (assignment, ++, &, a reference) may write.
    auto parents = context_.getParents(*ref);
    if (parents.empty()) return false;
    if (const auto* address = parents[0].get<clang::UnaryOperator>();
        address && address->getOpcode() == clang::UO_AddrOf) {
      // &n handed on as a pointer to const (fftw_plan_many_dft's sizes) only lets the callee read it.
      auto above = context_.getParents(*address);
      const auto* toConst = above.empty() ? nullptr : above[0].get<clang::ImplicitCastExpr>();
      return toConst && toConst->getType()->isPointerType() && toConst->getType()->getPointeeType().isConstQualified();
    }
    const auto* cast = parents[0].get<clang::ImplicitCastExpr>();
    return cast &&
           (cast->getCastKind() == clang::CK_LValueToRValue || cast->getCastKind() == clang::CK_ArrayToPointerDecay);
  }
  for (const clang::Stmt* child : where->children())
    if (!onlyRead(var, child)) return false;
  return true;
}

// Why the expression's value may differ between iterations ("" when it cannot): fusion evaluates it
// once, so it must not read the loop variable, memory the calls may write, or anything the loop changes.
std::string LoopAnalysis::whyVariant(const clang::Expr* expr, const CanonicalLoop& loop) const {
  if (mentions(expr, loop.variable)) return "changes with the loop";
  if (expr->HasSideEffects(context_, /*IncludePossibleEffects=*/false)) return "has side effects";
  std::string why;
  std::function<void(const clang::Stmt*)> visit = [&](const clang::Stmt* s) {
    if (!s || !why.empty()) return;
    if (const auto* call = llvm::dyn_cast<clang::CXXMemberCallExpr>(s)) {
      // v.data() and v.size() of a container named directly: the pointer and size, not its elements.
      const clang::CXXMethodDecl* method = call->getMethodDecl();
      const auto* member = llvm::dyn_cast<clang::MemberExpr>(call->getCallee()->IgnoreParens());
      if (method && member && !member->isArrow() && call->getNumArgs() == 0 &&
          (method->getName() == "data" || method->getName() == "size") &&
          llvm::isa<clang::DeclRefExpr>(call->getImplicitObjectArgument()->IgnoreParenImpCasts()))
        return;
      why = "calls a function";
      return;
    }
    if (llvm::isa<clang::CallExpr>(s)) {
      why = "calls a function";
      return;
    }
    if (llvm::isa<clang::ArraySubscriptExpr>(s)) {
      why = "reads memory the loop may write";
      return;
    }
    if (const auto* unary = llvm::dyn_cast<clang::UnaryOperator>(s); unary && unary->getOpcode() == clang::UO_Deref) {
      why = "reads memory the loop may write";
      return;
    }
    if (const auto* member = llvm::dyn_cast<clang::MemberExpr>(s); member && member->isArrow()) {
      why = "reads memory the loop may write";
      return;
    }
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(s)) {
      const auto* var = llvm::dyn_cast<clang::VarDecl>(ref->getDecl());
      clang::QualType type = var ? var->getType() : clang::QualType();
      if (var && (type->isScalarType() || type->isReferenceType()) && !onlyRead(var, loop.loop->getBody()))
        why = "uses '" + var->getNameAsString() + "', which the loop changes";
      return;
    }
    for (const clang::Stmt* child : s->children()) visit(child);
  };
  visit(expr);
  return why;
}

Analysed<Affine> LoopAnalysis::affine(const clang::Expr* expr, const CanonicalLoop& loop, const clang::VarDecl* inner) {
  const clang::Expr* e = expr->IgnoreParenImpCasts();
  // Integer conversions written out (`(long)j * n`) keep the value for the sizes fusion deals with.
  while (const auto* cast = llvm::dyn_cast<clang::ExplicitCastExpr>(e)) {
    if (!cast->getType()->isIntegerType()) break;
    e = cast->getSubExpr()->IgnoreParenImpCasts();
  }
  auto variable = [&](const clang::Stmt* s) { return mentions(s, loop.variable) || (inner && mentions(s, inner)); };
  if (!variable(e))
    if (std::optional<std::int64_t> value = constant(e)) return {Affine{Poly(), Poly::constant(*value), Poly()}, ""};
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    if (ref->getDecl() == loop.variable) return {Affine{Poly::constant(1), Poly(), Poly()}, ""};
    if (inner && ref->getDecl() == inner) return {Affine{Poly(), Poly(), Poly::constant(1)}, ""};
  }
  auto notAffine = [&]() {
    return Analysed<Affine>::fail("'" + text(expr) + "' is not affine in '" + loop.variable->getNameAsString() + "'");
  };
  if (const auto* binary = llvm::dyn_cast<clang::BinaryOperator>(e)) {
    clang::BinaryOperatorKind op = binary->getOpcode();
    if (op == clang::BO_Add || op == clang::BO_Sub || op == clang::BO_Mul) {
      Analysed<Affine> lhs = affine(binary->getLHS(), loop, inner);
      if (!lhs) return lhs;
      Analysed<Affine> rhs = affine(binary->getRHS(), loop, inner);
      if (!rhs) return rhs;
      const Affine &l = *lhs, &r = *rhs;
      if (op == clang::BO_Add)
        return {Affine{l.coefficient + r.coefficient, l.offset + r.offset, l.inner + r.inner}, ""};
      if (op == clang::BO_Sub)
        return {Affine{l.coefficient - r.coefficient, l.offset - r.offset, l.inner - r.inner}, ""};
      bool lVaries = !l.coefficient.isZero() || !l.inner.isZero(),
           rVaries = !r.coefficient.isZero() || !r.inner.isZero();
      if (lVaries && rVaries) return notAffine();
      return {Affine{l.coefficient * r.offset + r.coefficient * l.offset, l.offset * r.offset,
                     l.inner * r.offset + r.inner * l.offset},
              ""};
    }
  }
  if (const auto* unary = llvm::dyn_cast<clang::UnaryOperator>(e)) {
    if (unary->getOpcode() == clang::UO_Plus) return affine(unary->getSubExpr(), loop, inner);
    if (unary->getOpcode() == clang::UO_Minus) {
      Analysed<Affine> sub = affine(unary->getSubExpr(), loop, inner);
      if (!sub) return sub;
      return {Affine{Poly() - sub->coefficient, Poly() - sub->offset, Poly() - sub->inner}, ""};
    }
  }
  std::string written = text(e);
  if (written.empty()) return Analysed<Affine>::fail("an argument is written inside a macro");
  if (variable(e)) return notAffine();
  if (std::string why = whyVariant(e, loop); !why.empty()) return Analysed<Affine>::fail("'" + written + "' " + why);
  return {Affine{Poly(), Poly::atom(isPrimary(e) ? written : "(" + written + ")"), Poly()}, ""};
}

Analysed<Poly> LoopAnalysis::invariantPoly(const clang::Expr* expr, const CanonicalLoop& loop) {
  Analysed<Affine> a = affine(expr, loop);
  if (!a) return Analysed<Poly>::fail(a.whyNot);
  if (!a->coefficient.isZero()) return Analysed<Poly>::fail("'" + text(expr) + "' changes with the loop");
  return {a->offset, ""};
}

Analysed<std::string> LoopAnalysis::invariantText(const clang::Expr* expr, const CanonicalLoop& loop) {
  std::string written = text(expr);
  if (written.empty()) return Analysed<std::string>::fail("an argument is written inside a macro");
  if (std::string why = whyVariant(expr, loop); !why.empty())
    return Analysed<std::string>::fail("'" + written + "' " + why);
  return {written, ""};
}

Analysed<AffinePointer> LoopAnalysis::leafPointer(const clang::Expr* expr, const CanonicalLoop& loop,
                                                  const clang::VarDecl* inner) {
  std::string written = text(expr);
  if (written.empty()) return Analysed<AffinePointer>::fail("an argument is written inside a macro");
  if (mentions(expr, loop.variable) || (inner && mentions(expr, inner)))
    return Analysed<AffinePointer>::fail("'" + written + "' is not a pointer plus an offset affine in '" +
                                         loop.variable->getNameAsString() + "'");
  if (std::string why = whyVariant(expr, loop); !why.empty())
    return Analysed<AffinePointer>::fail("'" + written + "' " + why);
  AffinePointer p;
  p.leafText = isPrimary(expr) || llvm::isa<clang::CStyleCastExpr>(expr) ? written : "(" + written + ")";
  // The variable behind casts and v.data(): `reinterpret_cast<fftw_complex*>(v.data())` is v's storage.
  const clang::Expr* object = expr->IgnoreParenCasts();
  if (const auto* call = llvm::dyn_cast<clang::CXXMemberCallExpr>(object))
    object = call->getImplicitObjectArgument()->IgnoreParenImpCasts();
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(object)) p.root = ref->getDecl();
  return {p, ""};
}

Analysed<AffinePointer> LoopAnalysis::pointer(const clang::Expr* expr, const CanonicalLoop& loop,
                                              const clang::VarDecl* inner) {
  const clang::Expr* e = expr->IgnoreParenImpCasts();
  // (void*)(x + j * n), for the complex BLAS calls that take void pointers.
  while (const auto* cast = llvm::dyn_cast<clang::ExplicitCastExpr>(e)) {
    if (!cast->getType()->isVoidPointerType()) break;
    e = cast->getSubExpr()->IgnoreParenImpCasts();
  }
  const clang::Expr* base = nullptr;
  const clang::Expr* index = nullptr;
  bool subtract = false;
  if (const auto* binary = llvm::dyn_cast<clang::BinaryOperator>(e);
      binary && (binary->getOpcode() == clang::BO_Add || binary->getOpcode() == clang::BO_Sub)) {
    bool lhsPointer = binary->getLHS()->getType()->isPointerType();
    base = lhsPointer ? binary->getLHS() : binary->getRHS();
    index = lhsPointer ? binary->getRHS() : binary->getLHS();
    subtract = binary->getOpcode() == clang::BO_Sub;
  } else if (const auto* unary = llvm::dyn_cast<clang::UnaryOperator>(e);
             unary && unary->getOpcode() == clang::UO_AddrOf) {
    // &a[i], &v[i]: the address of an element is the element's position.
    const clang::Expr* operand = unary->getSubExpr()->IgnoreParens();
    if (isElementAccess(operand)) return element(operand, loop, inner);
  }
  if (!base) return leafPointer(e, loop, inner);
  return offsetPointer(base, index, subtract, loop, inner);
}

// base + index (or - index), both analysed.
Analysed<AffinePointer> LoopAnalysis::offsetPointer(const clang::Expr* base, const clang::Expr* index, bool subtract,
                                                    const CanonicalLoop& loop, const clang::VarDecl* inner) {
  Analysed<AffinePointer> p = pointer(base, loop, inner);
  if (!p) return p;
  Analysed<Affine> i = affine(index, loop, inner);
  if (!i) return Analysed<AffinePointer>::fail(i.whyNot);
  AffinePointer result = *p;
  if (subtract) {
    result.index.coefficient = result.index.coefficient - i->coefficient;
    result.index.offset = result.index.offset - i->offset;
    result.index.inner = result.index.inner - i->inner;
  } else {
    result.index.coefficient = result.index.coefficient + i->coefficient;
    result.index.offset = result.index.offset + i->offset;
    result.index.inner = result.index.inner + i->inner;
  }
  return {result, ""};
}

// a[i] on an array or pointer, or v[i] on a container named directly (its elements are contiguous:
// std::vector, std::array).
bool LoopAnalysis::isElementAccess(const clang::Expr* e) {
  if (llvm::isa<clang::ArraySubscriptExpr>(e)) return true;
  const auto* op = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e);
  return op && op->getOperator() == clang::OO_Subscript && op->getNumArgs() == 2 &&
         llvm::isa<clang::DeclRefExpr>(op->getArg(0)->IgnoreParenImpCasts());
}

Analysed<AffinePointer> LoopAnalysis::element(const clang::Expr* access, const CanonicalLoop& loop,
                                              const clang::VarDecl* inner) {
  const clang::Expr* e = access->IgnoreImplicit()->IgnoreParens();
  const clang::Expr* base = nullptr;
  const clang::Expr* index = nullptr;
  if (const auto* subscript = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) {
    base = subscript->getBase();
    index = subscript->getIdx();
  } else if (const auto* op = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e);
             op && op->getOperator() == clang::OO_Subscript && op->getNumArgs() == 2 &&
             llvm::isa<clang::DeclRefExpr>(op->getArg(0)->IgnoreParenImpCasts())) {
    Analysed<AffinePointer> container = leafPointer(op->getArg(0)->IgnoreParenImpCasts(), loop, inner);
    if (!container) return container;
    Analysed<Affine> i = affine(op->getArg(1), loop, inner);
    if (!i) return Analysed<AffinePointer>::fail(i.whyNot);
    AffinePointer result = *container;
    result.index = *i;
    result.subscripted = true;
    return {result, ""};
  }
  if (!base) return Analysed<AffinePointer>::fail("'" + text(access) + "' is not an element of an array");
  return offsetPointer(base, index, false, loop, inner);
}

Analysed<CanonicalLoop> LoopAnalysis::canonicalLoop(const clang::ForStmt* loop) {
  using Fail = Analysed<CanonicalLoop>;
  CanonicalLoop result;
  result.loop = loop;
  const auto* init = llvm::dyn_cast_or_null<clang::DeclStmt>(loop->getInit());
  const auto* var = init && init->isSingleDecl() ? llvm::dyn_cast<clang::VarDecl>(init->getSingleDecl()) : nullptr;
  if (!var || !var->getType()->isIntegerType() || !var->getInit())
    return Fail::fail("the loop does not declare an integer variable in its initialisation");
  result.variable = var;

  const auto* cond = llvm::dyn_cast_or_null<clang::BinaryOperator>(loop->getCond());
  const clang::Expr* bound = nullptr;
  bool inclusive = false;
  if (cond) {
    auto isVar = [var](const clang::Expr* e) {
      const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenImpCasts());
      return ref && ref->getDecl() == var;
    };
    clang::BinaryOperatorKind op = cond->getOpcode();
    if (isVar(cond->getLHS()) && (op == clang::BO_LT || op == clang::BO_LE || op == clang::BO_NE)) {
      bound = cond->getRHS();
      inclusive = op == clang::BO_LE;
    } else if (isVar(cond->getRHS()) && (op == clang::BO_GT || op == clang::BO_GE)) {
      bound = cond->getLHS();
      inclusive = op == clang::BO_GE;
    }
  }
  if (!bound) return Fail::fail("the loop condition is not 'variable < bound'");

  bool unitStep = false;
  const clang::Expr* inc = loop->getInc() ? loop->getInc()->IgnoreParenImpCasts() : nullptr;
  auto isVar = [var](const clang::Expr* e) {
    const auto* ref = e ? llvm::dyn_cast<clang::DeclRefExpr>(e->IgnoreParenImpCasts()) : nullptr;
    return ref && ref->getDecl() == var;
  };
  if (const auto* unary = llvm::dyn_cast_or_null<clang::UnaryOperator>(inc))
    unitStep = unary->isIncrementOp() && isVar(unary->getSubExpr());
  else if (const auto* compound = llvm::dyn_cast_or_null<clang::CompoundAssignOperator>(inc))
    unitStep =
        compound->getOpcode() == clang::BO_AddAssign && isVar(compound->getLHS()) && constant(compound->getRHS()) == 1;
  else if (const auto* assign = llvm::dyn_cast_or_null<clang::BinaryOperator>(inc);
           assign && assign->getOpcode() == clang::BO_Assign) {
    const auto* sum = llvm::dyn_cast<clang::BinaryOperator>(assign->getRHS()->IgnoreParenImpCasts());
    unitStep = isVar(assign->getLHS()) && sum && sum->getOpcode() == clang::BO_Add &&
               ((isVar(sum->getLHS()) && constant(sum->getRHS()) == 1) ||
                (isVar(sum->getRHS()) && constant(sum->getLHS()) == 1));
  }
  if (!unitStep) return Fail::fail("the loop does not step by 1");

  Analysed<Poly> lower = invariantPoly(var->getInit(), result);
  if (!lower) return Fail::fail("the loop start " + lower.whyNot);
  Analysed<Poly> upper = invariantPoly(bound, result);
  if (!upper) return Fail::fail("the loop bound " + upper.whyNot);
  result.lower = *lower;
  result.end = *upper + Poly::constant(inclusive ? 1 : 0);
  result.count = result.end - *lower;

  const clang::Stmt* body = loop->getBody();
  if (const auto* block = llvm::dyn_cast<clang::CompoundStmt>(body)) {
    for (const clang::Stmt* s : block->body())
      if (!llvm::isa<clang::NullStmt>(s)) result.body.push_back(s);
  } else if (!llvm::isa<clang::NullStmt>(body)) {
    result.body.push_back(body);
  }
  if (!onlyRead(var, body)) return Fail::fail("the loop variable is changed in the body");
  return {result, ""};
}

// ---------------------------------------------------------------------------------------------------
// Guard

void requireAnIteration(Guard& guard, const CanonicalLoop& loop) {
  guard.requireAtLeast(loop.end, loop.lower + Poly::constant(1), "the loop runs no iteration");
}

bool ownsItsStorage(const clang::ValueDecl* root) {
  const auto* var = llvm::dyn_cast_or_null<clang::VarDecl>(root);
  if (!var) return false;
  clang::QualType type = var->getType();
  return !type->isReferenceType() && (type->isConstantArrayType() || type->isRecordType());
}

void Guard::requireAtLeast(const Poly& lhs, const Poly& rhs, const std::string& why) {
  if (std::optional<std::int64_t> d = (lhs - rhs).constantValue()) {
    if (*d < 0) refute(why);
    return;
  }
  check(lhs.text() + " >= " + rhs.text());
}

void Guard::requireEqual(const Poly& lhs, const Poly& rhs, const std::string& why) {
  if (std::optional<std::int64_t> d = (lhs - rhs).constantValue()) {
    if (*d != 0) refute(why);
    return;
  }
  check(lhs.text() + " == " + rhs.text());
}

void Guard::requireAny(const std::vector<std::vector<AtLeast>>& clauses, const std::string& why) {
  std::vector<std::string> open;  // clauses undecided at compile time, as text
  for (const std::vector<AtLeast>& clause : clauses) {
    std::vector<std::string> terms;
    bool refutedClause = false;
    for (const auto& [lhs, rhs] : clause) {
      if (std::optional<std::int64_t> d = (lhs - rhs).constantValue()) {
        refutedClause = refutedClause || *d < 0;
        continue;
      }
      terms.push_back(lhs.text() + " >= " + rhs.text());
    }
    if (refutedClause) continue;
    if (terms.empty()) return;  // this clause is proven
    std::string text;
    for (const std::string& t : terms) text += (text.empty() ? "" : " && ") + t;
    open.push_back(text);
  }
  if (open.empty()) {
    refute(why);
    return;
  }
  if (open.size() == 1) {
    check(open[0]);
    return;
  }
  std::string text;
  for (const std::string& c : open) text += (text.empty() ? "(" : " || ") + std::string("(") + c + ")";
  check(text + ")");
}

void Guard::requireDisjoint(const Region& output, const Region& input, bool inPlaceAllowed) {
  if (output.pointer.sameAs(input.pointer)) {
    if (!inPlaceAllowed) refute("the output '" + output.name + "' is also the input '" + input.name + "'");
    return;
  }
  if (output.pointer.root && input.pointer.root && output.pointer.root != input.pointer.root &&
      ownsItsStorage(output.pointer.root) && ownsItsStorage(input.pointer.root))
    return;
  auto begin = [](const Region& r) { return "(const char*)(" + r.firstText + ")"; };
  auto end = [&begin](const Region& r) { return begin(r) + " + " + r.elementBytes + " * " + operand(r.extent); };
  check("(" + end(output) + " <= " + begin(input) + " || " + end(input) + " <= " + begin(output) + ")");
}

void Guard::check(const std::string& condition) {
  if (std::find(runtime_.begin(), runtime_.end(), condition) == runtime_.end()) runtime_.push_back(condition);
}

std::string Guard::condition() const {
  std::string out;
  for (const std::string& c : runtime_) out += (out.empty() ? "" : " && ") + c;
  return out;
}

}  // namespace dispar::frontend::fusion
