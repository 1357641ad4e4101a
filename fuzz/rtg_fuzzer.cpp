// Fuzzes the RTG reader: the readers' round trip (RoundTrip.h).
#include "dispar_lang/Rtg.h"

#include "RoundTrip.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return dispar::fuzz::checkRoundTrip<dispar::lang::Rtg>(
      data, size, "RTG",
      [](const std::string& text, dispar::lang::Rtg& out, std::string& error) {
        return dispar::lang::parseRtgJson(text, out, error);
      },
      [](const dispar::lang::Rtg& value) { return dispar::lang::writeRtgJson(value); });
}
