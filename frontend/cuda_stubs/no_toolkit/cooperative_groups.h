// Stand-in for the CUDA toolkit's cooperative_groups.h while the frontend parses a CUDA program without
// a toolkit: the host path's cooperative groups (declared by the force-included prelude) under CUDA's
// namespace name. The build of the program uses runtime/include_host_only/cooperative_groups.h.
#ifndef DISPAR_PARSE_COOPERATIVE_GROUPS_H
#define DISPAR_PARSE_COOPERATIVE_GROUPS_H
#include "../dispar_cuda_parse.h"
namespace cooperative_groups = ::dispar::hostk::cooperative_groups;
#endif
