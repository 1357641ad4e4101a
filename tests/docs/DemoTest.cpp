// The README's first command runs the main job, scripts/demo.sh: here every example of
// examples/examples.tsv goes through it on the built tree and prints its result line, on this machine
// as it is, and on a node of one core and one of sixteen (cluster descriptions): the rank count is
// always the mapping's, never the script's.
#include "Process.h"
#include "dispar_lang/RunTrace.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

namespace dispar::testing {
namespace {

const std::string kSourceDir = DISPAR_SOURCE_DIR;
const std::string kBinaryDir = DISPAR_BINARY_DIR;

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

/// The run trace every demo run writes (DISPAR_TRACE): it follows the Trace Event Format
/// (dispar_lang/RunTrace.h's checker), has one track per instance of the program's RTG, named for it,
/// and draws its messages.
void expectValidTrace(const ScratchDir& dir, const std::string& name) {
  const lang::TraceCheck check = lang::checkTraceEventJson(readFile(dir.file("trace.json")));
  for (const std::string& problem : check.problems) ADD_FAILURE() << "trace.json: " << problem;
  std::set<std::string> tracks;
  for (const std::string& track : check.trackNames)
    if (track.find(" kernels and library calls") == std::string::npos) tracks.insert(track.substr(0, track.find(' ')));
  std::set<std::string> instances;
  const nlohmann::json rtg = nlohmann::json::parse(readFile(dir.file(name + ".rtg.json")));
  for (const auto& vertex : rtg["vertices"])
    instances.insert(vertex["vnode"].get<std::string>() + "[" + std::to_string(vertex["replica"].get<int>()) + "]");
  EXPECT_EQ(tracks, instances);
  EXPECT_GT(check.flows, 0u);
}

/// The run's report (`streammap report`) opened in headless Chromium: the page loads without script
/// errors, its graph has one box per VNODE of the RTG and its timeline one row per instance; the
/// screenshot is kept as a test artefact (build/test-artefacts/report-NAME.png).
void expectReportLoadsInBrowser(const ScratchDir& dir, const std::string& name) {
  ProcessResult report =
      runProcess({kBinaryDir + "/bin/streammap", "report", "./" + name, "--trace", "trace.json", "-o", "report.html"},
                 dir.path(), {}, 60);
  ASSERT_EQ(report.status, 0) << report.output;
  std::set<std::string> vnodes;
  std::size_t instances = 0;
  const nlohmann::json rtg = nlohmann::json::parse(readFile(dir.file(name + ".rtg.json")));
  for (const auto& vertex : rtg["vertices"]) vnodes.insert(vertex["vnode"].get<std::string>()), ++instances;
  const std::vector<std::string> chromium = {"chromium", "--headless", "--no-sandbox", "--disable-gpu",
                                             "--user-data-dir=" + dir.file("chromium-profile")};
  std::vector<std::string> dump = chromium;
  dump.insert(dump.end(), {"--dump-dom", "file://" + dir.file("report.html")});
  ProcessResult page = runProcess(dump, dir.path(), {}, 120);
  ASSERT_EQ(page.status, 0) << "chromium (scripts/setup.sh --tests installs it) failed:\n" << page.output;
  std::smatch body;
  ASSERT_TRUE(std::regex_search(page.output, body, std::regex("<body[^>]*>"))) << page.output;
  const std::string tag = body.str();
  EXPECT_EQ(tag.find("data-errors"), std::string::npos) << tag;
  EXPECT_NE(tag.find("data-vnodes=\"" + std::to_string(vnodes.size()) + "\""), std::string::npos) << tag;
  EXPECT_NE(tag.find("data-tracks=\"" + std::to_string(instances) + "\""), std::string::npos) << tag;
  const std::string artefacts = kBinaryDir + "/test-artefacts";
  std::filesystem::create_directories(artefacts);
  std::vector<std::string> shot = chromium;
  shot.insert(shot.end(),
              {"--hide-scrollbars", "--window-size=1200,1400", "--screenshot=" + artefacts + "/report-" + name + ".png",
               "file://" + dir.file("report.html")});
  EXPECT_EQ(runProcess(shot, dir.path(), {}, 120).status, 0);
}

class Demo : public ::testing::TestWithParam<Example> {};

TEST_P(Demo, ExamplePrintsItsResultTracesItsRunAndReportsIt) {
  const Example& e = GetParam();
  ScratchDir dir;
  ProcessResult run = runProcess({kSourceDir + "/scripts/demo.sh", e.name}, dir.path(),
                                 {"DISPAR_DEMO_DIR=" + dir.path(), "DISPAR_TRACE=" + dir.file("trace.json")}, 600);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(printsResult(run.output, e.result)) << "no line matches " << e.result << ":\n" << run.output;
  expectValidTrace(dir, e.name);
  expectReportLoadsInBrowser(dir, e.name);
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
                     {"DISPAR_DEMO_DIR=" + dir.path(), "DISPAR_DEMO_CLUSTER=" + dir.file("cluster.json"),
                      "DISPAR_TRACE=" + dir.file("trace.json")},
                     600);
      ASSERT_EQ(run.status, 0) << run.output;
      expectValidTrace(dir, name);  // on one core: every instance a thread of one rank
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
