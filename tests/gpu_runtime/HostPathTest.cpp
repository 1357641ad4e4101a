// Two ranks, no GPU: the chunked pipeline driven by a host copy engine, device_vector through ports
// with a fake device (host memory behind the Device interface, so every device path of the runtime
// runs), and device_vector on the real host path.
#include "../runtime/MpiTest.h"
#include "ChunkedTransfer.h"
#include "FakeDevice.h"

#include <dispar/device_vector.h>
#include <dispar/gpu/Device.h>
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace {

using dispar::device_vector;
using dispar::InPort;
using dispar::OutPort;
namespace rt = dispar::rt;
namespace gpu = dispar::gpu;
using dispar::test::fakeCounters;

class GpuTwoRanks : public dispar::test::MpiTest {};

std::vector<std::uint8_t> pattern(std::size_t bytes, unsigned seed) {
  std::vector<std::uint8_t> values(bytes);
  for (std::size_t i = 0; i < bytes; ++i) values[i] = static_cast<std::uint8_t>(i * 7 + seed + (i >> 8));
  return values;
}

std::vector<std::size_t> oddSizes(std::size_t chunk) { return {0, 1, chunk - 1, chunk, chunk + 1, 10 * chunk + 3}; }

// --- The pipeline itself -----------------------------------------------------------------------------

void exchangeChunks(std::size_t chunk, int slots, bool staged) {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  const int rank = dispar::test::worldRank();
  dispar::test::DeferredCopyEngine engine(slots, chunk);
  fakeCounters = {};
  std::uint64_t expectedMessages = 0;
  for (std::size_t bytes : oddSizes(chunk)) {
    const rt::ChunkHeader header{bytes, chunk};
    const std::uint64_t chunks = (bytes + chunk - 1) / chunk;
    expectedMessages += chunks;
    EXPECT_EQ(rt::chunkCount(header), chunks);
    if (rank == 0) {
      const auto values = pattern(bytes, static_cast<unsigned>(bytes));
      EXPECT_EQ(rt::sendChunks(values.data(), header, staged ? &engine : nullptr, 1, comm), chunks) << bytes;
    } else {
      std::vector<std::uint8_t> received(bytes, 0);
      EXPECT_EQ(rt::receiveChunks(received.data(), header, staged ? &engine : nullptr, 0, comm), chunks) << bytes;
      EXPECT_EQ(received, pattern(bytes, static_cast<unsigned>(bytes))) << bytes << " bytes, chunk " << chunk;
    }
  }
  if (rank == 1) {
    int stray = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &stray, MPI_STATUS_IGNORE);
    EXPECT_EQ(stray, 0) << "messages left over after the last chunk";
  }
  const int copies = rank == 0 ? fakeCounters.startsToHost : fakeCounters.startsToDevice;
  EXPECT_EQ(static_cast<std::uint64_t>(copies), staged ? expectedMessages : 0);
  EXPECT_EQ(fakeCounters.wrongKindCopies, 0) << "a staging slot was reused under a running copy";
  MPI_Comm_free(&comm);
}

TEST_F(GpuTwoRanks, StagedChunksArriveWholeDoubleBuffered) { exchangeChunks(4096, 2, true); }
TEST_F(GpuTwoRanks, StagedChunksArriveWholeTripleBuffered) { exchangeChunks(1000, 3, true); }
TEST_F(GpuTwoRanks, DirectChunksArriveWhole) { exchangeChunks(1000, 3, false); }

// --- Ports with a fake device --------------------------------------------------------------------------

constexpr std::size_t kChunk = 64 * 1024;  // the smallest chunk that still pipelines (kSmallMessageBytes)

template <bool WriterGpu, bool ReaderGpu, void (*Writer)(OutPort<std::uint8_t>&), void (*Reader)(InPort<std::uint8_t>&)>
struct BytePipe {
  static constexpr rt::VnodeSpec kVnodes[] = {{"writer", 0, 1, "gpu.dsp:1:1", WriterGpu},
                                              {"reader", 1, 1, "gpu.dsp:9:1", ReaderGpu}};
  // A window of 2 makes every message's credit count: a chunked message counted twice would hang.
  static constexpr rt::PipeSpec kPipes[] = {
      {"bytes", "uint8_t", 1, 0, 1, rt::MergeOrder::RoundRobin, 2, rt::SplitMode::RoundRobin}};
  static constexpr rt::ProgramSpec kProgram = {"gpu", kVnodes, 2, kPipes, 1, 2};
  static void dispatch(rt::Instance& instance) {
    if (instance.vnode() == 0) {
      auto port = instance.out<std::uint8_t>(0);
      Writer(port);
    } else {
      auto port = instance.in<std::uint8_t>(0);
      Reader(port);
    }
  }
  static int run(const gpu::DeviceBackend* backend) {
    std::vector<std::string> storage{"test"};
    std::vector<char*> argv{storage[0].data(), nullptr};
    return rt::run(1, argv.data(), kProgram, dispatch, backend);
  }
};

bool writerSawDevice;
int readerMismatches;
int readerMessages;

// Per size: a device write read into a std::vector, a device write read into a device_vector, a host
// write read into a device_vector.
void writeMixed(OutPort<std::uint8_t>& port) {
  writerSawDevice = !gpu::onHost();
  for (std::size_t bytes : oddSizes(kChunk)) {
    const auto values = pattern(bytes, static_cast<unsigned>(bytes));
    const device_vector<std::uint8_t> onDevice(values);
    writerSawDevice = writerSawDevice && (bytes == 0 || onDevice.on_device());  // empty: no memory at all
    port.write(onDevice);
    port.write(onDevice);
    port.write(values);
  }
}

void readMixed(InPort<std::uint8_t>& port) {
  readerMismatches = 0;
  readerMessages = 0;
  for (std::size_t bytes : oddSizes(kChunk)) {
    const auto expected = pattern(bytes, static_cast<unsigned>(bytes));
    std::vector<std::uint8_t> host{1, 2, 3};
    device_vector<std::uint8_t> device(5);
    readerMessages += port.read(host) ? 1 : 0;
    readerMismatches += host == expected ? 0 : 1;
    readerMessages += port.read(device) ? 1 : 0;
    readerMismatches += device.to_host() == expected ? 0 : 1;
    readerMismatches += device.on_device() == !gpu::onHost() ? 0 : 1;
    readerMessages += port.read(device) ? 1 : 0;
    readerMismatches += device.to_host() == expected ? 0 : 1;
  }
  std::vector<std::uint8_t> after;
  readerMessages += port.read(after) ? 1 : 0;  // end of stream
}

int stagedCopiesFor(const std::vector<std::size_t>& sizes) {
  int copies = 0;
  for (std::size_t bytes : sizes)
    copies += rt::sendsChunked(bytes, kChunk) ? static_cast<int>((bytes + kChunk - 1) / kChunk) : (bytes != 0 ? 1 : 0);
  return copies;
}

TEST_F(GpuTwoRanks, DeviceVectorsThroughPortsStagedAndChunked) {
  const dispar::test::FakeBackend backend(gpu::TransferSettings{kChunk, 3, false});
  fakeCounters = {};
  ASSERT_EQ((BytePipe<true, true, writeMixed, readMixed>::run(&backend)), 0);
  const int perDirection = stagedCopiesFor(oddSizes(kChunk));
  if (dispar::test::worldRank() == 0) {
    EXPECT_TRUE(writerSawDevice);
    EXPECT_EQ(fakeCounters.startsToHost, 2 * perDirection);  // two device writes per size
  } else {
    EXPECT_EQ(readerMismatches, 0);
    EXPECT_EQ(readerMessages, 18);
    // Device reads: one of a device write (chunked or one copy), one of a host write (plain: one
    // staged copy when it fits a staging buffer, else one synchronous copy from a bounce buffer).
    int expected = perDirection;
    for (std::size_t bytes : oddSizes(kChunk)) expected += bytes != 0 && bytes <= kChunk ? 1 : 0;
    EXPECT_EQ(fakeCounters.startsToDevice, expected);
  }
  EXPECT_EQ(fakeCounters.wrongKindCopies, 0);
}

TEST_F(GpuTwoRanks, DeviceWriteToCpuOnlyReader) {
  const dispar::test::FakeBackend backend(gpu::TransferSettings{kChunk, 2, false});
  ASSERT_EQ((BytePipe<true, false, writeMixed, readMixed>::run(&backend)), 0);
  if (dispar::test::worldRank() == 1) {
    EXPECT_EQ(readerMismatches, 0);
    EXPECT_EQ(readerMessages, 18);
  } else {
    EXPECT_TRUE(writerSawDevice);
  }
}

TEST_F(GpuTwoRanks, CudaAwareMpiSendsDevicePointersDirectly) {
  const dispar::test::FakeBackend backend(gpu::TransferSettings{kChunk, 3, true});
  fakeCounters = {};
  ASSERT_EQ((BytePipe<true, true, writeMixed, readMixed>::run(&backend)), 0);
  if (dispar::test::worldRank() == 0) {
    EXPECT_EQ(fakeCounters.startsToHost, 0);
    EXPECT_EQ(fakeCounters.synchronizes, 10);  // one before each non-empty device write
  } else {
    EXPECT_EQ(readerMismatches, 0);
    EXPECT_EQ(fakeCounters.startsToDevice, 0);
  }
}

TEST_F(GpuTwoRanks, HostPathDeviceVectorsAreHostMemory) {
  fakeCounters = {};
  ASSERT_EQ((BytePipe<true, true, writeMixed, readMixed>::run(nullptr)), 0);
  if (dispar::test::worldRank() == 0) {
    EXPECT_FALSE(writerSawDevice);
  } else {
    EXPECT_EQ(readerMismatches, 0);
    EXPECT_EQ(readerMessages, 18);
  }
  EXPECT_EQ(fakeCounters.startsToHost + fakeCounters.startsToDevice, 0);
  EXPECT_TRUE(gpu::onHost());
}

// --- device_vector itself ------------------------------------------------------------------------------

TEST_F(GpuTwoRanks, DeviceVectorBasicsOnTheHostPath) {
  device_vector<int> values(3);
  EXPECT_EQ(values.to_host(), (std::vector<int>{0, 0, 0}));
  values = std::vector<int>{1, 2, 3, 4};
  values.resize(6);
  EXPECT_EQ(values.to_host(), (std::vector<int>{1, 2, 3, 4, 0, 0}));
  values.resize(2);
  device_vector<int> copy(values);
  std::vector<int> out{9};
  copy.copy_to(out);
  EXPECT_EQ(out, (std::vector<int>{1, 2}));
  device_vector<int> moved(std::move(copy));
  EXPECT_EQ(moved.size(), 2u);
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_FALSE(moved.on_device());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(moved.data()) % 256, 0u);
}

}  // namespace
