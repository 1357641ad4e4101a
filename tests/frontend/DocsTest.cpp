// docs/language.md lists every diagnostic of DisparDiagnostics.def, verbatim.
#include "streamcc/DriverOptions.h"

#include <gtest/gtest.h>

#include <cctype>
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

// Every option of disparcc's table (as --help prints it) is in its reference.
TEST(Docs, DisparccReferenceListsEveryOption) {
  std::string docs = read("docs/disparcc.md");
  std::istringstream help(dispar::streamcc::driverHelp());
  int count = 0;
  for (std::string line; std::getline(help, line);) {
    if (line.rfind("  -", 0) != 0) continue;
    std::string option = line.substr(2, line.find_first_of(" =", 2) - 2);
    // Joined metavariables (-IDIR, -O<level>) print without a space: keep the option's own letters.
    if (option.size() > 2 && option[1] != '-' && std::isupper(static_cast<unsigned char>(option[2])))
      option = option.substr(0, 2);
    ++count;
    EXPECT_NE(docs.find("`" + option), std::string::npos) << option << " is not in docs/disparcc.md";
  }
  EXPECT_GT(count, 10);
}

}  // namespace
