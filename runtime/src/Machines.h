// Which ranks of the job share a machine: for the GPU a rank picks (its position among its machine's
// ranks), for whether a machine runs more instances than it has processors, and for the run trace's clock
// (one steady clock per machine).
#ifndef DISPAR_RUNTIME_MACHINES_H
#define DISPAR_RUNTIME_MACHINES_H

#include <vector>

namespace dispar::rt {

/// Per rank of MPI_COMM_WORLD, the lowest rank on the same machine, by host name (gethostname: the machine
/// itself, not a launcher's name for it, so that made-up hosts of MPICH's fork launcher are one machine;
/// under SMPI the simulated host).
/// Collective: one MPI_Allgather. It replaces MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), which took 50 ms
/// a call under MPICH with four ranks on two cores, every run.
std::vector<int> machineLeaders();

}  // namespace dispar::rt

#endif  // DISPAR_RUNTIME_MACHINES_H
