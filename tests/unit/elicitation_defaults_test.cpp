// SEP-1034: defaults of the requested schema fill the fields an accepted elicitation left out.
#include <switchboard/mcp/types.hpp>

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace json = boost::json;
using switchboard::mcp::apply_elicitation_defaults;

namespace {

const json::value schema = json::parse(R"({"type":"object","properties":{
    "name":{"type":"string","default":"John Doe"},
    "age":{"type":"integer","default":30},
    "score":{"type":"number","default":95.5},
    "status":{"type":"string","enum":["active","inactive"],"default":"active"},
    "verified":{"type":"boolean","default":true},
    "note":{"type":"string"}}})");

}  // namespace

TEST(ElicitationDefaults, AcceptWithEmptyContentGetsEveryDefault) {
    auto r = apply_elicitation_defaults(schema, json::parse(R"({"action":"accept","content":{}})"));
    const auto& c = r.at("content").as_object();
    EXPECT_EQ(c.at("name"), "John Doe");
    EXPECT_EQ(c.at("age").to_number<int>(), 30);
    EXPECT_DOUBLE_EQ(c.at("score").to_number<double>(), 95.5);
    EXPECT_EQ(c.at("status"), "active");
    EXPECT_EQ(c.at("verified"), true);
    EXPECT_FALSE(c.contains("note"));  // no default: stays absent
}

TEST(ElicitationDefaults, GivenValuesWin) {
    auto r = apply_elicitation_defaults(schema, json::parse(R"({"action":"accept","content":{"name":"Ada","age":0}})"));
    EXPECT_EQ(r.at("content").at("name"), "Ada");
    EXPECT_EQ(r.at("content").at("age").to_number<int>(), 0);
    EXPECT_EQ(r.at("content").at("verified"), true);
}

TEST(ElicitationDefaults, AcceptWithoutContentGetsContent) {
    auto r = apply_elicitation_defaults(schema, json::parse(R"({"action":"accept"})"));
    EXPECT_EQ(r.at("content").at("status"), "active");
}

TEST(ElicitationDefaults, DeclineAndCancelAreUntouched) {
    for (const char* text : {R"({"action":"decline"})", R"({"action":"cancel"})"}) {
        auto in = json::parse(text);
        EXPECT_EQ(apply_elicitation_defaults(schema, in), in);
    }
}

TEST(ElicitationDefaults, MalformedSchemaLeavesResultAlone) {
    auto in = json::parse(R"({"action":"accept","content":{"a":1}})");
    EXPECT_EQ(apply_elicitation_defaults(json::value(), in), in);
    EXPECT_EQ(apply_elicitation_defaults(json::parse(R"({"properties":[1]})"), in), in);
}
