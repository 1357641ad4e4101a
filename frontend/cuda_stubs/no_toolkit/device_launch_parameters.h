// Stand-in for the CUDA toolkit's device_launch_parameters.h while the frontend parses a CUDA program without a
// toolkit: the force-included prelude (../dispar_cuda_parse.h) already declares what it would.
#include "../dispar_cuda_parse.h"
