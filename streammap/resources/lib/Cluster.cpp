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

bool parseNodeStatus(const std::string& word, NodeStatus& out) {
  for (NodeStatus s : {NodeStatus::Up, NodeStatus::Down, NodeStatus::Drained}) {
    if (word == nodeStatusName(s)) {
      out = s;
      return true;
    }
  }
  return false;
}

bool parseRecordSource(const std::string& word, RecordSource& out) {
  for (RecordSource s : {RecordSource::Probe, RecordSource::Import}) {
    if (word == recordSourceName(s)) {
      out = s;
      return true;
    }
  }
  return false;
}

}  // namespace dispar::streammap
