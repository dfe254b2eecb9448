// Fitting a conversation into the model's context window (agent/context_fit.hpp) and reading the endpoints' "too
// long" answers (llm::parse_context_overflow).
#include <switchboard/agent/context_fit.hpp>
#include <switchboard/llm/client.hpp>

#include <gtest/gtest.h>

#include <string>

namespace switchboard {
namespace {

using llm::Message;
using llm::Role;

Message call(const std::string& id, const std::string& args) {
    auto m = Message::assistant("");
    m.content.clear();
    m.tool_calls.push_back(llm::ToolCall{id, "function", "demo__echo", args, {}});
    return m;
}

Message result(const std::string& id, std::size_t bytes) {
    llm::ToolExecutionResult r;
    r.tool_call_id = id;
    r.name = "demo__echo";
    r.parts.push_back(llm::MessagePart::make_text(std::string(bytes, 'r')));
    return Message::tool(r);
}

// system, then two exchanges with a 20 KB tool result each, then a question.
std::vector<Message> conversation() {
    return {Message::system("Be brief."), Message::user("one"),  call("c1", "{}"), result("c1", 20'000),
            Message::assistant("done 1"), Message::user("two"),  call("c2", "{}"), result("c2", 20'000),
            Message::assistant("done 2"), Message::user("three")};
}

TEST(ContextFit, UnderTheBudgetNothingChanges) {
    const auto ms = conversation();
    const auto fit = agent::fit_to_window(ms, 100, 1'000'000);
    EXPECT_FALSE(fit.changed());
    EXPECT_TRUE(fit.fits);
    EXPECT_EQ(fit.messages, ms);
    EXPECT_EQ(fit.estimated_tokens, agent::estimate_tokens(ms) + 100);
}

TEST(ContextFit, OldToolResultsGoFirstThenWholeExchangesThenTheCurrentOnes) {
    const auto ms = conversation();
    // Room for the results cut to their first KiB, not for 2 × 20 KB.
    auto fit = agent::fit_to_window(ms, 100, 2'000);
    EXPECT_TRUE(fit.fits);
    EXPECT_EQ(fit.shortened_results, 2);
    EXPECT_EQ(fit.dropped_messages, 0);
    ASSERT_EQ(fit.messages.size(), ms.size());
    const auto cut = fit.messages[3].text();
    EXPECT_LT(cut.size(), 1'200u);
    EXPECT_NE(cut.find("left out to fit the model's context window"), std::string::npos);
    EXPECT_EQ(fit.messages[3].tool_call_id, "c1");
    EXPECT_EQ(ms[3].text().size(), 20'000u);  // the conversation itself is untouched

    // Tighter: the first exchange goes whole (it starts at a user message, so no tool message loses its call).
    fit = agent::fit_to_window(ms, 100, 300);
    EXPECT_TRUE(fit.fits) << fit.summary(1000);
    EXPECT_EQ(fit.dropped_messages, 8);  // both earlier exchanges
    ASSERT_EQ(fit.messages.size(), 2u);
    EXPECT_EQ(fit.messages[0].role, Role::system);
    EXPECT_EQ(fit.messages[1].text(), "three");

    // A budget nothing can meet: everything that may go is gone, and it says so.
    fit = agent::fit_to_window(ms, 100, 10);
    EXPECT_FALSE(fit.fits);
    EXPECT_NE(fit.summary(50).find("still over"), std::string::npos);
}

TEST(ContextFit, TheExchangeInProgressKeepsItsCallsAndLosesOnlyTheBulkOfItsResults) {
    std::vector<Message> ms{Message::user("go"), call("c1", "{}"), result("c1", 30'000), call("c2", "{}"),
                            result("c2", 30'000)};
    const auto fit = agent::fit_to_window(ms, 0, 1'000);
    EXPECT_TRUE(fit.fits);
    EXPECT_EQ(fit.dropped_messages, 0);
    EXPECT_EQ(fit.shortened_results, 2);
    ASSERT_EQ(fit.messages.size(), 5u);
    EXPECT_EQ(fit.messages[4].tool_call_id, "c2");
    EXPECT_EQ(fit.summary(2000), "shortened 2 tool results to fit the model's 2000-token context window (~" +
                                     std::to_string(fit.estimated_tokens) + " tokens sent)");
}

TEST(ContextFit, AnswerReserve) {
    EXPECT_EQ(agent::answer_reserve(8192, std::nullopt), 2048);
    EXPECT_EQ(agent::answer_reserve(131072, std::nullopt), 4096);
    EXPECT_EQ(agent::answer_reserve(8192, 1000), 1000);
    EXPECT_EQ(agent::answer_reserve(8192, 100000), 4096);  // never more than half the window
}

TEST(ContextOverflow, EachServersWording) {
    // llama-server (format_error_response, ERROR_TYPE_EXCEED_CONTEXT_SIZE)
    auto o = llm::parse_context_overflow(
        400, R"({"error":{"code":400,"message":"request (4476 tokens) exceeds the available context size (4096 )"
             R"(tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4476,"n_ctx":4096}})");
    ASSERT_TRUE(o);
    EXPECT_EQ(o->window, 4096);
    // OpenAI
    o = llm::parse_context_overflow(
        400, R"({"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages )"
             R"(resulted in 9001 tokens. Please reduce the length of the messages.","type":"invalid_request_error",)"
             R"("param":"messages","code":"context_length_exceeded"}})");
    ASSERT_TRUE(o);
    EXPECT_EQ(o->window, 8192);
    // vLLM
    o = llm::parse_context_overflow(
        400, R"({"object":"error","message":"This model's maximum context length is 32768 tokens. However, you )"
             R"(requested 40000 tokens (39000 in the messages, 1000 in the completion).","type":"BadRequestError",)"
             R"("param":null,"code":400})");
    ASSERT_TRUE(o);
    EXPECT_EQ(o->window, 32768);
    // Recognised without a number.
    o = llm::parse_context_overflow(400, R"({"error":{"message":"prompt is too long"}})");
    ASSERT_TRUE(o);
    EXPECT_FALSE(o->window);
    // Other errors are not overflows.
    EXPECT_FALSE(llm::parse_context_overflow(400, R"({"error":{"message":"invalid model"}})"));
    EXPECT_FALSE(llm::parse_context_overflow(500, R"({"error":{"message":"maximum context length is 10"}})"));
}

}  // namespace
}  // namespace switchboard
