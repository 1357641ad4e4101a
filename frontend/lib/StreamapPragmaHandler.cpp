#include "StreamapPragmaHandler.h"

#include "clang/Lex/Preprocessor.h"
#include "llvm/ADT/SmallString.h"

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
  // Reads `( tokens )` and returns the argument's spelling, tokens joined by single spaces.
  bool readArgument(const ClauseSpec& spec, std::string& text, clang::SourceLocation& location) {
    if (tokens_.atEnd() || !tokens_.peek().is(clang::tok::l_paren)) {
      diags_.report(tokens_.location(), Diag::ExpectedClauseParen) << std::string(spec.name);
      return false;
    }
    tokens_.next();
    location = tokens_.location();
    bool first = true;
    while (!tokens_.atEnd() && !tokens_.peek().is(clang::tok::r_paren)) {
      const clang::Token& tok = tokens_.next();
      if (!first && tok.hasLeadingSpace()) text += ' ';
      text += tokens_.spelling(tok);
      first = false;
    }
    if (tokens_.atEnd()) {
      diags_.report(tokens_.location(), Diag::ExpectedClauseClose) << std::string(spec.name);
      return false;
    }
    tokens_.next();
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
    std::string text;
    clang::SourceLocation loc;
    if (!readArgument(spec, text, loc)) return false;
    if (text.empty()) return bad(loc, text, spec);
    switch (spec.arg) {
      case ClauseArgKind::ResourceKind:
        if (text == "cpu")
          out.resource = lang::Requirement::CO;
        else if (text == "gpu")
          out.resource = lang::Requirement::CG;
        else
          return bad(loc, text, spec);
        return true;
      case ClauseArgKind::PositiveInt: {
        // replicas(kBands): a file-scope constant, evaluated once the AST is complete.
        if (spec.name == "replicas" && isIdentifier(text)) {
          out.replicasConstant = text;
          out.replicasLocation = loc;
          return true;
        }
        if (!isInteger(text)) return bad(loc, text, spec);
        errno = 0;
        long long value = std::strtoll(text.c_str(), nullptr, 10);
        if (errno == ERANGE || value < 1 || value > lang::kMaxPositiveClause) return outOfRange(loc, text, spec);
        if (spec.name == "replicas")
          out.replicas = static_cast<int>(value);
        else
          out.window = static_cast<unsigned>(value);
        return true;
      }
      case ClauseArgKind::PositiveReal: {
        char* end = nullptr;
        errno = 0;
        double value = std::strtod(text.c_str(), &end);
        if (end != text.c_str() + text.size() || text.find_first_of("xXpP") != std::string::npos)
          return bad(loc, text, spec);
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
        if (text == "rr")
          out.split = lang::SplitMode::RoundRobin;
        else if (text == "duplicate")
          out.split = lang::SplitMode::Duplicate;
        else
          return bad(loc, text, spec);
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
