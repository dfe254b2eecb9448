#include <switchboard/mcp/types.hpp>

#include <gtest/gtest.h>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <vector>

namespace json = boost::json;
namespace mcp = switchboard::mcp;

// The rvalue overloads take the value over instead of copying it; what they produce must not differ.
TEST(Types, CallToolResultFromMovedValueEqualsFromCopy) {
    const auto v =
        json::parse(R"({"content":[{"type":"text","text":"hi"},{"type":"image","mimeType":"image/png","data":"AA=="}],)"
                    R"("structuredContent":{"a":1},"isError":true,"_meta":{"k":"v"}})");
    auto a = mcp::CallToolResult::from_json(v);
    auto b = mcp::CallToolResult::from_json(json::value(v));
    EXPECT_EQ(a.raw, b.raw);
    EXPECT_EQ(b.raw, json::parse(R"({"isError":true,"_meta":{"k":"v"}})").as_object());  // content held once
    EXPECT_EQ(a.to_json(), v.as_object());
    EXPECT_EQ(b.to_json(), v.as_object());
    ASSERT_EQ(a.content.size(), b.content.size());
    for (std::size_t i = 0; i < a.content.size(); ++i) {
        EXPECT_EQ(a.content[i].type, b.content[i].type);
        EXPECT_EQ(a.content[i].raw, b.content[i].raw);
    }
    EXPECT_EQ(a.structured_content, b.structured_content);
    EXPECT_TRUE(b.is_error);
    EXPECT_EQ(std::move(b).to_json(), v.as_object());
}

// A big text block is taken over, not copied: it stays in the storage it was parsed into, and to_json() && puts it
// back the same way.
TEST(Types, CallToolResultKeptWholeGivesBackWhatSplittingAndRebuildingGives) {
    // The gateway keeps a forwarded result whole (CallToolResult::whole); what it forwards must be what the split
    // and rebuilt result would have been, for every shape a server may send.
    const std::vector<json::value> results = {
        json::parse(R"({"content":[{"type":"text","text":"hi"}],"structuredContent":{"a":1},"isError":true,
                        "_meta":{"x":1},"resultType":"complete"})"),
        json::parse(R"({"content":[{"type":"text","text":"hi"}]})"),
        json::parse(R"({"content":"not an array","isError":false})"),
        json::parse(R"({"content":[1,2]})"),
        json::parse(R"({"resultType":"task","task":{"taskId":"t1","status":"working"}})"),
        json::parse(R"({})"),
        json::value("not an object"),
    };
    for (const auto& v : results) {
        auto split = mcp::CallToolResult::from_json(json::value(v));
        auto whole = mcp::CallToolResult::whole(json::value(v));
        EXPECT_EQ(whole.is_error, split.is_error) << json::serialize(v);
        EXPECT_TRUE(whole.content.empty() || !v.is_object()) << json::serialize(v);
        const auto rebuilt = std::move(split).to_json();
        const auto forwarded = std::move(whole).to_json();
        EXPECT_EQ(forwarded, rebuilt) << json::serialize(v);
        EXPECT_TRUE(forwarded.contains("content")) << json::serialize(v);  // the spec requires it, task or not
    }
    // isError set on a result that lacks the member (a host tool's, say) is written out.
    mcp::CallToolResult r;
    r.raw = json::object{{"content", json::array()}};
    r.is_error = true;
    EXPECT_EQ(std::move(r).to_json(), json::parse(R"({"content":[],"isError":true})").as_object());
}

TEST(Types, CallToolResultFromMovedValueKeepsItsBlocksWhereTheyAre) {
    json::monotonic_resource arena;
    json::value v =
        json::parse(R"({"content":[{"type":"text","text":"a long text"}],"structuredContent":{"a":1}})", &arena);
    const char* text = v.at("content").at(0).at("text").get_string().data();
    auto r = mcp::CallToolResult::from_json(std::move(v));
    ASSERT_EQ(r.content.size(), 1u);
    EXPECT_EQ(r.content[0].raw.at("text").get_string().data(), text);
    EXPECT_EQ(r.content[0].text(), "a long text");
    ASSERT_TRUE(r.structured_content);
    EXPECT_EQ(r.structured_content->storage().get(), &arena);
    EXPECT_TRUE(r.raw.empty());
    EXPECT_EQ(r.to_json().storage().get(), json::storage_ptr().get());  // a copy in the default storage
    auto o = std::move(r).to_json();
    EXPECT_EQ(o.at("content").at(0).at("text").get_string().data(), text);
    EXPECT_EQ(o, json::parse(R"({"content":[{"type":"text","text":"a long text"}],"structuredContent":{"a":1}})"));
}

// What is not a content array stays in raw, and comes back as it was; a result built by hand gets its isError.
TEST(Types, CallToolResultToJsonKeepsWhatItDoesNotRead) {
    for (const char* text : {R"({"content":"not an array","isError":"no"})",
                             R"({"content":[{"type":"text","text":"a"},"not an object"],"structuredContent":[1]})"}) {
        const auto odd = json::parse(text);
        auto r = mcp::CallToolResult::from_json(odd);
        EXPECT_FALSE(r.is_error);
        EXPECT_EQ(r.to_json(), odd.as_object()) << text;
        EXPECT_EQ(mcp::CallToolResult::from_json(json::value(odd)).to_json(), odd.as_object()) << text;
        EXPECT_EQ(std::move(r).to_json(), odd.as_object()) << text;
    }
    // Without content, to_json() adds the empty list the spec requires.
    EXPECT_EQ(mcp::CallToolResult::from_json(json::parse(R"({"isError":true})")).to_json(),
              json::parse(R"({"content":[],"isError":true})").as_object());

    mcp::CallToolResult built;
    built.content.push_back(mcp::Content{"text", json::object{{"type", "text"}, {"text", "x"}}});
    built.is_error = true;
    EXPECT_EQ(built.to_json(), json::parse(R"({"content":[{"type":"text","text":"x"}],"isError":true})"));
}

TEST(Types, ReadResourceResultFromMovedValueEqualsFromCopy) {
    const auto v =
        json::parse(R"({"contents":[{"uri":"demo://a","mimeType":"text/plain","text":"hello"},)"
                    R"({"uri":"demo://b","mimeType":"application/octet-stream","blob":"AAEC"}],"_meta":{"k":1}})");
    auto a = mcp::ReadResourceResult::from_json(v);
    auto b = mcp::ReadResourceResult::from_json(json::value(v));
    EXPECT_EQ(a.raw, b.raw);
    EXPECT_EQ(b.to_json(), v.as_object());
    ASSERT_EQ(b.contents.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(a.contents[i].uri, b.contents[i].uri);
        EXPECT_EQ(a.contents[i].mime_type, b.contents[i].mime_type);
        EXPECT_EQ(a.contents[i].text, b.contents[i].text);
        EXPECT_EQ(a.contents[i].blob, b.contents[i].blob);
        EXPECT_EQ(a.contents[i].raw, b.contents[i].raw);
    }
    EXPECT_EQ(b.contents[1].blob, std::optional<std::string>("AAEC"));
}

// The text or blob is held once, in the typed field; `raw` keeps the rest and to_json() puts it back.
TEST(Types, ResourceContentsRawLeavesOutTheTextOrBlob) {
    const auto v = json::parse(R"({"contents":[{"uri":"demo://b","mimeType":"application/octet-stream","blob":"AAEC",)"
                               R"("_meta":{"m":2}},{"uri":"demo://c","text":7}],"_meta":{"k":1},"nextField":true})");
    for (auto r : {mcp::ReadResourceResult::from_json(v), mcp::ReadResourceResult::from_json(json::value(v))}) {
        EXPECT_EQ(r.raw, json::parse(R"({"_meta":{"k":1},"nextField":true})").as_object());
        ASSERT_EQ(r.contents.size(), 2u);
        EXPECT_EQ(
            r.contents[0].raw,
            json::parse(R"({"uri":"demo://b","mimeType":"application/octet-stream","_meta":{"m":2}})").as_object());
        EXPECT_EQ(r.contents[0].blob, std::optional<std::string>("AAEC"));
        // A text that is not a string is not taken: it stays in raw.
        EXPECT_FALSE(r.contents[1].text);
        EXPECT_EQ(r.contents[1].raw, json::parse(R"({"uri":"demo://c","text":7})").as_object());
        EXPECT_EQ(r.to_json(), v.as_object());
    }
}

// A result parsed into an arena (as messages are) must not keep the arena, which holds the blob's base64 once more.
TEST(Types, ReadResourceResultKeepsNothingOfTheParsedStorage) {
    json::monotonic_resource arena;
    json::value v = json::parse(R"({"contents":[{"uri":"demo://b","blob":"AAEC"}],"_meta":{"k":[1,2]}})", &arena);
    auto r = mcp::ReadResourceResult::from_json(std::move(v));
    EXPECT_EQ(r.raw.storage().get(), json::storage_ptr().get());
    EXPECT_EQ(r.raw.at("_meta").storage().get(), json::storage_ptr().get());
    ASSERT_EQ(r.contents.size(), 1u);
    EXPECT_EQ(r.contents[0].raw.storage().get(), json::storage_ptr().get());
}

// A tool's `raw` holds what the typed fields do not (a host keeps every server's tools: nothing twice); to_json()
// gives the object back.
TEST(Types, ToolRawLeavesOutTheTypedFields) {
    const auto v =
        json::parse(R"({"name":"echo","title":"Echo","description":"Says it again",)"
                    R"("inputSchema":{"type":"object","properties":{"text":{"type":"string"}}},)"
                    R"("outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"_meta":{"k":1}})");
    auto t = mcp::Tool::from_json(v);
    EXPECT_EQ(t.name, "echo");
    EXPECT_EQ(t.title, "Echo");
    EXPECT_EQ(t.description, "Says it again");
    EXPECT_EQ(t.input_schema, v.at("inputSchema").as_object());
    ASSERT_TRUE(t.output_schema);
    EXPECT_EQ(*t.output_schema, v.at("outputSchema").as_object());
    EXPECT_EQ(t.raw, json::parse(R"({"annotations":{"readOnlyHint":true},"_meta":{"k":1}})").as_object());
    EXPECT_EQ(t.to_json(), v.as_object());

    // Fields the typed members do not take as they are stay in raw, so the round trip is exact.
    for (const char* text :
         {R"({"name":"a","title":"","description":7,"inputSchema":{}})",
          R"({"name":"b","inputSchema":"nope","outputSchema":[1]})", R"({"name":"c","inputSchema":{},"":1})"}) {
        SCOPED_TRACE(text);
        const auto w = json::parse(text);
        auto u = mcp::Tool::from_json(w);
        EXPECT_EQ(u.input_schema, json::parse(R"({"type":"object"})").as_object());
        EXPECT_FALSE(u.output_schema);
        EXPECT_EQ(u.to_json(), w.as_object());
    }
    // No inputSchema: to_json() gives the default one.
    EXPECT_EQ(mcp::Tool::from_json(json::parse(R"({"name":"d"})")).to_json(),
              json::parse(R"({"name":"d","inputSchema":{"type":"object"}})").as_object());
}

// A tools/list result is parsed into its message's arena: nothing of a tool may keep that arena alive.
TEST(Types, ToolKeepsNothingOfTheParsedStorage) {
    json::monotonic_resource arena;
    json::value v = json::parse(R"({"name":"echo","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},)"
                                R"("_meta":{"k":[1,2]}})",
                                &arena);
    auto t = mcp::Tool::from_json(v);
    EXPECT_EQ(t.input_schema.storage().get(), json::storage_ptr().get());
    ASSERT_TRUE(t.output_schema);
    EXPECT_EQ(t.output_schema->storage().get(), json::storage_ptr().get());
    EXPECT_EQ(t.raw.storage().get(), json::storage_ptr().get());
    EXPECT_EQ(t.raw.at("_meta").storage().get(), json::storage_ptr().get());
}

TEST(Types, FromMovedNonObjectIsEmpty) {
    auto r = mcp::ReadResourceResult::from_json(json::value(42));
    EXPECT_TRUE(r.contents.empty());
    auto c = mcp::CallToolResult::from_json(json::value("x"));
    EXPECT_TRUE(c.content.empty());
}

// One resource with a nonsense size must not fail a whole listing (a conversion that threw did), and a completion's
// `total` may come as any number.
TEST(Types, OutsideNumbersThatAreNoSizeAreLeftOut) {
    for (const char* size : {"-1", "1.5", "1e300", "\"big\""}) {
        const auto text = std::string(R"({"uri":"a://b","name":"b","size":)") + size + "}";
        auto r = mcp::Resource::from_json(json::parse(text));
        EXPECT_EQ(r.uri, "a://b") << size;
        EXPECT_FALSE(r.size) << size;
    }
    EXPECT_EQ(mcp::Resource::from_json(json::parse(R"({"uri":"a://b","size":4096.0})")).size, 4096u);
    EXPECT_EQ(mcp::CompleteResult::from_json(json::parse(R"({"values":[],"total":1e300})")).total, INT64_MAX);
}
