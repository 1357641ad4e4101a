#include "CudaArchConditionals.h"

#include "clang/Basic/IdentifierTable.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/MacroInfo.h"
#include "clang/Lex/Token.h"
#include "llvm/ADT/StringExtras.h"

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

void CudaArchConditionals::recordComparisons(clang::SourceRange condition) {
  if (condition.isInvalid() || !condition.getBegin().isFileID() || !sm_.isInMainFile(condition.getBegin())) return;
  const llvm::StringRef text =
      clang::Lexer::getSourceText(clang::CharSourceRange::getCharRange(condition), sm_, clang::LangOptions());
  auto isIdentifierChar = [](char c) { return llvm::isAlnum(c) || c == '_'; };
  for (std::size_t at = text.find(kArch); at != llvm::StringRef::npos; at = text.find(kArch, at + 1)) {
    const std::size_t end = at + kArch.size();
    if ((at > 0 && isIdentifierChar(text[at - 1])) || (end < text.size() && isIdentifierChar(text[end]))) continue;
    // `defined(__CUDA_ARCH__)` / `defined __CUDA_ARCH__` asks whether the code is compiled for a GPU.
    llvm::StringRef before = text.take_front(at).rtrim();
    if (before.consume_back("(")) before = before.rtrim();
    if (before.ends_with("defined") && (before.size() == 7 || !isIdentifierChar(before[before.size() - 8]))) continue;
    comparisons_.push_back(condition.getBegin().getLocWithOffset(static_cast<int>(at)));
  }
}

void CudaArchConditionals::open(clang::SourceLocation ifLoc, bool arch, bool taken) {
  if (!sm_.isInMainFile(ifLoc)) return;
  groups_[ifLoc.getRawEncoding()] = Group{arch, taken};
}

void CudaArchConditionals::If(clang::SourceLocation loc, clang::SourceRange condition, ConditionValueKind value) {
  open(loc, mentionsArch(sm_, condition), value == CVK_True);
  recordComparisons(condition);
}

void CudaArchConditionals::Elif(clang::SourceLocation, clang::SourceRange condition, ConditionValueKind value,
                                clang::SourceLocation ifLoc) {
  auto group = groups_.find(ifLoc.getRawEncoding());
  if (group == groups_.end()) return;
  group->second.mentionsArch = group->second.mentionsArch || mentionsArch(sm_, condition);
  group->second.hostBranch = group->second.hostBranch || value == CVK_True;
  recordComparisons(condition);
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
