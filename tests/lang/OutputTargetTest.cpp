// The one rule for writing a file a user named (dispar_lang/OutputTarget.h): new and regular files are
// written, a link's target is written, devices, FIFOs, directories and read-only files are refused.
#include "dispar_lang/OutputTarget.h"

#include "Process.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace dispar::lang {
namespace {

class OutputTargets : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return scratch_.file(name); }
  void write(const std::string& name, unsigned mode) const {
    scratch_.write(name, "old");
    ASSERT_EQ(::chmod(path(name).c_str(), mode), 0);
  }
  std::string refusal(const std::string& name) const {
    OutputTarget target;
    std::string error;
    EXPECT_FALSE(resolveOutputTarget(name, target, error)) << name;
    return error;
  }
  dispar::testing::ScratchDir scratch_;
};

TEST_F(OutputTargets, NewAndRegularFilesAreWrittenKeepingTheirMode) {
  OutputTarget target;
  std::string error;
  ASSERT_TRUE(resolveOutputTarget(path("new.txt"), target, error)) << error;
  EXPECT_FALSE(target.exists);
  EXPECT_EQ(target.path, path("new.txt"));
  write("kept.txt", 0640);
  ASSERT_TRUE(resolveOutputTarget(path("kept.txt"), target, error)) << error;
  EXPECT_TRUE(target.exists);
  EXPECT_EQ(target.mode, 0640u);
  // The replacement gets the mode.
  write("temporary", 0644);
  ASSERT_TRUE(keepTargetMode(path("temporary"), target, error)) << error;
  struct stat st{};
  ASSERT_EQ(::stat(path("temporary").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST_F(OutputTargets, ALinksTargetIsWrittenAndTheLinkStays) {
  write("real.txt", 0600);
  ASSERT_EQ(::symlink(path("real.txt").c_str(), path("link.txt").c_str()), 0);
  OutputTarget target;
  std::string error;
  ASSERT_TRUE(resolveOutputTarget(path("link.txt"), target, error)) << error;
  char resolved[4096];
  ASSERT_NE(::realpath(path("real.txt").c_str(), resolved), nullptr);
  EXPECT_EQ(target.path, std::string(resolved));
  EXPECT_EQ(target.mode, 0600u);
  ASSERT_EQ(::symlink(path("absent").c_str(), path("dangling").c_str()), 0);
  EXPECT_NE(refusal(path("dangling")).find("a symbolic link to a missing file"), std::string::npos);
}

TEST_F(OutputTargets, DevicesFifosDirectoriesAndReadOnlyFilesAreRefused) {
  // Only looked at (lstat): nothing here can replace /dev/null even if the rule were wrong.
  EXPECT_NE(refusal("/dev/null").find("'/dev/null': is a character device; not replaced"), std::string::npos);
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0644), 0);
  EXPECT_NE(refusal(path("fifo")).find("is a FIFO; not replaced"), std::string::npos);
  ASSERT_EQ(::symlink(path("fifo").c_str(), path("to-fifo").c_str()), 0);
  EXPECT_NE(refusal(path("to-fifo")).find("(a link to '"), std::string::npos);
  EXPECT_NE(refusal(scratch_.path()).find("is a directory"), std::string::npos);
  write("readonly.txt", 0444);
  EXPECT_NE(refusal(path("readonly.txt")).find("is read-only; not replaced"), std::string::npos);
  EXPECT_NE(refusal(path("no/such/dir/file")).find("no directory"), std::string::npos);
  EXPECT_NE(refusal("").find("empty output path"), std::string::npos);
}

// Issue 36, item 4: a path may hold anything; the refusal prints it escaped (DisplayText.h), so that a
// newline in it cannot forge a second message.
TEST_F(OutputTargets, RefusalsPrintThePathEscaped) {
  const std::string error = refusal(path("no\nstreammap: error: forged/\x1b[2Jfile"));
  EXPECT_NE(error.find("no\\nstreammap: error: forged/\\x1b[2Jfile': no directory '"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_EQ(error.find('\x1b'), std::string::npos) << error;
}

}  // namespace
}  // namespace dispar::lang
