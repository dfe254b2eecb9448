// core::canonical_json (RFC 8785) and pretty_json: the RFC's own examples, and what a definition's hash relies on.
#include <switchboard/core/canonical_json.hpp>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

namespace switchboard::test {
namespace {

namespace json = boost::json;

std::string jcs(std::string_view text) { return core::canonical_json(json::parse(text)); }

TEST(CanonicalJson, NumbersAreWrittenAsEcmaScriptWritesADouble) {
    // RFC 8785, appendix B (the doubles made here: Boost.JSON 1.81 does not read every decimal to the nearest double).
    EXPECT_EQ(jcs("[0, -0.0, 1e30, 4.50, 0.002, 1e-7, 0.000001, 1e21, 1e20]"),
              "[0,0,1e+30,4.5,0.002,1e-7,0.000001,1e+21,100000000000000000000]");
    const json::array exact{123456789012345680000.0, 333333333.33333329, 9007199254740992.0, -1.5e-300, 5e-324,
                            1.7976931348623157e308};
    EXPECT_EQ(core::canonical_json(exact),
              "[123456789012345680000,333333333.3333333,9007199254740992,-1.5e-300,5e-324,1.7976931348623157e+308]");
    EXPECT_EQ(jcs("[1, 1.0, 10, 100.5, -3]"), "[1,1,10,100.5,-3]");
}

TEST(CanonicalJson, MembersAreSortedByTheirUtf16CodeUnits) {
    // RFC 8785, 3.2.3: the example's names sorted.
    const auto sorted =
        jcs(R"({"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh",
                               "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control", "\u00f6": "Latin Small Letter O With Diaeresis"})");
    EXPECT_EQ(
        sorted,
        "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With "
        "Diaeresis\",\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\uFB33\":\"Hebrew Letter "
        "Dalet With Dagesh\"}");
}

TEST(CanonicalJson, StringsHaveTheFewestEscapes) {
    EXPECT_EQ(jcs(R"(["\u0041\/\u00e9", "tab\tquote\"back\\", "\u0001\u001f\u007f"])"),
              "[\"A/\u00e9\",\"tab\\tquote\\\"back\\\\\",\"\\u0001\\u001f\x7f\"]");
}

// Strings are scanned 8 bytes at a time: a character to escape is found wherever it falls in a block, including
// bytes past 0x7F next to it (UTF-8, written as they are) and the last bytes of a string.
TEST(CanonicalJson, EveryEscapeIsFoundAtEveryPosition) {
    const std::vector<std::pair<std::string, std::string>> specials{{"\"", "\\\""},
                                                                    {"\\", "\\\\"},
                                                                    {"\n", "\\n"},
                                                                    {std::string(1, '\0'), "\\u0000"},
                                                                    {"\x1f", "\\u001f"},
                                                                    {"\x7f", "\x7f"},
                                                                    {"\xc3\xa9", "\xc3\xa9"},
                                                                    {" ", " "},
                                                                    {"!", "!"}};
    for (std::size_t length = 0; length < 20; ++length)
        for (std::size_t at = 0; at <= length; ++at)
            for (const auto& [raw, written] : specials) {
                const std::string before(at, 'a'), after(length - at, '\xc3');  // lone lead bytes: no UTF-8 check
                EXPECT_EQ(core::canonical_json(json::value(json::string(before + raw + after))),
                          "\"" + before + written + after + "\"")
                    << length << " " << at << " " << written;
            }
}

TEST(CanonicalJson, EqualValuesWrittenDifferentlyGiveTheSameBytes) {
    EXPECT_EQ(jcs(R"({"b": [1.0, {"y": 2, "x": 1}], "a": "\u00e9"})"),
              jcs(R"({ "a":"é", "b":[1,{"x":1e0,"y":2.00}] })"));
    EXPECT_NE(jcs(R"({"a": "x"})"), jcs(R"({"a": "x "})"));
}

TEST(CanonicalJson, PrettyIsTheSameOrderWithIndents) {
    EXPECT_EQ(core::pretty_json(json::parse(R"({"b": [1, []], "a": {}})")),
              "{\n  \"a\": {},\n  \"b\": [\n    1,\n    []\n  ]\n}");
}

}  // namespace
}  // namespace switchboard::test
