// The ranks of a "dispar-map" file (written by `streammap map`, docs/streammap.md "File formats"): which
// instances each rank runs, on which host and GPU. Only what a running program needs is read; unknown
// fields are ignored. Part of the runtime library (the grouping) and used by the GPU backend.
#ifndef DISPAR_GPU_MAPFILE_H
#define DISPAR_GPU_MAPFILE_H

#include "dispar_lang/MapRank.h"

#include <optional>
#include <string>
#include <vector>

namespace dispar::gpu {

/// A rank as streammap wrote it (dispar_lang/MapRank.h: the record and its one reader).
using MappedRank = lang::MapRank;

struct MapFile {
  std::string path;               // where it was read from, for messages
  std::string program;            // the program it maps; empty when the file does not say
  std::vector<MappedRank> ranks;  // one per instance, by rank (lang::checkRankLayout)
  /// Pipes the mapping deals on demand though their source gives no split (lang::readDemandPipes).
  std::vector<std::string> demandPipes;

  /// The entry of `vnode` replica `replica`, or nullptr.
  const MappedRank* instance(const std::string& vnode, int replica) const;
};

/// Parses the text of a map file; `path` names it in messages. Throws std::runtime_error
/// ("mapping file 'x.map.json': ranks[2].device: expected an integer or null").
MapFile parseMapFile(const std::string& text, const std::string& path);

/// Reads and parses `path`; throws std::runtime_error naming the file when it cannot.
MapFile readMapFile(const std::string& path);

/// Where the map file of the running binary is: $DISPAR_MAPPING (`explicitPath`) when set, else
/// `<binary>.map.json` beside the binary. `required` tells whether a missing file is an error.
struct MapFileLocation {
  std::string path;
  bool required = false;
};
MapFileLocation locateMapFile(const char* explicitPath, const std::string& binaryPath);

/// The running binary's map file as locateMapFile finds it ($DISPAR_MAPPING, /proc/self/exe), or
/// nullopt when there is none and none is required. Throws std::runtime_error when it cannot be read.
std::optional<MapFile> loadRunningMapFile();

}  // namespace dispar::gpu

#endif  // DISPAR_GPU_MAPFILE_H
