// Stand-in for the CUDA toolkit's cuda_runtime_api.h in host-only builds (no toolkit): the host path's names.
#include <dispar/cuda_shim.h>
