#include "CudaLowering.h"

#include "CudaConstructs.h"
#include "ThreadLoops.h"
#include "WarpLockstep.h"

#include <dispar/hostk/Builtins.h>

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
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

// cuBLAS and cuFFT calls the host path runs through dispar_hostlib's stand-ins, by the name users write,
// with the library they belong to (the program is linked with its stand-ins).
struct LibraryCall {
  std::string_view name;
  std::string_view library;
};
constexpr LibraryCall kLibraryCalls[] = {
#define DISPAR_CUBLAS_API(name, family, parameters, arguments) {#name, "cublas"},
#include <dispar/hostlib/Cublas.def>
#define DISPAR_CUFFT_API(name, parameters, arguments) {#name, "cufft"},
#include <dispar/hostlib/Cufft.def>
};

// The name a library function is written with: cublas_v2.h's macros turn cublasSgemm into the symbol
// cublasSgemm_v2, which is what the AST names.
llvm::StringRef writtenName(llvm::StringRef calleeName) {
  return calleeName.ends_with("_v2") ? calleeName.drop_back(3) : calleeName;
}

const LibraryCall* libraryCall(llvm::StringRef calleeName) {
  const llvm::StringRef name = writtenName(calleeName);
  for (const LibraryCall& call : kLibraryCalls)
    if (name == llvm::StringRef(call.name.data(), call.name.size())) return &call;
  return nullptr;
}

// Runtime functions on a __constant__ or __device__ variable: dispatched too, with the symbol argument
// paired with the variable's host copy (`::dispar::gpu::symbol(coeffs, ::dispar_host::coeffs)`).
struct SymbolCall {
  std::string_view name;
  unsigned symbolArgument;
};
constexpr SymbolCall kSymbolCalls[] = {
#define DISPAR_GPU_RUNTIME_SYMBOL(name, symbolArgument) {#name, symbolArgument},
#include <dispar/gpu/RuntimeApi.def>
};

// Device-code constructs the host path cannot run, by the prefix of the CUDA function's name (names of
// the rewriting table, such as __shfl_sync and tex2D, are looked up first).
struct UnsupportedFamily {
  std::string_view prefix;
  std::string_view what;
  std::string_view advice;
};
constexpr std::string_view kOtherTextureFetches =
    "the host path has tex1Dfetch, tex1D, tex2D, tex3D and their layered forms, without mipmaps, gathers or "
    "cubemaps (docs/cuda.md)";
constexpr UnsupportedFamily kUnsupportedFunctions[] = {
    {"__shfl", "warp shuffles without _sync", "use the _sync forms (CUDA 9 and later)"},
    {"__ballot", "warp votes without _sync", "use the _sync forms (CUDA 9 and later)"},
    {"__any", "warp votes without _sync", "use the _sync forms (CUDA 9 and later)"},
    {"__all", "warp votes without _sync", "use the _sync forms (CUDA 9 and later)"},
    {"tex", "this texture fetch", kOtherTextureFetches},
    {"surf", "this surface access",
     "the host path has surf1D, surf2D, surf3D and surf2DLayered reads and writes (docs/cuda.md)"},
    {"__nanosleep", "timed sleeps", "the host path has no warp scheduler to sleep in"},
};

constexpr std::string_view kQualifierTokens[] = {"__global__",  "__device__",      "__host__",    "__constant__",
                                                 "__managed__", "__forceinline__", "__noinline__"};
constexpr const char* kCooperativeGroups = "::dispar::hostk::cooperative_groups::";

bool isDeviceOnly(const clang::FunctionDecl* fn) {
  return fn->hasAttr<clang::CUDAGlobalAttr>() ||
         (fn->hasAttr<clang::CUDADeviceAttr>() && !fn->hasAttr<clang::CUDAHostAttr>());
}

const SymbolCall* symbolCall(llvm::StringRef name) {
  for (const SymbolCall& call : kSymbolCalls)
    if (name == llvm::StringRef(call.name.data(), call.name.size())) return &call;
  return nullptr;
}

bool isDispatched(llvm::StringRef name) {
  for (std::string_view api : kDispatchedRuntimeApi)
    if (name == llvm::StringRef(api.data(), api.size())) return true;
  return symbolCall(name) != nullptr || libraryCall(name) != nullptr;
}

// "::ns::": the named namespaces `decl` is declared in (anonymous ones are reached from their parent).
std::string enclosingNamespace(const clang::Decl* decl) {
  std::string prefix = "::";
  for (const clang::DeclContext* ctx = decl->getDeclContext(); ctx && !ctx->isTranslationUnit();
       ctx = ctx->getParent()) {
    if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(ctx); ns && !ns->isAnonymousNamespace())
      prefix.insert(2, ns->getName().str() + "::");
  }
  return prefix;
}

// "::ns::dispar_host::": where the host clone of a kernel (or the host copy of a variable) declared in
// namespace `ns` lives.
std::string hostNamespace(const clang::Decl* decl) { return enclosingNamespace(decl) + "dispar_host::"; }

bool isDeviceVariable(const clang::VarDecl* var) {
  const clang::SourceManager& sm = var->getASTContext().getSourceManager();
  return var->hasGlobalStorage() && !var->isStaticLocal() && sm.isInMainFile(sm.getExpansionLoc(var->getLocation())) &&
         (var->hasAttr<clang::CUDAConstantAttr>() || var->hasAttr<clang::CUDADeviceAttr>());
}

/// Whether a function's declaration (outside its body) names a cooperative-groups type: such a type
/// differs between the GPU and the host path, so the host version is an overload of its own.
bool signatureNamesCooperativeGroups(const clang::FunctionDecl* fn) {
  auto mentions = [](clang::QualType type) {
    for (;;) {
      type = type.getNonReferenceType();
      if (const auto* pointer = type->getAs<clang::PointerType>()) {
        type = pointer->getPointeeType();
        continue;
      }
      break;
    }
    if (const clang::TagDecl* tag = type->getAsTagDecl()) return isInCooperativeGroups(tag);
    if (const auto* specialization = type->getAs<clang::TemplateSpecializationType>())
      if (const clang::TemplateDecl* tmpl = specialization->getTemplateName().getAsTemplateDecl())
        return isInCooperativeGroups(tmpl);
    return false;
  };
  if (mentions(fn->getReturnType())) return true;
  for (const clang::ParmVarDecl* param : fn->parameters())
    if (mentions(param->getType())) return true;
  return false;
}

// Rewrites one device function's code for its host version and reports what the host path cannot run.
class DeviceBodyRewriter : public clang::RecursiveASTVisitor<DeviceBodyRewriter> {
  using Base = clang::RecursiveASTVisitor<DeviceBodyRewriter>;

 public:
  /// `threadIndex`: what threadIdx becomes (the clone of a thread-loop kernel names its segment's loop
  /// variable); by default the running thread's context.
  /// `clonedTemplates`: the __device__ function templates whose host versions are clones in
  /// dispar_host; a host version calls them by that name.
  DeviceBodyRewriter(clang::ASTContext& context, clang::Rewriter& rewriter, DisparDiagnostics& diags, CudaTarget target,
                     const std::vector<const clang::FunctionTemplateDecl*>& clonedTemplates,
                     std::string threadIndex = "")
      : context_(context), sm_(context.getSourceManager()), rewriter_(rewriter), diags_(diags), target_(target),
        clonedTemplates_(clonedTemplates), threadIndex_(std::move(threadIndex)) {}

  /// Rewrites the body (and a constructor's initialisers; the signature too when `signature`), then
  /// opens the body with the declarations that give CUDA names used inside macros their host meaning.
  void rewrite(const clang::FunctionDecl* fn, bool signature) {
    if (signature) TraverseTypeLoc(fn->getTypeSourceInfo()->getTypeLoc());
    if (const auto* ctor = llvm::dyn_cast<clang::CXXConstructorDecl>(fn))
      for (const clang::CXXCtorInitializer* init : ctor->inits())
        if (init->isWritten()) TraverseStmt(init->getInit());
    TraverseStmt(fn->getBody());
    lowerLockstepStores(fn);
    std::string declarations;
    for (const hostk::Builtin* builtin : macroBuiltins_) {
      const std::string name(builtin->cudaName);
      if (builtin->kind == hostk::BuiltinKind::Index)
        declarations += " const auto& " + name + " = " + hostk::rewrittenUse(*builtin) + ";";
      else
        declarations += " using ::dispar::hostk::cuda_names::" + name + ";";
    }
    if (!declarations.empty())
      rewriter_.InsertTextAfterToken(llvm::cast<clang::CompoundStmt>(fn->getBody())->getLBracLoc(), declarations);
  }

  bool TraverseDeclStmt(clang::DeclStmt* stmt) {
    bool shared = false;
    for (const clang::Decl* decl : stmt->decls())
      if (const auto* var = llvm::dyn_cast<clang::VarDecl>(decl))
        shared = shared || var->hasAttr<clang::CUDASharedAttr>();
    if (!shared) return Base::TraverseDeclStmt(stmt);
    rewriteSharedDeclarations(stmt);
    return true;  // the declaration is replaced whole; nothing inside it is rewritten separately
  }

  bool TraverseNestedNameSpecifierLoc(clang::NestedNameSpecifierLoc qualifier) {
    if (!qualifier) return true;
    const clang::NestedNameSpecifier* nns = qualifier.getNestedNameSpecifier();
    const clang::NamespaceDecl* ns = nns->getAsNamespace();
    if (const clang::NamespaceAliasDecl* alias = nns->getAsNamespaceAlias()) ns = alias->getNamespace();
    if (ns && isCooperativeGroupsNamespace(ns)) {
      // `cg::`, `cooperative_groups::`, `::cooperative_groups::` all become the host path's namespace.
      replaceRange(qualifier.getSourceRange(), kCooperativeGroups, "a cooperative-groups qualifier");
      return true;
    }
    return Base::TraverseNestedNameSpecifierLoc(qualifier);
  }

  bool VisitElaboratedTypeLoc(clang::ElaboratedTypeLoc type) {
    const clang::NamedDecl* named = nullptr;
    const clang::Type* inner = type.getNamedTypeLoc().getTypePtr();
    if (const clang::TagDecl* tag = inner->getAsTagDecl()) named = tag;
    if (const auto* typedefType = inner->getAs<clang::TypedefType>()) named = typedefType->getDecl();
    if (const auto* specialization = inner->getAs<clang::TemplateSpecializationType>())
      named = specialization->getTemplateName().getAsTemplateDecl();
    if (!named || !isInCooperativeGroups(named)) return true;
    if (!checkCooperativeGroups(named, hostk::CooperativeGroupsKind::Type, type.getNamedTypeLoc().getBeginLoc()))
      return true;
    if (!type.getQualifierLoc()) insertCooperativeGroupsQualifier(type.getNamedTypeLoc().getBeginLoc());
    return true;
  }

  bool VisitMemberExpr(clang::MemberExpr* member) {
    const clang::ValueDecl* decl = member->getMemberDecl();
    if (!decl->getIdentifier() || !isInCooperativeGroups(decl)) return true;
    checkCooperativeGroups(decl, hostk::CooperativeGroupsKind::Member, member->getMemberLoc());
    return true;
  }

  bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
    const clang::ValueDecl* decl = ref->getDecl();
    if (const auto* fn = llvm::dyn_cast<clang::FunctionDecl>(decl);
        fn && fn->getPrimaryTemplate() &&
        callsClone(fn->getPrimaryTemplate(), ref->getQualifierLoc(), ref->getLocation()))
      return true;
    if (const auto* var = llvm::dyn_cast<clang::VarDecl>(decl); var && isDeviceVariable(var)) {
      // With a GPU build the variable lives on the GPU; the host version reads its host copy.
      if (target_ == CudaTarget::GpuAndHost)
        replaceRange(clang::SourceRange(ref->hasQualifier() ? ref->getQualifierLoc().getBeginLoc() : ref->getLocation(),
                                        ref->getLocation()),
                     hostNamespace(var) + var->getNameAsString(), "'" + var->getNameAsString() + "'");
      return true;
    }
    if (sm_.isInMainFile(sm_.getExpansionLoc(decl->getLocation())) && !decl->isImplicit()) return true;
    const std::string name = decl->getNameAsString();
    if (isInCooperativeGroups(decl)) {
      const auto kind = llvm::isa<clang::CXXMethodDecl>(decl) ? hostk::CooperativeGroupsKind::Member
                                                              : hostk::CooperativeGroupsKind::Function;
      if (checkCooperativeGroups(decl, kind, ref->getLocation()) && !ref->hasQualifier())
        insertCooperativeGroupsQualifier(ref->getLocation());
      return true;
    }
    if (const hostk::Builtin* builtin = cudaBuiltin(decl)) {
      useBuiltin(ref->getLocation(), *builtin);
      return true;
    }
    for (const UnsupportedFamily& family : kUnsupportedFunctions)
      if (llvm::StringRef(name).starts_with(family.prefix)) {
        unsupported(ref->getLocation(), std::string(family.what), std::string(family.advice));
        return true;
      }
    if (const auto* fn = llvm::dyn_cast<clang::FunctionDecl>(decl); fn && isDeviceOnly(fn) && !hasHostVersion(fn))
      unsupported(ref->getLocation(), "'" + name + "', a __device__ function with no host version,",
                  "the host path provides the CUDA functions listed in docs/cuda.md");
    return true;
  }

  // In a template, a call whose arguments depend on a template parameter (`atomicAdd(p, v)` with a `T*
  // p`, `__shfl_down_sync(mask, v, 1)` with a `T v`) names its function only by lookup.
  bool VisitUnresolvedLookupExpr(clang::UnresolvedLookupExpr* lookup) {
    for (const clang::NamedDecl* found : lookup->decls())
      if (const auto* tmpl = llvm::dyn_cast<clang::FunctionTemplateDecl>(found->getUnderlyingDecl());
          tmpl && callsClone(tmpl, lookup->getQualifierLoc(), lookup->getNameLoc()))
        return true;
    if (lookup->getQualifier()) return true;  // a cooperative-groups qualifier is rewritten on its own
    for (const clang::NamedDecl* found : lookup->decls()) {
      const clang::Decl* decl = found->getUnderlyingDecl();
      if (const hostk::Builtin* builtin = cudaBuiltin(decl)) {
        useBuiltin(lookup->getNameLoc(), *builtin);
        return true;
      }
      if (isInCooperativeGroups(decl)) {
        if (checkCooperativeGroups(llvm::cast<clang::NamedDecl>(decl), hostk::CooperativeGroupsKind::Function,
                                   lookup->getNameLoc()))
          insertCooperativeGroupsQualifier(lookup->getNameLoc());
        return true;
      }
    }
    return true;
  }

  // An atomic on a __shared__ variable's address runs as a plain read-modify-write (Atomics.h,
  // block_shared): only the block's own OS thread touches that memory.
  bool VisitCallExpr(clang::CallExpr* call) {
    if (call->getNumArgs() == 0 || !addressesSharedMemory(call->getArg(0))) return true;
    const clang::Expr* callee = call->getCallee()->IgnoreParenImpCasts();
    const clang::Decl* decl = nullptr;
    clang::SourceLocation name;
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(callee)) {
      decl = ref->getDecl();
      name = ref->getLocation();
    } else if (const auto* lookup = llvm::dyn_cast<clang::UnresolvedLookupExpr>(callee);
               lookup && lookup->getNumDecls() > 0 && !lookup->getQualifier()) {
      decl = (*lookup->decls_begin())->getUnderlyingDecl();
      name = lookup->getNameLoc();
    }
    const hostk::Builtin* builtin = decl ? cudaBuiltin(decl) : nullptr;
    if (builtin && builtin->kind == hostk::BuiltinKind::Function &&
        llvm::StringRef(builtin->cudaName.data(), builtin->cudaName.size()).starts_with("atomic"))
      sharedAtomics_.insert(name.getRawEncoding());
    return true;
  }

  // Dynamic parallelism: `child<<<g, b, s, st>>>(a, x)` becomes
  // `::dispar::hostk::launchFromKernel("child", "file:line:col", child, g, b, s, st)(a, x)`, the child grid
  // run at once by the launching thread (Launch.h). Only the launch's punctuation changes, so that the
  // configuration and the arguments are rewritten as the rest of the body is.
  bool VisitCUDAKernelCallExpr(clang::CUDAKernelCallExpr* launch) {
    const clang::CallExpr* config = launch->getConfig();
    const clang::Expr* callee = launch->getCallee()->IgnoreParenImpCasts();
    const clang::SourceLocation begin = launch->getBeginLoc();
    if (!config || begin.isMacroID() || config->getBeginLoc().isMacroID() || config->getRParenLoc().isMacroID()) {
      unsupported(begin, "a kernel launch in device code written through a macro", "write the launch in the kernel");
      return true;
    }
    // (Clang, which parses the program, accepts no kernel template launched from device code.)
    std::string name = "a kernel through a pointer";
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(callee))
      name = ref->getDecl()->getNameAsString();
    else if (const auto* lookup = llvm::dyn_cast<clang::UnresolvedLookupExpr>(callee))
      name = lookup->getName().getAsString();
    const clang::PresumedLoc where = sm_.getPresumedLoc(begin);
    rewriter_.InsertTextBefore(begin, "::dispar::hostk::launchFromKernel(\"" + name + "\", \"" + where.getFilename() +
                                          ":" + std::to_string(where.getLine()) + ":" +
                                          std::to_string(where.getColumn()) + "\", ");
    rewriter_.ReplaceText(config->getBeginLoc(), 3, ", ");  // <<<
    rewriter_.ReplaceText(config->getRParenLoc(), 3, ")");  // >>>
    return true;
  }

  bool VisitGCCAsmStmt(clang::GCCAsmStmt* stmt) {
    unsupported(stmt->getAsmLoc(), "inline PTX", "write the operation in CUDA C++");
    return true;
  }

 private:
  /// Legacy warp-synchronous stores become lock-step stores (WarpLockstep.h): `L op= R` becomes
  /// `::dispar::hostk::lockstepStore<::dispar::hostk::LockstepOp::Op>(L, R)`, edited around the other
  /// rewrites of L and R.
  void lowerLockstepStores(const clang::FunctionDecl* fn) {
    const WarpSynchronousCode code = findWarpSynchronousCode(fn);
    for (const clang::Expr* store : code.refused)
      unsupported(store->getExprLoc(),
                  "a volatile store inside a larger expression, in code whose lanes read each other's volatile "
                  "memory without a barrier (legacy warp-synchronous code),",
                  "write the store as a statement of its own, or synchronise the lanes with __syncwarp()");
    for (const LockstepStore& store : code.stores) {
      const clang::SourceLocation begin = store.target->getBeginLoc(), op = store.operatorLoc,
                                  end = store.value->getEndLoc();
      if (!begin.isFileID() || !op.isFileID() || !end.isFileID()) {
        unsupported(store.operatorLoc.isFileID() ? store.operatorLoc : sm_.getExpansionLoc(store.operatorLoc),
                    "a store of legacy warp-synchronous code written through a macro",
                    "write the store in the function, or synchronise the lanes with __syncwarp()");
        continue;
      }
      rewriter_.InsertTextBefore(
          begin, "::dispar::hostk::lockstepStore<::dispar::hostk::LockstepOp::" + store.operation + ">(");
      rewriter_.ReplaceText(op, clang::Lexer::MeasureTokenLength(op, sm_, context_.getLangOpts()), ",");
      rewriter_.InsertTextAfterToken(end, ")");
    }
  }

  /// `&s[i]`, `&s.field`, `s + i`, `&s` where `s` is a __shared__ variable.
  static bool addressesSharedMemory(const clang::Expr* address) {
    const clang::Expr* e = address->IgnoreParenCasts();
    if (const auto* op = llvm::dyn_cast<clang::UnaryOperator>(e); op && op->getOpcode() == clang::UO_AddrOf) {
      e = op->getSubExpr()->IgnoreParenCasts();
      for (;;) {
        if (const auto* subscript = llvm::dyn_cast<clang::ArraySubscriptExpr>(e))
          e = subscript->getBase()->IgnoreParenCasts();
        else if (const auto* member = llvm::dyn_cast<clang::MemberExpr>(e); member && !member->isArrow())
          e = member->getBase()->IgnoreParenCasts();
        else
          break;
      }
    } else if (const auto* sum = llvm::dyn_cast<clang::BinaryOperator>(e);
               sum && sum->isAdditiveOp() && sum->getLHS()->getType()->isPointerType()) {
      e = sum->getLHS()->IgnoreParenCasts();
    }
    const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e);
    const auto* var = ref ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
    return var && var->hasAttr<clang::CUDASharedAttr>();
  }

  void unsupported(clang::SourceLocation loc, const std::string& construct, const std::string& advice) {
    diags_.report(loc, Diag::UnsupportedOnHost) << construct << advice;
    diags_.report(loc, Diag::NoteHostPath);
  }

  /// A use of a cloned __device__ function template names its clone: `ns::reduce<T>(...)` becomes
  /// `::ns::dispar_host::reduce<T>(...)` (qualified, so argument-dependent lookup adds nothing).
  bool callsClone(const clang::FunctionTemplateDecl* tmpl, clang::NestedNameSpecifierLoc qualifier,
                  clang::SourceLocation name) {
    const clang::FunctionTemplateDecl* canonical = tmpl->getCanonicalDecl();
    if (std::find(clonedTemplates_.begin(), clonedTemplates_.end(), canonical) == clonedTemplates_.end()) return false;
    replaceRange(clang::SourceRange(qualifier ? qualifier.getBeginLoc() : name, name),
                 hostNamespace(tmpl) + tmpl->getNameAsString(), "'" + tmpl->getNameAsString() + "'");
    return true;
  }

  /// Whether a function a header declares for the device only (curand_init, __vabsdiffu4) also has a
  /// host-callable declaration of the same name beside it (sqrtf, printf): the host version calls that.
  static bool hasHostVersion(const clang::FunctionDecl* fn) {
    if (llvm::isa<clang::CXXMethodDecl>(fn)) return true;  // members are judged by their class
    for (const clang::NamedDecl* other : fn->getDeclContext()->getRedeclContext()->lookup(fn->getDeclName())) {
      const clang::Decl* candidate = other->getUnderlyingDecl();
      if (const auto* tmpl = llvm::dyn_cast<clang::FunctionTemplateDecl>(candidate))
        candidate = tmpl->getTemplatedDecl();
      if (const auto* function = llvm::dyn_cast<clang::FunctionDecl>(candidate);
          function && (!function->hasAttr<clang::CUDADeviceAttr>() || function->hasAttr<clang::CUDAHostAttr>()))
        return true;
    }
    return false;
  }

  /// Reports a cooperative-groups name the host path does not provide; true when it does.
  bool checkCooperativeGroups(const clang::NamedDecl* decl, hostk::CooperativeGroupsKind kind,
                              clang::SourceLocation loc) {
    const std::string name = decl->getNameAsString();
    if (hostk::providesCooperativeGroupsName(kind, name)) return true;
    if (!reportedCooperativeGroups_.insert(sm_.getFileOffset(sm_.getExpansionLoc(loc))).second) return false;
    unsupported(loc, "cooperative groups' '" + name + "'",
                "the host path has thread blocks, their tiles, coalesced groups and the grids of cooperative "
                "launches, not clusters (docs/cuda.md)");
    return false;
  }

  void insertCooperativeGroupsQualifier(clang::SourceLocation loc) {
    if (loc.isMacroID()) {
      if (!sm_.isMacroArgExpansion(loc) || !sm_.isInMainFile(sm_.getSpellingLoc(loc))) {
        unsupported(loc, "a cooperative-groups name inside a macro definition", "write it in the kernel");
        return;
      }
      loc = sm_.getSpellingLoc(loc);
    }
    rewriter_.InsertTextBefore(loc, kCooperativeGroups);
  }

  /// Replaces the tokens of `range`, written in the kernel or as a macro argument.
  void replaceRange(clang::SourceRange range, const std::string& replacement, const std::string& what) {
    clang::SourceLocation begin = range.getBegin(), end = range.getEnd();
    if (begin.isMacroID() || end.isMacroID()) {
      if (!sm_.isMacroArgExpansion(begin) || !sm_.isMacroArgExpansion(end) ||
          !sm_.isInMainFile(sm_.getSpellingLoc(begin))) {
        unsupported(begin, what + " inside a macro definition",
                    "write it in the kernel or pass it as a macro argument");
        return;
      }
      begin = sm_.getSpellingLoc(begin);
      end = sm_.getSpellingLoc(end);
    }
    rewriter_.ReplaceText(clang::CharSourceRange::getTokenRange(begin, end), replacement);
  }

  void useBuiltin(clang::SourceLocation loc, const hostk::Builtin& builtin) {
    const bool sharedAtomic = sharedAtomics_.count(loc.getRawEncoding()) > 0;
    if (loc.isMacroID()) {
      // A macro argument written in the kernel is rewritten where it is spelt. A use inside a macro's
      // definition is shared with the kernel compiled for the GPU: the host version declares the name
      // at the top of its body instead (<dispar/hostk/CudaNames.h>).
      if (sm_.isMacroArgExpansion(loc) && sm_.isInMainFile(sm_.getSpellingLoc(loc))) {
        loc = sm_.getSpellingLoc(loc);
      } else {
        macroBuiltins_.insert(&builtin);
        return;
      }
    }
    // In a thread-loop clone the thread's index is its segment loop's, and the block's are a local.
    std::string use = hostk::rewrittenUse(builtin);
    if (sharedAtomic)
      use = "::dispar::hostk::block_shared::" + std::string(builtin.cudaName);
    else if (!threadIndex_.empty() && builtin.cudaName == "threadIdx")
      use = threadIndex_;
    else if (!threadIndex_.empty() && builtin.kind == hostk::BuiltinKind::Index)
      use = std::string(ThreadLoopPlanner::kBlockShape) + "." + std::string(builtin.cudaName);
    rewriter_.ReplaceText(loc, static_cast<unsigned>(builtin.cudaName.size()), use);
  }

  void rewriteSharedDeclarations(clang::DeclStmt* stmt) {
    clang::PrintingPolicy policy = context_.getPrintingPolicy();
    std::string replacement;
    for (const clang::Decl* decl : stmt->decls()) {
      const auto* var = llvm::dyn_cast<clang::VarDecl>(decl);
      if (!var) continue;
      std::string name = var->getNameAsString();
      clang::QualType type = var->getType();
      // `__shared__ cg::block_tile_memory<256> scratch;`: the name is checked like any other use.
      if (const clang::CXXRecordDecl* record = context_.getBaseElementType(type)->getAsCXXRecordDecl();
          record && isInCooperativeGroups(record) &&
          !checkCooperativeGroups(record, hostk::CooperativeGroupsKind::Type, var->getTypeSpecStartLoc()))
        return;
      if (var->hasExternalStorage()) {
        const clang::ArrayType* array = context_.getAsArrayType(type);
        if (!array) {
          unsupported(var->getLocation(), "extern __shared__ scalars", "declare an unsized array");
          return;
        }
        replacement += array->getElementType().getAsString(policy) + "* " + name +
                       " = ::dispar::hostk::dynamicShared<" + array->getElementType().getAsString(policy) + ">(); ";
      } else {
        // The lambda's type tells this declaration apart from every other: one instance per block.
        std::string spelled = type.getUnqualifiedType().getAsString(policy);
        replacement += "::dispar::hostk::SharedRef<" + spelled + "> " + name + " = ::dispar::hostk::sharedVariable<" +
                       spelled + ">([] {}); ";
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

  struct ByName {
    bool operator()(const hostk::Builtin* a, const hostk::Builtin* b) const { return a->cudaName < b->cudaName; }
  };

  clang::ASTContext& context_;
  const clang::SourceManager& sm_;
  clang::Rewriter& rewriter_;
  DisparDiagnostics& diags_;
  CudaTarget target_;
  const std::vector<const clang::FunctionTemplateDecl*>& clonedTemplates_;
  std::string threadIndex_;
  std::set<const hostk::Builtin*, ByName> macroBuiltins_;  // ordered: deterministic output
  std::set<unsigned> reportedCooperativeGroups_;           // one report per use
  std::set<clang::SourceLocation::UIntTy> sharedAtomics_;  // the names of atomics on __shared__ memory
};

// How the clone runs its CUDA threads, for whoever reads the generated code (--emit-cpp).
std::string hostFormComment(const clang::FunctionDecl* fn, const ThreadLoopPlanner& loops) {
  if (loops.usesThreadLoops(fn))
    return "  // kernel '" + fn->getNameAsString() + "': " + ThreadLoopPlanner::names(loops.form(fn)).description;
  return "  // kernel '" + fn->getNameAsString() + "': fibers, because " + loops.fiberReason(fn);
}

}  // namespace

clang::SourceRange CudaLowering::writtenRange(clang::SourceRange range) const {
  const clang::SourceLocation begin = range.getBegin(), end = range.getEnd();
  // Code passed as a macro argument (`CHECK(k<<<1, 32>>>(d))`) is written where the argument is spelt.
  if ((begin.isMacroID() || end.isMacroID()) && sm_.isMacroArgExpansion(begin) && sm_.isMacroArgExpansion(end)) {
    const clang::SourceLocation spelledBegin = sm_.getSpellingLoc(begin), spelledEnd = sm_.getSpellingLoc(end);
    if (sm_.isInMainFile(spelledBegin) && sm_.isInMainFile(spelledEnd)) return {spelledBegin, spelledEnd};
  }
  return sm_.getExpansionRange(range).getAsRange();
}

std::string CudaLowering::text(clang::SourceRange range) const {
  return clang::Lexer::getSourceText(clang::CharSourceRange::getTokenRange(writtenRange(range)), sm_,
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

void CudaLowering::add(FrontendResult& result, clang::SourceLocation begin, unsigned length,
                       const std::string& replacement) {
  llvm::Error error = result.sourceEdits.add(clang::tooling::Replacement(sm_, begin, length, replacement));
  if (error) {
    // Overlapping edits mean two rewrites claim the same text: a bug in the lowering, never user error.
    llvm::errs() << "disparcc: internal error: " << llvm::toString(std::move(error)) << "\n";
    std::abort();
  }
}

clang::SourceLocation CudaLowering::fileLoc(unsigned offset) const {
  return sm_.getLocForStartOfFile(sm_.getMainFileID()).getLocWithOffset(static_cast<int>(offset));
}

unsigned CudaLowering::endOffset(clang::SourceRange range) const {
  return sm_.getFileOffset(clang::Lexer::getLocForEndOfToken(range.getEnd(), 0, sm_, context_.getLangOpts()));
}

void CudaLowering::dropCudaQualifiers(clang::SourceRange range, clang::Rewriter& rewriter) const {
  const clang::LangOptions& lang = context_.getLangOpts();
  llvm::StringRef buffer = sm_.getBufferData(sm_.getMainFileID());
  const unsigned beginOffset = sm_.getFileOffset(range.getBegin());
  const unsigned end = endOffset(range);
  clang::Lexer lexer(sm_.getLocForStartOfFile(sm_.getMainFileID()), lang, buffer.begin(), buffer.begin() + beginOffset,
                     buffer.end());
  clang::Token tok;
  int launchBoundsDepth = -1;
  while (!lexer.LexFromRawLexer(tok) && sm_.getFileOffset(tok.getLocation()) < end) {
    if (tok.is(clang::tok::raw_identifier)) {
      llvm::StringRef id = tok.getRawIdentifier();
      if (id == "__launch_bounds__") {
        rewriter.RemoveText(tok.getLocation(), tok.getLength());
        launchBoundsDepth = 0;
        continue;
      }
      for (std::string_view q : kQualifierTokens)
        if (id == llvm::StringRef(q.data(), q.size())) rewriter.RemoveText(tok.getLocation(), tok.getLength());
    }
    if (launchBoundsDepth >= 0) {
      if (tok.is(clang::tok::l_paren)) ++launchBoundsDepth;
      rewriter.RemoveText(tok.getLocation(), tok.getLength());
      if (tok.is(clang::tok::r_paren) && --launchBoundsDepth == 0) launchBoundsDepth = -1;
    }
    if (tok.is(clang::tok::eof)) break;
  }
}

unsigned CudaLowering::declarationEnd(clang::SourceRange declaration) const {
  // A declaration's range stops before its `;` (a prototype, a variable): the end is past it.
  const clang::SourceLocation semicolon = clang::Lexer::findLocationAfterToken(
      declaration.getEnd(), clang::tok::semi, sm_, context_.getLangOpts(), /*SkipTrailingWhitespaceAndNewLine=*/false);
  return semicolon.isValid() ? sm_.getFileOffset(semicolon) : endOffset(declaration);
}

void CudaLowering::insertAfter(FrontendResult& result, clang::SourceRange original, const std::string& text) {
  // Right after the original, on lines of its own (even where a namespace closes on the same line);
  // #line keeps both, and the rest of the original's last line, pointing at the .dsp.
  const unsigned at = declarationEnd(original);
  add(result, fileLoc(at), 0, "\n" + text + lineDirective(fileLoc(at)));
}

bool CudaLowering::inMainFileText(const clang::FunctionDecl* fn) const {
  const clang::Decl* whole = fn;
  if (const clang::FunctionTemplateDecl* tmpl = fn->getDescribedFunctionTemplate()) whole = tmpl;
  const clang::SourceRange range = whole->getSourceRange();
  if (fn->doesThisDeclarationHaveABody()) {
    const auto* body = llvm::dyn_cast<clang::CompoundStmt>(fn->getBody());
    if (!body || body->getLBracLoc().isMacroID() || body->getRBracLoc().isMacroID()) return false;
  }
  return sm_.isInMainFile(sm_.getExpansionLoc(range.getBegin())) && range.getEnd().isFileID();
}

void CudaLowering::lowerClone(const clang::FunctionDecl* fn, clang::Rewriter& clones, const ThreadLoopPlanner& loops,
                              FrontendResult& result) {
  const bool kernel = fn->hasAttr<clang::CUDAGlobalAttr>();
  const clang::Decl* whole = fn;
  if (const clang::FunctionTemplateDecl* tmpl = fn->getDescribedFunctionTemplate()) whole = tmpl;
  clang::SourceRange range = sm_.getExpansionRange(whole->getSourceRange()).getAsRange();
  if (fn->doesThisDeclarationHaveABody()) {
    DeviceBodyRewriter(context_, clones, diags_, options_.cudaTarget, clonedTemplates_,
                       kernel && loops.usesThreadLoops(fn) ? ThreadLoopPlanner::kThreadIndex : "")
        .rewrite(fn, /*signature=*/!kernel);
    if (kernel) loops.rewrite(fn, clones);  // only kernels planned as thread loops change
  }
  dropCudaQualifiers(range, clones);
  if (kernel && fn->doesThisDeclarationHaveABody() && options_.remarkHostPath)
    diags_.report(fn->getLocation(), Diag::HostPathForm)
        << fn->getNameAsString()
        << (loops.usesThreadLoops(fn) ? std::string(ThreadLoopPlanner::names(loops.form(fn)).description)
                                      : "fibers, because " + loops.fiberReason(fn));

  const clang::SourceLocation begin = range.getBegin();
  std::string block = "namespace dispar_host {" +
                      (kernel && fn->doesThisDeclarationHaveABody() ? hostFormComment(fn, loops) : "") + "\n" +
                      lineDirective(begin) + withSemicolon(clones.getRewrittenText(range), fn) + "\n";
  const bool hostOnly = options_.cudaTarget == CudaTarget::HostOnly;
  if (kernel && fn->doesThisDeclarationHaveABody() && !fn->getDescribedFunctionTemplate()) {
    // Launches through a pointer find the clone by the kernel's address (Launch.h, launchByPointer).
    const std::string clone = hostNamespace(fn) + fn->getNameAsString();
    const std::string original =
        hostOnly ? clone : enclosingNamespace(fn) + fn->getNameAsString();  // same without a GPU build
    block += registration(
        fn, "dispar_registered_" + fn->getNameAsString() + "_L" + std::to_string(sm_.getPresumedLoc(begin).getLine()),
        original, clone, loops.form(fn));
  }
  if (kernel) block += deducer(fn, clones);
  block += "}  // namespace dispar_host\n";
  // Without a GPU build the clone is the kernel: code that names it (`void (*k)(int*) = fill;`) gets it.
  if (hostOnly && kernel) block += "using dispar_host::" + fn->getNameAsString() + ";\n";
  if (options_.cudaTarget != CudaTarget::HostOnly) {
    insertAfter(result, range, block);
    return;
  }
  // Without a GPU build the original cannot compile (it uses CUDA builtins): the clone replaces it, on
  // lines of its own; what shares its first and last lines stays, #line keeping the numbering exact.
  const unsigned beginOffset = sm_.getFileOffset(begin);
  const unsigned end = declarationEnd(range);
  add(result, begin, end - beginOffset, "\n" + block + lineDirective(fileLoc(end)));
}

std::string CudaLowering::registration(const clang::FunctionDecl* fn, const std::string& name,
                                       const std::string& original, const std::string& clone,
                                       ThreadLoopPlanner::Form form) const {
  clang::PrintingPolicy policy = context_.getPrintingPolicy();
  policy.SuppressScope = false;
  const std::string pointer = "static_cast<" + context_.getPointerType(fn->getType()).getAsString(policy) + ">";
  auto address = [&](const std::string& function) {
    return "reinterpret_cast<const void*>(" + pointer + "(&" + function + "))";
  };
  return "static const bool " + name + " = ::dispar::hostk::detail::registerKernel(" + address(original) + ", " +
         address(clone) + ", ::dispar::hostk::detail::CloneForm::" + ThreadLoopPlanner::names(form).cloneForm +
         ", ::dispar::hostk::detail::argsLauncherFor(" + pointer + "(&" + clone + ")));\n";
}

namespace {

/// Whether a specialization's template arguments can be written at the end of the file: types and
/// integers, no class local to a function, unnamed or in an anonymous namespace.
bool nameableAtFileScope(llvm::ArrayRef<clang::TemplateArgument> arguments) {
  for (const clang::TemplateArgument& argument : arguments) {
    switch (argument.getKind()) {
      case clang::TemplateArgument::Integral: break;
      case clang::TemplateArgument::Pack:
        if (!nameableAtFileScope(argument.pack_elements())) return false;
        break;
      case clang::TemplateArgument::Type: {
        const clang::Type* type = argument.getAsType().getCanonicalType().getTypePtr();
        for (;;) {
          if (type->isPointerType() || type->isReferenceType())
            type = type->getPointeeType().getCanonicalType().getTypePtr();
          else if (type->isArrayType())
            type = type->getArrayElementTypeNoTypeQual();
          else
            break;
        }
        if (const clang::TagDecl* tag = type->getAsTagDecl())
          if (tag->getDeclName().isEmpty() || tag->getParentFunctionOrMethod() != nullptr ||
              tag->isInAnonymousNamespace())
            return false;
        break;
      }
      default: return false;
    }
  }
  return true;
}

}  // namespace

void CudaLowering::registerSpecializations(const std::vector<const clang::FunctionDecl*>& templateKernels,
                                           const ThreadLoopPlanner& loops, FrontendResult& result) {
  const bool hostOnly = options_.cudaTarget == CudaTarget::HostOnly;
  clang::PrintingPolicy policy = context_.getPrintingPolicy();
  policy.SuppressScope = false;
  std::string block;
  unsigned count = 0;
  for (const clang::FunctionDecl* fn : templateKernels) {
    const clang::FunctionTemplateDecl* tmpl = fn->getDescribedFunctionTemplate();
    for (const clang::FunctionDecl* specialization : tmpl->specializations()) {
      // An explicit specialization is a kernel of its own, which the clones do not repeat.
      if (specialization->getTemplateSpecializationKind() == clang::TSK_ExplicitSpecialization) continue;
      const clang::TemplateArgumentList* arguments = specialization->getTemplateSpecializationArgs();
      if (arguments == nullptr || !nameableAtFileScope(arguments->asArray())) continue;
      std::string written;
      llvm::raw_string_ostream out(written);
      clang::printTemplateArgumentList(out, arguments->asArray(), policy);
      out.flush();
      const std::string clone = hostNamespace(fn) + fn->getNameAsString() + written;
      const std::string original = hostOnly ? clone : enclosingNamespace(fn) + fn->getNameAsString() + written;
      block += registration(specialization, "dispar_registered_specialization_" + std::to_string(count++), original,
                            clone, loops.form(fn));
    }
  }
  if (block.empty()) return;
  const unsigned end = static_cast<unsigned>(sm_.getBufferData(sm_.getMainFileID()).size());
  add(result, fileLoc(end), 0,
      "\n// The specializations of the template kernels this file uses, for launches through a pointer.\n"
      "namespace dispar_host {\n" +
          block + "}  // namespace dispar_host\n");
}

std::string CudaLowering::deducer(const clang::FunctionDecl* fn, clang::Rewriter& clones) {
  const clang::FunctionTemplateDecl* tmpl = fn->getDescribedFunctionTemplate();
  // Once per template (a default argument may not be repeated), with its first declaration.
  if (!tmpl || tmpl->getPreviousDecl() || deducibleKernels_.count(tmpl->getCanonicalDecl())) return "";
  const clang::TemplateParameterList* parameters = tmpl->getTemplateParameters();
  std::string arguments;
  for (const clang::NamedDecl* parameter : *parameters) {
    if (parameter->getName().empty()) return "";
    if (!arguments.empty()) arguments += ", ";
    arguments += parameter->getNameAsString() + (parameter->isParameterPack() ? "..." : "");
  }
  const clang::SourceRange header = parameters->getSourceRange();
  if (!header.getBegin().isFileID() || !header.getEnd().isFileID()) return "";
  std::string functionParameters;
  if (fn->getNumParams() > 0) {
    const clang::SourceRange written(fn->getParamDecl(0)->getSourceRange().getBegin(),
                                     fn->parameters().back()->getSourceRange().getEnd());
    if (!written.getBegin().isFileID() || !written.getEnd().isFileID()) return "";
    functionParameters = clones.getRewrittenText(written);  // cooperative-groups types as the clone has them
  }
  deducibleKernels_.insert(tmpl->getCanonicalDecl());
  const std::string name = fn->getNameAsString();
  const std::string specialization = "&" + name + "<" + arguments + ">";
  return text(header) + " auto dispar_deduce_" + name + "(" + functionParameters +
         ") -> ::dispar::hostk::detail::KernelOf<decltype(" + specialization + "), " + specialization + ">;\n";
}

const clang::FunctionTemplateDecl* CudaLowering::deducibleTemplate(const clang::FunctionDecl* kernel) const {
  if (!kernel) return nullptr;
  const clang::FunctionTemplateDecl* tmpl = kernel->getPrimaryTemplate();
  if (!tmpl) tmpl = kernel->getDescribedFunctionTemplate();
  return tmpl && deducibleKernels_.count(tmpl->getCanonicalDecl()) ? tmpl : nullptr;
}

std::string CudaLowering::withSemicolon(const std::string& clone, const clang::FunctionDecl* fn) {
  return fn->doesThisDeclarationHaveABody() ? clone : clone + ";";  // a prototype's range stops before it
}

void CudaLowering::removeExplicitInstantiations(FrontendResult& result) {
  // `template __global__ void scale<int>(int*);` names a kernel that, without a GPU build, exists only
  // as its clone: the statement goes (the clone is instantiated where it is launched). Its lines stay.
  llvm::StringRef buffer = sm_.getBufferData(sm_.getMainFileID());
  std::set<unsigned> removed;
  for (const clang::FunctionDecl* fn : state_.deviceFunctions) {
    const clang::FunctionTemplateDecl* tmpl = fn->getDescribedFunctionTemplate();
    if (!tmpl || !fn->hasAttr<clang::CUDAGlobalAttr>()) continue;
    for (const clang::FunctionDecl* specialization : tmpl->specializations()) {
      const clang::TemplateSpecializationKind kind = specialization->getTemplateSpecializationKind();
      if (kind != clang::TSK_ExplicitInstantiationDefinition && kind != clang::TSK_ExplicitInstantiationDeclaration)
        continue;
      const clang::SourceLocation at = specialization->getPointOfInstantiation();
      if (at.isInvalid() || !at.isFileID() || !sm_.isInMainFile(at)) continue;
      const unsigned offset = sm_.getFileOffset(at);
      std::size_t begin = buffer.substr(0, offset).rfind("template");
      const std::size_t externAt =
          begin == llvm::StringRef::npos ? llvm::StringRef::npos : buffer.substr(0, begin).rfind("extern");
      if (externAt != llvm::StringRef::npos && buffer.substr(externAt + 6, begin - externAt - 6).trim().empty())
        begin = externAt;
      const std::size_t end = buffer.find(';', offset);
      if (begin == llvm::StringRef::npos || end == llvm::StringRef::npos ||
          !removed.insert(static_cast<unsigned>(begin)).second)
        continue;
      const llvm::StringRef statement = buffer.substr(begin, end + 1 - begin);
      add(result, fileLoc(static_cast<unsigned>(begin)), static_cast<unsigned>(statement.size()),
          std::string(statement.count('\n'), '\n'));
    }
  }
}

bool CudaLowering::isClonedTemplate(const clang::FunctionDecl* fn) const {
  const clang::FunctionTemplateDecl* tmpl = fn->getDescribedFunctionTemplate();
  return tmpl && std::find(clonedTemplates_.begin(), clonedTemplates_.end(), tmpl->getCanonicalDecl()) !=
                     clonedTemplates_.end();
}

void CudaLowering::lowerDeviceFunction(const clang::FunctionDecl* fn, clang::Rewriter& hostCode,
                                       FrontendResult& result) {
  const bool ownOverload = signatureNamesCooperativeGroups(fn);
  const bool gpuBuild = options_.cudaTarget == CudaTarget::GpuAndHost;
  const clang::Decl* whole = fn;
  if (const clang::FunctionTemplateDecl* tmpl = fn->getDescribedFunctionTemplate()) whole = tmpl;
  const clang::SourceRange range = sm_.getExpansionRange(whole->getSourceRange()).getAsRange();

  if (fn->doesThisDeclarationHaveABody())
    DeviceBodyRewriter(context_, hostCode, diags_, options_.cudaTarget, clonedTemplates_)
        .rewrite(fn, ownOverload && gpuBuild);

  if (gpuBuild && ownOverload) {
    // A cooperative-groups type in the signature is CUDA's on the GPU and the host path's on the host:
    // the host version is an overload of its own, right after the original.
    dropCudaQualifiers(range, hostCode);
    insertAfter(result, range,
                lineDirective(range.getBegin()) + withSemicolon(hostCode.getRewrittenText(range), fn) + "\n");
    return;
  }
  if (gpuBuild) {
    // One function for both: __host__ __device__, its body the original on the GPU and the rewritten
    // one on the host. Calls, overloads and argument-dependent lookup then behave as in the original.
    const unsigned nameOffset = sm_.getFileOffset(sm_.getExpansionLoc(fn->getLocation()));
    llvm::StringRef buffer = sm_.getBufferData(sm_.getMainFileID());
    const unsigned headOffset = sm_.getFileOffset(sm_.getExpansionLoc(fn->getInnerLocStart()));
    clang::Lexer lexer(sm_.getLocForStartOfFile(sm_.getMainFileID()), context_.getLangOpts(), buffer.begin(),
                       buffer.begin() + headOffset, buffer.end());
    clang::Token tok;
    clang::SourceLocation deviceToken;
    while (!lexer.LexFromRawLexer(tok) && sm_.getFileOffset(tok.getLocation()) < nameOffset)
      if (tok.is(clang::tok::raw_identifier) && tok.getRawIdentifier() == "__device__") {
        deviceToken = tok.getLocation();
        break;
      }
    // `__device__` spelt through a macro (or inherited from an earlier declaration): say both.
    if (deviceToken.isValid())
      add(result, deviceToken, 0, "__host__ ");
    else
      add(result, fileLoc(headOffset), 0, "__host__ __device__ ");
    if (!fn->doesThisDeclarationHaveABody()) return;
  } else {
    // Without a GPU build it is a host function: its CUDA qualifiers go too (`__noinline__` means
    // nothing to g++), and its body is the host version.
    dropCudaQualifiers(range, hostCode);
    add(result, range.getBegin(), endOffset(range) - sm_.getFileOffset(range.getBegin()),
        hostCode.getRewrittenText(range));
    return;
  }

  // The body (from a constructor's initialisers on): the host version's, or both under __CUDA_ARCH__.
  const auto* body = llvm::cast<clang::CompoundStmt>(fn->getBody());
  clang::SourceLocation split = body->getLBracLoc();
  if (const auto* ctor = llvm::dyn_cast<clang::CXXConstructorDecl>(fn))
    for (const clang::CXXCtorInitializer* init : ctor->inits())
      if (init->isWritten()) {
        split = ctorInitializerColon(ctor, init->getSourceLocation());
        break;
      }
  const clang::SourceRange bodyRange(split, body->getRBracLoc());
  const std::string host = hostCode.getRewrittenText(bodyRange);
  const unsigned splitOffset = sm_.getFileOffset(split);
  const unsigned length = endOffset(bodyRange) - splitOffset;
  llvm::StringRef buffer = sm_.getBufferData(sm_.getMainFileID());
  const std::string original = buffer.substr(splitOffset, length).str();
  if (original == host) return;  // nothing CUDA-specific in it: the same body serves both
  add(result, split, length,
      "\n#ifdef __CUDA_ARCH__\n" + lineDirective(split) + original + "\n#else\n" + lineDirective(split) + host +
          "\n#endif\n" + lineDirective(body->getRBracLoc()));
}

clang::SourceLocation CudaLowering::ctorInitializerColon(const clang::CXXConstructorDecl* ctor,
                                                         clang::SourceLocation firstInit) const {
  // The last ':' before the first written initialiser, at bracket depth 0 after the parameter list.
  llvm::StringRef buffer = sm_.getBufferData(sm_.getMainFileID());
  const unsigned from = sm_.getFileOffset(sm_.getExpansionLoc(ctor->getLocation()));
  const unsigned to = sm_.getFileOffset(sm_.getExpansionLoc(firstInit));
  clang::Lexer lexer(sm_.getLocForStartOfFile(sm_.getMainFileID()), context_.getLangOpts(), buffer.begin(),
                     buffer.begin() + from, buffer.end());
  clang::Token tok;
  clang::SourceLocation colon = sm_.getExpansionLoc(firstInit);
  while (!lexer.LexFromRawLexer(tok) && sm_.getFileOffset(tok.getLocation()) < to)
    if (tok.is(clang::tok::colon)) colon = tok.getLocation();
  return colon;
}

void CudaLowering::lowerDeviceVariables(FrontendResult& result) {
  // With a GPU build each __constant__ / __device__ variable keeps its GPU copy; host versions of
  // device code and cudaMemcpyToSymbol on the host path use a host copy, declared right after it in
  // namespace dispar_host. Several variables of one declaration get one copy of that declaration.
  std::set<unsigned> done;
  for (const clang::VarDecl* var : state_.deviceVariables) {
    const clang::SourceRange range = sm_.getExpansionRange(var->getSourceRange()).getAsRange();
    if (!done.insert(sm_.getFileOffset(range.getBegin())).second) continue;
    clang::SourceRange whole = range;
    for (const clang::VarDecl* other : state_.deviceVariables) {
      const clang::SourceRange otherRange = sm_.getExpansionRange(other->getSourceRange()).getAsRange();
      if (otherRange.getBegin() == range.getBegin() &&
          sm_.isBeforeInTranslationUnit(whole.getEnd(), otherRange.getEnd()))
        whole.setEnd(otherRange.getEnd());
    }
    clang::Rewriter copy(const_cast<clang::SourceManager&>(sm_), context_.getLangOpts());
    dropCudaQualifiers(whole, copy);
    insertAfter(result, whole,
                "namespace dispar_host {\n" + lineDirective(whole.getBegin()) + copy.getRewrittenText(whole) +
                    ";\n}  // namespace dispar_host\n");
  }
}

const clang::FunctionDecl* CudaLowering::launchedKernel(const clang::CUDAKernelCallExpr* launch) const {
  if (const clang::FunctionDecl* kernel = launch->getDirectCallee()) return kernel;
  // In a template, `kernel<BLOCK_SIZE><<<...>>>` names a kernel template not yet specialised.
  if (const auto* lookup = llvm::dyn_cast<clang::UnresolvedLookupExpr>(launch->getCallee()->IgnoreParenImpCasts()))
    for (const clang::NamedDecl* decl : lookup->decls())
      if (const auto* tmpl = llvm::dyn_cast<clang::FunctionTemplateDecl>(decl->getUnderlyingDecl()))
        if (tmpl->getTemplatedDecl()->hasAttr<clang::CUDAGlobalAttr>()) return tmpl->getTemplatedDecl();
  return nullptr;
}

std::string CudaLowering::rewriteLaunch(const clang::CUDAKernelCallExpr* launch, const clang::FunctionDecl* kernel,
                                        const ThreadLoopPlanner& loops) const {
  const clang::CallExpr* config = launch->getConfig();
  auto configArg = [&](unsigned i, const char* fallback) -> std::string {
    if (!config || i >= config->getNumArgs() || llvm::isa<clang::CXXDefaultArgExpr>(config->getArg(i))) return fallback;
    return text(config->getArg(i)->getSourceRange());
  };
  // Through a pointer: the kernel is known at run time only, by its address.
  const std::string calleeText = text(launch->getCallee()->getSourceRange());
  std::string host = kernel ? "&" + hostNamespace(kernel) + kernel->getNameAsString() : calleeText;
  // The template arguments as written (`kernel<BLOCK_SIZE>` in a template), else as deduced.
  const clang::Expr* callee = launch->getCallee()->IgnoreParenImpCasts();
  clang::SourceLocation lAngle, rAngle;
  unsigned writtenArguments = 0;
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(callee); ref && ref->hasExplicitTemplateArgs()) {
    lAngle = ref->getLAngleLoc();
    rAngle = ref->getRAngleLoc();
    writtenArguments = ref->getNumTemplateArgs();
  } else if (const auto* lookup = llvm::dyn_cast<clang::UnresolvedLookupExpr>(callee);
             lookup && lookup->hasExplicitTemplateArgs()) {
    lAngle = lookup->getLAngleLoc();
    rAngle = lookup->getRAngleLoc();
    writtenArguments = lookup->getNumTemplateArgs();
  }
  // Deduction is needed where the launch leaves template arguments to it: in a template (`k<<<g, b>>>(x)`
  // with a dependent x), or after some written ones (`k<256><<<g, b>>>(x)`).
  const clang::FunctionTemplateDecl* deducible = deducibleTemplate(kernel);
  if (deducible) {
    const clang::TemplateParameterList* parameters = deducible->getTemplateParameters();
    const bool allWritten =
        lAngle.isValid() && !parameters->hasParameterPack() && writtenArguments == parameters->size();
    const bool deducedHere = lAngle.isInvalid() && kernel->getTemplateSpecializationArgs() != nullptr;
    if (allWritten || deducedHere) deducible = nullptr;
  }
  if (const clang::FunctionTemplateDecl* tmpl = deducible) {
    // The specialization a call with these arguments deduces (the written template arguments first),
    // in an unevaluated operand: each argument is still evaluated once, by the launch.
    host = "decltype(" + hostNamespace(tmpl) + "dispar_deduce_" + tmpl->getNameAsString() +
           (lAngle.isValid() ? text(clang::SourceRange(lAngle, rAngle)) : "") + "(";
    bool first = true;
    for (const clang::Expr* arg : launch->arguments()) {
      if (llvm::isa<clang::CXXDefaultArgExpr>(arg)) continue;  // the deducer has the same defaults
      host += (first ? "" : ", ") + text(arg->getSourceRange());
      first = false;
    }
    host += "))::value";
  } else if (kernel && lAngle.isValid()) {
    host += text(clang::SourceRange(lAngle, rAngle));
  } else if (const clang::TemplateArgumentList* args = kernel ? kernel->getTemplateSpecializationArgs() : nullptr) {
    std::string printed;
    llvm::raw_string_ostream out(printed);
    clang::printTemplateArgumentList(out, args->asArray(), context_.getPrintingPolicy());
    host += out.str();
  }
  const std::string launcher =
      kernel ? ThreadLoopPlanner::names(loops.form(kernel)).launcher : std::string("launchByPointer");
  std::string hostLaunch = "::dispar::hostk::" + launcher + "(" + configArg(0, "1") + ", " + configArg(1, "1") + ", " +
                           configArg(2, "0") + ", " + host;
  for (const clang::Expr* arg : launch->arguments()) {
    // A parameter's default is spelt where the kernel declares it.
    if (const auto* defaulted = llvm::dyn_cast<clang::CXXDefaultArgExpr>(arg))
      hostLaunch += ", " + text(defaulted->getExpr()->getSourceRange());
    else
      hostLaunch += ", " + text(arg->getSourceRange());
  }
  // In a template the call leaves defaults out: they are spelt where the kernel declares them.
  for (unsigned i = launch->getNumArgs(); kernel && i < kernel->getNumParams(); ++i)
    if (const clang::ParmVarDecl* param = kernel->getParamDecl(i); param->hasDefaultArg())
      hostLaunch += ", " + text(param->getDefaultArgRange());
  hostLaunch += ")";
  // A failed launch aborts the job naming the VNODE, the kernel and where it was launched.
  clang::PresumedLoc where = sm_.getPresumedLoc(writtenRange(launch->getSourceRange()).getBegin());
  const std::string name = kernel ? kernel->getNameAsString() : calleeText + " (through a pointer)";
  const std::string site = "\"" + name + "\", \"" + where.getFilename() + ":" + std::to_string(where.getLine()) + ":" +
                           std::to_string(where.getColumn()) + "\"";
  std::string check = "::dispar::gpu::checkLaunch(" + site + ")";
  // A run profile times every launch site: the timer is a temporary of the whole expression, so it ends
  // after the launch and its check (LaunchTimer.h).
  const std::string timer = "(void)::dispar::gpu::LaunchTimer(" + site + "), ";
  if (options_.cudaTarget != CudaTarget::HostOnly)
    return "(" + timer + "(::dispar::gpu::onHost() ? (void)" + hostLaunch + " : (void)(" +
           text(launch->getSourceRange()) + ")), " + check + ")";
  // The launch may span lines; its replacement keeps as many, so that #line and __LINE__ stay right.
  const std::string original = text(launch->getSourceRange());
  return "(" + timer + "(void)" + hostLaunch + ", " + check +
         std::string(std::count(original.begin(), original.end(), '\n'), '\n') + ")";
}

std::string CudaLowering::timedLibraryCall(llvm::StringRef function, const std::string& callee,
                                           clang::SourceLocation loc) const {
  const clang::PresumedLoc where = sm_.getPresumedLoc(loc);
  return "((void)::dispar::gpu::LibraryCallTimer(\"" + function.str() + "\", \"" + where.getFilename() + ":" +
         std::to_string(where.getLine()) + ":" + std::to_string(where.getColumn()) + "\"), " + callee + ")";
}

void CudaLowering::timeLibraryCalls(FrontendResult& result) {
  std::set<unsigned> timed;  // file offsets of the names already rewritten
  for (const clang::CallExpr* call : state_.runtimeCalls) {
    const clang::FunctionDecl* callee = call->getDirectCallee();
    if (!callee || libraryCall(callee->getName()) == nullptr) continue;
    const clang::SourceLocation loc = writtenCalleeLocation(call->getCallee()->getBeginLoc());
    const llvm::StringRef written = writtenName(callee->getName());
    const unsigned length = clang::Lexer::MeasureTokenLength(loc, sm_, context_.getLangOpts());
    // A call a header's macro makes is not timed: its name is not written here.
    if (!sm_.isInMainFile(loc) || llvm::StringRef(sm_.getCharacterData(loc), length) != written) continue;
    const unsigned offset = sm_.getFileOffset(loc);
    if (std::any_of(result.fusedRanges.begin(), result.fusedRanges.end(), [&](const clang::tooling::Range& range) {
          return offset >= range.getOffset() && offset < range.getOffset() + range.getLength();
        }))
      continue;
    if (timed.insert(offset).second)
      add(result, loc, static_cast<unsigned>(written.size()), timedLibraryCall(written, written.str(), loc));
  }
}

clang::SourceLocation CudaLowering::writtenCalleeLocation(clang::SourceLocation loc) const {
  while (loc.isMacroID()) {
    if (sm_.isMacroArgExpansion(loc)) {
      loc = sm_.getImmediateSpellingLoc(loc);  // checkCuda(cudaMalloc(...)): the argument as written
      continue;
    }
    // From a macro's body: a macro of this file is rewritten in its definition; a header's alias
    // (cublas_v2.h's `#define cublasSgemm cublasSgemm_v2`) where the alias is used.
    const clang::SourceLocation spelling = sm_.getImmediateSpellingLoc(loc);
    loc = sm_.isInMainFile(sm_.getSpellingLoc(spelling)) ? spelling : sm_.getImmediateExpansionRange(loc).getBegin();
  }
  return loc;
}

void CudaLowering::recordLinkNeeds(FrontendResult& result) const {
  for (const clang::CallExpr* call : state_.runtimeCalls)
    if (const clang::FunctionDecl* callee = call->getDirectCallee())
      if (const LibraryCall* library = libraryCall(callee->getName())) {
        const std::string name(library->library);
        if (std::find(result.gpuLibraries.begin(), result.gpuLibraries.end(), name) == result.gpuLibraries.end())
          result.gpuLibraries.push_back(name);
      }
  std::sort(result.gpuLibraries.begin(), result.gpuLibraries.end());
  result.launchesInDeviceCode = state_.launchesInDeviceCode;
}

void CudaLowering::rewriteRuntimeCalls(FrontendResult& result) {
  std::set<unsigned> rewrittenCalls;  // file offsets of the names already rewritten
  for (const clang::CallExpr* call : state_.runtimeCalls) {
    const clang::FunctionDecl* callee = call->getDirectCallee();
    if (!callee || !isDispatched(callee->getName())) continue;
    // A call written in a macro (an argument, or the definition) is rewritten where it is spelt: the
    // rewrite is the same for every expansion, so a name spelt once is rewritten once.
    const clang::SourceLocation loc = writtenCalleeLocation(call->getCallee()->getBeginLoc());
    const llvm::StringRef written = writtenName(callee->getName());
    // The name must be written there: a header macro that makes the call (`SAFE_MALLOC(p)`) leaves it
    // to the macro's name, which is not the function's.
    const unsigned length = clang::Lexer::MeasureTokenLength(loc, sm_, context_.getLangOpts());
    if (!sm_.isInMainFile(loc) || llvm::StringRef(sm_.getCharacterData(loc), length) != written) {
      diags_.report(sm_.getExpansionLoc(call->getBeginLoc()), Diag::UnsupportedOnHost)
          << ("'" + written.str() + "' called from a header's macro")
          << "call it in the file (a macro argument is fine)";
      diags_.report(sm_.getExpansionLoc(call->getBeginLoc()), Diag::NoteHostPath);
      continue;
    }
    if (!rewrittenCalls.insert(sm_.getFileOffset(loc)).second) continue;
    // A call inside a loop that library-call fusion replaced is gone (the fused call is already spelt
    // for dispatch): editing it would conflict.
    const unsigned offset = sm_.getFileOffset(loc);
    if (std::any_of(result.fusedRanges.begin(), result.fusedRanges.end(), [&](const clang::tooling::Range& range) {
          return offset >= range.getOffset() && offset < range.getOffset() + range.getLength();
        }))
      continue;
    const std::string dispatched = ("::dispar::gpu::" + written).str();
    add(result, loc, static_cast<unsigned>(written.size()),
        libraryCall(callee->getName()) != nullptr && options_.timeLibraryCalls
            ? timedLibraryCall(written, dispatched, loc)
            : dispatched);
    const SymbolCall* symbol = symbolCall(callee->getName());
    if (!symbol) continue;
    const clang::Expr* argument =
        symbol->symbolArgument < call->getNumArgs() ? call->getArg(symbol->symbolArgument) : nullptr;
    const auto* ref = argument ? llvm::dyn_cast<clang::DeclRefExpr>(argument->IgnoreParenImpCasts()) : nullptr;
    const auto* var = ref ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
    clang::SourceLocation begin = argument ? argument->getBeginLoc() : clang::SourceLocation();
    clang::SourceLocation end = argument ? argument->getEndLoc() : clang::SourceLocation();
    if (argument && (begin.isMacroID() || end.isMacroID()) && sm_.isMacroArgExpansion(begin) &&
        sm_.isMacroArgExpansion(end)) {
      begin = sm_.getSpellingLoc(begin);  // checkCuda(cudaMemcpyToSymbol(coeffs, ...)): spelt in the file
      end = sm_.getSpellingLoc(end);
    }
    if (!var || !isDeviceVariable(var) || !begin.isFileID() || !end.isFileID() || !sm_.isInMainFile(begin)) {
      diags_.report(argument ? argument->getBeginLoc() : call->getBeginLoc(), Diag::UnsupportedOnHost)
          << ("'" + callee->getNameAsString() +
              "' on a symbol other than a __constant__ or __device__ variable of this file")
          << "name the variable itself";
      diags_.report(call->getBeginLoc(), Diag::NoteHostPath);
      continue;
    }
    const clang::SourceRange range(begin, end);
    add(result, begin, endOffset(range) - sm_.getFileOffset(begin),
        "::dispar::gpu::symbol(" + text(range) + ", " + hostNamespace(var) + var->getNameAsString() + ")");
  }
}

void CudaLowering::lower(FrontendResult& result) {
  recordLinkNeeds(result);
  if (options_.cudaTarget == CudaTarget::GpuOnly) return;
  clang::Rewriter hostCode(const_cast<clang::SourceManager&>(sm_), context_.getLangOpts());
  const ThreadLoopPlanner loops(context_, state_);

  if (options_.cudaTarget == CudaTarget::GpuAndHost) {
    lowerDeviceVariables(result);
    // A __device__ function template's host version is a clone in dispar_host: made __host__ __device__,
    // nvcc would also compile its GPU body for the host version's types (a host-path tile, say).
    for (const clang::FunctionDecl* fn : state_.deviceFunctions)
      if (isDeviceOnly(fn) && !fn->hasAttr<clang::CUDAGlobalAttr>() && !llvm::isa<clang::CXXMethodDecl>(fn))
        if (const clang::FunctionTemplateDecl* tmpl = fn->getDescribedFunctionTemplate())
          if (std::find(clonedTemplates_.begin(), clonedTemplates_.end(), tmpl->getCanonicalDecl()) ==
              clonedTemplates_.end())
            clonedTemplates_.push_back(tmpl->getCanonicalDecl());
  }
  std::vector<clang::SourceRange> deviceCode;  // launches in it are dynamic parallelism, reported
  std::vector<const clang::FunctionDecl*> templateKernels;
  for (const clang::FunctionDecl* fn : state_.deviceFunctions) {
    if (!isDeviceOnly(fn)) continue;
    if (!inMainFileText(fn)) {
      diags_.report(fn->getLocation(), Diag::UnsupportedOnHost)
          << "a kernel or __device__ function defined by a macro" << "write it in the file";
      diags_.report(fn->getLocation(), Diag::NoteHostPath);
      continue;
    }
    const clang::SourceRange code = sm_.getExpansionRange(fn->getSourceRange()).getAsRange();
    deviceCode.push_back(code);
    for (clang::SourceLocation compared : state_.archComparisons)
      if (!sm_.isBeforeInTranslationUnit(compared, code.getBegin()) &&
          sm_.isBeforeInTranslationUnit(compared, code.getEnd()))
        result.archComparisons.push_back(sm_.getFileOffset(compared));
    for (clang::SourceLocation conditional : state_.hostlessArchConditionals)
      if (!sm_.isBeforeInTranslationUnit(conditional, code.getBegin()) &&
          sm_.isBeforeInTranslationUnit(conditional, code.getEnd())) {
        // The host side of the file has none of that code: the host version would silently skip it.
        diags_.report(conditional, Diag::UnsupportedOnHost)
            << "code under '#if __CUDA_ARCH__' with no host branch"
            << "add an #else that computes the same on the host, or compile with --no-host-path";
        diags_.report(conditional, Diag::NoteHostPath);
      }
    if (fn->hasAttr<clang::CUDAGlobalAttr>() || isClonedTemplate(fn))
      lowerClone(fn, hostCode, loops, result);
    else
      lowerDeviceFunction(fn, hostCode, result);
    if (fn->hasAttr<clang::CUDAGlobalAttr>() && fn->getDescribedFunctionTemplate() &&
        fn->doesThisDeclarationHaveABody())
      templateKernels.push_back(fn);
  }
  registerSpecializations(templateKernels, loops, result);

  if (options_.cudaTarget == CudaTarget::HostOnly) removeExplicitInstantiations(result);

  for (const clang::CUDAKernelCallExpr* launch : state_.launches) {
    const clang::SourceRange range = writtenRange(launch->getSourceRange());
    bool inDeviceCode = false;
    for (const clang::SourceRange& code : deviceCode)
      inDeviceCode = inDeviceCode || (!sm_.isBeforeInTranslationUnit(range.getBegin(), code.getBegin()) &&
                                      !sm_.isBeforeInTranslationUnit(code.getEnd(), range.getBegin()));
    if (inDeviceCode) continue;  // dynamic parallelism, reported with the device code
    const clang::FunctionDecl* kernel = launchedKernel(launch);
    const clang::SourceLocation at = sm_.getExpansionLoc(launch->getBeginLoc());
    const clang::QualType calleeType = launch->getCallee()->IgnoreParenImpCasts()->getType();
    if (!kernel && !calleeType->isFunctionPointerType() && !calleeType->isFunctionReferenceType()) {
      diags_.report(at, Diag::UnsupportedOnHost)
          << "a launch of this kind" << "launch the kernel by name or through a pointer";
      diags_.report(at, Diag::NoteHostPath);
      continue;
    }
    const bool inMacroBody =
        (launch->getBeginLoc().isMacroID() || launch->getEndLoc().isMacroID()) &&
        !(sm_.isMacroArgExpansion(launch->getBeginLoc()) && sm_.isMacroArgExpansion(launch->getEndLoc()));
    if (inMacroBody || !sm_.isInMainFile(range.getBegin())) {
      diags_.report(at, Diag::UnsupportedOnHost)
          << "a kernel launch inside a macro definition" << "write the launch in the code (a macro argument is fine)";
      diags_.report(at, Diag::NoteHostPath);
      continue;
    }
    const clang::SourceLocation begin = range.getBegin();
    add(result, begin, endOffset(range) - sm_.getFileOffset(begin), rewriteLaunch(launch, kernel, loops));
  }

  // A GPU library call the host path has no stand-in for would fail (or worse, be ignored) at run time
  // on a rank without a GPU: say so now.
  for (const clang::CallExpr* call : state_.runtimeCalls) {
    const clang::FunctionDecl* callee = call->getDirectCallee();
    if (!callee || isDispatched(callee->getName())) continue;
    diags_.report(sm_.getExpansionLoc(call->getBeginLoc()), Diag::UnsupportedOnHost)
        << ("'" + writtenName(callee->getName()).str() + "'")
        << "the host path provides only the CUDA runtime calls listed in docs/cuda.md and the cuBLAS and cuFFT "
           "calls listed in docs/libraries.md";
    diags_.report(sm_.getExpansionLoc(call->getBeginLoc()), Diag::NoteHostPath);
  }

  if (options_.cudaTarget == CudaTarget::GpuAndHost)
    rewriteRuntimeCalls(result);
  else if (options_.cudaTarget == CudaTarget::HostOnly && options_.timeLibraryCalls)
    timeLibraryCalls(result);
}

}  // namespace dispar::frontend
