#include "StreamapPragmaHandler.h"

#include "clang/Lex/Preprocessor.h"
#include "llvm/ADT/SmallString.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>

namespace dispar::frontend {

namespace {

using lang::ClauseArgKind;
using lang::ClauseSpec;
using lang::DirectiveKind;

const char* directiveName(DirectiveKind kind) { return kind == DirectiveKind::Resource ? "resource" : "communication"; }

// The tokens of one pragma line, read once (unexpanded, up to eod) so the parser can look ahead.
class PragmaTokens {
 public:
  PragmaTokens(clang::Preprocessor& pp, const clang::Token& first) : pp_(pp), eodLocation_(first.getLocation()) {
    clang::Token tok;
    for (pp.LexUnexpandedToken(tok); tok.isNot(clang::tok::eod); pp.LexUnexpandedToken(tok)) tokens_.push_back(tok);
    eodLocation_ = tok.getLocation();
  }
  bool atEnd() const { return pos_ >= tokens_.size(); }
  const clang::Token& peek() const { return tokens_[pos_]; }
  const clang::Token& next() { return tokens_[pos_++]; }
  clang::SourceLocation location() const { return atEnd() ? eodLocation_ : peek().getLocation(); }
  std::string spelling(const clang::Token& tok) const { return pp_.getSpelling(tok); }

 private:
  clang::Preprocessor& pp_;
  std::vector<clang::Token> tokens_;
  std::size_t pos_ = 0;
  clang::SourceLocation eodLocation_;
};

class DirectiveParser {
 public:
  DirectiveParser(PragmaTokens& tokens, DisparDiagnostics& diags) : tokens_(tokens), diags_(diags) {}

  // Returns false after reporting the first error.
  bool parse(ParsedDirective& out) {
    if (tokens_.atEnd() || !tokens_.peek().is(clang::tok::identifier)) {
      diags_.report(tokens_.location(), Diag::MissingDirective);
      return false;
    }
    const clang::Token& keyword = tokens_.peek();
    std::string name = tokens_.spelling(keyword);
    const ClauseSpec* leading = lang::findClause(name);
    if (!leading || !leading->leading) {
      diags_.report(keyword.getLocation(), Diag::UnknownDirective) << name;
      return false;
    }
    out.kind = leading->directive;
    out.location = keyword.getLocation();
    std::set<std::string> seen;
    while (!tokens_.atEnd()) {
      if (tokens_.peek().is(clang::tok::comma) && !seen.empty()) {
        tokens_.next();
        continue;
      }
      if (!tokens_.peek().is(clang::tok::identifier)) {
        diags_.report(tokens_.location(), Diag::ExtraTokensAfterDirective) << tokens_.spelling(tokens_.peek());
        return false;
      }
      const clang::Token& clauseToken = tokens_.next();
      std::string clauseName = tokens_.spelling(clauseToken);
      const ClauseSpec* spec = lang::findClause(clauseName);
      if (!spec) {
        diags_.report(clauseToken.getLocation(), Diag::UnknownClause) << clauseName << directiveName(out.kind);
        return false;
      }
      if (spec->directive != out.kind || (spec->leading && !seen.empty())) {
        diags_.report(clauseToken.getLocation(), Diag::ClauseNotAllowed) << clauseName << directiveName(out.kind);
        return false;
      }
      if (!seen.insert(clauseName).second) {
        diags_.report(clauseToken.getLocation(), Diag::DuplicateClause) << clauseName;
        return false;
      }
      if (!parseClause(*spec, out)) return false;
    }
    return true;
  }

 private:
  struct ArgumentToken {
    std::string spelling;
    clang::SourceLocation location;
    bool spaceBefore;
  };

  // Reads `( tokens )`, parentheses inside balanced, and returns the argument's tokens and its spelling
  // (tokens joined by single spaces where the source has space).
  bool readArgument(const ClauseSpec& spec, std::vector<ArgumentToken>& argument, std::string& text,
                    clang::SourceLocation& location) {
    if (tokens_.atEnd() || !tokens_.peek().is(clang::tok::l_paren)) {
      diags_.report(tokens_.location(), Diag::ExpectedClauseParen) << std::string(spec.name);
      return false;
    }
    tokens_.next();
    location = tokens_.location();
    int depth = 0;
    while (!tokens_.atEnd() && !(depth == 0 && tokens_.peek().is(clang::tok::r_paren))) {
      const clang::Token& tok = tokens_.next();
      if (tok.is(clang::tok::l_paren)) ++depth;
      if (tok.is(clang::tok::r_paren)) --depth;
      if (!argument.empty() && tok.hasLeadingSpace()) text += ' ';
      argument.push_back({tokens_.spelling(tok), tok.getLocation(), tok.hasLeadingSpace()});
      text += argument.back().spelling;
    }
    if (tokens_.atEnd()) {
      diags_.report(tokens_.location(), Diag::ExpectedClauseClose) << std::string(spec.name);
      return false;
    }
    tokens_.next();
    return true;
  }

  static ClauseExpression expressionOf(std::vector<ArgumentToken>::const_iterator first,
                                       std::vector<ArgumentToken>::const_iterator last) {
    ClauseExpression expression;
    expression.location = first->location;
    for (auto it = first; it != last; ++it) {
      if (!expression.tokens.empty() && it->spaceBefore) expression.text += ' ';
      expression.tokens.push_back(it->spelling);
      expression.text += it->spelling;
    }
    return expression;
  }

  // `rr` (no weights) or `rr(e0, e1, ...)`; false when the argument is neither.
  static bool parseRoundRobin(const std::vector<ArgumentToken>& argument, std::vector<ClauseExpression>& weights) {
    if (argument.empty() || argument[0].spelling != "rr") return false;
    if (argument.size() == 1) return true;
    if (argument.size() < 4 || argument[1].spelling != "(" || argument.back().spelling != ")") return false;
    int depth = 0;
    auto start = argument.begin() + 2;
    for (auto it = start; it != argument.end() - 1; ++it) {
      if (it->spelling == "(" || it->spelling == "[") ++depth;
      if (it->spelling == ")" || it->spelling == "]") --depth;
      if (depth == 0 && it->spelling == ",") {
        if (it == start) return false;
        weights.push_back(expressionOf(start, it));
        start = it + 1;
      }
    }
    if (start == argument.end() - 1) return false;
    weights.push_back(expressionOf(start, argument.end() - 1));
    return true;
  }

  bool bad(clang::SourceLocation loc, const std::string& text, const ClauseSpec& spec) {
    diags_.report(loc, Diag::BadClauseArgument)
        << text << std::string(spec.name) << lang::clauseArgDescription(spec.arg);
    return false;
  }
  bool outOfRange(clang::SourceLocation loc, const std::string& text, const ClauseSpec& spec) {
    diags_.report(loc, Diag::ClauseOutOfRange)
        << text << std::string(spec.name) << lang::clauseArgDescription(spec.arg);
    return false;
  }

  static bool isInteger(const std::string& text) {
    std::size_t start = (!text.empty() && text[0] == '-') ? 1 : 0;
    if (start == text.size()) return false;
    for (std::size_t i = start; i < text.size(); ++i)
      if (text[i] < '0' || text[i] > '9') return false;
    return true;
  }

  static bool isIdentifier(const std::string& text) {
    bool identifier = !text.empty() && (std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_');
    for (char c : text) identifier = identifier && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    return identifier;
  }

  bool parseClause(const ClauseSpec& spec, ParsedDirective& out) {
    std::vector<ArgumentToken> argument;
    std::string text;
    clang::SourceLocation loc;
    if (!readArgument(spec, argument, text, loc)) return false;
    if (spec.name == "initial") out.initialLocation = loc;
    if (text.empty()) return bad(loc, text, spec);
    switch (spec.arg) {
      case ClauseArgKind::ResourceKind:
        if (text == "cpu")
          out.resource = lang::Requirement::CO;
        else if (text == "gpu")
          out.resource = lang::Requirement::CG;
        else if (argument.size() > 1)  // resource(i == 0 ? gpu : cpu), resolved per member
          out.resourceExpression = expressionOf(argument.begin(), argument.end());
        else
          return bad(loc, text, spec);
        return true;
      case ClauseArgKind::PositiveInt: {
        // replicas(kBands - 1), initial(kDelay), window(2 * kDelay): an expression of file-scope constants,
        // evaluated once the AST is complete.
        const bool number = !text.empty() && std::isdigit(static_cast<unsigned char>(text[0]));
        if (!isInteger(text) && !(argument.size() == 1 && number)) {
          (spec.name == "replicas"  ? out.replicasExpression
           : spec.name == "initial" ? out.initialExpression
                                    : out.windowExpression) = expressionOf(argument.begin(), argument.end());
          return true;
        }
        if (!isInteger(text)) return bad(loc, text, spec);
        errno = 0;
        long long value = std::strtoll(text.c_str(), nullptr, 10);
        if (errno == ERANGE || value < 1 || value > lang::kMaxPositiveClause) return outOfRange(loc, text, spec);
        if (spec.name == "replicas")
          out.replicas = static_cast<int>(value);
        else if (spec.name == "initial")
          out.initial = static_cast<int>(value);
        else
          out.window = static_cast<unsigned>(value);
        return true;
      }
      case ClauseArgKind::PositiveReal: {
        char* end = nullptr;
        errno = 0;
        double value = std::strtod(text.c_str(), &end);
        if (end != text.c_str() + text.size() || text.find_first_of("xXpP") != std::string::npos) {
          if (argument.size() == 1 && !isIdentifier(text)) return bad(loc, text, spec);
          out.costExpression = expressionOf(argument.begin(), argument.end());  // cost(kCost[i]): resolved later
          return true;
        }
        if (errno == ERANGE || !std::isfinite(value) || !(value > 0)) return outOfRange(loc, text, spec);
        out.cost = value;
        return true;
      }
      case ClauseArgKind::ByteSize: {
        if (!text.empty() && text[0] == '-') return outOfRange(loc, text, spec);
        std::optional<std::uint64_t> bytes = lang::parseByteSize(text);
        if (!bytes) return bad(loc, text, spec);
        if (spec.name == "memory")
          out.memoryBytes = bytes;
        else
          out.volume = bytes;
        return true;
      }
      case ClauseArgKind::MergeOrder:
        if (text == "rr")
          out.order = lang::MergeOrder::RoundRobin;
        else if (text == "any")
          out.order = lang::MergeOrder::Any;
        else
          return bad(loc, text, spec);
        return true;
      case ClauseArgKind::SplitMode:
        if (text == "duplicate") {
          out.split = lang::SplitMode::Duplicate;
          return true;
        }
        if (text == "demand") {
          out.split = lang::SplitMode::Demand;
          return true;
        }
        if (!parseRoundRobin(argument, out.splitWeights)) return bad(loc, text, spec);
        out.split = lang::SplitMode::RoundRobin;
        if (!out.splitWeights.empty() && out.weightsLocation.isInvalid()) out.weightsLocation = loc;
        return true;
      case ClauseArgKind::JoinMode:
        if (!parseRoundRobin(argument, out.joinWeights)) return bad(loc, text, spec);
        if (!out.joinWeights.empty() && out.weightsLocation.isInvalid()) out.weightsLocation = loc;
        return true;
      case ClauseArgKind::Identifier: {
        if (!isIdentifier(text)) return bad(loc, text, spec);
        out.pipe = text;
        out.pipeLocation = loc;
        return true;
      }
    }
    return bad(loc, text, spec);
  }

  PragmaTokens& tokens_;
  DisparDiagnostics& diags_;
};

}  // namespace

void StreamapPragmaHandler::HandlePragma(clang::Preprocessor& pp, clang::PragmaIntroducer, clang::Token& firstToken) {
  PragmaTokens tokens(pp, firstToken);
  ParsedDirective directive;
  directive.location = firstToken.getLocation();
  DirectiveParser parser(tokens, diags_);
  if (parser.parse(directive)) table_.push_back(std::move(directive));
}

}  // namespace dispar::frontend
