// Needs a GPU (label `gpu`): device_vector in real device memory, and device-to-device pipe
// transfers between two ranks through the CUDA copy engine, checking every byte.
#include "../runtime/MpiTest.h"

#include <dispar/device_vector.h>
#include <dispar/gpu/CudaBackend.h>

#include <cstdint>
#include <vector>

namespace {

using dispar::device_vector;
using dispar::InPort;
using dispar::OutPort;
namespace rt = dispar::rt;
namespace gpu = dispar::gpu;

class GpuDevice : public dispar::test::MpiTest {};

constexpr std::size_t kChunk = std::size_t{1} << 20;  // the default DISPAR_CHUNK_BYTES

std::vector<std::size_t> sizes() { return {0, 1, 4097, kChunk - 1, kChunk, kChunk + 1, 10 * kChunk + 3}; }

std::vector<std::uint8_t> pattern(std::size_t bytes) {
  std::vector<std::uint8_t> values(bytes);
  for (std::size_t i = 0; i < bytes; ++i) values[i] = static_cast<std::uint8_t>(i * 13 + bytes + (i >> 12));
  return values;
}

bool ranOnGpu;
int mismatches;

void writer(OutPort<std::uint8_t>& port) {
  ranOnGpu = !gpu::onHost();
  for (std::size_t bytes : sizes()) {
    const device_vector<std::uint8_t> values(pattern(bytes));
    ranOnGpu = ranOnGpu && (bytes == 0 || values.on_device());
    port.write(values);  // device to device
    port.write(values);  // device to a host vector
  }
}

void reader(InPort<std::uint8_t>& port) {
  ranOnGpu = !gpu::onHost();
  mismatches = 0;
  for (std::size_t bytes : sizes()) {
    device_vector<std::uint8_t> device;
    std::vector<std::uint8_t> host;
    mismatches += port.read(device) && device.to_host() == pattern(bytes) ? 0 : 1;
    mismatches += port.read(host) && host == pattern(bytes) ? 0 : 1;
  }
}

constexpr rt::VnodeSpec kVnodes[] = {{"writer", 0, 1, "gpu.dsp:1:1", true}, {"reader", 1, 1, "gpu.dsp:9:1", true}};
constexpr rt::PipeSpec kPipes[] = {
    {"bytes", "uint8_t", 1, 0, 1, rt::MergeOrder::RoundRobin, 4, rt::SplitMode::RoundRobin}};
constexpr rt::ProgramSpec kProgram = {"gpu", kVnodes, 2, kPipes, 1, 2};

void dispatch(rt::Instance& instance) {
  if (instance.vnode() == 0) {
    auto port = instance.out<std::uint8_t>(0);
    writer(port);
  } else {
    auto port = instance.in<std::uint8_t>(0);
    reader(port);
  }
}

TEST_F(GpuDevice, PipelinedDeviceToDeviceTransfersKeepEveryByte) {
  const gpu::CudaBackend backend(nullptr, 0);
  std::vector<std::string> storage{"test"};
  std::vector<char*> argv{storage[0].data(), nullptr};
  ASSERT_EQ(rt::run(1, argv.data(), kProgram, dispatch, &backend), 0);
  EXPECT_TRUE(ranOnGpu) << "rank " << dispar::test::worldRank()
                        << " ran on the host path: this test needs a visible GPU (label gpu)";
  if (dispar::test::worldRank() == 1) {
    EXPECT_EQ(mismatches, 0);
  }
}

void roundTrip(rt::Instance&) {
  ranOnGpu = !gpu::onHost();
  const std::vector<double> values{1.5, -2.0, 3.25, 1e300};
  device_vector<double> device(values);
  ranOnGpu = ranOnGpu && device.on_device();
  device.resize(6);
  mismatches = device.to_host() == std::vector<double>{1.5, -2.0, 3.25, 1e300, 0, 0} ? 0 : 1;
  device_vector<double> copy(device);
  copy.resize(3);
  mismatches += copy.to_host() == std::vector<double>{1.5, -2.0, 3.25} ? 0 : 1;
}

TEST_F(GpuDevice, DeviceVectorRoundTripInDeviceMemory) {
  const gpu::CudaBackend backend(nullptr, 0);
  static constexpr rt::VnodeSpec vnodes[] = {{"a", 0, 1, "x:1:1", true}, {"b", 1, 1, "x:2:1", true}};
  static constexpr rt::ProgramSpec program = {"roundtrip", vnodes, 2, nullptr, 0, 2};
  std::vector<std::string> storage{"test"};
  std::vector<char*> argv{storage[0].data(), nullptr};
  ASSERT_EQ(rt::run(1, argv.data(), program, roundTrip, &backend), 0);
  EXPECT_TRUE(ranOnGpu) << "this test needs a visible GPU (label gpu)";
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
