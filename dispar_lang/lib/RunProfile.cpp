#include "dispar_lang/RunProfile.h"

#include "dispar_lang/ComputeCapability.h"
#include "dispar_lang/JsonRead.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>

namespace dispar::lang {

namespace {

using Ordered = nlohmann::ordered_json;
using Json = nlohmann::json;
using Fields = JsonFields<Json>;

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

Ordered instanceJson(const ProfiledInstance& instance) {
  Ordered j = {{"rank", instance.rank},
               {"vnode", instance.vnode},
               {"replica", instance.replica},
               {"host", instance.host},
               {"device", instance.device},
               {"device_model", instance.deviceModel},
               {"fingerprint", instance.fingerprint},
               {"compute_s", instance.computeSeconds},
               {"read_wait_s", instance.readWaitSeconds},
               {"write_wait_s", instance.writeWaitSeconds},
               {"cpu_s", instance.cpuSeconds}};
  if (instance.computeCpuSeconds) j["compute_cpu_s"] = *instance.computeCpuSeconds;
  if (instance.gpu)
    j["gpu"] = {{"multiprocessors", instance.gpu->multiprocessors},
                {"clock_khz", instance.gpu->clockKHz},
                {"compute_capability", formatComputeCapability(instance.gpu->ccMajor, instance.gpu->ccMinor)}};
  return j;
}

// Optional members: absent in profiles written before they existed.
bool optionalString(const Fields& fields, const char* key, std::string& out) {
  return fields.member(key, false) == nullptr || fields.string(key, out);
}
bool optionalBoolean(const Fields& fields, const char* key, bool& out) {
  const Json* value = fields.member(key, false);
  if (value == nullptr) return true;
  if (!value->is_boolean()) return fields.fail(key, "expected true or false, got " + shownJson(*value));
  out = value->get<bool>();
  return true;
}
bool optionalMeasure(const Fields& fields, const char* key, std::optional<double>& out) {
  if (fields.member(key, false) == nullptr) return true;
  double value = 0;
  if (!fields.measure(key, value)) return false;
  out = value;
  return true;
}

// A count that must be present and not null.
bool count(const Fields& fields, const char* key, std::uint64_t& out) {
  std::optional<std::uint64_t> value;
  if (!fields.optionalUnsigned(key, value)) return false;
  if (!value) return fields.fail(key, "expected a count, got null");
  out = *value;
  return true;
}

bool readGpu(const Json& j, const std::string& path, ProfiledInstance& out, std::string& error) {
  Fields f(j, path, error);
  std::int64_t multiprocessors = 0, clockKHz = 0;
  std::string capability;
  ProfiledGpu gpu;
  if (!f.integer("multiprocessors", 0, kIntMax, multiprocessors) || !f.integer("clock_khz", 0, kIntMax, clockKHz) ||
      !f.string("compute_capability", capability))
    return false;
  if (!parseComputeCapability(capability, gpu.ccMajor, gpu.ccMinor))
    return f.fail("compute_capability", "expected \"MAJOR.MINOR\", got \"" + capability + "\"");
  gpu.multiprocessors = static_cast<int>(multiprocessors);
  gpu.clockKHz = static_cast<int>(clockKHz);
  out.gpu = gpu;
  return true;
}

bool readInstance(const Json& j, const std::string& path, ProfiledInstance& out, std::string& error) {
  Fields f(j, path, error);
  std::int64_t rank = 0, replica = 0;
  if (!f.integer("rank", 0, kIntMax, rank) || !f.string("vnode", out.vnode) ||
      !f.integer("replica", 0, kIntMax, replica) || !f.string("host", out.host) ||
      !f.oneOf("device", {"cpu", "gpu", "host-path"}, out.device) ||
      !optionalString(f, "device_model", out.deviceModel) || !optionalString(f, "fingerprint", out.fingerprint) ||
      !f.measure("compute_s", out.computeSeconds) || !f.measure("read_wait_s", out.readWaitSeconds) ||
      !f.measure("write_wait_s", out.writeWaitSeconds))
    return false;
  if (f.member("cpu_s", false) != nullptr && !f.measure("cpu_s", out.cpuSeconds)) return false;
  if (!optionalMeasure(f, "compute_cpu_s", out.computeCpuSeconds)) return false;
  if (f.member("gpu", false) != nullptr) {
    const Json* gpu = f.object("gpu");
    if (gpu == nullptr || !readGpu(*gpu, path + ".gpu", out, error)) return false;
  }
  out.rank = static_cast<int>(rank);
  out.replica = static_cast<int>(replica);
  return true;
}

bool readPipe(const Json& j, const std::string& path, ProfiledPipe& out, std::string& error) {
  Fields f(j, path, error);
  return f.string("pipe", out.pipe) && count(f, "messages", out.messages) && count(f, "bytes", out.bytes);
}

bool readKernel(const Json& j, const std::string& path, ProfiledKernel& out, std::string& error) {
  Fields f(j, path, error);
  std::int64_t rank = 0, replica = 0;
  if (!f.integer("rank", 0, kIntMax, rank) || !f.string("vnode", out.vnode) ||
      !f.integer("replica", 0, kIntMax, replica) || !f.string("kernel", out.kernel) || !f.string("site", out.site) ||
      !f.oneOf("device", {"gpu", "host-path"}, out.device) || !count(f, "launches", out.launches) ||
      !f.measure("seconds", out.seconds))
    return false;
  out.rank = static_cast<int>(rank);
  out.replica = static_cast<int>(replica);
  return true;
}

bool readSplitSite(const Json& j, const std::string& path, ProfiledSplitSite& out, std::string& error) {
  Fields f(j, path, error);
  std::int64_t rank = 0;
  if (!f.integer("rank", 0, kIntMax, rank) || !f.string("site", out.site) || !f.measure("gpu_rate", out.gpuRate) ||
      !f.measure("cpu_thread_rate", out.cpuThreadRate))
    return false;
  out.rank = static_cast<int>(rank);
  return true;
}

template <class Item, class ReadFn>
bool readList(const Fields& top, const char* key, bool required, std::vector<Item>& out, ReadFn read,
              std::string& error) {
  out.clear();
  if (!required && top.member(key, false) == nullptr) return true;
  const Json* list = top.array(key);
  if (list == nullptr) return false;
  out.resize(list->size());
  for (std::size_t i = 0; i < list->size(); ++i)
    if (!read((*list)[i], std::string("profile.") + key + "[" + std::to_string(i) + "]", out[i], error)) return false;
  return true;
}

}  // namespace

std::uint64_t RunProfile::periodMessages() const {
  std::uint64_t most = 1;
  for (const ProfiledPipe& pipe : pipes) most = std::max(most, pipe.messages);
  return most;
}

std::string writeRunProfileJson(const RunProfile& profile) {
  Ordered doc = {{"format", kRunProfileFormat}, {"version", kRunProfileVersion}, {"program", profile.program}};
  if (!profile.binary.empty()) doc["binary"] = profile.binary;
  if (profile.simulated) doc["simulated"] = true;
  doc["complete"] = profile.complete;
  if (!profile.complete) doc["failure"] = profile.failure;
  if (profile.wallSeconds) doc["wall_s"] = *profile.wallSeconds;
  Ordered instances = Ordered::array();
  for (const ProfiledInstance& instance : profile.instances) instances.push_back(instanceJson(instance));
  doc["instances"] = std::move(instances);
  Ordered pipes = Ordered::array();
  for (const ProfiledPipe& pipe : profile.pipes)
    pipes.push_back({{"pipe", pipe.pipe}, {"messages", pipe.messages}, {"bytes", pipe.bytes}});
  doc["pipes"] = std::move(pipes);
  Ordered kernels = Ordered::array();
  for (const ProfiledKernel& k : profile.kernels)
    kernels.push_back({{"rank", k.rank},
                       {"vnode", k.vnode},
                       {"replica", k.replica},
                       {"kernel", k.kernel},
                       {"site", k.site},
                       {"device", k.device},
                       {"launches", k.launches},
                       {"seconds", k.seconds}});
  doc["kernels"] = std::move(kernels);
  Ordered sites = Ordered::array();
  for (const ProfiledSplitSite& site : profile.splitSites)
    sites.push_back({{"rank", site.rank},
                     {"site", site.site},
                     {"gpu_rate", site.gpuRate},
                     {"cpu_thread_rate", site.cpuThreadRate}});
  doc["split_sites"] = std::move(sites);
  return doc.dump(2) + "\n";
}

bool parseRunProfileJson(const std::string& text, RunProfile& out, std::string& error) {
  Json doc;
  if (!parseJson(text, doc, error)) return false;
  Fields top(doc, "profile", error);
  RunProfile profile;
  std::string format;
  std::int64_t version = 0;
  if (!top.string("format", format)) return false;
  if (format != kRunProfileFormat)
    return top.fail("format", std::string("expected \"") + kRunProfileFormat + "\", got \"" + format + "\"");
  if (!top.integer("version", 0, kIntMax, version)) return false;
  if (version != kRunProfileVersion)
    return top.fail("version", "unsupported format version " + std::to_string(version) + " (this tool reads version " +
                                   std::to_string(kRunProfileVersion) + ")");
  if (!top.string("program", profile.program) || !optionalString(top, "binary", profile.binary)) return false;
  if (!optionalBoolean(top, "simulated", profile.simulated) || !optionalBoolean(top, "complete", profile.complete))
    return false;
  if (!profile.complete && !optionalString(top, "failure", profile.failure)) return false;
  if (!optionalMeasure(top, "wall_s", profile.wallSeconds)) return false;
  if (!readList(top, "instances", true, profile.instances, readInstance, error) ||
      !readList(top, "pipes", true, profile.pipes, readPipe, error) ||
      !readList(top, "kernels", false, profile.kernels, readKernel, error) ||
      !readList(top, "split_sites", false, profile.splitSites, readSplitSite, error))
    return false;
  out = std::move(profile);
  return true;
}

}  // namespace dispar::lang
