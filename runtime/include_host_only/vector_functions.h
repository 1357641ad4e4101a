// Stand-in for the CUDA toolkit's vector_functions.h in host-only builds (no toolkit): the host path's names.
#include <dispar/cuda_shim.h>
