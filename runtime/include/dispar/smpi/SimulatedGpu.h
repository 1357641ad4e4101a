// The GPU time model of the SMPI target (docs/simulation.md). SimGrid simulates a rank's computation by
// timing its real CPU bursts and scaling them to the simulated host's CPU speed; it has no GPUs. On the
// SMPI target kernels run on the host path, and a kernel launched on a simulated host that has GPUs is
// charged to one of them instead: `streammap simulate` writes each GPU as a host of its own,
// HOST.gpuI, one core at the GPU's speed, and the host's `gpu_count` property; the kernel's host-path
// burst is taken out of SimGrid's benchmark and becomes an execution of (its seconds x the GPU host's
// `host_path_speed` property) flops on the rank's GPU: the one its mapping assigned (the runtime calls
// assignGpu at start-up, as the GPU backend opens that GPU on a real cluster), or the one a caller names,
// or else GPU rank % gpu_count. Two ranks on one GPU so queue for it, as on a real GPU. On a host without
// GPUs the kernel stays a CPU burst, as SimGrid times it.
// Header-only, so that a hand-written baseline simulated beside a DISPAR program (bench/paper) is
// charged by the same rule.
#ifndef DISPAR_SMPI_SIMULATEDGPU_H
#define DISPAR_SMPI_SIMULATEDGPU_H

#include <mpi.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <smpi/smpi.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>

namespace dispar::smpi {

inline constexpr const char* kAssignedGpuProperty = "dispar_gpu";

/// A stretch of the rank's code that SimGrid does not time as its CPU burst (RAII): the burst so far is
/// simulated at the start, timing resumes at the end. Needed around everything that hands control to
/// SimGrid (a simcall: a simulated sleep or execution, setting an actor's property): the other ranks then
/// run on the same thread, and the rank's timer would count their time as its own.
class UntimedSection {
 public:
  UntimedSection() { smpi_bench_end(); }
  ~UntimedSection() { smpi_bench_begin(); }
  UntimedSection(const UntimedSection&) = delete;
  UntimedSection& operator=(const UntimedSection&) = delete;
};

/// Charges the calling rank's kernels to GPU `ordinal` of its host from now on. Kept as a property of
/// the rank's simulated actor: per rank by construction, whatever SMPI privatises.
inline void assignGpu(int ordinal) {
  const UntimedSection untimed;  // setting an actor's property is a simcall
  simgrid::s4u::Actor::self()->set_property(kAssignedGpuProperty, std::to_string(ordinal));
}

/// The simulated GPU the calling rank's kernels run on, or null when its host has none: GPU `ordinal`
/// when it is >= 0, else the one assignGpu named, else GPU rank % gpu_count.
inline simgrid::s4u::Host* rankGpu(int ordinal = -1) {
  simgrid::s4u::Host* host = simgrid::s4u::Host::current();
  const char* count = host->get_property("gpu_count");
  const int gpus = count != nullptr ? std::atoi(count) : 0;
  if (gpus <= 0) return nullptr;
  if (ordinal < 0)
    if (const char* assigned = simgrid::s4u::Actor::self()->get_property(kAssignedGpuProperty))
      ordinal = std::atoi(assigned);
  if (ordinal < 0) MPI_Comm_rank(MPI_COMM_WORLD, &ordinal);
  return simgrid::s4u::Host::by_name_or_null(host->get_name() + ".gpu" + std::to_string(ordinal % gpus));
}

/// Brackets one kernel run on the host path (RAII): on a host with GPUs it becomes simulated work on the
/// rank's GPU; elsewhere nothing changes.
class SimulatedKernel {
 public:
  /// `ordinal`: the GPU of the rank's host to charge (a hand-written program's own choice); -1: rankGpu's.
  explicit SimulatedKernel(int ordinal = -1) : gpu_(rankGpu(ordinal)) {
    if (gpu_ == nullptr) return;
    untimed_.emplace();  // the rank's CPU burst so far is simulated; the kernel's is not
    start_ = std::chrono::steady_clock::now();
  }
  ~SimulatedKernel() { finish(); }
  /// Runs the kernel's simulated execution and resumes the rank's timing; once. Whoever must read the
  /// clock after a kernel (MPI_Wtime, which starts SMPI's timing again) calls this first: a simulated
  /// execution inside a timed stretch counts the other ranks' real time as this rank's CPU burst.
  void finish() {
    if (gpu_ == nullptr) return;
    const double hostSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const char* speed = gpu_->get_property("host_path_speed");
    const double flops = hostSeconds * (speed != nullptr ? std::strtod(speed, nullptr) : 0.0);
    if (flops > 0) simgrid::s4u::this_actor::exec_init(flops)->set_host(gpu_)->wait();
    gpu_ = nullptr;
    untimed_.reset();  // after the execution: the rank's timing resumes
  }
  SimulatedKernel(const SimulatedKernel&) = delete;
  SimulatedKernel& operator=(const SimulatedKernel&) = delete;

 private:
  simgrid::s4u::Host* gpu_;
  std::optional<UntimedSection> untimed_;  // while the kernel runs on a simulated GPU
  std::chrono::steady_clock::time_point start_;
};

}  // namespace dispar::smpi

#endif  // DISPAR_SMPI_SIMULATEDGPU_H
