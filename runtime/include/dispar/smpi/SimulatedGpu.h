// The GPU time model of the SMPI target (docs/simulation.md). SimGrid simulates a rank's computation by
// timing its real CPU bursts and scaling them to the simulated host's CPU speed; it has no GPUs. On the
// SMPI target kernels run on the host path, and a kernel run on a simulated host that has a GPU is
// charged to that GPU instead: the burst is taken out of SimGrid's benchmark and replaced by
// smpi_execute_benched(host seconds / gpu_speedup), gpu_speedup being the host's platform property of
// that name (written by `streammap simulate`: how many times faster the host's GPU runs a kernel than
// its host clone runs on one core of this machine). On a host without the property the kernel stays a
// CPU burst, as SimGrid times it. Header-only, so that a hand-written baseline simulated beside a
// DISPAR program (bench/paper) is charged by the same rule.
#ifndef DISPAR_SMPI_SIMULATEDGPU_H
#define DISPAR_SMPI_SIMULATEDGPU_H

#include <smpi/smpi.h>
#include <simgrid/host.h>

#include <chrono>
#include <cstdlib>

namespace dispar::smpi {

/// The calling rank's simulated host's gpu_speedup property; 0 when it has none (no GPU).
inline double hostGpuSpeedup() {
  const char* value = sg_host_get_property_value(sg_host_self(), "gpu_speedup");
  if (value == nullptr) return 0;
  const double speedup = std::strtod(value, nullptr);
  return speedup > 0 ? speedup : 0;
}

/// Brackets one kernel run on the host path (RAII): on a host with a GPU, its real duration divided by
/// the host's gpu_speedup becomes simulated time on that host; elsewhere nothing changes.
class SimulatedKernel {
 public:
  SimulatedKernel() : speedup_(hostGpuSpeedup()) {
    if (speedup_ <= 0) return;
    smpi_bench_end();  // the rank's CPU burst so far is simulated; the kernel's is not
    start_ = std::chrono::steady_clock::now();
  }
  ~SimulatedKernel() {
    if (speedup_ <= 0) return;
    const double hostSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    smpi_bench_begin();
    smpi_execute_benched(hostSeconds / speedup_);
  }
  SimulatedKernel(const SimulatedKernel&) = delete;
  SimulatedKernel& operator=(const SimulatedKernel&) = delete;

 private:
  double speedup_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace dispar::smpi

#endif  // DISPAR_SMPI_SIMULATEDGPU_H
