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
  for (GemvArg inc : {IncX, IncY})
    if (analysis.constant(arg(inc)) != 1)
      return Fail::fail("the vector increment '" + analysis.text(arg(inc)) + "' is not 1");

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
