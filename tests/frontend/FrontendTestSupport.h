// Runs the frontend on a source text written to a temporary .dsp file.
#ifndef DISPAR_TESTS_FRONTEND_SUPPORT_H
#define DISPAR_TESTS_FRONTEND_SUPPORT_H

#include "frontend/Frontend.h"
#include "streamcc/Driver.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <fstream>
#include <string>
#include <vector>

namespace dispar::testing {

struct ParseOutcome {
  bool ok = false;
  std::string diagnostics;
  frontend::FrontendResult result;
};

inline ParseOutcome parseSource(const std::string& source, const std::string& fileName = "test.dsp",
                                frontend::CudaTarget cudaTarget = frontend::CudaTarget::GpuAndHost) {
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("dispar-frontend-test", dir);
  std::string path = std::string(dir) + "/" + fileName;
  std::ofstream(path) << source;
  frontend::FrontendOptions options = streamcc::ToolchainPaths::detect().frontendOptions(path);
  options.cudaTarget = cudaTarget;
  ParseOutcome outcome;
  outcome.result.program.name = "test";
  llvm::raw_string_ostream diagnostics(outcome.diagnostics);
  outcome.ok = frontend::runFrontend(options, outcome.result, diagnostics);
  diagnostics.flush();
  llvm::sys::fs::remove_directories(dir);
  return outcome;
}

}  // namespace dispar::testing

#endif
