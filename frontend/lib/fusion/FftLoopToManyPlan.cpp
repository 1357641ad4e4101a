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
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"

#include <algorithm>
#include <functional>

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

// What a 1-D plan's creation says: plan1d(n, in, out, [sign,] flags), or, for a strided one,
// plan_many_dft(1, &n, 1, in, nullptr, istride, idist, out, nullptr, ostride, odist, sign, flags).
struct PlanArgs {
  const clang::Expr* size = nullptr;
  const clang::Expr* in = nullptr;
  const clang::Expr* out = nullptr;
  const clang::Expr* sign = nullptr;  // null for r2c / c2r
  const clang::Expr* flags = nullptr;
  const clang::Expr* istride = nullptr;  // null: 1
  const clang::Expr* ostride = nullptr;
};

Analysed<PlanArgs> planArgs(const clang::CallExpr* plan, const FftShapeRow& shape, LoopAnalysis& analysis) {
  using Fail = Analysed<PlanArgs>;
  PlanArgs args;
  if (shape.strided) {
    if (plan->getNumArgs() != 13) return Fail::fail("the call does not have the arguments of a many plan");
    if (analysis.constant(plan->getArg(0)) != 1 || analysis.constant(plan->getArg(2)) != 1)
      return Fail::fail("the many plan is not one transform of rank 1");
    clang::ASTContext& context = analysis.context();
    for (unsigned embed : {4u, 8u})
      if (!plan->getArg(embed)->isNullPointerConstant(context, clang::Expr::NPC_ValueDependentIsNotNull))
        return Fail::fail("the many plan has an embedding");
    const auto* address = llvm::dyn_cast<clang::UnaryOperator>(plan->getArg(1)->IgnoreParenImpCasts());
    if (!address || address->getOpcode() != clang::UO_AddrOf)
      return Fail::fail("the transform size is not written '&n'");
    args.size = address->getSubExpr();
    args.in = plan->getArg(3);
    args.istride = plan->getArg(5);
    args.out = plan->getArg(7);
    args.ostride = plan->getArg(9);
    args.sign = plan->getArg(11);
    args.flags = plan->getArg(12);
    return {args, ""};
  }
  bool complex = shape.kind == FftKind::ComplexToComplex;
  if (plan->getNumArgs() != (complex ? 5u : 4u))
    return Fail::fail("the call does not have the arguments of a 1-D plan");
  args.size = plan->getArg(0);
  args.in = plan->getArg(1);
  args.out = plan->getArg(2);
  args.sign = complex ? plan->getArg(3) : nullptr;
  args.flags = plan->getArg(complex ? 4 : 3);
  return {args, ""};
}

// The plan row whose creation function `name` is, among the rows executed by `execute` (a plan made
// outside the loop).
const FftShapeRow* planRow(llvm::StringRef name, const FftFunction& execution) {
  for (const FftShapeRow& shape : kFftShapes)
    if (shape.execute == execution.shape->execute && execution.name(shape.plan1d) == name) return &shape;
  return nullptr;
}

// A copy loop beside the transforms: for (int r = 0; r < count; ++r) to[...] = from[...];
struct Copy {
  AffinePointer to, from;  // affine in the outer loop's variable, `index.inner` the step per r
  clang::QualType element;
  Poly count;
};

Analysed<Copy> copyLoop(const clang::ForStmt* stmt, const CanonicalLoop& outer, LoopAnalysis& analysis) {
  using Fail = Analysed<Copy>;
  Analysed<CanonicalLoop> inner = analysis.canonicalLoop(stmt);
  if (!inner) return Fail::fail(inner.whyNot);
  if (inner->lower.constantValue() != 0) return Fail::fail("it does not start at 0");
  const clang::Expr* to = nullptr;
  const clang::Expr* from = nullptr;
  const clang::Stmt* body = inner->body.size() == 1 ? inner->body[0] : nullptr;
  if (const auto* assign = llvm::dyn_cast_or_null<clang::BinaryOperator>(body);
      assign && assign->getOpcode() == clang::BO_Assign) {
    to = assign->getLHS();
    from = assign->getRHS();
  } else if (const auto* op = llvm::dyn_cast_or_null<clang::CXXOperatorCallExpr>(body);
             op && op->getOperator() == clang::OO_Equal && op->getNumArgs() == 2) {
    to = op->getArg(0);
    from = op->getArg(1);
  }
  if (!to) return Fail::fail("its body is not one element assignment");
  clang::QualType toType = to->getType().getCanonicalType().getUnqualifiedType();
  clang::QualType fromType = from->IgnoreImplicit()->getType().getCanonicalType().getUnqualifiedType();
  if (toType != fromType) return Fail::fail("it converts the elements it copies");
  Analysed<AffinePointer> toElement = analysis.element(to, outer, inner->variable);
  if (!toElement) return Fail::fail(toElement.whyNot);
  Analysed<AffinePointer> fromElement = analysis.element(from, outer, inner->variable);
  if (!fromElement) return Fail::fail(fromElement.whyNot);
  return {Copy{*toElement, *fromElement, toType, inner->count}, ""};
}

// A buffer the copies go through is left out of the fused plan: nothing may read it outside the loop
// (or the plan made from it), so that its final contents do not matter.
bool onlyUsedWithin(const clang::ValueDecl* buffer, const clang::FunctionDecl* function,
                    const std::vector<clang::SourceRange>& within, const clang::SourceManager& sm) {
  const auto* var = llvm::dyn_cast_or_null<clang::VarDecl>(buffer);
  if (!var || !var->hasLocalStorage() || !ownsItsStorage(var)) return false;
  bool outside = false;
  std::function<void(const clang::Stmt*)> visit = [&](const clang::Stmt* s) {
    if (!s || outside) return;
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(s); ref && ref->getDecl() == var) {
      clang::SourceLocation at = sm.getExpansionLoc(ref->getBeginLoc());
      outside = std::none_of(within.begin(), within.end(), [&](clang::SourceRange r) {
        return r.isValid() && !sm.isBeforeInTranslationUnit(at, sm.getExpansionLoc(r.getBegin())) &&
               !sm.isBeforeInTranslationUnit(sm.getExpansionLoc(r.getEnd()), at);
      });
    }
    for (const clang::Stmt* child : s->children()) visit(child);
  };
  visit(function->getBody());
  return !outside;
}

// The first-element pointer as the many plan's element type, when it comes from a copy of another type.
std::string asPlanPointer(const std::string& text, const std::string& type) { return "(" + type + "*)(" + text + ")"; }

}  // namespace

bool FftLoopToManyPlan::triggers(llvm::StringRef name) const { return fftFunction(name).has_value(); }

Analysed<FusedLoop> FftLoopToManyPlan::fuse(const LoopSite& site, LoopAnalysis& analysis) const {
  using Fail = Analysed<FusedLoop>;
  const CanonicalLoop& loop = site.loop;
  const clang::CallExpr* call = site.trigger;
  FftFunction fn = *fftFunction(calleeName(call));
  FftKind kind = fn.shape->kind;
  std::string triggerName = calleeName(call).str();

  const clang::CallExpr* plan = nullptr;  // the 1-D plan's creation
  const FftShapeRow* shape = fn.shape;
  const clang::Expr* in = nullptr;
  const clang::Expr* out = nullptr;
  bool planInLoop = fn.isPlan;
  // A transposing copy loop before the transforms (gathering a column into a buffer) and/or after them
  // (scattering the result into a column).
  std::vector<const clang::Stmt*> body = loop.body;
  const clang::ForStmt* copyIn = nullptr;
  const clang::ForStmt* copyOut = nullptr;
  if (body.size() > 1 && llvm::isa<clang::ForStmt>(body.front())) {
    copyIn = llvm::cast<clang::ForStmt>(body.front());
    body.erase(body.begin());
  }
  if (body.size() > 1 && llvm::isa<clang::ForStmt>(body.back())) {
    copyOut = llvm::cast<clang::ForStmt>(body.back());
    body.pop_back();
  }
  if (planInLoop) {
    // { fftw_plan p = plan1d(...); fftw_execute(p); fftw_destroy_plan(p); }
    const auto* decl = body.empty() ? nullptr : llvm::dyn_cast<clang::DeclStmt>(body[0]);
    const auto* var = decl && decl->isSingleDecl() ? llvm::dyn_cast<clang::VarDecl>(decl->getSingleDecl()) : nullptr;
    if (body.size() != 3 || !var || !var->getInit() || var->getInit()->IgnoreImplicit() != call ||
        !isCallOf(body[1], fn.name("execute"), var) || !isCallOf(body[2], fn.name("destroy_plan"), var))
      return Fail::fail("the loop body is not one plan of " + triggerName + ", its execution and its destruction");
    plan = call;
  } else {
    // fftw_execute_dft(plan, in, out), the plan made once by a 1-D plan in this function.
    if (body.size() != 1 || asCall(body[0]) != call)
      return Fail::fail("the loop body has other statements besides the " + triggerName + " call");
    const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(call->getArg(0)->IgnoreParenImpCasts());
    const auto* var = ref ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
    const clang::CallExpr* init =
        var && var->getInit() ? llvm::dyn_cast<clang::CallExpr>(var->getInit()->IgnoreImplicit()) : nullptr;
    shape = init ? planRow(calleeName(init), fn) : nullptr;
    if (!shape)
      return Fail::fail("the plan '" + analysis.text(call->getArg(0)) + "' is not made by a 1-D plan of " +
                        fn.precision->prefix.str() + " where it is declared");
    if (!analysis.onlyRead(var, site.function->getBody()))
      return Fail::fail("the plan '" + var->getNameAsString() + "' is assigned after its creation");
    plan = init;
    in = call->getArg(1);
    out = call->getArg(2);
  }
  Analysed<PlanArgs> parsed = planArgs(plan, *shape, analysis);
  if (!parsed) return Fail::fail(parsed.whyNot);
  const PlanArgs& args = *parsed;
  if (planInLoop) {
    in = args.in;
    out = args.out;
  }

  // The plan's scalars: invariant in the loop, or fixed since the outside plan was made (and then read
  // as any invariant of the loop).
  auto scalar = [&](const clang::Expr* e, const char* what) -> Analysed<Poly> {
    if (!planInLoop)
      if (std::string why = whyNotFixed(e, site.function, analysis, loop.loop); !why.empty())
        return Analysed<Poly>::fail(why);
    Analysed<Poly> p = analysis.invariantPoly(e, loop);
    if (!p) return Analysed<Poly>::fail(std::string(what) + " " + p.whyNot);
    return p;
  };
  Analysed<Poly> sizePoly = scalar(args.size, "the transform size");
  if (!sizePoly) return Fail::fail(sizePoly.whyNot);
  Poly size = *sizePoly;
  Poly istride = Poly::constant(1), ostride = Poly::constant(1);
  std::string istrideText = "1", ostrideText = "1";
  if (args.istride) {
    Analysed<Poly> i = scalar(args.istride, "the input stride");
    if (!i) return Fail::fail(i.whyNot);
    Analysed<Poly> o = scalar(args.ostride, "the output stride");
    if (!o) return Fail::fail(o.whyNot);
    istride = *i;
    ostride = *o;
    istrideText = analysis.text(args.istride);
    ostrideText = analysis.text(args.ostride);
  }
  std::string sizeText = analysis.text(args.size), signText = args.sign ? analysis.text(args.sign) : "";
  if (args.sign) {
    if (!planInLoop) {
      if (std::string why = whyNotFixed(args.sign, site.function, analysis, loop.loop); !why.empty())
        return Fail::fail(why);
    } else if (Analysed<std::string> sign = analysis.invariantText(args.sign, loop); !sign) {
      return Fail::fail("the sign " + sign.whyNot);
    }
  }
  if (sizeText.empty() || (args.sign && signText.empty()) || istrideText.empty() || ostrideText.empty())
    return Fail::fail("an argument is written inside a macro");
  std::optional<std::int64_t> flags = analysis.constant(args.flags);
  if (!flags) return Fail::fail("the planner flags are not a constant");

  Analysed<AffinePointer> inputOfPlan = analysis.pointer(in, loop);
  if (!inputOfPlan) return Fail::fail("the input " + inputOfPlan.whyNot);
  Analysed<AffinePointer> outputOfPlan = analysis.pointer(out, loop);
  if (!outputOfPlan) return Fail::fail("the output " + outputOfPlan.whyNot);
  AffinePointer input = *inputOfPlan, output = *outputOfPlan;
  std::string inName = analysis.text(in), outName = analysis.text(out);

  // Half-complex side of a real transform: n / 2 + 1 elements.
  Poly half =
      size.constantValue() ? Poly::constant(*size.constantValue() / 2 + 1) : Poly::atom("(" + sizeText + " / 2 + 1)");
  std::string complexBytes = "sizeof(" + fn.name("complex") + ")";
  std::string realBytes = std::string("sizeof(") + fn.precision->real + ")";
  Poly inLength = kind == FftKind::ComplexToReal ? half : size;
  Poly outLength = kind == FftKind::RealToComplex ? half : size;
  std::string inBytes = kind == FftKind::RealToComplex ? realBytes : complexBytes;
  std::string outBytes = kind == FftKind::ComplexToReal ? realBytes : complexBytes;

  FusedLoop fused;
  fused.fusedName = fn.name(shape->many);
  Guard& guard = fused.guard;
  const Poly one = Poly::constant(1);

  // Copies through a buffer: the plan reads (writes) the copy's other side directly, with the copy's
  // step per element as its stride. The buffer itself is left alone, so nothing else may use it.
  std::string inType, outType;  // set when the plan's pointer comes from a copy (a cast is needed)
  std::vector<Region> buffers;
  const clang::SourceManager& sm = analysis.context().getSourceManager();
  std::vector<clang::SourceRange> bufferUses = {loop.loop->getSourceRange()};
  if (!planInLoop) bufferUses.push_back(plan->getSourceRange());
  std::int64_t realSize = llvm::StringRef(fn.precision->real) == "double" ? 8 : 4;
  auto substitute = [&](const clang::ForStmt* copyStmt, bool before) -> std::string {
    const char* where = before ? "the copy before the transforms " : "the copy after the transforms ";
    if (shape->strided) return std::string(where) + "goes with a strided plan";
    Analysed<Copy> copy = copyLoop(copyStmt, loop, analysis);
    if (!copy) return where + copy.whyNot;
    AffinePointer& planSide = before ? input : output;
    const AffinePointer& bufferSide = before ? copy->to : copy->from;
    const AffinePointer& dataSide = before ? copy->from : copy->to;
    bool fillsBuffer = bufferSide.root && bufferSide.root == planSide.root && bufferSide.index.coefficient.isZero() &&
                       bufferSide.index.offset.isZero() && bufferSide.index.inner.constantValue() == 1 &&
                       planSide.index.coefficient.isZero() && planSide.index.offset.isZero();
    if (!fillsBuffer)
      return std::string(where) +
             (before ? "does not fill the transform's input" : "does not read the transform's output");
    if (!onlyUsedWithin(bufferSide.root, site.function, bufferUses, sm))
      return std::string(where) + "goes through '" + bufferSide.root->getNameAsString() +
             "', which is used outside the loop";
    bool realSide = before ? kind == FftKind::RealToComplex : kind == FftKind::ComplexToReal;
    if (analysis.context().getTypeSizeInChars(copy->element).getQuantity() != (realSide ? realSize : 2 * realSize))
      return std::string(where) + "copies elements of another size";
    guard.requireEqual(copy->count, before ? inLength : outLength, std::string(where) + "does not copy one transform");
    buffers.push_back(Region{bufferSide.root->getNameAsString(), bufferSide, bufferSide.textAt(Poly()),
                             before ? inLength : outLength, before ? inBytes : outBytes});
    planSide = dataSide;
    (before ? istride : ostride) = dataSide.index.inner;
    (before ? istrideText : ostrideText) = dataSide.index.inner.text();
    (before ? inName : outName) = dataSide.leafText;
    (before ? inType : outType) = realSide ? std::string(fn.precision->real) : fn.name("complex");
    planSide.index.inner = Poly();
    return "";
  };
  for (auto [copyStmt, before] : {std::pair{copyIn, true}, std::pair{copyOut, false}})
    if (copyStmt)
      if (std::string why = substitute(copyStmt, before); !why.empty()) return Fail::fail(why);
  for (const AffinePointer* side : {&input, &output})
    for (const Region& buffer : buffers)
      if (side->root == buffer.pointer.root)
        return Fail::fail("the transforms use the copies' buffer '" + buffer.name + "'");

  const Poly& idist = input.index.coefficient;
  const Poly& odist = output.index.coefficient;
  requireAnIteration(guard, loop);
  guard.requireAtLeast(istride, one, "a stride is not positive");
  guard.requireAtLeast(ostride, one, "a stride is not positive");
  // One transform spans (length - 1) * stride + 1 elements. Successive ones must not share any: one after
  // the other (rows), or interleaved, all of them within one stride (columns).
  auto apart = [&](const Poly& dist, const Poly& stride, const Poly& length, const std::string& why) {
    std::vector<std::vector<Guard::AtLeast>> clauses = {{{dist, (length - one) * stride + one}}};
    if (stride.constantValue() != 1) clauses.push_back({{stride, loop.count * dist}, {dist, one}});
    guard.requireAny(clauses, why);
  };
  apart(idist, istride, inLength, "the inputs of successive transforms overlap");
  apart(odist, ostride, outLength, "the outputs of successive transforms overlap");
  auto region = [&](const std::string& name, const AffinePointer& p, const Poly& length, const Poly& stride,
                    const std::string& bytes) {
    return loopRegion(name, p, loop, (length - one) * stride + one, bytes);
  };
  Region inRegion = region(inName, input, inLength, istride, inBytes);
  Region outRegion = region(outName, output, outLength, ostride, outBytes);
  bool inPlace = kind == FftKind::ComplexToComplex && input.sameAs(output);
  if (inPlace) guard.requireEqual(istride, ostride, "an in-place transform has different input and output strides");
  guard.requireDisjoint(outRegion, inRegion, /*inPlaceAllowed=*/kind == FftKind::ComplexToComplex);
  // The unfused loop wrote the buffers: they must not be where the data is.
  for (const Region& buffer : buffers) {
    guard.requireDisjoint(buffer, inRegion);
    guard.requireDisjoint(buffer, outRegion);
  }
  if (guard.refuted()) return Fail::fail(guard.refutation());
  if (!buffers.empty() && !kFuseTransposingCopies)
    return Fail::fail("the transforms run on copies of the columns, which is faster than one strided plan made without "
                      "measuring");

  std::string fusedFlags = "FFTW_ESTIMATE";
  if (*flags & kFftwPreserveInput) fusedFlags += " | FFTW_PRESERVE_INPUT";
  if (*flags & kFftwUnaligned) fusedFlags += " | FFTW_UNALIGNED";
  std::string planType = fn.name("plan");
  std::string inText = inType.empty() ? inRegion.firstText : asPlanPointer(inRegion.firstText, inType);
  std::string outText = outType.empty() ? outRegion.firstText : asPlanPointer(outRegion.firstText, outType);
  fused.statement = "{ int dispar_fft_n = " + sizeText + "; " + planType + " dispar_fft_plan = " + fused.fusedName +
                    "(1, &dispar_fft_n, " + loop.count.text() + ", " + inText + ", nullptr, " + istrideText + ", " +
                    idist.text() + ", " + outText + ", nullptr, " + ostrideText + ", " + odist.text() + ", " +
                    (args.sign ? signText + ", " : "") + fusedFlags + "); " + fn.name("execute") +
                    "(dispar_fft_plan); " + fn.name("destroy_plan") + "(dispar_fft_plan); }";
  return {std::move(fused), ""};
}

}  // namespace dispar::frontend::fusion
