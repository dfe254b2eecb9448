// Messages in the request shape (to_openai) and the stored shape (to_json / from_json).
#include <switchboard/llm/message.hpp>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace switchboard::llm {
namespace {

namespace json = boost::json;

Message full_assistant() {
    auto m = Message::assistant("Checking.");
    m.reasoning = "The user wants the weather.";
    ToolCall c;
    c.id = "call_1";
    c.name = "weather";
    c.arguments = R"({"city":"Oslo"})";
    m.tool_calls.push_back(c);
    m.usage = Usage{100, 20};
    m.timings = Timings{150, 900, 2};
    return m;
}

TEST(LlmMessage, ToOpenAiNeverCarriesReasoning) {
    auto o = full_assistant().to_openai();
    EXPECT_EQ(json::serialize(o),
              R"({"role":"assistant","content":"Checking.","tool_calls":[{"id":"call_1","type":"function",)"
              R"("function":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}}]})");
}

TEST(LlmMessage, JsonRoundTripKeepsEverything) {
    for (const auto& m : {full_assistant(), Message::system("sys"), Message::user(""), Message::user("hi")}) {
        auto back = Message::from_json(json::parse(json::serialize(m.to_json())));
        ASSERT_TRUE(back);
        EXPECT_EQ(*back, m) << json::serialize(m.to_json());
    }
    Message parts;
    parts.content = {MessagePart::make_text("a"), MessagePart::make_text("b"),
                     MessagePart{MessagePart::Kind::image, {}, "image/png", "AAAA"}};
    auto back = Message::from_json(parts.to_json());
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, parts);
    EXPECT_EQ(parts.text(), "a\nb\n[image/png, 3 bytes]");
    EXPECT_FALSE(Message::from_json(json::parse(R"({"role":"robot"})")));
    EXPECT_FALSE(Message::from_json(json::parse("[]")));
}

TEST(LlmMessage, ToolMessageMatchesToolExecutionResult) {
    ToolExecutionResult r;
    r.tool_call_id = "call_9";
    r.name = "echo";
    r.parts = {MessagePart::make_text("one"), MessagePart::make_text("two")};
    auto m = Message::tool(r);
    EXPECT_EQ(m.to_openai(), r.to_openai_message());
    EXPECT_EQ(m.name, "echo");
    r.parts.push_back(MessagePart{MessagePart::Kind::image, {}, "image/png", "AAAA"});
    EXPECT_EQ(Message::tool(r).to_openai(), r.to_openai_message());
    auto back = Message::from_json(Message::tool(r).to_json());
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, Message::tool(r));
}

TEST(LlmMessage, PlainOpenAiMessagesAreRead) {
    auto m = Message::from_json(json::parse(
        R"({"role":"assistant","content":null,"reasoning_content":"r","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]})"));
    ASSERT_TRUE(m);
    EXPECT_TRUE(m->content.empty());
    EXPECT_EQ(m->reasoning, "r");
    ASSERT_EQ(m->tool_calls.size(), 1u);
    EXPECT_EQ(to_string(Role::tool), "tool");
    EXPECT_EQ(role_from_string("system"), Role::system);
}

}  // namespace
}  // namespace switchboard::llm
