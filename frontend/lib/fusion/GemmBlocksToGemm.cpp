// A loop of matrix products over equal blocks is one product when the blocks tile a bigger matrix:
// blocks of rows of op(A) with the matching rows of C (B shared), or blocks of columns of op(B) with
// the matching columns of C (A shared). The b-th block must start exactly b block heights (widths)
// after the first, so that the stacked blocks are one matrix with the same leading dimension.
#include "FusionPatterns.h"
#include "LibraryFusion.h"
#include "LibraryTables.h"

namespace dispar::frontend::fusion {

namespace {

const GemmRow* gemmRow(llvm::StringRef name) {
  for (const GemmRow& row : kGemmRows)
    if (row.gemm == name) return &row;
  return nullptr;
}

// cblas_?gemm(order, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); cuBLAS has the handle
// where CBLAS has the order, and is column-major.
enum GemmArg { Order, Handle = Order, TransA, TransB, M, N, K, Alpha, A, Lda, B, Ldb, Beta, C, Ldc, GemmArgs };

// The elements a rows x cols matrix with leading dimension ld spans.
Poly extent(const Poly& rows, const Poly& cols, const Poly& ld, bool rowMajor) {
  const Poly one = Poly::constant(1);
  return rowMajor ? (rows - one) * ld + cols : (cols - one) * ld + rows;
}

}  // namespace

bool GemmBlocksToGemm::triggers(llvm::StringRef name) const { return gemmRow(name) != nullptr; }

Analysed<FusedLoop> GemmBlocksToGemm::fuse(const LoopSite& site, LoopAnalysis& analysis) const {
  using Fail = Analysed<FusedLoop>;
  const clang::CallExpr* call = site.trigger;
  const GemmRow& row = *gemmRow(calleeName(call));
  const CanonicalLoop& loop = site.loop;
  if (loop.body.size() != 1 || asCall(loop.body[0]) != call)
    return Fail::fail("the loop body has other statements besides the " + row.gemm.str() + " call");
  if (call->getNumArgs() != GemmArgs) return Fail::fail("the call does not have the arguments of " + row.gemm.str());
  auto arg = [call](GemmArg i) { return call->getArg(i); };

  bool cublas = row.api == BlasApi::Cublas;
  std::optional<std::int64_t> order = cublas ? std::optional<std::int64_t>(kColMajor) : analysis.constant(arg(Order));
  std::optional<std::int64_t> transA = analysis.constant(arg(TransA));
  std::optional<std::int64_t> transB = analysis.constant(arg(TransB));
  std::string handle;
  if (cublas) {
    for (std::optional<std::int64_t>* t : {&transA, &transB})
      if (*t && **t >= kCublasOpN && **t <= kCublasOpC) **t += kNoTrans - kCublasOpN;
    Analysed<std::string> h = analysis.invariantText(arg(Handle), loop);
    if (!h) return Fail::fail("the handle " + h.whyNot);
    handle = *h;
  }
  if (!order || (*order != kRowMajor && *order != kColMajor)) return Fail::fail("the matrix order is not a constant");
  for (const std::optional<std::int64_t>& t : {transA, transB})
    if (!t || (*t != kNoTrans && *t != kTrans && *t != kConjTrans))
      return Fail::fail("the transposition is not a constant");
  bool rowMajor = *order == kRowMajor;

  Poly dims[3];
  for (GemmArg i : {M, N, K}) {
    Analysed<Poly> p = analysis.invariantPoly(arg(i), loop);
    if (!p) return Fail::fail("the matrix size " + p.whyNot);
    dims[i - M] = *p;
  }
  const Poly &m = dims[0], &n = dims[1], &k = dims[2];
  Poly ld[3];
  for (GemmArg i : {Lda, Ldb, Ldc}) {
    Analysed<Poly> p = analysis.invariantPoly(arg(i), loop);
    if (!p) return Fail::fail("the leading dimension " + p.whyNot);
    ld[i == Lda ? 0 : i == Ldb ? 1 : 2] = *p;
  }
  Analysed<std::string> alpha = analysis.invariantText(arg(Alpha), loop);
  if (!alpha) return Fail::fail("alpha " + alpha.whyNot);
  Analysed<std::string> beta = analysis.invariantText(arg(Beta), loop);
  if (!beta) return Fail::fail("beta " + beta.whyNot);
  Analysed<AffinePointer> a = analysis.pointer(arg(A), loop);
  if (!a) return Fail::fail("the matrix A " + a.whyNot);
  Analysed<AffinePointer> b = analysis.pointer(arg(B), loop);
  if (!b) return Fail::fail("the matrix B " + b.whyNot);
  Analysed<AffinePointer> c = analysis.pointer(arg(C), loop);
  if (!c) return Fail::fail("the matrix C " + c.whyNot);

  bool aVaries = !a->index.coefficient.isZero(), bVaries = !b->index.coefficient.isZero();
  if (c->index.coefficient.isZero())
    return Fail::fail("every call writes the same matrix '" + analysis.text(arg(C)) + "'");
  bool tA = *transA != kNoTrans, tB = *transB != kNoTrans;
  if (cublas) {
    // The GPU has a strided batch: any steps, the blocks of C apart from each other.
    FusedLoop fused;
    fused.fusedName = row.batched.str();
    Guard& guard = fused.guard;
    requireAnIteration(guard, loop);
    guard.requireAtLeast(c->index.coefficient, extent(m, n, ld[2], false), "the blocks of C overlap");
    Region cRegion = loopRegion(analysis.text(arg(C)), *c, loop, extent(m, n, ld[2], false), row.elementBytes);
    Region aRegion = loopRegion(analysis.text(arg(A)), *a, loop,
                                tA ? extent(k, m, ld[0], false) : extent(m, k, ld[0], false), row.elementBytes);
    Region bRegion = loopRegion(analysis.text(arg(B)), *b, loop,
                                tB ? extent(n, k, ld[1], false) : extent(k, n, ld[1], false), row.elementBytes);
    guard.requireDisjoint(cRegion, aRegion);
    guard.requireDisjoint(cRegion, bRegion);
    if (guard.refuted()) return Fail::fail(guard.refutation());
    fused.statement = "{ " + libraryCallSpelling(row.batched, site.options) + "(" + handle + ", " +
                      cublasOperationName(*transA) + ", " + cublasOperationName(*transB) + ", " +
                      analysis.text(arg(M)) + ", " + analysis.text(arg(N)) + ", " + analysis.text(arg(K)) + ", " +
                      *alpha + ", " + aRegion.firstText + ", " + analysis.text(arg(Lda)) + ", " +
                      a->index.coefficient.text() + ", " + bRegion.firstText + ", " + analysis.text(arg(Ldb)) + ", " +
                      b->index.coefficient.text() + ", " + *beta + ", " + cRegion.firstText + ", " +
                      analysis.text(arg(Ldc)) + ", " + c->index.coefficient.text() + ", " + loop.count.text() + "); }";
    return {std::move(fused), ""};
  }
  if (aVaries && bVaries)
    return Fail::fail("both '" + analysis.text(arg(A)) + "' and '" + analysis.text(arg(B)) +
                      "' change with the loop, a batch of independent products");
  if (!aVaries && !bVaries) return Fail::fail("neither A nor B changes with the loop");

  FusedLoop fused;
  fused.fusedName = row.gemm.str();
  Guard& guard = fused.guard;
  requireAnIteration(guard, loop);
  // Elements between consecutive rows (columns) of op(X) for a matrix X stored with leading dimension ld.
  auto rowStep = [rowMajor](const Poly& ldX, bool trans) { return rowMajor != trans ? ldX : Poly::constant(1); };
  auto colStep = [rowMajor](const Poly& ldX, bool trans) { return rowMajor != trans ? Poly::constant(1) : ldX; };
  Poly totalM = m, totalN = n;
  // `block` is the varying operand (A or B) with the step of its op's rows (columns).
  auto stacks = [&](const AffinePointer& block, const Poly& blockLd, const Poly& blockStep, const Poly& cStep,
                    const Poly& size, const char* what, const char* operand) {
    guard.requireEqual(block.index.coefficient, size * blockStep,
                       std::string("the blocks of ") + operand + " are not stacked " + what + " (each " +
                           "block must start one block after the previous)");
    guard.requireEqual(c->index.coefficient, size * cStep,
                       std::string("the blocks of C are not stacked ") + what +
                           " (each block must start one block after the previous)");
    // Stacked along the leading dimension, all blocks must fit in it.
    if (blockStep.constantValue() == 1)
      guard.requireAtLeast(blockLd, loop.count * size,
                           std::string("the stacked blocks of ") + operand + " exceed its leading dimension");
    if (cStep.constantValue() == 1)
      guard.requireAtLeast(ld[2], loop.count * size, "the stacked blocks of C exceed its leading dimension");
  };
  if (aVaries) {
    stacks(*a, ld[0], rowStep(ld[0], tA), rowStep(ld[2], false), m, "by rows", "A");
    totalM = loop.count * m;
  } else {
    stacks(*b, ld[1], colStep(ld[1], tB), colStep(ld[2], false), n, "by columns", "B");
    totalN = loop.count * n;
  }
  Region cRegion{analysis.text(arg(C)), *c, c->textAt(loop.lower), extent(totalM, totalN, ld[2], rowMajor),
                 row.elementBytes};
  Region aRegion{analysis.text(arg(A)), *a, a->textAt(loop.lower),
                 tA ? extent(k, totalM, ld[0], rowMajor) : extent(totalM, k, ld[0], rowMajor), row.elementBytes};
  Region bRegion{analysis.text(arg(B)), *b, b->textAt(loop.lower),
                 tB ? extent(totalN, k, ld[1], rowMajor) : extent(k, totalN, ld[1], rowMajor), row.elementBytes};
  guard.requireDisjoint(cRegion, aRegion);
  guard.requireDisjoint(cRegion, bRegion);
  if (guard.refuted()) return Fail::fail(guard.refutation());

  auto sizeText = [&](GemmArg i, const Poly& total) {
    return aVaries == (i == M) && i != K ? total.text() : analysis.text(arg(i));
  };
  fused.statement = "{ " + row.gemm.str() + "(" + (rowMajor ? "CblasRowMajor" : "CblasColMajor") + ", " +
                    cblasTransposeName(*transA) + ", " + cblasTransposeName(*transB) + ", " + sizeText(M, totalM) +
                    ", " + sizeText(N, totalN) + ", " + analysis.text(arg(K)) + ", " + *alpha + ", " +
                    aRegion.firstText + ", " + analysis.text(arg(Lda)) + ", " + bRegion.firstText + ", " +
                    analysis.text(arg(Ldb)) + ", " + *beta + ", " + cRegion.firstText + ", " + analysis.text(arg(Ldc)) +
                    "); }";
  return {std::move(fused), ""};
}

}  // namespace dispar::frontend::fusion
