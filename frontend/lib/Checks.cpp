#include "Checks.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchers.h"

namespace dispar::frontend {

using namespace clang::ast_matchers;  // NOLINT: matcher DSL, confined to this file

namespace {

auto pipeType() {
  return qualType(hasUnqualifiedDesugaredType(recordType(
      hasDeclaration(classTemplateSpecializationDecl(hasAnyName("::dispar::Pipe", "::dispar::PipeArray"))))));
}

auto pipeVariable() { return varDecl(hasGlobalStorage(), hasType(pipeType())); }

// GPU libraries whose calls make a VNODE CG: the CUDA runtime and driver, cuBLAS, cuFFT and friends.
constexpr const char* kGpuLibraryPattern = "^::(cuda|cu|cublas|cufft|curand|cusparse|cusolver|nccl)[A-Z]";
// cuComplex.h's arithmetic (cuCmul, cuCreal, ...) and cudaCreateChannelDesc match that pattern but are
// inline code that runs anywhere, host code included: they neither make a VNODE CG nor need a stand-in.
constexpr const char* kRunsAnywherePattern =
    "^::(cu(C(real|imag|add|sub|mul|div|abs|onj|fma)f?|ComplexFloatToDouble|ComplexDoubleToFloat)|"
    "cudaCreateChannelDesc)$";

// The named function a statement belongs to: a lambda's body belongs to the function it is written in.
const clang::FunctionDecl* owningFunction(const clang::FunctionDecl* fn) {
  while (fn) {
    const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(fn);
    if (!method || !method->getParent()->isLambda()) return fn;
    fn = llvm::dyn_cast_or_null<clang::FunctionDecl>(method->getParent()->getParentFunctionOrMethod());
  }
  return fn;
}

}  // namespace

void PipeDeclarationCheck::registerMatchers(MatchFinder& finder) {
  finder.addMatcher(varDecl(isExpansionInMainFile(), pipeVariable()).bind("pipe"), this);
}

void PipeDeclarationCheck::run(const MatchFinder::MatchResult& result) {
  const auto* var = result.Nodes.getNodeAs<clang::VarDecl>("pipe");
  if (!var || !var->isThisDeclarationADefinition()) return;
  state_.pipes.push_back(PipeDecl{var, pipeElementType(var->getType()), pipeArraySize(var->getType())});
}

void VnodeDefinitionCheck::registerMatchers(MatchFinder& finder) {
  finder.addMatcher(functionDecl(isExpansionInMainFile(), isDefinition(), hasAttr(clang::attr::Annotate)).bind("vnode"),
                    this);
}

void VnodeDefinitionCheck::run(const MatchFinder::MatchResult& result) {
  const auto* fn = result.Nodes.getNodeAs<clang::FunctionDecl>("vnode");
  // A VNODE_ARRAY's function takes its index, then its FamilySize.
  const std::optional<int> members = fn->getNumParams() >= 2 ? familySize(fn->getParamDecl(1)) : std::nullopt;
  const std::optional<VnodeAnnotation> vnode = vnodeAnnotation(fn);
  if (vnode && vnode->family == members.has_value())
    state_.vnodes.push_back(VnodeDecl{fn, vnode->name, vnode->compiledName, vnode->family, members.value_or(1)});
}

void PipeReferenceCheck::registerMatchers(MatchFinder& finder) {
  // Only references in statements: IN(p)/OUT(p) name the pipe inside decltype in the parameter list.
  finder.addMatcher(declRefExpr(isExpansionInMainFile(), to(pipeVariable().bind("pipe")), hasAncestor(compoundStmt()),
                                forCallable(functionDecl().bind("fn")))
                        .bind("ref"),
                    this);
}

void PipeReferenceCheck::run(const MatchFinder::MatchResult& result) {
  const auto* ref = result.Nodes.getNodeAs<clang::DeclRefExpr>("ref");
  PipeUse use;
  use.ref = ref;
  use.pipe = result.Nodes.getNodeAs<clang::VarDecl>("pipe");
  use.function = owningFunction(result.Nodes.getNodeAs<clang::FunctionDecl>("fn"));
  use.location = ref->getLocation();
  // Walk up to what is done with it: `chain[i + 1]` (an element), then `.write(...)` (a port call).
  // The first parent that is not an implicit cast or parentheses.
  auto parentOf = [&](const clang::Stmt* stmt) -> const clang::Stmt* {
    while (stmt) {
      const clang::DynTypedNodeList parents = result.Context->getParents(*stmt);
      stmt = parents.empty() ? nullptr : parents[0].get<clang::Stmt>();
      if (!stmt || !(llvm::isa<clang::ImplicitCastExpr>(stmt) || llvm::isa<clang::ParenExpr>(stmt))) return stmt;
    }
    return nullptr;
  };
  const clang::Stmt* parent = parentOf(ref);
  if (const auto* subscript = llvm::dyn_cast_or_null<clang::CXXOperatorCallExpr>(parent);
      subscript && subscript->getOperator() == clang::OO_Subscript && subscript->getNumArgs() == 2) {
    use.index = subscript->getArg(1);
    use.location = subscript->getBeginLoc();
    parent = parentOf(subscript);
  }
  if (const auto* member = llvm::dyn_cast_or_null<clang::MemberExpr>(parent))
    use.call = member->getMemberNameInfo().getAsString();
  state_.pipeUses.push_back(use);
}

void PortElementTypeCheck::registerMatchers(MatchFinder& finder) {
  auto portClass =
      classTemplateSpecializationDecl(hasAnyName("::dispar::InPort", "::dispar::OutPort", "::dispar::Pipe"));
  finder.addMatcher(cxxMemberCallExpr(isExpansionInMainFile(),
                                      callee(cxxMethodDecl(hasAnyName("read", "write", "push"), ofClass(portClass),
                                                           hasAttr(clang::attr::Annotate))
                                                 .bind("method")))
                        .bind("call"),
                    this);
}

void PortElementTypeCheck::run(const MatchFinder::MatchResult& result) {
  const auto* call = result.Nodes.getNodeAs<clang::CXXMemberCallExpr>("call");
  const auto* method = result.Nodes.getNodeAs<clang::CXXMethodDecl>("method");
  // Only the overloads dispar.h marks DISPAR_TYPE_MISMATCH: those that exist to reject a wrong element type.
  const bool rejects = llvm::any_of(method->specific_attrs<clang::AnnotateAttr>(), [](const clang::AnnotateAttr* a) {
    return a->getAnnotation() == "dispar.type_mismatch";
  });
  if (!rejects || call->getNumArgs() == 0) return;
  const auto* portClass = llvm::cast<clang::ClassTemplateSpecializationDecl>(method->getParent());
  clang::QualType element = portClass->getTemplateArgs()[0].getAsType();
  std::string pipeName = "?";
  const clang::Expr* object = call->getImplicitObjectArgument()->IgnoreImpCasts();
  if (const auto* element = llvm::dyn_cast<clang::CXXOperatorCallExpr>(object); element && element->getNumArgs() > 0)
    object = element->getArg(0)->IgnoreImpCasts();  // chain[i]: the array's name
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(object)) pipeName = ref->getDecl()->getName().str();
  clang::PrintingPolicy policy = result.Context->getPrintingPolicy();
  clang::QualType used = call->getArg(0)->IgnoreImpCasts()->getType().getUnqualifiedType();
  diags_.report(call->getArg(0)->getBeginLoc(), Diag::PortElementMismatch)
      << pipeName << element.getAsString(policy) << method->getName() << used.getAsString(policy);
  if (method->getName() != "read" && used->isArithmeticType() && element->isArithmeticType())
    diags_.report(call->getArg(0)->getBeginLoc(), Diag::NoteNarrowingWrite)
        << used.getAsString(policy) << element.getAsString(policy) << method->getName();
}

void UserMainCheck::registerMatchers(MatchFinder& finder) {
  finder.addMatcher(functionDecl(isExpansionInMainFile(), isMain()).bind("main"), this);
}

void UserMainCheck::run(const MatchFinder::MatchResult& result) {
  const auto* fn = result.Nodes.getNodeAs<clang::FunctionDecl>("main");
  diags_.report(fn->getLocation(), Diag::UserMain);
}

void GpuUseCollector::registerMatchers(MatchFinder& finder) {
  finder.addMatcher(
      functionDecl(isExpansionInMainFile(), isDefinition(), hasAttr(clang::attr::CUDAGlobal)).bind("kernel"), this);
  finder.addMatcher(functionDecl(isExpansionInMainFile(), unless(isImplicit()), unless(isTemplateInstantiation()),
                                 anyOf(hasAttr(clang::attr::CUDAGlobal), hasAttr(clang::attr::CUDADevice)))
                        .bind("devicefn"),
                    this);
  finder.addMatcher(varDecl(isExpansionInMainFile(), hasGlobalStorage(), unless(isStaticLocal()),
                            anyOf(hasAttr(clang::attr::CUDAConstant), hasAttr(clang::attr::CUDADevice)))
                        .bind("devicevar"),
                    this);
  finder.addMatcher(cudaKernelCallExpr(isExpansionInMainFile(), forCallable(functionDecl().bind("fn"))).bind("launch"),
                    this);
  finder.addMatcher(
      callExpr(isExpansionInMainFile(),
               // Members (a CUDA struct's assignment) are not calls into a library.
               callee(functionDecl(unless(isExpansionInMainFile()), unless(cxxMethodDecl()),
                                   matchesName(kGpuLibraryPattern), unless(matchesName(kRunsAnywherePattern)))),
               forCallable(functionDecl().bind("fn")))
          .bind("gpucall"),
      this);
  finder.addMatcher(callExpr(isExpansionInMainFile(), callee(functionDecl(hasName("::dispar::split_for"))),
                             forCallable(functionDecl().bind("fn")))
                        .bind("split"),
                    this);
  finder.addMatcher(callExpr(isExpansionInMainFile(), callee(functionDecl(isExpansionInMainFile()).bind("callee")),
                             forCallable(functionDecl().bind("fn")))
                        .bind("call"),
                    this);
}

void GpuUseCollector::run(const MatchFinder::MatchResult& result) {
  if (const auto* kernel = result.Nodes.getNodeAs<clang::FunctionDecl>("kernel")) {
    state_.kernels.push_back(kernel);
    return;
  }
  if (const auto* device = result.Nodes.getNodeAs<clang::FunctionDecl>("devicefn")) {
    state_.deviceFunctions.push_back(device);
    return;
  }
  if (const auto* variable = result.Nodes.getNodeAs<clang::VarDecl>("devicevar")) {
    state_.deviceVariables.push_back(variable);
    return;
  }
  const clang::FunctionDecl* fn = owningFunction(result.Nodes.getNodeAs<clang::FunctionDecl>("fn"));
  if (!fn) return;
  if (const auto* launch = result.Nodes.getNodeAs<clang::CUDAKernelCallExpr>("launch")) {
    // A launch in a template is rewritten once, in the template: its instantiations share the text.
    const auto* where = result.Nodes.getNodeAs<clang::FunctionDecl>("fn");
    if (!where->getTemplateInstantiationPattern()) state_.launches.push_back(launch);
    if (where->hasAttr<clang::CUDAGlobalAttr>() || where->hasAttr<clang::CUDADeviceAttr>())
      state_.launchesInDeviceCode = true;
    state_.gpuUses.push_back(GpuUse{fn, launch->getBeginLoc()});
  } else if (const auto* call = result.Nodes.getNodeAs<clang::CallExpr>("gpucall")) {
    state_.gpuUses.push_back(GpuUse{fn, call->getBeginLoc()});
    if (!fn->hasAttr<clang::CUDAGlobalAttr>() && !fn->hasAttr<clang::CUDADeviceAttr>())
      state_.runtimeCalls.push_back(call);
  } else if (const auto* split = result.Nodes.getNodeAs<clang::CallExpr>("split")) {
    // split_for(n, cpu, gpu): the GPU body makes the function a GPU user; `nullptr` for it is the
    // CPU-only parallel loop.
    state_.splitLoops.push_back(GpuUse{fn, split->getBeginLoc()});
    const bool cpuOnly = split->getNumArgs() > 2 && split->getArg(2)->IgnoreParenImpCasts()->getType()->isNullPtrType();
    if (!cpuOnly) state_.gpuUses.push_back(GpuUse{fn, split->getBeginLoc()});
  } else if (const auto* callee = result.Nodes.getNodeAs<clang::FunctionDecl>("callee")) {
    state_.calls.push_back(
        CallEdge{fn, callee->getCanonicalDecl(), result.Nodes.getNodeAs<clang::CallExpr>("call")->getBeginLoc()});
  }
}

std::vector<std::unique_ptr<FrontendCheck>> makeChecks(AnalysisState& state, DisparDiagnostics& diags) {
  std::vector<std::unique_ptr<FrontendCheck>> checks;
  checks.push_back(std::make_unique<PipeDeclarationCheck>(state, diags));
  checks.push_back(std::make_unique<VnodeDefinitionCheck>(state, diags));
  checks.push_back(std::make_unique<PipeReferenceCheck>(state, diags));
  checks.push_back(std::make_unique<PortElementTypeCheck>(state, diags));
  checks.push_back(std::make_unique<UserMainCheck>(state, diags));
  checks.push_back(std::make_unique<GpuUseCollector>(state, diags));
  return checks;
}

}  // namespace dispar::frontend
