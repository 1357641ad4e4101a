// The ::dispar::gpu cuBLAS / cuFFT dispatchers against the real cublas_v2.h and cufft.h, on the host path
// (no device active): they reach the stand-ins with CUDA's own types. And the loader GPU ranks use for
// the real libraries: it finds the toolkit's, and names the library and symbol when it cannot.
#include <cuda_runtime.h>
#include <dispar/gpu.h>
#include <dispar/gpu/LibraryDispatch.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

namespace gpu = dispar::gpu;

TEST(LibraryDispatch, CublasOnTheHostPathTakesCudasTypes) {
  ASSERT_TRUE(gpu::onHost());
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(gpu::cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  // C (2x2) = A^T B with A, B 2x2 column-major.
  const std::vector<double> a{1, 2, 3, 4}, b{5, 6, 7, 8};
  std::vector<double> c(4, 0);
  const double one = 1, zero = 0;
  ASSERT_EQ(
      gpu::cublasDgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 2, &one, a.data(), 2, b.data(), 2, &zero, c.data(), 2),
      CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(c, (std::vector<double>{1 * 5 + 2 * 6, 3 * 5 + 4 * 6, 1 * 7 + 2 * 8, 3 * 7 + 4 * 8}));
  std::vector<cuComplex> x{make_cuComplex(3, 4), make_cuComplex(0, 1)};
  float norm = 0;
  ASSERT_EQ(gpu::cublasScnrm2(handle, 2, x.data(), 1, &norm), CUBLAS_STATUS_SUCCESS);
  EXPECT_FLOAT_EQ(norm, std::sqrt(26.0f));
  cudaStream_t stream = nullptr, got = nullptr;
  ASSERT_EQ(gpu::cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(gpu::cublasSetStream(handle, stream), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(gpu::cublasGetStream(handle, &got), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(got, stream);
  EXPECT_EQ(gpu::cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(
      gpu::cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 4, 2, 2, &one, a.data(), 2, b.data(), 2, &zero, c.data(), 4),
      CUBLAS_STATUS_INVALID_VALUE);  // lda 2 < m 4: the status is CUDA's enum value
  EXPECT_EQ(gpu::cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
}

TEST(LibraryDispatch, CufftOnTheHostPathTakesCudasTypes) {
  cufftHandle plan;
  ASSERT_EQ(gpu::cufftPlan1d(&plan, 4, CUFFT_C2C, 1), CUFFT_SUCCESS);
  std::vector<cufftComplex> data{make_cuComplex(1, 0), make_cuComplex(0, 0), make_cuComplex(0, 0),
                                 make_cuComplex(0, 0)};
  ASSERT_EQ(gpu::cufftExecC2C(plan, data.data(), data.data(), CUFFT_FORWARD), CUFFT_SUCCESS);
  for (const cufftComplex& v : data) {  // the transform of an impulse is flat
    EXPECT_FLOAT_EQ(v.x, 1);
    EXPECT_FLOAT_EQ(v.y, 0);
  }
  EXPECT_EQ(gpu::cufftDestroy(plan), CUFFT_SUCCESS);
  EXPECT_EQ(gpu::cufftDestroy(plan), CUFFT_INVALID_PLAN);
}

TEST(LibraryLoader, FindsTheToolkitsLibrariesWithoutADriver) {
  EXPECT_NE(gpu::loadLibrarySymbol(gpu::GpuLibrary::Cublas, "13", "cublasSgemm_v2"), nullptr);
  EXPECT_NE(gpu::loadLibrarySymbol(gpu::GpuLibrary::Cufft, "12", "cufftExecC2C"), nullptr);
}

TEST(LibraryLoader, MissingSymbolOrLibraryIsAnErrorNamingIt) {
  try {
    gpu::loadLibrarySymbol(gpu::GpuLibrary::Cublas, "13", "cublasNoSuchCall");
    ADD_FAILURE() << "no error";
  } catch (const gpu::CudaError& error) {
    EXPECT_NE(std::string(error.what()).find("cuBLAS on host '"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("has no 'cublasNoSuchCall'"), std::string::npos) << error.what();
  }
}

}  // namespace
