#include "Machines.h"

#include "MpiCheck.h"

#include <dispar/dispar.h>

#include <climits>
#include <cstring>
#include <string>
#include <unistd.h>

namespace dispar::rt {

std::vector<int> machineLeaders() {
  constexpr std::size_t kName = HOST_NAME_MAX + 1;
  char mine[kName] = {};
#ifdef DISPAR_TARGET_SMPI
  // A simulated rank's machine is its host in the simulated platform.
  std::strncpy(mine, node_name().c_str(), kName - 1);
#else
  if (::gethostname(mine, kName - 1) != 0) std::strcpy(mine, "unknown");
#endif
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<char> names(static_cast<std::size_t>(size) * kName);
  DISPAR_MPI(MPI_Allgather, mine, static_cast<int>(kName), MPI_CHAR, names.data(), static_cast<int>(kName), MPI_CHAR,
             MPI_COMM_WORLD);
  std::vector<int> leaders(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    const char* name = names.data() + static_cast<std::size_t>(r) * kName;
    int first = 0;
    while (std::strncmp(names.data() + static_cast<std::size_t>(first) * kName, name, kName) != 0) ++first;
    leaders[static_cast<std::size_t>(r)] = first;
  }
  return leaders;
}

}  // namespace dispar::rt
