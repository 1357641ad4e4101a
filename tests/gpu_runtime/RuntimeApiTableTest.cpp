// The dispatch table (<dispar/gpu/RuntimeApi.def>) names exactly the runtime functions dispar_hostk
// stands in for (<dispar/hostk/RuntimeApi.h>, and Textures.h for arrays, textures and surfaces): adding
// one to either without the other fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

std::set<std::string> tableNames() {
  std::set<std::string> names;
#define DISPAR_GPU_RUNTIME_API(name, parameters, arguments) names.insert(#name);
#define DISPAR_GPU_RUNTIME_SPECIAL(name) names.insert(#name);
#define DISPAR_GPU_RUNTIME_SYMBOL(name, symbolArgument) names.insert(#name);
#include <dispar/gpu/RuntimeApi.def>
  return names;
}

std::set<std::string> hostkNames() {
  std::ostringstream text;
  for (const char* header : {DISPAR_HOSTK_RUNTIME_API_HEADER, DISPAR_HOSTK_TEXTURES_HEADER}) {
    std::ifstream in(header);
    text << in.rdbuf() << "\n";
  }
  const std::string source = text.str();
  // Declarations at namespace scope: "cudaError_t cudaMemcpy(" or "const char* cudaGetErrorString(" (the
  // symbol functions are templates: "cudaError_t cudaMemcpyToSymbol(const T& symbol").
  const std::regex declaration(R"((?:^|\n)(?:cudaError_t|const char\*) (cuda[A-Za-z0-9]+)\()");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(source.begin(), source.end(), declaration); it != std::sregex_iterator(); ++it)
    names.insert((*it)[1].str());
  return names;
}

TEST(RuntimeApiTable, NamesExactlyTheHostkStandIns) {
  const std::set<std::string> hostk = hostkNames();
  ASSERT_GT(hostk.size(), 20u) << "could not read " << DISPAR_HOSTK_RUNTIME_API_HEADER;
  EXPECT_EQ(tableNames(), hostk);
}

}  // namespace
