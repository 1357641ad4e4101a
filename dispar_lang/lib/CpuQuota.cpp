#include "dispar_lang/CpuQuota.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace dispar::lang {
namespace {

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return in ? text.str() : std::string();
}

std::string firstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

/// A mounted cgroup hierarchy: where it is mounted and which cgroup its mount shows at that place.
struct Mount {
  std::string root;   // the cgroup path the mount point shows (not "/" inside a container)
  std::string point;  // where it is mounted
};

/// The cgroup v1 hierarchy with the cpu controller and the v2 hierarchy, from mountinfo's lines
/// "ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS...] - TYPE SOURCE SUPER-OPTIONS".
void findMounts(const std::string& mountInfo, std::optional<Mount>& v1Cpu, std::optional<Mount>& v2) {
  std::istringstream lines(mountInfo);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point, options, field;
    if (!(fields >> id >> parent >> device >> root >> point >> options)) continue;
    while (fields >> field && field != "-") {
    }
    std::string type, source, super;
    if (!(fields >> type >> source >> super)) continue;
    if (type == "cgroup2" && !v2) v2 = Mount{root, point};
    if (type != "cgroup" || v1Cpu) continue;
    std::istringstream flags(super);
    for (std::string flag; std::getline(flags, flag, ',');)
      if (flag == "cpu") v1Cpu = Mount{root, point};
  }
}

/// The directory of cgroup `path` under `mount`, or "" when the mount does not show it.
std::string directoryOf(const Mount& mount, const std::string& path, const std::string& root) {
  const bool under = mount.root == "/" || path == mount.root ||
                     (path.compare(0, mount.root.size(), mount.root) == 0 && path[mount.root.size()] == '/');
  if (!under) return "";
  std::string relative = path.substr(mount.root == "/" ? 0 : mount.root.size());
  return root + mount.point + relative;
}

/// The tightest limit of `directory` and its ancestors up to the mount point; `limitAt` reads one.
template <typename LimitAt>
std::optional<double> tightestUpTo(std::string directory, const std::string& top, LimitAt limitAt) {
  std::optional<double> tightest;
  while (true) {
    if (const std::optional<double> limit = limitAt(directory); limit && (!tightest || *limit < *tightest))
      tightest = limit;
    if (directory.size() <= top.size()) break;
    const std::size_t slash = directory.find_last_of('/');
    if (slash == std::string::npos || slash < top.size()) break;
    directory.resize(slash);
  }
  return tightest;
}

std::optional<double> v1Limit(const std::string& directory) {
  const std::string quota = firstLine(directory + "/cpu.cfs_quota_us");
  const std::string period = firstLine(directory + "/cpu.cfs_period_us");
  if (quota.empty() || period.empty()) return std::nullopt;
  const double q = std::atof(quota.c_str()), p = std::atof(period.c_str());
  if (q <= 0 || p <= 0) return std::nullopt;  // -1: no quota
  return q / p;
}

std::optional<double> v2Limit(const std::string& directory) {
  std::istringstream max(firstLine(directory + "/cpu.max"));  // "QUOTA PERIOD" or "max PERIOD"
  std::string quota;
  double period = 0;
  if (!(max >> quota >> period) || quota == "max" || period <= 0) return std::nullopt;
  const double q = std::atof(quota.c_str());
  return q > 0 ? std::optional<double>(q / period) : std::nullopt;
}

}  // namespace

std::optional<double> cgroupCpuLimit(const std::string& procCgroup, const std::string& mountInfo,
                                     const std::string& root) {
  std::optional<Mount> v1Cpu, v2;
  findMounts(mountInfo, v1Cpu, v2);
  std::optional<double> tightest;
  const auto take = [&](std::optional<double> limit) {
    if (limit && (!tightest || *limit < *tightest)) tightest = limit;
  };
  // /proc/self/cgroup: "ID:CONTROLLERS:PATH"; v2's line is "0::PATH".
  std::istringstream lines(procCgroup);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1), path = line.substr(second + 1);
    if (controllers.empty() && v2) {
      const std::string directory = directoryOf(*v2, path, root);
      if (!directory.empty()) take(tightestUpTo(directory, root + v2->point, v2Limit));
      continue;
    }
    std::istringstream names(controllers);
    for (std::string name; std::getline(names, name, ',');) {
      if (name != "cpu" || !v1Cpu) continue;
      const std::string directory = directoryOf(*v1Cpu, path, root);
      if (!directory.empty()) take(tightestUpTo(directory, root + v1Cpu->point, v1Limit));
    }
  }
  return tightest;
}

std::optional<double> cgroupCpuLimit() {
  return cgroupCpuLimit(readAll("/proc/self/cgroup"), readAll("/proc/self/mountinfo"), "");
}

unsigned usableCores() {
  cpu_set_t set;
  unsigned cores = 0;
  if (sched_getaffinity(0, sizeof set, &set) == 0) cores = static_cast<unsigned>(CPU_COUNT(&set));
  if (cores == 0) cores = std::max(1u, std::thread::hardware_concurrency());
  if (const std::optional<double> limit = cgroupCpuLimit())
    cores = std::min(cores, static_cast<unsigned>(std::max(1.0, std::ceil(*limit - 1e-9))));
  return std::max(1u, cores);
}

}  // namespace dispar::lang
