// Stand-in for the CUDA toolkit's cooperative_groups.h in host-only builds (no toolkit): the host
// path's cooperative groups under CUDA's namespace name (StreamCC also rewrites every use in a host
// clone to ::dispar::hostk::cooperative_groups).
#ifndef DISPAR_HOST_ONLY_COOPERATIVE_GROUPS_H
#define DISPAR_HOST_ONLY_COOPERATIVE_GROUPS_H
#include <dispar/cuda_shim.h>
#include <dispar/hostk/CooperativeGroups.h>
namespace cooperative_groups = ::dispar::hostk::cooperative_groups;
#endif
