// One assistant message from the chunks of each server family's stream (the shapes are the real ones, trimmed).
#include <switchboard/llm/stream_assembler.hpp>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include <string>
#include <vector>

namespace switchboard::llm {
namespace {

namespace json = boost::json;

// Feeds every `data:` payload; fails the test on an error.
Message assemble(StreamAssembler& a, const std::vector<std::string>& chunks) {
    for (const auto& c : chunks) {
        auto err = a.add_chunk(json::parse(c).as_object());
        EXPECT_FALSE(err) << *err;
    }
    return a.message();
}

TEST(StreamAssembler, OpenAiTextAndUsageChunkWithEmptyChoices) {
    std::string seen;
    StreamCallbacks cb;
    cb.on_content = [&](std::string_view t) { seen += t; };
    StreamAssembler a(cb);
    auto m = assemble(
        a,
        {
            R"({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null})",
            R"({"id":"c","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}],"usage":null})",
            R"({"id":"c","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}],"usage":null})",
            R"({"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null})",
            R"({"id":"c","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}})",
        });
    EXPECT_EQ(m.role, Role::assistant);
    EXPECT_EQ(m.text(), "Hello");
    EXPECT_EQ(seen, "Hello");
    EXPECT_EQ(a.finish_reason(), "stop");
    EXPECT_FALSE(a.has_tool_calls());
    ASSERT_TRUE(m.usage);
    EXPECT_EQ(*m.usage, (Usage{9, 2}));
}

TEST(StreamAssembler, OpenAiToolCallsAssembledByIndex) {
    std::vector<std::string> announced;
    StreamCallbacks cb;
    cb.on_tool_call = [&](const ToolCall& c) { announced.push_back(c.id + ":" + c.name); };
    StreamAssembler a(cb);
    auto m = assemble(
        a,
        {
            R"({"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]})",
            R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]},"finish_reason":null}]})",
            R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":""}}]},"finish_reason":null}]})",
            R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"Paris\"}"}}]},"finish_reason":null}]})",
            R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]},"finish_reason":null}]})",
            R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
        });
    ASSERT_EQ(m.tool_calls.size(), 2u);
    EXPECT_EQ(m.tool_calls[0].id, "call_a");
    EXPECT_EQ(m.tool_calls[0].name, "get_weather");
    EXPECT_EQ(m.tool_calls[0].arguments, R"({"city":"Paris"})");
    EXPECT_EQ(m.tool_calls[1].id, "call_b");
    EXPECT_EQ(m.tool_calls[1].arguments, "{}");
    EXPECT_TRUE(m.content.empty());
    EXPECT_EQ(announced, (std::vector<std::string>{"call_a:get_weather", "call_b:get_time"}));
    EXPECT_TRUE(m.to_openai().at("content").is_null());
}

TEST(StreamAssembler, LlamaServerReasoningContentKeptApartAndTimingsAsUsage) {
    std::string reasoning;
    StreamCallbacks cb;
    cb.on_reasoning = [&](std::string_view t) { reasoning += t; };
    StreamAssembler a(cb);
    auto m = assemble(
        a,
        {
            R"({"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"object":"chat.completion.chunk"})",
            R"({"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":"Let me "}}]})",
            R"({"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":"think."}}]})",
            R"({"choices":[{"finish_reason":null,"index":0,"delta":{"content":"42"}}]})",
            R"({"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"timings":{"prompt_n":30,"predicted_n":7}})",
        });
    EXPECT_EQ(m.text(), "42");
    EXPECT_EQ(m.reasoning, "Let me think.");
    EXPECT_EQ(reasoning, "Let me think.");
    ASSERT_TRUE(m.usage);
    EXPECT_EQ(*m.usage, (Usage{30, 7}));
    EXPECT_FALSE(m.to_openai().contains("reasoning"));
    EXPECT_FALSE(m.to_openai().contains("reasoning_content"));
}

TEST(StreamAssembler, OllamaWholeCallsWithoutIndexFinishStopIsStillAToolTurn) {
    StreamAssembler a;
    auto m = assemble(
        a,
        {
            R"({"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"hmm"},"finish_reason":null}]})",
            R"({"choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_x","type":"function","function":{"name":"a","arguments":"{\"n\":1}"}},{"id":"call_y","type":"function","function":{"name":"b","arguments":{"k":"v"}}}]},"finish_reason":null}]})",
            R"({"choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_z","type":"function","function":{"name":"a","arguments":"{}"}}]},"finish_reason":null}]})",
            R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]})",
        });
    EXPECT_EQ(a.finish_reason(), "stop");
    EXPECT_TRUE(a.has_tool_calls());
    ASSERT_EQ(m.tool_calls.size(), 3u);
    EXPECT_EQ(m.tool_calls[0].id, "call_x");
    EXPECT_EQ(m.tool_calls[0].arguments, R"({"n":1})");
    EXPECT_EQ(m.tool_calls[1].name, "b");
    EXPECT_EQ(m.tool_calls[1].arguments, R"({"k":"v"})");  // an object, serialized
    EXPECT_EQ(m.tool_calls[2].id, "call_z");
    EXPECT_EQ(m.reasoning, "hmm");
}

TEST(StreamAssembler, VllmIdOnlyOnTheFirstDeltaOrNever) {
    StreamAssembler a;
    auto m = assemble(
        a,
        {
            R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]})",
            R"({"choices":[{"index":0,"delta":{"tool_calls":[{"id":"chatcmpl-tool-1","type":"function","index":0,"function":{"name":"a"}}]}}]})",
            R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":"}}]}}]})",
            R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]})",
            R"({"choices":[{"index":0,"delta":{"tool_calls":[{"type":"function","index":1,"function":{"name":"b","arguments":"{}"}}]}}]})",
            R"({"choices":[{"index":0,"delta":{"content":""},"finish_reason":"tool_calls","stop_reason":null}]})",
        });
    ASSERT_EQ(m.tool_calls.size(), 2u);
    EXPECT_EQ(m.tool_calls[0].id, "chatcmpl-tool-1");
    EXPECT_EQ(m.tool_calls[0].arguments, R"({"q":1})");
    EXPECT_EQ(m.tool_calls[1].id, "call_1");  // never sent
    EXPECT_EQ(m.tool_calls[1].name, "b");
}

TEST(StreamAssembler, ErrorObjectMidStreamIsReported) {
    StreamAssembler a;
    EXPECT_FALSE(a.add_chunk(json::parse(R"({"choices":[{"index":0,"delta":{"content":"par"}}]})").as_object()));
    auto err = a.add_chunk(json::parse(R"({"error":{"message":"model crashed","code":500}})").as_object());
    ASSERT_TRUE(err);
    EXPECT_EQ(*err, "model crashed");
    EXPECT_TRUE(a.started());
    EXPECT_EQ(a.message().text(), "par");
}

TEST(StreamAssembler, WholeResponse) {
    StreamAssembler a;
    auto err = a.add_response(json::parse(R"({"id":"x","object":"chat.completion","choices":[{"index":0,
        "message":{"role":"assistant","content":null,"reasoning_content":"r","tool_calls":[{"id":"c1","type":"function",
        "function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}],
        "usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}})")
                                  .as_object());
    EXPECT_FALSE(err);
    auto m = a.message();
    ASSERT_EQ(m.tool_calls.size(), 1u);
    EXPECT_EQ(m.tool_calls[0].id, "c1");
    EXPECT_EQ(m.tool_calls[0].arguments, R"({"a":1})");
    EXPECT_EQ(m.reasoning, "r");
    EXPECT_EQ(a.finish_reason(), "tool_calls");
    EXPECT_EQ(*m.usage, (Usage{3, 4}));
    EXPECT_TRUE(a.add_response(json::parse(R"({"object":"list"})").as_object()));
}

TEST(StreamAssembler, OldVllmTopLevelErrorObjectIsAnError) {
    // vLLM before 0.10.1: the error's fields at the top level, then [DONE]; it must not pass for an empty chunk.
    StreamAssembler a;
    EXPECT_FALSE(a.add_chunk(json::parse(R"({"choices":[{"index":0,"delta":{"content":"par"}}]})").as_object()));
    auto err = a.add_chunk(
        json::parse(R"({"object":"error","message":"too long","type":"BadRequestError","param":null,"code":400})")
            .as_object());
    ASSERT_TRUE(err);
    EXPECT_EQ(*err, "too long");
}

TEST(StreamAssembler, OpenAiRefusalIsShownAsContent) {
    std::string seen;
    StreamCallbacks cb;
    cb.on_content = [&](std::string_view t) { seen += t; };
    StreamAssembler a(cb);
    auto m = assemble(
        a,
        {
            R"({"choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":""},"finish_reason":null}]})",
            R"({"choices":[{"index":0,"delta":{"content":null,"refusal":"I can't "},"finish_reason":null}]})",
            R"({"choices":[{"index":0,"delta":{"refusal":"help."},"finish_reason":null}]})",
            R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})",
        });
    EXPECT_EQ(m.text(), "I can't help.");
    EXPECT_EQ(seen, "I can't help.");
}

TEST(StreamAssembler, LlamaServerNameWithFirstFragmentAndTimingsOnEveryChunk) {
    StreamAssembler a;
    auto m = assemble(
        a,
        {
            // timings_per_token: counters on every chunk; the last ones count, and a `usage` object beats them.
            R"({"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"timings":{"prompt_n":30,"predicted_n":1}})",
            R"({"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"id":"Xyz","type":"function","function":{"name":"f","arguments":"{\"a\""}}]}}],"timings":{"prompt_n":30,"predicted_n":4}})",
            R"({"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}}],"timings":{"prompt_n":30,"predicted_n":6}})",
            R"({"choices":[{"finish_reason":"tool_calls","index":0,"delta":{}}],"timings":{"prompt_n":30,"predicted_n":7}})",
        });
    ASSERT_EQ(m.tool_calls.size(), 1u);
    EXPECT_EQ(m.tool_calls[0].id, "Xyz");
    EXPECT_EQ(m.tool_calls[0].arguments, R"({"a":1})");
    EXPECT_EQ(*m.usage, (Usage{30, 7}));
    EXPECT_FALSE(
        a.add_chunk(json::parse(R"({"choices":[],"usage":{"prompt_tokens":31,"completion_tokens":8}})").as_object()));
    EXPECT_FALSE(a.add_chunk(json::parse(R"({"choices":[],"timings":{"prompt_n":1,"predicted_n":1}})").as_object()));
    EXPECT_EQ(*a.message().usage, (Usage{31, 8}));
}

TEST(StreamAssembler, VllmReasoningUnderBothNamesOnceAndLastFragmentOnTheFinishChunk) {
    StreamAssembler a;
    auto m = assemble(
        a,
        {
            R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]})",
            R"({"choices":[{"index":0,"delta":{"reasoning":"hm","reasoning_content":"hm"},"logprobs":null,"finish_reason":null}]})",
            R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"chatcmpl-tool-1","type":"function","function":{"name":"a"}}]},"logprobs":null,"finish_reason":null}]})",
            R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":"}}]},"logprobs":null,"finish_reason":null}]})",
            R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]},"logprobs":null,"finish_reason":"tool_calls","stop_reason":null}]})",
            R"({"choices":[],"usage":{"prompt_tokens":5,"total_tokens":9,"completion_tokens":4}})",
        });
    EXPECT_EQ(m.reasoning, "hm");
    ASSERT_EQ(m.tool_calls.size(), 1u);
    EXPECT_EQ(m.tool_calls[0].arguments, R"({"q":1})");
    EXPECT_EQ(a.finish_reason(), "tool_calls");
    EXPECT_EQ(*m.usage, (Usage{5, 4}));
}

// Found by fuzz_llm_stream: a number out of int64's range was cast to an integer (undefined behaviour, which the
// sanitizer build of this test turns into a failure). It is clamped now.
TEST(StreamAssembler, NumbersOutOfRangeAreClampedNotCast) {
    StreamAssembler a;
    auto m = assemble(
        a, {
               R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1e300,"function":{"name":"a"}}]}}]})",
               R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":4294967296,"function":{"name":"b"}}]}}]})",
               R"({"choices":[{"index":-1e300,"delta":{"content":"skipped"}}],"usage":{"prompt_tokens":1e300,"completion_tokens":-1e300}})",
           });
    // Indices out of range count as missing: two calls, not one merged into call 0 by a wrapped index.
    ASSERT_EQ(m.tool_calls.size(), 2u);
    EXPECT_EQ(m.tool_calls[0].name, "a");
    EXPECT_EQ(m.tool_calls[1].name, "b");
    EXPECT_TRUE(m.content.empty());
    EXPECT_EQ(*m.usage, (Usage{INT64_MAX, 0}));  // a negative count is 0
    auto total = *m.usage;  // the loop sums turns: saturating, not overflowing
    total += *m.usage;
    EXPECT_EQ(total, (Usage{INT64_MAX, 0}));
}

}  // namespace
}  // namespace switchboard::llm
