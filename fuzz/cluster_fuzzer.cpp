// Fuzzes the cluster-description reader: any input is either refused with a message or read; what is
// read is written and must read back to the same description.
#include "streammap/ClusterJson.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dispar::streammap;
  Cluster cluster;
  std::string error;
  if (!parseClusterJson(std::string(reinterpret_cast<const char*>(data), size), cluster, error)) {
    if (error.empty()) std::abort();
    return 0;
  }
  const std::string written = writeClusterJson(cluster);
  Cluster back;
  if (!parseClusterJson(written, back, error)) {
    std::fprintf(stderr, "written cluster description refused: %s\n%s", error.c_str(), written.c_str());
    std::abort();
  }
  if (writeClusterJson(back) != written) std::abort();
  return 0;
}
