/* A stand-in for libcuda.so.1 implementing the driver entry points the probe uses, with two made-up
 * devices (an A100 and a V100). Tests point DISPAR_CUDA_DRIVER at it to run the real GPU probe code on
 * machines without a GPU. With FAKE_CUDA_INIT_ERROR set, cuInit fails like a broken driver does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct { unsigned char bytes[16]; } CUuuid;

enum { kSuccess = 0, kInvalidValue = 1, kNotInitialized = 3, kInvalidDevice = 101, kUnknown = 999 };

static int initialized;

struct FakeDevice {
  const char* name;
  size_t memory;
  int major, minor, sms, clockKHz;
  const char* busId;
};
static const struct FakeDevice kDevices[] = {
    {"NVIDIA A100-SXM4-40GB", 42949672960ull, 8, 0, 108, 1410000, "0000:07:00.0"},
    {"Tesla V100-SXM2-16GB", 17179869184ull, 7, 0, 80, 1530000, "0000:0B:00.0"},
};
static const int kDeviceCount = 2;

CUresult cuInit(unsigned int flags) {
  (void)flags;
  if (getenv("FAKE_CUDA_INIT_ERROR")) return kUnknown;
  initialized = 1;
  return kSuccess;
}

CUresult cuGetErrorString(CUresult error, const char** text) {
  *text = error == kUnknown ? "unknown error" : error == kNotInitialized ? "initialization error" : "error";
  return kSuccess;
}

CUresult cuDeviceGetCount(int* count) {
  if (!initialized) return kNotInitialized;
  *count = kDeviceCount;
  return kSuccess;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (!initialized) return kNotInitialized;
  if (ordinal < 0 || ordinal >= kDeviceCount) return kInvalidDevice;
  *device = ordinal;
  return kSuccess;
}

CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  if (device < 0 || device >= kDeviceCount || length <= 0) return kInvalidValue;
  snprintf(name, (size_t)length, "%s", kDevices[device].name);
  return kSuccess;
}

CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice device) {
  if (device < 0 || device >= kDeviceCount) return kInvalidDevice;
  for (int i = 0; i < 16; ++i) uuid->bytes[i] = (unsigned char)(device * 16 + i);
  return kSuccess;
}

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  if (device < 0 || device >= kDeviceCount) return kInvalidDevice;
  *bytes = kDevices[device].memory;
  return kSuccess;
}

CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice device) {
  if (device < 0 || device >= kDeviceCount) return kInvalidDevice;
  switch (attribute) {
    case 13: *value = kDevices[device].clockKHz; return kSuccess;
    case 16: *value = kDevices[device].sms; return kSuccess;
    case 75: *value = kDevices[device].major; return kSuccess;
    case 76: *value = kDevices[device].minor; return kSuccess;
    default: return kInvalidValue;
  }
}

CUresult cuDeviceGetPCIBusId(char* busId, int length, CUdevice device) {
  if (device < 0 || device >= kDeviceCount || length <= 0) return kInvalidValue;
  snprintf(busId, (size_t)length, "%s", kDevices[device].busId);
  return kSuccess;
}
