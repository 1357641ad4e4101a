#include "ClauseConstants.h"

#include "clang/AST/APValue.h"
#include "clang/AST/Expr.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
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

/// Floating literal spellings: 1.5, .5, 2e-3, 0x1p4, with f/l suffixes and ' separators.
std::optional<double> floatingLiteral(std::string text) {
  std::string digits;
  for (char c : text)
    if (c != '\'') digits += c;
  const bool hex = digits.size() > 1 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
  while (!digits.empty() &&
         (digits.back() == 'f' || digits.back() == 'F' || digits.back() == 'l' || digits.back() == 'L') &&
         !(hex && (digits.back() == 'f' || digits.back() == 'F')))
    digits.pop_back();
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(digits.c_str(), &end);
  if (digits.empty() || end != digits.c_str() + digits.size() || errno == ERANGE || !std::isfinite(value))
    return std::nullopt;
  return value;
}

}  // namespace

// Recursive descent over the spelled tokens, with C's precedence and conversions: integers in 64 bits
// (overflow an error), a floating operand makes the operation floating, `a ? b : c` and `&&`, `||`
// evaluate only the operand they choose (`i < 3 ? kWidth[i] : 1` is fine for i = 5).
class ClauseConstants::Parser {
 public:
  Parser(const ClauseConstants& constants, const ClauseExpression& expression, const Binding* binding,
         const std::vector<std::string>& names, std::string& problem)
      : constants_(constants), tokens_(expression.tokens), binding_(binding), names_(names), problem_(problem) {}

  std::optional<Value> whole() {
    std::optional<Value> value = conditional();
    if (value && position_ != tokens_.size()) return fail("unexpected '" + tokens_[position_] + "'");
    return value;
  }

 private:
  std::optional<Value> conditional() {
    std::optional<Value> condition = logicalOr();
    if (!condition || peek() != "?") return condition;
    next();
    std::optional<bool> chosen = truth(*condition);
    if (!chosen) return std::nullopt;
    std::optional<Value> first = skippingUnless(*chosen, [&] { return conditional(); });
    if (!first) return std::nullopt;
    if (next() != ":") return fail("expected ':'");
    std::optional<Value> second = skippingUnless(!*chosen, [&] { return conditional(); });
    if (!second) return std::nullopt;
    return *chosen ? first : second;
  }
  // `a || b` and `a && b`: `b` is evaluated only where `a` does not decide (|| on false, && on true).
  template <class Operand>
  std::optional<Value> logical(const char* op, Operand operand) {
    const bool decidedBy = std::string(op) == "||";  // the left value that decides without the right
    std::optional<Value> value = operand();
    while (value && peek() == op) {
      next();
      std::optional<bool> left = truth(*value);
      if (!left) return std::nullopt;
      std::optional<Value> right = skippingUnless(*left != decidedBy, operand);
      if (!right) return std::nullopt;
      std::optional<bool> result = *left == decidedBy ? left : truth(*right);
      if (!result) return std::nullopt;
      value = Value::integer(*result ? 1 : 0);
    }
    return value;
  }
  std::optional<Value> logicalOr() {
    return logical("||", [&] { return logical("&&", [&] { return comparison(); }); });
  }
  // One level of left-associative binary operators over the next tighter level.
  template <class Operand>
  std::optional<Value> binary(std::initializer_list<const char*> operators, Operand operand) {
    std::optional<Value> value = operand();
    while (value && std::find(operators.begin(), operators.end(), peek()) != operators.end()) {
      const std::string op = next();
      std::optional<Value> right = operand();
      if (!right) return std::nullopt;
      value = arithmetic(*value, op, *right);
    }
    return value;
  }
  std::optional<Value> comparison() {
    return binary({"==", "!=", "<=", ">=", "<", ">"}, [&] { return sum(); });
  }
  std::optional<Value> sum() {
    return binary({"+", "-"}, [&] { return product(); });
  }
  std::optional<Value> product() {
    return binary({"*", "/", "%"}, [&] { return unary(); });
  }
  std::optional<Value> unary() {
    if (peek() == "-" || peek() == "!" || peek() == "+") {
      const std::string op = next();
      std::optional<Value> value = unary();
      if (!value || !number(*value, op)) return std::nullopt;
      if (op == "+") return value;
      if (op == "!") return Value::integer(value->asReal() == 0 ? 1 : 0);
      if (value->real) return Value::floating(-value->fraction);
      if (value->whole == std::numeric_limits<long long>::min()) return fail("the value overflows");
      return Value::integer(-value->whole);
    }
    return primary();
  }
  std::optional<Value> primary() {
    if (position_ == tokens_.size()) return fail("the expression ends early");
    const std::string token = next();
    if (token == "(") {
      std::optional<Value> value = conditional();
      if (value && next() != ")") return fail("expected ')'");
      return value;
    }
    if (std::isdigit(static_cast<unsigned char>(token[0])) || token[0] == '.') {
      if (std::optional<long long> literal = integerLiteral(token)) return Value::integer(*literal);
      if (std::optional<double> literal = floatingLiteral(token)) return Value::floating(*literal);
      return fail("'" + token + "' is not a number");
    }
    if (std::find(names_.begin(), names_.end(), token) != names_.end()) return Value::named(token);
    if (binding_ != nullptr && token == binding_->name) return Value::integer(binding_->value);
    const clang::VarDecl* var = constants_.constant(token);
    if (var == nullptr) return fail("'" + token + "' is not a file-scope constant");
    if (peek() == "[") {
      next();
      std::optional<Value> index = conditional();
      if (!index) return std::nullopt;
      if (next() != "]") return fail("expected ']'");
      if (skipping_ > 0) return Value::integer(0);
      if (index->real || !index->name.empty()) return fail("the index of '" + token + "' is not an integer");
      std::optional<std::vector<Value>> elements = constants_.arrayElements(var);
      if (!elements) return fail("'" + token + "' is not a file-scope constant array of numbers");
      if (index->whole < 0 || index->whole >= static_cast<long long>(elements->size()))
        return fail("index " + std::to_string(index->whole) + " is outside '" + token + "' (" +
                    std::to_string(elements->size()) + " elements)");
      return (*elements)[static_cast<std::size_t>(index->whole)];
    }
    if (skipping_ > 0) return Value::integer(0);
    std::optional<Value> value = constants_.scalar(var);
    if (!value)
      return fail("'" + token +
                  (var->getType().isConstQualified() ? "' is not a number" : "' is not a file-scope constant"));
    return value;
  }

  // The operands of an arithmetic or comparison operator are numbers, not one of the clause's names.
  bool number(const Value& value, const std::string& op) {
    if (value.name.empty()) return true;
    fail("'" + value.name + "' is not a number (operator '" + op + "')");
    return false;
  }
  std::optional<bool> truth(const Value& value) {
    if (!number(value, "?")) return std::nullopt;
    return value.asReal() != 0;
  }
  template <class T>
  static bool compare(T a, const std::string& op, T b) {
    return op == "=="   ? a == b
           : op == "!=" ? a != b
           : op == "<=" ? a <= b
           : op == ">=" ? a >= b
           : op == "<"  ? a < b
                        : a > b;
  }
  // C's binary operators on numbers, comparisons included (their value 1 or 0).
  std::optional<Value> arithmetic(const Value& left, const std::string& op, const Value& right) {
    if (!number(left, op) || !number(right, op)) return std::nullopt;
    if (op == "==" || op == "!=" || op[0] == '<' || op[0] == '>')
      return Value::integer(
          (left.real || right.real ? compare(left.asReal(), op, right.asReal()) : compare(left.whole, op, right.whole))
              ? 1
              : 0);
    if (left.real || right.real) {
      if (op == "%") return fail("'%' needs integers");
      const double a = left.asReal(), b = right.asReal();
      if (op == "/" && b == 0)
        return skipping_ > 0 ? std::optional<Value>(Value::integer(0)) : fail("division by zero");
      return Value::floating(op == "+" ? a + b : op == "-" ? a - b : op == "*" ? a * b : a / b);
    }
    long long result = 0;
    if (op == "/" || op == "%") {
      if (right.whole == 0) return skipping_ > 0 ? std::optional<Value>(Value::integer(0)) : fail("division by zero");
      return Value::integer(op == "/" ? left.whole / right.whole : left.whole % right.whole);
    }
    if (op == "+"   ? __builtin_add_overflow(left.whole, right.whole, &result)
        : op == "-" ? __builtin_sub_overflow(left.whole, right.whole, &result)
                    : __builtin_mul_overflow(left.whole, right.whole, &result))
      return skipping_ > 0 ? std::optional<Value>(Value::integer(0)) : fail("the value overflows");
    return Value::integer(result);
  }
  // Parses with `evaluate` false as C skips the operand ?: or && || does not choose: its syntax is
  // checked, its values (an index out of range, a division by zero) are not.
  template <typename Parse>
  std::optional<Value> skippingUnless(bool evaluate, Parse parse) {
    if (!evaluate) ++skipping_;
    std::optional<Value> value = parse();
    if (!evaluate) --skipping_;
    return value;
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
  const std::vector<std::string>& names_;
  std::size_t position_ = 0;
  int skipping_ = 0;
  std::string& problem_;
};

const clang::VarDecl* ClauseConstants::constant(const std::string& name) const {
  for (const clang::Decl* decl : decls_)
    if (const auto* var = llvm::dyn_cast<clang::VarDecl>(decl); var && var->getName() == name) return var;
  return nullptr;
}

namespace {

/// An evaluated constant's number, integer or floating; nullopt for anything else.
template <typename Value>
std::optional<Value> numberOf(const clang::APValue& value) {
  if (value.isInt()) return Value::integer(value.getInt().getExtValue());
  if (value.isFloat()) return Value::floating(value.getFloat().convertToDouble());
  return std::nullopt;
}

}  // namespace

std::optional<ClauseConstants::Value> ClauseConstants::scalar(const clang::VarDecl* var) const {
  const clang::Expr* init = var->getInit();
  if (!var->getType().isConstQualified() || !var->getType()->isArithmeticType() || init == nullptr) return std::nullopt;
  const clang::APValue* value = var->evaluateValue();
  if (value == nullptr) return std::nullopt;
  return numberOf<Value>(*value);
}

std::optional<std::vector<ClauseConstants::Value>> ClauseConstants::arrayElements(const clang::VarDecl* var) const {
  const auto* array = context_.getAsConstantArrayType(var->getType());
  if (array == nullptr || !var->getType().isConstQualified() || !array->getElementType()->isArithmeticType() ||
      var->getInit() == nullptr)
    return std::nullopt;
  const clang::APValue* value = var->evaluateValue();
  if (value == nullptr || !value->isArray()) return std::nullopt;
  std::vector<Value> elements;
  for (unsigned i = 0; i < value->getArraySize(); ++i) {
    const clang::APValue& element =
        i < value->getArrayInitializedElts() ? value->getArrayInitializedElt(i) : value->getArrayFiller();
    std::optional<Value> number = numberOf<Value>(element);
    if (!number) return std::nullopt;
    elements.push_back(*number);
  }
  return elements;
}

std::optional<ClauseConstants::Value> ClauseConstants::value(const ClauseExpression& expression,
                                                             const std::vector<std::string>& names,
                                                             std::string& problem, const Binding* binding) const {
  problem.clear();
  return Parser(*this, expression, binding, names, problem).whole();
}

std::string ClauseConstants::spell(double number) {
  char text[32];
  std::snprintf(text, sizeof text, "%.15g", number);
  return text;
}

std::optional<long long> ClauseConstants::evaluate(const ClauseExpression& expression, std::string& problem,
                                                   const Binding* binding) const {
  std::optional<Value> result = value(expression, {}, problem, binding);
  if (!result) return std::nullopt;
  if (result->real) {
    problem = "its value " + spell(result->fraction) + " is not an integer";
    return std::nullopt;
  }
  return result->whole;
}

std::optional<double> ClauseConstants::evaluateNumber(const ClauseExpression& expression, std::string& problem,
                                                      const Binding* binding) const {
  std::optional<Value> result = value(expression, {}, problem, binding);
  if (!result) return std::nullopt;
  return result->asReal();
}

std::optional<std::string> ClauseConstants::evaluateName(const ClauseExpression& expression,
                                                         const std::vector<std::string>& names, std::string& problem,
                                                         const Binding* binding) const {
  std::optional<Value> result = value(expression, names, problem, binding);
  if (!result) return std::nullopt;
  if (result->name.empty()) {
    problem = "its value is a number, not " + llvm::join(names, " or ");
    return std::nullopt;
  }
  return result->name;
}

std::optional<std::vector<ClauseConstants::ListValue>>
ClauseConstants::evaluateList(const std::vector<ClauseExpression>& arguments, std::string& problem,
                              std::size_t& failed) const {
  std::vector<ListValue> values;
  for (std::size_t k = 0; k < arguments.size(); ++k) {
    const ClauseExpression& argument = arguments[k];
    if (argument.tokens.size() == 1)
      if (const clang::VarDecl* var = constant(argument.tokens[0]))
        if (std::optional<std::vector<Value>> elements = arrayElements(var)) {
          for (std::size_t i = 0; i < elements->size(); ++i) {
            const std::string source = argument.text + "[" + std::to_string(i) + "]";
            if ((*elements)[i].real) {
              failed = k;
              problem = "'" + source + "' is not an integer";
              return std::nullopt;
            }
            values.push_back({(*elements)[i].whole, source, argument.location});
          }
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
