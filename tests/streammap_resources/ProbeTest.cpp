#include "streammap/Discovery.h"
#include "streammap/NodeProbe.h"
#include "streammap/ResourceDb.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

using namespace dispar::streammap;
using dispar::streammap::test::runCommand;
using dispar::streammap::test::TempDir;

namespace {

int hwlocCount(const std::string& type) {
  int status = 0;
  std::string out = runCommand("hwloc-calc --number-of " + type + " machine:0 2>/dev/null", &status);
  EXPECT_EQ(status, 0) << "hwloc-calc failed for " << type;
  return std::atoi(out.c_str());
}

// Keeps DISPAR_CUDA_DRIVER as the test sets it and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (old) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

}  // namespace

TEST(NodeProbe, AgreesWithHwlocToolsAndNproc) {
  ProbeResult probe = probeLocalNode({});
  const NodeInfo& n = probe.node;
  EXPECT_EQ(n.host, localHostName());
  EXPECT_EQ(n.source, RecordSource::Probe);
  EXPECT_EQ(n.sockets, std::max(1, hwlocCount("package")));
  EXPECT_EQ(n.cores, hwlocCount("core"));
  EXPECT_EQ(n.threads, hwlocCount("pu"));
  EXPECT_EQ(static_cast<int>(n.numa.size()), hwlocCount("numa"));
  // nproc counts the CPUs this process may use; hwloc the node's allowed PUs. Same on an unpinned run.
  int nproc = std::atoi(runCommand("nproc").c_str());
  int nprocAll = std::atoi(runCommand("nproc --all").c_str());
  EXPECT_GE(n.threads, nproc);
  EXPECT_LE(n.threads, nprocAll);
  EXPECT_GT(n.memoryBytes, 0u);
  std::uint64_t numaTotal = 0;
  for (const NumaInfo& numa : n.numa) numaTotal += numa.memoryBytes;
  EXPECT_EQ(numaTotal, n.memoryBytes);
  // lstopo's XML holds the same NUMA memory figure.
  std::string xml = runCommand("lstopo-no-graphics --of xml 2>/dev/null");
  ASSERT_FALSE(n.numa.empty());
  EXPECT_NE(xml.find("local_memory=\"" + std::to_string(n.numa[0].memoryBytes) + "\""), std::string::npos);
  EXPECT_FALSE(n.caches.empty());
}

TEST(NodeProbe, CpuOnlyMachineReportsZeroGpusWithoutWarning) {
  ScopedEnv env("DISPAR_CUDA_DRIVER", nullptr);
  ProbeResult probe = probeLocalNode({});
  if (!probe.node.gpus.empty()) GTEST_SKIP() << "this machine has a CUDA driver and GPUs";
  EXPECT_TRUE(probe.warnings.empty()) << probe.warnings.front();
}

TEST(NodeProbe, MissingNamedDriverGivesZeroGpusAndAWarning) {
  ScopedEnv env("DISPAR_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  ProbeResult probe = probeLocalNode({});
  EXPECT_TRUE(probe.node.gpus.empty());
  ASSERT_EQ(probe.warnings.size(), 1u);
  EXPECT_NE(probe.warnings[0].find("/nonexistent/libcuda.so.1"), std::string::npos) << probe.warnings[0];
  EXPECT_GT(probe.node.cores, 0);  // the rest is still probed
}

TEST(NodeProbe, LibraryWithoutDriverSymbolsIsABrokenDriver) {
  ProbeOptions options;
  options.cudaDriverPath = "libc.so.6";
  ProbeResult probe = probeLocalNode(options);
  EXPECT_TRUE(probe.node.gpus.empty());
  ASSERT_EQ(probe.warnings.size(), 1u);
  EXPECT_NE(probe.warnings[0].find("missing symbol cuInit"), std::string::npos) << probe.warnings[0];
}

TEST(NodeProbe, ReadsGpusThroughTheDriverApi) {
  ScopedEnv env("DISPAR_CUDA_DRIVER", DISPAR_FAKE_CUDA_DRIVER);
  ProbeResult probe = probeLocalNode({});
  EXPECT_TRUE(probe.warnings.empty()) << probe.warnings.front();
  ASSERT_EQ(probe.node.gpus.size(), 2u);
  const GpuInfo& g = probe.node.gpus[0];
  EXPECT_EQ(g.index, 0);
  EXPECT_EQ(g.name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(g.uuid, "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f");
  EXPECT_EQ(g.ccMajor, 8);
  EXPECT_EQ(g.ccMinor, 0);
  EXPECT_EQ(g.memoryBytes, 42949672960ull);
  EXPECT_EQ(g.multiprocessors, 108);
  EXPECT_EQ(g.clockKHz, 1410000);
  EXPECT_EQ(g.pciBusId, "0000:07:00.0");
  EXPECT_EQ(g.numaNode, -1);  // no such PCI device here, so no locality
  EXPECT_EQ(probe.node.gpus[1].pciBusId, "0000:0b:00.0");
  EXPECT_EQ(probe.node.gpus[1].ccMajor, 7);
}

TEST(NodeProbe, FailingCuInitIsAWarning) {
  ScopedEnv env("DISPAR_CUDA_DRIVER", DISPAR_FAKE_CUDA_DRIVER);
  ScopedEnv fail("FAKE_CUDA_INIT_ERROR", "1");
  ProbeResult probe = probeLocalNode({});
  EXPECT_TRUE(probe.node.gpus.empty());
  ASSERT_EQ(probe.warnings.size(), 1u);
  EXPECT_NE(probe.warnings[0].find("cuInit(0) failed: unknown error (999)"), std::string::npos) << probe.warnings[0];
}

TEST(NodeProbe, DiscoverRecordsTheProbe) {
  TempDir dir;
  ProbeOptions options;
  options.hostName = "probe-host";
  testing::internal::CaptureStdout();
  EXPECT_EQ(discoverLocalNode(dir.file("d.db"), options), 0);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out.rfind("discovered probe-host: ", 0), 0u) << out;
  Cluster c;
  std::string error;
  ASSERT_TRUE(loadClusterFromDatabase(dir.file("d.db"), 0, c, error)) << error;
  ASSERT_EQ(c.nodes.size(), 1u);
  EXPECT_EQ(c.nodes[0].host, "probe-host");
  EXPECT_EQ(c.nodes[0].source, RecordSource::Probe);
  EXPECT_EQ(c.nodes[0].threads, probeLocalNode({}).node.threads);
}

// A node under a CPU quota (a container's, the emulated cluster's) is recorded as what it can run.
TEST(NodeProbe, ACpuQuotaBecomesCoresAndSpeed) {
  NodeInfo node;
  node.sockets = 2;
  node.cores = 16;
  node.threads = 32;
  applyCpuLimit(node, 0.5);
  EXPECT_EQ(node.cores, 1);
  EXPECT_EQ(node.threads, 2);
  EXPECT_EQ(node.sockets, 1);
  EXPECT_DOUBLE_EQ(node.cpuSpeed, 0.5);
  applyCpuLimit(node, 4);  // not below the cores now recorded: no change
  EXPECT_EQ(node.cores, 1);
  NodeInfo wide;
  wide.cores = wide.threads = 8;
  applyCpuLimit(wide, 2.5);
  EXPECT_EQ(wide.cores, 3);
  EXPECT_DOUBLE_EQ(wide.cores * wide.cpuSpeed, 2.5);
  NodeInfo unlimited;
  unlimited.cores = unlimited.threads = 4;
  applyCpuLimit(unlimited, 4);
  EXPECT_EQ(unlimited.cores, 4);
  EXPECT_DOUBLE_EQ(unlimited.cpuSpeed, 1.0);
}
