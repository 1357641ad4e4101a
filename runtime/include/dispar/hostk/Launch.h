// Launching a kernel's host clone: `k<<<grid, block, shmem, stream>>>(a, b)` becomes
// `::dispar::hostk::launch(grid, block, shmem, &host_k, a, b)`, or `launchThreadLoops(...)` /
// `launchGridLoops(...)` when the frontend emitted the clone as thread loops or grid loops (Kernel.h).
#ifndef DISPAR_HOSTK_LAUNCH_H
#define DISPAR_HOSTK_LAUNCH_H

#include <dispar/hostk/RuntimeApi.h>
#include <dispar/hostk/Types.h>

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace dispar::hostk {

/// CUDA's launch limits (compute capability 7.0 and later), checked before a launch runs.
struct LaunchLimits {
  static constexpr unsigned kMaxThreadsPerBlock = 1024;
  static constexpr unsigned kMaxBlockDim[3] = {1024, 1024, 64};
  static constexpr unsigned kMaxGridDim[3] = {2147483647u, 65535, 65535};
  /// Dynamic shared memory a launch may ask for without cudaFuncSetAttribute.
  static constexpr std::size_t kMaxDynamicSharedBytes = 48 * 1024;
  /// Static (__shared__) memory per block.
  static constexpr std::size_t kMaxStaticSharedBytes = 48 * 1024;
};

namespace detail {

using KernelInvoker = void (*)(const void* closure);

/// How a clone runs its CUDA threads (Kernel.h).
enum class CloneForm {
  Fibers,       ///< the clone is one CUDA thread
  ThreadLoops,  ///< the clone is one block
  GridLoops,    ///< the clone is a run of consecutive blocks of a kernel without barriers or shared memory
};

/// Whether the blocks of a grid may meet at a grid-wide barrier (grid_group::sync).
enum class GridKind {
  Independent,  ///< `<<<>>>` and cudaLaunchKernel: blocks run in any order, a few at a time
  Cooperative,  ///< cudaLaunchCooperativeKernel: every block at once
};

/// Validates the configuration, runs every block, returns when the grid has finished. Errors are
/// recorded as the calling thread's last error, as a CUDA launch does.
cudaError_t launchKernel(const dim3& grid, const dim3& block, std::size_t dynamicSharedBytes, KernelInvoker invoke,
                         const void* closure, CloneForm form, GridKind kind = GridKind::Independent);

/// The clone and its arguments, converted once to the clone's parameter types. Every CUDA thread
/// calls the clone with its own copies, as every GPU thread sees its own parameters.
template <class... Params>
struct KernelClosure {
  void (*kernel)(Params...);
  std::tuple<std::decay_t<Params>...> args;

  static void invoke(const void* self) {
    const auto& closure = *static_cast<const KernelClosure*>(self);
    std::apply([&closure](const auto&... arg) { closure.kernel(arg...); }, closure.args);
  }
};

/// `T` itself, in a context where it is not deduced: the arguments of a launch take the kernel's
/// parameter types at the call, as a CUDA launch converts them (NULL and 0 to pointers included).
template <class T>
struct Parameter {
  using type = T;
};

template <class... Params>
cudaError_t launchAs(CloneForm form, GridKind kind, dim3 grid, dim3 block, std::size_t dynamicSharedBytes,
                     void (*kernel)(Params...), typename Parameter<Params>::type... args) {
  static_assert(((!std::is_lvalue_reference_v<Params> || std::is_const_v<std::remove_reference_t<Params>>) && ...),
                "dispar::hostk::launch: kernel parameters cannot be non-const references");
  const KernelClosure<Params...> closure{kernel, std::tuple<std::decay_t<Params>...>(args...)};
  return launchKernel(grid, block, dynamicSharedBytes, &KernelClosure<Params...>::invoke, &closure, form, kind);
}

/// A kernel template's specialization as a type: StreamCC declares, beside each template kernel's clone,
/// `template <class T> auto dispar_deduce_k(const T* in, T* out) -> KernelOf<decltype(&k<T>), &k<T>>;`
/// (the kernel's own parameters), so that `decltype(dispar_deduce_k(a, b))::value` is the specialization
/// a call `k(a, b)` deduces, as CUDA deduces it at `k<<<g, b>>>(a, b)`, without evaluating the launch's
/// arguments twice. (The type is spelt out: nvcc's front end does not deduce a `template <auto>`.)
template <class Pointer, Pointer Kernel>
struct KernelOf {
  static constexpr Pointer value = Kernel;
};

/// Runs a registered clone with the arguments of a cudaLaunchKernel (or cudaLaunchCooperativeKernel)
/// call: `args[i]` points to a value of parameter i's type.
using ArgsLauncher = cudaError_t (*)(const void* clone, CloneForm form, GridKind kind, dim3 grid, dim3 block,
                                     std::size_t dynamicSharedBytes, void** args);

template <class... Params, std::size_t... I>
cudaError_t launchFromArgs(const void* clone, CloneForm form, GridKind kind, dim3 grid, dim3 block,
                           std::size_t dynamicSharedBytes, void** args, std::index_sequence<I...>) {
  if (sizeof...(Params) != 0 && args == nullptr) return recordError(cudaErrorInvalidValue);
  const auto kernel = reinterpret_cast<void (*)(Params...)>(const_cast<void*>(clone));
  return launchAs<Params...>(form, kind, grid, block, dynamicSharedBytes, kernel,
                             *static_cast<std::decay_t<Params>*>(args[I])...);
}
template <class... Params>
cudaError_t launchFromArgs(const void* clone, CloneForm form, GridKind kind, dim3 grid, dim3 block,
                           std::size_t dynamicSharedBytes, void** args) {
  return launchFromArgs<Params...>(clone, form, kind, grid, block, dynamicSharedBytes, args,
                                   std::index_sequence_for<Params...>{});
}
/// The ArgsLauncher of a clone of this type (StreamCC registers it with the clone).
template <class... Params>
ArgsLauncher argsLauncherFor(void (*)(Params...)) {
  return &launchFromArgs<Params...>;
}

/// A kernel launched through a pointer: the host path finds its clone (and the clone's form) by the
/// kernel's address. StreamCC registers every kernel that is not a template, at start-up.
struct RegisteredKernel {
  const void* kernel;
  const void* clone;
  CloneForm form;
  ArgsLauncher launchFromArgs;  // for cudaLaunchKernel
};
bool registerKernel(const void* kernel, const void* clone, CloneForm form, ArgsLauncher launchFromArgs);
/// The registration of `kernel` (a kernel's or a clone's address) into `found`; false when none.
bool findKernel(const void* kernel, RegisteredKernel& found);

}  // namespace detail

/// `k<<<grid, block, shmem>>>(args)` where `k` is a pointer to a kernel: runs the clone registered for
/// it; cudaErrorInvalidDeviceFunction when none is (a template kernel's address, say).
template <class... Params>
cudaError_t launchByPointer(dim3 grid, dim3 block, std::size_t dynamicSharedBytes, void (*kernel)(Params...),
                            typename detail::Parameter<Params>::type... args) {
  detail::RegisteredKernel entry{};
  if (!detail::findKernel(reinterpret_cast<const void*>(kernel), entry))
    return detail::recordError(cudaErrorInvalidDeviceFunction);
  const auto clone = reinterpret_cast<void (*)(Params...)>(const_cast<void*>(entry.clone));
  return detail::launchAs<Params...>(entry.form, detail::GridKind::Independent, grid, block, dynamicSharedBytes, clone,
                                     args...);
}

/// Runs `kernel` (a host clone) on a grid of `grid` blocks of `block` threads with `dynamicSharedBytes`
/// of dynamic shared memory per block; synchronous. Returns cudaSuccess or the launch error.
template <class... Params>
cudaError_t launch(dim3 grid, dim3 block, std::size_t dynamicSharedBytes, void (*kernel)(Params...),
                   typename detail::Parameter<Params>::type... args) {
  return detail::launchAs<Params...>(detail::CloneForm::Fibers, detail::GridKind::Independent, grid, block,
                                     dynamicSharedBytes, kernel, args...);
}

namespace detail {
/// Throws, so that the parent kernel's thread fails naming the launch: a launch in device code has no
/// caller that checks its error.
[[noreturn]] void launchFromKernelFailed(const char* kernel, const char* site, cudaError_t error);
}  // namespace detail

/// A launch inside a kernel (dynamic parallelism), whose grid runs at once, to its end, on the launching
/// thread's OS thread (one of the schedules CUDA allows: a child grid may run any time before its parent
/// grid ends). StreamCC rewrites `child<<<g, b, s, st>>>(a, x)` in a host clone into
/// `::dispar::hostk::launchFromKernel("child", "file:line:col", child, g, b, s, st)(a, x)`, where `child`
/// names the child's clone (or its kernel, which is registered with it).
template <class... Params>
class KernelLaunchFromKernel {
 public:
  KernelLaunchFromKernel(const char* name, const char* site, void (*kernel)(Params...), dim3 grid, dim3 block,
                         std::size_t dynamicSharedBytes)
      : name_(name), site_(site), kernel_(kernel), grid_(grid), block_(block), shared_(dynamicSharedBytes) {}
  void operator()(typename detail::Parameter<Params>::type... args) const {
    const cudaError_t error = launchByPointer(grid_, block_, shared_, kernel_, args...);
    if (error != cudaSuccess) detail::launchFromKernelFailed(name_, site_, error);
  }

 private:
  const char* name_;
  const char* site_;
  void (*kernel_)(Params...);
  dim3 grid_, block_;
  std::size_t shared_;
};

template <class... Params, class Stream = int>
KernelLaunchFromKernel<Params...> launchFromKernel(const char* name, const char* site, void (*kernel)(Params...),
                                                   dim3 grid, dim3 block = 1, std::size_t dynamicSharedBytes = 0,
                                                   Stream /*stream: the child runs at once*/ = 0) {
  return KernelLaunchFromKernel<Params...>(name, site, kernel, grid, block, dynamicSharedBytes);
}

/// As launch, for a clone emitted as thread loops: called once per block.
template <class... Params>
cudaError_t launchThreadLoops(dim3 grid, dim3 block, std::size_t dynamicSharedBytes, void (*kernel)(Params...),
                              typename detail::Parameter<Params>::type... args) {
  return detail::launchAs<Params...>(detail::CloneForm::ThreadLoops, detail::GridKind::Independent, grid, block,
                                     dynamicSharedBytes, kernel, args...);
}

/// As launch, for a clone emitted as grid loops: called once per run of consecutive blocks.
template <class... Params>
cudaError_t launchGridLoops(dim3 grid, dim3 block, std::size_t dynamicSharedBytes, void (*kernel)(Params...),
                            typename detail::Parameter<Params>::type... args) {
  return detail::launchAs<Params...>(detail::CloneForm::GridLoops, detail::GridKind::Independent, grid, block,
                                     dynamicSharedBytes, kernel, args...);
}

}  // namespace dispar::hostk

#endif  // DISPAR_HOSTK_LAUNCH_H
