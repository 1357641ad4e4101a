// The environment variables of the GPU runtime (docs/gpu-runtime.md), parsed into values. Parsing is
// separate from getenv so that the rules are tested without touching the process environment.
#ifndef DISPAR_GPU_SETTINGS_H
#define DISPAR_GPU_SETTINGS_H

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace dispar::gpu {

/// DISPAR_DEVICE: unset (follow the mapping), "host", or a device index.
struct DeviceRequest {
  enum class Kind { Auto, Host, Index };
  Kind kind = Kind::Auto;
  int index = -1;
};

/// Throws std::runtime_error on text that is neither empty, "host" nor a non-negative integer.
DeviceRequest parseDeviceRequest(const char* text);

/// DISPAR_CHUNK_BYTES: unset gives 1 MiB; otherwise an integer in [4096, 1 GiB], optionally with a
/// K or M suffix (binary). Throws std::runtime_error on anything else.
std::size_t parseChunkBytes(const char* text);

/// DISPAR_CUDA_AWARE_MPI: "1" forces device pointers to MPI, "0" forbids it, unset asks MPI
/// (`mpiSays`: MPIX_Query_cuda_support where the MPI header declares it, else false).
bool parseCudaAwareMpi(const char* text, bool mpiSays);

/// DISPAR_VERBOSE=1.
bool parseVerbose(const char* text);

/// SLURM_LOCALID (srun's task index on its node): unset gives nullopt; anything but a non-negative
/// integer throws std::runtime_error.
std::optional<int> parseLocalId(const char* text);

/// CUDA_VISIBLE_DEVICES as the node's device ordinals in CUDA's numbering ("2,0" -> {2, 0}: CUDA device
/// 0 is the node's GPU 2). nullopt when unset or not a list of ordinals (UUIDs, MIG names): then CUDA's
/// numbering is taken as the node's.
std::optional<std::vector<int>> parseVisibleDevices(const char* text);

}  // namespace dispar::gpu

#endif  // DISPAR_GPU_SETTINGS_H
