#include "ProgramAssembler.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <functional>

namespace dispar::frontend {

lang::SourceLocation ProgramAssembler::toModelLocation(clang::SourceLocation loc) const {
  clang::PresumedLoc presumed = sm_.getPresumedLoc(sm_.getExpansionLoc(loc));
  lang::SourceLocation out;
  if (presumed.isInvalid()) return out;
  out.file = presumed.getFilename();
  out.line = presumed.getLine();
  out.column = presumed.getColumn();
  return out;
}

clang::SourceLocation ProgramAssembler::expansionBegin(const clang::Decl* decl) const {
  return sm_.getExpansionLoc(decl->getBeginLoc());
}

bool ProgramAssembler::before(clang::SourceLocation a, clang::SourceLocation b) const {
  // Positions in the token stream the parser saw, not where macros are invoked: every token of one
  // expansion has the same expansion location, but a _Pragma in a macro body still comes before the
  // VNODE the same expansion defines.
  return sm_.isBeforeInTranslationUnit(a, b);
}

clang::SourceLocation ProgramAssembler::macroInvocation(clang::SourceLocation loc) const {
  return loc.isMacroID() ? sm_.getExpansionLoc(loc) : clang::SourceLocation();
}

std::string ProgramAssembler::macroName(clang::SourceLocation invocation) const {
  const unsigned length = clang::Lexer::MeasureTokenLength(invocation, sm_, context_.getLangOpts());
  return std::string(sm_.getCharacterData(invocation), length);
}

void ProgramAssembler::assemble(lang::ProgramModel& program) {
  collectPipes(program);
  collectVnodes(program);
  applyDirectives(program);
  classifyVnodes(program);
  connectPipes(program);
  warnAboutCycles(program);
  collectCuda(program);
  if (program.vnodes.empty() && !diags_.engine().hasErrorOccurred())
    diags_.report(sm_.getLocForStartOfFile(sm_.getMainFileID()), Diag::NoVnodes);
}

void ProgramAssembler::collectPipes(lang::ProgramModel& program) {
  clang::PrintingPolicy policy = context_.getPrintingPolicy();
  for (const PipeDecl& pipe : state_.pipes) {
    lang::PipeModel model;
    model.name = pipe.decl->getName().str();
    model.qualifiedName = "::" + pipe.decl->getQualifiedNameAsString();
    model.elementType = pipe.elementType.getAsString(policy);
    if (!pipe.elementType->isDependentType() && !pipe.elementType->isIncompleteType())
      model.elementBytes = static_cast<std::uint64_t>(context_.getTypeSizeInChars(pipe.elementType).getQuantity());
    model.location = toModelLocation(pipe.decl->getLocation());
    program.pipes.push_back(std::move(model));
  }
}

void ProgramAssembler::collectVnodes(lang::ProgramModel& program) {
  for (std::size_t i = 0; i < state_.vnodes.size(); ++i) {
    const VnodeDecl& vnode = state_.vnodes[i];
    int previous = program.findVnode(vnode.name);
    if (previous >= 0) {
      diags_.report(expansionBegin(vnode.decl), Diag::DuplicateVnode) << vnode.name;
      diags_.report(expansionBegin(state_.vnodes[static_cast<std::size_t>(previous)].decl), Diag::NotePreviousVnode)
          << vnode.name;
      continue;
    }
    lang::VnodeModel model;
    model.name = vnode.name;
    model.functionName = "::" + vnode.decl->getQualifiedNameAsString();
    model.location = toModelLocation(vnode.decl->getBeginLoc());
    for (const clang::ParmVarDecl* param : vnode.decl->parameters()) {
      clang::QualType element;
      bool isOutput = false;
      if (!portElementType(param->getType(), element, isOutput)) continue;  // Clang already rejected it
      lang::PortRef port;
      port.pipe = param->getName().str();
      port.direction = isOutput ? lang::PortDirection::Out : lang::PortDirection::In;
      port.pipeIndex = program.findPipe(port.pipe);
      model.ports.push_back(port);
    }
    if (model.ports.empty()) diags_.report(expansionBegin(vnode.decl), Diag::VnodeWithoutPorts) << vnode.name;
    program.vnodes.push_back(std::move(model));
  }
}

void ProgramAssembler::applyDirectives(lang::ProgramModel& program) {
  // Top-level declarations of the main file, in source order, to find what follows each directive.
  std::vector<const clang::Decl*>& decls = state_.topLevelDecls;
  std::vector<clang::SourceLocation> communicationSeen(program.pipes.size());

  for (const ParsedDirective& directive : state_.directives) {
    if (!sm_.isInMainFile(sm_.getExpansionLoc(directive.location))) continue;
    // Inside a function body?
    const clang::Decl* next = nullptr;
    bool insideFunction = false;
    for (const clang::Decl* decl : decls) {
      if (!before(directive.location, decl->getEndLoc())) continue;
      if (before(decl->getBeginLoc(), directive.location)) {
        insideFunction = true;  // the directive lies within this declaration
        break;
      }
      next = decl;
      break;
    }
    if (insideFunction) {
      diags_.report(directive.location, Diag::DirectiveNotAtFileScope);
      continue;
    }
    if (directive.kind == lang::DirectiveKind::Communication) {
      int pipe = program.findPipe(directive.pipe);
      if (pipe < 0) {
        diags_.report(directive.pipeLocation, Diag::CommunicationUnknownPipe) << directive.pipe;
        continue;
      }
      if (communicationSeen[static_cast<std::size_t>(pipe)].isValid()) {
        diags_.report(directive.location, Diag::DuplicateCommunication) << directive.pipe;
        diags_.report(communicationSeen[static_cast<std::size_t>(pipe)], Diag::NotePreviousDirective);
        continue;
      }
      communicationSeen[static_cast<std::size_t>(pipe)] = directive.location;
      lang::PipeModel& model = program.pipes[static_cast<std::size_t>(pipe)];
      model.volume = directive.volume;
      if (directive.order) model.order = *directive.order;
      if (directive.split) model.split = *directive.split;
      if (directive.window) model.window = *directive.window;
      continue;
    }
    // A resource directive applies to the VNODE that immediately follows it.
    const auto* fn = llvm::dyn_cast_or_null<clang::FunctionDecl>(next);
    int vnode = -1;
    if (fn) {
      for (std::size_t i = 0; i < program.vnodes.size(); ++i)
        if (program.vnodes[i].functionName == "::" + fn->getQualifiedNameAsString()) vnode = static_cast<int>(i);
    }
    // Directives and macros: a directive that a macro expansion produces belongs to a VNODE of that
    // expansion, unless the expansion defines none (a macro that is only a directive); a directive
    // before an expansion defining several VNODEs could mean any of them. Either is an error rather
    // than a guess.
    const clang::SourceLocation directiveMacro = macroInvocation(directive.location);
    const clang::SourceLocation nextMacro = next ? macroInvocation(next->getBeginLoc()) : clang::SourceLocation();
    auto vnodesOf = [&](clang::SourceLocation invocation) {
      std::vector<std::string> names;
      for (const VnodeDecl& v : state_.vnodes)
        if (macroInvocation(v.decl->getBeginLoc()) == invocation) names.push_back(v.name);
      return names;
    };
    if (directiveMacro.isValid() && directiveMacro != nextMacro && !vnodesOf(directiveMacro).empty()) {
      diags_.report(directive.location, Diag::DirectiveInMacroNotBeforeItsVnode) << macroName(directiveMacro);
      continue;
    }
    if (nextMacro.isValid() && directiveMacro != nextMacro) {
      const std::vector<std::string> names = vnodesOf(nextMacro);
      if (names.size() > 1) {
        diags_.report(directive.location, Diag::DirectiveBeforeMacroWithSeveralVnodes)
            << macroName(nextMacro) << static_cast<unsigned>(names.size()) << names[0] << names[1];
        continue;
      }
    }
    bool anotherDirectiveFirst = false;
    for (const ParsedDirective& other : state_.directives)
      if (&other != &directive && before(directive.location, other.location) && next && before(other.location, next->getBeginLoc()) &&
          other.kind == lang::DirectiveKind::Resource)
        anotherDirectiveFirst = true;
    if (vnode < 0 || anotherDirectiveFirst) {
      diags_.report(directive.location, Diag::DirectiveNotBeforeVnode);
      continue;
    }
    lang::VnodeModel& model = program.vnodes[static_cast<std::size_t>(vnode)];
    if (directive.resource) {
      model.requirement = *directive.resource;
      model.requirementDeclared = true;
    }
    if (directive.replicas) model.replicas = *directive.replicas;
    if (directive.cost) model.cost = *directive.cost;
    model.memoryBytes = directive.memoryBytes;
  }
}

void ProgramAssembler::classifyVnodes(lang::ProgramModel& program) {
  // A function uses the GPU if it does directly or calls (transitively, within the file) one that does.
  // `witness` keeps where: the direct use, or the call that leads to one.
  llvm::DenseMap<const clang::FunctionDecl*, clang::SourceLocation> witness;
  for (const GpuUse& use : state_.gpuUses) witness.try_emplace(use.function->getCanonicalDecl(), use.location);
  for (bool changed = true; changed;) {
    changed = false;
    for (const CallEdge& call : state_.calls) {
      const clang::FunctionDecl* caller = call.caller->getCanonicalDecl();
      if (witness.count(call.callee) && !witness.count(caller)) {
        witness[caller] = call.location;
        changed = true;
      }
    }
  }
  for (std::size_t i = 0; i < program.vnodes.size(); ++i) {
    lang::VnodeModel& model = program.vnodes[i];
    const clang::FunctionDecl* fn = nullptr;
    for (const VnodeDecl& v : state_.vnodes)
      if (v.name == model.name && !fn) fn = v.decl;
    auto it = fn ? witness.find(fn->getCanonicalDecl()) : witness.end();
    bool usesGpu = it != witness.end();
    if (model.requirementDeclared) {
      if (model.requirement == lang::Requirement::CO && usesGpu) {
        diags_.report(expansionBegin(fn), Diag::CpuVnodeLaunchesKernel) << model.name;
        diags_.report(it->second, Diag::NoteGpuUse);
      }
    } else {
      model.requirement = usesGpu ? lang::Requirement::CG : lang::Requirement::CO;
    }
  }
}

void ProgramAssembler::connectPipes(lang::ProgramModel& program) {
  auto vnodeLocation = [&](int vnode) {
    for (const VnodeDecl& v : state_.vnodes)
      if (v.name == program.vnodes[static_cast<std::size_t>(vnode)].name) return expansionBegin(v.decl);
    return clang::SourceLocation();
  };
  for (std::size_t v = 0; v < program.vnodes.size(); ++v) {
    for (const lang::PortRef& port : program.vnodes[v].ports) {
      if (port.pipeIndex < 0) continue;
      lang::PipeModel& pipe = program.pipes[static_cast<std::size_t>(port.pipeIndex)];
      int& end = port.direction == lang::PortDirection::Out ? pipe.writer : pipe.reader;
      if (end >= 0 && end != static_cast<int>(v)) {
        Diag diag = port.direction == lang::PortDirection::Out ? Diag::PipeTwoWriters : Diag::PipeTwoReaders;
        diags_.report(vnodeLocation(static_cast<int>(v)), diag)
            << pipe.name << program.vnodes[static_cast<std::size_t>(end)].name << program.vnodes[v].name;
        diags_.report(state_.pipes[static_cast<std::size_t>(port.pipeIndex)].decl->getLocation(), Diag::NotePipeDeclared)
            << pipe.name;
        continue;
      }
      end = static_cast<int>(v);
    }
  }
  for (std::size_t p = 0; p < program.pipes.size(); ++p) {
    lang::PipeModel& pipe = program.pipes[p];
    clang::SourceLocation declared = state_.pipes[p].decl->getLocation();
    if (pipe.writer < 0) diags_.report(declared, Diag::PipeWithoutWriter) << pipe.name;
    if (pipe.reader < 0) diags_.report(declared, Diag::PipeWithoutReader) << pipe.name;
    // Any replica counts may meet: the logical-stream rule (dispar_lang/LogicalStream.h) connects them.
  }
}

void ProgramAssembler::warnAboutCycles(const lang::ProgramModel& program) {
  const std::size_t n = program.vnodes.size();
  std::vector<std::vector<int>> successors(n);
  for (const lang::PipeModel& pipe : program.pipes)
    if (pipe.writer >= 0 && pipe.reader >= 0 && pipe.writer != pipe.reader)
      successors[static_cast<std::size_t>(pipe.writer)].push_back(pipe.reader);
  enum class Mark { White, Grey, Black };
  std::vector<Mark> mark(n, Mark::White);
  std::vector<int> stack;
  std::function<bool(int)> visit = [&](int v) -> bool {
    mark[static_cast<std::size_t>(v)] = Mark::Grey;
    stack.push_back(v);
    for (int w : successors[static_cast<std::size_t>(v)]) {
      if (mark[static_cast<std::size_t>(w)] == Mark::Grey) {
        std::string path;
        auto start = std::find(stack.begin(), stack.end(), w);
        for (auto it = start; it != stack.end(); ++it) path += program.vnodes[static_cast<std::size_t>(*it)].name + " -> ";
        path += program.vnodes[static_cast<std::size_t>(w)].name;
        for (const VnodeDecl& decl : state_.vnodes)
          if (decl.name == program.vnodes[static_cast<std::size_t>(w)].name)
            diags_.report(expansionBegin(decl.decl), Diag::GraphCycle) << path;
        return true;
      }
      if (mark[static_cast<std::size_t>(w)] == Mark::White && visit(w)) return true;
    }
    stack.pop_back();
    mark[static_cast<std::size_t>(v)] = Mark::Black;
    return false;
  };
  for (std::size_t v = 0; v < n; ++v)
    if (mark[v] == Mark::White && visit(static_cast<int>(v))) return;  // one warning is enough
}

void ProgramAssembler::collectCuda(lang::ProgramModel& program) {
  for (const clang::FunctionDecl* kernel : state_.kernels)
    program.kernels.push_back(lang::KernelModel{kernel->getNameAsString(), toModelLocation(kernel->getLocation())});
  for (const clang::CUDAKernelCallExpr* launch : state_.launches) {
    lang::LaunchSiteModel site;
    if (const clang::FunctionDecl* callee = launch->getDirectCallee()) site.kernel = callee->getNameAsString();
    site.location = toModelLocation(launch->getBeginLoc());
    program.launches.push_back(std::move(site));
  }
}

}  // namespace dispar::frontend
