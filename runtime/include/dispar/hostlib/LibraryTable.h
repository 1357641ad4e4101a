// The cuBLAS and cuFFT calls of Cublas.def and Cufft.def as the Markdown docs/libraries.md embeds
// (printed by hostlib_table; the test HostLibraryTable.DocsListExactlyTheTable compares the two).
#ifndef DISPAR_HOSTLIB_LIBRARYTABLE_H
#define DISPAR_HOSTLIB_LIBRARYTABLE_H

#include <map>
#include <string>
#include <vector>

namespace dispar::hostlib {

inline std::string libraryMarkdownTable() {
  struct Row {
    const char* name;
    const char* family;
  };
  static const Row kCublas[] = {
#define DISPAR_CUBLAS_API(name, family, parameters, arguments) {#name, #family},
#include <dispar/hostlib/Cublas.def>
  };
  static const char* const kCufft[] = {
#define DISPAR_CUFFT_API(name, parameters, arguments) #name,
#include <dispar/hostlib/Cufft.def>
  };
  // cuBLAS grouped by family, in table order.
  std::vector<std::string> families;
  std::map<std::string, std::string> members;
  for (const Row& row : kCublas) {
    std::string& list = members[row.family];
    if (list.empty()) families.push_back(row.family);
    list += std::string(list.empty() ? "" : ", ") + "`" + row.name + "`";
  }
  std::string table = "| cuBLAS family | calls |\n|---|---|\n";
  for (const std::string& family : families) table += "| " + family + " | " + members[family] + " |\n";
  table += "\n| cuFFT |\n|---|\n";
  for (const char* name : kCufft) table += std::string("| `") + name + "` |\n";
  return table;
}

}  // namespace dispar::hostlib

#endif  // DISPAR_HOSTLIB_LIBRARYTABLE_H
