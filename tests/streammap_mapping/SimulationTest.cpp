// streammap simulate's pieces (Simulation.h): the platform written from a cluster, ranks placed from an
// MPICH machinefile, and smpirun's log read.
#include "streammap/Simulation.h"
#include "streammap/GpuSpeed.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace dispar::streammap {
namespace {

Cluster twoNodes() {
  Cluster cluster;
  NodeInfo gpuNode;
  gpuNode.host = "gpu1";
  gpuNode.cores = 8;
  gpuNode.cpuSpeed = 2.0;
  gpuNode.bandwidthBytesPerSec = 4e9;
  GpuInfo k20;
  k20.name = "Tesla K20m";
  k20.ccMajor = 3;
  k20.ccMinor = 5;
  k20.multiprocessors = 13;
  k20.clockKHz = 705500;
  gpuNode.gpus = {k20, k20};
  NodeInfo cpuNode;
  cpuNode.host = "cpu1";
  cpuNode.cores = 4;
  NodeInfo down;
  down.host = "gone";
  down.status = NodeStatus::Down;
  cluster.nodes = {cpuNode, gpuNode, down};
  return cluster;
}

TEST(SimulationPlatform, HostsGpusAndLinksFromTheDescription) {
  SimulationSettings settings;
  settings.gpuSpeedup = 10;
  settings.latencySeconds = 2e-6;
  const Cluster cluster = twoNodes();
  const std::string xml = formatSmpiPlatform(cluster, settings);
  // Cores at relative speed x 1 Gflop/s; the GPU count; busy core-seconds as energy.
  EXPECT_NE(xml.find(R"(<host id="gpu1" speed="2000000000f" core="8"><prop id="gpu_count" value="2"/>)"
                     R"(<prop id="wattage_per_state" value="0:1:8"/>)"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find(R"(<host id="cpu1" speed="1000000000f" core="4"><prop id="gpu_count" value="0"/>)"),
            std::string::npos)
      << xml;
  // Each GPU a host of one core at 1 Gflop/s x speedup x its estimated speed.
  const double gpuFlops = 1e9 * 10 * estimateGpuSpeed(cluster.nodes[1].gpus[0]);
  std::smatch match;
  ASSERT_TRUE(std::regex_search(xml, match, std::regex(R"(<host id="gpu1\.gpu1" speed="([0-9.e+]+)f" core="1">)")))
      << xml;
  EXPECT_NEAR(std::stod(match[1]), gpuFlops, gpuFlops * 1e-9);
  EXPECT_NE(xml.find(R"(<prop id="host_path_speed" value="1000000000"/>)"), std::string::npos) << xml;
  EXPECT_EQ(xml.find("gpu1.gpu2"), std::string::npos);
  EXPECT_EQ(xml.find("gone"), std::string::npos) << "a down node is no host";
  // Links: the description's bandwidth, else the mapper's default; the latency given.
  EXPECT_NE(xml.find(R"(<link id="gpu1.link" bandwidth="4000000000Bps" latency="2e-06s"/>)"), std::string::npos) << xml;
  EXPECT_NE(xml.find(R"(<link id="cpu1.link" bandwidth="1250000000Bps" latency="2e-06s"/>)"), std::string::npos) << xml;
  EXPECT_NE(xml.find(R"(<route src="cpu1" dst="switch"><link_ctn id="cpu1.link"/></route>)"), std::string::npos) << xml;
}

TEST(SimulationMachinefile, PlacesRanksAsMpiexecDoes) {
  std::vector<std::string> hosts;
  std::string error;
  ASSERT_TRUE(ranksFromMachinefile("# hand-made\nnode1:2\n\nnode2  # one slot\nnode3:1\n", 6, hosts, error)) << error;
  EXPECT_EQ(hosts, (std::vector<std::string>{"node1", "node1", "node2", "node3", "node1", "node1"}));
  ASSERT_TRUE(ranksFromMachinefile("node1:12\n", 3, hosts, error)) << error;
  EXPECT_EQ(hosts, (std::vector<std::string>{"node1", "node1", "node1"}));
}

TEST(SimulationMachinefile, NamesTheBadLine) {
  std::vector<std::string> hosts;
  std::string error;
  EXPECT_FALSE(ranksFromMachinefile("node1\nnode2:zero\n", 2, hosts, error));
  EXPECT_NE(error.find("line 2"), std::string::npos) << error;
  EXPECT_FALSE(ranksFromMachinefile("node1:0\n", 2, hosts, error));
  EXPECT_NE(error.find("line 1"), std::string::npos) << error;
  EXPECT_FALSE(ranksFromMachinefile("bad/host\n", 1, hosts, error));
  EXPECT_NE(error.find("line 1"), std::string::npos) << error;
  EXPECT_FALSE(ranksFromMachinefile("# nothing\n\n", 1, hosts, error));
  EXPECT_EQ(error, "no hosts");
}

TEST(SimulationLog, ReadsMakespanBusyTimeAndFailure) {
  const std::string log =
      "[node1:0:(1) 0.000000] [smpi_config/INFO] You did not set the power of the host running the simulation.\n"
      "dispar: rank 3 (sink): cannot take 1\n"
      "[0.297051] [smpi_utils/INFO] Simulated time: 0.297051 seconds. \n"
      "\n"
      "The simulation took 0.592387 seconds (after parsing and platform setup)\n"
      "0.47819 seconds were actual computation of the application\n"
      "[0.297051] [host_energy/INFO] Energy consumption of host node1: 0.307902 Joules\n"
      "[0.297051] [host_energy/INFO] Energy consumption of host node1.gpu0: 0.001000 Joules\n";
  const SimulationLog read = parseSimulationLog(log);
  ASSERT_TRUE(read.simulatedSeconds.has_value());
  EXPECT_DOUBLE_EQ(*read.simulatedSeconds, 0.297051);
  EXPECT_FALSE(read.aborted);
  ASSERT_EQ(read.busy.size(), 2u);
  EXPECT_EQ(read.busy[1].host, "node1.gpu0");
  EXPECT_DOUBLE_EQ(read.busy[0].coreSeconds, 0.307902);
  // The program's own line and SimGrid's warnings stay; its run summary goes.
  ASSERT_EQ(read.otherLines.size(), 2u);
  EXPECT_EQ(read.otherLines[1], "dispar: rank 3 (sink): cannot take 1");

  const SimulationLog aborted = parseSimulationLog("[node4:3:(4) 0.001] [smpi_pmpi/WARNING] MPI_Abort was called, "
                                                   "something went probably wrong in this simulation !\n");
  EXPECT_TRUE(aborted.aborted);
  EXPECT_FALSE(aborted.simulatedSeconds.has_value());
}

}  // namespace
}  // namespace dispar::streammap
