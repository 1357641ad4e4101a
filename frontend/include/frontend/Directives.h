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

/// An integer argument that is not a literal (replicas(kBands - 1), a weight of rr(...)): its tokens,
/// evaluated once the AST is complete (ClauseConstants).
struct ClauseExpression {
  std::vector<std::string> tokens;  // spellings
  std::string text;                 // as written, for messages
  clang::SourceLocation location;
};

struct ParsedDirective {
  lang::DirectiveKind kind = lang::DirectiveKind::Resource;
  clang::SourceLocation location;  // the directive keyword
  // resource(...)
  // An argument that is not a literal is kept as an expression, resolved after parsing and, before a
  // VNODE_ARRAY, for each member: replicas(kBands - 1), resource(i == 0 ? gpu : cpu), cost(kCost[i]).
  std::optional<lang::Requirement> resource;
  std::optional<ClauseExpression> resourceExpression;
  std::optional<int> replicas;
  std::optional<ClauseExpression> replicasExpression;
  std::optional<double> cost;
  std::optional<ClauseExpression> costExpression;
  std::optional<std::uint64_t> memoryBytes;
  // communication(...)
  std::string pipe;
  clang::SourceLocation pipeLocation;
  std::optional<std::uint64_t> volume;
  std::optional<lang::MergeOrder> order;
  std::optional<lang::SplitMode> split;
  std::vector<ClauseExpression> splitWeights;  // split(rr(w0, ...)); empty for split(rr)
  std::vector<ClauseExpression> joinWeights;   // join(rr(v0, ...)); empty for join(rr) or no join
  clang::SourceLocation weightsLocation;       // the first weighted clause's argument
  std::optional<unsigned> window;
  std::optional<ClauseExpression> windowExpression;   // window(2 * kDelay): resolved after parsing
  std::optional<int> initial;                         // initial(N)
  std::optional<ClauseExpression> initialExpression;  // initial(kDelay - 1): resolved after parsing
  clang::SourceLocation initialLocation;              // initial(...)'s argument
};

/// Directives in the order the preprocessor saw them, which is source order within the main file.
using DirectiveTable = std::vector<ParsedDirective>;

}  // namespace dispar::frontend

#endif
