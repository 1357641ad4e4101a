// GPU enumeration through the CUDA driver API, opened with dlopen so that nothing links against CUDA.
// The few types and prototypes needed are declared here, as the driver's ABI defines them.
#include "Probes.h"

#include <dlfcn.h>

#include <cctype>
#include <cstdio>
#include <memory>

namespace dispar::streammap {

namespace {

using CUresult = int;
using CUdevice = int;
struct CUuuid {
  unsigned char bytes[16];
};

constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaErrorNoDevice = 100;

// CUdevice_attribute values (cuda.h).
constexpr int kAttrClockRate = 13;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

struct DlCloser {
  void operator()(void* handle) const { dlclose(handle); }
};
using LibraryHandle = std::unique_ptr<void, DlCloser>;

// The driver entry points streammap uses, resolved from one loaded library.
class CudaDriver {
 public:
  CUresult (*cuInit)(unsigned int) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetUuid)(CUuuid*, CUdevice) = nullptr;   // _v2 when the driver has it
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice) = nullptr;  // cuDeviceTotalMem_v2
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetPCIBusId)(char*, int, CUdevice) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;  // optional

  bool load(const std::string& path, std::string& error) {
    library_.reset(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL));
    if (!library_) {
      const char* reason = dlerror();
      error = "cannot load CUDA driver " + path + ": " + (reason ? reason : "unknown error");
      return false;
    }
    bool ok = resolve("cuInit", cuInit, error) && resolve("cuDeviceGetCount", cuDeviceGetCount, error) &&
              resolve("cuDeviceGet", cuDeviceGet, error) && resolve("cuDeviceGetName", cuDeviceGetName, error) &&
              (resolveOptional("cuDeviceGetUuid_v2", cuDeviceGetUuid) ||
               resolve("cuDeviceGetUuid", cuDeviceGetUuid, error)) &&
              resolve("cuDeviceTotalMem_v2", cuDeviceTotalMem, error) &&
              resolve("cuDeviceGetAttribute", cuDeviceGetAttribute, error) &&
              resolve("cuDeviceGetPCIBusId", cuDeviceGetPCIBusId, error);
    if (ok) resolveOptional("cuGetErrorString", cuGetErrorString);
    if (!ok) error = "CUDA driver " + path + ": " + error;
    return ok;
  }

  std::string describe(CUresult rc) const {
    const char* text = nullptr;
    if (cuGetErrorString && cuGetErrorString(rc, &text) == kCudaSuccess && text)
      return std::string(text) + " (" + std::to_string(rc) + ")";
    return "CUDA error " + std::to_string(rc);
  }

 private:
  template <typename Fn>
  bool resolveOptional(const char* name, Fn& fn) {
    fn = reinterpret_cast<Fn>(dlsym(library_.get(), name));
    return fn != nullptr;
  }
  template <typename Fn>
  bool resolve(const char* name, Fn& fn, std::string& error) {
    if (resolveOptional(name, fn)) return true;
    error = std::string("missing symbol ") + name;
    return false;
  }

  LibraryHandle library_;
};

struct CudaCallFailure {
  std::string message;
};

// The checked-call macro for the driver API: names the call, the source position and the error.
#define DISPAR_CU_CHECK(driver, call)                                                                                  \
  do {                                                                                                                 \
    CUresult rc_ = (call);                                                                                             \
    if (rc_ != kCudaSuccess)                                                                                           \
      throw CudaCallFailure{std::string(#call) + " failed at " + __FILE__ + ":" + std::to_string(__LINE__) + ": " +    \
                            (driver).describe(rc_)};                                                                   \
  } while (0)

std::string formatUuid(const CUuuid& uuid) {
  // nvidia-smi's form: GPU-8-4-4-4-12 hex digits.
  std::string out = "GPU-";
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    std::snprintf(hex, sizeof hex, "%02x", uuid.bytes[i]);
    out += hex;
  }
  return out;
}

GpuInfo queryDevice(const CudaDriver& cu, int ordinal) {
  CUdevice device = 0;
  DISPAR_CU_CHECK(cu, cu.cuDeviceGet(&device, ordinal));
  GpuInfo gpu;
  gpu.index = ordinal;
  char name[256] = {};
  DISPAR_CU_CHECK(cu, cu.cuDeviceGetName(name, sizeof name - 1, device));
  gpu.name = name;
  CUuuid uuid = {};
  DISPAR_CU_CHECK(cu, cu.cuDeviceGetUuid(&uuid, device));
  gpu.uuid = formatUuid(uuid);
  size_t bytes = 0;
  DISPAR_CU_CHECK(cu, cu.cuDeviceTotalMem(&bytes, device));
  gpu.memoryBytes = bytes;
  DISPAR_CU_CHECK(cu, cu.cuDeviceGetAttribute(&gpu.ccMajor, kAttrComputeCapabilityMajor, device));
  DISPAR_CU_CHECK(cu, cu.cuDeviceGetAttribute(&gpu.ccMinor, kAttrComputeCapabilityMinor, device));
  DISPAR_CU_CHECK(cu, cu.cuDeviceGetAttribute(&gpu.multiprocessors, kAttrMultiprocessorCount, device));
  DISPAR_CU_CHECK(cu, cu.cuDeviceGetAttribute(&gpu.clockKHz, kAttrClockRate, device));
  char busId[64] = {};
  DISPAR_CU_CHECK(cu, cu.cuDeviceGetPCIBusId(busId, sizeof busId - 1, device));
  gpu.pciBusId = busId;
  for (char& c : gpu.pciBusId) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return gpu;
}

}  // namespace

void probeCudaGpus(const std::string& driverPath, bool explicitPath, std::vector<GpuInfo>& gpus,
                   std::vector<std::string>& warnings) {
  gpus.clear();
  CudaDriver cu;
  std::string error;
  if (!cu.load(driverPath, error)) {
    // The default driver missing means a CPU-only node; a named one missing is a mistake to report.
    if (explicitPath || error.find("missing symbol") != std::string::npos)
      warnings.push_back(error + "; no GPUs recorded");
    return;
  }
  CUresult rc = cu.cuInit(0);
  if (rc == kCudaErrorNoDevice) return;
  if (rc != kCudaSuccess) {
    warnings.push_back("cuInit(0) failed: " + cu.describe(rc) + "; no GPUs recorded");
    return;
  }
  int count = 0;
  rc = cu.cuDeviceGetCount(&count);
  if (rc != kCudaSuccess) {
    warnings.push_back("cuDeviceGetCount failed: " + cu.describe(rc) + "; no GPUs recorded");
    return;
  }
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    try {
      gpus.push_back(queryDevice(cu, ordinal));
    } catch (const CudaCallFailure& failure) {
      warnings.push_back("gpu " + std::to_string(ordinal) + " skipped: " + failure.message);
    }
  }
}

}  // namespace dispar::streammap
