// docs/libraries.md lists exactly the calls of Cublas.def and Cufft.def.
#include <dispar/hostlib/LibraryTable.h>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace {

TEST(HostLibraryTable, DocsListExactlyTheTable) {
  std::ifstream docs(DISPAR_LIBRARIES_DOC);
  ASSERT_TRUE(docs) << "cannot read " << DISPAR_LIBRARIES_DOC;
  std::stringstream text;
  text << docs.rdbuf();
  const std::string content = text.str();
  const std::string begin = "<!-- library-table:begin -->\n", end = "<!-- library-table:end -->";
  const auto from = content.find(begin), to = content.find(end);
  ASSERT_NE(from, std::string::npos) << "docs/libraries.md lacks the library-table markers";
  ASSERT_NE(to, std::string::npos);
  EXPECT_EQ(content.substr(from + begin.size(), to - from - begin.size()), dispar::hostlib::libraryMarkdownTable())
      << "docs/libraries.md is out of date: regenerate the table with hostlib_table";
}

}  // namespace
