#include "dispar_lang/Directives.h"

#include <cctype>
#include <limits>

namespace dispar::lang {

const ClauseSpec* findClause(std::string_view name) {
  for (const ClauseSpec& c : kClauseTable)
    if (c.name == name) return &c;
  return nullptr;
}

const char* clauseArgDescription(ClauseArgKind kind) {
  switch (kind) {
    case ClauseArgKind::ResourceKind: return "'cpu' or 'gpu'";
    case ClauseArgKind::PositiveInt: return "a positive integer";
    case ClauseArgKind::PositiveReal: return "a positive number";
    case ClauseArgKind::ByteSize: return "a byte size such as 4096, 512KiB or 2GiB";
    case ClauseArgKind::MergeOrder: return "'rr' or 'any'";
    case ClauseArgKind::SplitMode:
      return "'rr', 'rr(w0, ...)' with a positive weight per reader replica, 'duplicate' or 'demand'";
    case ClauseArgKind::JoinMode: return "'rr' or 'rr(v0, ...)' with a positive weight per writer replica";
    case ClauseArgKind::Identifier: return "a pipe name";
  }
  return "an argument";
}

namespace {
struct Unit {
  std::string_view suffix;
  std::uint64_t factor;
};
constexpr std::uint64_t kKi = 1024, kK = 1000;
constexpr Unit kUnits[] = {
    {"", 1},    {"B", 1},   {"KiB", kKi},   {"MiB", kKi* kKi},  {"GiB", kKi* kKi* kKi}, {"TiB", kKi* kKi* kKi* kKi},
    {"kB", kK}, {"KB", kK}, {"MB", kK* kK}, {"GB", kK* kK* kK}, {"TB", kK* kK* kK* kK},
};
}  // namespace

std::optional<std::uint64_t> parseByteSize(std::string_view text) {
  std::size_t i = 0;
  std::uint64_t value = 0;
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    unsigned digit = static_cast<unsigned>(text[i] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  std::string_view suffix = text.substr(i);
  for (const Unit& u : kUnits) {
    if (u.suffix != suffix) continue;
    if (value != 0 && u.factor > std::numeric_limits<std::uint64_t>::max() / value) return std::nullopt;
    return value * u.factor;
  }
  return std::nullopt;
}

}  // namespace dispar::lang
