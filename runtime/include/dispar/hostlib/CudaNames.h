// The global cuBLAS and cuFFT names (cublas_v2.h, cufft.h) for builds without the CUDA toolkit: each
// type and enumerator names its dispar::hostlib counterpart, each call of Cublas.def / Cufft.def is a
// global function that forwards to the host stand-in. Included by the host-only build's cublas_v2.h and
// cufft.h stand-ins (runtime/include_host_only/) and by the frontend's parse prelude; include after the
// global vector types (<dispar/cuda_shim.h> or the prelude). With the toolkit its headers are used.
#ifndef DISPAR_HOSTLIB_CUDA_NAMES_H
#define DISPAR_HOSTLIB_CUDA_NAMES_H

#include <dispar/hostlib/Complex.h>
#include <dispar/hostlib/StandIns.h>

#include <cstddef>

// cuBLAS.
using cublasStatus_t = ::dispar::hostlib::cublasStatus_t;
using cublasFillMode_t = ::dispar::hostlib::cublasFillMode_t;
using cublasDiagType_t = ::dispar::hostlib::cublasDiagType_t;
using cublasSideMode_t = ::dispar::hostlib::cublasSideMode_t;
using cublasOperation_t = ::dispar::hostlib::cublasOperation_t;
using cublasPointerMode_t = ::dispar::hostlib::cublasPointerMode_t;
using cublasMath_t = ::dispar::hostlib::cublasMath_t;
using cublasHandle_t = ::dispar::hostlib::cublasHandle_t;
using ::dispar::hostlib::CUBLAS_DEFAULT_MATH;
using ::dispar::hostlib::CUBLAS_DIAG_NON_UNIT;
using ::dispar::hostlib::CUBLAS_DIAG_UNIT;
using ::dispar::hostlib::CUBLAS_FILL_MODE_FULL;
using ::dispar::hostlib::CUBLAS_FILL_MODE_LOWER;
using ::dispar::hostlib::CUBLAS_FILL_MODE_UPPER;
using ::dispar::hostlib::CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
using ::dispar::hostlib::CUBLAS_OP_C;
using ::dispar::hostlib::CUBLAS_OP_CONJG;
using ::dispar::hostlib::CUBLAS_OP_HERMITAN;
using ::dispar::hostlib::CUBLAS_OP_N;
using ::dispar::hostlib::CUBLAS_OP_T;
using ::dispar::hostlib::CUBLAS_PEDANTIC_MATH;
using ::dispar::hostlib::CUBLAS_POINTER_MODE_DEVICE;
using ::dispar::hostlib::CUBLAS_POINTER_MODE_HOST;
using ::dispar::hostlib::CUBLAS_SIDE_LEFT;
using ::dispar::hostlib::CUBLAS_SIDE_RIGHT;
using ::dispar::hostlib::CUBLAS_STATUS_ALLOC_FAILED;
using ::dispar::hostlib::CUBLAS_STATUS_ARCH_MISMATCH;
using ::dispar::hostlib::CUBLAS_STATUS_EXECUTION_FAILED;
using ::dispar::hostlib::CUBLAS_STATUS_INTERNAL_ERROR;
using ::dispar::hostlib::CUBLAS_STATUS_INVALID_VALUE;
using ::dispar::hostlib::CUBLAS_STATUS_LICENSE_ERROR;
using ::dispar::hostlib::CUBLAS_STATUS_MAPPING_ERROR;
using ::dispar::hostlib::CUBLAS_STATUS_NOT_INITIALIZED;
using ::dispar::hostlib::CUBLAS_STATUS_NOT_SUPPORTED;
using ::dispar::hostlib::CUBLAS_STATUS_SUCCESS;
using ::dispar::hostlib::CUBLAS_TENSOR_OP_MATH;
using ::dispar::hostlib::CUBLAS_TF32_TENSOR_OP_MATH;

// cuFFT.
using cufftResult = ::dispar::hostlib::cufftResult;
using cufftType = ::dispar::hostlib::cufftType;
using cufftHandle = ::dispar::hostlib::cufftHandle;
using cufftReal = float;
using cufftDoubleReal = double;
using cufftComplex = cuComplex;
using cufftDoubleComplex = cuDoubleComplex;
using ::dispar::hostlib::CUFFT_ALLOC_FAILED;
using ::dispar::hostlib::CUFFT_C2C;
using ::dispar::hostlib::CUFFT_C2R;
using ::dispar::hostlib::CUFFT_D2Z;
using ::dispar::hostlib::CUFFT_EXEC_FAILED;
using ::dispar::hostlib::CUFFT_INTERNAL_ERROR;
using ::dispar::hostlib::CUFFT_INVALID_DEVICE;
using ::dispar::hostlib::CUFFT_INVALID_PLAN;
using ::dispar::hostlib::CUFFT_INVALID_SIZE;
using ::dispar::hostlib::CUFFT_INVALID_TYPE;
using ::dispar::hostlib::CUFFT_INVALID_VALUE;
using ::dispar::hostlib::CUFFT_NO_WORKSPACE;
using ::dispar::hostlib::CUFFT_NOT_IMPLEMENTED;
using ::dispar::hostlib::CUFFT_NOT_SUPPORTED;
using ::dispar::hostlib::CUFFT_R2C;
using ::dispar::hostlib::CUFFT_SETUP_FAILED;
using ::dispar::hostlib::CUFFT_SUCCESS;
using ::dispar::hostlib::CUFFT_UNALIGNED_DATA;
using ::dispar::hostlib::CUFFT_Z2D;
using ::dispar::hostlib::CUFFT_Z2Z;
#define CUFFT_FORWARD -1
#define CUFFT_INVERSE 1

// The calls: forwarded to the stand-ins. Parameters are this file's global names (a stream is the
// includer's cudaStream_t).
#define DISPAR_CUBLAS_API(name, family, parameters, arguments)                                                         \
  inline cublasStatus_t name parameters { return DISPAR_HOSTLIB_FORWARD(host_##name, arguments); }
#include <dispar/hostlib/Cublas.def>
#define DISPAR_CUFFT_API(name, parameters, arguments)                                                                  \
  inline cufftResult name parameters { return DISPAR_HOSTLIB_FORWARD(host_##name, arguments); }
#include <dispar/hostlib/Cufft.def>

#endif  // DISPAR_HOSTLIB_CUDA_NAMES_H
