#include "CudaLowering.h"

#include "ThreadLoops.h"

#include <dispar/hostk/Builtins.h>

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <set>
#include <string_view>

namespace dispar::frontend {

namespace {

// CUDA runtime functions that ::dispar::gpu dispatches between the GPU and the host path.
constexpr std::string_view kDispatchedRuntimeApi[] = {
#define DISPAR_GPU_RUNTIME_API(name, parameters, arguments) #name,
#define DISPAR_GPU_RUNTIME_SPECIAL(name) #name,
#include <dispar/gpu/RuntimeApi.def>
#undef DISPAR_GPU_RUNTIME_API
#undef DISPAR_GPU_RUNTIME_SPECIAL
};

// Device-code constructs the host path cannot run, by the prefix of the CUDA function's name.
struct UnsupportedFamily {
  std::string_view prefix;
  std::string_view what;
};
constexpr UnsupportedFamily kUnsupportedFunctions[] = {
    {"__shfl", "warp shuffles"},       {"__ballot", "warp votes"},        {"__any", "warp votes"},
    {"__all", "warp votes"},           {"__activemask", "warp votes"},    {"__syncwarp", "warp synchronisation"},
    {"__match", "warp matching"},      {"__reduce_", "warp reductions"},  {"tex1D", "textures"},
    {"tex2D", "textures"},             {"tex3D", "textures"},             {"texCubemap", "textures"},
    {"tex1Dfetch", "textures"},        {"surf", "surfaces"},              {"__nanosleep", "timed sleeps"},
};

constexpr std::string_view kQualifierTokens[] = {"__global__", "__device__", "__host__", "__forceinline__",
                                                 "__noinline__"};

bool isDeviceOnly(const clang::FunctionDecl* fn) {
  return fn->hasAttr<clang::CUDAGlobalAttr>() || (fn->hasAttr<clang::CUDADeviceAttr>() && !fn->hasAttr<clang::CUDAHostAttr>());
}

bool isDispatched(llvm::StringRef name) {
  for (std::string_view api : kDispatchedRuntimeApi)
    if (name == llvm::StringRef(api.data(), api.size())) return true;
  return false;
}

// "::ns::dispar_host::name": where the host clone of a function in namespace `ns` lives.
std::string hostCloneName(const clang::FunctionDecl* fn) {
  std::string prefix = "::";
  for (const clang::DeclContext* ctx = fn->getDeclContext(); ctx && !ctx->isTranslationUnit(); ctx = ctx->getParent()) {
    if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(ctx)) prefix.insert(2, ns->getName().str() + "::");
  }
  return prefix + "dispar_host::" + fn->getNameAsString();
}

// Rewrites one device function's body for its host clone and reports what the host path cannot run.
class DeviceBodyRewriter : public clang::RecursiveASTVisitor<DeviceBodyRewriter> {
 public:
  DeviceBodyRewriter(clang::ASTContext& context, clang::Rewriter& rewriter, DisparDiagnostics& diags)
      : context_(context), sm_(context.getSourceManager()), rewriter_(rewriter), diags_(diags) {}

  bool TraverseDeclStmt(clang::DeclStmt* stmt) {
    bool shared = false;
    for (const clang::Decl* decl : stmt->decls())
      if (const auto* var = llvm::dyn_cast<clang::VarDecl>(decl)) shared = shared || var->hasAttr<clang::CUDASharedAttr>();
    if (!shared) return clang::RecursiveASTVisitor<DeviceBodyRewriter>::TraverseDeclStmt(stmt);
    rewriteSharedDeclarations(stmt);
    return true;  // the declaration is replaced whole; nothing inside it is rewritten separately
  }

  bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
    const clang::ValueDecl* decl = ref->getDecl();
    // Clang declares builtins such as __syncthreads implicitly, at their first use: not the user's.
    bool fromMainFile = !decl->isImplicit() && sm_.isInMainFile(sm_.getExpansionLoc(decl->getLocation()));
    if (const auto* var = llvm::dyn_cast<clang::VarDecl>(decl);
        var && fromMainFile && (var->hasAttr<clang::CUDAConstantAttr>() || var->hasAttr<clang::CUDADeviceAttr>())) {
      unsupported(ref->getLocation(), var->hasAttr<clang::CUDAConstantAttr>() ? "__constant__ variables" : "__device__ variables",
                  "pass the data as a kernel argument or in shared memory");
      return true;
    }
    if (fromMainFile) return true;
    std::string name = decl->getNameAsString();
    if (isInCooperativeGroups(decl)) {
      unsupported(ref->getLocation(), "cooperative groups", "use __syncthreads and shared memory");
      return true;
    }
    for (const UnsupportedFamily& family : kUnsupportedFunctions)
      if (llvm::StringRef(name).starts_with(family.prefix)) {
        unsupported(ref->getLocation(), std::string(family.what), "the host path has no warps or texture units");
        return true;
      }
    if (const hostk::Builtin* builtin = hostk::findBuiltin(name)) replaceToken(ref->getLocation(), hostk::rewrittenUse(*builtin), name);
    return true;
  }

  bool VisitCUDAKernelCallExpr(clang::CUDAKernelCallExpr* launch) {
    unsupported(launch->getBeginLoc(), "dynamic parallelism", "launch kernels from host code");
    return true;
  }

  bool VisitGCCAsmStmt(clang::GCCAsmStmt* stmt) {
    unsupported(stmt->getAsmLoc(), "inline PTX", "write the operation in CUDA C++");
    return true;
  }

 private:
  static bool isInCooperativeGroups(const clang::Decl* decl) {
    for (const clang::DeclContext* ctx = decl->getDeclContext(); ctx; ctx = ctx->getParent())
      if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(ctx); ns && ns->getName() == "cooperative_groups")
        return true;
    return false;
  }

  void unsupported(clang::SourceLocation loc, const std::string& construct, const std::string& advice) {
    diags_.report(loc, Diag::UnsupportedOnHost) << construct << advice;
    diags_.report(loc, Diag::NoteHostPath);
  }

  void replaceToken(clang::SourceLocation loc, const std::string& replacement, const std::string& name) {
    if (loc.isMacroID()) {
      // A macro argument written in the kernel can be rewritten where it is spelt; a use inside a
      // macro's definition would need a different rewrite per expansion.
      if (!sm_.isMacroArgExpansion(loc) || !sm_.isInMainFile(sm_.getSpellingLoc(loc))) {
        unsupported(loc, "'" + name + "' inside a macro definition", "write it in the kernel or pass it as a macro argument");
        return;
      }
      loc = sm_.getSpellingLoc(loc);
    }
    rewriter_.ReplaceText(loc, static_cast<unsigned>(name.size()), replacement);
  }

  void rewriteSharedDeclarations(clang::DeclStmt* stmt) {
    clang::PrintingPolicy policy = context_.getPrintingPolicy();
    std::string replacement;
    for (const clang::Decl* decl : stmt->decls()) {
      const auto* var = llvm::dyn_cast<clang::VarDecl>(decl);
      if (!var) continue;
      std::string name = var->getNameAsString();
      clang::QualType type = var->getType();
      if (var->hasExternalStorage()) {
        const clang::ArrayType* array = context_.getAsArrayType(type);
        if (!array) {
          unsupported(var->getLocation(), "extern __shared__ scalars", "declare an unsized array");
          return;
        }
        replacement += array->getElementType().getAsString(policy) + "* " + name + " = ::dispar::hostk::dynamicShared<" +
                       array->getElementType().getAsString(policy) + ">(); ";
      } else {
        std::string spelled = type.getUnqualifiedType().getAsString(policy);
        replacement += "::dispar::hostk::SharedRef<" + spelled + "> " + name + " = ::dispar::hostk::sharedVariable<" +
                       spelled + ">(); ";
      }
    }
    // `__shared__` itself is a macro in the CUDA headers, so the declaration may begin inside one; it is
    // only a problem when the name or the end of the declaration comes from a macro expansion.
    clang::SourceRange range = stmt->getSourceRange();
    bool nameFromMacro = false;
    for (const clang::Decl* decl : stmt->decls()) nameFromMacro = nameFromMacro || decl->getLocation().isMacroID();
    if (nameFromMacro || range.getEnd().isMacroID()) {
      unsupported(range.getBegin(), "__shared__ declared through a macro", "write the declaration in the kernel");
      return;
    }
    rewriter_.ReplaceText(sm_.getExpansionRange(range), replacement);
  }

  clang::ASTContext& context_;
  const clang::SourceManager& sm_;
  clang::Rewriter& rewriter_;
  DisparDiagnostics& diags_;
};

// How the clone runs its CUDA threads, for whoever reads the generated code (--emit-cpp).
std::string hostFormComment(const clang::FunctionDecl* fn, const ThreadLoopPlanner& loops) {
  if (!fn->hasAttr<clang::CUDAGlobalAttr>()) return "";
  if (loops.usesThreadLoops(fn)) return "  // kernel '" + fn->getNameAsString() + "': thread loops";
  return "  // kernel '" + fn->getNameAsString() + "': fibers, because " + loops.fiberReason(fn);
}

}  // namespace

std::string CudaLowering::text(clang::SourceRange range) const {
  return clang::Lexer::getSourceText(clang::CharSourceRange::getTokenRange(sm_.getExpansionRange(range).getAsRange()), sm_,
                                     context_.getLangOpts())
      .str();
}

std::string CudaLowering::lineDirective(clang::SourceLocation loc) const {
  clang::PresumedLoc presumed = sm_.getPresumedLoc(loc);
  std::string file;
  for (char c : std::string(presumed.getFilename())) {
    if (c == '"' || c == '\\') file += '\\';
    file += c;
  }
  return "#line " + std::to_string(presumed.getLine()) + " \"" + file + "\"\n";
}

void CudaLowering::add(FrontendResult& result, clang::SourceLocation begin, unsigned length, const std::string& replacement) {
  llvm::Error error = result.sourceEdits.add(clang::tooling::Replacement(sm_, begin, length, replacement));
  if (error) {
    // Overlapping edits mean two rewrites claim the same text: a bug in the lowering, never user error.
    llvm::errs() << "disparcc: internal error: " << llvm::toString(std::move(error)) << "\n";
    std::abort();
  }
}

std::string CudaLowering::rewriteLaunch(const clang::CUDAKernelCallExpr* launch, const ThreadLoopPlanner& loops) const {
  const clang::CallExpr* config = launch->getConfig();
  auto configArg = [&](unsigned i, const char* fallback) -> std::string {
    if (!config || i >= config->getNumArgs() || llvm::isa<clang::CXXDefaultArgExpr>(config->getArg(i))) return fallback;
    return text(config->getArg(i)->getSourceRange());
  };
  const clang::FunctionDecl* kernel = launch->getDirectCallee();
  std::string host = "&" + hostCloneName(kernel);
  if (const clang::TemplateArgumentList* args = kernel->getTemplateSpecializationArgs()) {
    std::string printed;
    llvm::raw_string_ostream out(printed);
    clang::printTemplateArgumentList(out, args->asArray(), context_.getPrintingPolicy());
    host += out.str();
  }
  std::string hostLaunch = std::string(loops.usesThreadLoops(kernel) ? "::dispar::hostk::launchThreadLoops("
                                                                     : "::dispar::hostk::launch(") + configArg(0, "1") + ", " + configArg(1, "1") + ", " +
                           configArg(2, "0") + ", " + host;
  for (const clang::Expr* arg : launch->arguments()) hostLaunch += ", " + text(arg->getSourceRange());
  hostLaunch += ")";
  // A failed launch aborts the job naming the VNODE, the kernel and where it was launched.
  clang::PresumedLoc where = sm_.getPresumedLoc(sm_.getExpansionLoc(launch->getBeginLoc()));
  std::string check = "::dispar::gpu::checkLaunch(\"" + kernel->getNameAsString() + "\", \"" + where.getFilename() + ":" +
                      std::to_string(where.getLine()) + ":" + std::to_string(where.getColumn()) + "\")";
  if (options_.cudaTarget == CudaTarget::HostOnly) return "((void)" + hostLaunch + ", " + check + ")";
  return "((::dispar::gpu::onHost() ? (void)" + hostLaunch + " : (void)(" + text(launch->getSourceRange()) + ")), " +
         check + ")";
}

void CudaLowering::lower(FrontendResult& result) {
  if (options_.cudaTarget == CudaTarget::GpuOnly) return;
  const clang::LangOptions& lang = context_.getLangOpts();
  clang::Rewriter cloneRewriter(const_cast<clang::SourceManager&>(sm_), lang);
  llvm::StringRef buffer = sm_.getBufferData(sm_.getMainFileID());
  const ThreadLoopPlanner loops(context_, state_);

  for (const clang::FunctionDecl* fn : state_.deviceFunctions) {
    if (!isDeviceOnly(fn)) continue;
    if (llvm::isa<clang::CXXMethodDecl>(fn)) {
      diags_.report(fn->getLocation(), Diag::UnsupportedOnHost)
          << "__device__ member functions" << "make it __host__ __device__ or a free function";
      diags_.report(fn->getLocation(), Diag::NoteHostPath);
      continue;
    }
    const clang::Decl* whole = fn;
    if (const clang::FunctionTemplateDecl* tmpl = fn->getDescribedFunctionTemplate()) whole = tmpl;
    clang::SourceRange range = sm_.getExpansionRange(whole->getSourceRange()).getAsRange();
    if (fn->doesThisDeclarationHaveABody()) {
      DeviceBodyRewriter(context_, cloneRewriter, diags_).TraverseStmt(fn->getBody());
      loops.rewrite(fn, cloneRewriter);  // only kernels planned as thread loops change
    }

    // Drop the CUDA qualifiers from the clone: it is an ordinary host function.
    clang::SourceLocation begin = range.getBegin();
    unsigned beginOffset = sm_.getFileOffset(begin);
    unsigned endOffset = sm_.getFileOffset(clang::Lexer::getLocForEndOfToken(range.getEnd(), 0, sm_, lang));
    clang::Lexer lexer(sm_.getLocForStartOfFile(sm_.getMainFileID()), lang, buffer.begin(), buffer.begin() + beginOffset,
                       buffer.end());
    clang::Token tok;
    int launchBoundsDepth = -1;
    while (!lexer.LexFromRawLexer(tok) && sm_.getFileOffset(tok.getLocation()) < endOffset) {
      if (tok.is(clang::tok::raw_identifier)) {
        llvm::StringRef id = tok.getRawIdentifier();
        if (id == "__launch_bounds__") {
          cloneRewriter.RemoveText(tok.getLocation(), tok.getLength());
          launchBoundsDepth = 0;
          continue;
        }
        for (std::string_view q : kQualifierTokens)
          if (id == llvm::StringRef(q.data(), q.size())) cloneRewriter.RemoveText(tok.getLocation(), tok.getLength());
      }
      if (launchBoundsDepth >= 0) {
        if (tok.is(clang::tok::l_paren)) ++launchBoundsDepth;
        cloneRewriter.RemoveText(tok.getLocation(), tok.getLength());
        if (tok.is(clang::tok::r_paren) && --launchBoundsDepth == 0) launchBoundsDepth = -1;
      }
      if (tok.is(clang::tok::eof)) break;
    }

    std::string clone = cloneRewriter.getRewrittenText(range);
    // The clone goes on the lines after the original; #line keeps both pointing at the .dsp.
    std::size_t lineEnd = buffer.find('\n', endOffset);
    std::size_t insertAt = lineEnd == llvm::StringRef::npos ? buffer.size() : lineEnd + 1;
    clang::SourceLocation insertLoc = sm_.getLocForStartOfFile(sm_.getMainFileID()).getLocWithOffset(static_cast<int>(insertAt));
    std::string block = std::string(insertAt == buffer.size() && !buffer.ends_with("\n") ? "\n" : "") +
                        "namespace dispar_host {" + hostFormComment(fn, loops) + "\n" + lineDirective(begin) + clone +
                        "\n}  // namespace dispar_host\n";
    if (insertAt < buffer.size()) block += lineDirective(insertLoc);
    if (options_.cudaTarget == CudaTarget::HostOnly) {
      // Without a GPU build the original cannot compile (it uses CUDA builtins): the clone replaces it,
      // starting at the beginning of its line so #line stays exact.
      std::size_t lineStart = buffer.rfind('\n', beginOffset);
      lineStart = lineStart == llvm::StringRef::npos ? 0 : lineStart + 1;
      std::string prefix = buffer.substr(lineStart, beginOffset - lineStart).str();
      clang::SourceLocation startLoc = sm_.getLocForStartOfFile(sm_.getMainFileID()).getLocWithOffset(static_cast<int>(lineStart));
      add(result, startLoc, static_cast<unsigned>(insertAt - lineStart), prefix + "\n" + block);
    } else {
      add(result, insertLoc, 0, block);
    }
  }

  for (const clang::CUDAKernelCallExpr* launch : state_.launches) {
    if (!launch->getDirectCallee()) continue;
    clang::SourceRange range = sm_.getExpansionRange(launch->getSourceRange()).getAsRange();
    clang::SourceLocation begin = range.getBegin();
    clang::SourceLocation end = clang::Lexer::getLocForEndOfToken(range.getEnd(), 0, sm_, lang);
    add(result, begin, sm_.getFileOffset(end) - sm_.getFileOffset(begin), rewriteLaunch(launch, loops));
  }

  // A GPU library call the host path has no stand-in for would fail (or worse, be ignored) at run time
  // on a rank without a GPU: say so now.
  for (const clang::CallExpr* call : state_.runtimeCalls) {
    const clang::FunctionDecl* callee = call->getDirectCallee();
    if (!callee || isDispatched(callee->getName())) continue;
    diags_.report(sm_.getExpansionLoc(call->getBeginLoc()), Diag::UnsupportedOnHost)
        << ("'" + callee->getNameAsString() + "'")
        << "the host path provides only the CUDA runtime calls listed in docs/cuda.md";
    diags_.report(sm_.getExpansionLoc(call->getBeginLoc()), Diag::NoteHostPath);
  }

  if (options_.cudaTarget == CudaTarget::GpuAndHost) {
    std::set<unsigned> rewrittenCalls;  // file offsets of the names already rewritten
    for (const clang::CallExpr* call : state_.runtimeCalls) {
      const clang::FunctionDecl* callee = call->getDirectCallee();
      if (!callee || !isDispatched(callee->getName())) continue;
      // A call written in a macro (an argument, or the definition) is rewritten where it is spelt: the
      // rewrite is the same for every expansion, so a name spelt once is rewritten once.
      clang::SourceLocation loc = sm_.getSpellingLoc(call->getCallee()->getBeginLoc());
      if (!sm_.isInMainFile(loc) || !rewrittenCalls.insert(sm_.getFileOffset(loc)).second) continue;
      add(result, loc, static_cast<unsigned>(callee->getName().size()), "::dispar::gpu::" + callee->getNameAsString());
    }
  }
}

}  // namespace dispar::frontend
