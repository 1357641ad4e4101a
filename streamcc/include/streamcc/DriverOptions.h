// disparcc's command line: the option table (data, printed by --help) and the parsed options.
#ifndef DISPAR_STREAMCC_DRIVER_OPTIONS_H
#define DISPAR_STREAMCC_DRIVER_OPTIONS_H

#include <string>
#include <vector>

namespace dispar::streamcc {

struct DriverOptions {
  std::string input;                     // the .dsp file
  std::string output;                    // -o; default: input stem
  std::vector<std::string> includeDirs;  // -I
  std::vector<std::string> defines;      // -D
  std::vector<std::string> libraryDirs;  // -L
  std::vector<std::string> libraries;    // -l
  std::string optimization = "-O2";      // -O<n>
  bool debugInfo = false;                // -g
  std::string emitCpp;                   // --emit-cpp FILE
  std::string emitRtg;                   // --emit-rtg FILE; default: <output>.rtg.json
  bool keepGenerated = false;            // --keep-generated: keep <output>.dispar.cpp
  bool verbose = false;                  // -v
  bool syntaxOnly = false;               // -fsyntax-only: frontend checks only
  std::vector<std::string> cudaArchs;    // --cuda-arch (repeatable or comma-separated)
  std::string cudaPath;                  // --cuda-path
  std::string mpi;                       // --mpi: "mpich" / "openmpi"; empty: the build's default
  std::string target = "mpi";            // --target: "mpi" (a real MPI) or "smpi" (SimGrid's simulated MPI)
  std::string dependencyFile;            // -MF: Make-style dependencies of the program (build systems)
  std::string compileCommandsFile;       // -MJ: a compilation database for the .dsp (editors, clangd)
  bool noHostPath = false;               // --no-host-path: GPU VNODEs require a GPU
  bool fusion = true;                    // -ffusion / -fno-fusion: library-call fusion
  bool remarkFusion = false;             // -Rfusion: remark on every fused loop
  bool remarkHostPath = false;           // -Rhost-path: remark on every kernel's host form
  bool remarkFusionMissed = false;       // -Rfusion-missed: remark on every loop left unfused, and why
  /// -fcolor-diagnostics / -fno-color-diagnostics / -fdiagnostics-color=always|never|auto, as clang takes
  /// them. Auto (the default): colours when standard error is a terminal and NO_COLOR is not set.
  enum class Color { Auto, Always, Never } color = Color::Auto;
  bool showHelp = false;
  bool showVersion = false;
};

/// Exit statuses, as getopt tools have them: 1 when the compilation failed, 2 when the command line
/// was wrong (an unknown option, a missing or malformed value, no input).
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

/// Parses argv[1..]. On error returns false and sets `error` (e.g. "missing argument to '-o'").
bool parseDriverOptions(int argc, const char* const* argv, DriverOptions& options, std::string& error);

/// The --help text, generated from the option table.
std::string driverHelp();

}  // namespace dispar::streamcc

#endif
