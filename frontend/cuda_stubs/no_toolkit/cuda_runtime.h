// Stand-in for the CUDA toolkit's cuda_runtime.h while the frontend parses a CUDA program without a
// toolkit: the force-included prelude (../dispar_cuda_parse.h) already declares everything it would.
// The build of the program itself uses runtime/include_host_only/cuda_runtime.h instead.
#include "../dispar_cuda_parse.h"
