// Fuzzes the map-file reader (app.map.json): the readers' round trip (RoundTrip.h).
#include "streammap/MapFile.h"

#include "RoundTrip.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return dispar::fuzz::checkRoundTrip<dispar::streammap::MapRecord>(
      data, size, "map",
      [](const std::string& text, dispar::streammap::MapRecord& out, std::string& error) {
        return dispar::streammap::parseMapJson(text, out, error);
      },
      [](const dispar::streammap::MapRecord& value) { return dispar::streammap::writeMapJson(value); });
}
