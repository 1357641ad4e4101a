// `streammap simulate`: a cluster description as a SimGrid platform, the ranks as an SMPI hostfile, and
// what smpirun's log says about the run (docs/simulation.md).
#ifndef STREAMMAP_SIMULATION_H
#define STREAMMAP_SIMULATION_H

#include "streammap/Cluster.h"
#include "streammap/GpuSpeed.h"

#include <optional>
#include <string>
#include <vector>

namespace dispar::streammap {

/// The flop rate one core of the machine running the simulation stands for (smpi/host-speed): a node
/// whose cores have relative speed s runs s times this.
inline constexpr double kHostPathFlopsPerSecond = 1e9;
/// How many times faster the reference GPU (GpuSpeed.h: an A100, relative speed 1.0) runs a kernel than
/// its host clone runs on one core of the machine running the simulation: the cost model's figure by
/// default; --gpu-speedup sets it.
inline constexpr double kDefaultGpuSpeedup = kReferenceGpuSpeedupOverCore;

/// The simulated time of an MPI_Iprobe or MPI_Test (smpi/iprobe, smpi/test). SimGrid's default, 100 us,
/// keeps busy loops from spinning forever; it made every poll of a reader of several pipes cost as much
/// as a message's work. MPI libraries take well under a microsecond.
inline constexpr double kPollCallSeconds = 1e-6;

/// SimGrid's options for every simulated run (`--cfg=NAME:VALUE`), each set for a reason given beside it
/// in Simulation.cpp (docs/simulation.md).
std::vector<std::string> smpiConfiguration();

struct SimulationSettings {
  double gpuSpeedup = kDefaultGpuSpeedup;
  /// Every node link's latency (--latency); unset: each node's `network.latency_s`, else the cost model's
  /// default (kDefaultNetworkLatencySeconds), so that the simulation and the mapper price a message alike.
  std::optional<double> latencySeconds;
};

/// The platform (SimGrid XML, version 4.1): per up node a host of its cores at cpuSpeed x
/// kHostPathFlopsPerSecond, with properties gpu_count and an energy profile of 1 W per busy core (so
/// that SimGrid's energy plugin reports busy core-seconds); per GPU a host HOST.gpuI of one core at
/// kHostPathFlopsPerSecond x gpuSpeedup x its estimated speed, with property host_path_speed
/// (dispar/smpi/SimulatedGpu.h); per node a link of its bandwidth to one switch.
std::string formatSmpiPlatform(const Cluster& cluster, const SimulationSettings& settings);

/// One host per line, rank by rank.
std::string formatSmpiHostfile(const std::vector<std::string>& hostOfRank);

/// The host of each of `ranks` ranks as MPICH's mpiexec places them from a machinefile: lines
/// `host[:slots]` (slots default 1; `#` comments and blank lines ignored), filled in file order, then
/// again from the top. False with `error` naming the line when the file is malformed or empty.
bool ranksFromMachinefile(const std::string& text, int ranks, std::vector<std::string>& hostOfRank, std::string& error);

/// What a simulated run's SimGrid log says.
struct SimulationLog {
  std::optional<double> simulatedSeconds;  // "Simulated time: X seconds."
  bool aborted = false;                    // "MPI_Abort was called"
  struct HostBusy {
    std::string host;
    double coreSeconds = 0;
  };
  std::vector<HostBusy> busy;           // the energy plugin's per-host Joules = busy core-seconds
  std::vector<std::string> otherLines;  // everything else: the program's own stderr, SimGrid's warnings
};
SimulationLog parseSimulationLog(const std::string& text);

}  // namespace dispar::streammap

#endif
