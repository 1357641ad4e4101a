#include "AnalysisState.h"

#include <vector>

#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Type.h"
#include "clang/Basic/SourceManager.h"

namespace dispar::frontend {

namespace {
const clang::ClassTemplateSpecializationDecl* specializationOf(clang::QualType type, llvm::StringRef className) {
  const auto* record = type.getNonReferenceType()->getAsCXXRecordDecl();
  const auto* spec = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(record);
  if (!spec || spec->getQualifiedNameAsString() != className) return nullptr;
  return spec;
}
}  // namespace

clang::QualType pipeElementType(clang::QualType type) {
  const auto* spec = specializationOf(type, "dispar::Pipe");
  if (!spec) spec = specializationOf(type, "dispar::PipeArray");
  if (!spec || spec->getTemplateArgs()[0].getKind() != clang::TemplateArgument::Type) return {};
  return spec->getTemplateArgs()[0].getAsType();
}

int pipeArraySize(clang::QualType type) {
  const auto* spec = specializationOf(type, "dispar::PipeArray");
  if (!spec || spec->getTemplateArgs().size() != 2 ||
      spec->getTemplateArgs()[1].getKind() != clang::TemplateArgument::Integral)
    return -1;
  return static_cast<int>(spec->getTemplateArgs()[1].getAsIntegral().getExtValue());
}

std::optional<PortDeclaration> portDeclaration(const clang::ParmVarDecl* param) {
  const auto* spec = specializationOf(param->getType(), "dispar::detail::PortDecl");
  if (!spec || spec->getTemplateArgs()[0].getKind() != clang::TemplateArgument::Integral) return std::nullopt;
  PortDeclaration port;
  port.isOutput = spec->getTemplateArgs()[0].getAsIntegral().getExtValue() != 0;  // PortDirection::Out
  // The expression is in the type as written: IN<decltype(x)> (the alias IN(x) writes), or
  // PortDecl<Direction, decltype(x)>; the last argument either way.
  if (const auto* written = param->getType()->getAs<clang::TemplateSpecializationType>()) {
    llvm::ArrayRef<clang::TemplateArgument> args = written->template_arguments();
    if (!args.empty() && args.back().getKind() == clang::TemplateArgument::Type)
      if (const auto* decltypeType = args.back().getAsType()->getAs<clang::DecltypeType>())
        port.pipe = decltypeType->getUnderlyingExpr();
  }
  return port;
}

std::optional<int> familySize(const clang::ParmVarDecl* param) {
  const auto* spec = specializationOf(param->getType(), "dispar::detail::FamilySize");
  if (!spec || spec->getTemplateArgs()[0].getKind() != clang::TemplateArgument::Integral) return std::nullopt;
  return static_cast<int>(spec->getTemplateArgs()[0].getAsIntegral().getExtValue());
}

namespace {
bool mentions(const clang::Stmt* stmt, const clang::ParmVarDecl* param) {
  if (!stmt || !param) return false;
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(stmt); ref && ref->getDecl() == param) return true;
  for (const clang::Stmt* child : stmt->children())
    if (mentions(child, param)) return true;
  return false;
}
}  // namespace

std::optional<long long> evaluateIndex(const clang::Expr* expr, const clang::ParmVarDecl* indexParam, long long member,
                                       const clang::ASTContext& context) {
  if (!expr) return std::nullopt;
  expr = expr->IgnoreParenImpCasts();
  if (!mentions(expr, indexParam)) {
    clang::Expr::EvalResult result;
    if (expr->isValueDependent() || !expr->EvaluateAsInt(result, context)) return std::nullopt;
    return result.Val.getInt().getExtValue();
  }
  auto eval = [&](const clang::Expr* e) { return evaluateIndex(e, indexParam, member, context); };
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(expr); ref && ref->getDecl() == indexParam) return member;
  if (const auto* cast = llvm::dyn_cast<clang::ExplicitCastExpr>(expr)) {
    if (!cast->getType()->isIntegerType()) return std::nullopt;
    return eval(cast->getSubExpr());
  }
  if (const auto* unary = llvm::dyn_cast<clang::UnaryOperator>(expr)) {
    std::optional<long long> v = eval(unary->getSubExpr());
    if (!v) return std::nullopt;
    switch (unary->getOpcode()) {
      case clang::UO_Minus: return -*v;
      case clang::UO_Plus: return *v;
      case clang::UO_Not: return ~*v;
      case clang::UO_LNot: return !*v;
      default: return std::nullopt;
    }
  }
  if (const auto* subscript = llvm::dyn_cast<clang::ArraySubscriptExpr>(expr)) {
    // An element of a constant array (kTarget[i][0]): the index from the member, the array's value from
    // its constant initialiser.
    std::vector<long long> indices;
    const clang::Expr* base = subscript;
    while (const auto* step = llvm::dyn_cast<clang::ArraySubscriptExpr>(base)) {
      std::optional<long long> k = eval(step->getIdx());
      if (!k) return std::nullopt;
      indices.push_back(*k);
      base = step->getBase()->IgnoreParenImpCasts();
    }
    const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(base);
    const auto* array = ref ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
    if (!array || !array->getType().isConstQualified() || !array->hasInit()) return std::nullopt;
    const clang::APValue* value = array->evaluateValue();
    for (auto k = indices.rbegin(); value && k != indices.rend(); ++k) {
      if (!value->isArray() || *k < 0 || *k >= static_cast<long long>(value->getArraySize())) return std::nullopt;
      const unsigned position = static_cast<unsigned>(*k);
      value = position < value->getArrayInitializedElts() ? &value->getArrayInitializedElt(position)
                                                          : &value->getArrayFiller();
    }
    if (!value || !value->isInt()) return std::nullopt;
    return value->getInt().getExtValue();
  }
  if (const auto* conditional = llvm::dyn_cast<clang::ConditionalOperator>(expr)) {
    std::optional<long long> c = eval(conditional->getCond());
    if (!c) return std::nullopt;
    return eval(*c ? conditional->getTrueExpr() : conditional->getFalseExpr());
  }
  if (const auto* binary = llvm::dyn_cast<clang::BinaryOperator>(expr)) {
    std::optional<long long> a = eval(binary->getLHS()), b = eval(binary->getRHS());
    if (!a || !b) return std::nullopt;
    switch (binary->getOpcode()) {
      case clang::BO_Add: return *a + *b;
      case clang::BO_Sub: return *a - *b;
      case clang::BO_Mul: return *a * *b;
      case clang::BO_Div: return *b == 0 ? std::nullopt : std::optional<long long>(*a / *b);
      case clang::BO_Rem: return *b == 0 ? std::nullopt : std::optional<long long>(*a % *b);
      case clang::BO_Shl: return *b < 0 || *b > 62 ? std::nullopt : std::optional<long long>(*a << *b);
      case clang::BO_Shr: return *b < 0 || *b > 62 ? std::nullopt : std::optional<long long>(*a >> *b);
      case clang::BO_And: return *a & *b;
      case clang::BO_Or: return *a | *b;
      case clang::BO_Xor: return *a ^ *b;
      case clang::BO_LT: return *a < *b;
      case clang::BO_GT: return *a > *b;
      case clang::BO_LE: return *a <= *b;
      case clang::BO_GE: return *a >= *b;
      case clang::BO_EQ: return *a == *b;
      case clang::BO_NE: return *a != *b;
      case clang::BO_LAnd: return *a && *b;
      case clang::BO_LOr: return *a || *b;
      default: return std::nullopt;
    }
  }
  return std::nullopt;
}

const clang::FunctionDecl* mainFileDefinition(const clang::FunctionDecl* fn, const clang::SourceManager& sm) {
  const clang::FunctionDecl* definition = nullptr;
  if (!fn || !fn->hasBody(definition) || !definition || definition->isImplicit()) return nullptr;
  if (!sm.isInMainFile(sm.getExpansionLoc(definition->getLocation()))) return nullptr;
  if (const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(definition);
      method && method->getParent()->isLambda() && method->getParent()->getParentFunctionOrMethod())
    return nullptr;
  return definition;
}

std::optional<VnodeAnnotation> vnodeAnnotation(const clang::FunctionDecl* fn) {
  for (const clang::AnnotateAttr* attr : fn->specific_attrs<clang::AnnotateAttr>()) {
    const bool family = attr->getAnnotation() == "dispar.vnode_array";
    if (!family && attr->getAnnotation() != "dispar.vnode") continue;
    if (attr->args_size() != 2) return std::nullopt;
    const auto* name = llvm::dyn_cast<clang::StringLiteral>((*attr->args_begin())->IgnoreParenImpCasts());
    const auto* compiled = llvm::dyn_cast<clang::StringLiteral>((*(attr->args_begin() + 1))->IgnoreParenImpCasts());
    if (!name || !compiled) return std::nullopt;
    return VnodeAnnotation{name->getString().str(), compiled->getString().str(), family};
  }
  return std::nullopt;
}

}  // namespace dispar::frontend
