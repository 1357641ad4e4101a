// streammap: resource discovery and task mapping. A thin dispatcher over the streammap libraries.
#include "streammap/CommandLine.h"
#include "streammap/Commands.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace {

using dispar::streammap::Args;

struct Subcommand {
  const char* word;
  int (*run)(const Args&);
  const char* summary;
  bool largeInputs = true;  // reads or writes files of tens of MB: prepareHeapForLargeInputs
};

constexpr Subcommand kSubcommands[] = {
    {"--discover", dispar::streammap::discoverCommand,
     "probe this node (or, with --cluster, every MPI rank's node) into the resource database"},
    // The daemon runs for months on every node and holds little: no 512 MiB heap reservation for it.
    {"daemon", dispar::streammap::daemonCommand, "keep this node's record current (re-probe, heartbeat)", false},
    {"nodes", dispar::streammap::nodesCommand, "list the nodes of the resource database"},
    {"node", dispar::streammap::nodeCommand, "drain or resume a node"},
    {"cluster", dispar::streammap::clusterCommand, "import or export a cluster description"},
    {"map", dispar::streammap::mapCommand, "place an RTG's vertices on nodes and write the machinefile"},
    {"check", dispar::streammap::checkCommand, "check a mapping against the current resources and the binary"},
    {"run", dispar::streammap::runCommand, "map if needed, check, and launch (mpiexec, or srun under Slurm)"},
    {"simulate", dispar::streammap::simulateCommand,
     "run a program built with --target smpi on a simulated cluster (SimGrid)"},
    {"sbatch", dispar::streammap::sbatchCommand, "map for a Slurm batch job and write its script"},
    {"profile", dispar::streammap::profileCommand,
     "record a run profile in the performance history, or show the measured costs"},
    {"report", dispar::streammap::reportCommand,
     "what a run did: each VNODE's share, the bottleneck and what would help (HTML or text)"},
};

void printUsage(std::FILE* out) {
  std::fprintf(out, "usage: streammap <command> [options]\n\ncommands:\n");
  for (const Subcommand& s : kSubcommands) std::fprintf(out, "  %-12s %s\n", s.word, s.summary);
  std::fprintf(out, "\n'streammap <command> --help' describes a command's options; 'streammap --version' prints the "
                    "version.\n");
}

}  // namespace

int main(int argc, char** argv) {
  using dispar::streammap::kExitUsage;
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    printUsage(argc < 2 ? stderr : stdout);
    return argc < 2 ? kExitUsage : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("streammap %s\n", dispar::streammap::streammapVersion());
    return 0;
  }
  for (const Subcommand& s : kSubcommands) {
    if (std::strcmp(argv[1], s.word) != 0) continue;
    if (s.largeInputs) dispar::streammap::prepareHeapForLargeInputs();
    return s.run(Args(argv + 2, argv + argc));
  }
  std::fprintf(stderr, "streammap: error: unknown command '%s'\n", argv[1]);
  printUsage(stderr);
  return kExitUsage;
}
