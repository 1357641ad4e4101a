// The DISPAR frontend: parses a .dsp file with Clang (as C++17, or as CUDA in host-only mode when the
// file has CUDA constructs), checks it, and extracts the program model StreamCC lowers.
#ifndef DISPAR_FRONTEND_FRONTEND_H
#define DISPAR_FRONTEND_FRONTEND_H

#include "dispar_lang/Program.h"

#include "clang/Tooling/Core/Replacement.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace dispar::frontend {

/// How a CUDA program is built: for the GPU with host clones of its kernels (the default when a CUDA
/// toolkit is available), for the host only (no toolkit), or for the GPU only (--no-host-path).
enum class CudaTarget { GpuAndHost, HostOnly, GpuOnly };

struct FrontendOptions {
  std::string sourceFile;
  std::vector<std::string> includeDirs;
  std::vector<std::string> defines;  // NAME or NAME=VALUE
  std::string runtimeIncludeDir;     // holds dispar/dispar.h
  std::string clangResourceDir;      // Clang's builtin headers
  std::string cudaPath;              // CUDA toolkit used to parse CUDA; empty: none
  std::string cudaStubIncludeDir;    // stand-ins for headers CUDA 13 removed
  CudaTarget cudaTarget = CudaTarget::GpuAndHost;
  bool colorDiagnostics = false;
  std::string dependencyFile;       // non-empty: write a Make-style depfile there (disparcc -MF)
  std::string dependencyTarget;     // the rule's target in it
  bool fusion = true;               // library-call fusion (disparcc -fno-fusion turns it off)
  bool remarkFusion = false;        // -Rfusion: a remark for every fused loop
  bool remarkFusionMissed = false;  // -Rfusion-missed: a remark for every loop fusion had to leave
  bool remarkHostPath = false;      // -Rhost-path: a remark for every kernel's host form
  /// cuBLAS / cuFFT calls get a LibraryCallTimer for run traces (<dispar/gpu/LaunchTimer.h>, the runtime's);
  /// off for code compiled without the runtime (bench/fusion's rewritten kernels).
  bool timeLibraryCalls = true;
};

/// A loop of library calls that fusion turned into one call the user never wrote: where, and which calls.
/// A link that then misses the fused call is reported at the loop (streamcc's driver).
struct FusedCall {
  std::string location;  // "app.dsp:20:3", the loop's start as diagnostics print it
  std::string original;  // the call the loop made, e.g. "cblas_dgemv"
  std::string fused;     // the call it became, e.g. "cblas_dgemm"
};

struct FrontendResult {
  lang::ProgramModel program;
  std::string sourceText;                          // the main file as parsed
  clang::tooling::Replacements sourceEdits;        // edits StreamCC applies to sourceText: host clones of
                                                   // kernels and device functions, rewritten launches and calls
  std::vector<clang::tooling::Range> fusedRanges;  // main-file text library-call fusion replaced (offsets
                                                   // into sourceText); other rewrites leave it alone
  std::vector<std::string> gpuLibraries;           // "cublas", "cufft": GPU libraries the program calls (sorted)
  bool launchesInDeviceCode = false;               // kernels launch kernels: nvcc needs -rdc and cudadevrt
  std::vector<FusedCall> fusedCalls;               // every loop library-call fusion replaced, in source order
  std::vector<unsigned> archComparisons;           // offsets of the `__CUDA_ARCH__` tokens that #if / #elif
                                                   // conditions in device code compare (CudaArchConditionals.h)
};

/// True when the source uses CUDA syntax or headers, so it must be parsed as CUDA.
bool looksLikeCuda(const std::string& sourceText);

/// The Clang arguments (without the driver name and the source file) the frontend parses a .dsp with:
/// language, DISPAR's headers and parse-time definitions, CUDA set-up. `disparcc -MJ` hands the same to
/// editors (clangd) through a compilation database.
std::vector<std::string> parseArguments(const FrontendOptions& options, bool cuda);

/// Parses and checks `options.sourceFile`. Diagnostics, Clang's and DISPAR's, are printed to
/// `diagnostics` in Clang's format. Returns false if any error was reported.
bool runFrontend(const FrontendOptions& options, FrontendResult& result, llvm::raw_ostream& diagnostics);

}  // namespace dispar::frontend

#endif
