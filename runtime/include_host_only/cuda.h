// Stand-in for the CUDA toolkit's cuda.h in host-only builds (no toolkit): disparcc puts this
// folder on the include path so a VNODE's `#include <cuda.h>` finds the host stand-ins.
#ifndef DISPAR_HOST_ONLY_CUDA_H
#define DISPAR_HOST_ONLY_CUDA_H
#include <dispar/cuda_shim.h>
#endif
