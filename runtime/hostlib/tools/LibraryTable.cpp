// Prints the cuBLAS and cuFFT calls of Cublas.def and Cufft.def as the Markdown list docs/libraries.md
// embeds (the test HostLibraryTable.DocsListExactlyTheTable compares the two).
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace {

struct Row {
  const char* name;
  const char* family;
};

const Row kCublas[] = {
#define DISPAR_CUBLAS_API(name, family, parameters, arguments) {#name, #family},
#include <dispar/hostlib/Cublas.def>
};
const char* const kCufft[] = {
#define DISPAR_CUFFT_API(name, parameters, arguments) #name,
#include <dispar/hostlib/Cufft.def>
};

}  // namespace

int main() {
  // cuBLAS grouped by family, in table order: "gemm: cublasSgemm, cublasDgemm, ...".
  std::vector<std::string> families;
  std::map<std::string, std::string> members;
  for (const Row& row : kCublas) {
    std::string& list = members[row.family];
    if (list.empty()) families.push_back(row.family);
    list += std::string(list.empty() ? "" : ", ") + "`" + row.name + "`";
  }
  std::printf("| cuBLAS family | calls |\n|---|---|\n");
  for (const std::string& family : families) std::printf("| %s | %s |\n", family.c_str(), members[family].c_str());
  std::printf("\n| cuFFT |\n|---|\n");
  for (const char* name : kCufft) std::printf("| `%s` |\n", name);
  return 0;
}
