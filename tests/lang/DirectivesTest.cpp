#include "dispar_lang/Directives.h"

#include <gtest/gtest.h>

namespace dispar::lang {
namespace {

TEST(ByteSize, ParsesUnits) {
  EXPECT_EQ(parseByteSize("4096"), 4096u);
  EXPECT_EQ(parseByteSize("4096B"), 4096u);
  EXPECT_EQ(parseByteSize("512MiB"), 512ull << 20);
  EXPECT_EQ(parseByteSize("2GiB"), 2ull << 30);
  EXPECT_EQ(parseByteSize("1MB"), 1000000u);
  EXPECT_EQ(parseByteSize("3kB"), 3000u);
  EXPECT_EQ(parseByteSize("0"), 0u);
}

TEST(ByteSize, RejectsMalformed) {
  EXPECT_FALSE(parseByteSize(""));
  EXPECT_FALSE(parseByteSize("MiB"));
  EXPECT_FALSE(parseByteSize("-1"));
  EXPECT_FALSE(parseByteSize("12 MiB"));
  EXPECT_FALSE(parseByteSize("1.5GiB"));
  EXPECT_FALSE(parseByteSize("3furlongs"));
  EXPECT_FALSE(parseByteSize("99999999999999999999"));
  EXPECT_FALSE(parseByteSize("20000000TiB"));
}

TEST(ClauseTable, EveryDirectiveHasOneLeadingClause) {
  int resource = 0, communication = 0;
  for (const ClauseSpec& c : kClauseTable) {
    if (!c.leading) continue;
    (c.directive == DirectiveKind::Resource ? resource : communication)++;
  }
  EXPECT_EQ(resource, 1);
  EXPECT_EQ(communication, 1);
  ASSERT_NE(findClause("replicas"), nullptr);
  EXPECT_EQ(findClause("replicas")->arg, ClauseArgKind::PositiveInt);
  EXPECT_EQ(findClause("bogus"), nullptr);
}

}  // namespace
}  // namespace dispar::lang
