#include <switchboard/jsonrpc/message.hpp>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

namespace json = boost::json;
namespace rpc = switchboard::jsonrpc;
using Kind = rpc::Message::Kind;

TEST(ParseMessage, Request) {
    auto m = rpc::parse_message(R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"x"}})");
    ASSERT_TRUE(m.has_value()) << m.error().message;
    EXPECT_EQ(m->kind, Kind::request);
    EXPECT_EQ(m->id, json::value(7));
    EXPECT_EQ(m->method, "tools/list");
    EXPECT_EQ(m->params, json::parse(R"({"cursor":"x"})"));
}

TEST(ParseMessage, RequestWithStringId) {
    auto m = rpc::parse_message(R"({"jsonrpc":"2.0","id":"abc","method":"ping"})");
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->kind, Kind::request);
    EXPECT_EQ(m->id, json::value("abc"));
    EXPECT_TRUE(m->params.is_null());
}

TEST(ParseMessage, Notification) {
    auto m = rpc::parse_message(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->kind, Kind::notification);
    EXPECT_EQ(m->method, "notifications/initialized");
    EXPECT_TRUE(m->id.is_null());
}

TEST(ParseMessage, ResultResponse) {
    auto m = rpc::parse_message(R"({"jsonrpc":"2.0","id":3,"result":{"x":[1,2]}})");
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->kind, Kind::response);
    EXPECT_EQ(m->id, json::value(3));
    EXPECT_FALSE(m->error.has_value());
    EXPECT_EQ(m->result, json::parse(R"({"x":[1,2]})"));
}

TEST(ParseMessage, ErrorResponse) {
    auto m = rpc::parse_message(
        R"({"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found","data":{"m":"x"}}})");
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->kind, Kind::response);
    ASSERT_TRUE(m->error.has_value());
    EXPECT_EQ(m->error->code, rpc::code::method_not_found);
    EXPECT_EQ(m->error->message, "Method not found");
    EXPECT_EQ(m->error->data, json::parse(R"({"m":"x"})"));
    EXPECT_FALSE(m->error->local);
}

TEST(ParseMessage, InvalidJsonIsParseError) {
    auto m = rpc::parse_message("this is not json");
    ASSERT_FALSE(m.has_value());
    EXPECT_EQ(m.error().code, rpc::code::parse_error);
    auto m2 = rpc::parse_message(R"({"jsonrpc":"2.0","id":1,"method":)");
    ASSERT_FALSE(m2.has_value());
    EXPECT_EQ(m2.error().code, -32700);
}

TEST(ParseMessage, BatchIsInvalidRequest) {
    auto m = rpc::parse_message(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])");
    ASSERT_FALSE(m.has_value());
    EXPECT_EQ(m.error().code, rpc::code::invalid_request);
}

TEST(ParseMessage, MissingOrWrongJsonrpcIsInvalidRequest) {
    auto m = rpc::parse_message(R"({"id":1,"method":"ping"})");
    ASSERT_FALSE(m.has_value());
    EXPECT_EQ(m.error().code, -32600);
    auto m2 = rpc::parse_message(R"({"jsonrpc":"1.0","id":1,"method":"ping"})");
    ASSERT_FALSE(m2.has_value());
    EXPECT_EQ(m2.error().code, -32600);
}

TEST(ParseMessage, NonObjectIsInvalidRequest) {
    auto m = rpc::parse_message("42");
    ASSERT_FALSE(m.has_value());
    EXPECT_EQ(m.error().code, rpc::code::invalid_request);
}

TEST(ParseMessage, NullIdOnRequestIsRejected) {
    auto m = rpc::parse_message(R"({"jsonrpc":"2.0","id":null,"method":"ping"})");
    ASSERT_FALSE(m.has_value());
    EXPECT_EQ(m.error().code, rpc::code::invalid_request);
}

TEST(ParseMessage, NonStringMethodIsRejected) {
    auto m = rpc::parse_message(R"({"jsonrpc":"2.0","id":1,"method":5})");
    ASSERT_FALSE(m.has_value());
    EXPECT_EQ(m.error().code, rpc::code::invalid_request);
}

TEST(ParseMessage, ResultWithoutIdIsRejected) {
    auto m = rpc::parse_message(R"({"jsonrpc":"2.0","result":{}})");
    ASSERT_FALSE(m.has_value());
    EXPECT_EQ(m.error().code, rpc::code::invalid_request);
}

TEST(ParseMessage, NeitherMethodResultNorErrorIsRejected) {
    auto m = rpc::parse_message(R"({"jsonrpc":"2.0","id":1})");
    ASSERT_FALSE(m.has_value());
    EXPECT_EQ(m.error().code, rpc::code::invalid_request);
}

// A number too big for a double would be read as infinity and written back as `Infinity`, which is not JSON (the fuzz
// target found it as an error response's id): such a message is a parse error, wherever the number is.
TEST(ParseMessage, NumbersTooBigForADoubleAreAParseError) {
    for (const char* text : {R"({"jsonrpc":"2.0","id":7222222222222e2222222,"error":{}})",
                             R"({"jsonrpc":"2.0","method":"x","params":{"a":[1,-1e999]}})",
                             R"({"jsonrpc":"2.0","id":1,"result":{"n":0e400}})"}) {
        auto m = rpc::parse_message(text);
        ASSERT_FALSE(m.has_value()) << text;
        EXPECT_EQ(m.error().code, rpc::code::parse_error) << text;
        EXPECT_EQ(m.error().message, "Parse error: a number too large for a double");
    }
    auto fine = rpc::parse_message(R"({"jsonrpc":"2.0","id":1,"result":{"n":1.5e300,"small":1e-400}})");
    ASSERT_TRUE(fine.has_value()) << fine.error().message;
}

// parse_message reads the envelope from the parser's events, without the DOM of the whole message: it must say exactly
// what parsing the whole text and reading that value says, for every message and every mistake in one.
rpc::Outcome<rpc::Message> parse_whole(std::string_view text) {
    json::parse_options options;
    options.max_depth = rpc::max_message_depth;
    json::error_code ec;
    auto v = json::parse(text, ec, json::storage_ptr(), options);
    if (ec) return rpc::parse_error(ec);
    return rpc::parse_message(std::move(v), {});
}

TEST(ParseMessage, TheEnvelopeReadFromEventsIsTheOneReadFromTheWholeValue) {
    const std::vector<std::string> texts = {
        R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"a":[1,2.5,null,true]}}})",
        R"( {"method":"x","jsonrpc":"2.0"} )",
        R"({"jsonrpc":"2.0","id":"abc","result":{"content":[{"type":"text","text":"hi"}],"_meta":{"k":{"x":1}}}})",
        R"({"jsonrpc":"2.0","id":1,"result":null})",
        R"({"jsonrpc":"2.0","id":1,"result":5})",
        R"({"jsonrpc":"2.0","id":1,"result":"a string result that is longer than sixteen bytes"})",
        R"({"jsonrpc":"2.0","id":1,"result":[]})",
        R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope","data":{"a":1}}})",
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}})",
        R"({"jsonrpc":"2.0","method":"m","params":[1,2]})",
        R"({"jsonrpc":"2.0","method":"m","params":null})",
        R"({"jsonrpc":"2.0","method":"m","params":3})",
        R"({"jsonrpc":"2.0","id":null,"method":"m"})",
        R"({"jsonrpc":"2.0","id":1.5,"method":"m"})",
        R"({"jsonrpc":"2.0","id":{"a":1},"result":{}})",
        R"({"jsonrpc":"2.0","method":5})",
        R"({"jsonrpc":"1.0","id":1,"method":"m"})",
        R"({"jsonrpc":{"v":"2.0"},"id":1,"method":"m"})",
        R"({"id":1,"method":"m"})",
        R"({"jsonrpc":"2.0","id":1})",
        R"({})",
        // The last of a key given twice counts, as in json::object.
        R"({"jsonrpc":"2.0","id":1,"id":2,"method":"a","method":"b","params":{"x":1},"params":{"y":2}})",
        R"({"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"result":1,"result":{"r":2}})",
        R"({"jsonrpc":"2.0","id":1,"result":{"r":2},"method":"both"})",
        // Members of no interest, of every kind, are read over.
        R"({"x":{"deep":[{"a":[[],{}]}]},"jsonrpc":"2.0","y":[1,"s"],"id":3,"z":"zz","w":1e5,"result":{}})",
        // Escapes, in keys and in values at the envelope's level and below (the parser gives them in parts).
        R"({"json\u0072pc":"2.\u0030","\u0069d":"i\"d","me\u0074hod":"tools\/call","params":{"k\u0065y":"v\n"}})",
        R"({"jsonrpc":"2.0","id":"\u00e9\u4e2d","method":"m\u00e9thod"})",
        R"({"jsonrpc":"2.0","id":"\ud83d\ude00","result":{"\u0000":"\ud83d"}})",
        // A string of the envelope's level longer than the parser's 4 KiB buffer, with an escape early: in parts.
        R"({"jsonrpc":"2.0","id":"a\"b)" + std::string(9000, 'x') + R"(","method":"m"})",
        R"({"jsonrpc":"2.0","\u0069)" + std::string(5000, 'd') + R"(":1,"id":2,"method":"m"})",
        R"({"jsonrpc":"2.0","id":1,"result":{"t":"a\"b)" + std::string(9000, 'y') + R"("}})",
        // Numbers too big for a double, wherever they are.
        R"({"jsonrpc":"2.0","id":1e400,"error":{}})",
        R"({"jsonrpc":"2.0","method":"x","params":{"a":[1,-1e999]}})",
        R"({"jsonrpc":"2.0","id":1,"result":{"n":0e400},"oops")",
        R"({"jsonrpc":"2.0","q":1e999,"id":1,"result":{}})",
        // One that a later duplicate replaces does not count, as in the value the whole text parses to.
        R"({"jsonrpc":"2.0","id":1,"result":{},"x":1e400,"x":0})",
        R"({"jsonrpc":"2.0","method":"m","params":{"a":1e400,"a":1}})",
        R"({"jsonrpc":"2.0","id":1e400,"id":1,"result":{}})",
        R"({"jsonrpc":"2.0","id":18446744073709551615,"result":{}})",
        R"({"jsonrpc":"2.0","id":-9223372036854775808,"result":{}})",
        // Not an object, not JSON, more than one value.
        R"([{"jsonrpc":"2.0","method":"m"}])",
        R"("just a string")",
        R"(42)",
        R"(null)",
        R"([1,2)",
        R"({"jsonrpc":"2.0","method":"m"} {"x":1})",
        R"({"jsonrpc":"2.0","method":"m"}x)",
        R"({"jsonrpc":"2.0","method":"m")",
        R"({"jsonrpc":"2.0","method":"m",})",
        R"({"jsonrpc":"2.0","method":"m" /* no comments */})",
        "",
        "   ",
        std::string(2000, '[') + std::string(2000, ']'),
        R"({"jsonrpc":"2.0","id":1,"result":)" + std::string(1500, '[') + std::string(1500, ']') + "}",
        R"({"jsonrpc":"2.0","id":1,"result":)" + std::string(998, '[') + std::string(998, ']') + "}",
    };
    for (const auto& text : texts) {
        const auto events = rpc::parse_message(text);
        const auto whole = parse_whole(text);
        ASSERT_EQ(events.has_value(), whole.has_value()) << text;
        if (!whole) {
            EXPECT_EQ(events.error().code, whole.error().code) << text;
            EXPECT_EQ(events.error().message, whole.error().message) << text;
            continue;
        }
        EXPECT_EQ(events->kind, whole->kind) << text;
        EXPECT_EQ(events->id, whole->id) << text;
        EXPECT_EQ(events->method, whole->method) << text;
        EXPECT_EQ(events->params, whole->params) << text;
        EXPECT_EQ(events->result, whole->result) << text;
        ASSERT_EQ(events->error.has_value(), whole->error.has_value()) << text;
        if (whole->error) {
            EXPECT_EQ(events->error->code, whole->error->code) << text;
            EXPECT_EQ(events->error->message, whole->error->message) << text;
            EXPECT_EQ(events->error->data, whole->error->data) << text;
        }
    }
}

TEST(SerializeMessage, RequestRoundTrips) {
    json::value params = json::parse(R"({"name":"echo","arguments":{"text":"hi"}})");
    auto m = rpc::parse_message(rpc::serialize_request(12, "tools/call", params));
    ASSERT_TRUE(m.has_value()) << m.error().message;
    EXPECT_EQ(m->kind, Kind::request);
    EXPECT_EQ(m->id, json::value(12));
    EXPECT_EQ(m->method, "tools/call");
    EXPECT_EQ(m->params, params);
}

TEST(SerializeMessage, RequestWithNullParamsOmitsThem) {
    const auto text = rpc::serialize_request("s-1", "ping", nullptr);
    EXPECT_EQ(json::parse(text).as_object().count("params"), 0u);
    auto m = rpc::parse_message(text);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->id, json::value("s-1"));
    EXPECT_TRUE(m->params.is_null());
}

TEST(SerializeMessage, NotificationRoundTrips) {
    json::value params = json::parse(R"({"requestId":5,"reason":"x"})");
    auto m = rpc::parse_message(rpc::serialize_notification("notifications/cancelled", params));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->kind, Kind::notification);
    EXPECT_EQ(m->method, "notifications/cancelled");
    EXPECT_EQ(m->params, params);
}

TEST(SerializeMessage, ResultRoundTrips) {
    json::value result = json::parse(R"({"tools":[{"name":"a"}]})");
    auto m = rpc::parse_message(rpc::serialize_result(9, result));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->kind, Kind::response);
    EXPECT_EQ(m->id, json::value(9));
    EXPECT_FALSE(m->error.has_value());
    EXPECT_EQ(m->result, result);
}

TEST(SerializeMessage, NullResultBecomesEmptyObject) {
    auto m = rpc::parse_message(rpc::serialize_result(1, nullptr));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->result, json::value(json::object{}));
}

TEST(SerializeMessage, ErrorRoundTrips) {
    rpc::Error e{rpc::code::invalid_params, "bad things", json::parse(R"({"field":"x"})")};
    auto m = rpc::parse_message(rpc::serialize_error(21, e));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->kind, Kind::response);
    EXPECT_EQ(m->id, json::value(21));
    ASSERT_TRUE(m->error.has_value());
    EXPECT_EQ(m->error->code, rpc::code::invalid_params);
    EXPECT_EQ(m->error->message, "bad things");
    EXPECT_EQ(m->error->data, json::parse(R"({"field":"x"})"));
}

TEST(SerializeMessage, ErrorWithNullIdParses) {
    auto m = rpc::parse_message(rpc::serialize_error(nullptr, rpc::Error{rpc::code::parse_error, "Parse error"}));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->kind, Kind::response);
    EXPECT_TRUE(m->id.is_null());
    ASSERT_TRUE(m->error.has_value());
    EXPECT_EQ(m->error->code, rpc::code::parse_error);
}

TEST(Preview, ShortTextUnchanged) {
    EXPECT_EQ(rpc::preview("hello", 10), "hello");
    EXPECT_EQ(rpc::preview("0123456789", 10), "0123456789");
}

TEST(Preview, LongTextCutWithEllipsis) { EXPECT_EQ(rpc::preview("0123456789abc", 10), "0123456789…"); }

TEST(Preview, DoesNotSplitUtf8Sequence) {
    // "ab" then "é" (C3 A9) then "€" (E2 82 AC): cutting at 3 or 4 bytes would split a sequence.
    const std::string text =
        "ab\xC3\xA9\xE2\x82\xAC"
        "zzzz";
    EXPECT_EQ(rpc::preview(text, 3), "ab…");
    EXPECT_EQ(rpc::preview(text, 4), "ab\xC3\xA9…");
    EXPECT_EQ(rpc::preview(text, 5), "ab\xC3\xA9…");
    EXPECT_EQ(rpc::preview(text, 6), "ab\xC3\xA9…");
    EXPECT_EQ(rpc::preview(text, 7), "ab\xC3\xA9\xE2\x82\xAC…");
}

// Messages are written field by field; the bytes must be those of serializing the whole object.
TEST(SerializeMessage, BytesEqualSerializingTheWholeObject) {
    json::value params = json::parse(R"({"name":"echo","arguments":{"text":"h\"i\n","n":1.5},"list":[1,null,true]})");
    EXPECT_EQ(
        rpc::serialize_request(7, "tools/call", params),
        json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", 7}, {"method", "tools/call"}, {"params", params}}));
    EXPECT_EQ(rpc::serialize_notification("a/\"b\"", params),
              json::serialize(json::object{{"jsonrpc", "2.0"}, {"method", "a/\"b\""}, {"params", params}}));
    EXPECT_EQ(rpc::serialize_result("x", params),
              json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", "x"}, {"result", params}}));
    rpc::Error e{rpc::code::invalid_params, "bad", json::parse(R"({"f":"x"})")};
    EXPECT_EQ(rpc::serialize_error(nullptr, e),
              json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", nullptr}, {"error", e.to_json()}}));
}

// Ids, method names and plain strings are written without Boost.JSON's serializer: the bytes must still be its bytes,
// for the characters it escapes, those it does not (DEL, bytes of invalid UTF-8) and the integers at either end.
TEST(SerializeMessage, EnvelopePartsAreTheSerializersBytes) {
    const std::vector<std::string> strings = {
        "", "tools/call", std::string("nul\0and\x01\x1f", 9), "quote\" back\\ slash", "del\x7f", "bad utf-8 \xff\xc3(",
        "\xe2\x82\xac \xf0\x9f\x98\x80", std::string(300, 'x'), std::string(300, 'x') + "\n",
        // plain() reads eight bytes at a time: each escape at a word's edges
        std::string(7, 'a') + "\"" + std::string(8, 'b'), std::string(8, 'a') + "\\" + std::string(7, 'b'),
        std::string(15, 'a') + "\x1f", std::string(16, ' ') + "\x7f\x80\xff ~!#[]",
        std::string(3, 'a') + std::string(1, '\0') + std::string(12, 'b')};
    for (const auto& text : strings) {
        const json::value str = json::string(text);
        EXPECT_EQ(rpc::serialize_request(str, text, json::value()),
                  json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", str}, {"method", str}}));
        EXPECT_EQ(rpc::serialize_result(1, str),
                  json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"result", str}}));
    }
    for (const json::value& id :
         {json::value(std::numeric_limits<std::int64_t>::min()), json::value(std::numeric_limits<std::int64_t>::max()),
          json::value(-1), json::value(0), json::value(std::numeric_limits<std::uint64_t>::max())})
        EXPECT_EQ(rpc::serialize_result(id, json::value(true)),
                  json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", true}}));
    EXPECT_EQ(rpc::serialize_result(2, json::value(nullptr)), R"({"jsonrpc":"2.0","id":2,"result":{}})");
}

// plain() checks 16 bytes at a time, the last ones with a load that may reach past the string: every length up to 40
// with each kind of byte that needs an escape at every place, and the bytes next to those that do not.
TEST(SerializeMessage, EveryEscapeAtEveryPlaceIsWritten) {
    for (std::size_t n = 1; n <= 40; ++n) {
        for (const char plain_byte : {'a', ' ', '\x7f', '\x80', '\xff', '!', '#', '[', ']'}) {
            const std::string text(n, plain_byte);
            EXPECT_EQ(rpc::serialize_request(1, text, json::value()),
                      json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", text}}));
        }
        for (std::size_t i = 0; i < n; ++i)
            for (const char escaped : {'"', '\\', '\0', '\x1f', '\n', '\x01'}) {
                std::string text(n, 'a');
                text[i] = escaped;
                EXPECT_EQ(rpc::serialize_request(1, text, json::value()),
                          json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", text}}))
                    << "length " << n << ", byte " << int(escaped) << " at " << i;
            }
    }
}

// A short string that ends where the readable memory ends: plain() must not read past the page (the next one here is
// not readable, so a read there would crash the test).
TEST(SerializeMessage, AShortStringAtTheEndOfThePageIsReadWithinIt) {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    void* mem = ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mem, MAP_FAILED);
    char* base = static_cast<char*>(mem);
    ASSERT_EQ(::mprotect(base + page, page, PROT_NONE), 0);
    for (std::size_t n = 1; n < 16; ++n) {
        char* at = base + page - n;
        std::memset(at, 'z', n);
        const std::string_view text(at, n);
        EXPECT_EQ(rpc::serialize_request(1, text, json::value()),
                  json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", text}}));
        at[n - 1] = '"';
        EXPECT_EQ(rpc::serialize_request(1, text, json::value()),
                  json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", text}}));
    }
    ::munmap(mem, 2 * page);
}

// Capped: the same bytes while under the cap, nothing once over it (the caller streams that one instead).
TEST(SerializeMessage, CappedResultIsWholeOrNothing) {
    json::object small{{"content", json::array{json::object{{"type", "text"}, {"text", "hi"}}}}};
    auto text = rpc::serialize_result(3, small, 1u << 20);
    ASSERT_TRUE(text);
    EXPECT_EQ(*text, rpc::serialize_result(3, small));
    json::object big;
    big["text"] = std::string(3u << 20, 'a');
    EXPECT_FALSE(rpc::serialize_result(3, big, 1u << 20));
    auto whole = rpc::serialize_result(3, big, 4u << 20);
    ASSERT_TRUE(whole);
    EXPECT_EQ(*whole, rpc::serialize_result(3, big));
}

// Boost.JSON writes a number that is not finite as `Infinity` or `NaN`, which is not JSON: a handler that computed one
// would have its whole message refused by the peer. Such a number goes out as null (as JSON.stringify writes it); the
// rest is untouched.
TEST(SerializeMessage, NumbersThatAreNotFiniteAreWrittenAsNull) {
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    json::object result{{"a", inf}, {"b", json::array{-inf, 1.5, nan}}, {"c", json::object{{"d", nan}}}, {"e", 2}};
    const std::string expected =
        R"({"jsonrpc":"2.0","id":1,"result":{"a":null,"b":[null,1.5E0,null],"c":{"d":null},"e":2}})";
    EXPECT_EQ(rpc::serialize_result(1, result), expected);
    EXPECT_EQ(
        rpc::serialize_request(1, "m", result),
        R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":null,"b":[null,1.5E0,null],"c":{"d":null},"e":2}})");
    for (const auto& text : {rpc::serialize_result(1, result), rpc::serialize_notification("m", result)})
        EXPECT_TRUE(rpc::parse_message(text).has_value()) << text;
    // A big result is streamed by Boost.JSON's own serializer: the same bytes.
    rpc::ResultStream stream(json::value(1), json::value(result));
    std::string streamed, buffer(64, '\0');
    for (int guard = 0; guard < 100 && !stream.done(); ++guard)
        streamed.append(buffer.data(), stream.read(buffer.data(), buffer.size()));
    EXPECT_EQ(streamed, expected);
}

TEST(SerializeMessage, LargeResultIsComplete) {
    json::object result;
    result["blob"] = std::string(1 << 20, 'A');
    const auto text = rpc::serialize_result(1, result);
    EXPECT_EQ(text.size(), (1u << 20) + 45);  // {"jsonrpc":"2.0","id":1,"result":{"blob":"…"}}
    auto m = rpc::parse_message(text);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->result, json::value(result));
}

TEST(ErrorCode, CodesAreStdErrorCodesWithTheirWireValues) {
    std::error_code ec = rpc::Code::method_not_found;
    EXPECT_EQ(ec.value(), -32601);
    EXPECT_STREQ(ec.category().name(), "jsonrpc");
    EXPECT_EQ(ec.message(), "method not found");
    EXPECT_EQ(rpc::code::unsupported_protocol_version, -32022);
    const rpc::Error e{rpc::code::timeout, "no reply"};
    EXPECT_EQ(e.error_code(), rpc::Code::timeout);
    EXPECT_NE(e.error_code(), rpc::Code::cancelled);
    // A code the enum does not name keeps its value.
    EXPECT_EQ(rpc::Error(-32099, "server defined").error_code().value(), -32099);
}

namespace switchboard::jsonrpc {
namespace {

// A tools/list result whose one tool's input schema nests `depth` levels of {"properties": {"x": ...}}.
std::string nested_schema_message(int depth) {
    std::string schema;
    for (int i = 0; i < depth; ++i) schema += R"({"type":"object","properties":{"x":)";
    schema += R"({"type":"string"})";
    for (int i = 0; i < depth; ++i) schema += "}}";
    return R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"deep","inputSchema":)" + schema + "}]}}";
}

TEST(ParseMessage, RealisticDepthIsAcceptedAndHostileDepthIsAClearError) {
    // 45 schema levels are ~90 JSON levels: past Boost.JSON's default limit of 32, common in real servers.
    auto realistic = parse_message(nested_schema_message(45));
    ASSERT_TRUE(realistic.has_value()) << realistic.error().message;
    EXPECT_EQ(realistic->kind, Message::Kind::response);
    // 100,000 levels: refused with the reason, without recursing into it.
    auto hostile = parse_message(std::string(100'000, '[') + std::string(100'000, ']'));
    ASSERT_FALSE(hostile.has_value());
    EXPECT_EQ(hostile.error().code, code::parse_error);
    EXPECT_EQ(hostile.error().message, "Parse error: nested deeper than 1000 levels");
}

}  // namespace
}  // namespace switchboard::jsonrpc

// The 2026-07-28 _meta spliced in as a request is written must give the JSON that merging it into the params would:
// ours wins over a same-named key, other _meta keys (progressToken) stay, a _meta that is no object is replaced.
TEST(SerializeMessage, RequestWithMetaMembersIsTheMergedParams) {
    const auto ours = json::parse(R"({"io.mcp/protocolVersion":"2026-07-28","io.mcp/clientInfo":{"name":"sb"}})");
    const rpc::MetaMembers meta(ours.as_object());
    auto merged = [&](json::value params) {
        auto& m = params.as_object()["_meta"];
        if (!m.is_object()) m = json::object{};
        for (const auto& kv : ours.as_object()) m.as_object()[kv.key()] = kv.value();
        return params;
    };
    const std::vector<std::string> cases{
        R"({})",
        R"({"name":"echo","arguments":{"text":"a \"quoted\" \u00e9"}})",
        R"({"name":"echo","_meta":{"progressToken":7,"io.mcp/protocolVersion":"1999-01-01"},"arguments":{}})",
        R"({"_meta":"not an object","cursor":"c"})",
        R"({"_meta":{}})",
        R"({"_meta":{"io.mcp/protocolVersion":"1999-01-01","io.mcp/clientInfo":{"name":"peer"}}})",
        R"({"we\"ird\nkey":1,"_meta":{"a\u0001b":true}})",
    };
    for (const auto& text : cases) {
        const auto params = json::parse(text);
        const auto wire = rpc::serialize_request(json::value(3), "tools/call", params, meta);
        auto parsed = rpc::parse_message(wire);
        ASSERT_TRUE(parsed.has_value()) << wire;
        EXPECT_EQ(parsed->id, json::value(3));
        EXPECT_EQ(parsed->method, "tools/call");
        EXPECT_EQ(parsed->params, merged(params)) << text << "\n -> " << wire;
        // No key twice (a parser keeping the first of two would see the peer's version, not ours).
        EXPECT_EQ(wire.find("1999-01-01"), std::string::npos) << wire;
    }
    // Empty members still give params a _meta object (a non-object one replaced), as the merge would.
    const rpc::MetaMembers none(json::object{});
    const auto bare = rpc::serialize_request(json::value(5), "ping", json::parse(R"({"_meta":7})"), none);
    EXPECT_EQ(json::parse(bare).at("params"), json::parse(R"({"_meta":{}})")) << bare;
    // Null params: only our _meta.
    const auto wire = rpc::serialize_request(json::value(4), "tools/list", json::value(), meta);
    EXPECT_EQ(json::parse(wire).at("params"), json::value(json::object{{"_meta", ours}})) << wire;
}

// A progress token written into the request's text (Connection::request_view asks for progress without copying the
// params): the JSON of setting params._meta.progressToken in a copy, with or without the 2026-07-28 members, and a
// peer's own token replaced rather than sent twice.
TEST(SerializeMessage, RequestWithAProgressTokenIsTheParamsWithTheTokenSet) {
    const auto ours = json::parse(R"({"io.mcp/protocolVersion":"2026-07-28"})");
    const rpc::MetaMembers meta(ours.as_object());
    auto expected = [&](json::value params, bool with_meta) {
        if (params.is_null()) params = json::object{};
        auto& m = params.as_object()["_meta"];
        if (!m.is_object()) m = json::object{};
        m.as_object()["progressToken"] = 41;
        if (with_meta)
            for (const auto& kv : ours.as_object()) m.as_object()[kv.key()] = kv.value();
        return params;
    };
    const std::vector<std::string> cases{
        R"(null)",
        R"({})",
        R"({"name":"echo","arguments":{"message":"hello"}})",
        R"({"name":"echo","_meta":{"progressToken":"theirs","trace":"t"}})",
        R"({"_meta":"not an object"})",
    };
    for (const auto& text : cases)
        for (const bool with_meta : {false, true}) {
            const auto params = json::parse(text);
            const auto wire =
                rpc::serialize_request(json::value(41), "tools/call", params, with_meta ? &meta : nullptr, 41);
            auto parsed = rpc::parse_message(wire);
            ASSERT_TRUE(parsed.has_value()) << wire;
            EXPECT_EQ(parsed->params, expected(params, with_meta)) << text << "\n -> " << wire;
            EXPECT_EQ(wire.find("theirs"), std::string::npos) << wire;
        }
    // Params that are not an object (not MCP) go out as they are, without a token.
    const auto array = rpc::serialize_request(json::value(2), "m", json::parse("[1,2]"), nullptr, 2);
    EXPECT_EQ(json::parse(array).at("params"), json::parse("[1,2]")) << array;
}

// A result's _meta members (a 2026-07-28 server's serverInfo) spliced in as it is written: the JSON of merging them,
// under the cap or not at all, and merge_meta (for a result streamed instead) gives the same.
TEST(SerializeMessage, ResultWithMetaMembersIsTheMergedResult) {
    const auto ours = json::parse(R"({"io.mcp/serverInfo":{"name":"sb","version":"1"}})");
    const rpc::MetaMembers meta(ours.as_object());
    const std::vector<std::string> cases{
        R"({})",
        R"({"content":[{"type":"text","text":"hi"}],"resultType":"complete"})",
        R"({"_meta":{"io.mcp/serverInfo":"theirs","k":1},"content":[]})",
        R"({"_meta":"not an object","tools":[]})",
    };
    for (const auto& text : cases) {
        const auto result = json::parse(text);
        auto expected = result;
        rpc::merge_meta(expected, meta);
        EXPECT_EQ(expected.at("_meta").at("io.mcp/serverInfo"), ours.at("io.mcp/serverInfo")) << text;
        const auto wire = rpc::serialize_result(json::value(9), result, 1u << 20, &meta);
        ASSERT_TRUE(wire) << text;
        EXPECT_EQ(json::parse(*wire).at("result"), expected) << text << "\n -> " << *wire;
        EXPECT_EQ(wire->find("theirs"), std::string::npos) << *wire;
    }
    // A result that is no object gets none; a big one stops at the cap.
    EXPECT_EQ(*rpc::serialize_result(1, json::value(json::array{1}), 1u << 20, &meta),
              rpc::serialize_result(1, json::array{1}));
    json::object big;
    big["content"] = json::array{json::object{{"type", "text"}, {"text", std::string(2u << 20, 'a')}}};
    EXPECT_FALSE(rpc::serialize_result(1, big, 1u << 20, &meta));
}

// A result with members kept as text (serialize_members, a cached list) is the result with those members first: with
// and without _meta members, with and without members of its own, and bytes equal to serializing the whole object.
TEST(SerializeMessage, ResultWithMembersAsTextIsTheWholeResult) {
    const auto whole = json::parse(R"({"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"c2",)"
                                   R"("resultType":"complete","ttlMs":0})")
                           .as_object();
    json::object kept, own;
    for (const auto& kv : whole) (kv.key() == "resultType" || kv.key() == "ttlMs" ? own : kept)[kv.key()] = kv.value();
    const auto members = rpc::serialize_members(kept);
    EXPECT_EQ("{" + members + "}", json::serialize(kept));
    // The same bytes as the whole object, members first.
    const auto plain = rpc::serialize_result(json::value(3), own, std::string::npos, nullptr, members);
    ASSERT_TRUE(plain);
    EXPECT_EQ(*plain, rpc::serialize_result(json::value(3), whole));
    const auto alone = rpc::serialize_result(json::value(3), json::object(), std::string::npos, nullptr, members);
    ASSERT_TRUE(alone);
    EXPECT_EQ(json::parse(*alone).at("result"), json::value(kept)) << *alone;
    // With _meta members: as merging them into the whole object.
    const auto ours = json::parse(R"({"io.mcp/serverInfo":{"name":"sb"}})");
    const rpc::MetaMembers meta(ours.as_object());
    json::value expected = whole;
    rpc::merge_meta(expected, meta);
    for (const json::object* result : std::vector<const json::object*>{&own, nullptr}) {
        const json::value r = result ? json::value(*result) : json::value(json::object());
        const auto wire = rpc::serialize_result(json::value(3), r, std::string::npos, &meta, members);
        ASSERT_TRUE(wire);
        auto want = result ? expected : json::value(kept);
        if (!result) rpc::merge_meta(want, meta);
        EXPECT_EQ(json::parse(*wire).at("result"), want) << *wire;
        EXPECT_EQ(*wire, rpc::serialize_result(json::value(3), want));  // the bytes too: _meta last either way
    }
}

// peek_envelope reads what our serializers write without a parse: the kind, and the id's text as serializing the id
// gives it (the HTTP server routes responses by it). Anything written otherwise is left to the parser (nullopt).
TEST(PeekEnvelope, ReadsWhatTheSerializersWrite) {
    const json::value params = json::object{{"a", 1}};
    for (const json::value& id : {json::value(7), json::value(-3), json::value("abc"), json::value("")}) {
        // The texts are kept: a peek points into its text.
        const auto request = rpc::serialize_request(id, "tools/call", params);
        const auto result = rpc::serialize_result(id, params);
        const auto error = rpc::serialize_error(id, rpc::Error{rpc::code::invalid_params, "no", {}, false});
        auto req = rpc::peek_envelope(request);
        ASSERT_TRUE(req);
        EXPECT_EQ(req->kind, Kind::request);
        EXPECT_EQ(req->id, json::serialize(id));
        auto res = rpc::peek_envelope(result);
        ASSERT_TRUE(res);
        EXPECT_EQ(res->kind, Kind::response);
        EXPECT_FALSE(res->error);
        EXPECT_EQ(res->id, json::serialize(id));
        auto err = rpc::peek_envelope(error);
        ASSERT_TRUE(err);
        EXPECT_EQ(err->kind, Kind::response);
        EXPECT_TRUE(err->error);
        EXPECT_EQ(err->id, json::serialize(id));
    }
    const auto notification = rpc::serialize_notification("notifications/progress", params);
    auto note = rpc::peek_envelope(notification);
    ASSERT_TRUE(note);
    EXPECT_EQ(note->kind, Kind::notification);
    EXPECT_TRUE(note->id.empty());
}

TEST(PeekEnvelope, LeavesAnythingElseToTheParser) {
    for (const char* text : {R"({"id":1,"jsonrpc":"2.0","result":{}})",        // another member order
                             R"({"jsonrpc": "2.0","id":1,"result":{}})",       // spaces
                             R"({"jsonrpc":"2.0","id":"a\"b","result":{}})",   // an id with escapes
                             R"({"jsonrpc":"2.0","id":null,"error":{}})",      // no id
                             R"({"jsonrpc":"2.0","id":1.5,"result":{}})",      // a number written otherwise
                             R"({"jsonrpc":"2.0","id":1})",                    // nothing after the id
                             R"({"jsonrpc":"2.0","id":"abc)",                  // cut off
                             R"({"jsonrpc":"2.0","params":{},"method":"x"})",  // params first
                             "", "[]"}) {
        EXPECT_FALSE(rpc::peek_envelope(text)) << text;
    }
    // An error answer to a request whose id could not be read has a null id: parsed, not peeked.
    EXPECT_FALSE(rpc::peek_envelope(rpc::serialize_error(nullptr, rpc::Error{rpc::code::parse_error, "x", {}, false})));
}

// object_members: each member's key and value text as they are in the object's text, whatever the spacing, nesting
// or strings hold; the same members Boost.JSON parses; nothing for what is not one object or has an escaped key.
TEST(ObjectMembers, KeysAndValueTextsAsWritten) {
    const std::string text =
        " {\"a\" : {\"x\": [1, \"}\", {\"y\": \"]\\\"\"}]} ,\"b\":\"q\\\"}\\\\\",\n\"c\":-1.5e3,\"d\":true , "
        "\"e\":null,"
        "\"f\":[]}\t";
    auto m = rpc::object_members(text);
    ASSERT_TRUE(m.has_value());
    ASSERT_EQ(m->size(), 6u);
    EXPECT_EQ((*m)[0].key, "a");
    EXPECT_EQ((*m)[0].value, R"({"x": [1, "}", {"y": "]\""}]})");
    EXPECT_EQ((*m)[1].key, "b");
    EXPECT_EQ((*m)[1].value, R"("q\"}\\")");
    EXPECT_EQ((*m)[2].value, "-1.5e3");
    EXPECT_EQ((*m)[3].value, "true");
    EXPECT_EQ((*m)[4].value, "null");
    EXPECT_EQ((*m)[5].value, "[]");
    // The same as parsing: each value's text parses to the parsed object's member.
    const auto parsed = json::parse(text).as_object();
    for (const auto& member : *m) EXPECT_EQ(json::parse(member.value), parsed.at(member.key)) << member.key;
    EXPECT_TRUE(rpc::json_text_is_valid(text));
}

TEST(ObjectMembers, AnEmptyObjectHasNone) {
    auto m = rpc::object_members(" { } ");
    ASSERT_TRUE(m.has_value());
    EXPECT_TRUE(m->empty());
}

TEST(ObjectMembers, NothingForWhatIsNotOneObjectOrHasAnEscapedKey) {
    for (const char* text : {"", "[1]", "\"{}\"", "{} {}", "{\"a\":1", "{\"a\" 1}", "{\"a\":}", "{\"a\":1,}", "{a:1}",
                             "{\"a\":\"unterminated}", "{\"a\":[1,2}", "{\"\\u0061\":1}", "{\"a\\\"b\":1}", "x"}) {
        EXPECT_FALSE(rpc::object_members(text).has_value()) << text;
    }
}

TEST(JsonTextIsValid, AsParseMessageWouldAcceptIt) {
    EXPECT_TRUE(rpc::json_text_is_valid(R"({"a":[1,2.5,"x",null,true,{}]})"));
    EXPECT_TRUE(rpc::json_text_is_valid(" 5 "));
    EXPECT_FALSE(rpc::json_text_is_valid(R"({"a":1,})"));
    EXPECT_FALSE(rpc::json_text_is_valid(R"({"a":1} x)"));
    EXPECT_FALSE(rpc::json_text_is_valid(R"({"a":1e400})"));  // parse_message refuses it too (not finite)
    EXPECT_FALSE(rpc::json_text_is_valid(""));
    const auto nested = [](std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
    EXPECT_TRUE(rpc::json_text_is_valid(nested(rpc::max_message_depth)));
    EXPECT_FALSE(rpc::json_text_is_valid(nested(rpc::max_message_depth + 1)));
    EXPECT_EQ(rpc::parse_json_text(R"({"a":[1]})"), json::parse(R"({"a":[1]})"));
}
