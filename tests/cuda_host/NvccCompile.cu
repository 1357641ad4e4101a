// Compile-only check (ctest hostk_nvcc_compile): <dispar/hostk.h> and <dispar/cuda_shim.h> coexist with
// the CUDA toolkit's headers under nvcc, and launch() accepts CUDA's own ::dim3.
#include <dispar/cuda_shim.h>
#include <dispar/hostk.h>

__global__ void fill(float* p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }

void host_fill(float* p) {
  p[::dispar::hostk::blockIdx().x * ::dispar::hostk::blockDim().x + ::dispar::hostk::threadIdx().x] = 1.0f;
}

int launchBoth(float* p, bool onHost) {
  dim3 grid(2), block(32);
  if (onHost) return static_cast<int>(::dispar::hostk::launch(grid, block, 0, &host_fill, p));
  fill<<<grid, block>>>(p);
  return static_cast<int>(cudaGetLastError());
}
