// Entry points of the streammap subcommands. Each takes the arguments after the subcommand word
// (for `--discover`, the arguments after `--discover`) and returns the process exit status.
#ifndef STREAMMAP_COMMANDS_H
#define STREAMMAP_COMMANDS_H

#include <string>
#include <vector>

namespace dispar::streammap {

using Args = std::vector<std::string>;

// Resources (streammap/resources).
int discoverCommand(const Args& args);  // streammap --discover [--cluster] [--db PATH]
int daemonCommand(const Args& args);    // streammap daemon ...
int nodesCommand(const Args& args);     // streammap nodes [--json]
int nodeCommand(const Args& args);      // streammap node drain|resume HOST
int clusterCommand(const Args& args);   // streammap cluster import FILE | export

// Mapping (streammap/mapping).
int mapCommand(const Args& args);       // streammap map app.rtg.json -o app.machinefile ...
int checkCommand(const Args& args);     // streammap check app.map.json
int runCommand(const Args& args);       // streammap run ./app [args]
int simulateCommand(const Args& args);  // streammap simulate ./app.smpi --cluster FILE.json [args]
int sbatchCommand(const Args& args);    // streammap sbatch app.rtg.json -o app.sbatch
int profileCommand(const Args& args);   // streammap profile add FILE | show [PROGRAM]
int reportCommand(const Args& args);    // streammap report ./app [--trace FILE]

/// Process set-up for the commands that read or write large files, called by main before them (not
/// before the daemon: this reserves 512 MiB of address space for the heap up front). Large inputs (a
/// 40 MB RTG, a 30 MB map.json) make and drop buffers of tens of MB: glibc would map and unmap each above
/// its mmap threshold, so that the next one is faulted in page by page again; freed memory stays in the
/// heap for reuse instead. And the heap is backed by transparent huge pages where the kernel offers them:
/// a 100,000-vertex `streammap map` otherwise spends a quarter of its time in 47,000 page faults.
void prepareHeapForLargeInputs();

}  // namespace dispar::streammap

#endif
