#include "CudaArchConditionals.h"

#include "clang/Basic/IdentifierTable.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/MacroInfo.h"
#include "clang/Lex/Token.h"

namespace dispar::frontend {

namespace {

constexpr llvm::StringLiteral kArch = "__CUDA_ARCH__";

bool mentionsArch(const clang::SourceManager& sm, clang::SourceRange condition) {
  const llvm::StringRef text =
      clang::Lexer::getSourceText(clang::CharSourceRange::getCharRange(condition), sm, clang::LangOptions());
  return text.contains(kArch);
}

bool namesArch(const clang::Token& name) {
  return name.getIdentifierInfo() && name.getIdentifierInfo()->getName() == kArch;
}

}  // namespace

void CudaArchConditionals::open(clang::SourceLocation ifLoc, bool arch, bool taken) {
  if (!sm_.isInMainFile(ifLoc)) return;
  groups_[ifLoc.getRawEncoding()] = Group{arch, taken};
}

void CudaArchConditionals::If(clang::SourceLocation loc, clang::SourceRange condition, ConditionValueKind value) {
  open(loc, mentionsArch(sm_, condition), value == CVK_True);
}

void CudaArchConditionals::Elif(clang::SourceLocation, clang::SourceRange condition, ConditionValueKind value,
                                clang::SourceLocation ifLoc) {
  auto group = groups_.find(ifLoc.getRawEncoding());
  if (group == groups_.end()) return;
  group->second.mentionsArch = group->second.mentionsArch || mentionsArch(sm_, condition);
  group->second.hostBranch = group->second.hostBranch || value == CVK_True;
}

void CudaArchConditionals::Ifdef(clang::SourceLocation loc, const clang::Token& name,
                                 const clang::MacroDefinition& definition) {
  open(loc, namesArch(name), definition.getMacroInfo() != nullptr);
}

void CudaArchConditionals::Ifndef(clang::SourceLocation loc, const clang::Token& name,
                                  const clang::MacroDefinition& definition) {
  open(loc, namesArch(name), definition.getMacroInfo() == nullptr);
}

void CudaArchConditionals::Else(clang::SourceLocation, clang::SourceLocation ifLoc) {
  auto group = groups_.find(ifLoc.getRawEncoding());
  if (group != groups_.end()) group->second.hostBranch = true;  // some branch is always compiled
}

void CudaArchConditionals::Endif(clang::SourceLocation, clang::SourceLocation ifLoc) {
  auto group = groups_.find(ifLoc.getRawEncoding());
  if (group == groups_.end()) return;
  if (group->second.mentionsArch && !group->second.hostBranch) hostless_.push_back(ifLoc);
  groups_.erase(group);
}

}  // namespace dispar::frontend
