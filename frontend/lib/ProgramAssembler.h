// Turns what the checks collected into the program model, applying the whole-program rules: directive
// placement, pipe endpoints, replica shapes, VNODE classification (CO/CG), cycles.
#ifndef DISPAR_FRONTEND_PROGRAM_ASSEMBLER_H
#define DISPAR_FRONTEND_PROGRAM_ASSEMBLER_H

#include "AnalysisState.h"
#include "frontend/DisparDiagnostics.h"

#include "clang/AST/ASTContext.h"

#include <string>

namespace dispar::frontend {

class ProgramAssembler {
 public:
  ProgramAssembler(clang::ASTContext& context, AnalysisState& state, DisparDiagnostics& diags)
      : context_(context), sm_(context.getSourceManager()), state_(state), diags_(diags) {}

  /// Fills `program` (vnodes, pipes, kernels, launches); reports every rule violation found.
  void assemble(lang::ProgramModel& program);

 private:
  lang::SourceLocation toModelLocation(clang::SourceLocation loc) const;
  clang::SourceLocation expansionBegin(const clang::Decl* decl) const;
  bool before(clang::SourceLocation a, clang::SourceLocation b) const;
  /// Where the outermost macro expansion holding `loc` is invoked; invalid for a location written in a file.
  clang::SourceLocation macroInvocation(clang::SourceLocation loc) const;
  std::string macroName(clang::SourceLocation invocation) const;

  void collectPipes(lang::ProgramModel& program);
  void collectVnodes(lang::ProgramModel& program);
  void applyDirectives(lang::ProgramModel& program);
  void classifyVnodes(lang::ProgramModel& program);
  void connectPipes(lang::ProgramModel& program);
  void warnAboutCycles(const lang::ProgramModel& program);
  void collectCuda(lang::ProgramModel& program);

  clang::ASTContext& context_;
  const clang::SourceManager& sm_;
  AnalysisState& state_;
  DisparDiagnostics& diags_;
};

}  // namespace dispar::frontend

#endif
