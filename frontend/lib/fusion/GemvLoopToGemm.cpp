// A loop of matrix-vector products with one matrix is one matrix-matrix product: the vectors, `sx`
// elements apart, are the columns of a column-major matrix with leading dimension sx (the rows of a
// row-major one), and so are the results.
//   column-major A:  Y (m x n, ld sy) = op(A) * X (k x n, ld sx)
//   row-major A:     Y^T (n x m, ld sy) = X^T (n x k, ld sx) * op(A)^T, op(A)^T being A with the
//                    transposition flipped
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

/// A gemv call of the loop, analysed, for fuseStrided.
struct StridedProduct {
  const GemvRow& row;
  const LoopSite& site;
  LoopAnalysis& analysis;
  Poly rows, cols, lda;
  std::string alpha, beta, handle;
  std::int64_t order, trans;
  AffinePointer matrix, x, y;
};

/// How a loop's vectors lie as one matrix: its columns (increment 1, `step` >= length apart: a
/// column-major length x count matrix of leading dimension `step`), or its rows (successive vectors one
/// element apart, each `increment` apart: a column-major count x length matrix of leading dimension
/// `increment`, the transpose of the one the product needs).
struct VectorsAsMatrix {
  bool asRows = false;
  Poly leading;  // the leading dimension
  Region region;
};

Analysed<VectorsAsMatrix> vectorsAsMatrix(const StridedProduct& p, GemvArg pointerArg, GemvArg incrementArg,
                                          const AffinePointer& vectors, const Poly& length, Guard& guard) {
  using Fail = Analysed<VectorsAsMatrix>;
  const clang::CallExpr* call = p.site.trigger;
  const CanonicalLoop& loop = p.site.loop;
  const std::string name = pointerArg == X ? "x" : "y";
  const Poly one = Poly::constant(1);
  VectorsAsMatrix out;
  const Poly& step = vectors.index.coefficient;
  Poly increment = one;
  if (p.analysis.constant(call->getArg(incrementArg)) == 1) {
    out.leading = step;
    guard.requireAtLeast(step, length,
                         "successive vectors " + name + " overlap (their step is less than their length)");
    guard.requireAtLeast(step, one, "successive vectors " + name + " overlap (their step is less than their length)");
  } else {
    Analysed<Poly> given = p.analysis.invariantPoly(call->getArg(incrementArg), loop);
    if (!given) return Fail::fail("the vector increment " + given.whyNot);
    if (step.constantValue() != 1)
      return Fail::fail("the vector increment '" + p.analysis.text(call->getArg(incrementArg)) +
                        "' is not 1, and successive vectors " + name + " do not start at successive elements");
    increment = *given;
    out.asRows = true;
    out.leading = increment;
    guard.requireAtLeast(increment, loop.count,
                         "the vectors " + name + " overlap (their increment is less than the loop's count)");
  }
  // (count - 1) * step + (length - 1) * increment + 1 elements from the first vector's start.
  out.region = Region{p.analysis.text(call->getArg(pointerArg)), vectors, vectors.textAt(loop.lower),
                      (loop.count - one) * step + (length - one) * increment + one, p.row.elementBytes};
  return {std::move(out), ""};
}

long long flipped(long long trans) { return trans == kNoTrans ? kTrans : kNoTrans; }

/// The loop as one gemm where a vector increment is not 1: the vectors are the columns or the rows of
/// matrices. In the column-major view of the matrix (a row-major one is its transpose, the
/// transposition flipped), y_j = op(A) x_j for every j is Y = op(A) X, and where Y is stored by rows
/// (Y^T column-major) it is Y^T = X^T op(A)^T.
Analysed<FusedLoop> fuseStrided(const StridedProduct& p) {
  using Fail = Analysed<FusedLoop>;
  const clang::CallExpr* call = p.site.trigger;
  const CanonicalLoop& loop = p.site.loop;
  const bool cublas = p.row.api == BlasApi::Cublas;
  const bool transposed = p.trans != kNoTrans;
  const Poly& m = transposed ? p.cols : p.rows;  // op(A) is m x k
  const Poly& k = transposed ? p.rows : p.cols;
  const std::string mText = p.analysis.text(call->getArg(transposed ? N : M));
  const std::string kText = p.analysis.text(call->getArg(transposed ? M : N));
  const Poly one = Poly::constant(1);

  FusedLoop fused;
  fused.fusedName = p.row.gemm.str();
  Guard& guard = fused.guard;
  requireAnIteration(guard, loop);
  Analysed<VectorsAsMatrix> xs = vectorsAsMatrix(p, X, IncX, p.x, k, guard);
  if (!xs) return Fail::fail(xs.whyNot);
  Analysed<VectorsAsMatrix> ys = vectorsAsMatrix(p, Y, IncY, p.y, m, guard);
  if (!ys) return Fail::fail(ys.whyNot);
  const bool rowMajor = p.order == kRowMajor;
  // On the column-major view; a real matrix's conjugate transpose is its transpose.
  const long long trans = !p.row.complex && p.trans == kConjTrans ? static_cast<long long>(kTrans) : p.trans;
  const long long op = rowMajor ? flipped(trans) : trans;
  if (ys->asRows && op == kConjTrans)
    return Fail::fail("a conjugate-transposed product into vectors y stored by rows has no gemm form");
  Region aRegion{p.analysis.text(call->getArg(A)), p.matrix, p.matrix.textAt(Poly()),
                 rowMajor ? (p.rows - one) * p.lda + p.cols : (p.cols - one) * p.lda + p.rows, p.row.elementBytes};
  guard.requireDisjoint(ys->region, xs->region);
  guard.requireDisjoint(ys->region, aRegion);
  if (guard.refuted()) return Fail::fail(guard.refutation());

  auto opName = [cublas](long long value) {
    return std::string(cublas ? cublasOperationName(value) : cblasTransposeName(value));
  };
  const std::string count = loop.count.text();
  const std::string matrixText = p.analysis.text(call->getArg(A)) + ", " + p.analysis.text(call->getArg(Lda));
  const std::string vectorsText = p.x.textAt(loop.lower) + ", " + xs->leading.text();
  std::string args;
  if (!ys->asRows)  // Y = op(A) X, X by columns or (transposed) by rows
    args = opName(op) + ", " + opName(xs->asRows ? kTrans : kNoTrans) + ", " + mText + ", " + count + ", " + kText +
           ", " + p.alpha + ", " + matrixText + ", " + vectorsText;
  else  // Y^T = X^T op(A)^T
    args = opName(xs->asRows ? kNoTrans : kTrans) + ", " + opName(flipped(op)) + ", " + count + ", " + mText + ", " +
           kText + ", " + p.alpha + ", " + vectorsText + ", " + matrixText;
  args = (cublas ? p.handle : std::string("CblasColMajor")) + ", " + args;
  const std::string callee = cublas ? libraryCallSpelling(p.row.gemm, p.site.options) : p.row.gemm.str();
  fused.statement =
      "{ " + callee + "(" + args + ", " + p.beta + ", " + p.y.textAt(loop.lower) + ", " + ys->leading.text() + "); }";
  return {std::move(fused), ""};
}

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
  const bool unitIncrements = analysis.constant(arg(IncX)) == 1 && analysis.constant(arg(IncY)) == 1;

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
  const Poly& sx = x->index.coefficient;
  const Poly& sy = y->index.coefficient;

  if (!unitIncrements) {
    const StridedProduct product{row,   site,   analysis, *rows,  *cols,   *lda, *alpha,
                                 *beta, handle, *order,   *trans, *matrix, *x,   *y};
    return fuseStrided(product);
  }

  FusedLoop fused;
  fused.fusedName = row.gemm.str();
  Guard& guard = fused.guard;
  requireAnIteration(guard, loop);
  guard.requireAtLeast(sx, k, "successive vectors x overlap (their step is less than their length)");
  guard.requireAtLeast(sx, Poly::constant(1), "successive vectors x overlap (their step is less than their length)");
  guard.requireAtLeast(sy, m, "successive vectors y overlap (their step is less than their length)");
  guard.requireAtLeast(sy, Poly::constant(1), "successive vectors y overlap (their step is less than their length)");
  const Poly one = Poly::constant(1);
  Region yRegion = loopRegion(analysis.text(arg(Y)), *y, loop, m, row.elementBytes);
  Region xRegion = loopRegion(analysis.text(arg(X)), *x, loop, k, row.elementBytes);
  Region aRegion{analysis.text(arg(A)), *matrix, matrix->textAt(Poly()),
                 rowMajor ? (*rows - one) * *lda + *cols : (*cols - one) * *lda + *rows, row.elementBytes};
  guard.requireDisjoint(yRegion, xRegion);
  guard.requireDisjoint(yRegion, aRegion);
  if (guard.refuted()) return Fail::fail(guard.refutation());

  std::string count = loop.count.text();
  std::string x0 = x->textAt(loop.lower), y0 = y->textAt(loop.lower);
  std::string matrixText = analysis.text(arg(A)) + ", " + analysis.text(arg(Lda));
  std::string vectorsText = x0 + ", " + sx.text();
  std::string args;
  if (cublas)
    args = handle + ", " + cublasOperationName(*trans) + ", CUBLAS_OP_N, " + mText + ", " + count + ", " + kText +
           ", " + *alpha + ", " + matrixText + ", " + vectorsText;
  else if (rowMajor)
    args = "CblasRowMajor, CblasNoTrans, " + std::string(cblasTransposeName(transposed ? kNoTrans : kTrans)) + ", " +
           count + ", " + mText + ", " + kText + ", " + *alpha + ", " + vectorsText + ", " + matrixText;
  else
    args = "CblasColMajor, " + std::string(cblasTransposeName(*trans)) + ", CblasNoTrans, " + mText + ", " + count +
           ", " + kText + ", " + *alpha + ", " + matrixText + ", " + vectorsText;
  std::string callee = cublas ? libraryCallSpelling(row.gemm, site.options) : row.gemm.str();
  fused.statement = "{ " + callee + "(" + args + ", " + *beta + ", " + y0 + ", " + sy.text() + "); }";
  return {std::move(fused), ""};
}

}  // namespace dispar::frontend::fusion
