// The run profile format (dispar_lang/RunProfile.h; docs/runtime.md, "Run profiles"): what the writer
// writes the reader reads back, profiles of older runtimes (without the fields added since) still
// read, and every malformed field is refused naming it.
#include "dispar_lang/RunProfile.h"

#include <gtest/gtest.h>

namespace dispar::lang {
namespace {

RunProfile sampleProfile() {
  RunProfile p;
  p.program = "app";
  p.binary = "/home/u/app";
  ProfiledInstance i;
  i.rank = 1;
  i.vnode = "square";
  i.replica = 2;
  i.host = "n1";
  i.device = "host-path";
  i.deviceModel = "AMD EPYC 7B13";
  i.fingerprint = "0123456789abcdef";
  i.computeSeconds = 0.5;
  i.readWaitSeconds = 0.25;
  i.writeWaitSeconds = 0.125;
  i.cpuSeconds = 0.75;
  i.computeCpuSeconds = 0.5;
  ProfiledInstance g = i;
  g.rank = 2;
  g.replica = 3;
  g.device = "gpu";
  g.deviceModel = "NVIDIA H100 80GB HBM3";
  g.computeCpuSeconds.reset();
  g.gpu = ProfiledGpu{132, 1980000, 9, 0};
  p.instances = {i, g};
  p.pipes = {{"samples", 64, 262144}, {"energies", 64, 512}};
  p.kernels = {{1, "square", 2, "scale", "app.dsp:41:3", "gpu", 64, 0.0125}};
  p.splitSites = {{1, "app.dsp:30#1", 1e6, 2.5e5}};
  return p;
}

TEST(RunProfile, WhatIsWrittenReadsBack) {
  const RunProfile p = sampleProfile();
  const std::string text = writeRunProfileJson(p);
  RunProfile back;
  std::string error;
  ASSERT_TRUE(parseRunProfileJson(text, back, error)) << error;
  EXPECT_EQ(writeRunProfileJson(back), text);
  EXPECT_EQ(back.instances[0].deviceModel, "AMD EPYC 7B13");
  EXPECT_EQ(back.instances[0].computeCpuSeconds, std::optional<double>(0.5));
  EXPECT_FALSE(back.instances[0].gpu);
  ASSERT_TRUE(back.instances[1].gpu);
  EXPECT_EQ(back.instances[1].gpu->multiprocessors, 132);
  EXPECT_EQ(back.instances[1].gpu->clockKHz, 1980000);
  EXPECT_EQ(back.instances[1].gpu->ccMajor, 9);
  EXPECT_EQ(back.instances[1].gpu->ccMinor, 0);
  EXPECT_EQ(back.periodMessages(), 64u);
  ASSERT_EQ(back.kernels.size(), 1u);
  EXPECT_EQ(back.kernels[0].site, "app.dsp:41:3");
  EXPECT_EQ(back.kernels[0].launches, 64u);
}

TEST(RunProfile, AnIncompleteProfileKeepsItsFailure) {
  RunProfile p = sampleProfile();
  p.complete = false;
  p.failure = "vnode 'square' (replica 2, rank 1) failed: boom";
  RunProfile back;
  std::string error;
  ASSERT_TRUE(parseRunProfileJson(writeRunProfileJson(p), back, error)) << error;
  EXPECT_FALSE(back.complete);
  EXPECT_EQ(back.failure, p.failure);
}

TEST(RunProfile, AProfileOfASimulatedRunSaysSo) {
  RunProfile p = sampleProfile();
  EXPECT_EQ(writeRunProfileJson(p).find("simulated"), std::string::npos) << "written only when true";
  p.simulated = true;
  const std::string text = writeRunProfileJson(p);
  RunProfile back;
  std::string error;
  ASSERT_TRUE(parseRunProfileJson(text, back, error)) << error;
  EXPECT_TRUE(back.simulated);
  EXPECT_EQ(writeRunProfileJson(back), text);
  const std::size_t at = text.find("\"simulated\": true");
  ASSERT_NE(at, std::string::npos) << text;
  std::string malformed = text;
  malformed.replace(at, std::string("\"simulated\": true").size(), "\"simulated\": \"yes\"");
  EXPECT_FALSE(parseRunProfileJson(malformed, back, error));
  EXPECT_EQ(error, "profile.simulated: expected true or false, got \"yes\"");
}

TEST(RunProfile, ProfilesOfOlderRuntimesRead) {
  // Version 1 as first written: no binary, device_model, fingerprint, compute_cpu_s, gpu or split_sites.
  RunProfile back;
  std::string error;
  ASSERT_TRUE(parseRunProfileJson(R"({"format": "dispar-profile", "version": 1, "program": "app", "complete": true,
    "instances": [{"rank": 0, "vnode": "src", "replica": 0, "host": "h", "device": "cpu", "compute_s": 1.5,
                   "read_wait_s": 0, "write_wait_s": 0.5, "cpu_s": 2}],
    "pipes": [{"pipe": "p", "messages": 3, "bytes": 12}], "kernels": []})",
                                  back, error))
      << error;
  EXPECT_TRUE(back.binary.empty());
  EXPECT_FALSE(back.simulated);
  EXPECT_FALSE(back.instances[0].computeCpuSeconds);
  EXPECT_EQ(back.periodMessages(), 3u);
}

TEST(RunProfile, MalformedFieldsAreNamed) {
  const std::string good = writeRunProfileJson(sampleProfile());
  const auto refused = [](const std::string& text) {
    RunProfile out;
    std::string error;
    EXPECT_FALSE(parseRunProfileJson(text, out, error));
    return error;
  };
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  EXPECT_EQ(refused(replaced("\"dispar-profile\"", "\"dispar-rtg\"")),
            "profile.format: expected \"dispar-profile\", got \"dispar-rtg\"");
  EXPECT_EQ(refused(replaced("\"version\": 1", "\"version\": 2")),
            "profile.version: unsupported format version 2 (this tool reads version 1)");
  EXPECT_EQ(refused(replaced("\"compute_s\": 0.5", "\"compute_s\": -0.5")),
            "profile.instances[0].compute_s: must not be negative, got -0.5");
  EXPECT_EQ(refused(replaced("\"device\": \"host-path\"", "\"device\": \"fpga\"")),
            "profile.instances[0].device: expected \"cpu\" or \"gpu\" or \"host-path\", got \"fpga\"");
  EXPECT_EQ(refused(replaced("\"messages\": 64", "\"messages\": 1.5")),
            "profile.pipes[0].messages: expected an integer, got 1.5");
  EXPECT_EQ(refused(replaced("\"complete\": true", "\"complete\": 1")),
            "profile.complete: expected true or false, got 1");
  EXPECT_EQ(refused(replaced("\"launches\": 64", "\"launches\": -1")),
            "profile.kernels[0].launches: must be at least 0, got -1");
  EXPECT_EQ(refused(replaced("\"compute_capability\": \"9.0\"", "\"compute_capability\": \"9\"")),
            "profile.instances[1].gpu.compute_capability: expected \"MAJOR.MINOR\", got \"9\"");
  EXPECT_EQ(refused(replaced("\"multiprocessors\": 132", "\"multiprocessors\": -1")),
            "profile.instances[1].gpu.multiprocessors: must be at least 0, got -1");
  EXPECT_EQ(refused(replaced("\"gpu\": {", "\"gpu\": 7, \"x\": {")),
            "profile.instances[1].gpu: expected an object, got 7");
  EXPECT_NE(refused("{\"format\": ").find("1:"), std::string::npos);
}

}  // namespace
}  // namespace dispar::lang
