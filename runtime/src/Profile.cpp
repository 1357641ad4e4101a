#include "Profile.h"

#include "MpiCheck.h"
#include "dispar_lang/OutputTarget.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <unistd.h>

#ifdef DISPAR_TARGET_SMPI
#include <dispar/smpi/SimulatedGpu.h>
#endif

namespace dispar::rt {

double threadCpuSeconds() {
  timespec now{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) return 0;
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

PortWaitTimer*& PortWaitTimer::active() {
  thread_local PortWaitTimer* timer = nullptr;
  return timer;
}

double profileClockSeconds() {
#ifdef DISPAR_TARGET_SMPI
  return MPI_Wtime();
#else
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
#endif
}

void recordBodyTimes(InstanceProfile& line, const PortWaits& waits, double bodyStart) {
  line.readWaitSeconds = waits.read.load();
  line.writeWaitSeconds = waits.write.load();
  const double body = profileClockSeconds() - bodyStart;
  line.computeSeconds = std::max(0.0, body - line.readWaitSeconds - line.writeWaitSeconds);
}

std::string profilePath() {
  const char* path = std::getenv("DISPAR_PROFILE");
  return path != nullptr ? path : "";
}

const std::string& cpuModel() {
  static const std::string model = [] {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
      if (line.rfind("model name", 0) != 0) continue;
      const std::size_t colon = line.find(':');
      if (colon == std::string::npos) break;
      const std::size_t first = line.find_first_not_of(" \t", colon + 1);
      if (first != std::string::npos) return line.substr(first);
    }
    return std::string("CPU");
  }();
  return model;
}

namespace {

// The running binary's absolute path: streammap finds the program's RTG beside it.
std::string binaryPath() {
  char buffer[4096];
  const ssize_t length = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  return length > 0 ? std::string(buffer, static_cast<std::size_t>(length)) : std::string();
}

lang::RunProfile profileOf(const ProgramSpec& program, const std::vector<InstanceProfile>& instances,
                           const std::vector<PipeTraffic>& pipes, const std::vector<KernelProfile>& kernels,
                           const std::vector<SplitSiteProfile>& splitSites, const std::string& failure) {
  lang::RunProfile profile;
  profile.program = program.program;
  profile.binary = binaryPath();
#ifdef DISPAR_TARGET_SMPI
  profile.simulated = true;
#endif
  profile.complete = failure.empty();
  profile.failure = failure;
  profile.instances = instances;
  for (int p = 0; p < program.pipeCount && static_cast<std::size_t>(p) < pipes.size(); ++p)
    profile.pipes.push_back(
        {program.pipes[p].name, pipes[static_cast<std::size_t>(p)].messages, pipes[static_cast<std::size_t>(p)].bytes});
  profile.kernels = kernels;
  profile.splitSites = splitSites;
  return profile;
}

}  // namespace

std::string profileJson(const ProgramSpec& program, const std::vector<InstanceProfile>& instances,
                        const std::vector<PipeTraffic>& pipes, const std::vector<KernelProfile>& kernels,
                        const std::vector<SplitSiteProfile>& splitSites, const std::string& failure,
                        std::optional<double> wallSeconds) {
  lang::RunProfile profile = profileOf(program, instances, pipes, kernels, splitSites, failure);
  profile.wallSeconds = wallSeconds;
  return lang::writeRunProfileJson(profile);
}

bool writeProfileFile(const std::string& path, const std::string& text, std::string& error) {
  return writeResultFile("DISPAR_PROFILE", "profile", path, text, error);
}

bool writeResultFile(const char* variable, const char* what, const std::string& path, const std::string& text,
                     std::string& error) {
  lang::OutputTarget target;
  if (!lang::resolveOutputTarget(path, target, error)) {
    error = std::string(variable) + "=" + error;
    return false;
  }
  const std::string temporary = target.path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      error = std::string("cannot write the ") + what + " '" + temporary + "'";
      std::remove(temporary.c_str());
      return false;
    }
  }
  if (!lang::keepTargetMode(temporary, target, error) || std::rename(temporary.c_str(), target.path.c_str()) != 0) {
    if (error.empty()) error = std::string("cannot rename the ") + what + " to '" + target.path + "'";
    std::remove(temporary.c_str());
    return false;
  }
  return true;
}

namespace {
// The profile's own work (formatting, parsing, writing the file) is not the program's: on the SMPI target
// it is left out of the simulated time, so that a profiled run's makespan is the program's. No MPI call
// may run inside one (MPI calls resume SimGrid's timing).
#ifdef DISPAR_TARGET_SMPI
using ProfileWorkUntimed = smpi::UntimedSection;
#else
struct ProfileWorkUntimed {};
#endif
}  // namespace

bool gatherProfile(const std::string& path, const ProgramSpec& program, const std::vector<InstanceProfile>& mine,
                   const std::vector<PipeTraffic>& myPipes, const std::vector<KernelProfile>& myKernels,
                   const std::vector<SplitSiteProfile>& mySplitSites, int rank, double runStart, std::string& error) {
  // Each rank's lines as a profile of their own (the format's writer); rank 0 reads them back.
  std::string text;
  {
    [[maybe_unused]] const ProfileWorkUntimed untimed;
    text = profileJson(program, mine, {}, myKernels, mySplitSites, "");
  }
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int length = static_cast<int>(text.size());
  std::vector<int> lengths(rank == 0 ? static_cast<std::size_t>(size) : 0);
  DISPAR_MPI(MPI_Gather, &length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(lengths.size());
  std::string all;
  if (rank == 0) {
    int total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) offsets[r] = total, total += lengths[r];
    all.resize(static_cast<std::size_t>(total));
  }
  DISPAR_MPI(MPI_Gatherv, text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
             MPI_COMM_WORLD);
  std::vector<std::uint64_t> counts;
  for (const PipeTraffic& pipe : myPipes) counts.insert(counts.end(), {pipe.messages, pipe.bytes});
  std::vector<std::uint64_t> sums(counts.size());
  DISPAR_MPI(MPI_Reduce, counts.data(), sums.data(), static_cast<int>(counts.size()), MPI_UINT64_T, MPI_SUM, 0,
             MPI_COMM_WORLD);
  if (rank != 0) return true;

  [[maybe_unused]] const ProfileWorkUntimed untimed;
  std::vector<InstanceProfile> instances;
  std::vector<KernelProfile> kernels;
  std::vector<SplitSiteProfile> splitSites;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    lang::RunProfile part;
    if (!lang::parseRunProfileJson(
            all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])), part, error)) {
      error = "rank " + std::to_string(r) + "'s part: " + error;
      return false;
    }
    instances.insert(instances.end(), part.instances.begin(), part.instances.end());
    kernels.insert(kernels.end(), part.kernels.begin(), part.kernels.end());
    splitSites.insert(splitSites.end(), part.splitSites.begin(), part.splitSites.end());
  }
  std::vector<PipeTraffic> pipes(myPipes.size());
  for (std::size_t p = 0; p < pipes.size(); ++p) pipes[p] = {sums[2 * p], sums[2 * p + 1]};
  return writeProfileFile(
      path, profileJson(program, instances, pipes, kernels, splitSites, "", profileClockSeconds() - runStart), error);
}

}  // namespace dispar::rt
