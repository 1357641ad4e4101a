// Builders for RTGs and clusters used by the mapping tests.
#ifndef STREAMMAP_MAPPING_TEST_SUPPORT_H
#define STREAMMAP_MAPPING_TEST_SUPPORT_H

#include "dispar_lang/Rtg.h"
#include "streammap/AtomicFiles.h"
#include "streammap/Cluster.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace dispar::streammap::testing {

inline lang::RtgVertex vertex(int id, const std::string& vnode, lang::Requirement type, double cost = 1.0,
                              int replica = 0) {
  lang::RtgVertex v;
  v.id = v.rank = id;
  v.vnode = vnode;
  v.replica = replica;
  v.type = type;
  v.cost = cost;
  return v;
}

inline lang::RtgEdge edge(int from, int to, std::uint64_t volume = 4096) {
  lang::RtgEdge e;
  e.from = from;
  e.to = to;
  e.pipe = "p" + std::to_string(from) + "_" + std::to_string(to);
  e.element = "float";
  e.elementBytes = 4;
  e.volume = volume;
  return e;
}

inline GpuInfo gpu(int index, int sms, int clockKHz, int ccMajor, int ccMinor, std::uint64_t memory = 16ull << 30) {
  GpuInfo g;
  g.index = index;
  g.name = "gpu-sm" + std::to_string(ccMajor) + std::to_string(ccMinor);
  g.multiprocessors = sms;
  g.clockKHz = clockKHz;
  g.ccMajor = ccMajor;
  g.ccMinor = ccMinor;
  g.memoryBytes = memory;
  return g;
}

inline GpuInfo a100(int index) { return gpu(index, 108, 1410000, 8, 0, 40ull << 30); }  // speed 1.0
inline GpuInfo v100(int index) { return gpu(index, 80, 1530000, 7, 0, 16ull << 30); }   // speed ~0.804

inline NodeInfo node(const std::string& host, int cores, std::vector<GpuInfo> gpus = {}, double cpuSpeed = 1.0) {
  NodeInfo n;
  n.host = host;
  n.cores = n.threads = cores;
  n.gpus = std::move(gpus);
  n.cpuSpeed = cpuSpeed;
  n.memoryBytes = 64ull << 30;
  return n;
}

/// The paper-style 4-node cluster of the hand-worked cases:
///   cpu1: 2 cores; cpu2: 4 cores; gpu1: 8 cores + 1 A100 (speed 1.0); gpu2: 8 cores + 2 V100 (0.804 each).
/// CRT (most capable first: cores x speed) = [cpu2, cpu1]; GRT (GPUs x speed) = [gpu2 (1.61), gpu1 (1.0)].
inline Cluster paperCluster() {
  Cluster c;
  c.nodes = {node("cpu1", 2), node("cpu2", 4), node("gpu1", 8, {a100(0)}), node("gpu2", 8, {v100(0), v100(1)})};
  return c;
}

inline lang::Rtg rtgOf(std::vector<lang::RtgVertex> vertices, std::vector<lang::RtgEdge> edges) {
  lang::Rtg r;
  r.program = "app";
  r.vertices = std::move(vertices);
  r.edges = std::move(edges);
  return r;
}

/// A fixture with a fresh temporary directory (removed after the test) and file helpers inside it.
class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/streammap-mapping-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty()) std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path(name)) << text; }
  bool exists(const std::string& name) const {
    struct stat st{};
    return ::stat(path(name).c_str(), &st) == 0;
  }
  std::string read(const std::string& name) const {
    std::string text, error;
    EXPECT_TRUE(readFile(path(name), text, error)) << error;
    return text;
  }

  std::string dir_;
};

}  // namespace dispar::streammap::testing

#endif
