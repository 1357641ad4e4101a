// The rewriting table of Builtins.def as data: StreamCC looks CUDA names up here to drive its rewriting
// of host clones, and the docs generator prints it.
#ifndef DISPAR_HOSTK_BUILTINS_H
#define DISPAR_HOSTK_BUILTINS_H

#include <string>
#include <string_view>

namespace dispar::hostk {

enum class BuiltinKind {
  Index,     ///< built-in variable; the use becomes a call returning a const reference
  Constant,  ///< built-in constant; the use becomes the qualified name
  Function,  ///< function; the callee becomes the qualified name
};

struct Builtin {
  BuiltinKind kind;
  std::string_view cudaName;
  std::string_view hostName;  ///< fully qualified, e.g. "::dispar::hostk::syncthreads"
  std::string_view summary;
};

inline constexpr Builtin kBuiltins[] = {
#define DISPAR_HOSTK_BUILTIN(Kind, CudaName, HostName, Summary) \
  {BuiltinKind::Kind, #CudaName, "::dispar::hostk::" #HostName, Summary},
#include <dispar/hostk/Builtins.def>
};

/// The row for `cudaName`, or nullptr when the host path does not rewrite that name.
constexpr const Builtin* findBuiltin(std::string_view cudaName) {
  for (const Builtin& builtin : kBuiltins)
    if (builtin.cudaName == cudaName) return &builtin;
  return nullptr;
}

/// The text a use of `builtin` becomes in a host clone ("::dispar::hostk::threadIdx()" for an Index).
inline std::string rewrittenUse(const Builtin& builtin) {
  std::string use(builtin.hostName);
  if (builtin.kind == BuiltinKind::Index) use += "()";
  return use;
}

/// The table as Markdown (CUDA name, rewritten use, notes): docs/cuda.md embeds exactly this text.
inline std::string builtinsMarkdownTable() {
  std::string table = "| CUDA | host clone | notes |\n|---|---|---|\n";
  for (const Builtin& builtin : kBuiltins) {
    table += "| `";
    table += builtin.cudaName;
    table += builtin.kind == BuiltinKind::Function ? "(...)` | `" : "` | `";
    table += rewrittenUse(builtin);
    table += builtin.kind == BuiltinKind::Function ? "(...)` | " : "` | ";
    table += builtin.summary;
    table += " |\n";
  }
  return table;
}

}  // namespace dispar::hostk

#endif  // DISPAR_HOSTK_BUILTINS_H
