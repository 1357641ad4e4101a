// The disparcc driver: frontend, lowering, compilation, RTG. tools/disparcc is a one-line main over it.
#ifndef DISPAR_STREAMCC_DRIVER_H
#define DISPAR_STREAMCC_DRIVER_H

#include <string>

namespace dispar::streamcc {

/// Where the toolchain's pieces are. Defaults come from the build; the environment may override
/// the MPI compiler (DISPAR_MPICXX) and the CUDA toolkit (DISPAR_CUDA_PATH).
struct ToolchainPaths {
  std::string mpicxx;
  std::string runtimeIncludeDir;
  std::string runtimeLibrary;
  std::string hostKernelLibrary;
  std::string gpuLibrary;
  std::string hostOnlyIncludeDir;  // cuda_runtime.h stand-in for builds without a toolkit
  std::string clangResourceDir;
  std::string cudaStubIncludeDir;
  std::string cudaPath;  // empty when no toolkit was found

  static ToolchainPaths detect();
};

int disparccMain(int argc, const char* const* argv);

}  // namespace dispar::streamcc

#endif
