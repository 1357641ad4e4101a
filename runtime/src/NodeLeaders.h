// Which ranks of the job share a node: for the GPU a rank picks (its position among its node's ranks), for
// whether a node runs more instances than it has processors, for the run trace's clock (one steady clock
// per node), and for naming a rank's node in the heartbeat's report (Stall.h).
#ifndef DISPAR_RUNTIME_NODELEADERS_H
#define DISPAR_RUNTIME_NODELEADERS_H

#include <string>
#include <vector>

namespace dispar::rt {

/// Per rank of MPI_COMM_WORLD, its node by dispar::node_name(): the launcher's name for the node where it
/// gives one (Slurm's, MPICH's hydra's), so that made-up hosts of MPICH's fork launcher are nodes of their
/// own, as MPICH's shared-memory split made them; under SMPI the simulated host. Collective: one
/// MPI_Allgather. It replaces MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), which took 50 ms a call under
/// MPICH with four ranks on two cores, every run.
std::vector<std::string> gatherNodeNames();

/// Per rank, the lowest rank on the same node (`names`: gatherNodeNames()).
std::vector<int> nodeLeaders(const std::vector<std::string>& names);

}  // namespace dispar::rt

#endif  // DISPAR_RUNTIME_NODELEADERS_H
