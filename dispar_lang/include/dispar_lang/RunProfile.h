// The run profile file (docs/runtime.md, "Run profiles"): what one run of a program measured, per
// VNODE instance and per pipe. The runtime writes it (DISPAR_PROFILE=FILE); streammap reads it
// (`streammap profile add`, `streammap map --profile`). One writer and one reader, here; the runtime
// compiles this file into its own library rather than linking dispar_lang.
#ifndef DISPAR_LANG_RUN_PROFILE_H
#define DISPAR_LANG_RUN_PROFILE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dispar::lang {

inline constexpr const char* kRunProfileFormat = "dispar-profile";
inline constexpr int kRunProfileVersion = 1;

/// The GPU an instance ran on, as its driver describes it: enough for streammap's speed estimate
/// (docs/streammap.md, "GPU speed estimate") when the resource database does not know the GPU.
struct ProfiledGpu {
  int multiprocessors = 0;
  int clockKHz = 0;
  int ccMajor = 0, ccMinor = 0;  // compute capability
};

struct ProfiledInstance {
  int rank = 0;  // the MPI rank that ran it
  std::string vnode;
  int replica = 0;
  std::string host;
  std::string device;       // "cpu", "gpu" or "host-path" (a CG instance run on the CPU)
  std::string deviceModel;  // the GPU's name for "gpu", the CPU's model name otherwise
  std::string fingerprint;  // the VNODE's code fingerprint as built (the RTG's); empty when unknown
  double computeSeconds = 0, readWaitSeconds = 0, writeWaitSeconds = 0;
  double cpuSeconds = 0;  // the body thread's CPU time (MPI's busy waiting included)
  /// The body's CPU time outside its ports: what it computed on a CPU, not counting time the core went to
  /// other processes (an oversubscribed node). Absent in profiles of runtimes that did not measure it.
  std::optional<double> computeCpuSeconds;
  /// For device "gpu"; absent in profiles of runtimes that did not record it.
  std::optional<ProfiledGpu> gpu;
};

struct ProfiledPipe {
  std::string pipe;
  std::uint64_t messages = 0, bytes = 0;  // summed over the pipe's writer instances
};

/// One kernel launch site of one instance: how often it launched and the time the launches took (on the
/// GPU between events around the launch; on the host path the launch itself, which runs the kernel).
struct ProfiledKernel {
  int rank = 0;
  std::string vnode;
  int replica = 0;
  std::string kernel;
  std::string site;    // "app.dsp:41:3", where the launch is written
  std::string device;  // "gpu" or "host-path"
  std::uint64_t launches = 0;
  double seconds = 0;
};

/// The rates split_for learned at one call site on one rank (docs/split.md, "Carry-over").
struct ProfiledSplitSite {
  int rank = 0;
  std::string site;
  double gpuRate = 0, cpuThreadRate = 0;
};

struct RunProfile {
  std::string program;
  std::string binary;  // the program's path as it ran (absolute when known): its RTG lies beside it
  /// A run of the SMPI target (streammap simulate): its times are the simulated cluster's, its hosts the
  /// simulated platform's, not measurements of a machine's devices.
  bool simulated = false;
  bool complete = true;
  std::string failure;  // why the profile is partial; empty when complete
  /// The run's wall time on rank 0, from the start of dispar::rt::run to the profile: no instance's time
  /// in its body can exceed it. Absent in partial profiles and in those of runtimes that did not record it.
  std::optional<double> wallSeconds;
  std::vector<ProfiledInstance> instances;
  std::vector<ProfiledPipe> pipes;
  std::vector<ProfiledKernel> kernels;
  std::vector<ProfiledSplitSite> splitSites;

  /// The number of messages that stands for one period of the stream: the most any pipe carried (at
  /// least 1). Every instance's cost per message is its compute time over this same count, so that the
  /// costs of one run add up as the instances' loads do (docs/streammap.md, "Measured costs").
  std::uint64_t periodMessages() const;
};

/// Two-space indented, fields in a fixed order, newline at the end.
std::string writeRunProfileJson(const RunProfile& profile);

/// Parses and validates a profile: format and version, every field's type and range. On failure returns
/// false with `error` naming the field ("profile.instances[2].compute_s: must not be negative, got -1").
bool parseRunProfileJson(const std::string& text, RunProfile& out, std::string& error);

}  // namespace dispar::lang

#endif
