// The integer arguments of clauses that are not literals: replicas(kBands - 1), split(rr(kWeights)),
// join(rr(2 * kTaps, 1)). The pragma handler keeps their tokens; once the AST is complete this evaluates
// them against the main file's file-scope constants (whose own initialisers may be any C++ constant
// expression, evaluated by Clang).
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

  /// The value of an expression of integer literals, file-scope integer constants (`kBands`), elements
  /// of file-scope constant integer arrays (`kWidth[2]`), + - * / % and parentheses, and `binding`'s
  /// name if given. nullopt and `problem` ("'n' is not a file-scope integer constant") when it is not one.
  std::optional<long long> evaluate(const ClauseExpression& expression, std::string& problem,
                                    const Binding* binding = nullptr) const;

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
  const clang::VarDecl* constant(const std::string& name) const;
  /// A constant integer array's elements; nullopt when `var` is not one.
  std::optional<std::vector<long long>> arrayElements(const clang::VarDecl* var) const;

  class Parser;
  const std::vector<const clang::Decl*>& decls_;
  clang::ASTContext& context_;
};

}  // namespace dispar::frontend

#endif
