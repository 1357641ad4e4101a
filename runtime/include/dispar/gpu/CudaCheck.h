// DISPAR_CUDA(call): the one checked-call macro for CUDA runtime calls made by DISPAR itself. A failure
// throws CudaError naming the call, the file, the line and cudaGetErrorString. Needs cuda_runtime.h.
#ifndef DISPAR_GPU_CUDACHECK_H
#define DISPAR_GPU_CUDACHECK_H

#include <cuda_runtime.h>
#include <dispar/gpu/Errors.h>

#include <string>

namespace dispar::gpu {

[[noreturn]] inline void throwCudaFailure(cudaError_t code, const char* call, const char* file, int line) {
  throw CudaError(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                  cudaGetErrorString(code) + " (" + cudaGetErrorName(code) + ")");
}

inline void checkCuda(cudaError_t code, const char* call, const char* file, int line) {
  if (code != cudaSuccess) throwCudaFailure(code, call, file, line);
}

}  // namespace dispar::gpu

#define DISPAR_CUDA(call) ::dispar::gpu::checkCuda((call), #call, __FILE__, __LINE__)

#endif  // DISPAR_GPU_CUDACHECK_H
