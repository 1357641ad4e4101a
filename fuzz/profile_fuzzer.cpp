// Fuzzes the run-profile reader (what `streammap profile add` and `map --profile` read): the readers' round trip
// (RoundTrip.h).
#include "dispar_lang/RunProfile.h"

#include "RoundTrip.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return dispar::fuzz::checkRoundTrip<dispar::lang::RunProfile>(
      data, size, "profile",
      [](const std::string& text, dispar::lang::RunProfile& out, std::string& error) {
        return dispar::lang::parseRunProfileJson(text, out, error);
      },
      [](const dispar::lang::RunProfile& value) { return dispar::lang::writeRunProfileJson(value); });
}
