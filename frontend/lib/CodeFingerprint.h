// A VNODE's code fingerprint (docs/language.md, "The RTG file"): a hash of the tokens of its body and of
// every function and kernel of the file it calls, launches or names, so that a performance history keyed
// by it forgets what was measured once the code changes, and only then (comments, whitespace, line
// numbers and the file's path do not count).
#ifndef DISPAR_FRONTEND_CODE_FINGERPRINT_H
#define DISPAR_FRONTEND_CODE_FINGERPRINT_H

#include "AnalysisState.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/Lex/Preprocessor.h"
#include "llvm/ADT/DenseMap.h"

#include <string>
#include <vector>

namespace dispar::frontend {

/// Records into `tokens` every main-file token the parser receives from `pp` (set before parsing).
void recordMainFileTokens(clang::Preprocessor& pp, MainFileTokens& tokens);

class CodeFingerprint {
 public:
  CodeFingerprint(const clang::ASTContext& context, const MainFileTokens& tokens)
      : sm_(context.getSourceManager()), tokens_(tokens) {}

  /// 16 lowercase hex digits: 64-bit FNV-1a of the token spellings of `vnode`'s body, then of each
  /// function of the file it reaches (codeOf), each token followed by a 0 byte and each function by a 1.
  std::string of(const clang::FunctionDecl* vnode);

  /// `vnode`, then the functions and kernels defined in the main file that the code so far calls,
  /// launches or names, transitively, in the order of their first mention, each once (each
  /// instantiation of a template: its tokens are the pattern's, hashed once).
  std::vector<const clang::FunctionDecl*> codeOf(const clang::FunctionDecl* vnode) const;

 private:
  /// The index of the token at `loc`, if the parser received one there.
  const std::size_t* tokenAt(clang::SourceLocation loc) const;

  const clang::SourceManager& sm_;
  const MainFileTokens& tokens_;
  llvm::DenseMap<const clang::FunctionDecl*, std::string> done_;  // VNODE_ARRAY members share theirs
};

}  // namespace dispar::frontend

#endif
