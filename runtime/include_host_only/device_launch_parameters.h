// Stand-in for the CUDA toolkit's device_launch_parameters.h in host-only builds (no toolkit): the host path's names.
#include <dispar/cuda_shim.h>
