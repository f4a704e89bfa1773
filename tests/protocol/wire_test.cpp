#include "protocol/wire.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <limits>

#include "protocol/hydra.h"
#include "protocol/lifecycle.h"

namespace hydra::protocol::wire_test {

namespace json = boost::json;

// Described structs outside hydra::protocol bring its conversions in.
using protocol::tag_invoke;

// Described structs of the test's own, nested, with each kind of member the
// generic reader and writer treat differently.
struct Entry {
  std::string name;
  std::vector<int> counts;
  std::optional<double> weight;

  static constexpr std::string_view wireRequired[] = {"name"};
};
BOOST_DESCRIBE_STRUCT(Entry, (), (name, counts, weight))

struct Listing {
  std::vector<Entry> entries;
  std::optional<Entry> pinned;
  std::optional<std::string> note;
  std::int64_t limit = 10;
  bool verbose = false;
  json::value extra;
  std::optional<ProgressToken> token;

  static constexpr std::string_view wireRequired[] = {"entries"};
};
BOOST_DESCRIBE_STRUCT(Listing, (), (entries, pinned, note, limit, verbose, extra, token))
inline void checkWire(const Listing& x) {
  if (x.limit < 1) throw ParamError("limit", "must be positive");
}

std::string errorOf(const char* text) {
  try {
    decode<Listing>(json::parse(text));
  } catch (const ParamError& e) {
    return e.path() + " | " + e.reason();
  }
  return "no error";
}

TEST(WireTest, ReadErrorsNameThePathOfTheBadMember) {
  EXPECT_EQ(errorOf(R"({})"), "entries | is required");
  EXPECT_EQ(errorOf(R"({"entries":{}})"), "entries | expected array, found object");
  EXPECT_EQ(errorOf(R"({"entries":[{"name":"a"},{}]})"), "entries[1].name | is required");
  EXPECT_EQ(errorOf(R"({"entries":[{"name":"a","counts":[1,"x"]}]})"),
            "entries[0].counts[1] | expected integer, found string");
  EXPECT_EQ(errorOf(R"({"entries":[],"pinned":{"name":3}})"), "pinned.name | expected string, found number");
  EXPECT_EQ(errorOf(R"({"entries":[],"limit":1.5})"), "limit | expected integer, found a fractional number");
  EXPECT_EQ(errorOf(R"({"entries":[],"verbose":"yes"})"), "verbose | expected boolean, found string");
  EXPECT_EQ(errorOf(R"({"entries":[],"token":true})"), "token | expected integer or string, found boolean");
  EXPECT_EQ(errorOf(R"("x")"), " | expected object, found string");
}

TEST(WireTest, TheTypesOwnCheckRunsAfterReading) {
  EXPECT_EQ(errorOf(R"({"entries":[],"limit":0})"), "limit | must be positive");
}

TEST(WireTest, AbsentOrNullMembersKeepTheirDefaultsAndUnknownOnesAreIgnored) {
  auto x = decode<Listing>(json::parse(R"({"entries":[],"note":null,"limit":null,"later":1})"));
  EXPECT_TRUE(x.entries.empty());
  EXPECT_FALSE(x.note);
  EXPECT_FALSE(x.pinned);
  EXPECT_EQ(x.limit, 10);
  EXPECT_FALSE(x.verbose);
  EXPECT_TRUE(x.extra.is_null());
}

TEST(WireTest, EmptyOptionalsAreLeftOutAndTheRestWrittenInDeclaredOrder) {
  Listing x;
  x.entries.push_back({"a", {1, 2}, std::nullopt});
  EXPECT_EQ(json::serialize(json::value_from(x)),
            R"({"entries":[{"name":"a","counts":[1,2]}],"limit":10,"verbose":false,"extra":null})");
}

struct Report {
  std::string name;
  std::vector<std::string> concerns;
  std::string tail;
  int denied = 0;
  std::optional<std::string> version;
  std::optional<std::string> path;

  static constexpr std::string_view wireOmitDefault[] = {"concerns", "tail", "denied"};
  static constexpr std::string_view wireNullable[] = {"version"};
};
BOOST_DESCRIBE_STRUCT(Report, (), (name, concerns, tail, denied, version, path))

TEST(WireTest, MembersAtTheirDefaultAreLeftOutOnlyWhenListed) {
  EXPECT_EQ(json::serialize(json::value_from(Report{})), R"({"name":"","version":null})");
  Report r{"n", {"c"}, "t", 2, "1.0", "/p"};
  EXPECT_EQ(json::serialize(json::value_from(r)),
            R"({"name":"n","concerns":["c"],"tail":"t","denied":2,"version":"1.0","path":"/p"})");
  Report back = decode<Report>(json::value_from(r));
  EXPECT_EQ(json::value_from(back), json::value_from(r));
  EXPECT_FALSE(decode<Report>(json::parse(R"({"version":null})")).version);
}

TEST(WireTest, ANonFiniteDoubleIsWrittenAsNull) {
  Entry e{"a", {}, std::numeric_limits<double>::infinity()};
  EXPECT_EQ(json::serialize(json::value_from(e)), R"({"name":"a","counts":[],"weight":null})");
}

TEST(WireTest, RoundTripKeepsEveryMember) {
  Listing x;
  x.entries = {{"a", {1}, 0.5}, {"b", {}, std::nullopt}};
  x.pinned = Entry{"p", {3, 4}, 2.0};
  x.note = "n";
  x.limit = 3;
  x.verbose = true;
  x.extra = json::parse(R"({"k":[1,"two"]})");
  x.token = ProgressToken{std::string("tok")};
  json::value written = json::value_from(x);
  Listing back = decode<Listing>(json::parse(json::serialize(written)));
  EXPECT_EQ(json::value_from(back), written);
  EXPECT_EQ(back.pinned->counts, (std::vector<int>{3, 4}));
  EXPECT_EQ(std::get<std::string>(*back.token), "tok");
}

TEST(WireTest, FieldNamesAreTheDescribedMembersInOrder) {
  EXPECT_EQ(wireFieldNames<Entry>(), (std::vector<std::string_view>{"name", "counts", "weight"}));
}

// The wire forms docs/protocol.md shows, read and written by the generic code.
TEST(WireTest, HydraParamsKeepTheirWireForm) {
  auto race = decode<RaceParams>(json::parse(R"({"task":"t","agents":["a","b"],"executor":"slurm","workDoneToken":7})"));
  EXPECT_EQ(json::serialize(json::value_from(race)),
            R"({"task":"t","agents":["a","b"],"executor":"slurm","workDoneToken":7})");
  EXPECT_EQ(json::serialize(json::value_from(decode<MergeParams>(json::parse(R"({"raceId":"r"})")))),
            R"({"raceId":"r","dryRun":false,"keep":false,"force":false})");
  try {
    decode<RaceParams>(json::parse(R"({"task":"t","agents":["a",""]})"));
    FAIL() << "expected ParamError";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.path(), "agents[1]");
  }
  try {
    decode<LogParams>(json::parse(R"({"raceId":"r"})"));
    FAIL() << "expected ParamError";
  } catch (const ParamError& e) {
    EXPECT_STREQ(e.what(), "agentId: is required");
  }
}

TEST(WireTest, ProgressValuesCarryTheirKindFirst) {
  WorkDoneProgressBegin b;
  b.title = "Racing";
  b.percentage = 5;
  EXPECT_EQ(json::serialize(json::value_from(b)), R"({"kind":"begin","title":"Racing","percentage":5})");
  EXPECT_EQ(json::serialize(json::value_from(WorkDoneProgressEnd{})), R"({"kind":"end"})");
  EXPECT_EQ(decode<WorkDoneProgressBegin>(json::parse(R"({"kind":"begin","title":"x"})")).title, "x");
  EXPECT_THROW(decode<WorkDoneProgressBegin>(json::parse(R"({"kind":"begin"})")), ParamError);
}

}  // namespace hydra::protocol::wire_test
