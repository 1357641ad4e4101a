// Fuzzes the run-profile reader (what `streammap profile add` and `map --profile` read): any input is
// either refused with a message or read; what is read is written and must read back to the same file.
#include "dispar_lang/RunProfile.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dispar::lang;
  RunProfile profile;
  std::string error;
  if (!parseRunProfileJson(std::string(reinterpret_cast<const char*>(data), size), profile, error)) {
    if (error.empty()) std::abort();  // a refusal always says why
    return 0;
  }
  const std::string written = writeRunProfileJson(profile);
  RunProfile back;
  if (!parseRunProfileJson(written, back, error)) {
    std::fprintf(stderr, "written profile refused: %s\n%s", error.c_str(), written.c_str());
    std::abort();
  }
  if (writeRunProfileJson(back) != written) std::abort();
  return 0;
}
