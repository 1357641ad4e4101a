#include "LibraryFusion.h"

#include "FusionPatterns.h"
#include "LoopAnalysis.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Lex/Lexer.h"

#include <algorithm>
#include <functional>

namespace dispar::frontend {

std::string libraryCallSpelling(llvm::StringRef name, const FrontendOptions& options) {
  if (options.cudaTarget == CudaTarget::GpuAndHost) return "::dispar::gpu::" + name.str();
  return name.str();
}

namespace fusion {

llvm::StringRef calleeName(const clang::CallExpr* call) {
  const clang::FunctionDecl* fn = call ? call->getDirectCallee() : nullptr;
  llvm::StringRef name = fn && fn->getDeclName().isIdentifier() ? fn->getName() : llvm::StringRef();
  if (name.starts_with("cublas")) name.consume_back("_v2");
  return name;
}

const clang::CallExpr* asCall(const clang::Stmt* stmt) {
  const auto* expr = llvm::dyn_cast_or_null<clang::Expr>(stmt);
  return expr ? llvm::dyn_cast<clang::CallExpr>(expr->IgnoreImplicit()->IgnoreParens()) : nullptr;
}

namespace {

// True when a local variable's declaration is in a statement that encloses `at`, so that its name means
// the same variable there (globals and parameters always are).
bool inScopeAt(const clang::VarDecl* var, const clang::Stmt* at, clang::ASTContext& context) {
  if (!var->isLocalVarDecl()) return true;
  const clang::SourceManager& sm = context.getSourceManager();
  for (const clang::DynTypedNode& parent : context.getParents(*var))
    if (const auto* declaration = parent.get<clang::DeclStmt>())
      for (const clang::DynTypedNode& scope : context.getParents(*declaration))
        if (const auto* enclosing = scope.get<clang::Stmt>())
          return !sm.isBeforeInTranslationUnit(sm.getExpansionLoc(at->getBeginLoc()),
                                               sm.getExpansionLoc(enclosing->getBeginLoc())) &&
                 !sm.isBeforeInTranslationUnit(sm.getExpansionLoc(enclosing->getEndLoc()),
                                               sm.getExpansionLoc(at->getEndLoc()));
  return false;
}

}  // namespace

std::string whyNotFixed(const clang::Expr* expr, const clang::FunctionDecl* function, LoopAnalysis& analysis,
                        const clang::Stmt* usedAt) {
  if (analysis.constant(expr)) return "";
  std::string why;
  std::function<void(const clang::Stmt*)> visit = [&](const clang::Stmt* s) {
    if (!s || !why.empty()) return;
    if (llvm::isa<clang::CallExpr, clang::ArraySubscriptExpr, clang::MemberExpr>(s) ||
        (llvm::isa<clang::UnaryOperator>(s) && llvm::cast<clang::UnaryOperator>(s)->getOpcode() == clang::UO_Deref)) {
      why = "'" + analysis.text(expr) + "' of the plan's creation may have changed by the loop";
      return;
    }
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(s))
      if (const auto* var = llvm::dyn_cast<clang::VarDecl>(ref->getDecl())) {
        if (!analysis.onlyRead(var, function->getBody()))
          why = "'" + var->getNameAsString() + "', used by the plan's creation, is changed in the function";
        else if (!inScopeAt(var, usedAt, analysis.context()))
          why = "'" + var->getNameAsString() + "', used by the plan's creation, is not in scope at the loop";
      }
    for (const clang::Stmt* child : s->children()) visit(child);
  };
  visit(expr);
  return why;
}

Region loopRegion(const std::string& name, const AffinePointer& pointer, const CanonicalLoop& loop, const Poly& length,
                  const std::string& elementBytes) {
  Poly extent = (loop.count - Poly::constant(1)) * pointer.index.coefficient + length;
  return Region{name, pointer, pointer.textAt(loop.lower), extent, elementBytes};
}

std::vector<std::unique_ptr<FusionPattern>> makeFusionPatterns() {
  std::vector<std::unique_ptr<FusionPattern>> patterns;
  patterns.push_back(std::make_unique<GemvLoopToGemm>());
  patterns.push_back(std::make_unique<GemmBlocksToGemm>());
  patterns.push_back(std::make_unique<FftLoopToManyPlan>());
  patterns.push_back(std::make_unique<CufftLoopToManyPlan>());
  return patterns;
}

namespace {

using namespace clang::ast_matchers;

// The main file's for loops in source order, with the function (or lambda) each is in.
class LoopCollector : public MatchFinder::MatchCallback {
 public:
  struct Found {
    const clang::ForStmt* loop;
    const clang::FunctionDecl* function;
  };
  std::vector<Found> loops;

  void run(const MatchFinder::MatchResult& result) override {
    const auto* loop = result.Nodes.getNodeAs<clang::ForStmt>("loop");
    const auto* fn = result.Nodes.getNodeAs<clang::FunctionDecl>("fn");
    // Template code is rewritten once for all its instantiations, which fusion cannot analyse as one;
    // device code is cloned by the CUDA lowering, which must see it unchanged.
    if (fn->isDependentContext() || fn->isTemplateInstantiation() || fn->hasAttr<clang::CUDAGlobalAttr>() ||
        fn->hasAttr<clang::CUDADeviceAttr>() || loop->getBeginLoc().isMacroID())
      return;
    loops.push_back({loop, fn});
  }
};

bool containsLaunch(const clang::Stmt* stmt) {
  if (!stmt) return false;
  if (llvm::isa<clang::CUDAKernelCallExpr>(stmt)) return true;
  for (const clang::Stmt* child : stmt->children())
    if (containsLaunch(child)) return true;
  return false;
}

// The first library call among the body's statements that a pattern knows, with that pattern.
std::pair<const clang::CallExpr*, const FusionPattern*>
findTrigger(const clang::Stmt* body, const std::vector<std::unique_ptr<FusionPattern>>& patterns) {
  std::vector<const clang::Stmt*> statements;
  if (const auto* block = llvm::dyn_cast<clang::CompoundStmt>(body))
    statements.assign(block->body_begin(), block->body_end());
  else
    statements.push_back(body);
  for (const clang::Stmt* s : statements) {
    const clang::CallExpr* call = asCall(s);
    if (const auto* decl = llvm::dyn_cast<clang::DeclStmt>(s); decl && decl->isSingleDecl())
      if (const auto* var = llvm::dyn_cast<clang::VarDecl>(decl->getSingleDecl()); var && var->getInit())
        call = llvm::dyn_cast<clang::CallExpr>(var->getInit()->IgnoreImplicit());
    llvm::StringRef name = calleeName(call);
    if (name.empty()) continue;
    for (const auto& pattern : patterns)
      if (pattern->triggers(name)) return {call, pattern.get()};
  }
  return {nullptr, nullptr};
}

}  // namespace
}  // namespace fusion

void LibraryFusion::run(FrontendResult& result) {
  using namespace fusion;
  if (!options_.fusion) return;
  MatchFinder finder;
  LoopCollector collector;
  finder.addMatcher(forStmt(isExpansionInMainFile(), forCallable(functionDecl().bind("fn"))).bind("loop"), &collector);
  finder.matchAST(context_);

  const clang::SourceManager& sm = context_.getSourceManager();
  const clang::LangOptions& lang = context_.getLangOpts();
  std::vector<std::unique_ptr<FusionPattern>> patterns = makeFusionPatterns();
  LoopAnalysis analysis(context_);
  for (const LoopCollector::Found& found : collector.loops) {
    const clang::ForStmt* loop = found.loop;
    if (containsLaunch(loop)) continue;  // the CUDA lowering rewrites launches: their loops are its
    auto [trigger, pattern] = findTrigger(loop->getBody(), patterns);
    if (!trigger) continue;
    std::string from = calleeName(trigger).str();
    auto missed = [&](const std::string& why) {
      if (options_.remarkFusionMissed) diags_.report(loop->getBeginLoc(), Diag::FusionMissed) << from << why;
    };
    Analysed<CanonicalLoop> canonical = analysis.canonicalLoop(loop);
    if (!canonical) {
      missed(canonical.whyNot);
      continue;
    }
    Analysed<FusedLoop> fused = pattern->fuse(LoopSite{*canonical, trigger, found.function, options_}, analysis);
    if (!fused) {
      missed(fused.whyNot);
      continue;
    }

    // The loop's text, with the `;` that ends a body that is not a block.
    clang::CharSourceRange range = analysis.fileRange(loop->getSourceRange());
    if (range.isInvalid()) continue;
    if (!llvm::isa<clang::CompoundStmt>(loop->getBody()))
      if (std::optional<clang::Token> next = clang::Lexer::findNextToken(loop->getEndLoc(), sm, lang);
          next && next->is(clang::tok::semi))
        range.setEnd(next->getEndLoc());
    std::string condition = fused->guard.condition();
    if (!fused->acquire.empty()) condition = condition.empty() ? fused->acquire : condition + " && " + fused->acquire;
    clang::tooling::Replacement edit;
    if (condition.empty()) {
      // Proven: the call replaces the loop; as many line breaks as the loop had keep later lines' numbers.
      llvm::StringRef original = clang::Lexer::getSourceText(range, sm, lang);
      std::string statement =
          fused->setup.empty() ? fused->statement : "{ " + fused->setup + " " + fused->statement + " }";
      edit = clang::tooling::Replacement(sm, range, statement + std::string(original.count('\n'), '\n'), lang);
    } else {
      // What the setup declares lives in a block around the choice, which ends after the loop.
      std::string open = fused->setup.empty() ? "" : "{ " + fused->setup + " ";
      edit = clang::tooling::Replacement(sm, range.getBegin(), 0,
                                         open + "if (" + condition + ") " + fused->statement + " else ");
    }
    // Fusion edits never overlap (a fused loop contains no other candidate); skip rather than guess, and
    // take both halves of a block or neither.
    clang::tooling::Replacements edits = result.sourceEdits;
    llvm::Error error = edits.add(edit);
    if (!error && !condition.empty() && !fused->setup.empty())
      error = edits.add(clang::tooling::Replacement(sm, range.getEnd(), 0, " }"));
    if (error) {
      llvm::consumeError(std::move(error));
      continue;
    }
    result.sourceEdits = std::move(edits);
    if (condition.empty()) result.fusedRanges.push_back(clang::tooling::Range(edit.getOffset(), edit.getLength()));
    const clang::PresumedLoc at = sm.getPresumedLoc(loop->getBeginLoc());
    result.fusedCalls.push_back(FusedCall{std::string(at.getFilename()) + ":" + std::to_string(at.getLine()) + ":" +
                                              std::to_string(at.getColumn()),
                                          from, fused->fusedName});
    if (options_.remarkFusion) {
      std::optional<std::int64_t> count = canonical->count.constantValue();
      diags_.report(loop->getBeginLoc(), Diag::FusionApplied)
          << (count ? std::to_string(*count) + " calls" : std::string("a loop of calls")) << from << fused->fusedName
          << (condition.empty() ? "" : ", behind a run-time check that runs the loop when it fails");
    }
  }
}

}  // namespace dispar::frontend
