// The CPU-quota rule (dispar_lang/CpuQuota.h) on cgroup trees written under a scratch directory: v1 and v2,
// a quota on an ancestor, a container's mount that shows only its own cgroup, and no quota at all.
#include "Process.h"

#include <dispar_lang/CpuQuota.h>

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <string>

namespace dispar::lang {
namespace {

using dispar::testing::ScratchDir;

void makeDirectories(const std::string& path) {
  for (std::size_t at = 1; at != std::string::npos; at = path.find('/', at + 1))
    ::mkdir(path.substr(0, at).c_str(), 0755);
  ::mkdir(path.c_str(), 0755);
}

void writeAt(const std::string& path, const std::string& text) {
  makeDirectories(path.substr(0, path.rfind('/')));
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr) << path;
  std::fputs(text.c_str(), f);
  std::fclose(f);
}

// mountinfo lines as the kernel writes them (optional tags before the "-" separator).
const std::string kV1Mounts = "30 25 0:26 / /sys/fs/cgroup/cpu rw,nosuid shared:10 - cgroup cgroup rw,cpu\n"
                              "31 25 0:27 / /sys/fs/cgroup/memory rw,nosuid shared:11 - cgroup cgroup rw,memory\n";
const std::string kV2Mounts = "35 25 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n";

TEST(CpuQuota, ReadsAV1QuotaOfTheProcessCgroup) {
  ScratchDir dir;
  writeAt(dir.path() + "/sys/fs/cgroup/cpu/job/node/cpu.cfs_quota_us", "25000\n");
  writeAt(dir.path() + "/sys/fs/cgroup/cpu/job/node/cpu.cfs_period_us", "100000\n");
  const auto limit = cgroupCpuLimit("4:memory:/job/node\n1:cpu:/job/node\n", kV1Mounts, dir.path());
  ASSERT_TRUE(limit.has_value());
  EXPECT_DOUBLE_EQ(*limit, 0.25);
}

TEST(CpuQuota, AnAncestorsTighterQuotaWins) {
  ScratchDir dir;
  writeAt(dir.path() + "/sys/fs/cgroup/cpu/job/cpu.cfs_quota_us", "150000\n");
  writeAt(dir.path() + "/sys/fs/cgroup/cpu/job/cpu.cfs_period_us", "100000\n");
  writeAt(dir.path() + "/sys/fs/cgroup/cpu/job/step/cpu.cfs_quota_us", "-1\n");
  writeAt(dir.path() + "/sys/fs/cgroup/cpu/job/step/cpu.cfs_period_us", "100000\n");
  const auto limit =
      cgroupCpuLimit("2:cpu,cpuacct:/job/step\n",
                     "30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n", dir.path());
  EXPECT_FALSE(limit.has_value()) << "the mount is cpu,cpuacct: the files are under that name";
  writeAt(dir.path() + "/sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us", "150000\n");
  writeAt(dir.path() + "/sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
  writeAt(dir.path() + "/sys/fs/cgroup/cpu,cpuacct/job/step/cpu.cfs_quota_us", "-1\n");
  writeAt(dir.path() + "/sys/fs/cgroup/cpu,cpuacct/job/step/cpu.cfs_period_us", "100000\n");
  const auto nested =
      cgroupCpuLimit("2:cpu,cpuacct:/job/step\n",
                     "30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n", dir.path());
  ASSERT_TRUE(nested.has_value());
  EXPECT_DOUBLE_EQ(*nested, 1.5);
}

TEST(CpuQuota, ReadsV2CpuMax) {
  ScratchDir dir;
  writeAt(dir.path() + "/sys/fs/cgroup/system.slice/cpu.max", "max 100000\n");
  writeAt(dir.path() + "/sys/fs/cgroup/system.slice/app.service/cpu.max", "50000 100000\n");
  const auto limit = cgroupCpuLimit("0::/system.slice/app.service\n", kV2Mounts, dir.path());
  ASSERT_TRUE(limit.has_value());
  EXPECT_DOUBLE_EQ(*limit, 0.5);
  writeAt(dir.path() + "/sys/fs/cgroup/system.slice/app.service/cpu.max", "max 100000\n");
  EXPECT_FALSE(cgroupCpuLimit("0::/system.slice/app.service\n", kV2Mounts, dir.path()).has_value());
}

TEST(CpuQuota, AContainerSeesItsOwnCgroupAtTheMountPoint) {
  // Inside a container the mount's root is the container's cgroup, mounted at /sys/fs/cgroup.
  ScratchDir dir;
  writeAt(dir.path() + "/sys/fs/cgroup/cpu.max", "200000 100000\n");
  const auto limit =
      cgroupCpuLimit("0::/docker/abc\n", "35 25 0:30 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", dir.path());
  ASSERT_TRUE(limit.has_value());
  EXPECT_DOUBLE_EQ(*limit, 2.0);
  // A cgroup whose name only begins with the mount's is not under it.
  EXPECT_FALSE(cgroupCpuLimit("0::/docker/abcdef\n", "35 25 0:30 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
                              dir.path())
                   .has_value());
}

TEST(CpuQuota, NoMountOrNoFilesIsNoLimit) {
  ScratchDir dir;
  EXPECT_FALSE(cgroupCpuLimit("1:cpu:/job\n", "", dir.path()).has_value());
  EXPECT_FALSE(cgroupCpuLimit("1:cpu:/job\n", kV1Mounts, dir.path()).has_value());
  EXPECT_FALSE(cgroupCpuLimit("", kV1Mounts, dir.path()).has_value());
  EXPECT_GE(usableCores(), 1u);
}

}  // namespace
}  // namespace dispar::lang
