#include "protocol/message.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <limits>

#include "protocol/errors.h"
#include "protocol/json_read.h"
#include "protocol/lifecycle.h"

namespace hydra::protocol {
namespace {

namespace json = boost::json;

InvalidMessage expectInvalid(std::string_view body) {
  ParseResult r = parseMessage(body);
  EXPECT_TRUE(std::holds_alternative<InvalidMessage>(r)) << body;
  if (auto* m = std::get_if<InvalidMessage>(&r)) return *m;
  return {};
}

Message expectValid(std::string_view body) {
  ParseResult r = parseMessage(body);
  if (auto* bad = std::get_if<InvalidMessage>(&r)) {
    ADD_FAILURE() << body << ": " << bad->error.message;
    return Notification{};
  }
  return std::get<Message>(r);
}

TEST(MessageTest, ParsesRequestWithIntegerId) {
  auto m = expectValid(R"({"jsonrpc":"2.0","id":7,"method":"hydra/ping","params":{"a":1}})");
  auto& r = std::get<Request>(m);
  EXPECT_EQ(std::get<std::int64_t>(r.id), 7);
  EXPECT_EQ(r.method, "hydra/ping");
  EXPECT_EQ(r.params.at("a").as_int64(), 1);
}

TEST(MessageTest, ParsesRequestWithStringIdAndArrayParams) {
  auto m = expectValid(R"({"jsonrpc":"2.0","id":"abc","method":"m","params":[1,2]})");
  auto& r = std::get<Request>(m);
  EXPECT_EQ(std::get<std::string>(r.id), "abc");
  EXPECT_TRUE(r.params.is_array());
}

TEST(MessageTest, AbsentParamsAreNull) {
  auto m = expectValid(R"({"jsonrpc":"2.0","id":1,"method":"shutdown"})");
  EXPECT_TRUE(std::get<Request>(m).params.is_null());
}

TEST(MessageTest, ParsesNotification) {
  auto m = expectValid(R"({"jsonrpc":"2.0","method":"initialized","params":{}})");
  EXPECT_EQ(std::get<Notification>(m).method, "initialized");
}

TEST(MessageTest, ParsesResultAndErrorResponses) {
  auto ok = expectValid(R"({"jsonrpc":"2.0","id":"hydra-1","result":null})");
  auto& r = std::get<Response>(ok);
  EXPECT_FALSE(r.isError());
  EXPECT_EQ(std::get<std::string>(*r.id), "hydra-1");

  auto err = expectValid(R"({"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope","data":[1]}})");
  auto& e = std::get<ResponseError>(std::get<Response>(err).outcome);
  EXPECT_EQ(e.code, -32601);
  EXPECT_EQ(e.message, "nope");
  EXPECT_TRUE(e.data.is_array());
}

TEST(MessageTest, ErrorResponseMayHaveNullId) {
  auto m = expectValid(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}})");
  EXPECT_FALSE(std::get<Response>(m).id.has_value());
}

TEST(MessageTest, MalformedJsonIsAParseErrorWithNullId) {
  auto m = expectInvalid(R"({"jsonrpc":"2.0","id":1,"method":)");
  EXPECT_EQ(m.error.code, static_cast<int>(ErrorCode::ParseError));
  EXPECT_FALSE(m.id);
  EXPECT_TRUE(m.reply);
}

struct InvalidCase {
  const char* name;
  const char* body;
  std::optional<std::int64_t> id;  // the id the error is answered to
  bool reply;
  const char* messagePart;
};

class InvalidRequestTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidRequestTest, IsInvalidRequest) {
  const auto& c = GetParam();
  auto m = expectInvalid(c.body);
  EXPECT_EQ(m.error.code, static_cast<int>(ErrorCode::InvalidRequest));
  EXPECT_EQ(m.reply, c.reply);
  if (c.id) {
    ASSERT_TRUE(m.id);
    EXPECT_EQ(std::get<std::int64_t>(*m.id), *c.id);
  } else {
    EXPECT_FALSE(m.id);
  }
  EXPECT_NE(m.error.message.find(c.messagePart), std::string::npos) << m.error.message;
}

INSTANTIATE_TEST_SUITE_P(
    Message, InvalidRequestTest,
    ::testing::Values(
        InvalidCase{"NotAnObject", "42", std::nullopt, true, "must be a JSON object"},
        InvalidCase{"Batch", R"([{"jsonrpc":"2.0","id":1,"method":"m"}])", std::nullopt, true, "batch"},
        InvalidCase{"MissingJsonrpc", R"({"id":1,"method":"m"})", 1, true, "'jsonrpc' must be \"2.0\""},
        InvalidCase{"WrongJsonrpc", R"({"jsonrpc":"1.0","id":2,"method":"m"})", 2, true, "'jsonrpc'"},
        InvalidCase{"JsonrpcNotString", R"({"jsonrpc":2,"id":3,"method":"m"})", 3, true, "'jsonrpc'"},
        InvalidCase{"MethodNotString", R"({"jsonrpc":"2.0","id":4,"method":5})", 4, true, "'method' must be a string"},
        InvalidCase{"IdIsObject", R"({"jsonrpc":"2.0","id":{},"method":"m"})", std::nullopt, true, "'id' must be"},
        InvalidCase{"IdIsFractional", R"({"jsonrpc":"2.0","id":1.5,"method":"m"})", std::nullopt, true, "'id' must be"},
        InvalidCase{"IdIsBool", R"({"jsonrpc":"2.0","id":true,"method":"m"})", std::nullopt, true, "'id' must be"},
        InvalidCase{"IdIsNullInRequest", R"({"jsonrpc":"2.0","id":null,"method":"m"})", std::nullopt, true, "must not be null"},
        InvalidCase{"ParamsIsString", R"({"jsonrpc":"2.0","id":5,"method":"m","params":"x"})", 5, true, "'params' must be"},
        InvalidCase{"ParamsIsNumber", R"({"jsonrpc":"2.0","id":6,"method":"m","params":1})", 6, true, "'params' must be"},
        InvalidCase{"NotificationWithBadParams", R"({"jsonrpc":"2.0","method":"m","params":1})", std::nullopt, false, "'params' must be"},
        InvalidCase{"NeitherMethodNorId", R"({"jsonrpc":"2.0"})", std::nullopt, true, "needs a 'method'"},
        InvalidCase{"ResponseWithBoth", R"({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}})", std::nullopt, true, "exactly one"},
        InvalidCase{"ResponseWithBadError", R"({"jsonrpc":"2.0","id":1,"error":"x"})", std::nullopt, true, "'error' must be"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(MessageTest, SerializesEachKind) {
  EXPECT_EQ(serialize(Request{RequestId{std::int64_t{1}}, "m", json::object{{"a", 1}}}),
            R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}})");
  EXPECT_EQ(serialize(Notification{"n", nullptr}), R"({"jsonrpc":"2.0","method":"n"})");
  EXPECT_EQ(serialize(Response{RequestId{std::string("x")}, json::value(true)}),
            R"({"jsonrpc":"2.0","id":"x","result":true})");
  EXPECT_EQ(serialize(Response{std::nullopt, ResponseError{-32700, "bad", nullptr}}),
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}})");
}

TEST(MessageTest, RoundTripsThroughParse) {
  Message original = Request{RequestId{std::string("id-1")}, "hydra/ping", json::object{{"data", "é"}}};
  auto back = expectValid(serialize(original));
  EXPECT_EQ(serialize(back), serialize(original));
}

// --- json_read -------------------------------------------------------------

struct Inner {
  std::string name;
  std::vector<int> counts;
};
Inner tag_invoke(json::value_to_tag<Inner>, const json::value& v) {
  ObjectReader r(v);
  Inner x;
  r.required("name", x.name);
  r.optional("counts", x.counts);
  return x;
}
struct Outer {
  std::vector<Inner> items;
  std::optional<bool> flag;
};
Outer tag_invoke(json::value_to_tag<Outer>, const json::value& v) {
  ObjectReader r(v);
  Outer x;
  r.required("items", x.items);
  r.optional("flag", x.flag);
  return x;
}

std::string errorPath(const char* text) {
  try {
    decode<Outer>(json::parse(text));
  } catch (const ParamError& e) {
    return e.path() + " | " + e.reason();
  }
  return "no error";
}

TEST(JsonReadTest, ReportsThePathOfTheBadField) {
  EXPECT_EQ(errorPath(R"({})"), "items | is required");
  EXPECT_EQ(errorPath(R"({"items":3})"), "items | expected array, found number");
  EXPECT_EQ(errorPath(R"({"items":[{"name":"a"},{"name":7}]})"), "items[1].name | expected string, found number");
  EXPECT_EQ(errorPath(R"({"items":[{"name":"a","counts":[1,"x"]}]})"),
            "items[0].counts[1] | expected integer, found string");
  EXPECT_EQ(errorPath(R"({"items":[{"name":"a","counts":[1.5]}]})"),
            "items[0].counts[0] | expected integer, found a fractional number");
  EXPECT_EQ(errorPath(R"({"items":[],"flag":"yes"})"), "flag | expected boolean, found string");
  EXPECT_EQ(errorPath(R"([])"), " | expected object, found array");
}

TEST(JsonReadTest, IntegersOutOfRangeAreRejected) {
  EXPECT_THROW(decode<int>(json::value(std::int64_t{1} << 40)), ParamError);
  EXPECT_THROW(decode<unsigned>(json::value(-1)), ParamError);
  EXPECT_EQ(decode<std::int64_t>(json::value(-5)), -5);
}

TEST(JsonReadTest, NullAndAbsentOptionalFieldsKeepDefaults) {
  auto o = decode<Outer>(json::parse(R"({"items":[],"flag":null})"));
  EXPECT_FALSE(o.flag);
}

// --- lifecycle wire types --------------------------------------------------

TEST(LifecycleTypesTest, InitializeParamsReadTheFieldsClientsSend) {
  auto p = decode<InitializeParams>(json::parse(R"({
    "processId": 1234, "rootUri": "file:///tmp/x", "clientInfo": {"name": "Neovim", "version": "0.10.4"},
    "capabilities": {"window": {"workDoneProgress": true}}, "trace": "off", "unknownField": 1})"));
  EXPECT_EQ(p.processId, 1234);
  EXPECT_EQ(p.clientInfo->name, "Neovim");
  EXPECT_TRUE(p.supportsWorkDoneProgress());
}

TEST(LifecycleTypesTest, ProcessIdMayBeNull) {
  auto p = decode<InitializeParams>(json::parse(R"({"processId": null, "capabilities": {}})"));
  EXPECT_FALSE(p.processId);
  EXPECT_FALSE(p.supportsWorkDoneProgress());
}

TEST(LifecycleTypesTest, ProgressValuesCarryTheirKind) {
  WorkDoneProgressBegin b;
  b.title = "Racing";
  b.percentage = 10;
  EXPECT_EQ(json::serialize(json::value_from(b)), R"({"kind":"begin","title":"Racing","percentage":10})");
  EXPECT_EQ(json::serialize(json::value_from(WorkDoneProgressEnd{})), R"({"kind":"end"})");
  auto back = decode<WorkDoneProgressBegin>(json::value_from(b));
  EXPECT_EQ(back.title, "Racing");
}

TEST(LifecycleTypesTest, PingRejectsAnUnreasonableDelay) {
  try {
    decode<PingParams>(json::parse(R"({"delayMs": 3600000})"));
    FAIL() << "expected ParamError";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.path(), "delayMs");
  }
}

TEST(LifecycleTypesTest, ShowMessageTypeIsValidated) {
  EXPECT_THROW(decode<ShowMessageParams>(json::parse(R"({"type":9,"message":"x"})")), ParamError);
  auto m = decode<ShowMessageParams>(json::parse(R"({"type":2,"message":"careful"})"));
  EXPECT_EQ(m.type, MessageType::Warning);
}

// --- JSON every reader accepts -------------------------------------------------

// Boost.JSON 1.81 reads 1e999 as infinity and would print it back as
// `Infinity`: a request carrying one is refused with the path of the number.
TEST(MessageTest, NonFiniteNumberInParamsIsInvalidParamsNamingItsPath) {
  auto m = expectInvalid(
      R"({"jsonrpc":"2.0","id":4,"method":"hydra/ping","params":{"data":[1,-1e999]}})");
  EXPECT_EQ(m.error.code, static_cast<int>(ErrorCode::InvalidParams));
  ASSERT_TRUE(m.id);
  EXPECT_EQ(std::get<std::int64_t>(*m.id), 4);
  EXPECT_TRUE(m.reply);
  EXPECT_EQ(m.error.data, (json::object{{"path", "params.data[1]"}}));
  EXPECT_NE(m.error.message.find("params.data[1]"), std::string::npos) << m.error.message;

  auto top = expectInvalid(R"({"jsonrpc":"2.0","id":"a","method":"m","params":[1e400]})");
  EXPECT_EQ(top.error.data, (json::object{{"path", "params[0]"}}));
}

TEST(MessageTest, NonFiniteNumberInANotificationIsDroppedUnanswered) {
  auto m = expectInvalid(R"({"jsonrpc":"2.0","method":"m","params":{"x":{"y":1e999}}})");
  EXPECT_EQ(m.error.code, static_cast<int>(ErrorCode::InvalidParams));
  EXPECT_FALSE(m.reply);
}

TEST(MessageTest, NonFiniteNumberInAResponseIsInvalid) {
  auto m = expectInvalid(R"({"jsonrpc":"2.0","id":"hydra-1","result":{"n":1e999}})");
  EXPECT_EQ(m.error.code, static_cast<int>(ErrorCode::InvalidRequest));
  EXPECT_NE(m.error.message.find("result.n"), std::string::npos) << m.error.message;
  auto e =
      expectInvalid(R"({"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"x","data":1e999}})");
  EXPECT_NE(e.error.message.find("error.data"), std::string::npos) << e.error.message;
}

TEST(MessageTest, NumbersThatAreLargeButFiniteAndMembersHydraIgnoresAreAccepted) {
  auto m = expectValid(
      R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1e308,"b":1e-999,"c":123456789012345678901234567890},"x":1e999})");
  const auto& params = std::get<Request>(m).params;
  EXPECT_EQ(params.at("a").as_double(), 1e308);
  EXPECT_EQ(params.at("b").as_double(), 0.0);
}

TEST(MessageTest, SerializeWritesNonFiniteNumbersAsNull) {
  json::object result{{"inf", std::numeric_limits<double>::infinity()},
                      {"nan", std::numeric_limits<double>::quiet_NaN()},
                      {"list", json::array{1.5, -std::numeric_limits<double>::infinity()}}};
  std::string text = serialize(Message{Response{RequestId{std::int64_t{1}}, json::value(result)}});
  EXPECT_EQ(text,
            R"({"jsonrpc":"2.0","id":1,"result":{"inf":null,"nan":null,"list":[1.5E0,null]}})");
  EXPECT_NO_THROW(json::parse(text));
}

TEST(MessageTest, SerializeRepairsIllFormedUtf8InStringsAndNames) {
  json::object params{{"line", "ok \xFF\xC3 end"}, {"n\xE2\x82", 1}};
  std::string text = serialize(Message{Notification{"m", json::value(params)}});
  EXPECT_TRUE(isValidUtf8(text)) << text;
  json::value back = json::parse(text);  // Boost.JSON refuses ill-formed UTF-8
  EXPECT_EQ(back.at("params").at("line").as_string(), "ok \xEF\xBF\xBD\xEF\xBF\xBD end");
  EXPECT_EQ(back.at("params").at("n\xEF\xBF\xBD").as_int64(), 1);
}

TEST(MessageTest, SerializeLeavesCleanValuesAsBoostWritesThem) {
  json::value v = json::parse(R"({"a":[1,2.5,"é",null,true],"b":{"c":"\u0001"}})");
  EXPECT_EQ(serializeJson(v), json::serialize(v));
}

struct Utf8Case {
  const char* name;
  std::string bytes;
  bool valid;
  std::string repaired;
};

class Utf8Test : public ::testing::TestWithParam<Utf8Case> {};

TEST_P(Utf8Test, IsJudgedAndRepairedAsUnicodeSays) {
  const auto& c = GetParam();
  EXPECT_EQ(isValidUtf8(c.bytes), c.valid);
  EXPECT_EQ(makeValidUtf8(c.bytes), c.repaired);
  EXPECT_TRUE(isValidUtf8(makeValidUtf8(c.bytes)));
}

const std::string kFffd = "\xEF\xBF\xBD";

INSTANTIATE_TEST_SUITE_P(
    Protocol, Utf8Test,
    ::testing::Values(Utf8Case{"Ascii", "plain", true, "plain"},
                      Utf8Case{"TwoThreeFourBytes", "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", true,
                               "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"},
                      Utf8Case{"LoneContinuation",
                               "a\x80"
                               "b",
                               false, "a" + kFffd + "b"},
                      Utf8Case{"OverlongC0", "\xC0\xAF", false, kFffd + kFffd},
                      Utf8Case{"OverlongE0", "\xE0\x80\xAF", false, kFffd + kFffd + kFffd},
                      Utf8Case{"Surrogate", "\xED\xA0\x80", false, kFffd + kFffd + kFffd},
                      Utf8Case{"AboveMax", "\xF4\x90\x80\x80", false,
                               kFffd + kFffd + kFffd + kFffd},
                      Utf8Case{"TruncatedIsOneMaximalSubpart",
                               "\xE2\x82"
                               "A",
                               false, kFffd + "A"},
                      Utf8Case{"TruncatedAtEnd", "x\xF0\x9F\x98", false, "x" + kFffd},
                      Utf8Case{"Ff", "\xFF", false, kFffd}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(JsonReadTest, NonFiniteDoubleIsAParamError) {
  EXPECT_THROW(decode<double>(json::value(std::numeric_limits<double>::infinity())), ParamError);
  EXPECT_THROW(decode<double>(json::value(std::numeric_limits<double>::quiet_NaN())), ParamError);
  EXPECT_EQ(decode<double>(json::value(2.5)), 2.5);
}

}  // namespace
}  // namespace hydra::protocol
