// Fuzzes the RTG reader: any input is either refused with a message or read; what is read is written
// and must read back to the same file (the writer never writes what the reader refuses).
#include "dispar_lang/Rtg.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dispar::lang;
  Rtg rtg;
  std::string error;
  if (!parseRtgJson(std::string(reinterpret_cast<const char*>(data), size), rtg, error)) {
    if (error.empty()) std::abort();  // a refusal always says why
    return 0;
  }
  const std::string written = writeRtgJson(rtg);
  Rtg back;
  if (!parseRtgJson(written, back, error)) {
    std::fprintf(stderr, "written RTG refused: %s\n%s", error.c_str(), written.c_str());
    std::abort();
  }
  if (writeRtgJson(back) != written) std::abort();
  return 0;
}
