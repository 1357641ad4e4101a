// The files streammap's mapping commands read as input, each through its format's one parser: the
// program's RTG (disparcc's) and a run profile (the runtime's). Errors start with the file's path.
#ifndef STREAMMAP_INPUT_FILES_H
#define STREAMMAP_INPUT_FILES_H

#include "dispar_lang/Rtg.h"
#include "dispar_lang/RunProfile.h"

#include <string>

namespace dispar::streammap {

/// Reads and validates the RTG at `path`.
bool readRtg(const std::string& path, lang::Rtg& out, std::string& error);

/// Reads and validates the run profile at `path`.
bool readRunProfile(const std::string& path, lang::RunProfile& out, std::string& error);

}  // namespace dispar::streammap

#endif
