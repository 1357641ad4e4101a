// Measured costs end to end (docs/streammap.md, "Measured costs"; issue 13's measurement): a program of
// four VNODEs of known relative work 1:2:4:8 and no cost clauses runs once with profiling; the
// recorded compute-time ratios are within 20% of the true ones, and the mapping made from the profile
// (`map --profile`) and from the history (`profile add`, then `map --db`) on a two-node description
// places every VNODE where the mapping from the true costs does.
#include "Process.h"

#include "dispar_lang/Rtg.h"
#include "dispar_lang/RunProfile.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace dispar::testing {
namespace {

const std::string kDisparcc = DISPARCC_PATH;
const std::string kStreammap = STREAMMAP_PATH;
const std::string kMpiexec = MPIEXEC_PATH;

// Each VNODE runs WORK x kUnit steps of one dependent chain per message: its time is its work. The
// unit is large enough (w1 about 0.15 s of CPU) that a co-runner on a shared core, which slows whatever
// runs beside it for a while, averages out of the ratios: at a quarter of it, one CI run under load
// measured w2 / w1 = 2.54.
const char* kWorkSource = R"(#include <dispar/dispar.h>
#include <cstdio>

constexpr int kMessages = 48;
constexpr long kUnit = 1600000;

static double spin(double x, long steps) {
  for (long i = 0; i < steps; ++i) x = x * 0.999999 + 1e-6;
  return x;
}

PIPE(double, ab);
PIPE(double, bc);
PIPE(double, cd);

VNODE(w1, OUT(ab)) {
  double x = 1;
  for (int m = 0; m < kMessages; ++m) { x = spin(x, 1 * kUnit); ab.write(x); }
}
VNODE(w2, IN(ab), OUT(bc)) {
  double x;
  while (ab.read(x)) bc.write(spin(x, 2 * kUnit));
}
VNODE(w4, IN(bc), OUT(cd)) {
  double x;
  while (bc.read(x)) cd.write(spin(x, 4 * kUnit));
}
VNODE(w8, IN(cd)) {
  double x, last = 0;
  int n = 0;
  while (cd.read(x)) { last = spin(x, 8 * kUnit); ++n; }
  std::printf("messages=%d last=%.6f\n", n, last);
}
)";

// One core each, the first twice as fast: under 1:2:4:8 the only best placement is {w8, w2} on fast
// (time 5) and {w1, w4} on slow (5); the next best is 5.5.
const char* kTwoNodes = R"({"format": "dispar-cluster", "version": 1, "nodes": [
 {"host": "fast", "cpu": {"sockets": 1, "cores": 1, "threads": 1, "speed": 2.0}, "memory_bytes": 1073741824},
 {"host": "slow", "cpu": {"sockets": 1, "cores": 1, "threads": 1, "speed": 1.0}, "memory_bytes": 1073741824}]})";

/// vnode -> host of the mapping file `path`.
std::map<std::string, std::string> placement(const std::string& path) {
  std::map<std::string, std::string> hosts;
  const nlohmann::json map = nlohmann::json::parse(readFile(path));
  for (const nlohmann::json& entry : map.at("ranks"))
    hosts[entry.at("vnode").get<std::string>()] = entry.at("host").get<std::string>();
  return hosts;
}

/// The vnodes of each rank of the mapping file `path`.
std::set<std::set<std::string>> ranksOf(const std::string& path) {
  std::map<int, std::set<std::string>> ranks;
  const nlohmann::json map = nlohmann::json::parse(readFile(path));
  for (const nlohmann::json& entry : map.at("ranks")) ranks[entry.at("rank").get<int>()].insert(entry.at("vnode"));
  std::set<std::set<std::string>> out;
  for (auto& [rank, vnodes] : ranks) out.insert(std::move(vnodes));
  return out;
}

class MeasuredCosts : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.write("work.dsp", kWorkSource);
    const ProcessResult built = runProcess({kDisparcc, "work.dsp", "-o", "work"}, dir_.path());
    ASSERT_EQ(built.status, 0) << built.output;
    dir_.write("two.json", kTwoNodes);
    // The true costs, as cost clauses would give them: the reference mapping.
    lang::Rtg rtg;
    std::string error;
    ASSERT_TRUE(lang::parseRtgJson(readFile(dir_.file("work.rtg.json")), rtg, error)) << error;
    for (lang::RtgVertex& v : rtg.vertices) {
      EXPECT_FALSE(v.costDeclared) << v.vnode;
      v.cost = std::stod(v.vnode.substr(1));
      v.costDeclared = true;
    }
    dir_.write("truth.rtg.json", lang::writeRtgJson(rtg));
    const ProcessResult mapped = map({"truth.rtg.json", "--cluster", "two.json", "-o", "truth.machinefile"});
    ASSERT_EQ(mapped.status, 0) << mapped.output;
    truth_ = placement(dir_.file("truth.map.json"));
    ASSERT_EQ(truth_,
              (std::map<std::string, std::string>{{"w1", "slow"}, {"w2", "fast"}, {"w4", "slow"}, {"w8", "fast"}}));
  }

  ProcessResult map(std::vector<std::string> args) {
    args.insert(args.begin(), {kStreammap, "map"});
    return runProcess(args, dir_.path());
  }

  /// Runs the program one rank per instance with DISPAR_PROFILE=`profile`.
  void profiledRun(const std::string& profile) {
    const ProcessResult ran = runProcess({kMpiexec, "-launcher", "fork", "-n", "4", "./work"}, dir_.path(),
                                         {"DISPAR_PROFILE=" + dir_.file(profile)});
    ASSERT_EQ(ran.status, 0) << ran.output;
    EXPECT_NE(ran.output.find("messages=48"), std::string::npos) << ran.output;
  }

  ScratchDir dir_;
  std::map<std::string, std::string> truth_;
};

TEST_F(MeasuredCosts, OneProfiledRunRecoversTheRatiosAndTheMapping) {
  profiledRun("run1.json");
  lang::RunProfile profile;
  std::string error;
  ASSERT_TRUE(lang::parseRunProfileJson(readFile(dir_.file("run1.json")), profile, error)) << error;
  std::map<std::string, double> compute;
  for (const lang::ProfiledInstance& i : profile.instances) {
    ASSERT_TRUE(i.computeCpuSeconds) << i.vnode;
    compute[i.vnode] = *i.computeCpuSeconds;
    EXPECT_FALSE(i.deviceModel.empty());
  }
  ASSERT_GT(compute["w1"], 0);
  for (const auto& [vnode, seconds] : compute) {
    const double ratio = seconds / compute["w1"], truth = std::stod(vnode.substr(1));
    EXPECT_NEAR(ratio, truth, 0.2 * truth) << vnode << ": " << seconds << " s vs w1's " << compute["w1"] << " s";
  }
  // No cost clauses: without measurements every VNODE costs 1, and the mapping is not the true one.
  ASSERT_EQ(map({"work.rtg.json", "--cluster", "two.json", "-o", "blind.machinefile"}).status, 0);
  EXPECT_NE(placement(dir_.file("blind.map.json")), truth_);
  // With the profile's costs it is.
  const ProcessResult mapped = map(
      {"work.rtg.json", "--cluster", "two.json", "--profile", "run1.json", "-o", "profiled.machinefile", "--explain"});
  ASSERT_EQ(mapped.status, 0) << mapped.output;
  EXPECT_EQ(placement(dir_.file("profiled.map.json")), truth_) << mapped.output;
  EXPECT_NE(mapped.output.find("costs: 4 profile"), std::string::npos) << mapped.output;
  EXPECT_NE(mapped.output.find("from the profile (1 run, 1 of 1 samples"), std::string::npos) << mapped.output;
  EXPECT_NE(mapped.output.find("bytes per message from the profile: pipe(s) 'ab', 'bc', 'cd'"), std::string::npos)
      << mapped.output;
}

TEST_F(MeasuredCosts, TheHistoryInTheResourceDatabaseMapsAsTheTruth) {
  ASSERT_EQ(runProcess({kStreammap, "cluster", "import", "two.json", "--db", "history.db"}, dir_.path()).status, 0);
  for (const char* run : {"run1.json", "run2.json"}) {
    profiledRun(run);
    const ProcessResult added = runProcess({kStreammap, "profile", "add", run, "--db", "history.db"}, dir_.path());
    ASSERT_EQ(added.status, 0) << added.output;
    EXPECT_NE(added.output.find("of program 'work' in history.db: 4 instance(s), 3 pipe(s), 48 message(s) per period"),
              std::string::npos)
        << added.output;
  }
  const ProcessResult shown = runProcess({kStreammap, "profile", "show", "work", "--db", "history.db"}, dir_.path());
  ASSERT_EQ(shown.status, 0) << shown.output;
  for (const char* vnode : {" w1 ", " w2 ", " w4 ", " w8 "})
    EXPECT_NE(shown.output.find(vnode), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find("2/2"), std::string::npos) << shown.output;
  const ProcessResult mapped = map({"work.rtg.json", "--db", "history.db", "-o", "history.machinefile"});
  ASSERT_EQ(mapped.status, 0) << mapped.output;
  EXPECT_EQ(placement(dir_.file("history.map.json")), truth_) << mapped.output;
  EXPECT_NE(mapped.output.find("costs: 4 history"), std::string::npos) << mapped.output;
  // --history none maps without it.
  ASSERT_EQ(map({"work.rtg.json", "--db", "history.db", "--history", "none", "-o", "none.machinefile"}).status, 0);
  EXPECT_NE(placement(dir_.file("none.map.json")), truth_);
}

// `streammap run` maps again when `profile add` has moved the costs its mapping was made from, and not
// when nothing changed. A mapping made again takes the new costs' digest; it says so where it places an
// instance elsewhere, and keeps quiet where the placement stays (docs/streammap.md, `run`). Which
// of the two happens depends on the costs measured: under load (a test beside this one) the run's wall
// times can leave the placement as it was, so the test checks the digest, and the line against the
// placement.
TEST_F(MeasuredCosts, RunRemapsWhenTheHistoryRevisesTheCosts) {
  ASSERT_EQ(runProcess({kStreammap, "cluster", "import", "two.json", "--db", "history.db"}, dir_.path()).status, 0);
  const auto costsDigest = [&] {
    return nlohmann::json::parse(readFile(dir_.file("work.map.json"))).at("costs_digest").get<std::string>();
  };
  // --no-history: the runs themselves add nothing; the history changes only by `profile add`.
  const std::vector<std::string> run = {kStreammap,   "run",       "--launcher", "fork",         "--db",
                                        "history.db", "--profile", "run1.json",  "--no-history", "./work"};
  ProcessResult first = runProcess(run, dir_.path());
  ASSERT_EQ(first.status, 0) << first.output;
  EXPECT_NE(first.output.find("mapping ./work.rtg.json (no mapping yet)"), std::string::npos) << first.output;
  const std::string defaults = costsDigest();
  const std::map<std::string, std::string> placedByDefaults = placement(dir_.file("work.map.json"));
  ProcessResult again = runProcess(run, dir_.path());
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_EQ(again.output.find("streammap run: mapping"), std::string::npos) << again.output;
  EXPECT_EQ(costsDigest(), defaults);

  const ProcessResult added =
      runProcess({kStreammap, "profile", "add", "run1.json", "--db", "history.db"}, dir_.path());
  ASSERT_EQ(added.status, 0) << added.output;
  ProcessResult revised = runProcess(run, dir_.path());
  ASSERT_EQ(revised.status, 0) << revised.output;
  const std::string measured = costsDigest();
  EXPECT_NE(measured, defaults) << "the mapping was not made again from the history\n" << revised.output;
  const bool moved = placement(dir_.file("work.map.json")) != placedByDefaults;
  EXPECT_EQ(revised.output.find("mapping ./work.rtg.json (measured costs changed since mapping)") != std::string::npos,
            moved)
      << revised.output;
  EXPECT_NE(revised.output.find("messages=48"), std::string::npos) << revised.output;
  // The new mapping was made from the history; nothing changed since.
  ProcessResult settled = runProcess(run, dir_.path());
  ASSERT_EQ(settled.status, 0) << settled.output;
  EXPECT_EQ(settled.output.find("streammap run: mapping"), std::string::npos) << settled.output;
  EXPECT_EQ(costsDigest(), measured);
}

// Measured by default (issue 38): `streammap run` with no flag profiles the run and adds it to the
// history of the database it maps from; the second run maps from those measurements, as the true costs
// place the VNODEs. --no-history adds nothing.
TEST_F(MeasuredCosts, TheSecondRunMapsFromTheFirstRunsMeasurements) {
  // One node of two cores, as this machine is: the four instances share two ranks, and with more
  // instances than cores the profile measures each one's CPU time, which a co-runner (a test beside this
  // one) does not stretch (two one-core "nodes" would each look uncrowded and be measured in wall time).
  // The true costs group w8 alone; the defaults (every cost 1) two and two.
  dir_.write("equal.json", R"({"format": "dispar-cluster", "version": 1, "nodes": [
 {"host": "here", "cpu": {"sockets": 1, "cores": 2, "threads": 2, "speed": 1.0}, "memory_bytes": 1073741824}]})");
  const ProcessResult mapped = map({"truth.rtg.json", "--cluster", "equal.json", "-o", "equal.machinefile"});
  ASSERT_EQ(mapped.status, 0) << mapped.output;
  const std::set<std::set<std::string>> truth = ranksOf(dir_.file("equal.map.json"));
  ASSERT_EQ(truth, (std::set<std::set<std::string>>{{"w1", "w2", "w4"}, {"w8"}}));
  ASSERT_EQ(runProcess({kStreammap, "cluster", "import", "equal.json", "--db", "history.db"}, dir_.path()).status, 0);
  const std::vector<std::string> run = {kStreammap, "run", "--launcher", "fork", "--db", "history.db", "./work"};
  const ProcessResult first = runProcess(run, dir_.path());
  ASSERT_EQ(first.status, 0) << first.output;
  EXPECT_NE(first.output.find("mapping ./work.rtg.json (no mapping yet)"), std::string::npos) << first.output;
  EXPECT_NE(first.output.find("messages=48"), std::string::npos) << first.output;
  EXPECT_NE(first.output.find("streammap run: measured costs of 4 instance(s) added to the performance history in "),
            std::string::npos)
      << first.output;
  EXPECT_NE(ranksOf(dir_.file("work.map.json")), truth);  // every cost 1: the defaults group them otherwise
  EXPECT_TRUE(fileExists(dir_.file("work.profile.json")));

  const ProcessResult second = runProcess(run, dir_.path());
  ASSERT_EQ(second.status, 0) << second.output;
  EXPECT_NE(second.output.find("mapping ./work.rtg.json (measured costs changed since mapping)"), std::string::npos)
      << second.output;
  EXPECT_NE(second.output.find("history.db (run 2)"), std::string::npos) << second.output;
  EXPECT_EQ(ranksOf(dir_.file("work.map.json")), truth);

  std::vector<std::string> without = run;
  without.insert(without.end() - 1, "--no-history");
  const ProcessResult third = runProcess(without, dir_.path());
  ASSERT_EQ(third.status, 0) << third.output;
  EXPECT_EQ(third.output.find("added to the performance history"), std::string::npos) << third.output;
  // profile show ./work says where each cost comes from: all four measured.
  const ProcessResult shown = runProcess({kStreammap, "profile", "show", "./work", "--db", "history.db"}, dir_.path());
  ASSERT_EQ(shown.status, 0) << shown.output;
  for (const char* vnode : {"w1 ", "w2 ", "w4 ", "w8 "}) {
    const std::size_t line = shown.output.find(std::string("\n") + vnode);
    ASSERT_NE(line, std::string::npos) << vnode << "\n" << shown.output;
    const std::string row = shown.output.substr(line + 1, shown.output.find('\n', line + 1) - line - 1);
    EXPECT_NE(row.find(" from the history (2 runs"), std::string::npos) << row;
  }
  // Runs are numbered in the database: no third was recorded, the next is 3.
  const ProcessResult fourth = runProcess(run, dir_.path());
  ASSERT_EQ(fourth.status, 0) << fourth.output;
  EXPECT_NE(fourth.output.find("history.db (run 3)"), std::string::npos) << fourth.output;
  // A DISPAR_PROFILE of the user's own names where the profile goes, as --profile does: the run writes it
  // there and adds it to the history (the program used to write it there and streammap to find none).
  const ProcessResult fifth = runProcess(run, dir_.path(), {"DISPAR_PROFILE=" + dir_.file("mine.json")});
  ASSERT_EQ(fifth.status, 0) << fifth.output;
  EXPECT_TRUE(fileExists(dir_.file("mine.json")));
  EXPECT_NE(fifth.output.find("history.db (run 4)"), std::string::npos) << fifth.output;
}

TEST_F(MeasuredCosts, BadProfilesAreRefusedNamingTheFieldAndNothingIsWritten) {
  dir_.write("bad.json", R"({"format": "dispar-profile", "version": 1, "program": "work", "instances": [
    {"rank": 0, "vnode": "w1", "replica": 0, "host": "h", "device": "cpu", "compute_s": -1,
     "read_wait_s": 0, "write_wait_s": 0}], "pipes": []})");
  ProcessResult mapped =
      map({"work.rtg.json", "--cluster", "two.json", "--profile", "bad.json", "-o", "bad.machinefile"});
  EXPECT_EQ(mapped.status, 1);
  EXPECT_NE(mapped.output.find("bad.json: profile.instances[0].compute_s: must not be negative, got -1"),
            std::string::npos)
      << mapped.output;
  EXPECT_FALSE(fileExists(dir_.file("bad.machinefile")));
  const ProcessResult added = runProcess({kStreammap, "profile", "add", "bad.json", "--db", "h.db"}, dir_.path());
  EXPECT_EQ(added.status, 1);
  EXPECT_NE(added.output.find("profile.instances[0].compute_s"), std::string::npos) << added.output;
  dir_.write("other.json", R"({"format": "dispar-profile", "version": 1, "program": "other", "complete": true,
    "instances": [{"rank": 0, "vnode": "w1", "replica": 0, "host": "h", "device": "cpu", "compute_s": 1,
     "read_wait_s": 0, "write_wait_s": 0}], "pipes": []})");
  mapped = map({"work.rtg.json", "--cluster", "two.json", "--profile", "other.json", "-o", "bad.machinefile"});
  EXPECT_EQ(mapped.status, 1);
  EXPECT_NE(mapped.output.find("the profile is of program 'other', the RTG of 'work'"), std::string::npos)
      << mapped.output;
}

}  // namespace
}  // namespace dispar::testing
