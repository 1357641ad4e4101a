// The disparcc driver: frontend, lowering, compilation, RTG. tools/disparcc is a one-line main over it.
#ifndef DISPAR_STREAMCC_DRIVER_H
#define DISPAR_STREAMCC_DRIVER_H

#include "frontend/Frontend.h"

#include <optional>
#include <string>
#include <vector>

namespace dispar::streamcc {

/// An MPI library programs can be built for: its compiler wrapper and the runtime libraries built
/// against its mpi.h.
struct MpiToolchain {
  std::string name;  // "mpich" / "openmpi" (disparcc --mpi)
  std::string mpicxx;
  std::string runtimeLibrary;
  std::string gpuLibrary;
};

/// Where the toolchain's pieces are. Defaults come from the build; the environment may override
/// the MPI compiler (DISPAR_MPICXX, for the MPI chosen) and the CUDA toolkit (DISPAR_CUDA_PATH).
struct ToolchainPaths {
  std::vector<MpiToolchain> mpis;    // every MPI this build has a runtime for; the default first
  std::optional<MpiToolchain> smpi;  // SimGrid's SMPI (disparcc --target smpi), when this build has it
  std::string runtimeIncludeDir;
  std::string hostKernelLibrary;
  std::string hostLibraryStandIns;  // dispar_hostlib: cuBLAS and cuFFT on the host path
  std::string hostOnlyIncludeDir;   // cuda_runtime.h stand-in for builds without a toolkit
  std::string clangResourceDir;
  std::string cudaStubIncludeDir;
  std::string cudaPath;  // empty when no toolkit was found

  static ToolchainPaths detect();
  /// Frontend options for parsing `sourceFile` with this toolchain's headers and CUDA set-up (what
  /// disparcc starts from; tools and tests that run the frontend themselves use it too).
  frontend::FrontendOptions frontendOptions(const std::string& sourceFile) const;
  /// The MPI named `name` (empty: the default), or null when this build has none of that name.
  const MpiToolchain* mpi(const std::string& name) const;
};

int disparccMain(int argc, const char* const* argv);

}  // namespace dispar::streamcc

#endif
