// Measured costs (docs/streammap.md, "Measured costs"): profiles into samples, robust estimates, the
// k-nearest-neighbours prediction and the order in which the mapper takes each vertex's cost. Expected
// values are worked out by hand in the comments.
#include "TestSupport.h"

#include "streammap/CostHistory.h"
#include "streammap/CostPredictor.h"
#include "streammap/GpuSpeed.h"
#include "streammap/MapPlanner.h"
#include "streammap/MeasuredCosts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <cmath>
#include <fstream>
#include <sstream>

namespace dispar::streammap::testing {
namespace {

lang::ProfiledInstance instance(const std::string& vnode, int replica, const std::string& host,
                                const std::string& device, const std::string& model, double compute,
                                const std::string& fingerprint = "f") {
  lang::ProfiledInstance i;
  i.vnode = vnode;
  i.replica = replica;
  i.host = host;
  i.device = device;
  i.deviceModel = model;
  i.computeSeconds = compute;
  i.fingerprint = fingerprint;
  return i;
}

lang::RunProfile profileOf(std::vector<lang::ProfiledInstance> instances, std::uint64_t messages = 100) {
  lang::RunProfile p;
  p.program = "app";
  p.instances = std::move(instances);
  p.pipes = {{"data", messages, messages * 64}, {"small", messages / 2, messages / 2 * 8}};
  return p;
}

CostSample sample(const std::string& vnode, std::int64_t run, double secondsPerMessage, double speed = 1.0,
                  const std::string& deviceClass = "cpu", const std::string& features = "{}",
                  const std::string& program = "app") {
  CostSample s;
  s.runId = run;
  s.program = program;
  s.vnode = vnode;
  s.fingerprint = "f";
  s.deviceClass = deviceClass;
  s.deviceModel = deviceClass == "gpu" ? "gpu-sm80" : "cpu-model";
  s.host = "h";
  s.secondsPerMessage = secondsPerMessage;
  s.speed = speed;
  s.features = features;
  return s;
}

TEST(RobustEstimate, TheMedianOfWhatIsLeftAfterOutliers) {
  // Median 1.01; deviations .01, .01, .03, 0, 3.99 -> MAD 0.01, sigma 0.014826, below its floor 5% of
  // 1.01 = 0.0505: values within 0.1515 of the median are kept, 5.0 is not.
  const RobustEstimate e = robustEstimate({1.0, 1.02, 0.98, 1.01, 5.0});
  EXPECT_EQ(e.count, 5);
  EXPECT_EQ(e.used, 4);
  EXPECT_DOUBLE_EQ(e.value, 1.005);  // median of 0.98, 1.0, 1.01, 1.02
  EXPECT_NEAR(e.spread, 1.4826 * 0.01 / 1.005, 1e-12);
  // A noisy run among few does not move it far; identical values are all kept, and so are values
  // that differ by little even when the rest agree exactly (MAD 0).
  EXPECT_DOUBLE_EQ(robustEstimate({2.0, 2.0, 9.0}).value, 2.0);
  EXPECT_EQ(robustEstimate({2.0, 2.0, 2.2}).used, 3);
  EXPECT_EQ(robustEstimate({2.0, 2.0, 2.4}).used, 2);
  EXPECT_EQ(robustEstimate({3.0, 3.0, 3.0}).used, 3);
  EXPECT_EQ(robustEstimate({}).count, 0);
}

TEST(SamplesFromProfile, TimePerPeriodMessageTimesTheSpeedOfTheDevice) {
  Cluster cluster;
  cluster.nodes = {node("fast", 4, {}, 2.0), node("g", 8, {a100(0), v100(1)})};
  lang::RunProfile p = profileOf(
      {instance("src", 0, "fast", "cpu", "Xeon", 1.0), instance("gpu", 0, "g", "gpu", v100(1).name, 0.5),
       instance("hp", 0, "g", "host-path", "EPYC", 0.25), instance("lost", 0, "nowhere", "cpu", "EPYC", 0.1)});
  p.instances[2].computeCpuSeconds = 0.2;  // on a CPU the CPU time outside the ports counts
  ProfileRunRecord run;
  std::vector<std::string> notes;
  std::string error;
  ASSERT_TRUE(samplesFromProfile(p, "p.json", cluster, nullptr, run, notes, error)) << error;
  EXPECT_EQ(run.periodMessages, 100u);  // the busiest pipe's messages
  ASSERT_EQ(run.samples.size(), 4u);
  EXPECT_DOUBLE_EQ(run.samples[0].secondsPerMessage, 0.01);
  EXPECT_DOUBLE_EQ(run.samples[0].speed, 2.0);
  EXPECT_EQ(run.samples[1].deviceClass, "gpu");
  EXPECT_DOUBLE_EQ(run.samples[1].speed, estimateGpuSpeed(v100(1)));  // the host's GPU of that model
  EXPECT_EQ(run.samples[2].deviceClass, "cpu");                       // the host path is a CPU
  EXPECT_DOUBLE_EQ(run.samples[2].secondsPerMessage, 0.002);
  EXPECT_DOUBLE_EQ(run.samples[3].speed, 1.0);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("host 'nowhere' is not in the resources"), std::string::npos) << notes[0];
  ASSERT_EQ(run.pipes.size(), 2u);
}

TEST(SamplesFromProfile, AGpuTheResourcesDoNotKnowIsEstimatedFromTheProfile) {
  // A run on a machine outside the resource database (as bench runs on a lent GPU machine are): the
  // runtime recorded the GPU's SMs, clock and compute capability, and the estimate is that of the same
  // GPU in a cluster description. Without the description the speed is taken as 1.0, and said so.
  lang::ProfiledInstance described = instance("fir", 0, "vm", "gpu", "NVIDIA H100 80GB HBM3", 0.5);
  described.gpu = lang::ProfiledGpu{132, 1980000, 9, 0};
  const lang::ProfiledInstance bare = instance("fir", 1, "vm2", "gpu", "Mystery GPU", 0.5);
  ProfileRunRecord run;
  std::vector<std::string> notes;
  std::string error;
  ASSERT_TRUE(samplesFromProfile(profileOf({described, bare}), "p.json", Cluster{}, nullptr, run, notes, error))
      << error;
  GpuInfo h100;
  h100.multiprocessors = 132;
  h100.clockKHz = 1980000;
  h100.ccMajor = 9;
  EXPECT_DOUBLE_EQ(run.samples[0].speed, estimateGpuSpeed(h100));
  EXPECT_NEAR(run.samples[0].speed, 132.0 * 1980 * 128 / (108.0 * 1410 * 64), 1e-12);  // 3.43
  EXPECT_DOUBLE_EQ(run.samples[1].speed, 1.0);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("GPU model 'NVIDIA H100 80GB HBM3' are not in the resources: the gpu's speed is estimated "
                          "from the profile's description of it (132 SMs, 1980 MHz, compute capability 9.0): 3.43"),
            std::string::npos)
      << notes[0];
  EXPECT_NE(notes[1].find("GPU model 'Mystery GPU' are not in the resources: the gpu's speed is taken as 1.0"),
            std::string::npos)
      << notes[1];
}

TEST(SamplesFromProfile, AProfileMeasuredOnAnH100) {
  // profiles/fir-h100.json: examples/fir/fir.dsp (64 frames, 4 ranks) run with DISPAR_PROFILE on an NVIDIA
  // H100 80GB HBM3 by scripts/gpu-check.sh, as it came back. The format the runtime wrote on a real GPU
  // reads; each GPU instance's compute time holds its kernels' GPU time (the body waits for its kernels
  // before it writes); its speed is the estimate of the GPU the runtime described.
  std::ifstream file(std::string(DISPAR_SOURCE_DIR) + "/tests/streammap_mapping/profiles/fir-h100.json");
  std::stringstream text;
  text << file.rdbuf();
  lang::RunProfile profile;
  std::string error;
  ASSERT_TRUE(lang::parseRunProfileJson(text.str(), profile, error)) << error;
  ASSERT_EQ(profile.instances.size(), 4u);
  int gpuInstances = 0;
  for (const lang::ProfiledInstance& i : profile.instances) {
    if (i.device != "gpu") continue;
    ++gpuInstances;
    ASSERT_TRUE(i.gpu);
    EXPECT_EQ(i.deviceModel, "NVIDIA H100 80GB HBM3");
    double kernelSeconds = 0;
    for (const lang::ProfiledKernel& k : profile.kernels)
      if (k.rank == i.rank && k.device == "gpu") kernelSeconds += k.seconds;
    EXPECT_GT(kernelSeconds, 0);
    EXPECT_LE(kernelSeconds, i.computeSeconds) << i.vnode << "[" << i.replica << "]";
  }
  EXPECT_EQ(gpuInstances, 2);
  ProfileRunRecord run;
  std::vector<std::string> notes;
  ASSERT_TRUE(samplesFromProfile(profile, "fir-h100.json", Cluster{}, nullptr, run, notes, error)) << error;
  EXPECT_EQ(run.periodMessages, 64u);
  for (const CostSample& sample : run.samples)
    if (sample.vnode == "fir") {
      EXPECT_EQ(sample.deviceClass, "gpu");
      EXPECT_NEAR(sample.speed, 132.0 * 1980 * 128 / (108.0 * 1410 * 64), 1e-12);
    }
}

TEST(SamplesFromProfile, RefusesASimulatedRun) {
  lang::RunProfile p = profileOf({instance("src", 0, "node1", "cpu", "x", 1.0)});
  p.simulated = true;
  ProfileRunRecord run;
  std::vector<std::string> notes;
  std::string error;
  EXPECT_FALSE(samplesFromProfile(p, "p.json", Cluster{}, nullptr, run, notes, error));
  EXPECT_EQ(error, "p.json: the profile of a simulated run (streammap simulate): its times are the simulated "
                   "cluster's, not measurements of a machine's devices, so it is not used");
  p.simulated = false;
  EXPECT_TRUE(samplesFromProfile(p, "p.json", Cluster{}, nullptr, run, notes, error)) << error;
}

TEST(SamplesFromProfile, RefusesAFailedRunAndAnotherProgramsRtg) {
  lang::RunProfile p = profileOf({instance("src", 0, "h", "cpu", "x", 1.0)});
  p.complete = false;
  p.failure = "vnode 'src' (replica 0, rank 0) failed: boom";
  ProfileRunRecord run;
  std::vector<std::string> notes;
  std::string error;
  EXPECT_FALSE(samplesFromProfile(p, "p.json", Cluster{}, nullptr, run, notes, error));
  EXPECT_NE(error.find("p.json: the profile of a failed run (vnode 'src'"), std::string::npos) << error;
  p.complete = true;
  lang::Rtg other = rtgOf({vertex(0, "src", lang::Requirement::CO)}, {});
  other.program = "other";
  EXPECT_FALSE(samplesFromProfile(p, "p.json", Cluster{}, &other, run, notes, error));
  EXPECT_NE(error.find("the profile is of program 'app', the RTG of 'other'"), std::string::npos) << error;
}

// The RTG gives the code features; the run adds its message sizes: per VNODE the bytes per message of
// its distinct input pipes, and of its output pipes, summed. profileOf's pipes: "data" 6400 bytes in 100
// messages (64 each), "small" 400 in 50 (8 each). The two replicas of `work` read "data" once.
TEST(SamplesFromProfile, RecordsTheRunsMessageSizesBesideTheCodeFeatures) {
  lang::Rtg rtg = rtgOf({vertex(0, "src", lang::Requirement::CO), vertex(1, "work", lang::Requirement::CO),
                         vertex(2, "work", lang::Requirement::CO, 1.0, 1), vertex(3, "snk", lang::Requirement::CO),
                         vertex(4, "odd", lang::Requirement::CO)},
                        {edge(0, 1), edge(0, 2), edge(1, 3), edge(2, 3), edge(3, 4)});
  for (lang::RtgEdge& e : rtg.edges) e.pipe = e.to == 3 ? "small" : e.to == 4 ? "unmeasured" : "data";
  for (lang::RtgVertex& v : rtg.vertices) {
    v.fingerprint = "f";
    v.features = {{"arith_ops", 10}};
  }
  const lang::RunProfile p =
      profileOf({instance("src", 0, "h", "cpu", "x", 1.0), instance("work", 0, "h", "cpu", "x", 1.0),
                 instance("work", 1, "h", "cpu", "x", 1.0), instance("snk", 0, "h", "cpu", "x", 1.0),
                 instance("odd", 0, "h", "cpu", "x", 1.0)});
  ProfileRunRecord run;
  std::vector<std::string> notes;
  std::string error;
  ASSERT_TRUE(samplesFromProfile(p, "p.json", Cluster{}, &rtg, run, notes, error)) << error;
  ASSERT_EQ(run.samples.size(), 5u);
  EXPECT_EQ(run.samples[0].features, R"({"arith_ops":10.0,"message_bytes_in":0.0,"message_bytes_out":64.0})");
  EXPECT_EQ(run.samples[1].features, R"({"arith_ops":10.0,"message_bytes_in":64.0,"message_bytes_out":8.0})");
  EXPECT_EQ(run.samples[2].features, run.samples[1].features);
  // snk writes a pipe the run did not measure, and odd reads it: neither has message sizes.
  EXPECT_EQ(run.samples[3].features, R"({"arith_ops":10.0})");
  EXPECT_EQ(run.samples[4].features, R"({"arith_ops":10.0})");
}

// A profile is checked before it is recorded or mapped with (issue 36): each refusal names what is wrong.
TEST(SamplesFromProfile, RefusesWhatNoRunMeasures) {
  lang::Rtg rtg = rtgOf({vertex(0, "src", lang::Requirement::CO), vertex(1, "work", lang::Requirement::CO),
                         vertex(2, "work", lang::Requirement::CO, 1.0, 1)},
                        {edge(0, 1), edge(0, 2)});
  for (lang::RtgEdge& e : rtg.edges) e.pipe = "data";
  rtg.program = "app";
  auto refusal = [&](const lang::RunProfile& p, const lang::Rtg* with) {
    ProfileRunRecord run;
    std::vector<std::string> notes;
    std::string error;
    EXPECT_FALSE(samplesFromProfile(p, "p.json", Cluster{}, with, run, notes, error));
    return error;
  };
  const auto fine = [] {
    lang::RunProfile p = profileOf({instance("src", 0, "h", "cpu", "x", 1.0), instance("work", 0, "h", "cpu", "x", 1.0),
                                    instance("work", 1, "h", "cpu", "x", 1.0)});
    p.pipes.pop_back();  // "data" only, the RTG's one pipe
    return p;
  };
  lang::RunProfile p = fine();
  p.instances[0].computeSeconds = 1e308;
  EXPECT_EQ(refusal(p, nullptr),
            "p.json: instance 'src' replica 0: compute_s 1e+308 is not a time a run takes (0 to 3.1536e+07 s)");
  p = fine();
  p.instances[1].readWaitSeconds = std::nan("");
  EXPECT_NE(refusal(p, nullptr).find("read_wait_s nan is not a time"), std::string::npos);
  p = fine();
  p.instances.push_back(p.instances[1]);
  EXPECT_EQ(refusal(p, nullptr), "p.json: instance 'work' replica 0 appears twice");
  // Issue 36, item 2: no instance's body takes longer than the run (the profile's wall_s).
  p = fine();
  p.wallSeconds = 2.0;
  p.instances[1].computeSeconds = 1.5;
  p.instances[1].readWaitSeconds = 1.0;
  EXPECT_EQ(refusal(p, nullptr), "p.json: instance 'work' replica 0: 2.5 s in its body (compute_s + read_wait_s + "
                                 "write_wait_s) is longer than the run, whose wall_s is 2 s");
  p = fine();
  p.instances[2].replica = 99;
  EXPECT_EQ(refusal(p, &rtg),
            "p.json: instance 'work' replica 99: vnode 'work' has 2 replica(s) in the RTG of program 'app'");
  p = fine();
  p.pipes.push_back(p.pipes[0]);
  EXPECT_EQ(refusal(p, nullptr), "p.json: pipe 'data' appears twice");
  p = fine();
  p.pipes.push_back({"elsewhere", 1, 8});
  EXPECT_EQ(refusal(p, &rtg), "p.json: pipe 'elsewhere' is not in the RTG of program 'app'");

  // A run whose pipes carried no message is recorded without costs: its times per message are undefined.
  p = fine();
  p.pipes[0].messages = 0;
  ProfileRunRecord run;
  std::vector<std::string> notes;
  std::string error;
  ASSERT_TRUE(samplesFromProfile(p, "p.json", Cluster{}, &rtg, run, notes, error)) << error;
  EXPECT_TRUE(run.samples.empty());
  EXPECT_EQ(run.pipes.size(), 1u);
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(),
                          [](const std::string& n) { return n.find("carried no message") != std::string::npos; }));
}

// Whatever rows a history holds (an older version's, a hand edit's), reading it never crashes: a work
// that is not a finite positive number is named and left out, the rest estimated as before.
TEST(CostHistory, RowsThatAreNotMeasurementsAreIgnoredAndNamed) {
  std::vector<CostSample> samples = {sample("stage", 1, 0.01), sample("stage", 2, 1e308, 10.0), sample("stage", 3, 0.0),
                                     sample("lost", 4, std::nan("")), sample("stage", 5, 1e308)};
  const CostHistory history(samples, {});
  const CostHistory::Entry* stage = history.find("app", "stage", "f", "cpu");
  ASSERT_NE(stage, nullptr);
  EXPECT_DOUBLE_EQ(stage->work.value, 0.01);
  EXPECT_EQ(history.find("app", "lost", "f", "cpu"), nullptr);
  ASSERT_EQ(history.ignored().size(), 4u);
  EXPECT_EQ(history.ignored()[0],
            "run 2: vnode 'stage' replica 0: work per message inf is not a measurement (a positive time of at most a "
            "year); ignored");
  EXPECT_NE(history.ignored()[3].find("run 5: vnode 'stage' replica 0: work per message 1e+308"), std::string::npos);
  EXPECT_EQ(robustEstimate({1.0, std::numeric_limits<double>::infinity(), 1.0}).value, 1.0);
}

TEST(CostHistory, ReplicasShareTheVnodesWorkAndGpuModelsTransferBySpeed) {
  // Run 1: 'stage' as 2 replicas, each 0.01 s/message at speed 1 -> the VNODE's work 0.02 per message.
  // Run 2: 'stage' as 1 replica at 0.01 s/message on a speed-2 CPU -> work 0.02 as well.
  // 'k' on a GPU: 0.004 s/message at speed 0.5 and 0.002 s/message at speed 1.0 -> work 0.002 both.
  std::vector<CostSample> samples = {sample("stage", 1, 0.01), sample("stage", 1, 0.01), sample("stage", 2, 0.01, 2.0),
                                     sample("k", 1, 0.004, 0.5, "gpu"), sample("k", 2, 0.002, 1.0, "gpu")};
  samples[0].replicas = samples[1].replicas = 2;
  samples[1].replica = 1;
  const CostHistory history(samples, {PipeSample{1, "app", "data", 10, 640}, PipeSample{2, "app", "data", 20, 1280}});
  const CostHistory::Entry* stage = history.find("app", "stage", "f", "cpu");
  ASSERT_NE(stage, nullptr);
  EXPECT_DOUBLE_EQ(stage->work.value, 0.02);
  EXPECT_EQ(stage->runs, 2);
  const CostHistory::Entry* k = history.find("app", "k", "f", "gpu");
  ASSERT_NE(k, nullptr);
  EXPECT_DOUBLE_EQ(k->work.value, 0.002);
  EXPECT_EQ(history.find("app", "k", "f", "cpu"), nullptr);
  EXPECT_EQ(history.find("app", "stage", "changed", "cpu"), nullptr);
  EXPECT_EQ(history.otherFingerprints("app", "stage", "changed"), std::vector<std::string>{"f"});
  ASSERT_TRUE(history.bytesPerMessage("app", "data"));
  EXPECT_DOUBLE_EQ(history.bytesPerMessage("app", "data")->value, 64.0);
}

// Features of a VNODE that costs `work`: its arithmetic grows with the work, the rest is noise-free.
std::string featuresFor(double work) {
  return "{\"arith_ops\": " + std::to_string(work * 1e6) + ", \"memory_ops\": " + std::to_string(work * 5e5) +
         ", \"loop_depth\": 2}";
}

TEST(CostPredictor, NeighboursInFeatureSpacePredictTheCost) {
  std::vector<CostSample> samples;
  const double works[] = {1e-4, 2e-4, 4e-4, 8e-4, 1.6e-3, 3.2e-3, 6.4e-3, 1.28e-2};
  for (int i = 0; i < 8; ++i)
    samples.push_back(sample("v" + std::to_string(i), 1, works[i], 1.0, "cpu", featuresFor(works[i]), "lib"));
  const CostHistory history(samples, {});
  const CostPredictor predictor(history);
  std::string why;
  // Code that looks like the 8e-4 VNODE: the nearest is it, then its neighbours at 4e-4 and 1.6e-3; the
  // 1/rank weights and the log-space mean keep the prediction within a factor of 2 of 8e-4.
  lang::CodeFeatures query = {{"arith_ops", 800}, {"memory_ops", 400}, {"loop_depth", 2}};
  const auto p = predictor.predict(query, "cpu", "app", "new", why);
  ASSERT_TRUE(p) << why;
  EXPECT_EQ(p->nearest.front(), "lib/v3");
  EXPECT_GT(p->work, 4e-4);
  EXPECT_LT(p->work, 1.6e-3);
  // Larger code predicts more.
  const auto bigger =
      predictor.predict({{"arith_ops", 12800}, {"memory_ops", 6400}, {"loop_depth", 2}}, "cpu", "", "", why);
  ASSERT_TRUE(bigger);
  EXPECT_GT(bigger->work, p->work);
  // No GPU history, no features: no prediction, and why.
  EXPECT_FALSE(predictor.predict(query, "gpu", "", "", why));
  EXPECT_NE(why.find("the history has 0 measured VNODE(s) with code features on a gpu, fewer than 3"),
            std::string::npos)
      << why;
  EXPECT_FALSE(predictor.predict({}, "cpu", "", "", why));
  EXPECT_EQ(why, "the RTG has no code features for it");
}

// Twelve VNODEs of identical code whose cost follows the size of their messages: 1 µs per KB.
std::vector<CostSample> sizedHistory(int withSizes = 12) {
  std::vector<CostSample> samples;
  for (int i = 0; i < 12; ++i) {
    const double kilobytes = std::ldexp(1.0, i);
    std::string features = R"({"arith_ops": 100, "memory_ops": 50, "loop_depth": 1)";
    if (i < withSizes)
      features += ", \"message_bytes_in\": " + std::to_string(kilobytes * 1000) +
                  ", \"message_bytes_out\": " + std::to_string(kilobytes * 1000);
    samples.push_back(sample("v" + std::to_string(i), 1, kilobytes * 1e-6, 1.0, "cpu", features + "}", "lib"));
  }
  return samples;
}

TEST(CostPredictor, MeasuredMessageSizesCountWhereTheQueryAndTheHistoryHaveThem) {
  const CostHistory history(sizedHistory(), {});
  const CostPredictor predictor(history);
  std::string why;
  const lang::CodeFeatures code = {{"arith_ops", 100}, {"memory_ops", 50}, {"loop_depth", 1}};
  lang::CodeFeatures sized = code;
  sized[kMessageBytesIn] = sized[kMessageBytesOut] = 32000;  // v5's messages: 32 µs
  const auto p = predictor.predict(sized, "cpu", "app", "new", why);
  ASSERT_TRUE(p) << why;
  EXPECT_EQ(p->nearest.front(), "lib/v5");
  EXPECT_TRUE(p->messageSizes);
  EXPECT_GT(p->work, 16e-6);
  EXPECT_LT(p->work, 64e-6);
  // Larger messages predict more.
  sized[kMessageBytesIn] = sized[kMessageBytesOut] = 512000;
  const auto larger = predictor.predict(sized, "cpu", "app", "new", why);
  ASSERT_TRUE(larger) << why;
  EXPECT_EQ(larger->nearest.front(), "lib/v9");
  // A program never run has no sizes: the code alone, which ties every entry (the nearest by key).
  const auto unsized = predictor.predict(code, "cpu", "app", "new", why);
  ASSERT_TRUE(unsized) << why;
  EXPECT_EQ(unsized->nearest.front(), "lib/v0");
  EXPECT_FALSE(unsized->messageSizes);
  // A history where fewer than k = 10 entries have sizes: the query's sizes do not count, and the
  // entries without them stay neighbours.
  const CostHistory few(sizedHistory(2), {});
  const auto fromFew = CostPredictor(few).predict(sized, "cpu", "app", "new", why);
  ASSERT_TRUE(fromFew) << why;
  EXPECT_DOUBLE_EQ(fromFew->work, CostPredictor(few).predict(code, "cpu", "app", "new", why)->work);
  EXPECT_EQ(fromFew->nearest.size(), 10u);
  EXPECT_FALSE(fromFew->messageSizes);
}

// The mapper predicts with the sizes the history measured for the vertex's pipes, when it has them all.
TEST(ResolveCosts, APredictionTakesTheMeasuredSizesOfTheVertexsMessages) {
  lang::Rtg rtg = rtgOf({vertex(0, "src", lang::Requirement::CO), vertex(1, "feat", lang::Requirement::CO),
                         vertex(2, "snk", lang::Requirement::CO)},
                        {edge(0, 1), edge(1, 2)});
  rtg.edges[0].pipe = "data";
  rtg.edges[1].pipe = "results";
  for (lang::RtgVertex& v : rtg.vertices) {
    v.fingerprint = "f";
    v.costDeclared = false;
  }
  rtg.vertices[1].features = {{"arith_ops", 100}, {"memory_ops", 50}, {"loop_depth", 1}};
  std::vector<CostSample> samples = sizedHistory();
  samples.push_back(sample("src", 2, 1e-6));
  samples.push_back(sample("snk", 2, 1e-6));
  CostInputs inputs;
  // 40,000 bytes in 10 messages each way: 4 KB, as lib/v2's.
  const CostHistory measured(samples,
                             {PipeSample{2, "app", "data", 10, 40000}, PipeSample{2, "app", "results", 10, 40000}});
  const CostPredictor predictor(measured);
  inputs.history = &measured;
  inputs.predictor = &predictor;
  const CostResolution r = resolveCosts(rtg, inputs);
  ASSERT_EQ(r.vertices[1].onCpu.origin, CostOrigin::Predicted);
  EXPECT_NE(r.vertices[1].onCpu.detail.find("on code features and measured message sizes, nearest lib/v2,"),
            std::string::npos)
      << r.vertices[1].onCpu.detail;
  // Without the pipe's measurement the code alone decides.
  const CostHistory unmeasured(samples, {});
  const CostPredictor codeOnly(unmeasured);
  inputs.history = &unmeasured;
  inputs.predictor = &codeOnly;
  const CostResolution u = resolveCosts(rtg, inputs);
  ASSERT_EQ(u.vertices[1].onCpu.origin, CostOrigin::Predicted);
  EXPECT_NE(u.vertices[1].onCpu.detail.find("on code features, nearest lib/v0,"), std::string::npos)
      << u.vertices[1].onCpu.detail;
}

TEST(ResolveCosts, ProfileThenHistoryThenClauseThenPredictionThenOne) {
  // Vertices: measured in the profile and the history; only in the history; a clause; features only;
  // nothing at all; and a CG vertex measured on the host path only.
  lang::Rtg rtg = rtgOf({vertex(0, "both", lang::Requirement::CO), vertex(1, "hist", lang::Requirement::CO),
                         vertex(2, "clause", lang::Requirement::CO, 7.0), vertex(3, "feat", lang::Requirement::CO),
                         vertex(4, "none", lang::Requirement::CO), vertex(5, "cg", lang::Requirement::CG, 3.0)},
                        {edge(0, 1)});
  for (lang::RtgVertex& v : rtg.vertices) {
    v.fingerprint = "f";
    v.costDeclared = v.vnode == "clause" || v.vnode == "cg";
  }
  rtg.edges[0].pipe = "data";
  rtg.vertices[3].features = {{"arith_ops", 800}, {"memory_ops", 400}, {"loop_depth", 2}};
  std::vector<CostSample> lib;
  const double works[] = {1e-4, 8e-4, 6.4e-3};
  for (int i = 0; i < 3; ++i)
    lib.push_back(sample("v" + std::to_string(i), 1, works[i], 1.0, "cpu", featuresFor(works[i]), "lib"));
  std::vector<CostSample> all = lib;
  all.push_back(sample("both", 2, 0.5));
  all.push_back(sample("hist", 2, 0.25));
  all.push_back(sample("cg", 2, 0.125));
  const CostHistory history(all, {PipeSample{2, "app", "data", 10, 1000}});
  const CostHistory profile({sample("both", 3, 0.05)}, {});
  const CostPredictor predictor(history);
  CostInputs inputs;
  inputs.history = &history;
  inputs.profile = &profile;
  inputs.predictor = &predictor;
  const CostResolution r = resolveCosts(rtg, inputs);
  EXPECT_EQ(r.vertices[0].onCpu.origin, CostOrigin::Profile);
  EXPECT_DOUBLE_EQ(r.costed.vertices[0].cost, 0.05);
  EXPECT_EQ(r.vertices[1].onCpu.origin, CostOrigin::History);
  EXPECT_DOUBLE_EQ(r.costed.vertices[1].cost, 0.25);
  EXPECT_EQ(r.vertices[2].onCpu.origin, CostOrigin::Clause);
  EXPECT_DOUBLE_EQ(r.costed.vertices[2].cost, 7.0);
  EXPECT_EQ(r.vertices[3].onCpu.origin, CostOrigin::Predicted);
  EXPECT_GT(r.costed.vertices[3].cost, 1e-4);
  EXPECT_LT(r.costed.vertices[3].cost, 6.4e-3);
  EXPECT_EQ(r.vertices[4].onCpu.origin, CostOrigin::Default);
  EXPECT_DOUBLE_EQ(r.costed.vertices[4].cost, 1.0);
  // CG: its clause on a GPU, its measured host-path cost on a CPU.
  EXPECT_EQ(r.vertices[5].onGpu.origin, CostOrigin::Clause);
  EXPECT_DOUBLE_EQ(r.costed.vertices[5].cost, 3.0);
  EXPECT_EQ(r.vertices[5].onCpu.origin, CostOrigin::History);
  EXPECT_DOUBLE_EQ(r.hostCosts[5], 0.125);
  // The measured pipe's bytes per message; mixing measured and default costs is pointed out.
  EXPECT_EQ(r.costed.edges[0].volume, std::optional<std::uint64_t>(100));
  EXPECT_EQ(r.edgeOrigins[0], "history");
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.back().find("1 vertex(es) have neither a measurement"), std::string::npos) << r.notes.back();
  EXPECT_EQ(describeCost(r.vertices[1].onCpu),
            "0.25 from the history (1 run, 1 of 1 samples, spread 0.0%, on cpu-model)");
}

TEST(ResolveCosts, HistoryOfChangedCodeIsNotUsedAndSaysSo) {
  lang::Rtg rtg = rtgOf({vertex(0, "src", lang::Requirement::CO)}, {});
  rtg.vertices[0].fingerprint = "new";
  rtg.vertices[0].costDeclared = false;
  const CostHistory history({sample("src", 1, 0.5)}, {});
  CostInputs inputs;
  inputs.history = &history;
  const CostResolution r = resolveCosts(rtg, inputs);
  EXPECT_EQ(r.vertices[0].onCpu.origin, CostOrigin::Default);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0], "note: vnode 'src': the history measured other code (fingerprint f, now new); not used");
}

TEST(ResolveCosts, MeasuredCostsPlaceAsTheTrueCostsWould) {
  // Four VNODEs of true work 1:2:4:8 on a speed-2 and a speed-1 node of one core each; the optimum puts
  // {w8, w2} on the fast node (5) and {w1, w4} on the slow one (5). Declared costs are all 1 (wrong);
  // measured ones are the truth with a few percent of noise.
  const double truth[] = {1, 2, 4, 8}, measured[] = {1.03, 1.9, 4.1, 7.7};
  std::vector<lang::RtgVertex> vertices;
  std::vector<CostSample> samples;
  for (int i = 0; i < 4; ++i) {
    const std::string name = "w" + std::to_string(static_cast<int>(truth[i]));
    vertices.push_back(vertex(i, name, lang::Requirement::CO, truth[i]));
    samples.push_back(sample(name, 1, measured[i] * 1e-3));
  }
  const lang::Rtg trueRtg = rtgOf(vertices, {edge(0, 1, 8), edge(1, 2, 8), edge(2, 3, 8)});
  lang::Rtg declared = trueRtg;
  for (lang::RtgVertex& v : declared.vertices) {
    v.cost = 1;
    v.costDeclared = false;
    v.fingerprint = "f";
  }
  Cluster cluster;
  cluster.nodes = {node("fast", 1, {}, 2.0), node("slow", 1, {}, 1.0)};
  MapSettings settings;
  MappingOutcome fromTruth, fromHistory;
  std::string error;
  ASSERT_TRUE(planMapping(trueRtg, cluster, settings, fromTruth, error)) << error;
  const CostHistory history(samples, {});
  CostInputs inputs;
  inputs.history = &history;
  const CostResolution costs = resolveCosts(declared, inputs);
  settings.costs = &costs;
  ASSERT_TRUE(planMapping(costs.costed, cluster, settings, fromHistory, error)) << error;
  EXPECT_EQ(fromHistory.result.nodeOf, fromTruth.result.nodeOf);
  const int fast = fromTruth.problem.nodes[0].host == "fast" ? 0 : 1;
  EXPECT_EQ(fromTruth.result.nodeOf[3], fast);
  EXPECT_EQ(fromTruth.result.nodeOf[1], fast);
}

}  // namespace
}  // namespace dispar::streammap::testing
