// Which device a CG rank computes on: a pure function of the mapping, the rank, the host, the devices
// it sees, the architectures the program was compiled for and DISPAR_DEVICE, so that every rule and
// message is tested without a GPU (docs/gpu-runtime.md, "Device selection").
#ifndef DISPAR_GPU_SELECTION_H
#define DISPAR_GPU_SELECTION_H

#include <dispar/gpu/MapFile.h>
#include <dispar/gpu/Settings.h>

#include <string>
#include <vector>

namespace dispar::gpu {

struct VisibleDevice {
  std::string name;  // "NVIDIA A100-SXM4-40GB"
  int major = 0;     // compute capability
  int minor = 0;
};

struct SelectionInput {
  std::string vnode;
  int replica = 0;
  int rank = 0;
  std::string host;                                 // the host this rank runs on
  int localRank = 0;                                // among the job's ranks on this node
  std::optional<std::vector<int>> visibleOrdinals;  // CUDA_VISIBLE_DEVICES as node ordinals, when a list
  const MapFile* mapping = nullptr;                 // null: no mapping file
  std::vector<VisibleDevice> devices;               // what cudaGetDeviceCount / cudaGetDeviceProperties report
  std::string deviceQueryError;                     // why none are visible, when the query failed
  std::vector<std::string> compiledArchs;           // {"sm_80", "compute_90"}; empty: not checked
  DeviceRequest request;                            // DISPAR_DEVICE
};

struct Selection {
  bool onHost = true;
  int device = -1;                    // when !onHost
  std::string reason;                 // "GPU 1 (NVIDIA A100, compute capability 8.0), from the mapping file ..."
  std::vector<std::string> warnings;  // printed, the rank goes on
  std::string error;                  // non-empty: the rank must not start; the whole message
};

Selection selectDevice(const SelectionInput& input);

/// Whether two host names name the same machine ("node1" and "node1.cluster" do).
bool sameHost(const std::string& a, const std::string& b);

/// "GPU 1 (NVIDIA A100, compute capability 8.0)".
std::string describeDevice(int index, const VisibleDevice& device);

}  // namespace dispar::gpu

#endif  // DISPAR_GPU_SELECTION_H
