// The `#pragma streamap` directives and their clauses, as data. The frontend's pragma handler parses
// against this table; docs/language.md lists the same table.
#ifndef DISPAR_LANG_DIRECTIVES_H
#define DISPAR_LANG_DIRECTIVES_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace dispar::lang {

enum class DirectiveKind { Resource, Communication };

/// What a clause's parenthesised argument must be.
enum class ClauseArgKind {
  ResourceKind,  // cpu | gpu
  PositiveInt,   // 1, 2, ...
  PositiveReal,  // 0.5, 2, 1e3
  ByteSize,      // 4096, 512KiB, 2GiB, 1MB
  MergeOrder,    // rr | any
  SplitMode,     // rr | rr(w0, ..., wM-1) | duplicate
  JoinMode,      // rr | rr(v0, ..., vK-1)
  Identifier,    // a pipe name
};

/// The largest integer a PositiveInt clause or a weight takes (replicas(K), window(N)): far beyond any cluster, it
/// guards against typos.
inline constexpr long long kMaxPositiveClause = 1 << 20;

struct ClauseSpec {
  DirectiveKind directive;
  std::string_view name;
  ClauseArgKind arg;
  bool leading;  // the directive's first clause, e.g. resource(...) / communication(...)
  std::string_view summary;
};

inline constexpr ClauseSpec kClauseTable[] = {
    {DirectiveKind::Resource, "resource", ClauseArgKind::ResourceKind, true,
     "the computing resource the VNODE needs: cpu (CO) or gpu (CG)"},
    {DirectiveKind::Resource, "replicas", ClauseArgKind::PositiveInt, false,
     "number of data-parallel instances (default 1)"},
    {DirectiveKind::Resource, "cost", ClauseArgKind::PositiveReal, false,
     "relative work of one instance, for the mapper (default 1)"},
    {DirectiveKind::Resource, "memory", ClauseArgKind::ByteSize, false,
     "memory one instance needs on its device, e.g. 512MiB"},
    {DirectiveKind::Communication, "communication", ClauseArgKind::Identifier, true,
     "the pipe the directive describes"},
    {DirectiveKind::Communication, "volume", ClauseArgKind::ByteSize, false, "bytes per message, for the mapper"},
    {DirectiveKind::Communication, "order", ClauseArgKind::MergeOrder, false,
     "the order a reader replica receives its messages in: rr (default, the logical order) or any"},
    {DirectiveKind::Communication, "split", ClauseArgKind::SplitMode, false,
     "where a message goes: rr (default, message n to reader replica n mod M), rr(w0, ..., wM-1) (w0 messages to "
     "reader replica 0, then w1 to replica 1, ...) or duplicate (to every reader replica)"},
    {DirectiveKind::Communication, "join", ClauseArgKind::JoinMode, false,
     "which writer replica produces a message: rr (default, message n from writer replica n mod K) or "
     "rr(v0, ..., vK-1) (v0 messages from writer replica 0, then v1 from replica 1, ...)"},
    {DirectiveKind::Communication, "window", ClauseArgKind::PositiveInt, false,
     "messages in flight before the writer waits (default 64 or DISPAR_PIPE_WINDOW)"},
    {DirectiveKind::Communication, "initial", ClauseArgKind::PositiveInt, false,
     "the pipe starts with this many value-initialised elements (zeros), one message or item each, before its "
     "writer writes: a feedback loop's priming (StreamIt's enqueue)"},
};

const ClauseSpec* findClause(std::string_view name);
const char* clauseArgDescription(ClauseArgKind kind);  // e.g. "a positive integer"

/// Parses a byte count: a non-negative integer with an optional unit, "4096", "512KiB", "2GiB",
/// "1MB". KiB/MiB/GiB/TiB are powers of 1024, kB/KB/MB/GB/TB powers of 1000, B is bytes. nullopt on
/// failure or overflow.
std::optional<std::uint64_t> parseByteSize(std::string_view text);

}  // namespace dispar::lang

#endif
