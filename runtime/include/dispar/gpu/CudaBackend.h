// dispar::gpu::CudaBackend: the device backend of programs compiled with nvcc. It gives each CG rank
// the GPU the mapping chose (docs/gpu-runtime.md, "Device selection"), checks that the program has
// kernels for it, and moves device-memory messages through pinned buffers. Defined in dispar_gpu
// (built only with a CUDA toolkit).
#ifndef DISPAR_GPU_CUDABACKEND_H
#define DISPAR_GPU_CUDABACKEND_H

#include <dispar/gpu/Device.h>

#include <cstddef>
#include <string>
#include <vector>

namespace dispar::gpu {

class CudaBackend final : public DeviceBackend {
 public:
  /// `compiledArchs`: the code images the program's kernels were compiled to, as nvcc names them
  /// ({"sm_80", "sm_90", "compute_90"}).
  CudaBackend(const char* const* compiledArchs, std::size_t count);
  template <std::size_t N>
  explicit CudaBackend(const char* const (&compiledArchs)[N]) : CudaBackend(compiledArchs, N) {}

  std::unique_ptr<Device> start(const RankInfo& rank) const override;

 private:
  std::vector<std::string> compiledArchs_;
};

}  // namespace dispar::gpu

#endif  // DISPAR_GPU_CUDABACKEND_H
