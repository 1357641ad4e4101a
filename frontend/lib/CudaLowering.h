// The edits that let a CUDA program's GPU VNODEs run on the host as well, and a diagnostic for every
// construct the host path cannot run. In the host version of device code CUDA builtins become
// dispar::hostk calls, __shared__ declarations per-block storage, cooperative groups the host path's:
// - every kernel gets a host clone in namespace dispar_host (as thread loops where its barriers allow,
//   ThreadLoops.h), and its launches choose between the GPU and the clone at run time;
// - every __device__ function becomes __host__ __device__, its body the original under __CUDA_ARCH__
//   and the host version otherwise (one function: names, overloads and lookup stay as written); one
//   whose signature names a cooperative-groups type gets a host overload beside it instead; a free
//   function template gets a clone in dispar_host, which host versions call by its qualified name;
// - every __constant__ / __device__ variable gets a host copy in dispar_host, which host versions
//   read and cudaMemcpyToSymbol (and friends) fill on the host path.
// Without a GPU build (no toolkit) the host versions replace the originals. All edits are collected as
// Replacements on the main file and applied once by StreamCC.
#ifndef DISPAR_FRONTEND_CUDA_LOWERING_H
#define DISPAR_FRONTEND_CUDA_LOWERING_H

#include "AnalysisState.h"
#include "ThreadLoops.h"
#include "frontend/DisparDiagnostics.h"
#include "frontend/Frontend.h"

#include "clang/AST/ASTContext.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include <set>
#include <string>
#include <vector>

namespace dispar::frontend {

class CudaLowering {
 public:
  CudaLowering(clang::ASTContext& context, const AnalysisState& state, DisparDiagnostics& diags,
               const FrontendOptions& options)
      : context_(context), sm_(context.getSourceManager()), state_(state), diags_(diags), options_(options) {}

  /// Adds the edits to `result.sourceEdits`; reports unsupported constructs.
  void lower(FrontendResult& result);

 private:
  /// A kernel's (or a __device__ function template's) host clone, in dispar_host.
  void lowerClone(const clang::FunctionDecl* fn, clang::Rewriter& clones, const ThreadLoopPlanner& loops,
                  FrontendResult& result);
  bool isClonedTemplate(const clang::FunctionDecl* fn) const;
  /// At the end of the file (where every type a specialization names is declared): a registration of
  /// each specialization of the template kernels the file uses, so that launches through a pointer and
  /// cudaLaunchKernel calls find their clones as they find a plain kernel's.
  void registerSpecializations(const std::vector<const clang::FunctionDecl*>& templateKernels,
                               const ThreadLoopPlanner& loops, FrontendResult& result);
  /// `static const bool NAME = registerKernel(...)` of kernel `fn` (a kernel or a specialization),
  /// whose original and clone are `original` and `clone` (qualified names, template arguments included).
  std::string registration(const clang::FunctionDecl* fn, const std::string& name, const std::string& original,
                           const std::string& clone, ThreadLoopPlanner::Form form) const;
  /// Beside a template kernel's clone: `template <...> auto dispar_deduce_k(<its parameters>) ->
  /// ::dispar::hostk::detail::KernelOf<decltype(&k<...>), &k<...>>;`, through which a launch finds the
  /// specialization CUDA would deduce from its arguments (Launch.h). Empty when it cannot be spelt (an unnamed template
  /// parameter).
  std::string deducer(const clang::FunctionDecl* fn, clang::Rewriter& clones);
  /// The template kernel of a launch, when its clone has a deducer.
  const clang::FunctionTemplateDecl* deducibleTemplate(const clang::FunctionDecl* kernel) const;
  void removeExplicitInstantiations(FrontendResult& result);
  void lowerDeviceFunction(const clang::FunctionDecl* fn, clang::Rewriter& hostCode, FrontendResult& result);
  void lowerDeviceVariables(FrontendResult& result);
  void rewriteRuntimeCalls(FrontendResult& result);
  /// Host-only builds: every cuBLAS / cuFFT call written in the file gets a LibraryCallTimer (run traces).
  void timeLibraryCalls(FrontendResult& result);
  /// `((void)::dispar::gpu::LibraryCallTimer("cublasSgemm", "app.dsp:41:3"), CALLEE)`: the callee of a
  /// library call written at `loc`, timed for run traces (LaunchTimer.h) while the call runs.
  std::string timedLibraryCall(llvm::StringRef function, const std::string& callee, clang::SourceLocation loc) const;
  /// Where a called function's name is written (through macro arguments, this file's macros and
  /// headers' alias macros), for the rewrite of its name.
  clang::SourceLocation writtenCalleeLocation(clang::SourceLocation loc) const;
  /// What the build links: the GPU libraries (cuBLAS, cuFFT) the program calls, and whether kernels launch
  /// kernels (nvcc's separate compilation and device runtime).
  void recordLinkNeeds(FrontendResult& result) const;
  const clang::FunctionDecl* launchedKernel(const clang::CUDAKernelCallExpr* launch) const;
  std::string rewriteLaunch(const clang::CUDAKernelCallExpr* launch, const clang::FunctionDecl* kernel,
                            const ThreadLoopPlanner& loops) const;

  /// Where the tokens of `range` are written: in the file, or as a macro argument in the file.
  clang::SourceRange writtenRange(clang::SourceRange range) const;
  std::string text(clang::SourceRange range) const;
  std::string lineDirective(clang::SourceLocation loc) const;
  clang::SourceLocation fileLoc(unsigned offset) const;
  unsigned endOffset(clang::SourceRange range) const;  ///< just past the range's last token
  bool inMainFileText(const clang::FunctionDecl* fn) const;
  clang::SourceLocation ctorInitializerColon(const clang::CXXConstructorDecl* ctor,
                                             clang::SourceLocation firstInit) const;
  /// Removes __global__, __device__, ... and __launch_bounds__(...) from `range` in `rewriter`.
  void dropCudaQualifiers(clang::SourceRange range, clang::Rewriter& rewriter) const;
  /// The offset just past a declaration, its `;` included.
  unsigned declarationEnd(clang::SourceRange declaration) const;
  /// Inserts `text` right after `original`, on lines of its own, then a #line back to the file's numbering.
  void insertAfter(FrontendResult& result, clang::SourceRange original, const std::string& text);
  static std::string withSemicolon(const std::string& clone, const clang::FunctionDecl* fn);
  void add(FrontendResult& result, clang::SourceLocation begin, unsigned length, const std::string& replacement);

  clang::ASTContext& context_;
  const clang::SourceManager& sm_;
  const AnalysisState& state_;
  DisparDiagnostics& diags_;
  const FrontendOptions& options_;
  std::vector<const clang::FunctionTemplateDecl*> clonedTemplates_;  // canonical declarations
  std::set<const clang::FunctionTemplateDecl*> deducibleKernels_;    // canonical declarations
};

}  // namespace dispar::frontend

#endif
