#include "streammap/InputFiles.h"

#include "streammap/AtomicFiles.h"
#include "streammap/Cluster.h"

namespace dispar::streammap {

namespace {

/// The file at `path` through `parse`, whose error is prefixed with the path (escaped: a name may hold
/// anything, a newline included).
template <class Out, class Parse>
bool readParsed(const std::string& path, Out& out, Parse parse, std::string& error) {
  std::string text;
  if (!readFile(path, text, error)) return false;
  if (parse(text, out, error)) return true;
  error = escapedForDisplay(path) + ": " + error;
  return false;
}

}  // namespace

bool readRtg(const std::string& path, lang::Rtg& out, std::string& error) {
  return readParsed(path, out, lang::parseRtgJson, error);
}

bool readRunProfile(const std::string& path, lang::RunProfile& out, std::string& error) {
  return readParsed(path, out, lang::parseRunProfileJson, error);
}

}  // namespace dispar::streammap
