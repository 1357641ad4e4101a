#include "ClauseConstants.h"

#include "clang/AST/APValue.h"
#include "clang/AST/Expr.h"
#include "llvm/ADT/StringRef.h"

#include <cctype>
#include <limits>

namespace dispar::frontend {

namespace {

/// Integer literal spellings: 12, 0x1F, 017, 0b101, with u/l suffixes and ' separators.
std::optional<long long> integerLiteral(std::string text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  std::string digits;
  for (char c : text)
    if (c != '\'') digits += c;
  while (!digits.empty() &&
         (digits.back() == 'u' || digits.back() == 'U' || digits.back() == 'l' || digits.back() == 'L'))
    digits.pop_back();
  unsigned long long value = 0;
  if (llvm::StringRef(digits).getAsInteger(0, value) ||
      value > static_cast<unsigned long long>(std::numeric_limits<long long>::max()))
    return std::nullopt;
  return static_cast<long long>(value);
}

}  // namespace

// Recursive descent over the spelled tokens; every value in 64 bits, overflow an error.
class ClauseConstants::Parser {
 public:
  Parser(const ClauseConstants& constants, const ClauseExpression& expression, const Binding* binding,
         std::string& problem)
      : constants_(constants), tokens_(expression.tokens), binding_(binding), problem_(problem) {}

  std::optional<long long> whole() {
    std::optional<long long> value = sum();
    if (value && position_ != tokens_.size()) return fail("unexpected '" + tokens_[position_] + "'");
    return value;
  }

 private:
  std::optional<long long> sum() {
    std::optional<long long> value = product();
    while (value && (peek() == "+" || peek() == "-")) {
      const bool add = next() == "+";
      std::optional<long long> right = product();
      if (!right) return std::nullopt;
      long long result = 0;
      if (add ? __builtin_add_overflow(*value, *right, &result) : __builtin_sub_overflow(*value, *right, &result))
        return fail("the value overflows");
      value = result;
    }
    return value;
  }
  std::optional<long long> product() {
    std::optional<long long> value = unary();
    while (value && (peek() == "*" || peek() == "/" || peek() == "%")) {
      const std::string op = next();
      std::optional<long long> right = unary();
      if (!right) return std::nullopt;
      long long result = 0;
      if (op == "*") {
        if (__builtin_mul_overflow(*value, *right, &result)) return fail("the value overflows");
      } else {
        if (*right == 0) return fail("division by zero");
        result = op == "/" ? *value / *right : *value % *right;
      }
      value = result;
    }
    return value;
  }
  std::optional<long long> unary() {
    if (peek() == "-") {
      next();
      std::optional<long long> value = unary();
      if (!value) return std::nullopt;
      return -*value;
    }
    if (peek() == "+") next();
    return primary();
  }
  std::optional<long long> primary() {
    if (position_ == tokens_.size()) return fail("the expression ends early");
    const std::string token = next();
    if (token == "(") {
      std::optional<long long> value = sum();
      if (value && next() != ")") return fail("expected ')'");
      return value;
    }
    if (std::optional<long long> literal = integerLiteral(token)) return literal;
    if (std::isdigit(static_cast<unsigned char>(token[0]))) return fail("'" + token + "' is not an integer");
    if (binding_ != nullptr && token == binding_->name) return binding_->value;
    const clang::VarDecl* var = constants_.constant(token);
    if (var == nullptr) return fail("'" + token + "' is not a file-scope integer constant");
    if (peek() == "[") {
      next();
      std::optional<long long> index = sum();
      if (!index) return std::nullopt;
      if (next() != "]") return fail("expected ']'");
      std::optional<std::vector<long long>> elements = constants_.arrayElements(var);
      if (!elements) return fail("'" + token + "' is not a file-scope constant integer array");
      if (*index < 0 || *index >= static_cast<long long>(elements->size()))
        return fail("index " + std::to_string(*index) + " is outside '" + token + "' (" +
                    std::to_string(elements->size()) + " elements)");
      return (*elements)[static_cast<std::size_t>(*index)];
    }
    clang::Expr::EvalResult result;
    const clang::Expr* init = var->getInit();
    if (!var->getType().isConstQualified() || !var->getType()->isIntegerType() || !init ||
        !init->EvaluateAsInt(result, constants_.context_))
      return fail("'" + token + "' is not a file-scope integer constant");
    return result.Val.getInt().getExtValue();
  }

  std::string peek() const { return position_ < tokens_.size() ? tokens_[position_] : std::string(); }
  std::string next() { return position_ < tokens_.size() ? tokens_[position_++] : std::string(); }
  std::nullopt_t fail(std::string what) {
    if (problem_.empty()) problem_ = std::move(what);
    return std::nullopt;
  }

  const ClauseConstants& constants_;
  const std::vector<std::string>& tokens_;
  const Binding* binding_;
  std::size_t position_ = 0;
  std::string& problem_;
};

const clang::VarDecl* ClauseConstants::constant(const std::string& name) const {
  for (const clang::Decl* decl : decls_)
    if (const auto* var = llvm::dyn_cast<clang::VarDecl>(decl); var && var->getName() == name) return var;
  return nullptr;
}

std::optional<std::vector<long long>> ClauseConstants::arrayElements(const clang::VarDecl* var) const {
  const auto* array = context_.getAsConstantArrayType(var->getType());
  if (array == nullptr || !var->getType().isConstQualified() || !array->getElementType()->isIntegerType() ||
      var->getInit() == nullptr)
    return std::nullopt;
  const clang::APValue* value = var->evaluateValue();
  if (value == nullptr || !value->isArray()) return std::nullopt;
  std::vector<long long> elements;
  for (unsigned i = 0; i < value->getArraySize(); ++i) {
    const clang::APValue& element =
        i < value->getArrayInitializedElts() ? value->getArrayInitializedElt(i) : value->getArrayFiller();
    if (!element.isInt()) return std::nullopt;
    elements.push_back(element.getInt().getExtValue());
  }
  return elements;
}

std::optional<long long> ClauseConstants::evaluate(const ClauseExpression& expression, std::string& problem,
                                                   const Binding* binding) const {
  problem.clear();
  return Parser(*this, expression, binding, problem).whole();
}

std::optional<std::vector<ClauseConstants::ListValue>>
ClauseConstants::evaluateList(const std::vector<ClauseExpression>& arguments, std::string& problem,
                              std::size_t& failed) const {
  std::vector<ListValue> values;
  for (std::size_t k = 0; k < arguments.size(); ++k) {
    const ClauseExpression& argument = arguments[k];
    if (argument.tokens.size() == 1)
      if (const clang::VarDecl* var = constant(argument.tokens[0]))
        if (std::optional<std::vector<long long>> elements = arrayElements(var)) {
          for (std::size_t i = 0; i < elements->size(); ++i)
            values.push_back({(*elements)[i], argument.text + "[" + std::to_string(i) + "]", argument.location});
          continue;
        }
    std::optional<long long> value = evaluate(argument, problem);
    if (!value) {
      failed = k;
      return std::nullopt;
    }
    values.push_back({*value, argument.text, argument.location});
  }
  return values;
}

}  // namespace dispar::frontend
