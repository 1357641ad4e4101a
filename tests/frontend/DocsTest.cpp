// docs/language.md lists every diagnostic of DisparDiagnostics.def, verbatim.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

namespace {

std::string read(const std::string& relative) {
  std::ifstream in(std::string(DISPAR_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Docs, LanguageReferenceListsEveryDiagnostic) {
  std::string table = read("frontend/include/frontend/DisparDiagnostics.def");
  std::string docs = read("docs/language.md");
  std::size_t begin = docs.find("<!-- diagnostics:begin -->"), end = docs.find("<!-- diagnostics:end -->");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  std::string listed = docs.substr(begin, end - begin);
  std::regex entry(R"re(^DIAG\((\w+), (\w+), "(.*)"\)$)re");
  int count = 0;
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, entry)) continue;
    ++count;
    EXPECT_NE(listed.find("`" + m[3].str() + "`"), std::string::npos) << m[1] << " is not in docs/language.md";
  }
  EXPECT_GT(count, 20);
}

}  // namespace
