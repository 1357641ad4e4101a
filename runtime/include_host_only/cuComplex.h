// Stand-in for the CUDA toolkit's cuComplex.h in host-only builds (no toolkit): the cuBLAS / cuFFT names over
// the host stand-ins of dispar_hostlib (docs/libraries.md).
#ifndef DISPAR_HOST_ONLY_CUCOMPLEX_H
#define DISPAR_HOST_ONLY_CUCOMPLEX_H
#include <dispar/cuda_shim.h>
#include <dispar/hostlib/CudaNames.h>
#endif
