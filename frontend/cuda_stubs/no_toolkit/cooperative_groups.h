// Stand-in for the CUDA toolkit's cooperative_groups.h while the frontend parses a CUDA program without
// a toolkit: the host path's cooperative groups (declared by the force-included prelude) under CUDA's
// namespace name. The build of the program uses runtime/include_host_only/cooperative_groups.h.
#ifndef DISPAR_PARSE_COOPERATIVE_GROUPS_H
#define DISPAR_PARSE_COOPERATIVE_GROUPS_H
#include "../dispar_cuda_parse.h"
namespace cooperative_groups = ::dispar::hostk::cooperative_groups;

// What the toolkit has and the host path does not (grid, cluster and coalesced groups, block tile
// memory): declared here, for the parse only, so that the frontend reports each use by name as it does
// with a toolkit, rather than Clang reporting an unknown name. Nothing here is ever compiled.
#pragma clang force_cuda_host_device begin
namespace dispar::hostk::cooperative_groups {
class grid_group {
 public:
  void sync() const;
  unsigned long long thread_rank() const;
  unsigned long long size() const;
  unsigned long long num_threads() const;
  bool is_valid() const;
};
grid_group this_grid();
class cluster_group {
 public:
  void sync() const;
  unsigned thread_rank() const;
  unsigned num_threads() const;
};
cluster_group this_cluster();
class coalesced_group {
 public:
  void sync() const;
  unsigned long long thread_rank() const;
  unsigned long long size() const;
  unsigned long long num_threads() const;
  template <class T>
  T shfl(T var, unsigned srcRank) const;
  unsigned ballot(int predicate) const;
};
coalesced_group coalesced_threads();
template <class Group>
coalesced_group labeled_partition(const Group& parent, int label);
template <class Group>
coalesced_group binary_partition(const Group& parent, bool predicate);
template <unsigned MaxBlockSize = 1024, unsigned TileCommunicationSize = 8, unsigned MaxTreeDepth = 2>
struct block_tile_memory {};
template <unsigned MaxBlockSize, unsigned TileCommunicationSize, unsigned MaxTreeDepth>
thread_block this_thread_block(block_tile_memory<MaxBlockSize, TileCommunicationSize, MaxTreeDepth>& scratch);
}  // namespace dispar::hostk::cooperative_groups
#pragma clang force_cuda_host_device end
#endif
