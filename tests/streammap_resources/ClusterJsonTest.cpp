#include "streammap/ClusterJson.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

using namespace dispar::streammap;
using dispar::streammap::test::makeNode;
using dispar::streammap::test::readFile;

namespace {

std::string parseError(const std::string& text) {
  Cluster cluster;
  std::string error;
  EXPECT_FALSE(parseClusterJson(text, cluster, error)) << text;
  return error;
}

const char* const kMinimal = R"({"format": "dispar-cluster", "version": 1, "nodes": [
  {"host": "b", "cpu": {"cores": 4}},
  {"host": "a", "cpu": {"cores": 8, "threads": 16}, "gpus": [{"compute_capability": "8.0"}]}]})";

}  // namespace

TEST(ClusterJson, MinimalDescriptionGetsDocumentedDefaults) {
  Cluster cluster;
  std::string error;
  ASSERT_TRUE(parseClusterJson(kMinimal, cluster, error)) << error;
  ASSERT_EQ(cluster.nodes.size(), 2u);
  const NodeInfo& a = cluster.nodes[0];  // sorted by host
  EXPECT_EQ(a.host, "a");
  EXPECT_EQ(a.cores, 8);
  EXPECT_EQ(a.threads, 16);
  EXPECT_EQ(a.sockets, 1);
  EXPECT_EQ(a.status, NodeStatus::Up);
  EXPECT_EQ(a.source, RecordSource::Import);
  EXPECT_FALSE(a.lastHeartbeat);
  EXPECT_DOUBLE_EQ(a.cpuSpeed, 1.0);
  EXPECT_FALSE(a.bandwidthBytesPerSec);
  ASSERT_EQ(a.gpus.size(), 1u);
  EXPECT_EQ(a.gpus[0].index, 0);
  EXPECT_EQ(a.gpus[0].ccMajor, 8);
  EXPECT_EQ(a.gpus[0].numaNode, -1);
  EXPECT_EQ(cluster.nodes[1].threads, 4);  // threads default to cores
}

TEST(ClusterJson, WriteThenParseRoundTrips) {
  Cluster cluster;
  cluster.nodes = {makeNode("n2", 8, 0), makeNode("n1", 16, 2)};
  cluster.nodes[1].lastHeartbeat = 1700000000;
  cluster.nodes[1].status = NodeStatus::Drained;
  cluster.nodes[1].gpus[1].measuredRate = 2.5;
  cluster.nodes[1].bandwidthBytesPerSec = 1.25e9;
  cluster.nodes[1].latencySeconds = 2e-6;
  cluster.nodes[1].rankLatencySeconds = 5e-6;
  cluster.nodes[1].threadLatencySeconds = 1e-6;
  const std::string text = writeClusterJson(cluster);
  EXPECT_EQ(text.back(), '\n');
  Cluster back;
  std::string error;
  ASSERT_TRUE(parseClusterJson(text, back, error)) << error;
  EXPECT_EQ(writeClusterJson(back), text);
  ASSERT_EQ(back.nodes.size(), 2u);
  EXPECT_EQ(back.nodes[0].host, "n1");  // deterministic order
  EXPECT_EQ(back.nodes[0].status, NodeStatus::Drained);
  EXPECT_EQ(back.nodes[0].gpus[1].measuredRate, 2.5);
  EXPECT_EQ(back.nodes[0].gpus[1].pciBusId, "0000:03:00.0");
  EXPECT_EQ(back.nodes[0].latencySeconds, 2e-6);
  EXPECT_EQ(back.nodes[0].rankLatencySeconds, 5e-6);
  EXPECT_EQ(back.nodes[0].threadLatencySeconds, 1e-6);
  EXPECT_FALSE(back.nodes[1].latencySeconds);
}

TEST(ClusterJson, ReadOnlyHeartbeatAgeIsAcceptedAndIgnored) {
  Cluster cluster;
  cluster.nodes = {makeNode("n1", 4, 1)};
  cluster.nodes[0].lastHeartbeat = 100;
  const std::string text = writeClusterJson(cluster, 130);
  EXPECT_NE(text.find("\"heartbeat_age_s\": 30"), std::string::npos);
  Cluster back;
  std::string error;
  ASSERT_TRUE(parseClusterJson(text, back, error)) << error;
  EXPECT_EQ(writeClusterJson(back), writeClusterJson(cluster));
}

TEST(ClusterJson, ErrorsNameTheField) {
  const std::string head = R"({"format": "dispar-cluster", "version": 1, "nodes": [)";
  const std::string ok = R"({"host": "n0", "cpu": {"cores": 1}},{"host": "n1", "cpu": {"cores": 1}},)";
  EXPECT_EQ(
      parseError(head + ok + R"({"host": "n2", "cpu": {"cores": 2}, "gpus": [{"compute_capability": "eight"}]}]})"),
      "nodes[2].gpus[0].compute_capability: expected \"MAJOR.MINOR\"");
  EXPECT_EQ(parseError(head + R"({"cpu": {"cores": 2}}]})"), "nodes[0].host: missing required field");
  EXPECT_EQ(parseError(head + R"({"host": "x"}]})"), "nodes[0].cpu.cores: missing required field");
  EXPECT_EQ(parseError(head + R"({"host": "x", "cpu": {"cores": 0}}]})"),
            "nodes[0].cpu.cores: must be at least 1, got 0");
  EXPECT_EQ(parseError(head + R"({"host": "x", "cpu": {"cores": "4"}}]})"),
            "nodes[0].cpu.cores: expected an integer, got \"4\"");
  EXPECT_EQ(parseError(head + R"({"host": "x", "cpu": {"cores": 1}, "gpu": []}]})"), "nodes[0].gpu: unknown field");
  EXPECT_EQ(parseError(head + R"({"host": "x", "status": "sleeping", "cpu": {"cores": 1}}]})"),
            "nodes[0].status: expected \"up\", \"down\" or \"drained\", got \"sleeping\"");
  EXPECT_EQ(parseError(head + R"({"host": "x", "cpu": {"cores": 1}}, {"host": "x", "cpu": {"cores": 1}}]})"),
            "nodes[1].host: duplicate host 'x'");
  EXPECT_EQ(parseError(R"({"format": "other", "version": 1, "nodes": []})"), "format: expected \"dispar-cluster\"");
  EXPECT_NE(parseError(R"({"format": "dispar-cluster", "version": 2, "nodes": []})").find("newer"), std::string::npos);
}

TEST(ClusterJson, NumbersAreCheckedForRangeAndNamed) {
  const std::string head = R"({"format": "dispar-cluster", "version": 1, "nodes": [{"host": "x", )";
  EXPECT_EQ(parseError(head + R"("cpu": {"cores": 1, "speed": 1e999}}]})"),
            "nodes[0].cpu.speed: number out of range, got 1e999");
  EXPECT_EQ(parseError(head + R"("cpu": {"cores": 1}, "memory_bytes": -1e999}]})"),
            "nodes[0].memory_bytes: number out of range, got -1e999");
  EXPECT_EQ(parseError(head + R"("cpu": {"cores": 1}, "gpus": [{}, {"rate": 1E+400}]}]})"),
            "nodes[0].gpus[1].rate: number out of range, got 1E+400");
  EXPECT_EQ(parseError(R"({"format": "dispar-cluster", "version": 1e999, "nodes": []})"),
            "version: number out of range, got 1e999");
  EXPECT_EQ(parseError(head + R"("cpu": {"cores": 2.5}}]})"), "nodes[0].cpu.cores: expected an integer, got 2.5");
  EXPECT_EQ(parseError(head + R"("cpu": {"cores": 1e23}}]})"), "nodes[0].cpu.cores: must be at most 65536, got 1e+23");
  EXPECT_EQ(parseError(head + R"("cpu": {"cores": 4294967296}}]})"),
            "nodes[0].cpu.cores: must be at most 65536, got 4294967296");
  EXPECT_EQ(parseError(head + R"("cpu": {"cores": 1, "sockets": 5000}}]})"),
            "nodes[0].cpu.sockets: must be at most 1024, got 5000");
  EXPECT_EQ(parseError(head + R"("cpu": {"cores": 1}, "gpus": [{"index": 300}]}]})"),
            "nodes[0].gpus[0].index: must be at most 255, got 300");
  EXPECT_EQ(parseError(head + R"("cpu": {"cores": 1}, "gpus": [{"memory_bytes": 1e18}]}]})"),
            "nodes[0].gpus[0].memory_bytes: must be at most 1125899906842624, got 1e+18");
  EXPECT_EQ(parseError(head + R"("cpu": {"cores": 1}, "memory_bytes": -4}]})"),
            "nodes[0].memory_bytes: must be at least 0, got -4");
  EXPECT_EQ(parseError(head + R"("cpu": {"cores": 1}, "memory_bytes": 18446744073709551615}]})"),
            "nodes[0].memory_bytes: must be at most 1125899906842624, got 18446744073709551615");
  EXPECT_EQ(parseError(head + R"("cpu": {"cores": 1, "speed": 0}}]})"),
            "nodes[0].cpu.speed: must be a positive number, got 0");
  EXPECT_EQ(parseError(head + R"("cpu": {"cores": 1}, "numa": [{"memory_bytes": 9e14}, {"memory_bytes": 9e14}]}]})"),
            "nodes[0].numa[1].memory_bytes: NUMA memory totals more than 1125899906842624 bytes");
  EXPECT_EQ(parseError(head + R"("cpu": {"cores": 1}, "network": {"latency_s": 0}}]})"),
            "nodes[0].network.latency_s: must be a positive number, got 0");
  EXPECT_EQ(parseError(head + R"("cpu": {"cores": 1}, "network": {"rank_latency_s": 5}}]})"),
            "nodes[0].network.rank_latency_s: must be at most 1 (a second per message), got 5");
  EXPECT_EQ(parseError(head + R"("cpu": {"cores": 1}, "network": {"thread_latency_s": "3us"}}]})"),
            "nodes[0].network.thread_latency_s: expected a number, got \"3us\"");
}

TEST(ClusterJson, SyntaxErrorsGiveLineAndColumn) {
  const std::string error = parseError("{\"format\": \"dispar-cluster\",\n  \"version\": 1,\n  \"nodes\": [,]}");
  EXPECT_EQ(error.rfind("line 3:", 0), 0u) << error;
}

TEST(ClusterJson, ShippedExamplesParseAndAreCanonical) {
  for (const char* name : {"paper4.json", "mixed8.json"}) {
    const std::string path = std::string(DISPAR_EXAMPLES_DIR) + "/" + name;
    Cluster cluster;
    std::string error;
    ASSERT_TRUE(readClusterJsonFile(path, cluster, error)) << error;
    EXPECT_EQ(writeClusterJson(cluster), readFile(path)) << name << " is not in canonical form";
  }
  Cluster paper;
  std::string error;
  ASSERT_TRUE(readClusterJsonFile(std::string(DISPAR_EXAMPLES_DIR) + "/paper4.json", paper, error));
  ASSERT_EQ(paper.nodes.size(), 4u);
  EXPECT_EQ(paper.nodes[0].gpus.size(), 2u);
  EXPECT_EQ(paper.nodes[1].gpus.size(), 1u);
  EXPECT_EQ(paper.nodes[1].gpus[0].ccMajor, 2);
  EXPECT_TRUE(paper.nodes[2].gpus.empty());
  EXPECT_TRUE(paper.nodes[3].gpus.empty());
}

// `cluster import FILE` with a number beyond double range: exit status 1, the file and field named,
// nothing imported (it aborted on an uncaught out_of_range).
TEST(ClusterJson, ImportOfANumberOutOfRangeNamesFileAndField) {
  dispar::streammap::test::TempDir dir;
  const std::string file = dir.file("cluster.json");
  std::string text = readFile(std::string(DISPAR_EXAMPLES_DIR) + "/paper4.json");
  const std::size_t speed = text.find("\"speed\": 1.0");
  ASSERT_NE(speed, std::string::npos);
  text.replace(speed, 13, "\"speed\": 1e999");
  dispar::streammap::test::writeFile(file, text);
  int status = 0;
  const std::string out = dispar::streammap::test::runCommand(
      std::string(DISPAR_RESOURCES_CLI) + " cluster import " + file + " --db " + dir.file("r.db") + " 2>&1", &status);
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find(file + ": nodes[0].cpu.speed: number out of range, got 1e999"), std::string::npos) << out;
  EXPECT_EQ(out.find("imported"), std::string::npos) << out;
}

TEST(ClusterJson, MissingFileIsAnErrorNamingIt) {
  Cluster cluster;
  std::string error;
  EXPECT_FALSE(readClusterJsonFile("/nonexistent/cluster.json", cluster, error));
  EXPECT_NE(error.find("/nonexistent/cluster.json"), std::string::npos);
}

// Descriptions are read streamed, node by node; whatever order the members come in, the result and
// the first error are those of reading the whole document.
TEST(ClusterJson, MemberOrderAndRepeatsReadAsTheWholeDocumentDoes) {
  Cluster cluster;
  std::string error;
  // The nodes before the header; a repeated "nodes" keeps its last value (nlohmann's rule).
  ASSERT_TRUE(parseClusterJson(R"({"nodes": [{"host": "x", "cpu": {"cores": 1}}], "version": 1,
      "nodes": [{"host": "b", "cpu": {"cores": 2}}, {"host": "a", "cpu": {"cores": 3}}], "format": "dispar-cluster"})",
                               cluster, error))
      << error;
  ASSERT_EQ(cluster.nodes.size(), 2u);
  EXPECT_EQ(cluster.nodes[0].host, "a");
  EXPECT_EQ(cluster.nodes[0].cores, 3);
  EXPECT_EQ(cluster.nodes[1].host, "b");
  // A wrong header after valid nodes is still the header's error; the first of two faults wins.
  EXPECT_EQ(parseError(R"({"nodes": [{"host": "a", "cpu": {"cores": 1}}], "format": "other", "version": 1})"),
            "format: expected \"dispar-cluster\"");
  EXPECT_EQ(parseError(R"({"format": "dispar-cluster", "version": 1, "nodes": [{"host": "a", "cpu": {"cores": 1}},
      {"host": "a", "cpu": {"cores": 1}}, {"host": "c"}]})"),
            "nodes[1].host: duplicate host 'a'");
  EXPECT_EQ(
      parseError(R"({"format": "dispar-cluster", "version": 1, "nodes": [{"host": "a", "cpu": {"cores": 1}}, 7]})"),
      "nodes[1]: expected an object");
  EXPECT_EQ(parseError(R"({"format": "dispar-cluster", "version": 1, "nodes": {"host": "a"}})"),
            "nodes: expected an array");
  EXPECT_EQ(parseError(R"([{"format": "dispar-cluster"}])"), "top level: expected an object");
}

// Host names are checked on every way in; a GPU's model name is free text (a probe's, an import's): one
// with a newline and an escape sequence is printed escaped by `streammap nodes`, so it cannot forge a row
// of the table or move the cursor.
TEST(ClusterJson, NodesTablePrintsOutsideNamesEscaped) {
  dispar::streammap::test::TempDir dir;
  const std::string file = dir.file("cluster.json");
  std::string text = readFile(std::string(DISPAR_EXAMPLES_DIR) + "/paper4.json");
  const std::size_t model = text.find("\"name\": \"Tesla K20m\"");
  ASSERT_NE(model, std::string::npos);
  text.replace(model, 20, "\"name\": \"node1\\nforged        up\\u001b[2J\"");
  dispar::streammap::test::writeFile(file, text);
  int status = 0;
  const std::string db = dir.file("r.db");
  const std::string cli = std::string(DISPAR_RESOURCES_CLI);
  std::string out =
      dispar::streammap::test::runCommand(cli + " cluster import " + file + " --db " + db + " 2>&1", &status);
  ASSERT_EQ(status, 0) << out;
  out = dispar::streammap::test::runCommand(cli + " nodes --db " + db + " 2>&1", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("node1\\nforged        up\\x1b[2J"), std::string::npos) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find("\nforged"), std::string::npos) << out;
}
