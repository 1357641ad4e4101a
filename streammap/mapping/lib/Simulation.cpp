#include "streammap/Simulation.h"

#include "streammap/GpuSpeed.h"
#include "streammap/MappingProblem.h"
#include "streammap/NumberFormat.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace dispar::streammap {

namespace {

/// A number as SimGrid's platform parser reads it, with its unit ("4000000000Bps", "1.5e-06s").
std::string withUnit(double value, const char* unit) {
  char text[64];
  std::snprintf(text, sizeof text, "%.12g%s", value, unit);
  return text;
}

/// Host names are checked by checkHostName before they get here (letters, digits, '-', '.', '_').
void host(std::ostringstream& out, const std::string& id, double speed, int cores,
          const std::vector<std::pair<std::string, std::string>>& properties) {
  out << "    <host id=\"" << id << "\" speed=\"" << withUnit(speed, "f") << "\" core=\"" << cores << "\">";
  for (const auto& [name, value] : properties) out << "<prop id=\"" << name << "\" value=\"" << value << "\"/>";
  out << "</host>\n";
}

/// 0 W idle, 1 W with one core busy, `cores` W with all: the energy plugin's Joules are busy core-seconds.
std::string busyCoreWattage(int cores) { return "0:1:" + std::to_string(cores); }

}  // namespace

std::vector<std::string> smpiConfiguration() {
  const std::string pollCall = formatNumber(kPollCallSeconds);
  return {
      // One core of this machine stands for this rate: measured CPU bursts become its flops.
      "--cfg=smpi/host-speed:" + std::to_string(std::llround(kHostPathFlopsPerSecond)) + "f",
      // The simulated time of a probe or test (Simulation.h: SimGrid's default is 100 us).
      "--cfg=smpi/iprobe:" + pollCall,
      "--cfg=smpi/test:" + pollCall,
      // SMPI's MPI_Probe is a loop of MPI_Iprobe, and by default each probe that finds nothing, of any
      // rank, lengthens every later probe by another smpi/iprobe, on one counter for the whole
      // simulation that any successful probe resets: with hundreds of ranks waiting for their first
      // message, a reader slept milliseconds past its message's arrival.
      "--cfg=smpi/grow-injected-times:no",
      // "Simulated time: X seconds.", which parseSimulationLog reads.
      "--cfg=smpi/display-timing:yes",
      // Busy core-seconds per host (1 W per busy core, formatSmpiPlatform).
      "--cfg=plugin:host_energy",
  };
}

std::string formatSmpiPlatform(const Cluster& cluster, const SimulationSettings& settings) {
  std::ostringstream out;
  // DijkstraCache, not Dijkstra: plain Dijkstra searches the graph again for every message, where a perf
  // sample of a 1,000-node simulation found it busiest; the cached routes are the same.

  out << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
         "<!-- Written by streammap simulate (docs/simulation.md). -->\n"
         "<platform version=\"4.1\">\n  <zone id=\"cluster\" routing=\"DijkstraCache\">\n";
  std::vector<const NodeInfo*> nodes;
  for (const NodeInfo& node : cluster.nodes)
    if (node.status == NodeStatus::Up) nodes.push_back(&node);
  for (const NodeInfo* node : nodes) {
    const int cores = node->cores > 0 ? node->cores : 1;
    host(out, node->host, node->cpuSpeed * kHostPathFlopsPerSecond, cores,
         {{"gpu_count", std::to_string(node->gpus.size())},
          {"wattage_per_state", busyCoreWattage(cores)},
          {"wattage_off", "0"}});
    for (std::size_t g = 0; g < node->gpus.size(); ++g)
      host(out, node->host + ".gpu" + std::to_string(g),
           kHostPathFlopsPerSecond * settings.gpuSpeedup * estimateGpuSpeed(node->gpus[g]), 1,
           {{"host_path_speed", withUnit(kHostPathFlopsPerSecond, "")},
            {"wattage_per_state", busyCoreWattage(1)},
            {"wattage_off", "0"}});
  }
  out << "    <router id=\"switch\"/>\n";
  for (const NodeInfo* node : nodes)
    out << "    <link id=\"" << node->host << ".link\" bandwidth=\""
        << withUnit(node->bandwidthBytesPerSec.value_or(kDefaultBandwidthBytesPerSec), "Bps") << "\" latency=\""
        << withUnit(settings.latencySeconds.value_or(node->latencySeconds.value_or(kDefaultNetworkLatencySeconds)), "s")
        << "\"/>\n";
  for (const NodeInfo* node : nodes)
    out << "    <route src=\"" << node->host << "\" dst=\"switch\"><link_ctn id=\"" << node->host
        << ".link\"/></route>\n";
  out << "  </zone>\n</platform>\n";
  return out.str();
}

std::string formatSmpiHostfile(const std::vector<std::string>& hostOfRank) {
  std::string text;
  for (const std::string& h : hostOfRank) text += h + "\n";
  return text;
}

bool ranksFromMachinefile(const std::string& text, int ranks, std::vector<std::string>& hostOfRank,
                          std::string& error) {
  std::vector<std::pair<std::string, int>> slots;
  std::istringstream in(text);
  int lineNumber = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineNumber;
    if (const std::size_t hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const std::size_t first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
    if (first == std::string::npos) continue;
    line = line.substr(first, last - first + 1);
    const std::size_t colon = line.find(':');
    std::string hostName = line.substr(0, colon);
    int count = 1;
    if (colon != std::string::npos) {
      char* end = nullptr;
      const long value = std::strtol(line.c_str() + colon + 1, &end, 10);
      if (end == line.c_str() + colon + 1 || *end != '\0' || value < 1 || value > 1000000) {
        error = "line " + std::to_string(lineNumber) + ": expected host[:slots] with slots from 1, got '" + line + "'";
        return false;
      }
      count = static_cast<int>(value);
    }
    if (std::string why; !checkHostName(hostName, why)) {
      error = "line " + std::to_string(lineNumber) + ": " + why;
      return false;
    }
    slots.emplace_back(hostName, count);
  }
  if (slots.empty()) {
    error = "no hosts";
    return false;
  }
  hostOfRank.clear();
  for (std::size_t line = 0; static_cast<int>(hostOfRank.size()) < ranks; line = (line + 1) % slots.size())
    for (int k = 0; k < slots[line].second && static_cast<int>(hostOfRank.size()) < ranks; ++k)
      hostOfRank.push_back(slots[line].first);
  return true;
}

SimulationLog parseSimulationLog(const std::string& text) {
  SimulationLog log;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (const std::size_t at = line.find("Simulated time: "); at != std::string::npos) {
      log.simulatedSeconds = std::strtod(line.c_str() + at + 16, nullptr);
      continue;
    }
    if (line.find("MPI_Abort was called") != std::string::npos) log.aborted = true;
    constexpr const char* kEnergy = "Energy consumption of host ";
    if (const std::size_t at = line.find(kEnergy); at != std::string::npos) {
      const std::size_t name = at + std::string(kEnergy).size();
      const std::size_t colon = line.find(": ", name);
      if (colon != std::string::npos) {
        log.busy.push_back({line.substr(name, colon - name), std::strtod(line.c_str() + colon + 2, nullptr)});
        continue;
      }
    }
    // SimGrid's own summary of the run (the makespan above says what matters of it), and its blank lines.
    if (line.empty() || line.find("[smpi_utils/INFO]") != std::string::npos ||
        line.find("[host_energy/INFO]") != std::string::npos || line.rfind("The simulation took ", 0) == 0 ||
        line.find("seconds were actual computation") != std::string::npos ||
        line.rfind("You may want to use sampling functions", 0) == 0)
      continue;
    log.otherLines.push_back(line);
  }
  return log;
}

}  // namespace dispar::streammap
