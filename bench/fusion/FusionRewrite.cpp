// fusion_rewrite IN.dsp OUT: runs disparcc's frontend (fusion on, remarks on) over IN.dsp and writes
// the source with the fusion edits applied, for bench/fusion to compile. Fails when a loop was not fused.
#include "frontend/Frontend.h"
#include "streamcc/Driver.h"

#include "clang/Tooling/Core/Replacement.h"
#include "llvm/Support/raw_ostream.h"

#include <fstream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3) {
    llvm::errs() << "usage: fusion_rewrite IN.dsp OUT\n";
    return 2;
  }
  dispar::frontend::FrontendOptions options = dispar::streamcc::ToolchainPaths::detect().frontendOptions(argv[1]);
  // The bench runs GPU library calls on the host stand-ins, as a build without a toolkit does: the fused
  // calls are spelt by their own names, not through the GPU dispatcher.
  options.cudaPath.clear();
  options.cudaTarget = dispar::frontend::CudaTarget::HostOnly;
  options.timeLibraryCalls = false;  // the benchmark links no runtime
  options.remarkFusion = true;
  options.remarkFusionMissed = true;
  dispar::frontend::FrontendResult result;
  result.program.name = "fusion_bench";
  std::string diagnostics;
  llvm::raw_string_ostream stream(diagnostics);
  bool ok = dispar::frontend::runFrontend(options, result, stream);
  stream.flush();
  llvm::errs() << diagnostics;
  if (!ok || diagnostics.find("[-Rfusion-missed]") != std::string::npos) return 1;
  llvm::Expected<std::string> edited = clang::tooling::applyAllReplacements(result.sourceText, result.sourceEdits);
  if (!edited) {
    llvm::errs() << llvm::toString(edited.takeError()) << "\n";
    return 1;
  }
  std::ofstream(argv[2]) << *edited;
  return 0;
}
