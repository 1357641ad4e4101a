// Stand-in for the CUDA toolkit's cooperative_groups.h while the frontend parses a CUDA program without
// a toolkit: the host path's cooperative groups (declared by the force-included prelude) under CUDA's
// namespace name. The build of the program uses runtime/include_host_only/cooperative_groups.h.
#ifndef DISPAR_PARSE_COOPERATIVE_GROUPS_H
#define DISPAR_PARSE_COOPERATIVE_GROUPS_H
#include "../dispar_cuda_parse.h"
namespace cooperative_groups = ::dispar::hostk::cooperative_groups;

// What the toolkit has and the host path does not (cluster groups, block tile memory): declared here, for
// the parse only, so that the frontend reports each use by name as it does with a toolkit, rather than
// Clang reporting an unknown name. Nothing here is ever compiled.
#pragma clang force_cuda_host_device begin
namespace dispar::hostk::cooperative_groups {
class cluster_group {
 public:
  void sync() const;
  unsigned thread_rank() const;
  unsigned num_threads() const;
};
cluster_group this_cluster();
template <unsigned MaxBlockSize = 1024, unsigned TileCommunicationSize = 8, unsigned MaxTreeDepth = 2>
struct block_tile_memory {};
template <unsigned MaxBlockSize, unsigned TileCommunicationSize, unsigned MaxTreeDepth>
thread_block this_thread_block(block_tile_memory<MaxBlockSize, TileCommunicationSize, MaxTreeDepth>& scratch);
}  // namespace dispar::hostk::cooperative_groups
#pragma clang force_cuda_host_device end
#endif
