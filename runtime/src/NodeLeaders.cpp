#include "NodeLeaders.h"

#include "MpiCheck.h"

#include <dispar/dispar.h>

#include <climits>
#include <cstring>
#include <map>

namespace dispar::rt {

std::vector<std::string> gatherNodeNames() {
  constexpr std::size_t kName = HOST_NAME_MAX + 1;
  char mine[kName] = {};
  std::strncpy(mine, node_name().c_str(), kName - 1);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<char> gathered(static_cast<std::size_t>(size) * kName);
  DISPAR_MPI(MPI_Allgather, mine, static_cast<int>(kName), MPI_CHAR, gathered.data(), static_cast<int>(kName), MPI_CHAR,
             MPI_COMM_WORLD);
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    const char* name = gathered.data() + static_cast<std::size_t>(r) * kName;
    names.emplace_back(name, strnlen(name, kName));
  }
  return names;
}

std::vector<int> nodeLeaders(const std::vector<std::string>& names) {
  std::map<std::string, int> firstOn;
  std::vector<int> leaders;
  leaders.reserve(names.size());
  for (std::size_t r = 0; r < names.size(); ++r)
    leaders.push_back(firstOn.emplace(names[r], static_cast<int>(r)).first->second);
  return leaders;
}

}  // namespace dispar::rt
