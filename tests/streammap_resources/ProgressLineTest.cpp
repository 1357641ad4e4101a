// Progress of long operations (streammap/ProgressLine.h): drawn in place on a terminal, erased at the
// end, absent when the output is not a terminal; and `cluster import` reporting through it.
#include "TestSupport.h"

#include "streammap/ClusterJson.h"
#include "streammap/ProgressLine.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace dispar::streammap {
namespace {

std::string contentsOf(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  for (int c; (c = std::fgetc(file)) != EOF;) text.push_back(char(c));
  return text;
}

TEST(ProgressLine, DrawsFirstAndLastUpdateInPlaceAndErasesItsLine) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  {
    ProgressLine progress("importing nodes", file, /*shown=*/true);
    progress.update(0, 600);
    progress.update(600, 600);
  }
  // Each update rewrites the line from its start; the end blanks the widest line drawn and returns.
  EXPECT_EQ(contentsOf(file),
            "\rimporting nodes: 0 of 600\rimporting nodes: 600 of 600\r" + std::string(27, ' ') + "\r");
  std::fclose(file);
}

TEST(ProgressLine, WritesNothingWhereNotShown) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  {
    ProgressLine progress("importing nodes", file, /*shown=*/false);
    progress.update(0, 600);
    progress.update(600, 600);
  }
  EXPECT_EQ(contentsOf(file), "");
  std::fclose(file);
}

TEST(ProgressLine, ATmpfileIsNotATerminal) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  {
    ProgressLine progress("importing nodes", file);
    progress.update(600, 600);
  }
  EXPECT_EQ(contentsOf(file), "");
  std::fclose(file);
}

// `cluster import` of 600 nodes (three write batches): on a terminal (util-linux `script` gives the
// command one) the progress is drawn and erased; piped, stderr carries none of it.
TEST(ProgressLine, ClusterImportReportsProgressOnATerminalOnly) {
  test::TempDir dir;
  Cluster paper4;
  std::string error;
  ASSERT_TRUE(readClusterJsonFile(std::string(DISPAR_EXAMPLES_DIR) + "/paper4.json", paper4, error)) << error;
  Cluster big;
  for (int i = 0; i < 600; ++i) {
    NodeInfo node = paper4.nodes[std::size_t(i) % paper4.nodes.size()];
    char host[16];
    std::snprintf(host, sizeof host, "n%04d", i);
    node.host = host;
    big.nodes.push_back(node);
  }
  test::writeFile(dir.file("big.json"), writeClusterJson(big));
  const std::string import = std::string(DISPAR_RESOURCES_CLI) + " cluster import " + dir.file("big.json") + " --db ";

  int status = 0;
  std::string onTerminal =
      test::runCommand("script -qec '" + import + dir.file("t.db") + " >/dev/null' /dev/null", &status);
  EXPECT_EQ(status, 0) << onTerminal;
  EXPECT_NE(onTerminal.find("\rimporting nodes: 600 of 600"), std::string::npos) << onTerminal;
  EXPECT_NE(onTerminal.find("\r" + std::string(27, ' ') + "\r"), std::string::npos) << onTerminal;  // erased

  std::string piped = test::runCommand(import + dir.file("p.db") + " 2>&1", &status);
  EXPECT_EQ(status, 0) << piped;
  EXPECT_NE(piped.find("imported 600 nodes"), std::string::npos) << piped;
  EXPECT_EQ(piped.find("importing nodes"), std::string::npos) << piped;
  EXPECT_EQ(piped.find('\r'), std::string::npos) << piped;
}

}  // namespace
}  // namespace dispar::streammap
