// The rewriting table StreamCC uses, and docs/cuda.md kept in sync with it.
#include <dispar/hostk.h>

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace {

namespace hk = ::dispar::hostk;

TEST(BuiltinsTable, CoversTheContractNames) {
  for (const char* name : {"threadIdx",
                           "blockIdx",
                           "blockDim",
                           "gridDim",
                           "warpSize",
                           "__syncthreads",
                           "__syncthreads_count",
                           "__syncthreads_and",
                           "__syncthreads_or",
                           "__threadfence",
                           "__threadfence_block",
                           "atomicAdd",
                           "atomicSub",
                           "atomicMin",
                           "atomicMax",
                           "atomicExch",
                           "atomicCAS",
                           "__expf",
                           "__logf",
                           "__sinf",
                           "__cosf",
                           "__powf",
                           "__fdividef",
                           "rsqrtf",
                           "__saturatef",
                           "__ldg",
                           "__fmaf_rn",
                           "__float2int_rn",
                           "min",
                           "max"})
    EXPECT_NE(hk::findBuiltin(name), nullptr) << name;
  for (const char* name :
       {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync", "__any_sync",
        "__all_sync", "__activemask", "__syncwarp", "__reduce_add_sync", "__match_any_sync"}) {
    ASSERT_NE(hk::findBuiltin(name), nullptr) << name;
    EXPECT_EQ(hk::findBuiltin(name)->kind, hk::BuiltinKind::Warp) << name;
  }
  EXPECT_EQ(hk::findBuiltin("__syncthreads")->kind, hk::BuiltinKind::Barrier);
  EXPECT_EQ(hk::findBuiltin("__shfl"), nullptr) << "the warp shuffles without _sync are gone from CUDA";
}

// Every Type and Function row of CooperativeGroups.def names something the host path declares.
namespace cooperative_groups_rows {
#define DISPAR_HOSTK_CG_Type(Name) using ::dispar::hostk::cooperative_groups::Name;
#define DISPAR_HOSTK_CG_Function(Name) using ::dispar::hostk::cooperative_groups::Name;
#define DISPAR_HOSTK_CG_Member(Name)
#define DISPAR_HOSTK_CG(Kind, Name) DISPAR_HOSTK_CG_##Kind(Name)
#include <dispar/hostk/CooperativeGroups.def>
#undef DISPAR_HOSTK_CG_Type
#undef DISPAR_HOSTK_CG_Function
#undef DISPAR_HOSTK_CG_Member
}  // namespace cooperative_groups_rows

TEST(BuiltinsTable, CooperativeGroupsTableNamesWhatTheHostPathProvides) {
  EXPECT_TRUE(hk::providesCooperativeGroupsName(hk::CooperativeGroupsKind::Function, "tiled_partition"));
  EXPECT_TRUE(hk::providesCooperativeGroupsName(hk::CooperativeGroupsKind::Member, "shfl_down"));
  EXPECT_TRUE(hk::providesCooperativeGroupsName(hk::CooperativeGroupsKind::Function, "this_grid"));
  EXPECT_TRUE(hk::providesCooperativeGroupsName(hk::CooperativeGroupsKind::Type, "coalesced_group"));
  EXPECT_FALSE(hk::providesCooperativeGroupsName(hk::CooperativeGroupsKind::Function, "this_cluster"));
  EXPECT_FALSE(hk::providesCooperativeGroupsName(hk::CooperativeGroupsKind::Type, "cluster_group"));
}

TEST(BuiltinsTable, NamesAreUniqueAndRewritesAreQualified) {
  std::set<std::string_view> seen;
  for (const hk::Builtin& builtin : hk::kBuiltins) {
    EXPECT_TRUE(seen.insert(builtin.cudaName).second) << "duplicate row " << builtin.cudaName;
    EXPECT_EQ(builtin.hostName.rfind("::dispar::hostk::", 0), 0u) << builtin.hostName;
  }
  EXPECT_EQ(hk::rewrittenUse(*hk::findBuiltin("threadIdx")), "::dispar::hostk::threadIdx()");
  EXPECT_EQ(hk::rewrittenUse(*hk::findBuiltin("warpSize")), "::dispar::hostk::warpSize");
  EXPECT_EQ(hk::rewrittenUse(*hk::findBuiltin("__syncthreads")), "::dispar::hostk::syncthreads");
  static_assert(hk::warpSize == 32);
}

TEST(BuiltinsTable, DocsListExactlyTheTable) {
  std::ifstream docs(DISPAR_CUDA_DOC);
  ASSERT_TRUE(docs) << "cannot read " << DISPAR_CUDA_DOC;
  std::stringstream text;
  text << docs.rdbuf();
  const std::string content = text.str();
  const std::string begin = "<!-- builtins-table:begin -->\n", end = "<!-- builtins-table:end -->";
  const auto from = content.find(begin), to = content.find(end);
  ASSERT_NE(from, std::string::npos) << "docs/cuda.md lacks the builtins-table markers";
  ASSERT_NE(to, std::string::npos);
  EXPECT_EQ(content.substr(from + begin.size(), to - from - begin.size()), hk::builtinsMarkdownTable())
      << "docs/cuda.md is out of date: regenerate the table with hostk_builtins_table";
}

}  // namespace
