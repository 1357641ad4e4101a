// The property every reader's fuzz target checks: any input is either refused with a message or read;
// what is read is written, and the written file reads back and writes out the same.
#ifndef DISPAR_FUZZ_ROUND_TRIP_H
#define DISPAR_FUZZ_ROUND_TRIP_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace dispar::fuzz {

/// `parse(text, value, error)` and `write(value)` of one format; `what` names it in a failure.
template <class Value, class Parse, class Write>
int checkRoundTrip(const std::uint8_t* data, std::size_t size, const char* what, Parse parse, Write write) {
  Value value;
  std::string error;
  if (!parse(std::string(reinterpret_cast<const char*>(data), size), value, error)) {
    if (error.empty()) std::abort();  // a refusal always says why
    return 0;
  }
  const std::string written = write(value);
  Value back;
  if (!parse(written, back, error)) {
    std::fprintf(stderr, "written %s refused: %s\n%s", what, error.c_str(), written.c_str());
    std::abort();
  }
  if (write(back) != written) std::abort();
  return 0;
}

}  // namespace dispar::fuzz

#endif
