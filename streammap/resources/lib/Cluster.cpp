#include "streammap/Cluster.h"

#include <cstdio>

namespace dispar::streammap {

std::string formatGiB(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  return text;
}

const char* nodeStatusName(NodeStatus s) {
  switch (s) {
    case NodeStatus::Up: return "up";
    case NodeStatus::Down: return "down";
    case NodeStatus::Drained: return "drained";
  }
  return "up";
}

const char* recordSourceName(RecordSource s) {
  switch (s) {
    case RecordSource::Probe: return "probe";
    case RecordSource::Import: return "import";
  }
  return "probe";
}

}  // namespace dispar::streammap
