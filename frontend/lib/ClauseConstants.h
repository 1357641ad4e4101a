// The arguments of clauses that are not literals: replicas(kBands - 1), split(rr(kWeights)),
// join(rr(2 * kTaps, 1)), and per member of a family cost(kCost[i]) and resource(i < 2 ? gpu : cpu). The
// pragma handler keeps their tokens; once the AST is complete this evaluates them against the main file's
// file-scope constants (whose own initialisers may be any C++ constant expression, evaluated by Clang).
#ifndef DISPAR_FRONTEND_CLAUSECONSTANTS_H
#define DISPAR_FRONTEND_CLAUSECONSTANTS_H

#include "frontend/Directives.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"

#include <optional>
#include <string>
#include <vector>

namespace dispar::frontend {

class ClauseConstants {
 public:
  ClauseConstants(const std::vector<const clang::Decl*>& topLevelDecls, clang::ASTContext& context)
      : decls_(topLevelDecls), context_(context) {}

  /// A name that stands for a value while evaluating: a VNODE_ARRAY's index for one of its members
  /// (`replicas(kWidth[i])`).
  struct Binding {
    std::string name;
    long long value = 0;
  };

  /// The value of a constant expression: integer and floating literals, file-scope numeric constants
  /// (`kBands`), elements of file-scope constant numeric arrays (`kWidth[2]`), `binding`'s name if given,
  /// parentheses, C's arithmetic (`+ - * / %`), comparisons (`== != < <= > >=`), `! && ||` and `?:`.
  /// nullopt and `problem` ("'n' is not a file-scope constant") when it is not one, or (evaluate) when
  /// its value is not an integer.
  std::optional<long long> evaluate(const ClauseExpression& expression, std::string& problem,
                                    const Binding* binding = nullptr) const;
  std::optional<double> evaluateNumber(const ClauseExpression& expression, std::string& problem,
                                       const Binding* binding = nullptr) const;
  /// An expression whose value is one of `names` (resource(i < 2 ? gpu : cpu): names cpu and gpu): a
  /// name, or a conditional choosing between names.
  std::optional<std::string> evaluateName(const ClauseExpression& expression, const std::vector<std::string>& names,
                                          std::string& problem, const Binding* binding = nullptr) const;

  /// A number as messages show it: 2.5, 0, 1e+20.
  static std::string spell(double number);

  /// One value of an argument list, with what gave it ("kWeights[1]", "2 * kTaps").
  struct ListValue {
    long long value;
    std::string source;
    clang::SourceLocation location;
  };
  /// The values of an argument list; an argument that names a whole constant array gives all its
  /// elements (rr(kWeights)). nullopt, `problem` and `failed` (the argument's index) when one has none.
  std::optional<std::vector<ListValue>> evaluateList(const std::vector<ClauseExpression>& arguments,
                                                     std::string& problem, std::size_t& failed) const;

 private:
  /// A value while evaluating: an integer, a floating-point number, or one of the clause's names.
  struct Value {
    long long whole = 0;
    double fraction = 0;
    bool real = false;
    std::string name;
    static Value integer(long long value) { return {value, 0, false, {}}; }
    static Value floating(double value) { return {0, value, true, {}}; }
    static Value named(std::string name) { return {0, 0, false, std::move(name)}; }
    double asReal() const { return real ? fraction : static_cast<double>(whole); }
  };
  std::optional<Value> value(const ClauseExpression& expression, const std::vector<std::string>& names,
                             std::string& problem, const Binding* binding) const;

  const clang::VarDecl* constant(const std::string& name) const;
  /// A numeric constant's value; nullopt when `var` is not one.
  std::optional<Value> scalar(const clang::VarDecl* var) const;
  /// A constant numeric array's elements; nullopt when `var` is not one.
  std::optional<std::vector<Value>> arrayElements(const clang::VarDecl* var) const;

  class Parser;
  const std::vector<const clang::Decl*>& decls_;
  clang::ASTContext& context_;
};

}  // namespace dispar::frontend

#endif
