#include "streamcc/DriverOptions.h"

#include <cstring>
#include <sstream>

namespace dispar::streamcc {

namespace {

enum class ArgStyle {
  Flag,              // -g
  Separate,          // -o FILE
  JoinedOrSeparate,  // -IDIR or -I DIR
  Joined,            // -O2 (prefix match)
};

using Apply = void (*)(DriverOptions&, const std::string& value);

struct OptionSpec {
  const char* name;
  ArgStyle style;
  const char* metavar;
  const char* help;
  Apply apply;
};

void splitCommaList(const std::string& value, std::vector<std::string>& out) {
  std::stringstream in(value);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
}

const OptionSpec kOptions[] = {
    {"-o", ArgStyle::Separate, "FILE", "write the program to FILE (default: the input's stem)",
     [](DriverOptions& o, const std::string& v) { o.output = v; }},
    {"-I", ArgStyle::JoinedOrSeparate, "DIR", "add DIR to the include search path",
     [](DriverOptions& o, const std::string& v) { o.includeDirs.push_back(v); }},
    {"-D", ArgStyle::JoinedOrSeparate, "NAME[=VALUE]", "define a macro",
     [](DriverOptions& o, const std::string& v) { o.defines.push_back(v); }},
    {"-L", ArgStyle::JoinedOrSeparate, "DIR", "add DIR to the library search path",
     [](DriverOptions& o, const std::string& v) { o.libraryDirs.push_back(v); }},
    {"-l", ArgStyle::JoinedOrSeparate, "LIB", "link the program with library LIB (e.g. -lfftw3 -lopenblas)",
     [](DriverOptions& o, const std::string& v) { o.libraries.push_back(v); }},
    {"-O", ArgStyle::Joined, "LEVEL", "optimisation level passed to the compiler (default 2)",
     [](DriverOptions& o, const std::string& v) { o.optimization = "-O" + v; }},
    {"-g", ArgStyle::Flag, nullptr, "generate debug information (line tables point at the .dsp)",
     [](DriverOptions& o, const std::string&) { o.debugInfo = true; }},
    {"--emit-cpp", ArgStyle::Separate, "FILE", "also write the generated MPI C++ source to FILE",
     [](DriverOptions& o, const std::string& v) { o.emitCpp = v; }},
    {"--emit-rtg", ArgStyle::Separate, "FILE", "write the RTG to FILE (default: <output>.rtg.json)",
     [](DriverOptions& o, const std::string& v) { o.emitRtg = v; }},
    {"--keep-generated", ArgStyle::Flag, nullptr, "keep the generated source as <output>.dispar.cpp",
     [](DriverOptions& o, const std::string&) { o.keepGenerated = true; }},
    {"-MF", ArgStyle::Separate, "FILE",
     "also write the program's dependencies (the .dsp and what it includes) as a Make rule",
     [](DriverOptions& o, const std::string& v) { o.dependencyFile = v; }},
    {"-MJ", ArgStyle::Separate, "FILE",
     "also write a compilation database (compile_commands.json) for the .dsp, for clangd",
     [](DriverOptions& o, const std::string& v) { o.compileCommandsFile = v; }},
    {"-fsyntax-only", ArgStyle::Flag, nullptr, "check the program and stop; write nothing",
     [](DriverOptions& o, const std::string&) { o.syntaxOnly = true; }},
    {"--mpi", ArgStyle::Separate, "mpich|openmpi",
     "MPI library to build the program for (default: the build's, see --version)",
     [](DriverOptions& o, const std::string& v) { o.mpi = v; }},
    {"--target", ArgStyle::Separate, "mpi|smpi",
     "mpi: a program for mpiexec/srun (default); smpi: one for SimGrid's simulator (streammap simulate, "
     "docs/simulation.md)",
     [](DriverOptions& o, const std::string& v) { o.target = v; }},
    {"--cuda-arch", ArgStyle::Separate, "ARCH[,ARCH]", "GPU targets, e.g. sm_80,sm_90,compute_90 (repeatable)",
     [](DriverOptions& o, const std::string& v) { splitCommaList(v, o.cudaArchs); }},
    {"--cuda-path", ArgStyle::Separate, "DIR", "CUDA toolkit to use (default /usr/local/cuda)",
     [](DriverOptions& o, const std::string& v) { o.cudaPath = v; }},
    {"--no-host-path", ArgStyle::Flag, nullptr, "GPU vnodes always get a GPU: no host clones of kernels",
     [](DriverOptions& o, const std::string&) { o.noHostPath = true; }},
    {"-ffusion", ArgStyle::Flag, nullptr,
     "fuse loops of BLAS/FFTW calls into one call (the default; docs/libraries.md)",
     [](DriverOptions& o, const std::string&) { o.fusion = true; }},
    {"-fno-fusion", ArgStyle::Flag, nullptr, "leave loops of library calls as written",
     [](DriverOptions& o, const std::string&) { o.fusion = false; }},
    {"-Rfusion", ArgStyle::Flag, nullptr, "print a remark at every loop of library calls fused into one call",
     [](DriverOptions& o, const std::string&) { o.remarkFusion = true; }},
    {"-Rfusion-missed", ArgStyle::Flag, nullptr, "print a remark at every loop of library calls not fused, saying why",
     [](DriverOptions& o, const std::string&) { o.remarkFusionMissed = true; }},
    {"-Rhost-path", ArgStyle::Flag, nullptr,
     "print a remark at every kernel: the form of its host clone (thread loops, or fibers and why)",
     [](DriverOptions& o, const std::string&) { o.remarkHostPath = true; }},
    {"-fcolor-diagnostics", ArgStyle::Flag, nullptr, "colour the diagnostics (default: on a terminal, unless NO_COLOR)",
     [](DriverOptions& o, const std::string&) { o.color = DriverOptions::Color::Always; }},
    {"-fno-color-diagnostics", ArgStyle::Flag, nullptr, "never colour the diagnostics",
     [](DriverOptions& o, const std::string&) { o.color = DriverOptions::Color::Never; }},
    {"-fdiagnostics-color=", ArgStyle::Joined, "always|never|auto",
     "as -fcolor-diagnostics, -fno-color-diagnostics or the default",
     [](DriverOptions& o, const std::string& v) {
       o.color = v == "always"  ? DriverOptions::Color::Always
                 : v == "never" ? DriverOptions::Color::Never
                                : DriverOptions::Color::Auto;
     }},
    {"-v", ArgStyle::Flag, nullptr, "print the commands disparcc runs",
     [](DriverOptions& o, const std::string&) { o.verbose = true; }},
    {"--help", ArgStyle::Flag, nullptr, "print this help",
     [](DriverOptions& o, const std::string&) { o.showHelp = true; }},
    {"--version", ArgStyle::Flag, nullptr, "print the version",
     [](DriverOptions& o, const std::string&) { o.showVersion = true; }},
};

}  // namespace

bool parseDriverOptions(int argc, const char* const* argv, DriverOptions& options, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.empty() || arg[0] != '-' || arg == "-") {
      if (!options.input.empty()) {
        error = "more than one input file: '" + options.input + "' and '" + arg + "'";
        return false;
      }
      options.input = arg;
      continue;
    }
    const OptionSpec* match = nullptr;
    std::string value;
    for (const OptionSpec& spec : kOptions) {
      std::size_t n = std::strlen(spec.name);
      if (arg == spec.name) {
        match = &spec;
        if (spec.style == ArgStyle::Separate || spec.style == ArgStyle::JoinedOrSeparate) {
          if (i + 1 >= argc) {
            error = std::string("missing argument to '") + spec.name + "'";
            return false;
          }
          value = argv[++i];
        }
        break;
      }
      if ((spec.style == ArgStyle::JoinedOrSeparate || spec.style == ArgStyle::Joined) &&
          arg.compare(0, n, spec.name) == 0) {
        match = &spec;
        value = arg.substr(n);
        break;
      }
      if (spec.style == ArgStyle::Separate && arg.compare(0, n + 1, std::string(spec.name) + "=") == 0) {
        match = &spec;
        value = arg.substr(n + 1);
        break;
      }
    }
    if (!match) {
      error = "unknown option '" + arg + "'";
      return false;
    }
    if (match->name == std::string("-fdiagnostics-color=") && value != "always" && value != "never" &&
        value != "auto") {
      error = "invalid '" + arg + "'; expected always, never or auto";
      return false;
    }
    // A value that starts with '-' is an option the user forgot a value before: `-o -weird` would reach
    // the compiler as an option of its own.
    if (match->style == ArgStyle::Separate && !value.empty() && value[0] == '-' &&
        arg.compare(0, std::strlen(match->name) + 1, std::string(match->name) + "=") != 0) {
      error = std::string("missing argument to '") + match->name + "': '" + value +
              "' is an option (for a file of that name, write ./" + value + ")";
      return false;
    }
    if (match->style == ArgStyle::Separate && value.empty()) {
      error = std::string("empty argument to '") + match->name + "'";
      return false;
    }
    if (match->style == ArgStyle::Joined && match->name == std::string("-O") &&
        !(value.empty() || value == "0" || value == "1" || value == "2" || value == "3" || value == "s" ||
          value == "fast")) {
      error = "invalid optimisation level '" + arg + "'";
      return false;
    }
    match->apply(options, value);
  }
  if (options.target != "mpi" && options.target != "smpi") {
    error = "invalid --target '" + options.target + "'; expected 'mpi' or 'smpi'";
    return false;
  }
  if (options.target == "smpi" && !options.mpi.empty()) {
    error = "--mpi " + options.mpi + " and --target smpi: the SMPI target is built with SimGrid's own MPI";
    return false;
  }
  if (options.target == "smpi" && (options.noHostPath || !options.cudaArchs.empty())) {
    error = std::string(options.noHostPath ? "--no-host-path" : "--cuda-arch") +
            " and --target smpi: the SMPI target runs kernels on the host path and simulates the GPU's time";
    return false;
  }
  if (options.input.empty() && !options.showHelp && !options.showVersion) {
    error = "no input file";
    return false;
  }
  return true;
}

std::string driverHelp() {
  std::ostringstream out;
  out << "usage: disparcc [options] app.dsp [-o app]\n\n"
         "Compiles a DISPAR dataflow program into an MPI program and writes its Requirement Topology Graph\n"
         "(<output>.rtg.json), from which `streammap map` places the VNODE instances on nodes and groups them\n"
         "into MPI ranks. --version prints the MPI and CUDA this disparcc builds with.\n\noptions:\n";
  for (const OptionSpec& spec : kOptions) {
    std::string left = spec.name;
    if (spec.metavar) left += (spec.style == ArgStyle::Separate ? " " : "") + std::string(spec.metavar);
    out << "  " << left << std::string(left.size() < 22 ? 22 - left.size() : 1, ' ') << spec.help << "\n";
  }
  return out.str();
}

}  // namespace dispar::streamcc
