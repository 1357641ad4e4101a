// Fuzzes the map-file reader (app.map.json): any input is either refused with a message or read; what
// is read is written and must read back to the same file.
#include "streammap/MapFile.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dispar::streammap;
  MapRecord record;
  std::string error;
  if (!parseMapJson(std::string(reinterpret_cast<const char*>(data), size), record, error)) {
    if (error.empty()) std::abort();
    return 0;
  }
  const std::string written = writeMapJson(record);
  MapRecord back;
  if (!parseMapJson(written, back, error)) {
    std::fprintf(stderr, "written map refused: %s\n%s", error.c_str(), written.c_str());
    std::abort();
  }
  if (writeMapJson(back) != written) std::abort();
  return 0;
}
