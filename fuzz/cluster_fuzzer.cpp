// Fuzzes the cluster-description reader: the readers' round trip (RoundTrip.h).
#include "streammap/ClusterJson.h"

#include "RoundTrip.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return dispar::fuzz::checkRoundTrip<dispar::streammap::Cluster>(
      data, size, "cluster description",
      [](const std::string& text, dispar::streammap::Cluster& out, std::string& error) {
        return dispar::streammap::parseClusterJson(text, out, error);
      },
      [](const dispar::streammap::Cluster& value) { return dispar::streammap::writeClusterJson(value); });
}
