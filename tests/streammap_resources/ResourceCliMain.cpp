// Test driver: the resources subcommands of streammap, dispatched the same way as tools/streammap, for
// tests that must run while the mapping half is not linked in.
#include "streammap/Commands.h"

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  using namespace dispar::streammap;
  struct Entry {
    const char* word;
    int (*run)(const Args&);
  };
  const Entry kCommands[] = {{"--discover", discoverCommand},
                             {"daemon", daemonCommand},
                             {"nodes", nodesCommand},
                             {"node", nodeCommand},
                             {"cluster", clusterCommand}};
  if (argc >= 2)
    for (const Entry& e : kCommands)
      if (!std::strcmp(argv[1], e.word)) return e.run(Args(argv + 2, argv + argc));
  std::fprintf(stderr, "usage: streammap_resources_cli --discover|daemon|nodes|node|cluster ...\n");
  return 1;
}
