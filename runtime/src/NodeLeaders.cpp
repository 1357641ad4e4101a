#include "NodeLeaders.h"

#include "MpiCheck.h"

#include <dispar/dispar.h>

#include <climits>
#include <cstring>
#include <string>

namespace dispar::rt {

std::vector<int> nodeLeaders() {
  constexpr std::size_t kName = HOST_NAME_MAX + 1;
  char mine[kName] = {};
  std::strncpy(mine, node_name().c_str(), kName - 1);
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
