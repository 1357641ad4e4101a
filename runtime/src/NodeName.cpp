#include <dispar/dispar.h>

#include <climits>
#include <cstdlib>
#include <unistd.h>

namespace dispar {

std::string node_name() {
  // Launchers that know the node by a name of their own say so; the first set wins.
  for (const char* variable : {"SLURMD_NODENAME", "MPIR_CVAR_CH3_INTERFACE_HOSTNAME"})
    if (const char* name = std::getenv(variable); name != nullptr && *name != '\0') return name;
  char buffer[HOST_NAME_MAX + 1] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

}  // namespace dispar
