// The static code features disparcc writes for every RTG vertex (docs/language.md, "Code features"), the
// input of streammap's nearest-neighbour cost prediction. One table, so that the frontend, its tests and
// the documentation (a test compares them) name the same features; every feature is written, zeros
// included, so that the vectors of all programs line up.
#ifndef DISPAR_FRONTEND_CODE_FEATURE_TABLE_H
#define DISPAR_FRONTEND_CODE_FEATURE_TABLE_H

#include <cstddef>

namespace dispar::frontend {

/// Indexes kCodeFeatureTable.
enum class CodeFeature : std::size_t {
  ArithOps,
  MemoryOps,
  BranchOps,
  CallOps,
  LoopDepth,
  KernelLaunches,
  KernelArithOps,
  KernelMemoryOps,
  LibCallsBlas,
  LibCallsFft,
  LibCallsOther,
  BytesWrittenPerMessage,
};

struct CodeFeatureInfo {
  const char* name;
  const char* description;
};

/// In CodeFeature order.
inline constexpr CodeFeatureInfo kCodeFeatureTable[] = {
    {"arith_ops",
     "arithmetic operators: `+ - * / %`, bitwise `& | ^ ~`, shifts, unary `-`, `++`/`--` and compound assignments"},
    {"memory_ops", "array subscripts, pointer dereferences (`*p`) and `->` member accesses"},
    {"branch_ops", "`if`, `?:`, `case` labels, `&&` and `||`, and a loop's condition once per iteration"},
    {"call_ops", "call expressions (an overloaded operator counts as the operator it spells)"},
    {"loop_depth", "the deepest loop nesting, loops of called functions counted under the call"},
    {"kernel_launches", "CUDA kernel launches `k<<<...>>>(...)`"},
    {"kernel_arith_ops", "`arith_ops` inside the kernels launched (and the device functions they call), per launch"},
    {"kernel_memory_ops", "`memory_ops` inside the kernels launched (and the device functions they call), per launch"},
    {"lib_calls_blas", "calls of `cblas_*` and `cublas*` functions"},
    {"lib_calls_fft", "calls of `fftw*` and `cufft*` functions"},
    {"lib_calls_other",
     "calls of other functions not defined in the file, except `std::` and `dispar::` ones (port calls)"},
    {"bytes_written_per_message",
     "the element bytes (the `communication` volume where given) of the output pipes, summed"},
};

inline constexpr std::size_t kCodeFeatureCount = sizeof(kCodeFeatureTable) / sizeof(kCodeFeatureTable[0]);
static_assert(kCodeFeatureCount == static_cast<std::size_t>(CodeFeature::BytesWrittenPerMessage) + 1,
              "kCodeFeatureTable has one row per CodeFeature, in order");

inline const char* codeFeatureName(CodeFeature feature) {
  return kCodeFeatureTable[static_cast<std::size_t>(feature)].name;
}

}  // namespace dispar::frontend

#endif
