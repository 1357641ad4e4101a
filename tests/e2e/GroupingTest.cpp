// Rank groups end to end (docs/runtime.md, "Rank groups"): every example, compiled once with the real
// disparcc, run three ways under mpiexec: one rank per VNODE instance (no mapping file), every instance
// in one rank, and a seeded random grouping into two or three ranks, the grouping given as a mapping
// file through DISPAR_MAPPING. The printed results must be identical. A mapping file of another program
// must be refused at start-up, naming the file and both programs.
#include "GroupingMap.h"
#include "Process.h"

#include "dispar_lang/Rtg.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace dispar::testing {
namespace {

const std::string kDisparcc = DISPARCC_PATH;
const std::string kMpiexec = MPIEXEC_PATH;
const std::string kSourceDir = DISPAR_SOURCE_DIR;

struct Example {
  const char* path;   // under examples/
  const char* noise;  // lines matching this regex differ from run to run (timings) and are not compared
  std::vector<std::string> libraries;  // what the example's README links it with
};

const Example kExamples[] = {
    {"pipeline/pipeline.dsp", "", {}},
    {"fanout/fanout.dsp", "", {"-lfftw3", "-lopenblas"}},
    {"fir/fir.dsp", "", {}},
    {"streamit/fft.dsp", "", {}},
    {"streamit/fmradio.dsp", "", {}},
    {"streamit/filterbank.dsp", "", {}},
    {"split/hotspot.dsp", "last step", {}},
    {"stap/stap.dsp", "", {}},
};

void PrintTo(const Example& example, std::ostream* out) { *out << example.path; }

std::string stemOf(const std::string& path) {
  const std::string file = path.substr(path.rfind('/') + 1);
  return file.substr(0, file.rfind('.'));
}

/// A program built in a scratch directory, with its RTG's instances.
struct Built {
  ScratchDir dir;
  std::string name;
  lang::Rtg rtg;
};

void build(const std::string& path, const std::vector<std::string>& libraries, Built& out) {
  out.name = stemOf(path);
  out.dir.write(out.name + ".dsp", readFile(kSourceDir + "/examples/" + path));
  std::vector<std::string> command{kDisparcc, out.name + ".dsp", "-o", out.name};
  command.insert(command.end(), libraries.begin(), libraries.end());
  const ProcessResult built = runProcess(command, out.dir.path(), {}, 600);
  ASSERT_EQ(built.status, 0) << built.output;
  std::string error;
  ASSERT_TRUE(lang::parseRtgJson(readFile(out.dir.file(out.name + ".rtg.json")), out.rtg, error)) << error;
}

/// The output lines that must not depend on the grouping, sorted (ranks print in any order).
std::vector<std::string> results(const std::string& output, const std::string& noise) {
  std::vector<std::string> lines;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.rfind("dispar:", 0) == 0) continue;
    if (!noise.empty() && std::regex_search(line, std::regex(noise))) continue;
    lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

ProcessResult run(const Built& program, int ranks, const std::string& mapping) {
  std::vector<std::string> env;
  if (!mapping.empty()) env.push_back("DISPAR_MAPPING=" + mapping);
  return runProcess({kMpiexec, "-launcher", "fork", "-n", std::to_string(ranks), "./" + program.name},
                    program.dir.path(), env, 300);
}

class Grouping : public ::testing::TestWithParam<Example> {};

TEST_P(Grouping, EveryGroupingPrintsTheSameResults) {
  const Example& example = GetParam();
  Built program;
  ASSERT_NO_FATAL_FAILURE(build(example.path, example.libraries, program));
  const int instances = static_cast<int>(program.rtg.vertices.size());

  const ProcessResult perInstance = run(program, instances, "");
  ASSERT_EQ(perInstance.status, 0) << perInstance.output;
  const std::vector<std::string> expected = results(perInstance.output, example.noise);
  ASSERT_FALSE(expected.empty()) << "the example printed nothing to compare:\n" << perInstance.output;

  program.dir.write("one.map.json", mapFile(program.name, program.rtg, oneRank(program.rtg)));
  const ProcessResult together = run(program, 1, program.dir.file("one.map.json"));
  ASSERT_EQ(together.status, 0) << together.output;
  EXPECT_EQ(results(together.output, example.noise), expected) << together.output;

  // Seeded by the example, so that a failure reproduces; every rank gets at least one instance.
  std::mt19937 random(static_cast<unsigned>(std::hash<std::string>{}(example.path) & 0xffff));
  const int ranks = std::min(instances, 2 + static_cast<int>(random() % 2));
  std::vector<int> rankOf(static_cast<std::size_t>(instances));
  for (int i = 0; i < instances; ++i)
    rankOf[static_cast<std::size_t>(i)] = i < ranks ? i : static_cast<int>(random() % ranks);
  std::shuffle(rankOf.begin(), rankOf.end(), random);
  std::vector<std::vector<int>> grouping(static_cast<std::size_t>(ranks));
  for (int i = 0; i < instances; ++i)
    grouping[static_cast<std::size_t>(rankOf[static_cast<std::size_t>(i)])].push_back(i);
  program.dir.write("random.map.json", mapFile(program.name, program.rtg, grouping));
  const ProcessResult randomly = run(program, ranks, program.dir.file("random.map.json"));
  ASSERT_EQ(randomly.status, 0) << randomly.output;
  EXPECT_EQ(results(randomly.output, example.noise), expected) << readFile(program.dir.file("random.map.json")) << "\n"
                                                               << randomly.output;
}

INSTANTIATE_TEST_SUITE_P(Examples, Grouping, ::testing::ValuesIn(kExamples),
                         [](const ::testing::TestParamInfo<Example>& info) { return stemOf(info.param.path); });

TEST(GroupingFile, OfAnotherProgramIsRefusedAtStartUp) {
  Built pipeline;
  ASSERT_NO_FATAL_FAILURE(build("pipeline/pipeline.dsp", {}, pipeline));
  const std::vector<std::vector<int>> together = oneRank(pipeline.rtg);
  // The same instances, another program's name: the file is not this program's.
  pipeline.dir.write("other.map.json", mapFile("fanout", pipeline.rtg, together));
  const ProcessResult other = run(pipeline, 1, pipeline.dir.file("other.map.json"));
  EXPECT_NE(other.status, 0);
  EXPECT_NE(other.output.find("dispar: mapping file '" + pipeline.dir.file("other.map.json") +
                              "' is for program 'fanout', not 'pipeline'; run `streammap map` again for this program"),
            std::string::npos)
      << other.output;
  // This program's name, but a VNODE it does not have.
  std::string renamed = mapFile("pipeline", pipeline.rtg, together);
  const std::string first = "\"vnode\": \"" + pipeline.rtg.vertices[0].vnode + "\"";
  renamed.replace(renamed.find(first), first.size(), "\"vnode\": \"nosuch\"");
  pipeline.dir.write("renamed.map.json", renamed);
  const ProcessResult missing = run(pipeline, 1, pipeline.dir.file("renamed.map.json"));
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.output.find("names vnode 'nosuch', which program 'pipeline' does not have"), std::string::npos)
      << missing.output;
  // The right file, launched with one rank per instance as without it.
  const std::string ranks = std::to_string(pipeline.rtg.vertices.size());
  pipeline.dir.write("one.map.json", mapFile("pipeline", pipeline.rtg, together));
  const ProcessResult wrongCount =
      run(pipeline, static_cast<int>(pipeline.rtg.vertices.size()), pipeline.dir.file("one.map.json"));
  EXPECT_NE(wrongCount.status, 0);
  EXPECT_NE(wrongCount.output.find("dispar: pipeline was launched with " + ranks + " ranks but its mapping file '" +
                                   pipeline.dir.file("one.map.json") + "' groups its " + ranks +
                                   " VNODE instances into 1 rank; launch it with -n 1"),
            std::string::npos)
      << wrongCount.output;
}

}  // namespace
}  // namespace dispar::testing
