// JsonLayoutWriter writes what nlohmann::json::dump(2) writes (the layout the project's large files
// share), and its numbers read back exactly.
#include "dispar_lang/JsonLayout.h"
#include "dispar_lang/JsonRead.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

using dispar::lang::appendJsonNumber;
using dispar::lang::JsonLayoutWriter;

std::string number(double x) {
  std::string out;
  appendJsonNumber(out, x);
  return out;
}

TEST(JsonLayout, NumbersArePlacedAsNlohmannPlacesThem) {
  // Plain notation for decimal points from 10^-4 to 10^15, always a float; else an exponent.
  EXPECT_EQ(number(1.0), "1.0");
  EXPECT_EQ(number(-0.0), "-0.0");
  EXPECT_EQ(number(4e9), "4000000000.0");
  EXPECT_EQ(number(123.456), "123.456");
  EXPECT_EQ(number(0.00012), "0.00012");
  EXPECT_EQ(number(2e-05), "2e-05");
  EXPECT_EQ(number(1e14), "100000000000000.0");
  EXPECT_EQ(number(1e15), "1e+15");
  EXPECT_EQ(number(-2.5e-7), "-2.5e-07");
  EXPECT_EQ(number(1e300), "1e+300");
  EXPECT_EQ(number(5e-324), "5e-324");
  EXPECT_EQ(number(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(number(std::nan("")), "null");
  for (double x : {1.0, 4e9, 123.456, 0.00012, 2e-05, 1e14, 1e15, -2.5e-7, 1e300, 0.1})
    EXPECT_EQ(number(x), nlohmann::json(x).dump()) << x;
}

TEST(JsonLayout, EveryNumberReadsBackExactly) {
  std::mt19937_64 random(2026);
  for (int i = 0; i < 100000; ++i) {
    double x;
    const std::uint64_t bits = random();
    std::memcpy(&x, &bits, sizeof x);
    if (!std::isfinite(x)) continue;
    const std::string text = number(x);
    EXPECT_EQ(nlohmann::json::parse(text).get<double>(), x) << text;
    EXPECT_TRUE(nlohmann::json::parse(text).is_number_float()) << text;
  }
}

TEST(JsonLayout, WritesDumpTwosLayout) {
  std::string out;
  JsonLayoutWriter json(out);
  json.beginObject();
  json.string("name", "a \"quoted\"\tline\n\b\f\x01");
  json.integer("count", std::int64_t{-3});
  json.integer("bytes", std::uint64_t{18446744073709551615u});
  json.number("speed", 1.5);
  json.optional("missing", std::optional<int>());
  json.optional("rate", std::optional<double>(2.0));
  json.beginArray("empty");
  json.endArray();
  json.beginObject("nothing");
  json.endObject();
  json.beginArray("rows");
  json.beginObject();
  json.integer("id", 1);
  json.endObject();
  json.string(nullptr, "x");
  json.endArray();
  json.beginObject("inner");
  json.integer("a", 1);
  json.beginArray("b");
  json.integer(nullptr, 1);
  json.integer(nullptr, 2);
  json.endArray();
  json.endObject();
  json.endObject();

  nlohmann::ordered_json expected;
  expected["name"] = "a \"quoted\"\tline\n\b\f\x01";
  expected["count"] = -3;
  expected["bytes"] = std::uint64_t{18446744073709551615u};
  expected["speed"] = 1.5;
  expected["missing"] = nullptr;
  expected["rate"] = 2.0;
  expected["empty"] = nlohmann::ordered_json::array();
  expected["nothing"] = nlohmann::ordered_json::object();
  expected["rows"] = {{{"id", 1}}, "x"};
  expected["inner"] = {{"a", 1}, {"b", {1, 2}}};
  EXPECT_EQ(out, expected.dump(2));
}

}  // namespace

namespace {

// The pre-scan of streamJson counts the objects of each array directly inside the top-level value (the
// RTG's vertices and edges), for readers to reserve with; arrays deeper down and strings do not count.
TEST(JsonShape, CountsTheObjectsOfTheTopLevelValuesArrays) {
  const std::string text =
      R"({"a": [{}, 1, {"x": [{}, {}]}, "{"], "b": {"c": [{}]}, "d": [], "e": "[{}]", "f": [[{}], {"]": "["}]})";
  const dispar::lang::json_read_detail::JsonShape shape = dispar::lang::json_read_detail::scanShape(text, 128);
  EXPECT_EQ(shape.tooDeepAt, 0u);
  EXPECT_EQ(shape.objectsInMemberArrays, (std::vector<std::size_t>{2, 0, 1}));
  EXPECT_EQ(dispar::lang::json_read_detail::scanShape("[[[[]]]]", 3).tooDeepAt, 4u);
}

}  // namespace
