// What library-call fusion proves about a loop before it rewrites it: the loop is canonical (one integer
// variable, a loop-invariant start and bound, step 1), every scalar argument is loop-invariant, every
// array argument is a pointer affine in the loop variable, and the arrays the fused call writes do not
// overlap those it reads. What cannot be decided at compile time becomes a run-time condition (Guard);
// what is decided false becomes the reason of a missed remark.
#ifndef DISPAR_FRONTEND_FUSION_LOOP_ANALYSIS_H
#define DISPAR_FRONTEND_FUSION_LOOP_ANALYSIS_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dispar::frontend::fusion {

/// A polynomial with integer coefficients over loop-invariant atoms (source texts such as `n` or
/// `v.size()`): the strides, extents and counts fusion compares and emits. Terms are kept in a sorted
/// map, so equal polynomials print the same text.
class Poly {
 public:
  Poly() = default;
  static Poly constant(std::int64_t value);
  static Poly atom(const std::string& text);

  Poly operator+(const Poly& other) const;
  Poly operator-(const Poly& other) const;
  Poly operator*(const Poly& other) const;

  bool isZero() const { return terms_.empty(); }
  std::optional<std::int64_t> constantValue() const;
  /// C++ text of the polynomial, non-constant terms first: `n * m + 2`.
  std::string text() const;

 private:
  std::map<std::vector<std::string>, std::int64_t> terms_;  // sorted atoms -> coefficient, no zeros
};

/// `coefficient * i + offset` for the loop variable i.
struct Affine {
  Poly coefficient;
  Poly offset;
  Poly inner;  // the coefficient of an inner loop's variable (copy loops in the body), when one is given
  Poly at(const Poly& i) const { return offset + coefficient * i; }
};

/// A pointer argument written as an invariant pointer (the leaf: `x`, `v.data()`) plus an element index
/// affine in the loop variable (`x + j * ldx`, `&x[j * n + 1]`).
struct AffinePointer {
  std::string leafText;
  const clang::ValueDecl* root = nullptr;  // the variable the leaf names (`x`, or `v` of `v.data()`)
  Affine index;
  bool subscripted = false;  // written `&v[index]` on a container: the text keeps that form
  /// The pointer at iteration `i` (e.g. the first one), as C++ text.
  std::string textAt(const Poly& i) const;
  bool sameAs(const AffinePointer& other) const;
};

/// `for (int i = lower; i < upper; ++i) body` (or `<=`, `!=`, `i++`, `i += 1`).
struct CanonicalLoop {
  const clang::ForStmt* loop = nullptr;
  const clang::VarDecl* variable = nullptr;
  Poly lower;
  Poly end;                              // one past the last value: the bound, plus one for `<=`
  Poly count;                            // end - lower
  std::vector<const clang::Stmt*> body;  // the body's statements (one, if it is not a block)
};

/// Either a value or why there is none (the text of a missed remark).
template <class T>
struct Analysed {
  std::optional<T> value;
  std::string whyNot;
  static Analysed fail(std::string why) { return Analysed{std::nullopt, std::move(why)}; }
  explicit operator bool() const { return value.has_value(); }
  const T& operator*() const { return *value; }
  const T* operator->() const { return &*value; }
};

/// Reads the source text of expressions and decides what varies with one loop.
class LoopAnalysis {
 public:
  explicit LoopAnalysis(clang::ASTContext& context) : context_(context), sm_(context.getSourceManager()) {}

  Analysed<CanonicalLoop> canonicalLoop(const clang::ForStmt* loop);

  /// An integer argument as a polynomial: affine in the loop variable (and in `inner`, the variable of a
  /// loop in the body, when given), its other parts invariant.
  Analysed<Affine> affine(const clang::Expr* expr, const CanonicalLoop& loop, const clang::VarDecl* inner = nullptr);
  /// A scalar argument that must not change with the loop: its text.
  Analysed<std::string> invariantText(const clang::Expr* expr, const CanonicalLoop& loop);
  /// An invariant integer argument as a polynomial.
  Analysed<Poly> invariantPoly(const clang::Expr* expr, const CanonicalLoop& loop);
  Analysed<AffinePointer> pointer(const clang::Expr* expr, const CanonicalLoop& loop,
                                  const clang::VarDecl* inner = nullptr);
  /// An element access `p[i]` (or `v[i]` on a container) as the pointer `&p[i]`.
  Analysed<AffinePointer> element(const clang::Expr* access, const CanonicalLoop& loop, const clang::VarDecl* inner);
  static bool isElementAccess(const clang::Expr* e);
  Analysed<AffinePointer> offsetPointer(const clang::Expr* base, const clang::Expr* index, bool subtract,
                                        const CanonicalLoop& loop, const clang::VarDecl* inner);
  /// The value of an integer constant expression (an enumerator such as CblasNoTrans).
  std::optional<std::int64_t> constant(const clang::Expr* expr) const;

  /// The expression's text as written in the main file; empty if it is not written there in one piece.
  std::string text(const clang::Expr* expr) const;
  /// The text of the whole statement, and its character range in the main file.
  clang::CharSourceRange fileRange(clang::SourceRange range) const;

  /// True when the variable is only ever read in `where` (never assigned, incremented or addressed).
  bool onlyRead(const clang::VarDecl* var, const clang::Stmt* where) const;
  /// True when `stmt` mentions the variable.
  static bool mentions(const clang::Stmt* stmt, const clang::VarDecl* var);

  clang::ASTContext& context() const { return context_; }

 private:
  std::string whyVariant(const clang::Expr* expr, const CanonicalLoop& loop) const;
  Analysed<AffinePointer> leafPointer(const clang::Expr* expr, const CanonicalLoop& loop, const clang::VarDecl* inner);

  clang::ASTContext& context_;
  const clang::SourceManager& sm_;
};

/// A region of memory an argument covers: `extent` elements of `elementBytes` (C++ text) from `first`.
struct Region {
  std::string name;  // the argument as written, for remarks
  AffinePointer pointer;
  std::string firstText;
  Poly extent;
  std::string elementBytes;
};

/// The conditions a fusion needs: proven ones vanish, refuted ones make it a missed fusion (the first
/// reason is kept), the rest are checked at run time before the fused call, the loop running otherwise.
class Guard {
 public:
  void requireAtLeast(const Poly& lhs, const Poly& rhs, const std::string& why);
  void requireEqual(const Poly& lhs, const Poly& rhs, const std::string& why);
  /// At least one clause holds, each clause a conjunction of `lhs >= rhs`.
  using AtLeast = std::pair<Poly, Poly>;
  void requireAny(const std::vector<std::vector<AtLeast>>& clauses, const std::string& why);
  /// The output region must not overlap the input region (identical pointers are allowed when
  /// `inPlaceAllowed`, for transforms that may run in place).
  void requireDisjoint(const Region& output, const Region& input, bool inPlaceAllowed = false);

  bool refuted() const { return !refutation_.empty(); }
  const std::string& refutation() const { return refutation_; }
  /// The run-time condition, `a && b && ...`; empty when everything was proven.
  std::string condition() const;

 private:
  void check(const std::string& condition);
  void refute(const std::string& why) {
    if (refutation_.empty()) refutation_ = why;
  }
  std::vector<std::string> runtime_;
  std::string refutation_;
};

/// The loop runs at least once: `end >= lower + 1`, compared rather than subtracted, so that an unsigned
/// loop variable whose loop would not run cannot wrap the count around.
void requireAnIteration(Guard& guard, const CanonicalLoop& loop);

/// True when distinct roots of this kind are distinct storage: arrays and containers held by value.
bool ownsItsStorage(const clang::ValueDecl* root);

}  // namespace dispar::frontend::fusion

#endif
