// Turns what the checks collected into the program model, applying the whole-program rules: directive
// placement, pipe endpoints, replica shapes, VNODE classification (CO/CG), cycles; and what the mapper
// knows of each VNODE's code (its fingerprint and features).
#ifndef DISPAR_FRONTEND_PROGRAM_ASSEMBLER_H
#define DISPAR_FRONTEND_PROGRAM_ASSEMBLER_H

#include "AnalysisState.h"
#include "ClauseConstants.h"
#include "frontend/DisparDiagnostics.h"

#include "clang/AST/ASTContext.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>
#include <vector>

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

  /// Whether the declared families and the graph they expand to are within lang::GraphLimits; reports
  /// each declaration beyond them.
  bool withinGraphLimits();
  void collectPipes(lang::ProgramModel& program);
  void collectVnodes(lang::ProgramModel& program);
  /// Every use of a pipe in a statement: inside a VNODE that declares it, in the direction declared.
  void checkPipeUses(const lang::ProgramModel& program);
  /// A clause's positive count from a constant expression (initial(kDelay - 1)); for a member of a
  /// VNODE_ARRAY, `binding` gives the family's index its value (replicas(kWidth[i])). Reports what is wrong.
  std::optional<int> positiveConstant(const ClauseExpression& expression, const char* clause,
                                      const ClauseConstants::Binding* binding = nullptr);
  /// cost(kCost[i]): a positive number from a constant expression, as positiveConstant.
  std::optional<double> positiveNumber(const ClauseExpression& expression, const char* clause,
                                       const ClauseConstants::Binding* binding);
  /// resource(i == 0 ? gpu : cpu): the requirement a constant expression chooses.
  std::optional<lang::Requirement> requirement(const ClauseExpression& expression,
                                               const ClauseConstants::Binding* binding);
  /// The weights of split(rr(...)) or join(rr(...)), each positive; reports what is wrong.
  std::optional<std::vector<int>> weights(const std::vector<ClauseExpression>& arguments, const char* clause);
  /// Weights that do not fit their pipe's replica counts (lang::LogicalStream::check), and initial(N)
  /// that does not fit its writer's turns (checkInitial).
  void checkWeights(lang::ProgramModel& program);
  /// The pipe models of a whole PIPE_ARRAY that `expr` names (IN(bands)); empty for anything else.
  std::vector<int> wholeArray(const lang::ProgramModel& program, const clang::Expr* expr) const;
  /// What `var` (a PIPE) or `var[index]` (an element of a PIPE_ARRAY) names for member `member` of a
  /// family whose index parameter is `indexParam` (null outside one). Reports nothing.
  struct Element {
    enum class Status { NotAPipe, NotConstant, OutOfRange, Ok } status = Status::NotAPipe;
    int pipe = -1;        // the pipe model, when Ok
    long long value = 0;  // the evaluated index, when OutOfRange
  };
  Element element(const clang::VarDecl* var, const clang::Expr* index, const clang::ParmVarDecl* indexParam,
                  int member) const;
  void reportOutOfRange(const clang::VarDecl* var, const clang::Expr* index, long long value,
                        const std::string& vnodeName);
  /// The pipe model a port declaration or use names (an element: evaluated for `member`, whose index
  /// parameter is `indexParam`); nullopt when `expr` names no pipe, -1 when an index error was reported.
  std::optional<int> resolvePipe(const clang::Expr* expr, const clang::ParmVarDecl* indexParam, int member,
                                 const std::string& vnodeName);
  void applyDirectives(lang::ProgramModel& program);
  void classifyVnodes(lang::ProgramModel& program);
  void connectPipes(lang::ProgramModel& program);
  /// Pipes whose replica counts link many writer replicas to many reader replicas.
  void warnAboutReplicaLinks(const lang::ProgramModel& program);
  void warnAboutCycles(const lang::ProgramModel& program);
  /// Each VNODE's code fingerprint and code features (docs/language.md, "The RTG file").
  void describeCode(lang::ProgramModel& program);
  void collectCuda(lang::ProgramModel& program);

  clang::ASTContext& context_;
  const clang::SourceManager& sm_;
  AnalysisState& state_;
  DisparDiagnostics& diags_;
  // Filled by collectPipes / collectVnodes, parallel to the model's pipes and vnodes.
  llvm::DenseMap<const clang::VarDecl*, int> firstPipeOf_;         // a PIPE's model, or a PIPE_ARRAY's element 0
  std::vector<const clang::VarDecl*> pipeDecls_;                   // per pipe model
  std::vector<std::size_t> declOf_;                                // per vnode model: its VnodeDecl in state_
  std::vector<std::vector<clang::SourceLocation>> portLocations_;  // per vnode model, per port
  llvm::SmallPtrSet<const clang::Expr*, 8> indexErrors_;           // index expressions already reported
  llvm::SmallPtrSet<const clang::VarDecl*, 8> arraysWithIndexErrors_;
  std::vector<clang::SourceLocation> weightsLocation_;  // per pipe model: its weighted clause, if any
  std::vector<clang::SourceLocation> initialLocation_;  // per pipe model: its initial(...) argument, if any
};

}  // namespace dispar::frontend

#endif
