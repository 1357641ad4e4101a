// cuBLAS on the host path: each family of Cublas.def implemented once over OpenBLAS's CBLAS, column-major
// as cuBLAS is, with cuBLAS's argument checks and status codes (an argument cuBLAS refuses is refused
// here before OpenBLAS sees it: OpenBLAS's own error handler would print and carry on).
#include <dispar/hostlib/StandIns.h>

#include <cblas.h>

#include <algorithm>
#include <complex>
#include <new>
#include <vector>

namespace dispar::hostlib {

struct BlasHandle {
  cudaStream_t stream = nullptr;
  cublasPointerMode_t pointerMode = CUBLAS_POINTER_MODE_HOST;
  cublasMath_t mathMode = CUBLAS_DEFAULT_MATH;
};

namespace {

static_assert(sizeof(cuComplex) == sizeof(std::complex<float>) && alignof(cuComplex) == 8,
              "cuComplex must have CUDA's float2 layout");
static_assert(sizeof(cuDoubleComplex) == sizeof(std::complex<double>) && alignof(cuDoubleComplex) == 16,
              "cuDoubleComplex must have CUDA's double2 layout");

// The version of the cuBLAS API these stand-ins follow (CUBLAS_VERSION of CUDA 13.0).
constexpr int kCublasApiVersion = 130000;

// Element types as the arithmetic below and OpenBLAS take them.
template <class T>
struct ElementOf {
  using type = T;
};
template <>
struct ElementOf<cuComplex> {
  using type = std::complex<float>;
};
template <>
struct ElementOf<cuDoubleComplex> {
  using type = std::complex<double>;
};
template <class T>
using Element = typename ElementOf<T>::type;

template <class T>
Element<T>* element(T* p) {
  return reinterpret_cast<Element<T>*>(p);
}
template <class T>
const Element<T>* element(const T* p) {
  return reinterpret_cast<const Element<T>*>(p);
}
// A scalar argument: host or device pointer mode, both are host memory on the host path.
template <class T>
Element<T> scalar(const T* p) {
  return *element(p);
}

template <class E>
constexpr bool kIsComplex = !std::is_floating_point_v<E>;

bool validOperation(cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }
bool validFill(cublasFillMode_t fill) { return fill == CUBLAS_FILL_MODE_LOWER || fill == CUBLAS_FILL_MODE_UPPER; }
bool validDiag(cublasDiagType_t diag) { return diag == CUBLAS_DIAG_NON_UNIT || diag == CUBLAS_DIAG_UNIT; }
bool validSide(cublasSideMode_t side) { return side == CUBLAS_SIDE_LEFT || side == CUBLAS_SIDE_RIGHT; }

CBLAS_TRANSPOSE cblasOperation(cublasOperation_t op) {
  return op == CUBLAS_OP_N ? CblasNoTrans : op == CUBLAS_OP_T ? CblasTrans : CblasConjTrans;
}
CBLAS_UPLO cblasFill(cublasFillMode_t fill) { return fill == CUBLAS_FILL_MODE_LOWER ? CblasLower : CblasUpper; }
CBLAS_DIAG cblasDiag(cublasDiagType_t diag) { return diag == CUBLAS_DIAG_UNIT ? CblasUnit : CblasNonUnit; }
CBLAS_SIDE cblasSide(cublasSideMode_t side) { return side == CUBLAS_SIDE_LEFT ? CblasLeft : CblasRight; }

// Runs one call: the handle must exist, allocation failures become CUBLAS_STATUS_ALLOC_FAILED.
template <class Body>
cublasStatus_t run(cublasHandle_t handle, Body body) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return CUBLAS_STATUS_ALLOC_FAILED;
  }
}

// --- OpenBLAS, one overload per element type ------------------------------------------------------

void blasAxpy(int n, float a, const float* x, int incx, float* y, int incy) { cblas_saxpy(n, a, x, incx, y, incy); }
void blasAxpy(int n, double a, const double* x, int incx, double* y, int incy) { cblas_daxpy(n, a, x, incx, y, incy); }
void blasAxpy(int n, std::complex<float> a, const std::complex<float>* x, int incx, std::complex<float>* y, int incy) {
  cblas_caxpy(n, &a, x, incx, y, incy);
}
void blasAxpy(int n, std::complex<double> a, const std::complex<double>* x, int incx, std::complex<double>* y,
              int incy) {
  cblas_zaxpy(n, &a, x, incx, y, incy);
}

void blasCopy(int n, const float* x, int incx, float* y, int incy) { cblas_scopy(n, x, incx, y, incy); }
void blasCopy(int n, const double* x, int incx, double* y, int incy) { cblas_dcopy(n, x, incx, y, incy); }
void blasCopy(int n, const std::complex<float>* x, int incx, std::complex<float>* y, int incy) {
  cblas_ccopy(n, x, incx, y, incy);
}
void blasCopy(int n, const std::complex<double>* x, int incx, std::complex<double>* y, int incy) {
  cblas_zcopy(n, x, incx, y, incy);
}

void blasSwap(int n, float* x, int incx, float* y, int incy) { cblas_sswap(n, x, incx, y, incy); }
void blasSwap(int n, double* x, int incx, double* y, int incy) { cblas_dswap(n, x, incx, y, incy); }
void blasSwap(int n, std::complex<float>* x, int incx, std::complex<float>* y, int incy) {
  cblas_cswap(n, x, incx, y, incy);
}
void blasSwap(int n, std::complex<double>* x, int incx, std::complex<double>* y, int incy) {
  cblas_zswap(n, x, incx, y, incy);
}

void blasScal(int n, float a, float* x, int incx) { cblas_sscal(n, a, x, incx); }
void blasScal(int n, double a, double* x, int incx) { cblas_dscal(n, a, x, incx); }
void blasScal(int n, std::complex<float> a, std::complex<float>* x, int incx) { cblas_cscal(n, &a, x, incx); }
void blasScal(int n, std::complex<double> a, std::complex<double>* x, int incx) { cblas_zscal(n, &a, x, incx); }
void blasScal(int n, float a, std::complex<float>* x, int incx) { cblas_csscal(n, a, x, incx); }
void blasScal(int n, double a, std::complex<double>* x, int incx) { cblas_zdscal(n, a, x, incx); }

float blasNrm2(int n, const float* x, int incx) { return cblas_snrm2(n, x, incx); }
double blasNrm2(int n, const double* x, int incx) { return cblas_dnrm2(n, x, incx); }
float blasNrm2(int n, const std::complex<float>* x, int incx) { return cblas_scnrm2(n, x, incx); }
double blasNrm2(int n, const std::complex<double>* x, int incx) { return cblas_dznrm2(n, x, incx); }

float blasAsum(int n, const float* x, int incx) { return cblas_sasum(n, x, incx); }
double blasAsum(int n, const double* x, int incx) { return cblas_dasum(n, x, incx); }
float blasAsum(int n, const std::complex<float>* x, int incx) { return cblas_scasum(n, x, incx); }
double blasAsum(int n, const std::complex<double>* x, int incx) { return cblas_dzasum(n, x, incx); }

std::size_t blasAmax(int n, const float* x, int incx) { return cblas_isamax(n, x, incx); }
std::size_t blasAmax(int n, const double* x, int incx) { return cblas_idamax(n, x, incx); }
std::size_t blasAmax(int n, const std::complex<float>* x, int incx) { return cblas_icamax(n, x, incx); }
std::size_t blasAmax(int n, const std::complex<double>* x, int incx) { return cblas_izamax(n, x, incx); }

float blasDot(int n, const float* x, int incx, const float* y, int incy) { return cblas_sdot(n, x, incx, y, incy); }
double blasDot(int n, const double* x, int incx, const double* y, int incy) { return cblas_ddot(n, x, incx, y, incy); }
template <class E>
E blasDotu(int n, const E* x, int incx, const E* y, int incy) {
  E result{};
  if constexpr (std::is_same_v<E, std::complex<float>>)
    cblas_cdotu_sub(n, x, incx, y, incy, &result);
  else
    cblas_zdotu_sub(n, x, incx, y, incy, &result);
  return result;
}
template <class E>
E blasDotc(int n, const E* x, int incx, const E* y, int incy) {
  E result{};
  if constexpr (std::is_same_v<E, std::complex<float>>)
    cblas_cdotc_sub(n, x, incx, y, incy, &result);
  else
    cblas_zdotc_sub(n, x, incx, y, incy, &result);
  return result;
}

void blasGemv(CBLAS_TRANSPOSE t, int m, int n, float a, const float* A, int lda, const float* x, int incx, float b,
              float* y, int incy) {
  cblas_sgemv(CblasColMajor, t, m, n, a, A, lda, x, incx, b, y, incy);
}
void blasGemv(CBLAS_TRANSPOSE t, int m, int n, double a, const double* A, int lda, const double* x, int incx, double b,
              double* y, int incy) {
  cblas_dgemv(CblasColMajor, t, m, n, a, A, lda, x, incx, b, y, incy);
}
void blasGemv(CBLAS_TRANSPOSE t, int m, int n, std::complex<float> a, const std::complex<float>* A, int lda,
              const std::complex<float>* x, int incx, std::complex<float> b, std::complex<float>* y, int incy) {
  cblas_cgemv(CblasColMajor, t, m, n, &a, A, lda, x, incx, &b, y, incy);
}
void blasGemv(CBLAS_TRANSPOSE t, int m, int n, std::complex<double> a, const std::complex<double>* A, int lda,
              const std::complex<double>* x, int incx, std::complex<double> b, std::complex<double>* y, int incy) {
  cblas_zgemv(CblasColMajor, t, m, n, &a, A, lda, x, incx, &b, y, incy);
}

void blasGer(int m, int n, float a, const float* x, int incx, const float* y, int incy, float* A, int lda, bool) {
  cblas_sger(CblasColMajor, m, n, a, x, incx, y, incy, A, lda);
}
void blasGer(int m, int n, double a, const double* x, int incx, const double* y, int incy, double* A, int lda, bool) {
  cblas_dger(CblasColMajor, m, n, a, x, incx, y, incy, A, lda);
}
void blasGer(int m, int n, std::complex<float> a, const std::complex<float>* x, int incx, const std::complex<float>* y,
             int incy, std::complex<float>* A, int lda, bool conjugate) {
  if (conjugate)
    cblas_cgerc(CblasColMajor, m, n, &a, x, incx, y, incy, A, lda);
  else
    cblas_cgeru(CblasColMajor, m, n, &a, x, incx, y, incy, A, lda);
}
void blasGer(int m, int n, std::complex<double> a, const std::complex<double>* x, int incx,
             const std::complex<double>* y, int incy, std::complex<double>* A, int lda, bool conjugate) {
  if (conjugate)
    cblas_zgerc(CblasColMajor, m, n, &a, x, incx, y, incy, A, lda);
  else
    cblas_zgeru(CblasColMajor, m, n, &a, x, incx, y, incy, A, lda);
}

void blasTrsv(CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int n, const float* A, int lda, float* x, int incx) {
  cblas_strsv(CblasColMajor, u, t, d, n, A, lda, x, incx);
}
void blasTrsv(CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int n, const double* A, int lda, double* x, int incx) {
  cblas_dtrsv(CblasColMajor, u, t, d, n, A, lda, x, incx);
}
void blasTrsv(CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int n, const std::complex<float>* A, int lda,
              std::complex<float>* x, int incx) {
  cblas_ctrsv(CblasColMajor, u, t, d, n, A, lda, x, incx);
}
void blasTrsv(CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int n, const std::complex<double>* A, int lda,
              std::complex<double>* x, int incx) {
  cblas_ztrsv(CblasColMajor, u, t, d, n, A, lda, x, incx);
}

void blasGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float a, const float* A, int lda,
              const float* B, int ldb, float b, float* C, int ldc) {
  cblas_sgemm(CblasColMajor, ta, tb, m, n, k, a, A, lda, B, ldb, b, C, ldc);
}
void blasGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double a, const double* A, int lda,
              const double* B, int ldb, double b, double* C, int ldc) {
  cblas_dgemm(CblasColMajor, ta, tb, m, n, k, a, A, lda, B, ldb, b, C, ldc);
}
void blasGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, std::complex<float> a,
              const std::complex<float>* A, int lda, const std::complex<float>* B, int ldb, std::complex<float> b,
              std::complex<float>* C, int ldc) {
  cblas_cgemm(CblasColMajor, ta, tb, m, n, k, &a, A, lda, B, ldb, &b, C, ldc);
}
void blasGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, std::complex<double> a,
              const std::complex<double>* A, int lda, const std::complex<double>* B, int ldb, std::complex<double> b,
              std::complex<double>* C, int ldc) {
  cblas_zgemm(CblasColMajor, ta, tb, m, n, k, &a, A, lda, B, ldb, &b, C, ldc);
}

void blasSymm(CBLAS_SIDE s, CBLAS_UPLO u, int m, int n, float a, const float* A, int lda, const float* B, int ldb,
              float b, float* C, int ldc) {
  cblas_ssymm(CblasColMajor, s, u, m, n, a, A, lda, B, ldb, b, C, ldc);
}
void blasSymm(CBLAS_SIDE s, CBLAS_UPLO u, int m, int n, double a, const double* A, int lda, const double* B, int ldb,
              double b, double* C, int ldc) {
  cblas_dsymm(CblasColMajor, s, u, m, n, a, A, lda, B, ldb, b, C, ldc);
}
void blasSymm(CBLAS_SIDE s, CBLAS_UPLO u, int m, int n, std::complex<float> a, const std::complex<float>* A, int lda,
              const std::complex<float>* B, int ldb, std::complex<float> b, std::complex<float>* C, int ldc) {
  cblas_csymm(CblasColMajor, s, u, m, n, &a, A, lda, B, ldb, &b, C, ldc);
}
void blasSymm(CBLAS_SIDE s, CBLAS_UPLO u, int m, int n, std::complex<double> a, const std::complex<double>* A, int lda,
              const std::complex<double>* B, int ldb, std::complex<double> b, std::complex<double>* C, int ldc) {
  cblas_zsymm(CblasColMajor, s, u, m, n, &a, A, lda, B, ldb, &b, C, ldc);
}

void blasTrsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int m, int n, float a, const float* A,
              int lda, float* B, int ldb) {
  cblas_strsm(CblasColMajor, s, u, t, d, m, n, a, A, lda, B, ldb);
}
void blasTrsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int m, int n, double a, const double* A,
              int lda, double* B, int ldb) {
  cblas_dtrsm(CblasColMajor, s, u, t, d, m, n, a, A, lda, B, ldb);
}
void blasTrsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int m, int n, std::complex<float> a,
              const std::complex<float>* A, int lda, std::complex<float>* B, int ldb) {
  cblas_ctrsm(CblasColMajor, s, u, t, d, m, n, &a, A, lda, B, ldb);
}
void blasTrsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int m, int n, std::complex<double> a,
              const std::complex<double>* A, int lda, std::complex<double>* B, int ldb) {
  cblas_ztrsm(CblasColMajor, s, u, t, d, m, n, &a, A, lda, B, ldb);
}

void blasSyrk(CBLAS_UPLO u, CBLAS_TRANSPOSE t, int n, int k, float a, const float* A, int lda, float b, float* C,
              int ldc) {
  cblas_ssyrk(CblasColMajor, u, t, n, k, a, A, lda, b, C, ldc);
}
void blasSyrk(CBLAS_UPLO u, CBLAS_TRANSPOSE t, int n, int k, double a, const double* A, int lda, double b, double* C,
              int ldc) {
  cblas_dsyrk(CblasColMajor, u, t, n, k, a, A, lda, b, C, ldc);
}
void blasSyrk(CBLAS_UPLO u, CBLAS_TRANSPOSE t, int n, int k, std::complex<float> a, const std::complex<float>* A,
              int lda, std::complex<float> b, std::complex<float>* C, int ldc) {
  cblas_csyrk(CblasColMajor, u, t, n, k, &a, A, lda, &b, C, ldc);
}
void blasSyrk(CBLAS_UPLO u, CBLAS_TRANSPOSE t, int n, int k, std::complex<double> a, const std::complex<double>* A,
              int lda, std::complex<double> b, std::complex<double>* C, int ldc) {
  cblas_zsyrk(CblasColMajor, u, t, n, k, &a, A, lda, &b, C, ldc);
}

// --- The families ----------------------------------------------------------------------------------

// Element k of a BLAS vector of n elements with increment inc (a negative increment walks backwards).
template <class E>
E& at(E* x, int n, int inc, int k) {
  return x[inc > 0 ? static_cast<long long>(k) * inc : static_cast<long long>(n - 1 - k) * -inc];
}

cublasStatus_t create(cublasHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  BlasHandle* created = new (std::nothrow) BlasHandle();
  if (created == nullptr) return CUBLAS_STATUS_ALLOC_FAILED;
  *handle = created;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t destroy(cublasHandle_t handle) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t getVersion(cublasHandle_t handle, int* version) {
  return run(handle, [&] {
    if (version == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *version = kCublasApiVersion;
    return CUBLAS_STATUS_SUCCESS;
  });
}
cublasStatus_t setStream(cublasHandle_t handle, cudaStream_t stream) {
  return run(handle, [&] {
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
  });
}
cublasStatus_t getStream(cublasHandle_t handle, cudaStream_t* stream) {
  return run(handle, [&] {
    if (stream == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *stream = handle->stream;
    return CUBLAS_STATUS_SUCCESS;
  });
}
cublasStatus_t setPointerMode(cublasHandle_t handle, cublasPointerMode_t mode) {
  return run(handle, [&] {
    if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE) return CUBLAS_STATUS_INVALID_VALUE;
    handle->pointerMode = mode;
    return CUBLAS_STATUS_SUCCESS;
  });
}
cublasStatus_t getPointerMode(cublasHandle_t handle, cublasPointerMode_t* mode) {
  return run(handle, [&] {
    if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->pointerMode;
    return CUBLAS_STATUS_SUCCESS;
  });
}
cublasStatus_t setMathMode(cublasHandle_t handle, cublasMath_t mode) {
  return run(handle, [&] {
    // A base mode (0-3) with, optionally, the flag that disallows reduced-precision reductions. The
    // host computes at full precision whatever the mode.
    const int value = static_cast<int>(mode);
    if ((value & ~0x1f) != 0 || (value & 0xf) > CUBLAS_TF32_TENSOR_OP_MATH || (value & 0x10 && (value & 0xf) > 3))
      return CUBLAS_STATUS_INVALID_VALUE;
    handle->mathMode = mode;
    return CUBLAS_STATUS_SUCCESS;
  });
}
cublasStatus_t getMathMode(cublasHandle_t handle, cublasMath_t* mode) {
  return run(handle, [&] {
    if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->mathMode;
    return CUBLAS_STATUS_SUCCESS;
  });
}

template <class T>
cublasStatus_t axpy(cublasHandle_t handle, int n, const T* alpha, const T* x, int incx, T* y, int incy) {
  return run(handle, [&] {
    if (n > 0) blasAxpy(n, scalar(alpha), element(x), incx, element(y), incy);
    return CUBLAS_STATUS_SUCCESS;
  });
}
template <class T>
cublasStatus_t copy(cublasHandle_t handle, int n, const T* x, int incx, T* y, int incy) {
  return run(handle, [&] {
    if (n > 0) blasCopy(n, element(x), incx, element(y), incy);
    return CUBLAS_STATUS_SUCCESS;
  });
}
template <class T>
cublasStatus_t swap(cublasHandle_t handle, int n, T* x, int incx, T* y, int incy) {
  return run(handle, [&] {
    if (n > 0) blasSwap(n, element(x), incx, element(y), incy);
    return CUBLAS_STATUS_SUCCESS;
  });
}
template <class S, class T>
cublasStatus_t scal(cublasHandle_t handle, int n, const S* alpha, T* x, int incx) {
  return run(handle, [&] {
    if (n > 0 && incx > 0) blasScal(n, scalar(alpha), element(x), incx);
    return CUBLAS_STATUS_SUCCESS;
  });
}
// nrm2, asum and amax: 0 for n <= 0 or incx <= 0, as cuBLAS; amax's index counts from 1.
template <class T, class R>
cublasStatus_t nrm2(cublasHandle_t handle, int n, const T* x, int incx, R* result) {
  return run(handle, [&] {
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *result = n > 0 && incx > 0 ? blasNrm2(n, element(x), incx) : R{};
    return CUBLAS_STATUS_SUCCESS;
  });
}
template <class T, class R>
cublasStatus_t asum(cublasHandle_t handle, int n, const T* x, int incx, R* result) {
  return run(handle, [&] {
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *result = n > 0 && incx > 0 ? blasAsum(n, element(x), incx) : R{};
    return CUBLAS_STATUS_SUCCESS;
  });
}
template <class T>
cublasStatus_t amax(cublasHandle_t handle, int n, const T* x, int incx, int* result) {
  return run(handle, [&] {
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *result = n > 0 && incx > 0 ? static_cast<int>(blasAmax(n, element(x), incx)) + 1 : 0;
    return CUBLAS_STATUS_SUCCESS;
  });
}
template <class T, class Dot>
cublasStatus_t dotWith(cublasHandle_t handle, int n, const T* x, int incx, const T* y, int incy, T* result, Dot dot) {
  return run(handle, [&] {
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *element(result) = n > 0 ? dot(n, element(x), incx, element(y), incy) : Element<T>{};
    return CUBLAS_STATUS_SUCCESS;
  });
}
template <class T>
cublasStatus_t dot(cublasHandle_t handle, int n, const T* x, int incx, const T* y, int incy, T* result) {
  return dotWith(handle, n, x, incx, y, incy, result, [](auto... a) { return blasDot(a...); });
}
template <class T>
cublasStatus_t dotu(cublasHandle_t handle, int n, const T* x, int incx, const T* y, int incy, T* result) {
  return dotWith(handle, n, x, incx, y, incy, result, [](auto... a) { return blasDotu(a...); });
}
template <class T>
cublasStatus_t dotc(cublasHandle_t handle, int n, const T* x, int incx, const T* y, int incy, T* result) {
  return dotWith(handle, n, x, incx, y, incy, result, [](auto... a) { return blasDotc(a...); });
}

template <class T>
cublasStatus_t gemv(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const T* alpha, const T* A, int lda,
                    const T* x, int incx, const T* beta, T* y, int incy) {
  return run(handle, [&] {
    if (!validOperation(trans) || m < 0 || n < 0 || lda < std::max(1, m) || incx == 0 || incy == 0)
      return CUBLAS_STATUS_INVALID_VALUE;
    if (m > 0 && n > 0)
      blasGemv(cblasOperation(trans), m, n, scalar(alpha), element(A), lda, element(x), incx, scalar(beta), element(y),
               incy);
    return CUBLAS_STATUS_SUCCESS;
  });
}
template <class T>
cublasStatus_t gerWith(cublasHandle_t handle, int m, int n, const T* alpha, const T* x, int incx, const T* y, int incy,
                       T* A, int lda, bool conjugate) {
  return run(handle, [&] {
    if (m < 0 || n < 0 || incx == 0 || incy == 0 || lda < std::max(1, m)) return CUBLAS_STATUS_INVALID_VALUE;
    if (m > 0 && n > 0) blasGer(m, n, scalar(alpha), element(x), incx, element(y), incy, element(A), lda, conjugate);
    return CUBLAS_STATUS_SUCCESS;
  });
}
template <class T>
cublasStatus_t ger(cublasHandle_t h, int m, int n, const T* alpha, const T* x, int incx, const T* y, int incy, T* A,
                   int lda) {
  return gerWith(h, m, n, alpha, x, incx, y, incy, A, lda, false);
}
template <class T>
cublasStatus_t geru(cublasHandle_t h, int m, int n, const T* alpha, const T* x, int incx, const T* y, int incy, T* A,
                    int lda) {
  return gerWith(h, m, n, alpha, x, incx, y, incy, A, lda, false);
}
template <class T>
cublasStatus_t gerc(cublasHandle_t h, int m, int n, const T* alpha, const T* x, int incx, const T* y, int incy, T* A,
                    int lda) {
  return gerWith(h, m, n, alpha, x, incx, y, incy, A, lda, true);
}

template <class T>
cublasStatus_t symv(cublasHandle_t handle, cublasFillMode_t uplo, int n, const T* alpha, const T* A, int lda,
                    const T* x, int incx, const T* beta, T* y, int incy) {
  return run(handle, [&] {
    if (!validFill(uplo) || n < 0 || lda < std::max(1, n) || incx == 0 || incy == 0) return CUBLAS_STATUS_INVALID_VALUE;
    if (n == 0) return CUBLAS_STATUS_SUCCESS;
    using E = Element<T>;
    const E a = scalar(alpha), b = scalar(beta);
    if constexpr (!kIsComplex<E>) {
      if constexpr (std::is_same_v<E, float>)
        cblas_ssymv(CblasColMajor, cblasFill(uplo), n, a, element(A), lda, element(x), incx, b, element(y), incy);
      else
        cblas_dsymv(CblasColMajor, cblasFill(uplo), n, a, element(A), lda, element(x), incx, b, element(y), incy);
    } else {
      // CBLAS has no complex symmetric (not Hermitian) matrix-vector product: computed here.
      const E* matrix = element(A);
      const E* in = element(x);
      E* out = element(y);
      std::vector<E> result(static_cast<std::size_t>(n));
      for (int j = 0; j < n; ++j) {
        const E xj = at(in, n, incx, j);
        for (int i = 0; i < n; ++i) {
          const bool stored = uplo == CUBLAS_FILL_MODE_LOWER ? i >= j : i <= j;
          const E aij =
              stored ? matrix[i + static_cast<long long>(j) * lda] : matrix[j + static_cast<long long>(i) * lda];
          result[static_cast<std::size_t>(i)] += aij * xj;
        }
      }
      for (int i = 0; i < n; ++i) {
        E& yi = at(out, n, incy, i);
        yi = a * result[static_cast<std::size_t>(i)] + (b == E{} ? E{} : b * yi);
      }
    }
    return CUBLAS_STATUS_SUCCESS;
  });
}
template <class T>
cublasStatus_t trsv(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, cublasDiagType_t diag, int n,
                    const T* A, int lda, T* x, int incx) {
  return run(handle, [&] {
    if (!validFill(uplo) || !validOperation(trans) || !validDiag(diag) || n < 0 || lda < std::max(1, n) || incx == 0)
      return CUBLAS_STATUS_INVALID_VALUE;
    if (n > 0) blasTrsv(cblasFill(uplo), cblasOperation(trans), cblasDiag(diag), n, element(A), lda, element(x), incx);
    return CUBLAS_STATUS_SUCCESS;
  });
}

bool validGemm(cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, int lda, int ldb, int ldc) {
  return validOperation(transa) && validOperation(transb) && m >= 0 && n >= 0 && k >= 0 &&
         lda >= std::max(1, transa == CUBLAS_OP_N ? m : k) && ldb >= std::max(1, transb == CUBLAS_OP_N ? k : n) &&
         ldc >= std::max(1, m);
}
template <class T>
void gemmOnce(cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const T* alpha, const T* A,
              int lda, const T* B, int ldb, const T* beta, T* C, int ldc) {
  if (m == 0 || n == 0) return;
  blasGemm(cblasOperation(transa), cblasOperation(transb), m, n, k, scalar(alpha), element(A), lda, element(B), ldb,
           scalar(beta), element(C), ldc);
}
template <class T>
cublasStatus_t gemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                    const T* alpha, const T* A, int lda, const T* B, int ldb, const T* beta, T* C, int ldc) {
  return run(handle, [&] {
    if (!validGemm(transa, transb, m, n, k, lda, ldb, ldc)) return CUBLAS_STATUS_INVALID_VALUE;
    gemmOnce(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    return CUBLAS_STATUS_SUCCESS;
  });
}
template <class T>
cublasStatus_t gemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                           int k, const T* alpha, const T* const A[], int lda, const T* const B[], int ldb,
                           const T* beta, T* const C[], int ldc, int batchCount) {
  return run(handle, [&] {
    if (!validGemm(transa, transb, m, n, k, lda, ldb, ldc) || batchCount < 0) return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < batchCount; ++i)
      gemmOnce(transa, transb, m, n, k, alpha, A[i], lda, B[i], ldb, beta, C[i], ldc);
    return CUBLAS_STATUS_SUCCESS;
  });
}
template <class T>
cublasStatus_t gemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                  int n, int k, const T* alpha, const T* A, int lda, long long strideA, const T* B,
                                  int ldb, long long strideB, const T* beta, T* C, int ldc, long long strideC,
                                  int batchCount) {
  return run(handle, [&] {
    if (!validGemm(transa, transb, m, n, k, lda, ldb, ldc) || batchCount < 0) return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < batchCount; ++i)
      gemmOnce(transa, transb, m, n, k, alpha, A + i * strideA, lda, B + i * strideB, ldb, beta, C + i * strideC, ldc);
    return CUBLAS_STATUS_SUCCESS;
  });
}
template <class T>
cublasStatus_t symm(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, int m, int n, const T* alpha,
                    const T* A, int lda, const T* B, int ldb, const T* beta, T* C, int ldc) {
  return run(handle, [&] {
    if (!validSide(side) || !validFill(uplo) || m < 0 || n < 0 || lda < std::max(1, side == CUBLAS_SIDE_LEFT ? m : n) ||
        ldb < std::max(1, m) || ldc < std::max(1, m))
      return CUBLAS_STATUS_INVALID_VALUE;
    if (m > 0 && n > 0)
      blasSymm(cblasSide(side), cblasFill(uplo), m, n, scalar(alpha), element(A), lda, element(B), ldb, scalar(beta),
               element(C), ldc);
    return CUBLAS_STATUS_SUCCESS;
  });
}
template <class T>
cublasStatus_t trsm(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t trans,
                    cublasDiagType_t diag, int m, int n, const T* alpha, const T* A, int lda, T* B, int ldb) {
  return run(handle, [&] {
    if (!validSide(side) || !validFill(uplo) || !validOperation(trans) || !validDiag(diag) || m < 0 || n < 0 ||
        lda < std::max(1, side == CUBLAS_SIDE_LEFT ? m : n) || ldb < std::max(1, m))
      return CUBLAS_STATUS_INVALID_VALUE;
    if (m > 0 && n > 0)
      blasTrsm(cblasSide(side), cblasFill(uplo), cblasOperation(trans), cblasDiag(diag), m, n, scalar(alpha),
               element(A), lda, element(B), ldb);
    return CUBLAS_STATUS_SUCCESS;
  });
}
template <class T>
cublasStatus_t syrk(cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k, const T* alpha,
                    const T* A, int lda, const T* beta, T* C, int ldc) {
  return run(handle, [&] {
    // syrk takes op(A) = A or A^T; conjugate transposition is herk's (cuBLAS refuses it for complex syrk).
    const bool complex = kIsComplex<Element<T>>;
    if (!validFill(uplo) || !validOperation(trans) || (complex && trans == CUBLAS_OP_C) || n < 0 || k < 0 ||
        lda < std::max(1, trans == CUBLAS_OP_N ? n : k) || ldc < std::max(1, n))
      return CUBLAS_STATUS_INVALID_VALUE;
    if (n > 0)
      blasSyrk(cblasFill(uplo), trans == CUBLAS_OP_N ? CblasNoTrans : CblasTrans, n, k, scalar(alpha), element(A), lda,
               scalar(beta), element(C), ldc);
    return CUBLAS_STATUS_SUCCESS;
  });
}
// C = alpha op(A) + beta op(B). In place (C == A or C == B) only untransposed with the same leading
// dimension, as cuBLAS requires; then each element is read before it is written.
template <class T>
cublasStatus_t geam(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                    const T* alpha, const T* A, int lda, const T* beta, const T* B, int ldb, T* C, int ldc) {
  return run(handle, [&] {
    if (!validOperation(transa) || !validOperation(transb) || m < 0 || n < 0 ||
        lda < std::max(1, transa == CUBLAS_OP_N ? m : n) || ldb < std::max(1, transb == CUBLAS_OP_N ? m : n) ||
        ldc < std::max(1, m))
      return CUBLAS_STATUS_INVALID_VALUE;
    if ((C == A && (transa != CUBLAS_OP_N || lda != ldc)) || (C == B && (transb != CUBLAS_OP_N || ldb != ldc)))
      return CUBLAS_STATUS_INVALID_VALUE;
    using E = Element<T>;
    const E a = scalar(alpha), b = scalar(beta);
    const E* matrixA = element(A);
    const E* matrixB = element(B);
    E* out = element(C);
    const auto entry = [](const E* matrix, int ld, cublasOperation_t op, int i, int j) {
      const E value =
          op == CUBLAS_OP_N ? matrix[i + static_cast<long long>(j) * ld] : matrix[j + static_cast<long long>(i) * ld];
      if constexpr (kIsComplex<E>)
        return op == CUBLAS_OP_C ? std::conj(value) : value;
      else
        return value;
    };
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        // A zero scale does not read its matrix (which may then be any pointer, as in cuBLAS).
        const E fromA = a == E{} ? E{} : a * entry(matrixA, lda, transa, i, j);
        const E fromB = b == E{} ? E{} : b * entry(matrixB, ldb, transb, i, j);
        out[i + static_cast<long long>(j) * ldc] = fromA + fromB;
      }
    return CUBLAS_STATUS_SUCCESS;
  });
}

}  // namespace

// One definition per row of the table, calling its family.
#define DISPAR_CUBLAS_API(name, family, parameters, arguments)                                                         \
  cublasStatus_t host_##name parameters { return family arguments; }
#include <dispar/hostlib/Cublas.def>

}  // namespace dispar::hostlib
