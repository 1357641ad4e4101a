// Device selection without a GPU: architectures, the map file, DISPAR_* settings, and every rule and
// message of selectDevice with a made-up device list.
#include <dispar/gpu/CudaArch.h>
#include <dispar/gpu/MapFile.h>
#include <dispar/gpu/Selection.h>
#include <dispar/gpu/Settings.h>
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace dispar::gpu;

// --- Architectures ---------------------------------------------------------------------------------

TEST(CudaArch, ParsesNvccNames) {
  const auto sm80 = parseCudaArch("sm_80");
  ASSERT_TRUE(sm80);
  EXPECT_EQ(sm80->kind, CudaArch::Kind::Cubin);
  EXPECT_EQ(sm80->major, 8);
  EXPECT_EQ(sm80->minor, 0);
  const auto sm100f = parseCudaArch("sm_100f");
  ASSERT_TRUE(sm100f);
  EXPECT_EQ(sm100f->major, 10);
  EXPECT_EQ(sm100f->variant, 'f');
  const auto ptx = parseCudaArch("compute_90a");
  ASSERT_TRUE(ptx);
  EXPECT_EQ(ptx->kind, CudaArch::Kind::Ptx);
  EXPECT_EQ(ptx->variant, 'a');
  for (const char* bad : {"sm80", "sm_8", "sm_", "compute_x0", "sm_08", "sm_1000", "gfx90a", ""})
    EXPECT_FALSE(parseCudaArch(bad)) << bad;
}

TEST(CudaArch, CubinRunsOnSameMajorWithMinorAtLeast) {
  const CudaArch sm80 = *parseCudaArch("sm_80");
  EXPECT_TRUE(archRunsOn(sm80, 8, 0));
  EXPECT_TRUE(archRunsOn(sm80, 8, 6));
  EXPECT_FALSE(archRunsOn(sm80, 9, 0));
  EXPECT_FALSE(archRunsOn(sm80, 7, 5));
  const CudaArch sm86 = *parseCudaArch("sm_86");
  EXPECT_FALSE(archRunsOn(sm86, 8, 0));
  const CudaArch sm90a = *parseCudaArch("sm_90a");
  EXPECT_TRUE(archRunsOn(sm90a, 9, 0));
  EXPECT_FALSE(archRunsOn(sm90a, 9, 1));
}

TEST(CudaArch, PtxJitsOnAnyNewerDevice) {
  const CudaArch compute70 = *parseCudaArch("compute_70");
  EXPECT_TRUE(archRunsOn(compute70, 7, 0));
  EXPECT_TRUE(archRunsOn(compute70, 9, 0));
  EXPECT_TRUE(archRunsOn(compute70, 12, 0));
  EXPECT_FALSE(archRunsOn(compute70, 6, 1));
  EXPECT_FALSE(archRunsOn(*parseCudaArch("compute_90a"), 10, 0));
  EXPECT_TRUE(anyArchRunsOn({"sm_80", "compute_90"}, 9, 0));
  EXPECT_TRUE(anyArchRunsOn({"sm_80", "compute_90"}, 8, 9));
  EXPECT_FALSE(anyArchRunsOn({"sm_80", "compute_90"}, 7, 5));
  EXPECT_FALSE(anyArchRunsOn({"bogus"}, 9, 0));
  EXPECT_EQ(invalidArchs({"sm_80", "bogus"}), std::vector<std::string>{"bogus"});
}

// --- Map file ----------------------------------------------------------------------------------------

const char* const kMap = R"({
  "format": "dispar-map", "version": 1, "program": "fir", "unknown_field": [1, 2],
  "ranks": [
    {"rank": 0, "vnode": "source", "replica": 0, "type": "CO", "host": "node1", "device": null, "mode": "cpu", "time": 0.5},
    {"rank": 1, "vnode": "fir", "replica": 0, "type": "CG", "host": "node1", "device": 1, "mode": "gpu", "memory": null},
    {"rank": 2, "vnode": "fir", "replica": 1, "type": "CG", "host": "node2", "device": null, "mode": "host-fallback"}
  ]
})";

TEST(MapFile, ReadsRanksAndIgnoresUnknownFields) {
  const MapFile map = parseMapFile(kMap, "fir.map.json");
  ASSERT_EQ(map.ranks.size(), 3u);
  EXPECT_EQ(map.ranks[1].vnode, "fir");
  EXPECT_EQ(map.ranks[1].type, "CG");
  EXPECT_EQ(map.ranks[1].host, "node1");
  EXPECT_EQ(map.ranks[1].device, 1);
  EXPECT_EQ(map.ranks[1].mode, "gpu");
  EXPECT_FALSE(map.ranks[2].device);
  EXPECT_EQ(map.ranks[2].replica, 1);
  EXPECT_EQ(map.program, "fir");
  EXPECT_EQ(map.instance("fir", 2), nullptr);
  EXPECT_EQ(map.instance("fir", 1)->mode, "host-fallback");
}

std::string parseError(const std::string& text) {
  try {
    parseMapFile(text, "m.json");
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(MapFile, BadInputNamesFileAndField) {
  EXPECT_NE(parseError("{").find("mapping file 'm.json': not valid JSON"), std::string::npos);
  EXPECT_EQ(parseError(R"({"format": "other", "ranks": []})"),
            "mapping file 'm.json': map.format: expected \"dispar-map\"");
  EXPECT_EQ(parseError(R"({"format": "dispar-map"})"), "mapping file 'm.json': map: missing \"ranks\"");
  EXPECT_EQ(parseError(R"({"format": "dispar-map", "ranks": [{"rank": 1}]})"),
            "mapping file 'm.json': ranks[0].vnode: missing");
  EXPECT_EQ(parseError(R"({"format": "dispar-map", "ranks": [{"rank": 1, "vnode": "a", "replica": 0, "type": "CO",
            "host": "h", "device": null, "mode": "cpu"}]})"),
            "mapping file 'm.json': ranks[0].rank: expected 0, got 1");
  // A rank may run several instances, on one host.
  EXPECT_EQ(parseError(R"({"format": "dispar-map", "ranks": [
            {"rank": 0, "vnode": "a", "replica": 0, "type": "CO", "host": "h", "device": null, "mode": "cpu"},
            {"rank": 0, "vnode": "b", "replica": 0, "type": "CO", "host": "h", "device": null, "mode": "cpu"},
            {"rank": 2, "vnode": "c", "replica": 0, "type": "CO", "host": "h", "device": null, "mode": "cpu"}]})"),
            "mapping file 'm.json': ranks[2].rank: expected 0 or 1, got 2");
  EXPECT_EQ(parseError(R"({"format": "dispar-map", "ranks": [
            {"rank": 0, "vnode": "a", "replica": 0, "type": "CO", "host": "h", "device": null, "mode": "cpu"},
            {"rank": 0, "vnode": "b", "replica": 0, "type": "CO", "host": "g", "device": null, "mode": "cpu"}]})"),
            "mapping file 'm.json': ranks[1].host: rank 0 is on host 'h', got 'g'");
  EXPECT_EQ(parseError(R"({"format": "dispar-map", "ranks": [{"rank": 0, "vnode": "a", "replica": 0, "type": "CG",
            "host": "h", "device": "one", "mode": "gpu"}]})"),
            "mapping file 'm.json': ranks[0].device: expected an integer, got \"one\"");
  // Numbers beyond double range are named by their field, not left to the JSON library's exception.
  EXPECT_EQ(parseError(R"({"format": "dispar-map", "ranks": [{"rank": 0, "vnode": "a", "replica": 0, "type": "CG",
            "host": "h", "device": 1e999, "mode": "gpu"}]})"),
            "mapping file 'm.json': not valid JSON: ranks[0].device: number out of range, got 1e999");
  EXPECT_EQ(parseError(R"({"format": "dispar-map", "ranks": [{"rank": 0, "vnode": "a", "replica": 0, "type": "CG",
            "host": "h", "device": null, "mode": "gpu"}]})"),
            "mapping file 'm.json': ranks[0].device: mode \"gpu\" needs a device index");
  EXPECT_EQ(parseError(R"({"format": "dispar-map", "ranks": [{"rank": 0, "vnode": "a", "replica": 0, "type": "XX",
            "host": "h", "device": null, "mode": "cpu"}]})"),
            "mapping file 'm.json': ranks[0].type: expected \"CO\" or \"CG\", got \"XX\"");
}

TEST(MapFile, MissingFileIsAnErrorNamingIt) {
  try {
    readMapFile("/nonexistent/app.map.json");
    FAIL() << "no error";
  } catch (const std::runtime_error& error) {
    EXPECT_STREQ(error.what(), "mapping file '/nonexistent/app.map.json': cannot be read");
  }
}

TEST(MapFile, LocationIsTheEnvironmentOrBesideTheBinary) {
  const MapFileLocation beside = locateMapFile(nullptr, "/opt/app/fir");
  EXPECT_EQ(beside.path, "/opt/app/fir.map.json");
  EXPECT_FALSE(beside.required);
  EXPECT_FALSE(locateMapFile("", "/opt/app/fir").required);
  const MapFileLocation named = locateMapFile("/tmp/x.json", "/opt/app/fir");
  EXPECT_EQ(named.path, "/tmp/x.json");
  EXPECT_TRUE(named.required);
}

// --- Settings ----------------------------------------------------------------------------------------

TEST(Settings, DeviceRequest) {
  EXPECT_EQ(parseDeviceRequest(nullptr).kind, DeviceRequest::Kind::Auto);
  EXPECT_EQ(parseDeviceRequest("").kind, DeviceRequest::Kind::Auto);
  EXPECT_EQ(parseDeviceRequest("host").kind, DeviceRequest::Kind::Host);
  const DeviceRequest two = parseDeviceRequest("2");
  EXPECT_EQ(two.kind, DeviceRequest::Kind::Index);
  EXPECT_EQ(two.index, 2);
  for (const char* bad : {"-1", "gpu", "1x", "HOST"}) {
    try {
      parseDeviceRequest(bad);
      ADD_FAILURE() << bad;
    } catch (const std::runtime_error& error) {
      EXPECT_EQ(std::string(error.what()),
                std::string("DISPAR_DEVICE must be 'host' or a device index, got '") + bad + "'");
    }
  }
}

TEST(Settings, ChunkBytes) {
  EXPECT_EQ(parseChunkBytes(nullptr), 1u << 20);
  EXPECT_EQ(parseChunkBytes("65536"), 65536u);
  EXPECT_EQ(parseChunkBytes("256K"), 256u << 10);
  EXPECT_EQ(parseChunkBytes("4M"), 4u << 20);
  for (const char* bad : {"0", "100", "-4096", "1G", "2048M", "12q", "99999999999999999999999"})
    EXPECT_THROW(parseChunkBytes(bad), std::runtime_error) << bad;
}

TEST(Settings, CudaAwareMpiAndVerbose) {
  EXPECT_TRUE(parseCudaAwareMpi(nullptr, true));
  EXPECT_FALSE(parseCudaAwareMpi(nullptr, false));
  EXPECT_TRUE(parseCudaAwareMpi("1", false));
  EXPECT_FALSE(parseCudaAwareMpi("0", true));
  EXPECT_THROW(parseCudaAwareMpi("yes", false), std::runtime_error);
  EXPECT_TRUE(parseVerbose("1"));
  EXPECT_FALSE(parseVerbose("0"));
  EXPECT_FALSE(parseVerbose(nullptr));
}

TEST(Settings, SlurmLocalIdAndVisibleDevices) {
  EXPECT_EQ(parseLocalId(nullptr), std::nullopt);
  EXPECT_EQ(parseLocalId(""), std::nullopt);
  EXPECT_EQ(parseLocalId("3"), 3);
  EXPECT_THROW(parseLocalId("-1"), std::runtime_error);
  EXPECT_THROW(parseLocalId("x"), std::runtime_error);
  EXPECT_EQ(parseVisibleDevices(nullptr), std::nullopt);
  EXPECT_EQ(parseVisibleDevices("2,0"), (std::vector<int>{2, 0}));
  EXPECT_EQ(parseVisibleDevices("1"), (std::vector<int>{1}));
  // UUIDs and MIG names cannot be translated: CUDA's numbering is taken as the node's.
  EXPECT_EQ(parseVisibleDevices("GPU-8f4a2c1e-0000"), std::nullopt);
  EXPECT_EQ(parseVisibleDevices("MIG-GPU-1/0/0"), std::nullopt);
  EXPECT_EQ(parseVisibleDevices("0,"), std::nullopt);
}

// --- Selection ---------------------------------------------------------------------------------------

const VisibleDevice kA100{"NVIDIA A100", 8, 0};
const VisibleDevice kH100{"NVIDIA H100", 9, 0};

SelectionInput fir(int rank = 1) {
  SelectionInput input;
  input.vnode = "fir";
  input.rank = rank;
  input.host = "node1";
  input.devices = {kA100, kH100};
  input.compiledArchs = {"sm_80", "sm_90"};
  return input;
}

TEST(Selection, MappingGivesTheDevice) {
  const MapFile map = parseMapFile(kMap, "fir.map.json");
  SelectionInput input = fir();
  input.mapping = &map;
  const Selection s = selectDevice(input);
  EXPECT_EQ(s.error, "");
  EXPECT_FALSE(s.onHost);
  EXPECT_EQ(s.device, 1);
  EXPECT_EQ(s.reason, "GPU 1 (NVIDIA H100, compute capability 9.0), from the mapping file 'fir.map.json'");
  EXPECT_TRUE(s.warnings.empty());
}

TEST(Selection, MappedGpuIsFoundAmongTheVisibleOnes) {
  // srun gave this task the node's GPUs 3 and 1 (CUDA_VISIBLE_DEVICES=3,1): the node's GPU 1 of the
  // mapping is CUDA device 1 here.
  const MapFile map = parseMapFile(kMap, "fir.map.json");
  SelectionInput input = fir();
  input.mapping = &map;
  input.visibleOrdinals = std::vector<int>{3, 1};
  Selection s = selectDevice(input);
  EXPECT_EQ(s.error, "");
  EXPECT_EQ(s.device, 1);
  EXPECT_EQ(s.reason, "GPU 1 (NVIDIA H100, compute capability 9.0), GPU 1 of the node from the mapping file "
                      "'fir.map.json', CUDA device 1 under CUDA_VISIBLE_DEVICES");
  input.visibleOrdinals = std::vector<int>{0};
  s = selectDevice(input);
  EXPECT_EQ(s.error, "vnode 'fir' (rank 1) is mapped to GPU 1 of host 'node1' by the mapping file 'fir.map.json' "
                     "but CUDA_VISIBLE_DEVICES=0 hides it (was the job given that GPU?); remap inside the "
                     "allocation or run with DISPAR_DEVICE=host");
}

TEST(Selection, HostFallbackAndCpuModesRunOnTheHost) {
  const MapFile map = parseMapFile(kMap, "fir.map.json");
  SelectionInput input = fir(2);
  input.replica = 1;
  input.host = "node2";
  input.mapping = &map;
  Selection s = selectDevice(input);
  EXPECT_TRUE(s.onHost);
  EXPECT_EQ(s.reason, "host path, mode host-fallback in the mapping file 'fir.map.json'");
  input = fir(0);
  input.vnode = "source";
  input.mapping = &map;
  s = selectDevice(input);
  EXPECT_TRUE(s.onHost);
  EXPECT_EQ(s.reason, "host path, mode cpu in the mapping file 'fir.map.json'");
}

TEST(Selection, OtherHostInTheMappingIsAWarning) {
  const MapFile map = parseMapFile(kMap, "fir.map.json");
  SelectionInput input = fir();
  input.host = "node7";
  input.mapping = &map;
  const Selection s = selectDevice(input);
  EXPECT_EQ(s.error, "");
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0],
            "the mapping file 'fir.map.json' places vnode 'fir' (rank 1) on host 'node1' but it runs on host 'node7'");
  input.host = "node1.cluster.org";
  EXPECT_TRUE(selectDevice(input).warnings.empty());
  EXPECT_TRUE(sameHost("node1", "node1.cluster.org"));
  EXPECT_FALSE(sameHost("node1.a", "node1.b"));
  EXPECT_FALSE(sameHost("node1", "node10"));
}

TEST(Selection, MissingArchitectureFailsNamingBoth) {
  const MapFile map = parseMapFile(kMap, "fir.map.json");
  SelectionInput input = fir();
  input.mapping = &map;
  input.devices = {kH100, kA100};  // the mapping's GPU 1 is now the A100
  input.compiledArchs = {"sm_90"};
  const Selection s = selectDevice(input);
  EXPECT_EQ(
      s.error,
      "vnode 'fir' (rank 1) was given GPU 1 (NVIDIA A100, compute capability 8.0) but the program has kernels only "
      "for sm_90; rebuild with --cuda-arch=sm_80");
  input.compiledArchs = {"sm_90", "compute_80"};  // PTX the driver can compile for 8.0
  EXPECT_EQ(selectDevice(input).error, "");
}

TEST(Selection, UnseenDeviceFails) {
  const MapFile map = parseMapFile(kMap, "fir.map.json");
  SelectionInput input = fir();
  input.mapping = &map;
  input.devices = {kA100};
  EXPECT_EQ(
      selectDevice(input).error,
      "vnode 'fir' (rank 1) was given GPU 1 (from the mapping file 'fir.map.json') but host 'node1' sees only 1 GPU "
      "(0..0); run with DISPAR_DEVICE=host to use the host path");
  input.devices.clear();
  input.deviceQueryError = "cudaGetDeviceCount: no CUDA-capable device is detected";
  EXPECT_EQ(
      selectDevice(input).error,
      "vnode 'fir' (rank 1) was given GPU 1 (from the mapping file 'fir.map.json') but host 'node1' sees no GPU "
      "(cudaGetDeviceCount: no CUDA-capable device is detected); run with DISPAR_DEVICE=host to use the host path");
}

TEST(Selection, MappingOfAnotherProgramFails) {
  const MapFile map = parseMapFile(kMap, "fir.map.json");
  SelectionInput input = fir();
  input.vnode = "square";
  input.mapping = &map;
  EXPECT_EQ(
      selectDevice(input).error,
      "the mapping file 'fir.map.json' does not map vnode 'square' replica 0 to rank 1 (it maps 3 instances); run "
      "`streammap map` again for this program");
  input = fir(5);
  input.mapping = &map;
  EXPECT_EQ(selectDevice(input).error,
            "the mapping file 'fir.map.json' does not map vnode 'fir' replica 0 to rank 5 (it maps it to rank 1); run "
            "`streammap map` again for this program");
}

TEST(Selection, EnvironmentOverridesTheMapping) {
  const MapFile map = parseMapFile(kMap, "fir.map.json");
  SelectionInput input = fir();
  input.mapping = &map;
  input.request = {DeviceRequest::Kind::Host, -1};
  Selection s = selectDevice(input);
  EXPECT_TRUE(s.onHost);
  EXPECT_EQ(s.reason, "host path, DISPAR_DEVICE=host");
  input.devices.clear();  // host needs no device at all
  EXPECT_EQ(selectDevice(input).error, "");
  input = fir();
  input.mapping = &map;
  input.request = {DeviceRequest::Kind::Index, 0};
  s = selectDevice(input);
  EXPECT_FALSE(s.onHost);
  EXPECT_EQ(s.device, 0);
  EXPECT_EQ(s.reason, "GPU 0 (NVIDIA A100, compute capability 8.0), DISPAR_DEVICE=0");
  input.request = {DeviceRequest::Kind::Index, 4};
  EXPECT_EQ(selectDevice(input).error,
            "vnode 'fir' (rank 1) was given GPU 4 (DISPAR_DEVICE=4) but host 'node1' sees only 2 GPUs (0..1); run with "
            "DISPAR_DEVICE=host to use the host path");
}

TEST(Selection, WithoutMappingLocalRankModuloDeviceCount) {
  SelectionInput input = fir();
  for (int local = 0; local < 5; ++local) {
    input.localRank = local;
    const Selection s = selectDevice(input);
    EXPECT_FALSE(s.onHost);
    EXPECT_EQ(s.device, local % 2);
  }
  input.localRank = 3;
  EXPECT_EQ(
      selectDevice(input).reason,
      "GPU 1 (NVIDIA H100, compute capability 9.0), local rank 3 of this host modulo 2 visible GPUs, no mapping file");
}

TEST(Selection, WithoutMappingOrDevicesTheHostPath) {
  SelectionInput input = fir();
  input.devices.clear();
  input.deviceQueryError = "cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version";
  const Selection s = selectDevice(input);
  EXPECT_EQ(s.error, "");
  EXPECT_TRUE(s.onHost);
  EXPECT_EQ(
      s.reason,
      "host path, no GPU visible: cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version");
}

TEST(Selection, EmptyArchListIsNotChecked) {
  SelectionInput input = fir();
  input.compiledArchs.clear();
  EXPECT_EQ(selectDevice(input).error, "");
}

}  // namespace
