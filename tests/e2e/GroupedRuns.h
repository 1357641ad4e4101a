// A `.dsp` program built with the real disparcc in a directory of its own, and run under a grouping of
// its instances (tests/e2e/GroupingMap.h): what the end-to-end tests that try one program one rank per
// instance, all in one rank and on two ranks share.
#ifndef DISPAR_TESTS_E2E_GROUPEDRUNS_H
#define DISPAR_TESTS_E2E_GROUPEDRUNS_H

#include "GroupingMap.h"
#include "Process.h"

#include "dispar_lang/Rtg.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dispar::testing {

/// A program built in its own directory (as `app`), with its RTG.
struct BuiltProgram {
  ScratchDir dir;
  lang::Rtg rtg;
  std::string compilerOutput;  // what disparcc printed (warnings)
};

/// Builds `source` as app.dsp; fails the test (fatally) when disparcc or the RTG does.
inline void buildProgram(const std::string& source, BuiltProgram& program) {
  program.dir.write("app.dsp", source);
  const ProcessResult built = runProcess({DISPARCC_PATH, "app.dsp", "-o", "app"}, program.dir.path(), {}, 300);
  program.compilerOutput = built.output;
  ASSERT_EQ(built.status, 0) << built.output;
  std::string error;
  ASSERT_TRUE(lang::parseRtgJson(readFile(program.dir.file("app.rtg.json")), program.rtg, error)) << error;
}

/// One rank per instance (empty), every instance in one rank, and instances dealt to two ranks.
inline std::vector<std::vector<std::vector<int>>> threeGroupings(const lang::Rtg& rtg) {
  std::vector<std::vector<int>> two(2);
  for (std::size_t i = 0; i < rtg.vertices.size(); ++i) two[i % 2].push_back(static_cast<int>(i));
  return {{}, oneRank(rtg), two};
}

inline std::string groupingName(const std::vector<std::vector<int>>& grouping) {
  return grouping.empty() ? "one rank per instance" : std::to_string(grouping.size()) + " rank(s)";
}

/// Runs the program under `grouping` (empty: one rank per instance) with `env` added.
inline ProcessResult runGrouped(const BuiltProgram& program, const std::vector<std::vector<int>>& grouping,
                                std::vector<std::string> env = {}, int timeoutSeconds = 120) {
  int ranks = static_cast<int>(program.rtg.vertices.size());
  if (!grouping.empty()) {
    program.dir.write("group.map.json", mapFile("app", program.rtg, grouping));
    env.push_back("DISPAR_MAPPING=" + program.dir.file("group.map.json"));
    ranks = static_cast<int>(grouping.size());
  }
  return runProcess({MPIEXEC_PATH, "-launcher", "fork", "-n", std::to_string(ranks), "./app"}, program.dir.path(), env,
                    timeoutSeconds);
}

/// Runs the program under each of threeGroupings: each must succeed and print `expected`.
inline void expectEveryGroupingPrints(const BuiltProgram& program, const std::string& expected,
                                      const std::vector<std::string>& env = {}) {
  for (const auto& grouping : threeGroupings(program.rtg)) {
    const ProcessResult ran = runGrouped(program, grouping, env);
    const std::string how = groupingName(grouping);
    EXPECT_EQ(ran.status, 0) << how << "\n" << ran.output;
    EXPECT_NE(ran.output.find(expected), std::string::npos) << how << ": expected " << expected << ran.output;
  }
}

}  // namespace dispar::testing

#endif  // DISPAR_TESTS_E2E_GROUPEDRUNS_H
