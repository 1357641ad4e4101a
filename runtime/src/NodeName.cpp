#include <dispar/dispar.h>

#include <climits>
#include <cstdlib>
#include <unistd.h>

#ifdef DISPAR_TARGET_SMPI
#include <mpi.h>
#endif

namespace dispar {

std::string node_name() {
#ifdef DISPAR_TARGET_SMPI
  // A simulated rank runs on a host of the simulated platform, whatever machine runs the simulator.
  char simulated[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  if (MPI_Get_processor_name(simulated, &length) == MPI_SUCCESS && length > 0) return std::string(simulated, length);
#endif
  // Launchers that know the node by a name of their own say so; the first set wins.
  for (const char* variable : {"SLURMD_NODENAME", "MPIR_CVAR_CH3_INTERFACE_HOSTNAME"})
    if (const char* name = std::getenv(variable); name != nullptr && *name != '\0') return name;
  char buffer[HOST_NAME_MAX + 1] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

}  // namespace dispar
