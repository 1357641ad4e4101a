#include "streamcc/Driver.h"

#include "streamcc/CodeGenerator.h"
#include "streamcc/DriverOptions.h"

#include "dispar_lang/OutputTarget.h"
#include "dispar_lang/Rtg.h"
#include "frontend/Frontend.h"

#include <dispar/gpu/CudaArch.h>

#include "clang/Tooling/Core/Replacement.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <vector>

namespace dispar::streamcc {

namespace {

const char* envOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

void reportError(const llvm::Twine& message) { llvm::errs() << "disparcc: error: " << message << "\n"; }

/// Diagnostics in colour: as asked, else on a terminal unless NO_COLOR is set (no-color.org).
bool colorDiagnostics(DriverOptions::Color color) {
  if (color != DriverOptions::Color::Auto) return color == DriverOptions::Color::Always;
  const char* noColor = std::getenv("NO_COLOR");
  return (noColor == nullptr || *noColor == '\0') && llvm::errs().has_colors();
}

// A file written next to its destination and renamed into place on commit(); removed otherwise, so a
// failed build leaves nothing half-written behind. The destination follows the one rule for outputs
// (dispar_lang/OutputTarget.h): a link's target is written, a device or FIFO is never replaced, an
// existing file keeps its mode.
class PendingFile {
 public:
  explicit PendingFile(std::string destination) : destination_(std::move(destination)) {
    if (!lang::resolveOutputTarget(destination_, target_, refusal_)) return;
    llvm::SmallString<256> model(target_.path);
    model += ".tmp-%%%%%%";
    int fd = -1;
    if (llvm::sys::fs::createUniqueFile(model, fd, temporary_)) {
      temporary_.clear();
      return;
    }
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
    llvm::sys::RemoveFileOnSignal(temporary_);  // an interrupted build leaves nothing behind either
  }
  ~PendingFile() {
    if (temporary_.empty()) return;
    llvm::sys::DontRemoveFileOnSignal(temporary_);
    if (!committed_) llvm::sys::fs::remove(temporary_);
  }
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;

  bool valid() const { return !temporary_.empty(); }
  /// Why the destination may not be written ("'x': is a FIFO; ..."), when it is refused.
  const std::string& refusal() const { return refusal_; }
  std::string temporaryPath() const { return std::string(temporary_); }
  const std::string& destination() const { return destination_; }

  bool write(const std::string& contents) {
    std::error_code ec;
    llvm::raw_fd_ostream out(temporary_, ec);
    if (ec) return false;
    out << contents;
    out.close();
    return !out.has_error();
  }
  bool commit() {
    std::string error;
    if (!lang::keepTargetMode(std::string(temporary_), target_, error)) return false;
    if (llvm::sys::fs::rename(temporary_, target_.path)) return false;
    committed_ = true;
    return true;
  }

 private:
  std::string destination_;
  lang::OutputTarget target_;
  std::string refusal_;
  llvm::SmallString<256> temporary_;
  bool committed_ = false;
};

std::string stemOf(const std::string& path) { return llvm::sys::path::stem(path).str(); }

std::string defaultOutput(const std::string& input) {
  llvm::SmallString<256> out(input);
  llvm::sys::path::replace_extension(out, "");
  if (out == input) out += ".out";
  return std::string(out);
}

/// Runs `command`; with `output`, its standard output and error go there (in order) instead of to ours.
int runCommand(const std::vector<std::string>& command, bool verbose, std::string* output = nullptr) {
  if (verbose) {
    for (std::size_t i = 0; i < command.size(); ++i) llvm::errs() << (i ? " " : "") << command[i];
    llvm::errs() << "\n";
  }
  std::vector<llvm::StringRef> args(command.begin(), command.end());
  std::string message;
  llvm::SmallString<128> captured;
  if (output != nullptr && llvm::sys::fs::createTemporaryFile("disparcc-compiler", "log", captured)) output = nullptr;
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(captured), llvm::StringRef(captured)};
  int status = llvm::sys::ExecuteAndWait(command[0], args, std::nullopt,
                                         output != nullptr ? llvm::ArrayRef(redirects) : std::nullopt, 0, 0, &message);
  if (output != nullptr) {
    if (llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text = llvm::MemoryBuffer::getFile(captured))
      *output = (*text)->getBuffer().str();
    llvm::sys::fs::remove(captured);
  }
  if (status < 0) reportError("cannot run '" + command[0] + "': " + message);
  return status;
}

/// The library that defines a function a program may call (by name prefix), for link errors.
struct LibraryOfFunctions {
  llvm::StringLiteral prefix;
  llvm::StringLiteral link;
};
constexpr LibraryOfFunctions kLibraryOfFunctions[] = {
    {"cblas_", "-lopenblas (OpenBLAS, or another CBLAS)"},
    {"fftwf_", "-lfftw3f"},
    {"fftw_", "-lfftw3"},
};

/// The names a GNU linker reports as undefined ("undefined reference to `cblas_dgemm'"), each once.
std::vector<std::string> undefinedReferences(const std::string& linkerOutput) {
  std::vector<std::string> names;
  const llvm::StringRef marker = "undefined reference to `";
  llvm::StringRef rest = linkerOutput;
  for (std::size_t at = rest.find(marker); at != llvm::StringRef::npos; at = rest.find(marker)) {
    rest = rest.substr(at + marker.size());
    const std::string name = rest.substr(0, rest.find('\'')).str();
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

class Disparcc {
 public:
  Disparcc(DriverOptions options, ToolchainPaths paths, MpiToolchain mpi)
      : options_(std::move(options)), paths_(std::move(paths)), mpi_(std::move(mpi)) {}

  int run() {
    if (options_.output.empty()) options_.output = defaultOutput(options_.input);
    if (!inputReadable() || (!options_.syntaxOnly && !outputsWritable())) return 1;
    if (options_.noHostPath && paths_.cudaPath.empty()) {
      reportError("--no-host-path needs a CUDA toolkit; none found (set --cuda-path or DISPAR_CUDA_PATH)");
      return 1;
    }
    if (!validCudaArchs()) return 1;
    frontend::FrontendOptions frontendOptions = makeFrontendOptions();
    frontend::FrontendResult parsed;
    parsed.program.name = stemOf(options_.output);
    if (!frontend::runFrontend(frontendOptions, parsed, llvm::errs())) return 1;
    if (!options_.compileCommandsFile.empty() && !writeCompileCommands(frontendOptions, parsed.program.isCuda))
      return 1;
    if (options_.syntaxOnly) return 0;
    isCudaProgram_ = parsed.program.isCuda;
    gpuBuild_ = parsed.program.isCuda && frontendOptions.cudaTarget != frontend::CudaTarget::HostOnly;
    hostPath_ = frontendOptions.cudaTarget != frontend::CudaTarget::GpuOnly;
    gpuLibraries_ = parsed.gpuLibraries;
    launchesInDeviceCode_ = parsed.launchesInDeviceCode;
    fusedCalls_ = parsed.fusedCalls;
    if (parsed.program.isCuda && !gpuBuild_ && !simulated())
      llvm::errs() << "disparcc: warning: no CUDA toolkit found; the GPU vnodes of '" << options_.output
                   << "' will run their kernels on the host\n";
    std::optional<std::string> generated = lower(parsed);
    if (!generated) return 1;
    if (!options_.emitCpp.empty() && !writeAtomically(options_.emitCpp, *generated)) return 1;
    lang::Rtg graph = lang::buildRtg(parsed.program, cudaArchs());
    graph.mpi = mpi_.name;
    return build(*generated, graph);
  }

 private:
  frontend::FrontendOptions makeFrontendOptions() const {
    frontend::FrontendOptions frontendOptions = paths_.frontendOptions(options_.input);
    frontendOptions.dependencyFile = options_.dependencyFile;
    frontendOptions.dependencyTarget = options_.output;
    frontendOptions.includeDirs = options_.includeDirs;
    frontendOptions.defines = options_.defines;
    frontendOptions.colorDiagnostics = colorDiagnostics(options_.color);
    frontendOptions.fusion = options_.fusion;
    frontendOptions.remarkFusion = options_.remarkFusion;
    frontendOptions.remarkFusionMissed = options_.remarkFusionMissed;
    frontendOptions.remarkHostPath = options_.remarkHostPath;
    frontendOptions.cudaTarget = options_.noHostPath                      ? frontend::CudaTarget::GpuOnly
                                 : paths_.cudaPath.empty() || simulated() ? frontend::CudaTarget::HostOnly
                                                                          : frontend::CudaTarget::GpuAndHost;
    return frontendOptions;
  }

  // Errors about the user's own paths, before any work: not a temporary file's name after it.
  bool inputReadable() const {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = llvm::MemoryBuffer::getFile(options_.input);
    if (buffer) return true;
    reportError("cannot read '" + options_.input + "': " + buffer.getError().message());
    return false;
  }
  bool outputsWritable() const {
    lang::OutputTarget target;
    std::string why;
    if (!lang::resolveOutputTarget(options_.output, target, why)) {
      reportError("cannot write the program to " + why);
      return false;
    }
    // The other outputs too, before any work (-MF is written by the parse itself).
    for (const std::string* other :
         {&options_.emitCpp, &options_.emitRtg, &options_.dependencyFile, &options_.compileCommandsFile}) {
      lang::OutputTarget ignored;
      if (!other->empty() && !lang::resolveOutputTarget(*other, ignored, why)) {
        reportError("cannot write " + why);
        return false;
      }
    }
    llvm::SmallString<256> dir(target.path);
    llvm::sys::path::remove_filename(dir);
    if (dir.empty()) dir = ".";
    if (!llvm::sys::fs::access(dir, llvm::sys::fs::AccessMode::Write)) return true;
    reportError("cannot write the program to '" + options_.output + "': directory '" + std::string(dir) +
                "' is not writable");
    return false;
  }

  // The generated translation unit: the user's source with the frontend's edits, then the skeleton.
  std::optional<std::string> lower(const frontend::FrontendResult& parsed) const {
    llvm::Expected<std::string> edited = clang::tooling::applyAllReplacements(parsed.sourceText, parsed.sourceEdits);
    if (!edited) {
      reportError("internal: cannot apply source edits: " + llvm::toString(edited.takeError()));
      return std::nullopt;
    }
    LoweringInput lowering;
    lowering.program = &parsed.program;
    lowering.sourcePath = options_.input;
    lowering.editedSource = std::move(*edited);
    lowering.generatedName = options_.output + ".dispar.cpp";
    lowering.gpuBuild = gpuBuild_;
    lowering.dispatchGpuLibraries = gpuBuild_ && hostPath_ && !parsed.gpuLibraries.empty();
    lowering.cudaArchs = cudaArchs();
    return generateTranslationUnit(lowering);
  }

  // Compiles the generated source and writes the program and its RTG; all or nothing.
  int build(const std::string& generated, const lang::Rtg& graph) const {
    PendingFile source(options_.output + ".dispar.cpp");
    PendingFile binary(options_.output);
    PendingFile rtg(options_.emitRtg.empty() ? options_.output + ".rtg.json" : options_.emitRtg);
    for (const PendingFile* file : {&source, &binary, &rtg})
      if (!file->valid()) {
        reportError(file->refusal().empty() ? "cannot create a file next to '" + file->destination() + "'"
                                            : "cannot write " + file->refusal());
        return 1;
      }
    if (!source.write(generated)) {
      reportError("cannot write '" + source.temporaryPath() + "'");
      return 1;
    }
    // nvcc and mpicxx choose the language by extension (nvcc's -x would apply to the libraries too).
    std::string compiledSource = source.temporaryPath() + (gpuBuild_ ? ".cu" : ".cpp");
    if (llvm::sys::fs::rename(source.temporaryPath(), compiledSource)) {
      reportError("cannot prepare '" + compiledSource + "'");
      return 1;
    }
    llvm::sys::RemoveFileOnSignal(compiledSource);
    std::string compilerOutput;
    int status = runCommand(compileCommand(compiledSource, binary.temporaryPath()), options_.verbose, &compilerOutput);
    llvm::sys::DontRemoveFileOnSignal(compiledSource);
    // The compiler's words, with the generated source named as --keep-generated names it (not a temporary's).
    for (std::size_t at = compilerOutput.find(compiledSource); at != std::string::npos;
         at = compilerOutput.find(compiledSource, at))
      compilerOutput.replace(at, compiledSource.size(), source.destination());
    llvm::errs() << compilerOutput;
    if (status != 0) explainUndefinedReferences(compilerOutput);
    if (options_.keepGenerated)
      llvm::sys::fs::rename(compiledSource, source.destination());
    else
      llvm::sys::fs::remove(compiledSource);
    if (status != 0) {
      if (status > 0)
        reportError("compilation of the generated program failed (exit status " + llvm::Twine(status) + ")");
      return 1;
    }
    if (!rtg.write(lang::writeRtgJson(graph))) {
      reportError("cannot write '" + rtg.destination() + "'");
      return 1;
    }
    if (!binary.commit() || !rtg.commit()) {
      reportError("cannot move the output into place at '" + options_.output + "'");
      return 1;
    }
    return 0;
  }

  /// After a failed link: each undefined library function named at the user's code and with the library
  /// to link. A call fusion made (cblas_dgemm for a loop of cblas_dgemv) is named at the loop it replaced.
  void explainUndefinedReferences(const std::string& linkerOutput) const {
    for (const std::string& name : undefinedReferences(linkerOutput)) {
      const LibraryOfFunctions* library = nullptr;
      for (const LibraryOfFunctions& l : kLibraryOfFunctions)
        if (llvm::StringRef(name).starts_with(l.prefix)) {
          library = &l;
          break;
        }
      const std::string link =
          library ? "link " + library->link.str() : std::string("link the library that defines it");
      bool fused = false;
      for (const frontend::FusedCall& call : fusedCalls_)
        if (call.fused == name) {
          fused = true;
          llvm::errs() << call.location << ": error: this loop of " << call.original << " calls became one " << name
                       << " call (library-call fusion), and the link found no " << name << "; " << link
                       << ", or compile with -fno-fusion\n";
        }
      if (!fused && library != nullptr)
        llvm::errs() << "disparcc: error: the link found no " << name << "; " << link << "\n";
    }
  }

  /// A one-entry compilation database for the .dsp: how the frontend parsed it, so that an editor's
  /// clangd sees the same declarations (dispar.h in parse mode, the CUDA set-up) and no false errors.
  bool writeCompileCommands(frontend::FrontendOptions parseOptions, bool cuda) const {
    parseOptions.dependencyFile.clear();
    llvm::SmallString<256> directory, file(options_.input);
    llvm::sys::fs::current_path(directory);
    llvm::sys::fs::make_absolute(file);
    llvm::json::Array arguments{"clang++"};
    for (const std::string& arg : frontend::parseArguments(parseOptions, cuda)) arguments.push_back(arg);
    arguments.push_back(std::string(file));
    llvm::json::Array database{llvm::json::Object{
        {"directory", std::string(directory)}, {"file", std::string(file)}, {"arguments", std::move(arguments)}}};
    std::string text;
    llvm::raw_string_ostream out(text);
    out << llvm::formatv("{0:2}", llvm::json::Value(std::move(database))) << "\n";
    return writeAtomically(options_.compileCommandsFile, out.str());
  }

  bool writeAtomically(const std::string& path, const std::string& contents) const {
    PendingFile file(path);
    if (!file.valid() || !file.write(contents) || !file.commit()) {
      reportError(file.refusal().empty() ? "cannot write '" + path + "'" : "cannot write " + file.refusal());
      return false;
    }
    return true;
  }

  // The GPU architectures compiled into a GPU build: --cuda-arch, or the Ampere and Hopper families
  // plus PTX for later GPUs.
  std::vector<std::string> cudaArchs() const {
    if (!gpuBuild_) return {};
    if (!options_.cudaArchs.empty()) return options_.cudaArchs;
    return {"sm_80", "sm_86", "sm_90", "compute_90"};
  }

  bool validCudaArchs() const {
    for (const std::string& arch : options_.cudaArchs)
      if (!gpu::parseCudaArch(arch)) {
        reportError("invalid --cuda-arch '" + arch + "'; expected sm_XY or compute_XY, e.g. sm_90");
        return false;
      }
    return true;
  }

  /// --target smpi: SimGrid's smpicxx builds the program (a shared object smpirun loads), kernels run
  /// on the host path, and the runtime's SMPI build charges them to the simulated host's GPU.
  bool simulated() const { return options_.target == "smpi"; }

  std::vector<std::string> compileCommand(const std::string& sourcePath, const std::string& outputPath) const {
    std::vector<std::string> cmd;
    if (gpuBuild_) {
      cmd = {paths_.cudaPath + "/bin/nvcc", "-ccbin",     mpi_.mpicxx, "-std=c++17",
             options_.optimization,         "-Xcompiler", "-pthread"};
      for (const std::string& arch : cudaArchs()) {
        std::string number = arch.substr(arch.find('_') + 1);
        bool ptx = gpu::parseCudaArch(arch)->kind == gpu::CudaArch::Kind::Ptx;
        cmd.push_back("-gencode=arch=compute_" + number + ",code=" + (ptx ? "compute_" : "sm_") + number);
      }
      // Dynamic parallelism: a device-side launch needs relocatable device code and the device runtime.
      if (launchesInDeviceCode_) cmd.push_back("-rdc=true");
    } else {
      cmd = {mpi_.mpicxx, "-std=c++17", options_.optimization, "-pthread"};
    }
    if (options_.debugInfo) cmd.push_back("-g");
    if (simulated()) cmd.push_back("-DDISPAR_TARGET_SMPI");
    // smpirun copies the program once per rank (its globals are the rank's): without -g, no debug
    // information to copy (the runtime's is most of a program's size).
    if (simulated() && !options_.debugInfo) cmd.push_back("-Wl,--strip-debug");
    cmd.push_back("-I" + paths_.runtimeIncludeDir);
    if (isCudaProgram_ && !gpuBuild_) cmd.push_back("-I" + paths_.hostOnlyIncludeDir);
    for (const std::string& dir : options_.includeDirs) cmd.push_back("-I" + dir);
    for (const std::string& define : options_.defines) cmd.push_back("-D" + define);
    // nvcc's -x would apply to the libraries too: the .cu name says CUDA instead.
    if (gpuBuild_)
      cmd.push_back(sourcePath);
    else
      cmd.insert(cmd.end(), {"-x", "c++", sourcePath, "-x", "none"});
    // Static libraries, users before what they use: dispar_gpu needs the runtime and the host kernels.
    if (gpuBuild_) cmd.push_back(mpi_.gpuLibrary);
    cmd.push_back(mpi_.runtimeLibrary);
    if (isCudaProgram_) cmd.push_back(paths_.hostKernelLibrary);
    // cuBLAS / cuFFT: with a host path, the stand-ins over OpenBLAS and FFTW (a GPU rank loads the real
    // library at its first call); GPU only, the real libraries.
    const bool hostLibraries = hostPath_ && !gpuLibraries_.empty();
    if (hostLibraries) cmd.push_back(paths_.hostLibraryStandIns);
    for (const std::string& dir : options_.libraryDirs) cmd.push_back("-L" + dir);
    for (const std::string& lib : options_.libraries) {
      addFftwThreads(cmd, lib);
      cmd.push_back("-l" + lib);
    }
    if (hostLibraries) {
      cmd.push_back("-lopenblas");
      for (const char* fftw : {"fftw3f", "fftw3"}) {
        addFftwThreads(cmd, fftw);
        cmd.push_back(std::string("-l") + fftw);
      }
    }
    if (gpuBuild_) cmd.push_back("-L" + paths_.cudaPath + "/lib64");
    if (gpuBuild_ && launchesInDeviceCode_) cmd.push_back("-lcudadevrt");
    if (gpuBuild_) cmd.push_back("-lcudart");
    if (gpuBuild_ && !hostPath_)
      for (const std::string& library : gpuLibraries_) cmd.push_back("-l" + library);
    cmd.insert(cmd.end(), {"-o", outputPath});
    return cmd;
  }

  /// FFTW's planner is not thread-safe, and instances grouped into one rank run on threads: with FFTW
  /// linked, its threads library goes in too (kept even if nothing names it), so that the runtime can
  /// make the planner thread-safe (docs/runtime.md, "Rank groups").
  void addFftwThreads(std::vector<std::string>& cmd, const std::string& library) const {
    if (library != "fftw3" && library != "fftw3f") return;
    // nvcc passes linker options with -Xlinker (comma-separated), mpicxx with -Wl,.
    if (gpuBuild_)
      cmd.insert(cmd.end(),
                 {"-Xlinker", "--push-state,--no-as-needed", "-l" + library + "_threads", "-Xlinker", "--pop-state"});
    else
      cmd.insert(cmd.end(), {"-Wl,--push-state,--no-as-needed", "-l" + library + "_threads", "-Wl,--pop-state"});
  }

  DriverOptions options_;
  ToolchainPaths paths_;
  MpiToolchain mpi_;
  bool isCudaProgram_ = false;
  bool gpuBuild_ = false;
  bool hostPath_ = true;                         // CG vnodes may run on the host (not --no-host-path)
  std::vector<frontend::FusedCall> fusedCalls_;  // what fusion made of the user's loops, for link errors
  bool launchesInDeviceCode_ = false;            // dynamic parallelism: -rdc=true, cudadevrt
  std::vector<std::string> gpuLibraries_;        // cublas, cufft: called by the program
};

}  // namespace

namespace {

/// The installation prefix when this disparcc runs from an installed tree (PREFIX/bin/disparcc beside
/// PREFIX/lib/dispar/libdispar_runtime.a, as `cmake --install` lays it out); empty in the build tree.
/// Installed tools find their headers and libraries relative to themselves, wherever the tree was put.
std::string installedPrefix() {
  llvm::SmallString<256> exe;
  if (llvm::sys::fs::real_path("/proc/self/exe", exe)) return "";
  llvm::SmallString<256> prefix = llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe));
  llvm::SmallString<256> runtime = prefix;
  llvm::sys::path::append(runtime, "lib", "dispar", "libdispar_runtime.a");
  return llvm::sys::fs::exists(runtime) ? std::string(prefix) : std::string();
}

/// The library file `name` (e.g. "dispar_runtime") in an installed tree.
std::string installedLibrary(const std::string& prefix, const std::string& name) {
  return prefix + "/lib/dispar/lib" + name + ".a";
}

}  // namespace

ToolchainPaths ToolchainPaths::detect() {
  ToolchainPaths paths;
  const std::string prefix = installedPrefix();
  const auto library = [&](const char* buildTreePath, const char* name) {
    return prefix.empty() ? std::string(buildTreePath) : installedLibrary(prefix, name);
  };
  paths.mpis.push_back({"mpich", DISPAR_DEFAULT_MPICXX, library(DISPAR_RUNTIME_LIBRARY, "dispar_runtime"),
                        library(DISPAR_GPU_LIBRARY, "dispar_gpu")});
#ifdef DISPAR_OPENMPI_MPICXX
  paths.mpis.push_back({"openmpi", DISPAR_OPENMPI_MPICXX,
                        library(DISPAR_OPENMPI_RUNTIME_LIBRARY, "dispar_runtime_openmpi"),
                        library(DISPAR_OPENMPI_GPU_LIBRARY, "dispar_gpu_openmpi")});
#endif
#ifdef DISPAR_SMPICXX
  paths.smpi = MpiToolchain{"smpi", DISPAR_SMPICXX, library(DISPAR_SMPI_RUNTIME_LIBRARY, "dispar_runtime_smpi"), ""};
#endif
  // The build's default first.
  std::stable_partition(paths.mpis.begin(), paths.mpis.end(),
                        [](const MpiToolchain& m) { return m.name == DISPAR_DEFAULT_MPI; });
  paths.runtimeIncludeDir = prefix.empty() ? DISPAR_RUNTIME_INCLUDE_DIR : prefix + "/include";
  paths.hostKernelLibrary = library(DISPAR_HOSTK_LIBRARY, "dispar_hostk");
  paths.hostLibraryStandIns = library(DISPAR_HOSTLIB_LIBRARY, "dispar_hostlib");
  paths.hostOnlyIncludeDir = prefix.empty() ? DISPAR_HOST_ONLY_INCLUDE_DIR : prefix + "/share/dispar/include_host_only";
  paths.clangResourceDir = DISPAR_CLANG_RESOURCE_DIR;  // Debian's clang-19 package: a system path
  paths.cudaStubIncludeDir = prefix.empty() ? DISPAR_CUDA_STUB_INCLUDE_DIR : prefix + "/share/dispar/cuda_stubs";
  paths.cudaPath = envOr("DISPAR_CUDA_PATH", DISPAR_DEFAULT_CUDA_PATH);
  if (!paths.cudaPath.empty() && !llvm::sys::fs::exists(paths.cudaPath + "/bin/nvcc")) paths.cudaPath.clear();
  return paths;
}

frontend::FrontendOptions ToolchainPaths::frontendOptions(const std::string& sourceFile) const {
  frontend::FrontendOptions options;
  options.sourceFile = sourceFile;
  options.runtimeIncludeDir = runtimeIncludeDir;
  options.clangResourceDir = clangResourceDir;
  options.cudaPath = cudaPath;
  options.cudaStubIncludeDir = cudaStubIncludeDir;
  return options;
}

const MpiToolchain* ToolchainPaths::mpi(const std::string& name) const {
  for (const MpiToolchain& m : mpis)
    if (name.empty() || m.name == name) return &m;
  return nullptr;
}

namespace {

/// --version: the version, and what this build makes programs with (its MPIs, the CUDA toolkit found).
std::string versionText(const ToolchainPaths& paths) {
  std::string text = std::string("disparcc ") + DISPAR_VERSION + " (Clang " + CLANG_VERSION_STRING_FOR_DISPAR + ")\n";
  for (const MpiToolchain& m : paths.mpis)
    text += "MPI: " + m.name + (&m == &paths.mpis.front() ? " (the default)" : "") + ", " + m.mpicxx +
            (llvm::sys::fs::exists(m.runtimeLibrary) ? "" : " (runtime not built)") + "\n";
  if (paths.smpi) text += "SMPI: " + paths.smpi->mpicxx + " (--target smpi)\n";
  text += paths.cudaPath.empty() ? std::string("CUDA: none found: GPU vnodes run their kernels on the host path\n")
                                 : "CUDA: " + paths.cudaPath + " (nvcc)\n";
  return text;
}

/// The main job builds only the default MPI's runtime (scripts/setup.sh); the others come with the whole
/// build. A program for a runtime not built is one clear error, not a linker's.
bool runtimeBuilt(const MpiToolchain& mpi) {
  if (llvm::sys::fs::exists(mpi.runtimeLibrary)) return true;
  reportError("the " + mpi.name + " runtime (" + mpi.runtimeLibrary +
              ") is not built; build everything with 'cmake --build build' (scripts/test.sh does)");
  return false;
}

}  // namespace

int disparccMain(int argc, const char* const* argv) {
  DriverOptions options;
  std::string error;
  if (!parseDriverOptions(argc, argv, options, error)) {
    reportError(error);
    llvm::errs() << "disparcc: run 'disparcc --help' for usage\n";
    return kExitUsage;
  }
  if (options.showHelp) {
    llvm::outs() << driverHelp();
    return 0;
  }
  ToolchainPaths paths = ToolchainPaths::detect();
  if (!options.cudaPath.empty()) paths.cudaPath = options.cudaPath;
  if (options.showVersion) {
    llvm::outs() << versionText(paths);
    return 0;
  }
  if (options.target == "smpi") {
    if (!paths.smpi) {
      reportError(
          "--target smpi: this disparcc was built without SimGrid SMPI (install libsimgrid-dev, then rebuild DISPAR)");
      return 1;
    }
    MpiToolchain smpi = *paths.smpi;
    if (!runtimeBuilt(smpi)) return 1;
    return Disparcc(std::move(options), std::move(paths), std::move(smpi)).run();
  }
  const MpiToolchain* mpi = paths.mpi(options.mpi);
  if (mpi == nullptr) {
    std::string known;
    for (const MpiToolchain& m : paths.mpis) known += (known.empty() ? "'" : ", '") + m.name + "'";
    reportError(
        "--mpi " + options.mpi + ": this disparcc was built with runtimes for " + known +
        (options.mpi == "openmpi" ? " only (install openmpi-bin and libopenmpi-dev, then rebuild DISPAR)" : ""));
    return 1;
  }
  MpiToolchain chosen = *mpi;
  chosen.mpicxx = envOr("DISPAR_MPICXX", chosen.mpicxx.c_str());
  if (!runtimeBuilt(chosen)) return 1;
  return Disparcc(std::move(options), std::move(paths), std::move(chosen)).run();
}

}  // namespace dispar::streamcc
