// The frontend's checks, one concern each, in the clang-tidy shape: registerMatchers() narrows the
// AST to what the check needs (always isExpansionInMainFile), check() records it in AnalysisState or
// reports a diagnostic. Whole-program rules run at the end of the translation unit (ProgramAssembler).
#ifndef DISPAR_FRONTEND_CHECKS_H
#define DISPAR_FRONTEND_CHECKS_H

#include "AnalysisState.h"
#include "frontend/DisparDiagnostics.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

#include <memory>
#include <vector>

namespace dispar::frontend {

class FrontendCheck : public clang::ast_matchers::MatchFinder::MatchCallback {
 public:
  FrontendCheck(AnalysisState& state, DisparDiagnostics& diags) : state_(state), diags_(diags) {}
  virtual void registerMatchers(clang::ast_matchers::MatchFinder& finder) = 0;

 protected:
  AnalysisState& state_;
  DisparDiagnostics& diags_;
};

/// PIPE(T, name) declarations.
class PipeDeclarationCheck : public FrontendCheck {
 public:
  using FrontendCheck::FrontendCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void run(const clang::ast_matchers::MatchFinder::MatchResult& result) override;
};

/// VNODE(name, ports...) definitions.
class VnodeDefinitionCheck : public FrontendCheck {
 public:
  using FrontendCheck::FrontendCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void run(const clang::ast_matchers::MatchFinder::MatchResult& result) override;
};

/// A pipe used directly in code instead of through a declared port.
class PipeReferenceCheck : public FrontendCheck {
 public:
  using FrontendCheck::FrontendCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void run(const clang::ast_matchers::MatchFinder::MatchResult& result) override;
};

/// A read or write whose value type is not the pipe's element type.
class PortElementTypeCheck : public FrontendCheck {
 public:
  using FrontendCheck::FrontendCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void run(const clang::ast_matchers::MatchFinder::MatchResult& result) override;
};

/// A user-defined main.
class UserMainCheck : public FrontendCheck {
 public:
  using FrontendCheck::FrontendCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void run(const clang::ast_matchers::MatchFinder::MatchResult& result) override;
};

/// Kernels, device functions and variables, launches, GPU library calls and the main file's call graph.
class GpuUseCollector : public FrontendCheck {
 public:
  using FrontendCheck::FrontendCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void run(const clang::ast_matchers::MatchFinder::MatchResult& result) override;
};

/// Every check the frontend runs, in registration order.
std::vector<std::unique_ptr<FrontendCheck>> makeChecks(AnalysisState& state, DisparDiagnostics& diags);

}  // namespace dispar::frontend

#endif
