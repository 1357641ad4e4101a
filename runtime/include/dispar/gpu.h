// <dispar/gpu.h>: what the code StreamCC generates for a CG VNODE includes. device_vector in every
// build; in a build with the CUDA runtime (nvcc, or cuda_runtime.h included first) the dispatchers
// ::dispar::gpu::cudaXxx and CudaBackend; without it, checkLaunch over the hostk stand-ins.
#ifndef DISPAR_GPU_H
#define DISPAR_GPU_H

#include <dispar/device_vector.h>
#include <dispar/dispar.h>
#include <dispar/gpu/Errors.h>
#include <dispar/gpu/LaunchTimer.h>

#if defined(__CUDACC__) || defined(__CUDA_RUNTIME_H__)
#include <dispar/gpu/CudaBackend.h>
#include <dispar/gpu/RuntimeDispatch.h>
#else
#include <dispar/hostk.h>

namespace dispar::gpu {
/// Called by generated code after a kernel launch; every launch runs on the host in this build.
inline void checkLaunch(const char* kernel, const char* location) {
  const hostk::cudaError_t error = hostk::cudaGetLastError();
  if (error != hostk::cudaSuccess)
    throw CudaError(describeLaunchFailure(kernel, location, hostk::cudaGetErrorString(error)));
}
}  // namespace dispar::gpu
#endif

#endif  // DISPAR_GPU_H
