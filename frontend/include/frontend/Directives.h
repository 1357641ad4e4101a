// The `#pragma streamap` directives of one translation unit, in source order, as parsed by
// StreamapPragmaHandler. Attaching them to VNODEs and pipes happens once the AST is complete.
#ifndef DISPAR_FRONTEND_DIRECTIVES_H
#define DISPAR_FRONTEND_DIRECTIVES_H

#include "dispar_lang/Directives.h"
#include "dispar_lang/Program.h"

#include "clang/Basic/SourceLocation.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dispar::frontend {

struct ParsedDirective {
  lang::DirectiveKind kind = lang::DirectiveKind::Resource;
  clang::SourceLocation location;  // the directive keyword
  // resource(...)
  std::optional<lang::Requirement> resource;
  std::optional<int> replicas;
  std::string replicasConstant;  // replicas(kName): a file-scope integer constant, resolved after parsing
  clang::SourceLocation replicasLocation;
  std::optional<double> cost;
  std::optional<std::uint64_t> memoryBytes;
  // communication(...)
  std::string pipe;
  clang::SourceLocation pipeLocation;
  std::optional<std::uint64_t> volume;
  std::optional<lang::MergeOrder> order;
  std::optional<lang::SplitMode> split;
  std::optional<unsigned> window;
};

/// Directives in the order the preprocessor saw them, which is source order within the main file.
using DirectiveTable = std::vector<ParsedDirective>;

}  // namespace dispar::frontend

#endif
