#include <dispar/gpu/Selection.h>

#include <dispar/gpu/CudaArch.h>

#include <algorithm>

namespace dispar::gpu {
namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

std::string joined(const std::vector<int>& ordinals) {
  std::string text;
  for (int ordinal : ordinals) text += (text.empty() ? "" : ",") + std::to_string(ordinal);
  return text;
}

std::string who(const SelectionInput& input) {
  return "vnode '" + input.vnode + "' (rank " + std::to_string(input.rank) + ")";
}

std::string plural(std::size_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

/// The device `index` chosen because of `because`, checked: it exists and the program has code for it.
Selection useDevice(const SelectionInput& input, int index, const std::string& because, Selection selection) {
  const std::size_t count = input.devices.size();
  if (index < 0 || static_cast<std::size_t>(index) >= count) {
    std::string sees =
        count == 0 ? "sees no GPU" : "sees only " + plural(count, "GPU") + " (0.." + std::to_string(count - 1) + ")";
    if (count == 0 && !input.deviceQueryError.empty()) sees += " (" + input.deviceQueryError + ")";
    selection.error = who(input) + " was given GPU " + std::to_string(index) + " (" + because + ") but host '" +
                      input.host + "' " + sees + "; run with DISPAR_DEVICE=host to use the host path";
    return selection;
  }
  const VisibleDevice& device = input.devices[static_cast<std::size_t>(index)];
  if (!input.compiledArchs.empty() && !anyArchRunsOn(input.compiledArchs, device.major, device.minor)) {
    selection.error = who(input) + " was given " + describeDevice(index, device) +
                      " but the program has kernels only for " + joined(input.compiledArchs) +
                      "; rebuild with --cuda-arch=sm_" + std::to_string(device.major) + std::to_string(device.minor);
    return selection;
  }
  selection.onHost = false;
  selection.device = index;
  selection.reason = describeDevice(index, device) + ", " + because;
  return selection;
}

Selection useHost(const std::string& because, Selection selection) {
  selection.onHost = true;
  selection.device = -1;
  selection.reason = "host path, " + because;
  return selection;
}

}  // namespace

bool sameHost(const std::string& a, const std::string& b) {
  if (a == b) return true;
  const auto shortName = [](const std::string& name) { return name.substr(0, name.find('.')); };
  // "node1" and "node1.cluster.org" are one machine; "node1.a" and "node1.b" are not.
  const bool oneIsShort = a.find('.') == std::string::npos || b.find('.') == std::string::npos;
  return oneIsShort && shortName(a) == shortName(b);
}

std::string describeDevice(int index, const VisibleDevice& device) {
  return "GPU " + std::to_string(index) + " (" + device.name + ", compute capability " + std::to_string(device.major) +
         "." + std::to_string(device.minor) + ")";
}

Selection selectDevice(const SelectionInput& input) {
  Selection selection;
  const MappedRank* mapped = nullptr;
  if (input.mapping != nullptr) {
    const MapFile& map = *input.mapping;
    mapped = map.instance(input.vnode, input.replica);
    if (mapped == nullptr || mapped->rank != input.rank) {
      selection.error = "the mapping file '" + map.path + "' does not map vnode '" + input.vnode + "' replica " +
                        std::to_string(input.replica) + " to rank " + std::to_string(input.rank) +
                        (mapped ? " (it maps it to rank " + std::to_string(mapped->rank) + ")"
                                : " (it maps " + plural(map.ranks.size(), "instance") + ")") +
                        "; run `streammap map` again for this program";
      return selection;
    }
    if (!sameHost(mapped->host, input.host))
      selection.warnings.push_back("the mapping file '" + map.path + "' places " + who(input) + " on host '" +
                                   mapped->host + "' but it runs on host '" + input.host + "'");
  }

  switch (input.request.kind) {
    case DeviceRequest::Kind::Host: return useHost("DISPAR_DEVICE=host", selection);
    case DeviceRequest::Kind::Index:
      return useDevice(input, input.request.index, "DISPAR_DEVICE=" + std::to_string(input.request.index), selection);
    case DeviceRequest::Kind::Auto: break;
  }

  if (mapped != nullptr) {
    const std::string source = "the mapping file '" + input.mapping->path + "'";
    if (mapped->mode == "host-fallback") return useHost("mode host-fallback in " + source, selection);
    if (mapped->mode == "cpu") return useHost("mode cpu in " + source, selection);
    if (input.visibleOrdinals) {
      // The mapping names the node's GPU; CUDA numbers only the visible ones (srun's gres binding).
      const std::vector<int>& visible = *input.visibleOrdinals;
      const auto at = std::find(visible.begin(), visible.end(), *mapped->device);
      if (at == visible.end()) {
        selection.error = who(input) + " is mapped to GPU " + std::to_string(*mapped->device) + " of host '" +
                          input.host + "' by " + source + " but CUDA_VISIBLE_DEVICES=" + joined(visible) +
                          " hides it (was the job given that GPU?); remap inside the allocation or run with "
                          "DISPAR_DEVICE=host";
        return selection;
      }
      const int cudaIndex = static_cast<int>(at - visible.begin());
      return useDevice(input, cudaIndex,
                       "GPU " + std::to_string(*mapped->device) + " of the node from " + source + ", CUDA device " +
                           std::to_string(cudaIndex) + " under CUDA_VISIBLE_DEVICES",
                       selection);
    }
    return useDevice(input, *mapped->device, "from " + source, selection);
  }
  if (input.devices.empty())
    return useHost(input.deviceQueryError.empty() ? std::string("no GPU visible")
                                                  : "no GPU visible: " + input.deviceQueryError,
                   selection);
  const int count = static_cast<int>(input.devices.size());
  return useDevice(input, input.localRank % count,
                   "local rank " + std::to_string(input.localRank) + " of this host modulo " +
                       plural(input.devices.size(), "visible GPU") + ", no mapping file",
                   selection);
}

}  // namespace dispar::gpu
