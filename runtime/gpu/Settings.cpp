#include <dispar/gpu/Settings.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <stdexcept>

namespace dispar::gpu {
namespace {

constexpr std::size_t kDefaultChunkBytes = std::size_t{1} << 20;
constexpr unsigned long long kMinChunkBytes = 4096;
constexpr unsigned long long kMaxChunkBytes = 1ull << 30;

bool isUnset(const char* text) { return text == nullptr || *text == '\0'; }

}  // namespace

DeviceRequest parseDeviceRequest(const char* text) {
  if (isUnset(text)) return {};
  const std::string value(text);
  if (value == "host") return {DeviceRequest::Kind::Host, -1};
  errno = 0;
  char* end = nullptr;
  const long long index = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || index < 0 || index > INT_MAX)
    throw std::runtime_error("DISPAR_DEVICE must be 'host' or a device index, got '" + value + "'");
  return {DeviceRequest::Kind::Index, static_cast<int>(index)};
}

std::size_t parseChunkBytes(const char* text) {
  if (isUnset(text)) return kDefaultChunkBytes;
  const std::string value(text);
  errno = 0;
  char* end = nullptr;
  unsigned long long bytes = std::strtoull(text, &end, 10);
  bool valid = errno == 0 && end != text && value.front() != '-' && bytes <= kMaxChunkBytes;
  if (valid && (*end == 'K' || *end == 'k')) {
    bytes <<= 10;
    ++end;
  } else if (valid && (*end == 'M' || *end == 'm')) {
    bytes <<= 20;
    ++end;
  }
  valid = valid && *end == '\0' && bytes >= kMinChunkBytes && bytes <= kMaxChunkBytes;
  if (!valid)
    throw std::runtime_error(
        "DISPAR_CHUNK_BYTES must be a byte count from 4096 to 1073741824 (suffix K or M allowed), got '" + value + "'");
  return static_cast<std::size_t>(bytes);
}

bool parseCudaAwareMpi(const char* text, bool mpiSays) {
  if (isUnset(text)) return mpiSays;
  const std::string value(text);
  if (value == "1") return true;
  if (value == "0") return false;
  throw std::runtime_error("DISPAR_CUDA_AWARE_MPI must be 0 or 1, got '" + value + "'");
}

bool parseVerbose(const char* text) { return text != nullptr && std::string(text) == "1"; }

std::optional<int> parseLocalId(const char* text) {
  if (isUnset(text)) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long id = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || id < 0 || id > INT_MAX)
    throw std::runtime_error("SLURM_LOCALID must be a non-negative integer, got '" + std::string(text) + "'");
  return static_cast<int>(id);
}

std::optional<std::vector<int>> parseVisibleDevices(const char* text) {
  if (isUnset(text)) return std::nullopt;
  std::vector<int> ordinals;
  const char* cursor = text;
  while (true) {
    errno = 0;
    char* end = nullptr;
    const long long ordinal = std::strtoll(cursor, &end, 10);
    if (errno != 0 || end == cursor || ordinal < 0 || ordinal > INT_MAX) return std::nullopt;
    ordinals.push_back(static_cast<int>(ordinal));
    if (*end == '\0') return ordinals;
    if (*end != ',') return std::nullopt;
    cursor = end + 1;
  }
}

}  // namespace dispar::gpu
