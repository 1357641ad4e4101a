#include "AnalysisState.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Type.h"

namespace dispar::frontend {

namespace {
// The T of `dispar::<className><T>` (after desugaring), or a null type.
clang::QualType templateArgumentOf(clang::QualType type, llvm::StringRef className) {
  const auto* record = type.getNonReferenceType()->getAsCXXRecordDecl();
  const auto* spec = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(record);
  if (!spec || spec->getQualifiedNameAsString() != ("dispar::" + className).str()) return {};
  const clang::TemplateArgumentList& args = spec->getTemplateArgs();
  if (args.size() != 1 || args[0].getKind() != clang::TemplateArgument::Type) return {};
  return args[0].getAsType();
}
}  // namespace

clang::QualType pipeElementType(clang::QualType type) { return templateArgumentOf(type, "Pipe"); }

bool portElementType(clang::QualType type, clang::QualType& element, bool& isOutput) {
  if (!type->isReferenceType()) return false;
  if (clang::QualType in = templateArgumentOf(type, "InPort"); !in.isNull()) {
    element = in;
    isOutput = false;
    return true;
  }
  if (clang::QualType out = templateArgumentOf(type, "OutPort"); !out.isNull()) {
    element = out;
    isOutput = true;
    return true;
  }
  return false;
}

std::string vnodeNameFromFunction(llvm::StringRef functionName) {
  if (!functionName.consume_front("dispar_vnode_")) return {};
  std::size_t marker = functionName.rfind("_L");
  if (marker == llvm::StringRef::npos || marker == 0) return {};
  llvm::StringRef line = functionName.substr(marker + 2);
  if (line.empty() || !llvm::all_of(line, [](char c) { return c >= '0' && c <= '9'; })) return {};
  return functionName.substr(0, marker).str();
}

}  // namespace dispar::frontend
