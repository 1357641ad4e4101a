#include "CodeFingerprint.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Basic/TokenKinds.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace dispar::frontend {

void recordMainFileTokens(clang::Preprocessor& pp, MainFileTokens& tokens) {
  // The watcher sees each token once, as the parser first receives it (not again when tentative parsing
  // backtracks), with the location the AST keeps for it: expanded macros included.
  pp.setTokenWatcher([&pp, &tokens](const clang::Token& token) {
    if (token.isAnnotation() || token.is(clang::tok::eof)) return;
    const clang::SourceManager& sm = pp.getSourceManager();
    const clang::SourceLocation loc = token.getLocation();
    if (!sm.isInMainFile(sm.getExpansionLoc(loc))) return;
    // What __LINE__, __FILE__, __DATE__ and __TIME__ expand to (`assert` uses the first two) is written
    // in the preprocessor's scratch space: such a literal counts by its kind, or the fingerprint would
    // change with the line numbers, the path and the build.
    std::string spelling = token.isLiteral() && sm.isWrittenInScratchSpace(sm.getSpellingLoc(loc))
                               ? std::string(clang::tok::getTokenName(token.getKind()))
                               : pp.getSpelling(token);
    tokens.indexAt.try_emplace(loc, tokens.spellings.size());
    tokens.spellings.push_back(std::move(spelling));
  });
}

namespace {

// The functions a body names, in source order: called, launched, constructed or taken by address.
class ReferencedFunctions : public clang::RecursiveASTVisitor<ReferencedFunctions> {
 public:
  explicit ReferencedFunctions(std::vector<const clang::FunctionDecl*>& out) : out_(out) {}

  bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
    if (const auto* fn = llvm::dyn_cast<clang::FunctionDecl>(ref->getDecl())) out_.push_back(fn);
    return true;
  }
  bool VisitMemberExpr(clang::MemberExpr* member) {
    if (const auto* fn = llvm::dyn_cast<clang::FunctionDecl>(member->getMemberDecl())) out_.push_back(fn);
    return true;
  }
  bool VisitCXXConstructExpr(clang::CXXConstructExpr* construct) {
    out_.push_back(construct->getConstructor());
    return true;
  }

 private:
  std::vector<const clang::FunctionDecl*>& out_;
};

// A template's instantiations share its tokens: one entry, the pattern.
const clang::FunctionDecl* tokenSource(const clang::FunctionDecl* fn) {
  const clang::FunctionDecl* pattern = fn->getTemplateInstantiationPattern();
  return pattern ? pattern : fn;
}

}  // namespace

std::vector<const clang::FunctionDecl*> CodeFingerprint::codeOf(const clang::FunctionDecl* vnode) const {
  // Instantiations are followed (their calls are resolved, a template's are not); their tokens are
  // the pattern's, hashed once (of).
  std::vector<const clang::FunctionDecl*> code = {vnode};
  for (std::size_t next = 0; next < code.size(); ++next) {
    std::vector<const clang::FunctionDecl*> named;
    ReferencedFunctions visitor(named);
    visitor.TraverseDecl(const_cast<clang::FunctionDecl*>(code[next]));
    for (const clang::FunctionDecl* fn : named) {
      const clang::FunctionDecl* definition = mainFileDefinition(fn, sm_);
      if (definition && std::find(code.begin(), code.end(), definition) == code.end()) code.push_back(definition);
    }
  }
  return code;
}

const std::size_t* CodeFingerprint::tokenAt(clang::SourceLocation loc) const {
  auto it = tokens_.indexAt.find(loc);
  return it == tokens_.indexAt.end() ? nullptr : &it->second;
}

std::string CodeFingerprint::of(const clang::FunctionDecl* vnode) {
  if (auto it = done_.find(vnode); it != done_.end()) return it->second;
  std::uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a, 64 bits
  auto feed = [&hash](unsigned char byte) {
    hash ^= byte;
    hash *= 0x100000001b3ull;
  };
  const std::vector<const clang::FunctionDecl*> code = codeOf(vnode);
  std::vector<const clang::FunctionDecl*> hashed;
  for (std::size_t i = 0; i < code.size(); ++i) {
    const clang::FunctionDecl* fn = tokenSource(code[i]);
    const clang::Stmt* body = fn->getBody();
    if (!body || std::find(hashed.begin(), hashed.end(), fn) != hashed.end()) continue;
    hashed.push_back(fn);
    // The VNODE: its body (its signature is the VNODE's ports, which the RTG describes). A function it
    // reaches: the whole definition, from its first token (or its name, when that token came from a
    // macro the parser saw differently) to the body's end.
    const std::size_t* first = i == 0 ? tokenAt(body->getBeginLoc()) : tokenAt(fn->getBeginLoc());
    if (!first) first = tokenAt(fn->getLocation());
    const std::size_t* last = tokenAt(body->getEndLoc());
    if (first && last)
      for (std::size_t t = *first; t <= *last && t < tokens_.spellings.size(); ++t) {
        for (char c : tokens_.spellings[t]) feed(static_cast<unsigned char>(c));
        feed(0);
      }
    feed(1);
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return done_[vnode] = text;
}

}  // namespace dispar::frontend
