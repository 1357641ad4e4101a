// A loop of matrix-vector products with one matrix is one matrix-matrix product: the vectors, `sx`
// elements apart, are the columns of a column-major matrix with leading dimension sx (the rows of a
// row-major one), and so are the results.
//   column-major A:  Y (m x n, ld sy) = op(A) * X (k x n, ld sx)
//   row-major A:     Y^T (n x m, ld sy) = X^T (n x k, ld sx) * op(A)^T, op(A)^T being A with the
//                    transposition flipped
// Vectors one element apart, each with an increment (the columns of a row-major matrix), are the rows of
// a column-major matrix instead: that operand is taken transposed, and where it is Y the product is
// written for Y^T, all column-major (VectorsAsMatrix).
#include "FusionPatterns.h"
#include "LibraryFusion.h"
#include "LibraryTables.h"

namespace dispar::frontend::fusion {

namespace {

const GemvRow* gemvRow(llvm::StringRef name) {
  for (const GemvRow& row : kGemvRows)
    if (row.gemv == name) return &row;
  return nullptr;
}

// cblas_?gemv(order, trans, M, N, alpha, A, lda, x, incx, beta, y, incy); cuBLAS has the handle first
// where CBLAS has the order, and is column-major.
enum GemvArg { Order, Handle = Order, Trans, M, N, Alpha, A, Lda, X, IncX, Beta, Y, IncY, GemvArgs };

/// How a loop's vectors lie as one matrix: its columns (increment 1, `step` >= length apart: a
/// column-major length x count matrix of leading dimension `step`), or its rows (successive vectors one
/// element apart, each `increment` apart: a column-major count x length matrix of leading dimension
/// `increment`, the transpose of the one the product needs).
struct VectorsAsMatrix {
  bool asRows = false;
  Poly leading;  // the leading dimension
  Region region;
};

Analysed<VectorsAsMatrix> vectorsAsMatrix(const clang::CallExpr* call, GemvArg pointerArg, GemvArg incrementArg,
                                          const AffinePointer& vectors, const Poly& length, const GemvRow& row,
                                          const CanonicalLoop& loop, LoopAnalysis& analysis, Guard& guard) {
  using Fail = Analysed<VectorsAsMatrix>;
  const std::string name = pointerArg == X ? "x" : "y";
  const Poly one = Poly::constant(1);
  VectorsAsMatrix out;
  const Poly& step = vectors.index.coefficient;
  Poly increment = one;
  if (analysis.constant(call->getArg(incrementArg)) == 1) {
    out.leading = step;
    guard.requireAtLeast(step, length,
                         "successive vectors " + name + " overlap (their step is less than their length)");
    guard.requireAtLeast(step, one, "successive vectors " + name + " overlap (their step is less than their length)");
  } else {
    Analysed<Poly> given = analysis.invariantPoly(call->getArg(incrementArg), loop);
    if (!given) return Fail::fail("the vector increment " + given.whyNot);
    if (step.constantValue() != 1)
      return Fail::fail("the vector increment '" + analysis.text(call->getArg(incrementArg)) +
                        "' is not 1, and successive vectors " + name + " do not start at successive elements");
    increment = *given;
    out.asRows = true;
    out.leading = increment;
    guard.requireAtLeast(increment, loop.count,
                         "the vectors " + name + " overlap (their increment is less than the loop's count)");
  }
  // Each vector spans (length - 1) * increment + 1 elements.
  out.region = loopRegion(analysis.text(call->getArg(pointerArg)), vectors, loop, (length - one) * increment + one,
                          row.elementBytes);
  return {std::move(out), ""};
}

long long flipped(long long trans) { return trans == kNoTrans ? kTrans : kNoTrans; }

}  // namespace

bool GemvLoopToGemm::triggers(llvm::StringRef name) const { return gemvRow(name) != nullptr; }

Analysed<FusedLoop> GemvLoopToGemm::fuse(const LoopSite& site, LoopAnalysis& analysis) const {
  using Fail = Analysed<FusedLoop>;
  const clang::CallExpr* call = site.trigger;
  const GemvRow& row = *gemvRow(calleeName(call));
  const CanonicalLoop& loop = site.loop;
  if (loop.body.size() != 1 || asCall(loop.body[0]) != call)
    return Fail::fail("the loop body has other statements besides the " + row.gemv.str() + " call");
  if (call->getNumArgs() != GemvArgs) return Fail::fail("the call does not have the arguments of " + row.gemv.str());
  auto arg = [call](GemvArg i) { return call->getArg(i); };

  bool cublas = row.api == BlasApi::Cublas;
  std::optional<std::int64_t> order = cublas ? std::optional<std::int64_t>(kColMajor) : analysis.constant(arg(Order));
  std::optional<std::int64_t> trans = analysis.constant(arg(Trans));
  if (cublas && trans && *trans >= kCublasOpN && *trans <= kCublasOpC) *trans += kNoTrans - kCublasOpN;
  std::string handle;
  if (cublas) {
    Analysed<std::string> h = analysis.invariantText(arg(Handle), loop);
    if (!h) return Fail::fail("the handle " + h.whyNot);
    handle = *h;
  }
  if (!order || (*order != kRowMajor && *order != kColMajor)) return Fail::fail("the matrix order is not a constant");
  if (!trans || (*trans != kNoTrans && *trans != kTrans && *trans != kConjTrans))
    return Fail::fail("the transposition is not a constant");
  bool rowMajor = *order == kRowMajor;
  bool transposed = *trans != kNoTrans;
  if (rowMajor && row.complex && *trans == kConjTrans)
    return Fail::fail("a conjugate-transposed row-major product has no gemm form over the vectors");

  Analysed<Poly> rows = analysis.invariantPoly(arg(M), loop);
  if (!rows) return Fail::fail("the matrix size " + rows.whyNot);
  Analysed<Poly> cols = analysis.invariantPoly(arg(N), loop);
  if (!cols) return Fail::fail("the matrix size " + cols.whyNot);
  Analysed<Poly> lda = analysis.invariantPoly(arg(Lda), loop);
  if (!lda) return Fail::fail("the leading dimension " + lda.whyNot);
  Analysed<std::string> alpha = analysis.invariantText(arg(Alpha), loop);
  if (!alpha) return Fail::fail("alpha " + alpha.whyNot);
  Analysed<std::string> beta = analysis.invariantText(arg(Beta), loop);
  if (!beta) return Fail::fail("beta " + beta.whyNot);

  Analysed<AffinePointer> matrix = analysis.pointer(arg(A), loop);
  if (!matrix) return Fail::fail("the matrix " + matrix.whyNot);
  if (!matrix->index.coefficient.isZero())
    return Fail::fail("the matrix '" + analysis.text(arg(A)) + "' changes with the loop");
  Analysed<AffinePointer> x = analysis.pointer(arg(X), loop);
  if (!x) return Fail::fail("the vector x " + x.whyNot);
  Analysed<AffinePointer> y = analysis.pointer(arg(Y), loop);
  if (!y) return Fail::fail("the vector y " + y.whyNot);

  // op(A) is m x k: y has m elements, x has k.
  const Poly& m = transposed ? *cols : *rows;
  const Poly& k = transposed ? *rows : *cols;
  std::string mText = analysis.text(arg(transposed ? N : M));
  std::string kText = analysis.text(arg(transposed ? M : N));

  FusedLoop fused;
  fused.fusedName = row.gemm.str();
  Guard& guard = fused.guard;
  requireAnIteration(guard, loop);
  Analysed<VectorsAsMatrix> xs = vectorsAsMatrix(call, X, IncX, *x, k, row, loop, analysis, guard);
  if (!xs) return Fail::fail(xs.whyNot);
  Analysed<VectorsAsMatrix> ys = vectorsAsMatrix(call, Y, IncY, *y, m, row, loop, analysis, guard);
  if (!ys) return Fail::fail(ys.whyNot);
  // op on the column-major view of A: a row-major matrix is its transpose, the transposition flipped (a
  // complex conjugate transpose was refused above; a real one is the transpose).
  const long long op = rowMajor ? flipped(*trans) : *trans;
  if (ys->asRows && op == kConjTrans && row.complex)
    return Fail::fail("a conjugate-transposed product into vectors y stored by rows has no gemm form");
  const Poly one = Poly::constant(1);
  Region aRegion{analysis.text(arg(A)), *matrix, matrix->textAt(Poly()),
                 rowMajor ? (*rows - one) * *lda + *cols : (*cols - one) * *lda + *rows, row.elementBytes};
  guard.requireDisjoint(ys->region, xs->region);
  guard.requireDisjoint(ys->region, aRegion);
  if (guard.refuted()) return Fail::fail(guard.refutation());

  auto opName = [cublas](long long value) {
    return std::string(cublas ? cublasOperationName(value) : cblasTransposeName(value));
  };
  std::string count = loop.count.text();
  std::string x0 = x->textAt(loop.lower), y0 = y->textAt(loop.lower);
  std::string matrixText = analysis.text(arg(A)) + ", " + analysis.text(arg(Lda));
  std::string vectorsText = x0 + ", " + xs->leading.text();
  std::string args;
  if (rowMajor && !cublas && !xs->asRows && !ys->asRows)  // the vectors are rows of row-major X and Y
    args = "CblasRowMajor, CblasNoTrans, " + opName(transposed ? kNoTrans : kTrans) + ", " + count + ", " + mText +
           ", " + kText + ", " + *alpha + ", " + vectorsText + ", " + matrixText;
  else if (!ys->asRows)  // Y = op(A) X, X by columns or (transposed) by rows
    args = (cublas ? handle : "CblasColMajor") + ", " + opName(op) + ", " + opName(xs->asRows ? kTrans : kNoTrans) +
           ", " + mText + ", " + count + ", " + kText + ", " + *alpha + ", " + matrixText + ", " + vectorsText;
  else  // Y^T = X^T op(A)^T
    args = (cublas ? handle : "CblasColMajor") + ", " + opName(xs->asRows ? kNoTrans : kTrans) + ", " +
           opName(flipped(op)) + ", " + count + ", " + mText + ", " + kText + ", " + *alpha + ", " + vectorsText +
           ", " + matrixText;
  std::string callee = cublas ? libraryCallSpelling(row.gemm, site.options) : row.gemm.str();
  fused.statement = "{ " + callee + "(" + args + ", " + *beta + ", " + y0 + ", " + ys->leading.text() + "); }";
  return {std::move(fused), ""};
}

}  // namespace dispar::frontend::fusion
