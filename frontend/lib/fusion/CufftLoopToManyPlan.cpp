// A loop of cuFFT executions over rows `d` elements apart, on one 1-D plan, is one batched plan of
// `count` transforms with distance d: one launch sequence instead of `count`, which is what makes small
// transforms fast on a GPU.
//   cufftHandle plan; cufftPlan1d(&plan, n, CUFFT_Z2Z, 1); [cufftSetStream(plan, s);]
//   for (r) cufftExecZ2Z(plan, in + r*d, out + r*e, CUFFT_FORWARD);
// becomes, behind the run-time checks the pointers need,
//   cufftPlanMany(&fused, 1, &n, &n, 1, d, &n, 1, e, CUFFT_Z2Z, count); [cufftSetStream(fused, s);]
//   cufftExecZ2Z(fused, in, out, CUFFT_FORWARD); cufftDestroy(fused);
// The embeddings are given (cuFFT ignores the distances without them); for rank 1 their values are not
// read. The batched plan needs more work space than the loop's: when it cannot be made, the loop runs.
#include "FusionPatterns.h"
#include "LibraryFusion.h"
#include "LibraryTables.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/Basic/SourceManager.h"

#include <functional>
#include <set>

namespace dispar::frontend::fusion {

namespace {

const CufftExecRow* executionRow(llvm::StringRef name) {
  for (const CufftExecRow& row : kCufftExecRows)
    if (row.execute == name) return &row;
  return nullptr;
}

const clang::VarDecl* referencedVariable(const clang::Expr* expr) {
  const auto* ref = expr ? llvm::dyn_cast<clang::DeclRefExpr>(expr->IgnoreParenImpCasts()) : nullptr;
  return ref ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
}

// Every use of a plan handle in its function, which must be one of: its creation by cufftPlan1d(&plan,
// ...), executions, cufftSetStream and cufftDestroy. Anything else (cufftSetWorkArea, a copy, a call
// of the user's) may change what the plan does in ways the fused plan would not repeat.
struct PlanUses {
  std::vector<const clang::CallExpr*> creations;
  std::vector<const clang::CallExpr*> streams;
  bool otherUse = false;
};

PlanUses planUses(const clang::VarDecl* plan, const clang::Stmt* body) {
  PlanUses uses;
  std::set<const clang::DeclRefExpr*> accounted;
  std::function<void(const clang::Stmt*)> visit = [&](const clang::Stmt* s) {
    if (!s) return;
    if (const auto* call = llvm::dyn_cast<clang::CallExpr>(s); call && call->getNumArgs() > 0) {
      llvm::StringRef name = calleeName(call);
      const clang::Expr* first = call->getArg(0)->IgnoreParenImpCasts();
      const auto* address = llvm::dyn_cast<clang::UnaryOperator>(first);
      if (name == "cufftPlan1d" && address && address->getOpcode() == clang::UO_AddrOf) {
        if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(address->getSubExpr()->IgnoreParens());
            ref && ref->getDecl() == plan) {
          uses.creations.push_back(call);
          accounted.insert(ref);
        }
      } else if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(first); ref && ref->getDecl() == plan) {
        if (name == "cufftSetStream") uses.streams.push_back(call);
        if (name == "cufftSetStream" || name == "cufftDestroy" || executionRow(name)) accounted.insert(ref);
      }
    }
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(s); ref && ref->getDecl() == plan && !accounted.count(ref))
      uses.otherUse = true;
    for (const clang::Stmt* child : s->children()) visit(child);
  };
  visit(body);
  return uses;
}

enum PlanArg { PlanHandle, PlanSize, PlanType, PlanBatch, PlanArgs };

}  // namespace

bool CufftLoopToManyPlan::triggers(llvm::StringRef name) const { return executionRow(name) != nullptr; }

Analysed<FusedLoop> CufftLoopToManyPlan::fuse(const LoopSite& site, LoopAnalysis& analysis) const {
  using Fail = Analysed<FusedLoop>;
  const clang::CallExpr* call = site.trigger;
  const CufftExecRow& row = *executionRow(calleeName(call));
  const CanonicalLoop& loop = site.loop;
  const std::string execute = row.execute.str();
  bool complex = row.kind == FftKind::ComplexToComplex;
  if (loop.body.size() != 1 || asCall(loop.body[0]) != call)
    return Fail::fail("the loop body has other statements besides the " + execute + " call");
  if (call->getNumArgs() != (complex ? 4u : 3u))
    return Fail::fail("the call does not have the arguments of " + execute);

  // The plan: a local handle made once, before the loop, by a 1-D plan of one transform of this type.
  const clang::VarDecl* plan = referencedVariable(call->getArg(0));
  if (!plan || !plan->hasLocalStorage())
    return Fail::fail("the plan '" + analysis.text(call->getArg(0)) + "' is not a variable of this function");
  const std::string planName = plan->getNameAsString();
  PlanUses uses = planUses(plan, site.function->getBody());
  if (uses.otherUse)
    return Fail::fail("the plan '" + planName +
                      "' is used by other calls than cufftPlan1d, its executions, cufftSetStream and cufftDestroy");
  if (uses.creations.size() != 1)
    return Fail::fail("the plan '" + planName + "' is not made by one cufftPlan1d in this function");
  const clang::CallExpr* creation = uses.creations.front();
  const clang::SourceManager& sm = analysis.context().getSourceManager();
  auto before = [&](const clang::Stmt* s) {
    return sm.isBeforeInTranslationUnit(sm.getExpansionLoc(s->getEndLoc()),
                                        sm.getExpansionLoc(loop.loop->getBeginLoc()));
  };
  if (creation->getNumArgs() != PlanArgs || !before(creation))
    return Fail::fail("the plan '" + planName + "' is not made by cufftPlan1d before the loop");
  if (analysis.constant(creation->getArg(PlanBatch)) != 1)
    return Fail::fail("the plan '" + planName + "' is not a plan of one transform (its batch is not 1)");
  if (analysis.constant(creation->getArg(PlanType)) != row.typeValue)
    return Fail::fail("the plan '" + planName + "' is not of type " + row.typeName.str() + ", which " + execute +
                      " needs");
  const clang::Expr* sizeArg = creation->getArg(PlanSize);
  if (std::string why = whyNotFixed(sizeArg, site.function, analysis, loop.loop); !why.empty()) return Fail::fail(why);
  Analysed<Poly> sizePoly = analysis.invariantPoly(sizeArg, loop);
  if (!sizePoly) return Fail::fail("the transform size " + sizePoly.whyNot);
  const Poly& size = *sizePoly;
  std::string sizeText = analysis.text(sizeArg);

  std::string streamText;
  if (uses.streams.size() > 1) return Fail::fail("the plan '" + planName + "' is given a stream more than once");
  if (!uses.streams.empty()) {
    const clang::CallExpr* stream = uses.streams.front();
    if (stream->getNumArgs() != 2 || !before(stream))
      return Fail::fail("the plan '" + planName + "' is given its stream after the loop");
    if (std::string why = whyNotFixed(stream->getArg(1), site.function, analysis, loop.loop); !why.empty())
      return Fail::fail(why);
    streamText = analysis.text(stream->getArg(1));
  }
  std::string directionText;
  if (complex) {
    Analysed<std::string> direction = analysis.invariantText(call->getArg(3), loop);
    if (!direction) return Fail::fail("the direction " + direction.whyNot);
    directionText = *direction;
  }
  if (sizeText.empty() || (!uses.streams.empty() && streamText.empty()))
    return Fail::fail("an argument is written inside a macro");

  Analysed<AffinePointer> input = analysis.pointer(call->getArg(1), loop);
  if (!input) return Fail::fail("the input " + input.whyNot);
  Analysed<AffinePointer> output = analysis.pointer(call->getArg(2), loop);
  if (!output) return Fail::fail("the output " + output.whyNot);

  // Half-complex side of a real transform: n / 2 + 1 elements.
  Poly half =
      size.constantValue() ? Poly::constant(*size.constantValue() / 2 + 1) : Poly::atom("(" + sizeText + " / 2 + 1)");
  Poly inLength = row.kind == FftKind::ComplexToReal ? half : size;
  Poly outLength = row.kind == FftKind::RealToComplex ? half : size;
  auto bytes = [&](bool real) { return std::string("sizeof(") + (real ? row.realType : row.complexType) + ")"; };
  const Poly& idist = input->index.coefficient;
  const Poly& odist = output->index.coefficient;

  FusedLoop fused;
  fused.fusedName = "cufftPlanMany";
  Guard& guard = fused.guard;
  requireAnIteration(guard, loop);
  guard.requireAtLeast(idist, inLength, "the inputs of successive transforms overlap");
  guard.requireAtLeast(odist, outLength, "the outputs of successive transforms overlap");
  Region inRegion =
      loopRegion(analysis.text(call->getArg(1)), *input, loop, inLength, bytes(row.kind == FftKind::RealToComplex));
  Region outRegion =
      loopRegion(analysis.text(call->getArg(2)), *output, loop, outLength, bytes(row.kind == FftKind::ComplexToReal));
  guard.requireDisjoint(outRegion, inRegion, /*inPlaceAllowed=*/complex);
  if (guard.refuted()) return Fail::fail(guard.refutation());

  auto spelt = [&](llvm::StringRef name) { return libraryCallSpelling(name, site.options); };
  fused.setup = "cufftHandle dispar_fft_plan; int dispar_fft_n = " + sizeText + ";";
  fused.acquire = spelt("cufftPlanMany") + "(&dispar_fft_plan, 1, &dispar_fft_n, &dispar_fft_n, 1, " + idist.text() +
                  ", &dispar_fft_n, 1, " + odist.text() + ", " + row.typeName.str() + ", " + loop.count.text() +
                  ") == CUFFT_SUCCESS";
  fused.statement = "{ " +
                    (streamText.empty() ? "" : spelt("cufftSetStream") + "(dispar_fft_plan, " + streamText + "); ") +
                    spelt(execute) + "(dispar_fft_plan, " + inRegion.firstText + ", " + outRegion.firstText +
                    (complex ? ", " + directionText : "") + "); " + spelt("cufftDestroy") + "(dispar_fft_plan); }";
  return {std::move(fused), ""};
}

}  // namespace dispar::frontend::fusion
