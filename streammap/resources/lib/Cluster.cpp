#include "streammap/Cluster.h"

#include <cctype>
#include <cstdio>
#include <utility>

namespace dispar::streammap {

bool checkNodeLimits(const NodeInfo& node, std::string& why) {
  const auto beyond = [&why](const std::string& field, std::uint64_t value, std::uint64_t limit) {
    why = field + " " + std::to_string(value) + " is beyond the limit of " + std::to_string(limit);
    return false;
  };
  if (node.cores < 1 || node.threads < 1 || node.sockets < 1) {
    why = "a node needs at least one socket, core and hardware thread";
    return false;
  }
  if (node.threads > NodeLimits::kMaxHardwareThreads)
    return beyond("threads", static_cast<std::uint64_t>(node.threads), NodeLimits::kMaxHardwareThreads);
  if (node.cores > node.threads) {
    why = "fewer hardware threads than cores";
    return false;
  }
  if (node.sockets > NodeLimits::kMaxSockets)
    return beyond("sockets", static_cast<std::uint64_t>(node.sockets), NodeLimits::kMaxSockets);
  if (node.memoryBytes > NodeLimits::kMaxMemoryBytes)
    return beyond("memory_bytes", node.memoryBytes, NodeLimits::kMaxMemoryBytes);
  if (node.gpus.size() > static_cast<std::size_t>(NodeLimits::kMaxGpus))
    return beyond("GPU count", node.gpus.size(), NodeLimits::kMaxGpus);
  for (const GpuInfo& gpu : node.gpus) {
    if (gpu.index < 0) {
      why = "GPU index " + std::to_string(gpu.index) + " is negative";
      return false;
    }
    if (gpu.index >= NodeLimits::kMaxGpus)
      return beyond("GPU index", static_cast<std::uint64_t>(gpu.index), NodeLimits::kMaxGpus - 1);
    if (gpu.memoryBytes > NodeLimits::kMaxMemoryBytes)
      return beyond("GPU " + std::to_string(gpu.index) + " memory_bytes", gpu.memoryBytes, NodeLimits::kMaxMemoryBytes);
  }
  for (const auto& [field, seconds] :
       {std::pair{"latency_s", node.latencySeconds}, std::pair{"rank_latency_s", node.rankLatencySeconds},
        std::pair{"thread_latency_s", node.threadLatencySeconds}})
    if (seconds && !(*seconds > 0 && *seconds <= NodeLimits::kMaxLatencySeconds)) {
      char shown[32];
      std::snprintf(shown, sizeof shown, "%g", *seconds);
      why = std::string(field) + " " + shown + " is not a latency (more than 0, at most 1 s)";
      return false;
    }
  return true;
}

bool checkHostName(const std::string& name, std::string& why) {
  const auto alnum = [](unsigned char c) { return std::isalnum(c) != 0 && c < 0x80; };
  if (name.empty()) {
    why = "empty host name";
    return false;
  }
  if (name.size() > 253) {
    why = "host name '" + escapedForDisplay(name.substr(0, 40)) + "...' is longer than 253 characters";
    return false;
  }
  for (unsigned char c : name)
    if (!alnum(c) && c != '.' && c != '-' && c != '_') {
      why = "host name '" + escapedForDisplay(name) + "' has '" +
            escapedForDisplay(std::string(1, static_cast<char>(c))) +
            "': only letters, digits, '.', '-' and '_' are allowed";
      return false;
    }
  if (!alnum(static_cast<unsigned char>(name[0]))) {
    why = "host name '" + escapedForDisplay(name) + "' must start with a letter or a digit";
    return false;
  }
  return true;
}

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
