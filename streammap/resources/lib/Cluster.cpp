#include "streammap/Cluster.h"

namespace dispar::streammap {

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
