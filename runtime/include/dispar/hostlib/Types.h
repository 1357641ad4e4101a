// The cuBLAS and cuFFT types of the host stand-ins (dispar_hostlib), with the values and layouts of the
// CUDA toolkit's cublas_api.h, cufft.h and cuComplex.h, so that a status, an operation or a complex
// array means the same on the host path as on a GPU. Declared in dispar::hostlib: the global CUDA
// names are either the toolkit's (nvcc builds) or aliases of these (<dispar/hostlib/CudaNames.h>).
#ifndef DISPAR_HOSTLIB_TYPES_H
#define DISPAR_HOSTLIB_TYPES_H

#include <dispar/hostk/RuntimeApi.h>

namespace dispar::hostlib {

using cudaStream_t = ::dispar::hostk::cudaStream_t;

// Complex numbers: CUDA's cuComplex is float2 and cuDoubleComplex double2 (8- and 16-byte aligned).
struct alignas(8) cuFloatComplex {
  float x, y;
};
struct alignas(16) cuDoubleComplex {
  double x, y;
};
using cuComplex = cuFloatComplex;

// cuBLAS (cublas_api.h).
enum cublasStatus_t {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_ARCH_MISMATCH = 8,
  CUBLAS_STATUS_MAPPING_ERROR = 11,
  CUBLAS_STATUS_EXECUTION_FAILED = 13,
  CUBLAS_STATUS_INTERNAL_ERROR = 14,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
  CUBLAS_STATUS_LICENSE_ERROR = 16,
};
enum cublasFillMode_t { CUBLAS_FILL_MODE_LOWER = 0, CUBLAS_FILL_MODE_UPPER = 1, CUBLAS_FILL_MODE_FULL = 2 };
enum cublasDiagType_t { CUBLAS_DIAG_NON_UNIT = 0, CUBLAS_DIAG_UNIT = 1 };
enum cublasSideMode_t { CUBLAS_SIDE_LEFT = 0, CUBLAS_SIDE_RIGHT = 1 };
enum cublasOperation_t {
  CUBLAS_OP_N = 0,
  CUBLAS_OP_T = 1,
  CUBLAS_OP_C = 2,
  CUBLAS_OP_HERMITAN = 2,
  CUBLAS_OP_CONJG = 3
};
enum cublasPointerMode_t { CUBLAS_POINTER_MODE_HOST = 0, CUBLAS_POINTER_MODE_DEVICE = 1 };
enum cublasMath_t {
  CUBLAS_DEFAULT_MATH = 0,
  CUBLAS_TENSOR_OP_MATH = 1,
  CUBLAS_PEDANTIC_MATH = 2,
  CUBLAS_TF32_TENSOR_OP_MATH = 3,
  CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,
};
struct BlasHandle;
using cublasHandle_t = BlasHandle*;

// cuFFT (cufft.h).
enum cufftResult {
  CUFFT_SUCCESS = 0x0,
  CUFFT_INVALID_PLAN = 0x1,
  CUFFT_ALLOC_FAILED = 0x2,
  CUFFT_INVALID_TYPE = 0x3,
  CUFFT_INVALID_VALUE = 0x4,
  CUFFT_INTERNAL_ERROR = 0x5,
  CUFFT_EXEC_FAILED = 0x6,
  CUFFT_SETUP_FAILED = 0x7,
  CUFFT_INVALID_SIZE = 0x8,
  CUFFT_UNALIGNED_DATA = 0x9,
  CUFFT_INVALID_DEVICE = 0xB,
  CUFFT_NO_WORKSPACE = 0xD,
  CUFFT_NOT_IMPLEMENTED = 0xE,
  CUFFT_NOT_SUPPORTED = 0x10,
};
enum cufftType {
  CUFFT_R2C = 0x2a,
  CUFFT_C2R = 0x2c,
  CUFFT_C2C = 0x29,
  CUFFT_D2Z = 0x6a,
  CUFFT_Z2D = 0x6c,
  CUFFT_Z2Z = 0x69,
};
using cufftHandle = int;
using cufftReal = float;
using cufftDoubleReal = double;
using cufftComplex = cuComplex;
using cufftDoubleComplex = cuDoubleComplex;
constexpr int kCufftForward = -1;  // CUFFT_FORWARD: a macro in cufft.h, one in <dispar/hostlib/CudaNames.h>
constexpr int kCufftInverse = 1;   // CUFFT_INVERSE

}  // namespace dispar::hostlib

#endif  // DISPAR_HOSTLIB_TYPES_H
