// Finds the `#if __CUDA_ARCH__ ...` (or `#ifdef __CUDA_ARCH__`) groups of the main file that keep no code
// on the host: the frontend parses the host side, where __CUDA_ARCH__ is not defined, so in a kernel such
// a group is simply absent from its host version. A kernel guarded by `#if __CUDA_ARCH__ >= 700` with no
// `#else` would run empty on the host path: CudaLowering reports it instead. A group with a host branch
// (`#else`, `#ifndef __CUDA_ARCH__`) is a fallback the host runs, and is fine.
//
// It also finds every `__CUDA_ARCH__` that an `#if` or `#elif` of the main file compares (not the operand
// of `defined`): in device code the host versions take the branches of the host path's architecture
// (dispar/hostk/Arch.h), for which the frontend parses the file again with those tokens spelt
// DISPAR_CUARCH (runFrontend).
#ifndef DISPAR_FRONTEND_CUDA_ARCH_CONDITIONALS_H
#define DISPAR_FRONTEND_CUDA_ARCH_CONDITIONALS_H

#include "clang/Basic/SourceManager.h"
#include "clang/Lex/PPCallbacks.h"

#include <map>
#include <vector>

namespace dispar::frontend {

class CudaArchConditionals : public clang::PPCallbacks {
 public:
  /// `hostless`: receives the location of each such group's `#if`; `comparisons`: of each compared
  /// `__CUDA_ARCH__` token.
  CudaArchConditionals(const clang::SourceManager& sm, std::vector<clang::SourceLocation>& hostless,
                       std::vector<clang::SourceLocation>& comparisons)
      : sm_(sm), hostless_(hostless), comparisons_(comparisons) {}

  void If(clang::SourceLocation loc, clang::SourceRange condition, ConditionValueKind value) override;
  void Elif(clang::SourceLocation loc, clang::SourceRange condition, ConditionValueKind value,
            clang::SourceLocation ifLoc) override;
  void Ifdef(clang::SourceLocation loc, const clang::Token& name, const clang::MacroDefinition& definition) override;
  void Ifndef(clang::SourceLocation loc, const clang::Token& name, const clang::MacroDefinition& definition) override;
  void Else(clang::SourceLocation loc, clang::SourceLocation ifLoc) override;
  void Endif(clang::SourceLocation loc, clang::SourceLocation ifLoc) override;

 private:
  struct Group {
    bool mentionsArch = false;
    bool hostBranch = false;  ///< some branch of the group is compiled on the host
  };
  void open(clang::SourceLocation ifLoc, bool mentionsArch, bool taken);
  void recordComparisons(clang::SourceRange condition);

  const clang::SourceManager& sm_;
  std::vector<clang::SourceLocation>& hostless_;
  std::vector<clang::SourceLocation>& comparisons_;
  std::map<unsigned, Group> groups_;  // by the raw encoding of the group's #if location
};

}  // namespace dispar::frontend

#endif
