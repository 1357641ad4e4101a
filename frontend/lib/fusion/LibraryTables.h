// The library functions fusion knows, as data: one row per function family and precision. A pattern
// looks its trigger call up here and takes the fused call's name and element sizes from the same row.
// GPU rows (cuBLAS, cuFFT) sit beside the CPU ones.
#ifndef DISPAR_FRONTEND_FUSION_LIBRARY_TABLES_H
#define DISPAR_FRONTEND_FUSION_LIBRARY_TABLES_H

#include "llvm/ADT/StringRef.h"

namespace dispar::frontend::fusion {

/// The CBLAS enumerators (cblas.h), fixed by the CBLAS standard.
enum CblasValue : long long { kRowMajor = 101, kColMajor = 102, kNoTrans = 111, kTrans = 112, kConjTrans = 113 };

inline const char* cblasTransposeName(long long value) {
  return value == kNoTrans ? "CblasNoTrans" : value == kTrans ? "CblasTrans" : "CblasConjTrans";
}

/// cuBLAS's cublasOperation_t (cublas_api.h).
enum CublasValue : long long { kCublasOpN = 0, kCublasOpT = 1, kCublasOpC = 2 };

inline const char* cublasOperationName(long long cblasTranspose) {
  return cblasTranspose == kNoTrans ? "CUBLAS_OP_N" : cblasTranspose == kTrans ? "CUBLAS_OP_T" : "CUBLAS_OP_C";
}

/// Whose calling convention a row follows: CBLAS (order first) or cuBLAS (handle first, column-major,
/// scalars by pointer, called through libraryCallSpelling).
enum class BlasApi { Cblas, Cublas };

/// A matrix-vector product and the matrix-matrix product a loop of it becomes.
struct GemvRow {
  llvm::StringLiteral gemv;
  llvm::StringLiteral gemm;
  const char* elementBytes;  // C++ text: the size of one matrix or vector element
  bool complex;
  BlasApi api;
};

inline constexpr GemvRow kGemvRows[] = {
    {"cblas_sgemv", "cblas_sgemm", "sizeof(float)", false, BlasApi::Cblas},
    {"cblas_dgemv", "cblas_dgemm", "sizeof(double)", false, BlasApi::Cblas},
    {"cblas_cgemv", "cblas_cgemm", "2 * sizeof(float)", true, BlasApi::Cblas},
    {"cblas_zgemv", "cblas_zgemm", "2 * sizeof(double)", true, BlasApi::Cblas},
    // cublas_v2.h makes the names macros of their _v2 functions; the table holds the names users write.
    {"cublasSgemv", "cublasSgemm", "sizeof(float)", false, BlasApi::Cublas},
    {"cublasDgemv", "cublasDgemm", "sizeof(double)", false, BlasApi::Cublas},
    {"cublasCgemv", "cublasCgemm", "2 * sizeof(float)", true, BlasApi::Cublas},
    {"cublasZgemv", "cublasZgemm", "2 * sizeof(double)", true, BlasApi::Cublas},
};

/// A matrix-matrix product whose loop over equal blocks becomes one product on the stacked whole (CBLAS),
/// or one strided batched product (cuBLAS: `batched`).
struct GemmRow {
  llvm::StringLiteral gemm;
  const char* elementBytes;
  BlasApi api;
  llvm::StringLiteral batched;
};

inline constexpr GemmRow kGemmRows[] = {
    {"cblas_sgemm", "sizeof(float)", BlasApi::Cblas, ""},
    {"cblas_dgemm", "sizeof(double)", BlasApi::Cblas, ""},
    {"cblas_cgemm", "2 * sizeof(float)", BlasApi::Cblas, ""},
    {"cblas_zgemm", "2 * sizeof(double)", BlasApi::Cblas, ""},
    {"cublasSgemm", "sizeof(float)", BlasApi::Cublas, "cublasSgemmStridedBatched"},
    {"cublasDgemm", "sizeof(double)", BlasApi::Cublas, "cublasDgemmStridedBatched"},
    {"cublasCgemm", "2 * sizeof(float)", BlasApi::Cublas, "cublasCgemmStridedBatched"},
    {"cublasZgemm", "2 * sizeof(double)", BlasApi::Cublas, "cublasZgemmStridedBatched"},
};

/// FFTW's precisions: the prefix of every name (`fftw_plan_dft_1d`, `fftwf_plan_dft_1d`).
struct FftPrecisionRow {
  llvm::StringLiteral prefix;
  const char* real;  // the real type
};

inline constexpr FftPrecisionRow kFftPrecisions[] = {{"fftw_", "double"}, {"fftwf_", "float"}};

enum class FftKind { ComplexToComplex, RealToComplex, ComplexToReal };

/// A 1-D transform: the plan that creates it, the new-array execution, and the many-plan a loop of
/// them becomes (names without the precision prefix). A `strided` plan is a many-plan of rank 1 and one
/// transform, whose strides let it run down a column.
struct FftShapeRow {
  llvm::StringLiteral plan1d;
  llvm::StringLiteral execute;
  llvm::StringLiteral many;
  FftKind kind;
  bool strided;
};

inline constexpr FftShapeRow kFftShapes[] = {
    {"plan_dft_1d", "execute_dft", "plan_many_dft", FftKind::ComplexToComplex, false},
    {"plan_many_dft", "execute_dft", "plan_many_dft", FftKind::ComplexToComplex, true},
    {"plan_dft_r2c_1d", "execute_dft_r2c", "plan_many_dft_r2c", FftKind::RealToComplex, false},
    {"plan_dft_c2r_1d", "execute_dft_c2r", "plan_many_dft_c2r", FftKind::ComplexToReal, false},
};

/// A cuFFT execution, the plan type it needs (cufft.h's cufftType) and its element types. A loop of them
/// becomes one cufftPlanMany of that type.
struct CufftExecRow {
  llvm::StringLiteral execute;
  llvm::StringLiteral typeName;
  long long typeValue;
  FftKind kind;
  const char* complexType;
  const char* realType;
};

inline constexpr CufftExecRow kCufftExecRows[] = {
    {"cufftExecC2C", "CUFFT_C2C", 0x29, FftKind::ComplexToComplex, "cufftComplex", "cufftReal"},
    {"cufftExecR2C", "CUFFT_R2C", 0x2a, FftKind::RealToComplex, "cufftComplex", "cufftReal"},
    {"cufftExecC2R", "CUFFT_C2R", 0x2c, FftKind::ComplexToReal, "cufftComplex", "cufftReal"},
    {"cufftExecZ2Z", "CUFFT_Z2Z", 0x69, FftKind::ComplexToComplex, "cufftDoubleComplex", "cufftDoubleReal"},
    {"cufftExecD2Z", "CUFFT_D2Z", 0x6a, FftKind::RealToComplex, "cufftDoubleComplex", "cufftDoubleReal"},
    {"cufftExecZ2D", "CUFFT_Z2D", 0x6c, FftKind::ComplexToReal, "cufftDoubleComplex", "cufftDoubleReal"},
};

/// Whether a loop that copies each column through a buffer around a contiguous 1-D transform is rewritten
/// into one strided many plan. It is recognised and checked, but left as written: on the measured machine
/// the strided plan FFTW_ESTIMATE makes ran 1.75x slower than the copies (bench/fusion, docs/libraries.md),
/// and a measured plan would overwrite the data or cost a planning pass per call.
inline constexpr bool kFuseTransposingCopies = false;

/// FFTW's planner flags that fusion keeps (fftw3.h): the fused plan is always made with FFTW_ESTIMATE,
/// which never overwrites the arrays while planning, as FFTW_MEASURE would.
inline constexpr unsigned kFftwUnaligned = 1u << 1;
inline constexpr unsigned kFftwPreserveInput = 1u << 4;

}  // namespace dispar::frontend::fusion

#endif
