// Start-up of a CG rank in an nvcc-built program: read the environment and the mapping, see which
// GPUs this host has, choose (Selection.cpp), and open the device.
#include <dispar/gpu/CudaBackend.h>

#include "CudaDevice.h"

#include <dispar/dispar.h>
#include <dispar/gpu/MapFile.h>
#include <dispar/gpu/Selection.h>
#include <dispar/gpu/Settings.h>
#include <mpi.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>

namespace dispar::gpu {
namespace {

void report(const std::string& line) {
  std::fflush(stdout);
  std::fprintf(stderr, "dispar: %s\n", line.c_str());
  std::fflush(stderr);
}

/// What cudaGetDeviceCount / cudaGetDeviceProperties report; an empty list and the reason when the
/// query fails (no driver, no device).
void queryDevices(SelectionInput& input) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    input.deviceQueryError = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(error);
    cudaGetLastError();  // not sticky: later calls must not see it
    return;
  }
  for (int index = 0; index < count; ++index) {
    cudaDeviceProp properties{};
    DISPAR_CUDA(cudaGetDeviceProperties(&properties, index));
    input.devices.push_back(VisibleDevice{properties.name, properties.major, properties.minor});
  }
}

bool mpiReportsCudaSupport() {
#ifdef DISPAR_HAVE_MPIX_QUERY_CUDA_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

}  // namespace

CudaBackend::CudaBackend(const char* const* compiledArchs, std::size_t count)
    : compiledArchs_(compiledArchs, compiledArchs + count) {}

std::unique_ptr<Device> CudaBackend::start(const RankInfo& rank) const {
  const std::string who = std::string("vnode '") + rank.vnode + "' (rank " + std::to_string(rank.rank) + ")";
  SelectionInput input;
  input.vnode = rank.vnode;
  input.rank = rank.rank;
  input.replica = rank.replica;
  input.localRank = rank.localRank;
  input.host = node_name();
  input.compiledArchs = compiledArchs_;
  TransferSettings transfers;
  std::optional<MapFile> mapping;
  try {
    input.request = parseDeviceRequest(std::getenv("DISPAR_DEVICE"));
    // srun numbers the tasks of each Slurm node; MPI's shared-memory split cannot tell apart several
    // Slurm nodes on one machine.
    if (const std::optional<int> slurmLocal = parseLocalId(std::getenv("SLURM_LOCALID"))) input.localRank = *slurmLocal;
    input.visibleOrdinals = parseVisibleDevices(std::getenv("CUDA_VISIBLE_DEVICES"));
    transfers.chunkBytes = parseChunkBytes(std::getenv("DISPAR_CHUNK_BYTES"));
    transfers.mpiAddressable = parseCudaAwareMpi(std::getenv("DISPAR_CUDA_AWARE_MPI"), mpiReportsCudaSupport());
    mapping = loadRunningMapFile();
    // DISPAR_DEVICE=host never touches CUDA: it works where the driver is broken.
    if (input.request.kind != DeviceRequest::Kind::Host) queryDevices(input);
  } catch (const std::exception& error) {
    throw std::runtime_error(who + ": " + error.what());
  }
  input.mapping = mapping ? &*mapping : nullptr;

  const Selection selection = selectDevice(input);
  for (const std::string& warning : selection.warnings) report("warning: " + warning);
  if (!selection.error.empty()) throw std::runtime_error(selection.error);
  if (parseVerbose(std::getenv("DISPAR_VERBOSE")))
    report("rank " + std::to_string(rank.rank) + " vnode '" + rank.vnode + "' on host '" + input.host +
           "': " + selection.reason);
  if (selection.onHost) return nullptr;
  try {
    DISPAR_CUDA(cudaSetDevice(selection.device));
    DISPAR_CUDA(cudaFree(nullptr));  // creates the context now, not inside the first transfer
  } catch (const std::exception& error) {
    throw std::runtime_error(who + " could not open GPU " + std::to_string(selection.device) + ": " + error.what());
  }
  return std::make_unique<CudaDevice>(selection.device, transfers);
}

int assignedDevice() {
  const auto* device = dynamic_cast<const CudaDevice*>(detail::activeDevice());
  return device != nullptr ? device->ordinal() : 0;
}

}  // namespace dispar::gpu
