// Resource discovery figures: the probe against its 100 ms target and against hwloc's own topology load
// (the probe's floor, measured here in the same run); one node's database write; a 10,000-node cluster
// import parsed and recorded in one transaction against its 1 s target.
// `bench_discover --import N --postgres URL` (bench/discover/postgres-import.sh starts a throwaway server):
// an N-node import into PostgreSQL against its 10 s target for 100,000 nodes, beside the same import into
// SQLite in the same run.
#include "streammap/ClusterJson.h"
#include "streammap/NodeProbe.h"
#include "streammap/ResourceDb.h"

#include <hwloc.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using namespace dispar::streammap;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

Cluster syntheticCluster(int nodes) {
  Cluster c;
  for (int i = 0; i < nodes; ++i) {
    NodeInfo n;
    char host[32];
    std::snprintf(host, sizeof host, "node%05d", i);
    n.host = host;
    n.sockets = 2;
    n.cores = 32;
    n.threads = 64;
    n.memoryBytes = 256ull << 30;
    n.numa = {{0, 128ull << 30}, {1, 128ull << 30}};
    n.caches = {{2, 1u << 20, 32}, {3, 32u << 20, 2}};
    n.source = RecordSource::Import;
    for (int g = 0; g < (i % 3 == 0 ? 0 : 4); ++g) {
      GpuInfo gpu;
      gpu.index = g;
      gpu.name = "NVIDIA A100-SXM4-40GB";
      gpu.uuid = "GPU-" + n.host + "-" + std::to_string(g);
      gpu.ccMajor = 8;
      gpu.memoryBytes = 40ull << 30;
      gpu.multiprocessors = 108;
      gpu.clockKHz = 1410000;
      gpu.pciBusId = "0000:0" + std::to_string(g) + ":00.0";
      gpu.numaNode = g / 2;
      n.gpus.push_back(gpu);
    }
    c.nodes.push_back(std::move(n));
  }
  return c;
}

int fail(const std::string& error) {
  std::fprintf(stderr, "bench_discover: error: %s\n", error.c_str());
  return 1;
}

void report(const char* what, double ms, double targetMs) {
  std::printf("%-44s %10.2f ms   target %7.1f ms   ratio %.3f %s\n", what, ms, targetMs, ms / targetMs,
              ms <= targetMs ? "(met)" : "(MISSED)");
}

}  // namespace

/// An N-node import (streammap cluster import's path: importNodes) into `location`, in ms.
bool timeImport(const std::string& location, const Cluster& cluster, double& ms, std::string& error) {
  auto db = ResourceDb::open(location, ResourceDb::OpenMode::CreateIfMissing, error);
  if (!db) return false;
  const auto start = Clock::now();
  if (!db->importNodes(cluster.nodes, ResourceDb::ImportRules{}, nullptr, nullptr, error)) return false;
  ms = msSince(start);
  return true;
}

int importBench(int nodes, const std::string& postgres, const std::string& dir) {
  std::string error;
  const Cluster cluster = syntheticCluster(nodes);
  double sqliteMs = 0, postgresMs = 0;
  if (!timeImport(dir + "/import.db", cluster, sqliteMs, error)) return fail(error);
  if (!timeImport(postgres, cluster, postgresMs, error)) return fail(error);
  const double targetMs = 10000.0 * nodes / 100000;
  std::printf("%d-node import (2/3 with 4 GPUs, 2 NUMA nodes, 2 caches each)\n", nodes);
  std::printf("%-44s %10.2f ms\n", "baseline: into SQLite (same run)", sqliteMs);
  report("into PostgreSQL", postgresMs, targetMs);
  std::printf("%-44s %10.3f ms   PostgreSQL/SQLite ratio %.2f\n", "per node into PostgreSQL", postgresMs / nodes,
              postgresMs / sqliteMs);
  return 0;
}

int main(int argc, char** argv) {
  char dirTemplate[] = "/tmp/bench-discover-XXXXXX";
  if (!mkdtemp(dirTemplate)) return 1;
  const std::string dir = dirTemplate;
  std::string error;
  if (argc == 5 && std::string(argv[1]) == "--import" && std::string(argv[3]) == "--postgres") {
    const int status = importBench(std::atoi(argv[2]), argv[4], dir);
    std::filesystem::remove_all(dir);
    return status;
  }
  if (argc != 1) {
    std::fprintf(stderr, "usage: bench_discover [--import N --postgres URL]\n");
    return 2;
  }

  // 1. Probe, against hwloc's bare topology load.
  constexpr int kProbes = 21;
  std::vector<double> probeMs, hwlocMs;
  ProbeResult probe;
  for (int i = 0; i < kProbes; ++i) {
    auto start = Clock::now();
    hwloc_topology_t topology;
    hwloc_topology_init(&topology);
    hwloc_topology_load(topology);
    hwloc_topology_destroy(topology);
    hwlocMs.push_back(msSince(start));
    start = Clock::now();
    probe = probeLocalNode({});
    probeMs.push_back(msSince(start));
  }
  std::printf("probe of %s: %d cores, %d threads, %zu GPUs (median of %d)\n", probe.node.host.c_str(), probe.node.cores,
              probe.node.threads, probe.node.gpus.size(), kProbes);
  report("probe (hwloc + CUDA driver)", median(probeMs), 100.0);
  std::printf("%-44s %10.2f ms   probe/hwloc ratio %.2f\n", "baseline: hwloc_topology_load alone", median(hwlocMs),
              median(probeMs) / median(hwlocMs));

  // 2. One node's write (one BEGIN IMMEDIATE transaction each).
  double oneWriteMs = 0;
  {
    auto db = ResourceDb::open(dir + "/one.db", ResourceDb::OpenMode::CreateIfMissing, error);
    if (!db) return fail(error);
    constexpr int kWrites = 200;
    auto start = Clock::now();
    for (int i = 0; i < kWrites; ++i)
      if (!db->recordNode(probe.node, std::nullopt, nullptr, error)) return fail(error);
    oneWriteMs = msSince(start) / kWrites;
    report("database write of one node (own transaction)", oneWriteMs, 100.0);
  }

  // 3. 10,000-node import: JSON parse + one transaction.
  {
    const Cluster cluster = syntheticCluster(10000);
    const std::string text = writeClusterJson(cluster);
    auto start = Clock::now();
    Cluster parsed;
    if (!parseClusterJson(text, parsed, error)) return fail(error);
    const double parseMs = msSince(start);
    auto db = ResourceDb::open(dir + "/big.db", ResourceDb::OpenMode::CreateIfMissing, error);
    if (!db) return fail(error);
    start = Clock::now();
    if (!db->recordNodes(parsed.nodes, false, nullptr, error)) return fail(error);
    const double recordMs = msSince(start);
    start = Clock::now();
    Cluster loaded;
    if (!loadClusterFromDatabase(dir + "/big.db", 0, loaded, error)) return fail(error);
    const double loadMs = msSince(start);
    std::printf("10,000-node cluster: %.1f MiB of JSON, %zu GPUs\n", text.size() / 1048576.0,
                static_cast<std::size_t>(std::count_if(parsed.nodes.begin(), parsed.nodes.end(),
                                                       [](const NodeInfo& n) { return !n.gpus.empty(); })) *
                    4);
    report("10,000-node import: record (one transaction)", recordMs, 1000.0);
    report("10,000-node import: parse + record", parseMs + recordMs, 1000.0);
    std::printf("%-44s %10.2f ms\n", "10,000-node load (what the mapper reads)", loadMs);
    std::printf("%-44s %10.3f ms   (%.1fx cheaper than own transactions)\n", "per node inside the import",
                recordMs / 10000, oneWriteMs / (recordMs / 10000));
  }
  std::filesystem::remove_all(dir);
  return 0;
}
