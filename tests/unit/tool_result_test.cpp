// Formatting tool results for an LLM, parsing OpenAI-style calls and their arguments.
#include <switchboard/llm/tool_result.hpp>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace switchboard::llm {
namespace {

namespace json = boost::json;

mcp::CallToolResult result(std::string_view json_text) {
    return mcp::CallToolResult::from_json(json::parse(json_text));
}

TEST(ToolResult, TextImageAudioKeptAsTypedParts) {
    auto r = result(R"({"content":[{"type":"text","text":"hi"},{"type":"image","mimeType":"image/png","data":"AAAA"},
                      {"type":"audio","mimeType":"audio/wav","data":"BBBB"}]})");
    auto parts = format_tool_content(r);
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_EQ(parts[0], MessagePart::make_text("hi"));
    EXPECT_EQ(parts[1].kind, MessagePart::Kind::image);
    EXPECT_EQ(parts[1].mime_type, "image/png");
    EXPECT_EQ(parts[1].data, "AAAA");
    EXPECT_EQ(parts[2].kind, MessagePart::Kind::audio);
    EXPECT_EQ(json::serialize(parts[1].to_openai()),
              R"({"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}})");
    EXPECT_EQ(json::serialize(parts[2].to_openai()),
              R"({"type":"input_audio","input_audio":{"data":"BBBB","format":"wav"}})");

    ToolCall call;
    call.id = "call_1";
    call.name = "img";
    auto ex = format_tool_result(call, "s", r);
    EXPECT_EQ(ex.text(), "hi\n[image/png, 3 bytes]\n[audio/wav, 3 bytes]");
    auto msg = ex.to_openai_message();
    EXPECT_EQ(msg.at("role"), "tool");
    EXPECT_EQ(msg.at("tool_call_id"), "call_1");
    EXPECT_EQ(msg.at("content").as_array().size(), 3u);
}

TEST(ToolResult, EmbeddedResourcesBecomeTextHeadedWithTheirUriAndLinksAreDescribed) {
    auto r = result(R"({"content":[
        {"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","text":"alpha"}},
        {"type":"resource","resource":{"uri":"file:///b.bin","mimeType":"application/octet-stream","blob":"AAAA"}},
        {"type":"resource_link","uri":"file:///c.md","name":"c","mimeType":"text/markdown","description":"notes"}]})");
    auto parts = format_tool_content(r);
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_EQ(parts[0].text, "Resource file:///a.txt (text/plain):\nalpha");
    EXPECT_EQ(parts[1].text, "Resource file:///b.bin: binary content (application/octet-stream, 3 bytes)");
    EXPECT_EQ(parts[2].text, "Resource link: file:///c.md (name: c) [text/markdown] - notes");
}

TEST(ToolResult, StructuredContentIsUsedWhenNoTextIsGivenAndIsErrorIsKept) {
    auto r = result(R"({"content":[],"structuredContent":{"t":21},"isError":true})");
    ToolCall call;
    call.id = "x";
    call.name = "weather";
    auto ex = format_tool_result(call, "s", r);
    EXPECT_TRUE(ex.is_error);
    EXPECT_EQ(ex.status, ToolExecutionResult::Status::tool_error);
    EXPECT_EQ(ex.text(), R"({"t":21})");
    EXPECT_EQ(ex.to_openai_message().at("content"), R"({"t":21})");
    // With text present, the text is what the LLM reads.
    auto with_text =
        format_tool_content(result(R"({"content":[{"type":"text","text":"21 C"}],"structuredContent":{}})"));
    ASSERT_EQ(with_text.size(), 1u);
    EXPECT_EQ(with_text[0].text, "21 C");
}

TEST(ToolResult, OpenAiToolCallsAndMalformedArgumentsAreErrorsNotExceptions) {
    auto call = ToolCall::from_json(
        json::parse(R"({"id":"c1","type":"function","function":{"name":"echo","arguments":"{\"m\":1}"}})"));
    ASSERT_TRUE(call);
    EXPECT_EQ(call->id, "c1");
    EXPECT_EQ(call->name, "echo");
    EXPECT_EQ(call->arguments, R"({"m":1})");
    EXPECT_FALSE(ToolCall::from_json(json::parse(R"({"id":"c1","function":{}})")));
    EXPECT_EQ(ToolCall::from_json(json::parse(R"({"function":{"name":"n","arguments":{"a":1}}})"))->arguments,
              R"({"a":1})");

    std::string error;
    EXPECT_EQ(parse_tool_arguments("", error), json::object{});
    EXPECT_EQ(parse_tool_arguments("  null", error), json::object{});
    EXPECT_EQ(*parse_tool_arguments(R"({"a":[1]})", error), json::parse(R"({"a":[1]})").as_object());
    EXPECT_FALSE(parse_tool_arguments(R"({"a":)", error));
    EXPECT_NE(error.find("not valid JSON"), std::string::npos) << error;
    EXPECT_FALSE(parse_tool_arguments("[1,2]", error));
    EXPECT_NE(error.find("must be a JSON object"), std::string::npos) << error;

    auto err = error_result(*call, "s", "boom", ToolExecutionResult::Status::bad_arguments);
    EXPECT_TRUE(err.is_error);
    EXPECT_EQ(err.to_openai_message().at("content"), "boom");
}

}  // namespace
}  // namespace switchboard::llm
