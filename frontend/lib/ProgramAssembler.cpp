#include "ProgramAssembler.h"

#include "ClauseConstants.h"
#include "CodeFeatures.h"
#include "CodeFingerprint.h"
#include "dispar_lang/LogicalStream.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

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

bool ProgramAssembler::withinGraphLimits() {
  bool within = true;
  long long pipes = 0, vnodes = 0;
  for (const PipeDecl& pipe : state_.pipes) {
    const std::string name = pipe.decl->getName().str();
    if (pipe.count > lang::GraphLimits::kMaxFamilyMembers) {
      diags_.report(pipe.decl->getLocation(), Diag::FamilyTooLarge)
          << "pipe" << name << std::to_string(pipe.count) << std::to_string(lang::GraphLimits::kMaxFamilyMembers);
      within = false;
      continue;
    }
    pipes += std::max(pipe.count, 1);
    if (pipes > lang::GraphLimits::kMaxPipes && within) {
      diags_.report(pipe.decl->getLocation(), Diag::GraphTooLarge)
          << "pipe" << name << std::to_string(pipes) << std::to_string(lang::GraphLimits::kMaxPipes);
      within = false;
    }
  }
  for (const VnodeDecl& vnode : state_.vnodes) {
    if (vnode.members > lang::GraphLimits::kMaxFamilyMembers) {
      diags_.report(expansionBegin(vnode.decl), Diag::FamilyTooLarge)
          << "vnode" << vnode.name << std::to_string(vnode.members)
          << std::to_string(lang::GraphLimits::kMaxFamilyMembers);
      within = false;
      continue;
    }
    vnodes += std::max(vnode.members, 1);
    if (vnodes > lang::GraphLimits::kMaxVnodes && within) {
      diags_.report(expansionBegin(vnode.decl), Diag::GraphTooLarge)
          << "vnode" << vnode.name << std::to_string(vnodes) << std::to_string(lang::GraphLimits::kMaxVnodes);
      within = false;
    }
  }
  return within;
}

void ProgramAssembler::assemble(lang::ProgramModel& program) {
  // A graph beyond the limits is reported at its declarations and not expanded: every later check would
  // only repeat the error, after exhausting memory.
  if (!withinGraphLimits()) return;
  collectPipes(program);
  collectVnodes(program);
  checkPipeUses(program);
  applyDirectives(program);
  classifyVnodes(program);
  connectPipes(program);
  checkWeights(program);
  warnAboutReplicaLinks(program);
  warnAboutCycles(program);
  describeCode(program);
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
    if (!pipe.elementType.isNull() && !pipe.elementType->isDependentType() && !pipe.elementType->isIncompleteType())
      model.elementBytes = static_cast<std::uint64_t>(context_.getTypeSizeInChars(pipe.elementType).getQuantity());
    model.location = toModelLocation(pipe.decl->getLocation());
    firstPipeOf_[pipe.decl] = static_cast<int>(program.pipes.size());
    if (pipe.count < 0) {
      program.pipes.push_back(std::move(model));
      pipeDecls_.push_back(pipe.decl);
      continue;
    }
    // A PIPE_ARRAY is its elements, each a pipe of its own: chain[0], chain[1], ...
    for (int k = 0; k < pipe.count; ++k) {
      lang::PipeModel element = model;
      element.name = model.name + "[" + std::to_string(k) + "]";
      element.index = k;
      program.pipes.push_back(std::move(element));
      pipeDecls_.push_back(pipe.decl);
    }
  }
}

namespace {
// A VNODE_ARRAY's index parameter (its function's first); null for a VNODE.
const clang::ParmVarDecl* familyIndex(const VnodeDecl& vnode) {
  return vnode.family ? vnode.decl->getParamDecl(0) : nullptr;
}
}  // namespace

ProgramAssembler::Element ProgramAssembler::element(const clang::VarDecl* var, const clang::Expr* index,
                                                    const clang::ParmVarDecl* indexParam, int member) const {
  Element result;
  auto first = var ? firstPipeOf_.find(var) : firstPipeOf_.end();
  if (first == firstPipeOf_.end()) return result;
  const int count = pipeArraySize(var->getType());
  if ((count < 0) != (index == nullptr)) return result;  // a PIPE subscripted, or a PIPE_ARRAY named whole
  if (count < 0) {
    result.status = Element::Status::Ok;
    result.pipe = first->second;
    return result;
  }
  std::optional<long long> value = evaluateIndex(index, indexParam, member, context_);
  if (!value) {
    result.status = Element::Status::NotConstant;
    return result;
  }
  result.value = *value;
  result.status = *value < 0 || *value >= count ? Element::Status::OutOfRange : Element::Status::Ok;
  if (result.status == Element::Status::Ok) result.pipe = first->second + static_cast<int>(*value);
  return result;
}

void ProgramAssembler::reportOutOfRange(const clang::VarDecl* var, const clang::Expr* index, long long value,
                                        const std::string& vnodeName) {
  diags_.report(index->getBeginLoc(), Diag::PortIndexOutOfRange)
      << std::to_string(value) << var->getName() << pipeArraySize(var->getType()) << vnodeName;
}

std::vector<int> ProgramAssembler::wholeArray(const lang::ProgramModel& program, const clang::Expr* expr) const {
  const auto* ref = expr ? llvm::dyn_cast<clang::DeclRefExpr>(expr->IgnoreParenImpCasts()) : nullptr;
  const auto* var = ref ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
  const auto first = var ? firstPipeOf_.find(var) : firstPipeOf_.end();
  std::vector<int> elements;
  // A plain PIPE (index -1) is one pipe, not an array of them.
  if (first == firstPipeOf_.end() || program.pipes[static_cast<std::size_t>(first->second)].index < 0) return elements;
  for (std::size_t p = static_cast<std::size_t>(first->second); p < pipeDecls_.size() && pipeDecls_[p] == var; ++p)
    elements.push_back(static_cast<int>(p));
  return elements;
}

std::optional<int> ProgramAssembler::resolvePipe(const clang::Expr* expr, const clang::ParmVarDecl* indexParam,
                                                 int member, const std::string& vnodeName) {
  if (!expr) return std::nullopt;
  expr = expr->IgnoreParenImpCasts();
  const clang::Expr* index = nullptr;
  if (const auto* subscript = llvm::dyn_cast<clang::CXXOperatorCallExpr>(expr);
      subscript && subscript->getOperator() == clang::OO_Subscript && subscript->getNumArgs() == 2) {
    index = subscript->getArg(1);
    expr = subscript->getArg(0)->IgnoreParenImpCasts();
  }
  const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(expr);
  const auto* var = ref ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
  const Element found = element(var, index, indexParam, member);
  switch (found.status) {
    case Element::Status::NotAPipe: return std::nullopt;
    case Element::Status::NotConstant:
      // Once per declaration, not per member; its elements' missing ends would only repeat it.
      if (indexErrors_.insert(index).second)
        diags_.report(index->getBeginLoc(), Diag::PortIndexNotConstant)
            << var->getName() << (indexParam ? indexParam->getName() : llvm::StringRef("the VNODE_ARRAY's index"));
      arraysWithIndexErrors_.insert(var);
      return -1;
    case Element::Status::OutOfRange:
      reportOutOfRange(var, index, found.value, vnodeName);
      arraysWithIndexErrors_.insert(var);
      return -1;
    case Element::Status::Ok: break;
  }
  return found.pipe;
}

void ProgramAssembler::collectVnodes(lang::ProgramModel& program) {
  for (std::size_t i = 0; i < state_.vnodes.size(); ++i) {
    const VnodeDecl& vnode = state_.vnodes[i];
    bool duplicate = false;
    for (std::size_t j = 0; j < i && !duplicate; ++j) {
      if (state_.vnodes[j].name != vnode.name) continue;
      diags_.report(expansionBegin(vnode.decl), Diag::DuplicateVnode) << vnode.name;
      diags_.report(expansionBegin(state_.vnodes[j].decl), Diag::NotePreviousVnode) << vnode.name;
      duplicate = true;
    }
    if (duplicate) continue;
    // A VNODE_ARRAY's function takes (const int i, FamilySize<N>, ports...); a VNODE's, its ports.
    const clang::ParmVarDecl* indexParam = familyIndex(vnode);
    if (vnode.members < 1)
      diags_.report(expansionBegin(vnode.decl), Diag::EmptyVnodeArray) << vnode.name << vnode.members;
    for (int member = 0; member < vnode.members; ++member) {
      lang::VnodeModel model;
      model.name = vnode.family ? vnode.name + "[" + std::to_string(member) + "]" : vnode.name;
      model.functionName = "::" + vnode.compiledName;
      if (vnode.family) {
        model.family = vnode.name;
        model.member = member;
      }
      model.location = toModelLocation(vnode.decl->getBeginLoc());
      std::vector<clang::SourceLocation> locations;
      for (const clang::ParmVarDecl* param : vnode.decl->parameters()) {
        std::optional<PortDeclaration> declared = portDeclaration(param);
        if (!declared) continue;
        // Where to report: an element's index expression, which decides it; else the pipe's name.
        clang::SourceLocation at = declared->pipe ? declared->pipe->getBeginLoc() : expansionBegin(vnode.decl);
        if (const auto* element = llvm::dyn_cast_or_null<clang::CXXOperatorCallExpr>(
                declared->pipe ? declared->pipe->IgnoreParenImpCasts() : nullptr);
            element && element->getNumArgs() == 2)
          at = element->getArg(1)->getBeginLoc();
        // A port on pipe model `pipe`; false (reported) when the VNODE already has one.
        auto addPort = [&](int pipe) {
          lang::PortRef port;
          port.pipe = program.pipes[static_cast<std::size_t>(pipe)].name;
          port.direction = declared->isOutput ? lang::PortDirection::Out : lang::PortDirection::In;
          port.pipeIndex = pipe;
          for (const lang::PortRef& other : model.ports)
            if (other.pipeIndex == port.pipeIndex) {
              diags_.report(at, Diag::PortDeclaredTwice) << model.name << port.pipe;
              return false;
            }
          model.ports.push_back(port);
          locations.push_back(at);
          return true;
        };
        // IN(bands) / OUT(bands), a whole PIPE_ARRAY: a port on each of its elements.
        if (const std::vector<int> elements = wholeArray(program, declared->pipe); !elements.empty()) {
          for (int element : elements)
            if (!addPort(element)) break;
          continue;
        }
        std::optional<int> pipe = resolvePipe(declared->pipe, indexParam, member, model.name);
        if (!pipe) {
          diags_.report(at, Diag::PortNotAPipe);
          continue;
        }
        if (*pipe < 0) continue;  // reported
        addPort(*pipe);
      }
      if (model.ports.empty() && member == 0)  // once for a family
        diags_.report(expansionBegin(vnode.decl), Diag::VnodeWithoutPorts) << model.name;
      program.vnodes.push_back(std::move(model));
      declOf_.push_back(i);
      portLocations_.push_back(std::move(locations));
    }
  }
}

namespace {
// The port calls that need an input end, and those that need an output end.
bool readsPort(const std::string& call) {
  return call == "read" || call == "wait_items" || call == "buffered" || call == "peek" || call == "pop";
}
bool writesPort(const std::string& call) {
  return call == "write" || call == "push" || call == "flush" || call == "close";
}
// A port is used one way or the other (the runtime's PortState::useFor says so at run time).
bool messageCall(const std::string& call) { return call == "read" || call == "write"; }
bool itemCall(const std::string& call) {
  return call == "push" || call == "pop" || call == "peek" || call == "wait_items" || call == "buffered" ||
         call == "flush";
}
}  // namespace

void ProgramAssembler::checkPipeUses(const lang::ProgramModel& program) {
  // The first message call and the first item call on each (VNODE, pipe), to catch a port used both ways.
  std::map<std::pair<std::size_t, int>, const PipeUse*> firstMessageUse, firstItemUse;
  std::set<const PipeUse*> reportedMixes;
  for (const PipeUse& use : state_.pipeUses) {
    if (!firstPipeOf_.count(use.pipe)) continue;
    std::vector<std::size_t> members;
    for (std::size_t v = 0; v < program.vnodes.size(); ++v)
      if (use.function && state_.vnodes[declOf_[v]].decl == use.function) members.push_back(v);
    if (members.empty()) {
      diags_.report(use.location, Diag::PipeUsedOutsideVnode) << use.pipe->getName();
      continue;
    }
    if (pipeArraySize(use.pipe->getType()) >= 0 && !use.index) continue;  // the array whole (its size, say)
    for (std::size_t v : members) {
      const lang::VnodeModel& model = program.vnodes[v];
      const VnodeDecl& decl = state_.vnodes[declOf_[v]];
      const Element found = element(use.pipe, use.index, familyIndex(decl), model.member);
      if (found.status == Element::Status::NotConstant) break;  // checked at run time, naming the element
      if (found.status == Element::Status::OutOfRange) {
        reportOutOfRange(use.pipe, use.index, found.value, model.name);
        break;
      }
      if (found.status != Element::Status::Ok) break;
      const int pipe = found.pipe;
      const lang::PortRef* port = nullptr;
      for (const lang::PortRef& p : model.ports)
        if (p.pipeIndex == pipe) port = &p;
      const std::string& pipeName = program.pipes[static_cast<std::size_t>(pipe)].name;
      if (!port) {
        diags_.report(use.location, Diag::PipeUsedWithoutPort) << pipeName << model.name;
        break;  // once per use, for the first member it is wrong in
      }
      const bool isOutput = port->direction == lang::PortDirection::Out;
      if ((readsPort(use.call) && isOutput) || (writesPort(use.call) && !isOutput)) {
        diags_.report(use.location, Diag::PortWrongDirection)
            << model.name << (isOutput ? "reads from" : "writes to") << pipeName << (isOutput ? "OUT" : "IN");
        break;
      }
      const bool messages = messageCall(use.call), items = itemCall(use.call);
      if (!messages && !items) continue;
      auto& mine = messages ? firstMessageUse : firstItemUse;
      const auto& other = messages ? firstItemUse : firstMessageUse;
      const auto key = std::make_pair(v, pipe);
      mine.emplace(key, &use);
      if (auto before = other.find(key); before != other.end() && reportedMixes.insert(&use).second) {
        diags_.report(use.location, Diag::PortMixesMessagesAndItems)
            << model.name << pipeName << (messages ? "message" : "item") << use.call << (messages ? "item" : "message")
            << before->second->call;
        diags_.report(before->second->location, Diag::NotePortFirstUse)
            << (messages ? "item" : "message") << before->second->call;
        break;  // once per use
      }
    }
  }
}

namespace {

// What a clause's value was computed from, for an out-of-range message: "kWidth[i] (i = 1) = 0".
std::string valueSource(const ClauseExpression& expression, const ClauseConstants::Binding* binding,
                        const std::string& value) {
  const std::string bound = binding ? " (" + binding->name + " = " + std::to_string(binding->value) + ")" : "";
  return expression.text + bound + " = " + value;
}

}  // namespace

std::optional<int> ProgramAssembler::positiveConstant(const ClauseExpression& expression, const char* clause,
                                                      const ClauseConstants::Binding* binding) {
  std::string problem;
  const std::optional<long long> value =
      ClauseConstants(state_.topLevelDecls, context_).evaluate(expression, problem, binding);
  if (!value) {
    diags_.report(expression.location, Diag::ClauseNotConstant) << expression.text << clause << problem;
    return std::nullopt;
  }
  if (*value < 1 || *value > lang::kMaxPositiveClause) {
    diags_.report(expression.location, Diag::ClauseOutOfRange)
        << valueSource(expression, binding, std::to_string(*value)) << clause << "a positive integer";
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

std::optional<double> ProgramAssembler::positiveNumber(const ClauseExpression& expression, const char* clause,
                                                       const ClauseConstants::Binding* binding) {
  std::string problem;
  const std::optional<double> value =
      ClauseConstants(state_.topLevelDecls, context_).evaluateNumber(expression, problem, binding);
  if (!value) {
    diags_.report(expression.location, Diag::ClauseNotConstant) << expression.text << clause << problem;
    return std::nullopt;
  }
  if (!std::isfinite(*value) || !(*value > 0)) {
    diags_.report(expression.location, Diag::ClauseOutOfRange)
        << valueSource(expression, binding, ClauseConstants::spell(*value)) << clause << "a positive number";
    return std::nullopt;
  }
  return *value;
}

std::optional<lang::Requirement> ProgramAssembler::requirement(const ClauseExpression& expression,
                                                               const ClauseConstants::Binding* binding) {
  std::string problem;
  const std::optional<std::string> name =
      ClauseConstants(state_.topLevelDecls, context_).evaluateName(expression, {"cpu", "gpu"}, problem, binding);
  if (!name) {
    diags_.report(expression.location, Diag::ClauseNotConstant) << expression.text << "resource" << problem;
    return std::nullopt;
  }
  return *name == "gpu" ? lang::Requirement::CG : lang::Requirement::CO;
}

std::optional<std::vector<int>> ProgramAssembler::weights(const std::vector<ClauseExpression>& arguments,
                                                          const char* clause) {
  if (arguments.empty()) return std::vector<int>{};
  std::string problem;
  std::size_t failed = 0;
  const std::optional<std::vector<ClauseConstants::ListValue>> values =
      ClauseConstants(state_.topLevelDecls, context_).evaluateList(arguments, problem, failed);
  if (!values) {
    diags_.report(arguments[failed].location, Diag::ClauseNotConstant) << arguments[failed].text << clause << problem;
    return std::nullopt;
  }
  std::vector<int> result;
  for (const ClauseConstants::ListValue& weight : *values) {
    if (weight.value < 1 || weight.value > lang::kMaxPositiveClause) {
      const std::string value = std::to_string(weight.value);
      diags_.report(weight.location, Diag::ClauseOutOfRange)
          << (weight.source == value ? value : weight.source + " = " + value) << clause << "a positive integer";
      return std::nullopt;
    }
    result.push_back(static_cast<int>(weight.value));
  }
  return result;
}

void ProgramAssembler::applyDirectives(lang::ProgramModel& program) {
  // Top-level declarations of the main file, in source order, to find what follows each directive.
  std::vector<const clang::Decl*>& decls = state_.topLevelDecls;
  std::vector<clang::SourceLocation> communicationSeen(program.pipes.size());
  weightsLocation_.assign(program.pipes.size(), clang::SourceLocation());
  initialLocation_.assign(program.pipes.size(), clang::SourceLocation());

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
      // A pipe, or a pipe array: then every element.
      std::vector<std::size_t> pipes;
      for (std::size_t p = 0; p < program.pipes.size(); ++p)
        if (pipeDecls_[p]->getName() == directive.pipe) pipes.push_back(p);
      if (pipes.empty()) {
        diags_.report(directive.pipeLocation, Diag::CommunicationUnknownPipe) << directive.pipe;
        continue;
      }
      if (communicationSeen[pipes[0]].isValid()) {
        diags_.report(directive.location, Diag::DuplicateCommunication) << directive.pipe;
        diags_.report(communicationSeen[pipes[0]], Diag::NotePreviousDirective);
        continue;
      }
      std::optional<unsigned> window = directive.window;
      if (directive.windowExpression)
        if (const std::optional<int> value = positiveConstant(*directive.windowExpression, "window"))
          window = static_cast<unsigned>(*value);
      std::optional<int> initial = directive.initial;
      if (directive.initialExpression) initial = positiveConstant(*directive.initialExpression, "initial");
      const std::optional<std::vector<int>> splitWeights = weights(directive.splitWeights, "split");
      const std::optional<std::vector<int>> joinWeights = weights(directive.joinWeights, "join");
      for (std::size_t pipe : pipes) {
        communicationSeen[pipe] = directive.location;
        weightsLocation_[pipe] = directive.weightsLocation;
        initialLocation_[pipe] = directive.initialLocation;
        lang::PipeModel& model = program.pipes[pipe];
        model.volume = directive.volume;
        if (directive.order) model.order = *directive.order;
        if (directive.split) model.split = *directive.split;
        model.splitDeclared = directive.split.has_value();
        if (splitWeights) model.splitWeights = *splitWeights;
        if (joinWeights) model.joinWeights = *joinWeights;
        if (window) model.window = *window;
        if (initial) model.initial = *initial;
      }
      continue;
    }
    // A resource directive applies to the VNODE that immediately follows it (to every member of a
    // VNODE_ARRAY).
    const auto* fn = llvm::dyn_cast_or_null<clang::FunctionDecl>(next);
    std::vector<std::size_t> targets;
    for (std::size_t i = 0; fn && i < program.vnodes.size(); ++i)
      if (state_.vnodes[declOf_[i]].decl == fn) targets.push_back(i);
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
      if (&other != &directive && before(directive.location, other.location) && next &&
          before(other.location, next->getBeginLoc()) && other.kind == lang::DirectiveKind::Resource)
        anotherDirectiveFirst = true;
    if (targets.empty() || anotherDirectiveFirst) {
      diags_.report(directive.location, Diag::DirectiveNotBeforeVnode);
      continue;
    }
    for (std::size_t target : targets) {
      lang::VnodeModel& model = program.vnodes[target];
      // Expressions are evaluated for each member of a VNODE_ARRAY, `i` its index: replicas(kWidth[i]),
      // resource(i == 0 ? gpu : cpu), cost(kCost[i]). A wrong one is reported once, for the first member.
      const clang::ParmVarDecl* index = familyIndex(state_.vnodes[declOf_[target]]);
      const ClauseConstants::Binding member{index ? index->getName().str() : std::string(), model.member};
      const ClauseConstants::Binding* binding = index ? &member : nullptr;
      std::optional<int> replicas = directive.replicas;
      if (directive.replicasExpression &&
          !(replicas = positiveConstant(*directive.replicasExpression, "replicas", binding)))
        break;
      std::optional<lang::Requirement> resource = directive.resource;
      if (directive.resourceExpression && !(resource = requirement(*directive.resourceExpression, binding))) break;
      std::optional<double> cost = directive.cost;
      if (directive.costExpression && !(cost = positiveNumber(*directive.costExpression, "cost", binding))) break;
      if (resource) {
        model.requirement = *resource;
        model.requirementDeclared = true;
      }
      if (replicas) model.replicas = *replicas;
      if (cost) {
        model.cost = *cost;
        model.costDeclared = true;
      }
      model.memoryBytes = directive.memoryBytes;
    }
  }
}

namespace {

// The functions that make one of `uses` directly or call (transitively, within the file) one that does,
// each with where: the direct use, or the call that leads to one.
llvm::DenseMap<const clang::FunctionDecl*, clang::SourceLocation> usersOf(const std::vector<GpuUse>& uses,
                                                                          const std::vector<CallEdge>& calls) {
  llvm::DenseMap<const clang::FunctionDecl*, clang::SourceLocation> witness;
  for (const GpuUse& use : uses) witness.try_emplace(use.function->getCanonicalDecl(), use.location);
  for (bool changed = true; changed;) {
    changed = false;
    for (const CallEdge& call : calls) {
      const clang::FunctionDecl* caller = call.caller->getCanonicalDecl();
      if (witness.count(call.callee) && !witness.count(caller)) {
        witness[caller] = call.location;
        changed = true;
      }
    }
  }
  return witness;
}

}  // namespace

void ProgramAssembler::classifyVnodes(lang::ProgramModel& program) {
  const auto witness = usersOf(state_.gpuUses, state_.calls);
  const auto splitters = usersOf(state_.splitLoops, state_.calls);
  for (std::size_t i = 0; i < program.vnodes.size(); ++i) {
    lang::VnodeModel& model = program.vnodes[i];
    const clang::FunctionDecl* fn = state_.vnodes[declOf_[i]].decl;
    auto it = fn ? witness.find(fn->getCanonicalDecl()) : witness.end();
    bool usesGpu = it != witness.end();
    model.usesNodeCores = fn && splitters.count(fn->getCanonicalDecl());
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
  for (std::size_t v = 0; v < program.vnodes.size(); ++v) {
    for (std::size_t portIndex = 0; portIndex < program.vnodes[v].ports.size(); ++portIndex) {
      const lang::PortRef& port = program.vnodes[v].ports[portIndex];
      if (port.pipeIndex < 0) continue;
      lang::PipeModel& pipe = program.pipes[static_cast<std::size_t>(port.pipeIndex)];
      const bool out = port.direction == lang::PortDirection::Out;
      const int other = out ? pipe.writer : pipe.readers.empty() ? -1 : pipe.readers.back();
      if (other == static_cast<int>(v)) continue;
      // Several reader VNODEs share the stream as the pipe's split clause says (duplicate or dealt).
      if (other >= 0 && (out || !pipe.splitDeclared)) {
        // An element is reported at its index expression, which decides it; a pipe at the VNODE.
        const clang::SourceLocation at =
            pipe.index >= 0 ? portLocations_[v][portIndex] : expansionBegin(state_.vnodes[declOf_[v]].decl);
        diags_.report(at, out ? Diag::PipeTwoWriters : Diag::PipeTwoReaders)
            << pipe.name << program.vnodes[static_cast<std::size_t>(other)].name << program.vnodes[v].name;
        diags_.report(pipeDecls_[static_cast<std::size_t>(port.pipeIndex)]->getLocation(), Diag::NotePipeDeclared)
            << pipe.name;
        continue;
      }
      if (out)
        pipe.writer = static_cast<int>(v);
      else
        pipe.readers.push_back(static_cast<int>(v));
    }
  }
  for (std::size_t p = 0; p < program.pipes.size(); ++p) {
    lang::PipeModel& pipe = program.pipes[p];
    clang::SourceLocation declared = pipeDecls_[p]->getLocation();
    if (arraysWithIndexErrors_.count(pipeDecls_[p])) continue;  // its ends are unknown, not missing
    if (pipe.writer < 0) diags_.report(declared, Diag::PipeWithoutWriter) << pipe.name;
    if (pipe.readers.empty()) diags_.report(declared, Diag::PipeWithoutReader) << pipe.name;
    // Any replica counts may meet: the logical-stream rule (dispar_lang/LogicalStream.h) connects them.
  }
}

void ProgramAssembler::checkWeights(lang::ProgramModel& program) {
  for (std::size_t p = 0; p < program.pipes.size(); ++p) {
    lang::PipeModel& pipe = program.pipes[p];
    if (pipe.writer < 0 || pipe.readers.empty()) continue;
    if (!pipe.splitWeights.empty() || !pipe.joinWeights.empty()) {
      const std::string problem = lang::logicalStream(program, pipe).check();
      if (!problem.empty()) {
        diags_.report(weightsLocation_[p], Diag::PipeWeightsMismatch) << pipe.name << problem;
        pipe.splitWeights.clear();  // reported; later checks see the pipe unweighted
        pipe.joinWeights.clear();
      }
    }
    if (const std::string problem = lang::logicalStream(program, pipe).checkInitial(pipe.initial); !problem.empty())
      diags_.report(initialLocation_[p], Diag::PipeWeightsMismatch) << pipe.name << problem;
  }
}

void ProgramAssembler::warnAboutReplicaLinks(const lang::ProgramModel& program) {
  // split(rr) links writer replica i to the readers i, i + K, i + 2K... (mod M): M / gcd(K, M) of them.
  // Counts that share no factor link every writer to every reader, K x M links, each with its own
  // communicator, end-of-stream marker and place in a reader's rotation (docs/runtime.md). Warn when
  // that is more than this many times the links of counts that divide one another (max(K, M)).
  constexpr long long kLinksPerReplicaToWarn = 8;
  for (std::size_t p = 0; p < program.pipes.size(); ++p) {
    const lang::PipeModel& pipe = program.pipes[p];
    if (pipe.writer < 0 || pipe.readers.size() != 1 || pipe.split != lang::SplitMode::RoundRobin) continue;
    const lang::VnodeModel& writer = program.vnodes[static_cast<std::size_t>(pipe.writer)];
    const lang::VnodeModel& reader = program.vnodes[static_cast<std::size_t>(pipe.readers[0])];
    const long long links = lang::logicalStream(program, pipe).linkCount();
    if (links <= kLinksPerReplicaToWarn * std::max(writer.replicas, reader.replicas)) continue;
    diags_.report(pipeDecls_[p]->getLocation(), Diag::ManyReplicaLinks)
        << pipe.name << writer.replicas << writer.name << static_cast<int>(links / writer.replicas) << reader.replicas
        << reader.name << std::to_string(links);
  }
}

void ProgramAssembler::warnAboutCycles(const lang::ProgramModel& program) {
  const std::size_t n = program.vnodes.size();
  std::vector<std::vector<int>> successors(n);
  for (const lang::PipeModel& pipe : program.pipes)
    // A pipe that starts with initial(N) elements primes every cycle through it: its reader has them to read
    // before anything waits, so those cycles are not reported.
    for (int reader : pipe.readers)
      if (pipe.writer >= 0 && pipe.writer != reader && pipe.initial == 0)
        successors[static_cast<std::size_t>(pipe.writer)].push_back(reader);
  // Depth-first, with an explicit stack: a VNODE_ARRAY chain of 60,000 members would overflow the call stack
  // of a recursive walk. Each frame is a vertex and the next of its successors to look at.
  enum class Mark { White, Grey, Black };
  std::vector<Mark> mark(n, Mark::White);
  std::vector<std::pair<int, std::size_t>> stack;
  for (std::size_t root = 0; root < n; ++root) {
    if (mark[root] != Mark::White) continue;
    mark[root] = Mark::Grey;
    stack.emplace_back(static_cast<int>(root), 0);
    while (!stack.empty()) {
      auto& [v, next] = stack.back();
      const std::vector<int>& out = successors[static_cast<std::size_t>(v)];
      if (next == out.size()) {
        mark[static_cast<std::size_t>(v)] = Mark::Black;
        stack.pop_back();
        continue;
      }
      const int w = out[next++];
      if (mark[static_cast<std::size_t>(w)] == Mark::White) {
        mark[static_cast<std::size_t>(w)] = Mark::Grey;
        stack.emplace_back(w, 0);
      } else if (mark[static_cast<std::size_t>(w)] == Mark::Grey) {
        // The cycle's vnodes, the middle of a long one elided: a ring of a VNODE_ARRAY's 65,536 members
        // would otherwise be a message of a megabyte.
        constexpr std::size_t kShownAtEachEnd = 4;
        const auto start =
            std::find_if(stack.begin(), stack.end(), [w](const auto& frame) { return frame.first == w; });
        const std::size_t length = static_cast<std::size_t>(stack.end() - start);
        std::string path;
        for (std::size_t k = 0; k < length; ++k) {
          if (length > 2 * kShownAtEachEnd && k == kShownAtEachEnd) {
            path += "... (" + std::to_string(length - 2 * kShownAtEachEnd) + " more) -> ";
            k = length - kShownAtEachEnd - 1;
            continue;
          }
          path += program.vnodes[static_cast<std::size_t>(start[static_cast<std::ptrdiff_t>(k)].first)].name + " -> ";
        }
        path += program.vnodes[static_cast<std::size_t>(w)].name;
        diags_.report(expansionBegin(state_.vnodes[declOf_[static_cast<std::size_t>(w)]].decl), Diag::GraphCycle)
            << path;
        return;  // one warning is enough
      }
    }
  }
}

void ProgramAssembler::describeCode(lang::ProgramModel& program) {
  // Members of a VNODE_ARRAY share their function: both classes compute each function's once.
  CodeFingerprint fingerprints(context_, state_.tokens);
  CodeFeatureCounter counter(context_);
  for (std::size_t v = 0; v < program.vnodes.size(); ++v) {
    lang::VnodeModel& model = program.vnodes[v];
    const clang::FunctionDecl* fn = state_.vnodes[declOf_[v]].decl;
    double bytesWritten = 0;
    for (const lang::PortRef& port : model.ports) {
      if (port.direction != lang::PortDirection::Out || port.pipeIndex < 0) continue;
      const lang::PipeModel& pipe = program.pipes[static_cast<std::size_t>(port.pipeIndex)];
      bytesWritten += static_cast<double>(pipe.volume ? *pipe.volume : pipe.elementBytes);
    }
    model.fingerprint = fingerprints.of(fn);
    model.features = counter.features(fn, bytesWritten);
  }
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
