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
  Barrier,   ///< block barrier (__syncthreads...), rewritten as a Function
  Warp,      ///< warp-level function, rewritten as a Function; its caller runs as fibers
  Texture,   ///< texture fetch or surface access, rewritten as a Function
};

/// Whether uses of `kind` are calls (rewritten by replacing the callee's name).
constexpr bool isCall(BuiltinKind kind) {
  return kind == BuiltinKind::Function || kind == BuiltinKind::Barrier || kind == BuiltinKind::Warp ||
         kind == BuiltinKind::Texture;
}

struct Builtin {
  BuiltinKind kind;
  std::string_view cudaName;
  std::string_view hostName;  ///< fully qualified, e.g. "::dispar::hostk::syncthreads"
  std::string_view summary;
};

inline constexpr Builtin kBuiltins[] = {
#define DISPAR_HOSTK_BUILTIN(Kind, CudaName, HostName, Summary)                                                        \
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

/// The cooperative-groups names the host path provides (CooperativeGroups.def).
enum class CooperativeGroupsKind { Type, Function, Member };

struct CooperativeGroupsName {
  CooperativeGroupsKind kind;
  std::string_view name;
};

inline constexpr CooperativeGroupsName kCooperativeGroupsNames[] = {
#define DISPAR_HOSTK_CG(Kind, Name) {CooperativeGroupsKind::Kind, #Name},
#include <dispar/hostk/CooperativeGroups.def>
};

/// Whether the host path provides the cooperative-groups `name` of that kind.
constexpr bool providesCooperativeGroupsName(CooperativeGroupsKind kind, std::string_view name) {
  for (const CooperativeGroupsName& row : kCooperativeGroupsNames)
    if (row.kind == kind && row.name == name) return true;
  return false;
}

/// The table as Markdown (CUDA name, rewritten use, notes): docs/cuda.md embeds exactly this text.
inline std::string builtinsMarkdownTable() {
  std::string table = "| CUDA | host clone | notes |\n|---|---|---|\n";
  for (const Builtin& builtin : kBuiltins) {
    table += "| `";
    table += builtin.cudaName;
    const bool call = isCall(builtin.kind);
    table += call ? "(...)` | `" : "` | `";
    table += rewrittenUse(builtin);
    table += call ? "(...)` | " : "` | ";
    table += builtin.summary;
    table += " |\n";
  }
  return table;
}

}  // namespace dispar::hostk

#endif  // DISPAR_HOSTK_BUILTINS_H
