// CUDA's stream, event, managed-memory and array flags as the macros CUDA's driver_types.h defines, for
// builds without the toolkit (<dispar/cuda_shim.h>) and the frontend's parse prelude. The values are
// hostk's constants (RuntimeApi.h), which are CUDA's.
#ifndef DISPAR_HOSTK_FLAGMACROS_H
#define DISPAR_HOSTK_FLAGMACROS_H

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaMemAttachGlobal 0x01
#define cudaMemAttachHost 0x02
#define cudaArrayDefault 0x00
#define cudaArrayLayered 0x01
#define cudaArraySurfaceLoadStore 0x02

#endif  // DISPAR_HOSTK_FLAGMACROS_H
