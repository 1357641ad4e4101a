// A loop of 1-D transforms over rows `d` elements apart is one "many" plan of `count` transforms with
// distance d: FFTW plans the batch once and runs it with its own loop order and vector code. Two loop
// forms are recognised:
//   for (r) { fftw_plan p = fftw_plan_dft_1d(n, in + r*d, out + r*d, sign, flags); fftw_execute(p);
//             fftw_destroy_plan(p); }
//   for (r) fftw_execute_dft(plan, in + r*d, out + r*d);   // plan = fftw_plan_dft_1d(n, ..., sign, flags)
// The fused plan is made with FFTW_ESTIMATE: planning with FFTW_MEASURE would overwrite the data.
#include "FusionPatterns.h"
#include "LibraryTables.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"

namespace dispar::frontend::fusion {

namespace {

struct FftFunction {
  const FftPrecisionRow* precision = nullptr;
  const FftShapeRow* shape = nullptr;
  bool isPlan = false;  // plan1d, else the new-array execution
  std::string name(llvm::StringRef suffix) const { return precision->prefix.str() + suffix.str(); }
};

std::optional<FftFunction> fftFunction(llvm::StringRef name) {
  for (const FftPrecisionRow& precision : kFftPrecisions) {
    if (!name.starts_with(precision.prefix)) continue;
    llvm::StringRef rest = name.drop_front(precision.prefix.size());
    for (const FftShapeRow& shape : kFftShapes) {
      if (rest == shape.plan1d) return FftFunction{&precision, &shape, true};
      if (rest == shape.execute) return FftFunction{&precision, &shape, false};
    }
  }
  return std::nullopt;
}

bool isCallOf(const clang::Stmt* stmt, const std::string& name, const clang::VarDecl* plan) {
  const clang::CallExpr* call = asCall(stmt);
  if (!call || calleeName(call) != name || call->getNumArgs() != 1) return false;
  const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(call->getArg(0)->IgnoreParenImpCasts());
  return ref && ref->getDecl() == plan;
}

// An expression of the plan's creation, used again at the loop: it must have the same value there, so
// it may only read variables the function never changes.
std::string whyNotFixed(const clang::Expr* expr, const clang::FunctionDecl* function, LoopAnalysis& analysis) {
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
      if (const auto* var = llvm::dyn_cast<clang::VarDecl>(ref->getDecl()); var && !analysis.onlyRead(var, function->getBody()))
        why = "'" + var->getNameAsString() + "', used by the plan's creation, is changed in the function";
    for (const clang::Stmt* child : s->children()) visit(child);
  };
  visit(expr);
  return why;
}

// plan1d(n, in, out, [sign,] flags)
struct PlanArgs {
  const clang::Expr* size;
  const clang::Expr* sign;  // null for r2c / c2r
  const clang::Expr* flags;
};

PlanArgs planArgs(const clang::CallExpr* plan, FftKind kind) {
  bool complex = kind == FftKind::ComplexToComplex;
  return {plan->getArg(0), complex ? plan->getArg(3) : nullptr, plan->getArg(complex ? 4 : 3)};
}

unsigned planArgCount(FftKind kind) { return kind == FftKind::ComplexToComplex ? 5 : 4; }

}  // namespace

bool FftLoopToManyPlan::triggers(llvm::StringRef name) const { return fftFunction(name).has_value(); }

Analysed<FusedLoop> FftLoopToManyPlan::fuse(const LoopSite& site, LoopAnalysis& analysis) const {
  using Fail = Analysed<FusedLoop>;
  const CanonicalLoop& loop = site.loop;
  const clang::CallExpr* call = site.trigger;
  FftFunction fn = *fftFunction(calleeName(call));
  FftKind kind = fn.shape->kind;
  std::string triggerName = calleeName(call).str();

  const clang::CallExpr* plan = nullptr;     // the 1-D plan's creation
  const clang::Expr* in = nullptr;
  const clang::Expr* out = nullptr;
  bool planInLoop = fn.isPlan;
  if (planInLoop) {
    // { fftw_plan p = plan1d(...); fftw_execute(p); fftw_destroy_plan(p); }
    const auto* decl = loop.body.empty() ? nullptr : llvm::dyn_cast<clang::DeclStmt>(loop.body[0]);
    const auto* var = decl && decl->isSingleDecl() ? llvm::dyn_cast<clang::VarDecl>(decl->getSingleDecl()) : nullptr;
    if (loop.body.size() != 3 || !var || !var->getInit() || var->getInit()->IgnoreImplicit() != call ||
        !isCallOf(loop.body[1], fn.name("execute"), var) || !isCallOf(loop.body[2], fn.name("destroy_plan"), var))
      return Fail::fail("the loop body is not one plan of " + triggerName + ", its execution and its destruction");
    plan = call;
    if (plan->getNumArgs() != planArgCount(kind)) return Fail::fail("the call does not have the arguments of " + triggerName);
    in = plan->getArg(1);
    out = plan->getArg(2);
  } else {
    // fftw_execute_dft(plan, in, out), the plan made once by a 1-D plan in this function.
    if (loop.body.size() != 1 || asCall(loop.body[0]) != call)
      return Fail::fail("the loop body has other statements besides the " + triggerName + " call");
    const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(call->getArg(0)->IgnoreParenImpCasts());
    const auto* var = ref ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
    const clang::CallExpr* init = var && var->getInit() ? llvm::dyn_cast<clang::CallExpr>(var->getInit()->IgnoreImplicit()) : nullptr;
    if (!init || calleeName(init) != fn.name(fn.shape->plan1d) || init->getNumArgs() != planArgCount(kind))
      return Fail::fail("the plan '" + analysis.text(call->getArg(0)) + "' is not made by " + fn.name(fn.shape->plan1d) +
                        " where it is declared");
    if (!analysis.onlyRead(var, site.function->getBody()))
      return Fail::fail("the plan '" + var->getNameAsString() + "' is assigned after its creation");
    plan = init;
    in = call->getArg(1);
    out = call->getArg(2);
  }
  PlanArgs args = planArgs(plan, kind);

  // The transform size and sign: from the loop's own plan, or fixed since the outside plan was made.
  Poly size;
  std::string sizeText = analysis.text(args.size), signText = args.sign ? analysis.text(args.sign) : "";
  if (planInLoop) {
    Analysed<Poly> p = analysis.invariantPoly(args.size, loop);
    if (!p) return Fail::fail("the transform size " + p.whyNot);
    size = *p;
    if (args.sign)
      if (Analysed<std::string> s = analysis.invariantText(args.sign, loop); !s) return Fail::fail("the sign " + s.whyNot);
  } else {
    for (const clang::Expr* e : {args.size, args.sign})
      if (e)
        if (std::string why = whyNotFixed(e, site.function, analysis); !why.empty()) return Fail::fail(why);
    // Fixed since the plan was made, the size reads as any invariant of the loop.
    Analysed<Poly> p = analysis.invariantPoly(args.size, loop);
    if (!p) return Fail::fail("the transform size " + p.whyNot);
    size = *p;
  }
  if (sizeText.empty() || (args.sign && signText.empty())) return Fail::fail("an argument is written inside a macro");
  std::optional<std::int64_t> flags = analysis.constant(args.flags);
  if (!flags) return Fail::fail("the planner flags are not a constant");

  Analysed<AffinePointer> input = analysis.pointer(in, loop);
  if (!input) return Fail::fail("the input " + input.whyNot);
  Analysed<AffinePointer> output = analysis.pointer(out, loop);
  if (!output) return Fail::fail("the output " + output.whyNot);

  // Half-complex side of a real transform: n / 2 + 1 elements.
  Poly half = size.constantValue() ? Poly::constant(*size.constantValue() / 2 + 1) : Poly::atom("(" + sizeText + " / 2 + 1)");
  std::string complexBytes = "sizeof(" + fn.name("complex") + ")";
  std::string realBytes = std::string("sizeof(") + fn.precision->real + ")";
  Poly inLength = kind == FftKind::ComplexToReal ? half : size;
  Poly outLength = kind == FftKind::RealToComplex ? half : size;
  std::string inBytes = kind == FftKind::RealToComplex ? realBytes : complexBytes;
  std::string outBytes = kind == FftKind::ComplexToReal ? realBytes : complexBytes;

  FusedLoop fused;
  fused.fusedName = fn.name(fn.shape->many);
  Guard& guard = fused.guard;
  const Poly& idist = input->index.coefficient;
  const Poly& odist = output->index.coefficient;
  guard.requireAtLeast(loop.count, Poly::constant(1), "the loop runs no iteration");
  guard.requireAtLeast(idist, inLength, "the inputs of successive transforms overlap");
  guard.requireAtLeast(odist, outLength, "the outputs of successive transforms overlap");
  Region inRegion = loopRegion(analysis.text(in), *input, loop, inLength, inBytes);
  Region outRegion = loopRegion(analysis.text(out), *output, loop, outLength, outBytes);
  guard.requireDisjoint(outRegion, inRegion, /*inPlaceAllowed=*/kind == FftKind::ComplexToComplex);
  if (guard.refuted()) return Fail::fail(guard.refutation());

  std::string fusedFlags = "FFTW_ESTIMATE";
  if (*flags & kFftwPreserveInput) fusedFlags += " | FFTW_PRESERVE_INPUT";
  if (*flags & kFftwUnaligned) fusedFlags += " | FFTW_UNALIGNED";
  std::string planType = fn.name("plan");
  fused.statement = "{ int dispar_fft_n = " + sizeText + "; " + planType + " dispar_fft_plan = " + fused.fusedName +
                    "(1, &dispar_fft_n, " + loop.count.text() + ", " + inRegion.firstText + ", nullptr, 1, " + idist.text() +
                    ", " + outRegion.firstText + ", nullptr, 1, " + odist.text() + ", " + (args.sign ? signText + ", " : "") +
                    fusedFlags + "); " + fn.name("execute") + "(dispar_fft_plan); " + fn.name("destroy_plan") +
                    "(dispar_fft_plan); }";
  return {std::move(fused), ""};
}

}  // namespace dispar::frontend::fusion
