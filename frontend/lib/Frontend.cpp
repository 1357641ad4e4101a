#include "frontend/Frontend.h"

#include "AnalysisState.h"
#include "Checks.h"
#include "CodeFingerprint.h"
#include "CudaArchConditionals.h"
#include "CudaLowering.h"
#include "ProgramAssembler.h"
#include "StreamapPragmaHandler.h"
#include "fusion/LibraryFusion.h"

#include <dispar/hostk/Arch.h>

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <regex>

namespace dispar::frontend {

namespace {

// Runs the checks over the main file's AST and assembles the program at the end of the unit.
class DisparConsumer : public clang::ASTConsumer {
 public:
  DisparConsumer(AnalysisState& state, DisparDiagnostics& diags, FrontendResult& result, const FrontendOptions& options)
      : state_(state), diags_(diags), result_(result), options_(options), checks_(makeChecks(state, diags)) {
    for (auto& check : checks_) check->registerMatchers(finder_);
  }

  bool HandleTopLevelDecl(clang::DeclGroupRef group) override {
    for (clang::Decl* decl : group) {
      const clang::SourceManager& sm = decl->getASTContext().getSourceManager();
      // Clang also hands over instantiations it performs while parsing (a generic lambda's call
      // operator, when the function using it ends): they are not declarations written at file scope.
      if (!decl->getLexicalDeclContext()->isFileContext()) continue;
      if (const auto* fn = llvm::dyn_cast<clang::FunctionDecl>(decl); fn && fn->isTemplateInstantiation()) continue;
      // VNODE's declaration for editors (dispar.h, parse mode) is not what a directive before it names.
      if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(decl); ns && ns->getName() == "dispar_vnode") continue;
      if (sm.isInMainFile(sm.getExpansionLoc(decl->getBeginLoc()))) state_.topLevelDecls.push_back(decl);
    }
    return true;
  }

  void HandleTranslationUnit(clang::ASTContext& context) override {
    // A unit Clang rejected may have a partial AST: report its errors only. Errors in our own
    // directives leave the AST intact, so the checks still run and report everything at once.
    if (context.getDiagnostics().getNumErrors() > diags_.errorCount()) return;
    finder_.matchAST(context);
    ProgramAssembler(context, state_, diags_).assemble(result_.program);
    // Fusion first: the CUDA lowering leaves the loops it replaced alone (result_.fusedRanges).
    if (!context.getDiagnostics().hasErrorOccurred()) LibraryFusion(context, diags_, options_).run(result_);
    if (result_.program.isCuda && !context.getDiagnostics().hasErrorOccurred())
      CudaLowering(context, state_, diags_, options_).lower(result_);
  }

 private:
  AnalysisState& state_;
  DisparDiagnostics& diags_;
  FrontendResult& result_;
  const FrontendOptions& options_;
  std::vector<std::unique_ptr<FrontendCheck>> checks_;
  clang::ast_matchers::MatchFinder finder_;
};

class DisparAction : public clang::ASTFrontendAction {
 public:
  /// `mainFileText`: when not empty, what the main file is parsed as instead of its contents.
  DisparAction(FrontendResult& result, const FrontendOptions& options, std::string mainFileText = "")
      : result_(result), options_(options), mainFileText_(std::move(mainFileText)) {}

 protected:
  bool BeginInvocation(clang::CompilerInstance& ci) override {
    if (!mainFileText_.empty())
      ci.getPreprocessorOpts().addRemappedFile(
          options_.sourceFile, llvm::MemoryBuffer::getMemBufferCopy(mainFileText_, options_.sourceFile).release());
    return true;
  }

  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance& ci, llvm::StringRef) override {
    diags_ = std::make_unique<DisparDiagnostics>(ci.getDiagnostics());
    ci.getPreprocessor().AddPragmaHandler(new StreamapPragmaHandler(state_.directives, *diags_));
    recordMainFileTokens(ci.getPreprocessor(), state_.tokens);
    ci.getPreprocessor().addPPCallbacks(std::make_unique<CudaArchConditionals>(
        ci.getSourceManager(), state_.hostlessArchConditionals, state_.archComparisons));
    const clang::SourceManager& sm = ci.getSourceManager();
    result_.sourceText = sm.getBufferData(sm.getMainFileID()).str();
    return std::make_unique<DisparConsumer>(state_, *diags_, result_, options_);
  }

 private:
  FrontendResult& result_;
  const FrontendOptions& options_;
  std::string mainFileText_;
  AnalysisState state_;
  std::unique_ptr<DisparDiagnostics> diags_;
};

/// Clang's snippets never end after `#line` numbers past INT_MAX (stock clang behaves the same): those
/// sources get diagnostics without snippets; file:line:col and message are unchanged. (Long lines are
/// BoundedDiagnosticPrinter's.)
bool caretSnippetsAreSafe(llvm::StringRef source) {
  while (!source.empty()) {
    auto [line, rest] = source.split('\n');
    source = rest;
    llvm::StringRef directive = line.ltrim();
    if (!directive.consume_front("#")) continue;
    directive = directive.ltrim();
    if (!directive.consume_front("line")) continue;
    unsigned long long number = 0;
    // consumeInteger fails on overflow as well: such a number is past INT_MAX too.
    if (directive.ltrim().consumeInteger(10, number) || number > 2147483647ull) return false;
  }
  return true;
}

/// The longest run of identifier characters in `source`: above kLongestNameForSpelling, no spelling
/// suggestions (their cost is quadratic in the names' lengths).
constexpr std::size_t kLongestNameForSpelling = 256;

std::size_t longestWord(llvm::StringRef source) {
  std::size_t longest = 0, run = 0;
  for (const char c : source) {
    run = llvm::isAlnum(c) || c == '_' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

/// Messages quote what the source says, and a source can say anything: a 20,000-character identifier made
/// each "use of undeclared identifier" 20 KB. A message longer than this keeps its beginning and end.
constexpr std::size_t kLongestMessage = 512;

/// Clang's printer, bounded on any input: an over-long message keeps its beginning and end ("... [19586
/// characters elided] ..."), and a source line wider than kWidestSnippet is shown as the window around the
/// column, as GCC does, instead of whole (Clang prints a 4 KB line whole and none longer at all).
class BoundedDiagnosticPrinter : public clang::TextDiagnosticPrinter {
 public:
  BoundedDiagnosticPrinter(llvm::raw_ostream& out, clang::DiagnosticOptions* options)
      : clang::TextDiagnosticPrinter(out, options), out_(out), options_(options) {}

  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
    llvm::SmallString<256> message;
    info.FormatDiagnostic(message);
    std::optional<clang::Diagnostic> shortened;
    if (message.size() > kLongestMessage) {
      constexpr std::size_t kKept = kLongestMessage / 2 - 32;
      shortenedMessage_ = std::string(message.substr(0, kKept)) + " ... [" +
                          std::to_string(message.size() - 2 * kKept) + " characters elided] ... " +
                          std::string(message.substr(message.size() - kKept));
      // A Diagnostic with a stored message reads everything else from the engine's current diagnostic.
      shortened.emplace(info.getDiags(), shortenedMessage_);
    }
    const clang::Diagnostic& shown = shortened ? *shortened : info;
    const std::string window = options_->ShowCarets ? windowedSnippet(info) : std::string();
    if (window.empty()) return clang::TextDiagnosticPrinter::HandleDiagnostic(level, shown);
    options_->ShowCarets = false;  // read when the diagnostic is printed: this one only
    clang::TextDiagnosticPrinter::HandleDiagnostic(level, shown);
    options_->ShowCarets = true;
    out_ << window;
  }

 private:
  static constexpr std::size_t kWidestSnippet = 160;
  static constexpr std::size_t kWindowSide = 60;  // bytes shown each side of the column

  /// The snippet of a diagnostic on a line wider than kWidestSnippet: the window around its column and
  /// a caret, in Clang's gutter layout; empty for other diagnostics (Clang prints those).
  static std::string windowedSnippet(const clang::Diagnostic& info) {
    if (!info.hasSourceManager() || info.getLocation().isInvalid()) return {};
    const clang::SourceManager& sm = info.getSourceManager();
    const clang::SourceLocation at = sm.getExpansionLoc(info.getLocation());
    const auto [file, offset] = sm.getDecomposedLoc(at);
    bool invalid = false;
    const llvm::StringRef buffer = sm.getBufferData(file, &invalid);
    if (invalid || offset > buffer.size()) return {};
    const std::size_t lineStart = buffer.rfind('\n', offset) + 1;  // looks before `offset`; npos + 1 == 0
    const std::size_t lineEnd = std::min(buffer.find('\n', offset), buffer.size());
    if (offset < lineStart || lineEnd - lineStart <= kWidestSnippet) return {};
    const std::size_t from = std::max(lineStart, offset > kWindowSide ? offset - kWindowSide : 0);
    const std::size_t to = std::min(lineEnd, offset + kWindowSide);
    std::string text = from > lineStart ? "..." : "";
    const std::size_t caret = text.size() + (offset - from);
    for (const char c : buffer.substr(from, to - from))
      text += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c;
    if (to < lineEnd) text += "...";
    const std::string number = std::to_string(sm.getPresumedLineNumber(at));
    const std::size_t gutter = std::max<std::size_t>(number.size(), 5);
    return std::string(gutter - number.size(), ' ') + number + " | " + text + "\n" + std::string(gutter, ' ') + " | " +
           std::string(caret, ' ') + "^\n";
  }

  llvm::raw_ostream& out_;
  clang::DiagnosticOptions* options_;
  std::string shortenedMessage_;  // the stored message a shortened Diagnostic points into
};

}  // namespace

std::vector<std::string> parseArguments(const FrontendOptions& options, bool cuda) {
  std::vector<std::string> args;
  if (cuda) {
    args = {"-x", "cuda", "--cuda-host-only", "-nocudalib", "-Wno-unknown-cuda-version"};
    if (!options.cudaPath.empty()) {
      args.push_back("--cuda-path=" + options.cudaPath);
      // CUDA 13 keeps libcu++, Thrust and CUB (which cooperative_groups.h uses) under include/cccl;
      // nvcc adds it by itself, Clang does not.
      if (llvm::sys::fs::is_directory(options.cudaPath + "/include/cccl")) {
        args.push_back("-isystem");
        args.push_back(options.cudaPath + "/include/cccl");
      }
      // CUDA 13 removed a header Clang 19's CUDA wrapper still includes: an empty stand-in fills in.
      args.push_back("-isystem");
      args.push_back(options.cudaStubIncludeDir);
      // What nvcc declares and Clang 19's wrapper does not (the cache-hinted loads and stores).
      args.push_back("-include");
      args.push_back(options.cudaStubIncludeDir + "/dispar_cuda_toolkit_parse.h");
    } else {
      // No toolkit: nothing declares the CUDA qualifiers, builtins or runtime API. The parse-only prelude
      // declares them from DISPAR's own tables, and stand-ins answer `#include <cuda_runtime.h>`.
      args.push_back("-nocudainc");
      args.push_back("-DDISPAR_NO_CUDA_TOOLKIT");
      args.push_back("-isystem");
      args.push_back(options.cudaStubIncludeDir + "/no_toolkit");
      args.push_back("-include");
      args.push_back(options.cudaStubIncludeDir + "/dispar_cuda_parse.h");
    }
  } else {
    args = {"-x", "c++"};
  }
  args.push_back("-std=c++17");
  args.push_back("-fsyntax-only");
  args.push_back("-DDISPAR_FRONTEND");
  args.push_back("-resource-dir=" + options.clangResourceDir);
  args.push_back("-I" + options.runtimeIncludeDir);
  for (const std::string& dir : options.includeDirs) args.push_back("-I" + dir);
  for (const std::string& define : options.defines) args.push_back("-D" + define);
  args.push_back(options.colorDiagnostics ? "-fcolor-diagnostics" : "-fno-color-diagnostics");
  if (!options.dependencyFile.empty()) {
    // Clang's own dependency collector: every file the parse read, system headers left out.
    for (const char* arg : {"-MMD", "-MF"}) args.push_back(arg);
    args.push_back(options.dependencyFile);
    args.push_back("-MT");
    args.push_back(options.dependencyTarget);
  }
  return args;
}

bool looksLikeCuda(const std::string& sourceText) {
  static const std::regex kCudaMarkers(
      R"(__global__|__device__|__shared__|<<<|#\s*include\s*[<"](cuda|cublas|cufft|curand|cusparse|cusolver)\w*(\.h)?[>"])");
  return std::regex_search(sourceText, kCudaMarkers);
}

namespace {

/// One parse of the main file (as `mainFileText` when that is not empty), diagnostics to `diagnostics`.
bool parseOnce(const FrontendOptions& options, const llvm::MemoryBuffer& source, bool cuda,
               const std::vector<std::string>& extraArguments, std::string mainFileText, FrontendResult& result,
               llvm::raw_ostream& diagnostics) {
  // A ToolInvocation (rather than a ClangTool) keeps the file name as the user gave it, so
  // diagnostics and the RTG say "app.dsp:12:1", not an absolute path.
  std::vector<std::string> commandLine = {"disparcc-frontend"};
  for (std::string& arg : parseArguments(options, cuda)) commandLine.push_back(std::move(arg));
  commandLine.insert(commandLine.end(), extraArguments.begin(), extraArguments.end());
  commandLine.push_back(options.sourceFile);
  auto files = llvm::makeIntrusiveRefCnt<clang::FileManager>(clang::FileSystemOptions());
  auto diagOptions = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
  diagOptions->ShowColors = options.colorDiagnostics;
  diagOptions->ShowCarets = caretSnippetsAreSafe(source.getBuffer());
  // Spelling suggestions compare each unknown name with every name in scope (edit distance, quadratic in
  // their lengths): 30 unknown 20,000-character names took two minutes. Sources with such names get none.
  if (longestWord(source.getBuffer()) > kLongestNameForSpelling)
    commandLine.insert(commandLine.end() - 1, "-fno-spell-checking");
  BoundedDiagnosticPrinter printer(diagnostics, diagOptions.get());
  clang::tooling::ToolInvocation invocation(
      std::move(commandLine), std::make_unique<DisparAction>(result, options, std::move(mainFileText)), files.get());
  invocation.setDiagnosticConsumer(&printer);
  bool ok = invocation.run();
  return ok && printer.getNumErrors() == 0;
}

}  // namespace

bool runFrontend(const FrontendOptions& options, FrontendResult& result, llvm::raw_ostream& diagnostics) {
  auto buffer = llvm::MemoryBuffer::getFile(options.sourceFile);
  if (!buffer) {
    diagnostics << "error: cannot read '" << options.sourceFile << "': " << buffer.getError().message() << "\n";
    return false;
  }
  bool cuda = looksLikeCuda((*buffer)->getBuffer().str());
  result.program.isCuda = cuda;
  result.program.sourceFile = options.sourceFile;

  // Device code that compares __CUDA_ARCH__ (`#if __CUDA_ARCH__ >= 700`) is parsed a second time, those
  // tokens spelt DISPAR_CUARCH and that defined as the host path's architecture, so that its host versions
  // are made from the branches such a GPU compiles (dispar/hostk/Arch.h). The first parse's diagnostics
  // are kept until it is known whether the second one replaces them.
  const FrontendResult unparsed = result;  // what the caller set (the program's name), for the second parse
  std::string firstDiagnostics;
  llvm::raw_string_ostream first(firstDiagnostics);
  first.enable_colors(diagnostics.colors_enabled());  // kept as they would have been printed
  bool ok = parseOnce(options, **buffer, cuda, {}, "", result, first);
  if (result.archComparisons.empty()) {
    diagnostics << firstDiagnostics;
    return ok;
  }
  std::string respelt = (*buffer)->getBuffer().str();
  constexpr llvm::StringLiteral kArch = "__CUDA_ARCH__", kRespelt = "DISPAR_CUARCH";
  static_assert(kArch.size() == kRespelt.size(), "offsets and columns must not move");
  for (const unsigned offset : result.archComparisons) respelt.replace(offset, kRespelt.size(), kRespelt.str());
  FrontendResult second = unparsed;
  ok = parseOnce(options, **buffer, cuda, {"-DDISPAR_CUARCH=" + std::to_string(hostk::kHostCudaArch)}, respelt, second,
                 diagnostics);
  second.sourceText = (*buffer)->getBuffer().str();  // code outside the host versions stays as written
  result = std::move(second);
  return ok;
}

}  // namespace dispar::frontend
