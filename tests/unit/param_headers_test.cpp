// SEP-2243: x-mcp-header annotations are validated, and call arguments mirrored into Mcp-Param-* headers.
#include <switchboard/transport/param_headers.hpp>

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace json = boost::json;
using namespace switchboard::transport;

namespace {

ParamHeaderSpec spec_of(const char* schema) { return parse_param_headers(json::parse(schema)); }

}  // namespace

TEST(ParamHeaders, ReadsAnnotationsAlongPropertiesChains) {
    auto s = spec_of(R"({"type":"object","properties":{
        "region":{"type":"string","x-mcp-header":"Region"},
        "query":{"type":"string"},
        "opts":{"type":"object","properties":{"debug":{"type":"boolean","x-mcp-header":"Debug"}}}}})");
    ASSERT_TRUE(s.error.empty()) << s.error;
    ASSERT_EQ(s.headers.size(), 2u);
    EXPECT_EQ(s.headers[0].name, "Region");
    EXPECT_EQ(s.headers[1].path, (std::vector<std::string>{"opts", "debug"}));
}

TEST(ParamHeaders, RejectsInvalidAnnotations) {
    const char* invalid[] = {
        R"({"properties":{"a":{"type":"string","x-mcp-header":""}}})",           // empty
        R"({"properties":{"a":{"type":"string","x-mcp-header":"Has Space"}}})",  // not a token
        R"({"properties":{"a":{"type":"string","x-mcp-header":"Na:me"}}})",      // colon
        R"({"properties":{"a":{"type":"string","x-mcp-header":"Ünï"}}})",        // non-ASCII
        R"({"properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}})",
        R"({"properties":{"a":{"type":"number","x-mcp-header":"N"}}})",                           // number
        R"({"properties":{"a":{"type":"object","x-mcp-header":"O"}}})",                           // object
        R"({"properties":{"a":{"type":"null","x-mcp-header":"Z"}}})",                             // null
        R"({"properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"I"}}}})",  // via items
        R"({"properties":{"a":{"oneOf":[{"type":"string","x-mcp-header":"One"}]}}})",             // via oneOf
        R"({"$defs":{"d":{"type":"string","x-mcp-header":"Def"}}})",                              // via $defs
    };
    for (const char* schema : invalid) {
        auto s = spec_of(schema);
        EXPECT_FALSE(s.error.empty()) << schema;
        EXPECT_TRUE(s.headers.empty()) << schema;
    }
}

TEST(ParamHeaders, MirrorsValuesWithTheSpecEncoding) {
    auto s = spec_of(R"({"properties":{
        "region":{"type":"string","x-mcp-header":"Region"},
        "priority":{"type":"integer","x-mcp-header":"Priority"},
        "verbose":{"type":"boolean","x-mcp-header":"Verbose"},
        "greeting":{"type":"string","x-mcp-header":"Greeting"},
        "padded":{"type":"string","x-mcp-header":"Padded"},
        "absent":{"type":"string","x-mcp-header":"Absent"},
        "nothing":{"type":"string","x-mcp-header":"Nothing"}}})");
    ASSERT_TRUE(s.error.empty()) << s.error;
    auto fields = param_header_fields(s.headers, json::parse(R"({"region":"us-west1","priority":42,"verbose":false,
        "greeting":"Hello, 世界","padded":" padded ","nothing":null})"));
    std::map<std::string, std::string> got(fields.begin(), fields.end());
    EXPECT_EQ(got.size(), 5u);  // absent and null are omitted
    EXPECT_EQ(got["Mcp-Param-Region"], "us-west1");
    EXPECT_EQ(got["Mcp-Param-Priority"], "42");
    EXPECT_EQ(got["Mcp-Param-Verbose"], "false");
    EXPECT_EQ(got["Mcp-Param-Greeting"], "=?base64?SGVsbG8sIOS4lueVjA==?=");
    EXPECT_EQ(got["Mcp-Param-Padded"], "=?base64?IHBhZGRlZCA=?=");
}

TEST(ParamHeaders, EncodingFollowsTheSpecTable) {
    EXPECT_EQ(encode_header_value("us-west1"), "us-west1");
    EXPECT_EQ(encode_header_value("us west 1"), "us west 1");
    EXPECT_EQ(encode_header_value(""), "");
    EXPECT_EQ(encode_header_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
    EXPECT_EQ(encode_header_value("\tindented"), "=?base64?CWluZGVudGVk?=");
    EXPECT_EQ(encode_header_value("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
}
