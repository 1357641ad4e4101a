// The README's first command runs the main job, scripts/demo.sh: here every example of
// examples/examples.tsv goes through it on the built tree and prints its result line, on this machine
// as it is, and on a node of one core and one of sixteen (cluster descriptions): the rank count is
// always the mapping's, never the script's.
#include "Process.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

namespace dispar::testing {
namespace {

const std::string kSourceDir = DISPAR_SOURCE_DIR;

struct Example {
  std::string name, result;  // result: an extended regex one line of the output must match
};

std::vector<Example> examples() {
  std::vector<Example> out;
  std::istringstream lines(readFile(kSourceDir + "/examples/examples.tsv"));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, '\t');) fields.push_back(cell);
    if (fields.size() == 4) out.push_back({fields[0], fields[3]});
  }
  return out;
}

void PrintTo(const Example& e, std::ostream* out) { *out << e.name; }

bool printsResult(const std::string& output, const std::string& result) {
  const std::regex pattern(result, std::regex::extended);
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);)
    if (std::regex_search(line, pattern)) return true;
  return false;
}

/// The rank count the run launched with, from streammap run's mpiexec line ("... -n N ./name").
int launchedRanks(const std::string& output, const std::string& name) {
  std::smatch m;
  const std::regex launch(" -n ([0-9]+) \\./" + name);
  return std::regex_search(output, m, launch) ? std::stoi(m[1]) : -1;
}

class Demo : public ::testing::TestWithParam<Example> {};

TEST_P(Demo, ExamplePrintsItsResult) {
  const Example& e = GetParam();
  ScratchDir dir;
  ProcessResult run =
      runProcess({kSourceDir + "/scripts/demo.sh", e.name}, dir.path(), {"DISPAR_DEMO_DIR=" + dir.path()}, 600);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(printsResult(run.output, e.result)) << "no line matches " << e.result << ":\n" << run.output;
}

INSTANTIATE_TEST_SUITE_P(Examples, Demo, ::testing::ValuesIn(examples()),
                         [](const ::testing::TestParamInfo<Example>& info) { return info.param.name; });

/// A cluster of one node of `cores` cores and no GPU, as a cluster description.
std::string oneNodeCluster(int cores) {
  return R"({"format": "dispar-cluster", "version": 1, "nodes": [
    {"host": "node1", "status": "up", "source": "import", "last_heartbeat": null,
     "cpu": {"sockets": 1, "cores": )" +
         std::to_string(cores) + ", \"threads\": " + std::to_string(cores) + R"(, "speed": 1.0},
     "memory_bytes": 68719476736, "numa": [], "caches": [], "gpus": []}]})";
}

// The rank count is the mapper's (at most one rank per core): one rank on one core, one per instance on
// sixteen. FIR: source, two filters, sink; the pipeline: source, three squares, sink.
TEST(DemoOn, OneAndSixteenCoreNodes) {
  const std::vector<Example> table = examples();
  for (const int cores : {1, 16}) {
    for (const char* name : {"fir", "pipeline"}) {
      SCOPED_TRACE(std::string(name) + " on " + std::to_string(cores) + " cores");
      ScratchDir dir;
      dir.write("cluster.json", oneNodeCluster(cores));
      ProcessResult run =
          runProcess({kSourceDir + "/scripts/demo.sh", name}, dir.path(),
                     {"DISPAR_DEMO_DIR=" + dir.path(), "DISPAR_DEMO_CLUSTER=" + dir.file("cluster.json")}, 600);
      ASSERT_EQ(run.status, 0) << run.output;
      const int instances = std::string(name) == "fir" ? 4 : 5;
      EXPECT_EQ(launchedRanks(run.output, name), cores == 1 ? 1 : instances) << run.output;
      for (const Example& e : table) {
        if (e.name == name) {
          EXPECT_TRUE(printsResult(run.output, e.result)) << run.output;
        }
      }
    }
  }
}

}  // namespace
}  // namespace dispar::testing
