// The agent loop (agent::Conversation) with the real LLM client against switchboard-fake-llm and real demo servers in
// a real pool: tool round trips in every dialect, concurrent calls, errors the model reads, a cut stream, cancellation
// reaching the server, approvals, per-conversation overrides, attachments and prompts, and servers' own requests
// (sampling, elicitation, roots) answered by the host.
#include "agent_harness.hpp"
#include "coro_test.hpp"

#include <switchboard/agent/conversation.hpp>
#include <switchboard/agent/server_requests.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/host/context.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

namespace switchboard::test {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

/// A pool over `entries`, its main context, the model client and one conversation, with what the observer saw.
struct Rig {
    std::shared_ptr<host::ServerPool> pool;
    std::shared_ptr<host::Context> context;
    std::shared_ptr<llm::Client> llm;
    std::unique_ptr<agent::Conversation> conversation;
    agent::Observer observer;
    std::vector<std::vector<llm::Message>> batches;
    int approvals_asked = 0;

    static awaitable<std::unique_ptr<Rig>> start(host::Config config, llm::Settings settings,
                                                 host::PoolOptions options) {
        auto ex = co_await asio::this_coro::executor;
        auto r = std::make_unique<Rig>();
        r->pool = host::ServerPool::create(ex, std::move(config), std::move(options));
        r->context = host::Context::create(r->pool, host::ContextOptions{});
        r->llm = std::make_shared<llm::Client>(ex, std::move(settings));
        r->conversation = std::make_unique<agent::Conversation>(r->context, r->llm, agent::LoopOptions{});
        r->conversation->approvals().all = true;
        auto* rig = r.get();
        r->observer.on_messages = [rig](std::span<const llm::Message> m, std::span<const json::object>) {
            rig->batches.emplace_back(m.begin(), m.end());
        };
        r->pool->start();
        co_await r->pool->wait_until_settled(20s);
        co_return r;
    }
    /// send(text), cancelled `after` the first tool call started (`on_tool`) or after the start.
    awaitable<agent::RunResult> send_and_cancel(std::string text, std::chrono::milliseconds after, bool on_tool) {
        auto ex = co_await asio::this_coro::executor;
        auto cancel = std::make_shared<asio::cancellation_signal>();
        auto arm = [ex, cancel, after] {
            core::spawn_logged(
                ex,
                [cancel, after]() -> awaitable<void> {
                    co_await sleep_for(after);
                    cancel->emit(asio::cancellation_type::terminal);
                },
                "cancel");
        };
        if (on_tool)
            observer.on_tool_start = [arm](const llm::ToolCall&, const std::string&) { arm(); };
        else
            arm();
        co_return co_await asio::co_spawn(ex, conversation->send(std::move(text), observer),
                                          asio::bind_cancellation_slot(cancel->slot(), asio::use_awaitable));
    }
    awaitable<void> stop() {
        conversation.reset();
        context.reset();
        co_await pool->shutdown();
    }
};

class Agent : public ::testing::Test {
protected:
    TempDir dir;
};

class AgentDialects : public Agent, public ::testing::WithParamInterface<const char*> {};

TEST_P(AgentDialects, ToolRoundTrip) {
    const std::string d = GetParam();
    FakeLlm fake(dir.path, R"([{"dialect": ")" + d + R"(", "toolCalls": [)" +
                               tool_call("echo", R"({"message":"ping"})") + R"(]}, {"dialect": ")" + d +
                               R"(", "content": "The server said ping."}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        auto cfg = config_of({{"demo", demo_entry()}});
        host::PoolOptions no_options;
        auto rig = co_await Rig::start(std::move(cfg), fake.settings(), no_options);
        auto result = co_await rig->conversation->send("Echo ping, please.", rig->observer);
        EXPECT_EQ(result.stop, agent::StopReason::done) << result.error;
        EXPECT_EQ(result.answer, "The server said ping.");
        EXPECT_EQ(result.turns, 2);
        CO_ASSERT_EQ(result.tool_calls.size(), 1u);
        EXPECT_EQ(result.tool_calls[0].server, "demo");
        EXPECT_EQ(result.tool_calls[0].tool, "echo");
        EXPECT_FALSE(result.tool_calls[0].is_error);
        // Batches: the user message; the assistant's call with its result; the answer.
        CO_ASSERT_EQ(rig->batches.size(), 3u);
        EXPECT_EQ(rig->batches[1].size(), 2u);

        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 2u);
        const auto& first = bodies[0].as_object();
        auto tools = offered_tools(first);
        EXPECT_TRUE(has(tools, "echo"));
        // Normalised schemas: an object with properties, no $schema.
        for (const auto& t : first.at("tools").as_array()) {
            const auto& params = t.at("function").at("parameters").as_object();
            EXPECT_EQ(text_of(params.at("type")), "object");
            EXPECT_TRUE(params.contains("properties"));
            EXPECT_FALSE(params.contains("$schema"));
        }
        const auto& messages = bodies[1].at("messages").as_array();
        CO_ASSERT_EQ(messages.size(), 3u);
        const auto& call = messages[1].at("tool_calls").as_array()[0];
        EXPECT_EQ(text_of(messages[2].at("role")), "tool");
        EXPECT_EQ(messages[2].at("tool_call_id"), call.at("id"));  // made up (call_0) when the server sent none
        EXPECT_NE(message_text(messages[2]).find("ping"), std::string::npos);
        EXPECT_FALSE(messages[1].as_object().contains("reasoning_content"));
        co_await rig->stop();
    });
}

INSTANTIATE_TEST_SUITE_P(EveryDialect, AgentDialects, ::testing::Values("openai", "llamacpp", "ollama", "vllm"));

TEST_F(Agent, CallsOfOneTurnRunConcurrently) {
    // Two servers, one slow call each (1 s): run one after the other they would take 2 s.
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("a__slow", R"({"seconds": 1, "steps": 2})") + ", " +
                               tool_call("b__slow", R"({"seconds": 1, "steps": 2})") +
                               R"(]}, {"content": "Both finished."}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        auto cfg = config_of({{"a", demo_entry()}, {"b", demo_entry(R"("--legacy-only")")}});
        host::PoolOptions no_options;
        auto rig = co_await Rig::start(std::move(cfg), fake.settings(), no_options);
        std::vector<clock_type::time_point> starts;
        rig->observer.on_tool_start = [&](const llm::ToolCall&, const std::string&) {
            starts.push_back(clock_type::now());
        };
        const auto t0 = clock_type::now();
        auto result = co_await rig->conversation->send("Run both.", rig->observer);
        const auto took = clock_type::now() - t0;
        EXPECT_EQ(result.stop, agent::StopReason::done) << result.error;
        CO_ASSERT_EQ(result.tool_calls.size(), 2u);
        EXPECT_EQ(result.tool_calls[0].server, "a");
        EXPECT_EQ(result.tool_calls[1].server, "b");
        for (const auto& c : result.tool_calls) {
            EXPECT_FALSE(c.is_error);
            EXPECT_GE(c.ms, 900);
        }
        EXPECT_LT(took, 1900ms);  // overlapped
        co_await rig->stop();
    });
}

TEST_F(Agent, MalformedArgumentsAndUnknownToolsBecomeErrorsTheModelReads) {
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("echo", R"({"message": )") + ", " +
                               tool_call("no_such_tool", "{}") + R"(]}, {"content": "Recovered."}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        auto cfg = config_of({{"demo", demo_entry()}});
        host::PoolOptions no_options;
        auto rig = co_await Rig::start(std::move(cfg), fake.settings(), no_options);
        auto result = co_await rig->conversation->send("Try.", rig->observer);
        EXPECT_EQ(result.stop, agent::StopReason::done);
        EXPECT_EQ(result.answer, "Recovered.");
        CO_ASSERT_EQ(result.tool_calls.size(), 2u);
        EXPECT_TRUE(result.tool_calls[0].is_error);
        EXPECT_TRUE(result.tool_calls[1].is_error);
        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 2u);
        const auto& messages = bodies[1].at("messages").as_array();
        CO_ASSERT_EQ(messages.size(), 4u);
        EXPECT_NE(message_text(messages[2]).find("was not called"), std::string::npos) << message_text(messages[2]);
        EXPECT_NE(message_text(messages[3]).find("no_such_tool"), std::string::npos) << message_text(messages[3]);
        co_await rig->stop();
    });
}

TEST_F(Agent, AStreamCutMidAnswerEndsTheRunAndKeepsEveryCompleteMessage) {
    std::string long_answer;
    for (int i = 0; i < 60; ++i) long_answer += "word" + std::to_string(i) + " ";
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("echo", R"({"message":"x"})") + R"(]}, {"content": ")" +
                               long_answer + R"(", "cutAfterBytes": 700}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        auto cfg = config_of({{"demo", demo_entry()}});
        host::PoolOptions no_options;
        auto rig = co_await Rig::start(std::move(cfg), fake.settings(), no_options);
        auto result = co_await rig->conversation->send("Go.", rig->observer);
        EXPECT_EQ(result.stop, agent::StopReason::error);
        EXPECT_FALSE(result.error.empty());
        const auto& m = rig->conversation->messages();
        CO_ASSERT_TRUE(m.size() >= 3u);
        EXPECT_EQ(m[0].role, llm::Role::user);
        EXPECT_EQ(m[1].tool_calls.size(), 1u);
        EXPECT_EQ(m[2].role, llm::Role::tool);
        // Everything the store would have: the user message and the complete tool turn (and at most the cut answer).
        CO_ASSERT_TRUE(rig->batches.size() >= 2u);
        EXPECT_EQ(rig->batches[1].size(), 2u);
        co_await rig->stop();
    });
}

TEST_F(Agent, CancellingDuringASlowToolCancelsTheCallOnTheServer) {
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("slow", R"({"seconds": 30, "steps": 30})") +
                               R"(]}, {"content": "never asked"}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        auto cfg = config_of({{"demo", demo_entry()}});
        host::PoolOptions no_options;
        auto rig = co_await Rig::start(std::move(cfg), fake.settings(), no_options);
        const auto t0 = clock_type::now();
        auto result = co_await rig->send_and_cancel("Slowly.", 300ms, true);
        EXPECT_LT(clock_type::now() - t0, 5s);
        EXPECT_EQ(result.stop, agent::StopReason::cancelled);
        CO_ASSERT_EQ(result.tool_calls.size(), 1u);
        EXPECT_TRUE(result.tool_calls[0].is_error);
        // The server saw notifications/cancelled (its stderr says so).
        for (int i = 0; i < 40; ++i) {
            if (rig->pool->status("demo")->stderr_tail.find("slow: cancelled") != std::string::npos) break;
            co_await sleep_for(50ms);
        }
        EXPECT_NE(rig->pool->status("demo")->stderr_tail.find("slow: cancelled"), std::string::npos);
        // Only the first model request was made, and the tool turn was kept whole.
        EXPECT_EQ((co_await fake.request_bodies()).size(), 1u);
        CO_ASSERT_EQ(rig->batches.size(), 2u);
        EXPECT_EQ(rig->batches[1].size(), 2u);
        co_await rig->stop();
    });
}

TEST_F(Agent, CancellingDuringTheStreamClosesTheConnection) {
    FakeLlm fake(dir.path, R"([{"content": "This answer stalls after its first words.", "hangMs": 20000}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        auto cfg = config_of({{"demo", demo_entry()}});
        host::PoolOptions no_options;
        auto rig = co_await Rig::start(std::move(cfg), fake.settings(), no_options);
        const auto t0 = clock_type::now();
        auto result = co_await rig->send_and_cancel("Talk.", 500ms, false);
        EXPECT_LT(clock_type::now() - t0, 3s);
        EXPECT_EQ(result.stop, agent::StopReason::cancelled);
        bool closed = false;
        for (int i = 0; i < 40 && !closed; ++i) {
            for (const auto& e : co_await fake.events()) closed = closed || e == "closed 1";
            if (!closed) co_await sleep_for(50ms);
        }
        EXPECT_TRUE(closed);
        co_await rig->stop();
    });
}

TEST_F(Agent, ApprovalIsAskedOnceThenRememberedForThatConversationOnly) {
    const auto echo = [](const std::string& m) {
        return R"({"toolCalls": [)" + tool_call("echo", R"({"message":")" + m + R"("})") + "]}";
    };
    FakeLlm fake(dir.path, "[" + echo("one") + R"(, {"content": "1"}, )" + echo("two") + R"(, {"content": "2"}, )" +
                               echo("three") + R"(, {"content": "3"}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        auto cfg = config_of({{"demo", demo_entry()}});
        host::PoolOptions no_options;
        auto rig = co_await Rig::start(std::move(cfg), fake.settings(), no_options);
        auto& approvals = rig->conversation->approvals();
        approvals.all = false;
        int asked = 0;
        agent::Decision answer = agent::Decision::always_tool;
        rig->observer.ask_approval = [&](const agent::ApprovalRequest& r) -> awaitable<agent::Decision> {
            ++asked;
            EXPECT_EQ(r.name, "echo");
            EXPECT_EQ(r.server, "demo");
            co_return answer;
        };
        auto r1 = co_await rig->conversation->send("first", rig->observer);
        auto r2 = co_await rig->conversation->send("second", rig->observer);
        EXPECT_EQ(asked, 1);
        EXPECT_FALSE(r1.tool_calls.at(0).denied);
        EXPECT_FALSE(r2.tool_calls.at(0).denied);
        EXPECT_EQ(approvals.tools.count("echo"), 1u);
        // Another conversation on the same context asks again; this time the user says no, and the model is told.
        agent::Conversation other(rig->context, rig->llm, agent::LoopOptions{});
        answer = agent::Decision::deny;
        auto r3 = co_await other.send("third", rig->observer);
        EXPECT_EQ(asked, 2);
        CO_ASSERT_EQ(r3.tool_calls.size(), 1u);
        EXPECT_TRUE(r3.tool_calls[0].denied);
        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 6u);
        const auto& last = bodies[5].at("messages").as_array();
        EXPECT_NE(message_text(last.back()).find("denied"), std::string::npos) << message_text(last.back());
        co_await rig->stop();
    });
}

TEST_F(Agent, WithNobodyToAskOnlyAllowedToolsRun) {
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("echo", R"({"message":"a"})") + ", " +
                               tool_call("add", R"({"a": 1, "b": 2})") + R"(]}, {"content": "ok"}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        auto cfg = config_of({{"demo", demo_entry()}});
        host::PoolOptions no_options;
        auto rig = co_await Rig::start(std::move(cfg), fake.settings(), no_options);
        auto& approvals = rig->conversation->approvals();
        approvals.all = false;
        approvals.patterns = {"demo__ad*"};  // matched against server__tool too
        auto result = co_await rig->conversation->send("go", rig->observer);
        CO_ASSERT_EQ(result.tool_calls.size(), 2u);
        EXPECT_TRUE(result.tool_calls[0].denied);
        EXPECT_FALSE(result.tool_calls[1].denied);
        EXPECT_FALSE(result.tool_calls[1].is_error);
        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 2u);
        const auto& messages = bodies[1].at("messages").as_array();
        EXPECT_NE(message_text(messages[2]).find("--allow-tools"), std::string::npos) << message_text(messages[2]);
        EXPECT_NE(message_text(messages[3]).find("3"), std::string::npos);
        co_await rig->stop();
    });
}

TEST_F(Agent, AnOverrideInOneConversationDoesNotAffectAnother) {
    FakeLlm fake(dir.path, R"([{"content": "one"}, {"content": "two"}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        auto cfg = config_of({{"demo", demo_entry()}});
        host::PoolOptions no_options;
        auto rig = co_await Rig::start(std::move(cfg), fake.settings(), no_options);
        auto other_context = host::Context::create(rig->pool, host::ContextOptions{});
        agent::Conversation other(other_context, rig->llm, agent::LoopOptions{});
        rig->context->set_tool_enabled("demo", "echo", false);
        co_await rig->conversation->send("a", rig->observer);
        co_await other.send("b", rig->observer);
        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 2u);
        auto first = offered_tools(bodies[0].as_object());
        auto second = offered_tools(bodies[1].as_object());
        EXPECT_FALSE(has(first, "echo"));
        EXPECT_TRUE(has(second, "echo"));
        EXPECT_EQ(first.size() + 1, second.size());
        co_await rig->stop();
    });
}

TEST_F(Agent, AttachmentsAndPromptsBecomeMessages) {
    FakeLlm fake(dir.path, R"([{"content": "read it"}, {"content": "hi Ada"}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        auto cfg = config_of({{"demo", demo_entry()}});
        host::PoolOptions no_options;
        auto rig = co_await Rig::start(std::move(cfg), fake.settings(), no_options);
        co_await rig->context->attach_resource("demo", "demo://text/readme");
        co_await rig->context->attach_resource("demo", "demo://binary/logo.png");
        co_await rig->conversation->send("What does this say?", rig->observer);
        EXPECT_TRUE(rig->context->attachments().items().empty());  // consumed
        std::map<std::string, std::string> args{{"name", "Ada"}};
        auto n = co_await rig->conversation->insert_prompt("demo", "greet", std::move(args), rig->observer);
        CO_ASSERT_TRUE(n.has_value());
        EXPECT_EQ(*n, 1u);
        co_await rig->conversation->run(rig->observer);
        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 2u);
        const auto user = message_text(bodies[0].at("messages").as_array()[0]);
        EXPECT_NE(user.find("What does this say?"), std::string::npos);
        EXPECT_NE(user.find("Resource demo://text/readme"), std::string::npos) << user;
        // The model is not vision-capable: the image is described, not sent.
        EXPECT_NE(user.find("not shown"), std::string::npos) << user;
        const auto& second = bodies[1].at("messages").as_array();
        EXPECT_NE(message_text(second.back()).find("Ada"), std::string::npos);
        co_await rig->stop();
    });
}

class AgentEras : public Agent, public ::testing::WithParamInterface<const char*> {};

// Modern (2026-07-28: the requests arrive as input_required continuations) and legacy (server-to-client requests).
TEST_P(AgentEras, ServersRequestsAreAnsweredByTheHost) {
    // ask_model → sampling (the scripted model answers "blue"), ask_user → elicitation, list_roots → roots.
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("ask_model", R"({"question": "Favourite colour?"})") +
                               R"(]}, {"content": "blue"}, {"content": "The model said blue."}, {"toolCalls": [)" +
                               tool_call("ask_user", "{}") + ", " + tool_call("list_roots", "{}") +
                               R"(]}, {"content": "done"}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        int sampling_asked = 0;
        agent::ServerRequestOptions o;
        o.approve_sampling = [&](const std::string& server, const json::object&) -> awaitable<bool> {
            ++sampling_asked;
            EXPECT_EQ(server, "demo");
            co_return true;
        };
        o.elicit = [](const std::string&, const json::object&) -> awaitable<agent::ElicitationAnswer> {
            agent::ElicitationAnswer a;
            a.action = agent::ElicitationAnswer::Action::accept;
            a.content["name"] = "Ada";
            a.content["age"] = 36;
            co_return a;
        };
        o.roots = {dir.path};
        // The handlers need the model client before the rig exists: a client of their own on the same endpoint.
        auto ex = co_await asio::this_coro::executor;
        o.llm = std::make_shared<llm::Client>(ex, fake.settings());
        host::PoolOptions options;
        options.handlers = agent::make_server_request_handlers(o);
        auto cfg = config_of({{"demo", demo_entry(std::string(R"("--client-requests")") + GetParam())}});
        auto rig = co_await Rig::start(std::move(cfg), fake.settings(), options);
        auto r1 = co_await rig->conversation->send("Ask the model.", rig->observer);
        EXPECT_EQ(sampling_asked, 1);
        CO_ASSERT_EQ(r1.tool_calls.size(), 1u);
        EXPECT_FALSE(r1.tool_calls[0].is_error);
        auto r2 = co_await rig->conversation->send("Ask me, and list roots.", rig->observer);
        EXPECT_EQ(r2.answer, "done");
        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 5u);
        EXPECT_EQ(r1.answer, "The model said blue.");
        // Request 2 was the sampling request: the server's system prompt and question, no tools.
        const auto& sampling = bodies[1].as_object();
        EXPECT_FALSE(sampling.contains("tools"));
        const auto& sm = sampling.at("messages").as_array();
        CO_ASSERT_EQ(sm.size(), 2u);
        EXPECT_EQ(text_of(sm[0].at("role")), "system");
        EXPECT_EQ(message_text(sm[1]), "Favourite colour?");
        EXPECT_EQ(text_of(sampling.at("max_tokens")), "100");
        // Request 3 carries the tool result: the model's answer, relayed by the server.
        EXPECT_NE(message_text(bodies[2].at("messages").as_array().back()).find("blue"), std::string::npos);
        const auto& last = bodies[4].at("messages").as_array();
        const auto elicited = message_text(last[last.size() - 2]);
        const auto roots = message_text(last[last.size() - 1]);
        EXPECT_NE(elicited.find("Ada"), std::string::npos) << elicited;
        EXPECT_NE(elicited.find("accept"), std::string::npos) << elicited;
        EXPECT_NE(roots.find("file://" + dir.path.string()), std::string::npos) << roots;
        co_await rig->stop();
    });
}

INSTANTIATE_TEST_SUITE_P(BothEras, AgentEras, ::testing::Values(R"(, "--modern-only")", R"(, "--legacy-only")"));

// MCP Apps: a tool whose _meta.ui.visibility is ["app"] is not offered to the model, and a call the model makes to it
// anyway is refused without reaching the server; the app tool beside it is offered.
TEST_F(Agent, AnAppOnlyToolIsNeitherOfferedToNorCallableByTheModel) {
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("counter_bump", "{}") + ", " + tool_call("counter", "{}") +
                               R"(]}, {"content": "Done."}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        auto cfg = config_of({{"demo", demo_entry(R"("--apps")")}});
        host::PoolOptions no_options;
        auto rig = co_await Rig::start(std::move(cfg), fake.settings(), no_options);
        auto result = co_await rig->conversation->send("Count.", rig->observer);
        EXPECT_EQ(result.answer, "Done.");
        CO_ASSERT_EQ(result.tool_calls.size(), 2u);
        EXPECT_TRUE(result.tool_calls[0].is_error);
        EXPECT_FALSE(result.tool_calls[1].is_error);
        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 2u);
        std::set<std::string> offered;
        for (const auto& t : bodies[0].at("tools").as_array())
            offered.emplace(t.at("function").at("name").as_string());
        EXPECT_TRUE(offered.count("counter"));
        EXPECT_TRUE(offered.count("csp_probe"));
        EXPECT_FALSE(offered.count("counter_bump"));
        const auto& messages = bodies[1].at("messages").as_array();
        CO_ASSERT_EQ(messages.size(), 4u);
        EXPECT_NE(message_text(messages[2]).find("only for its MCP App"), std::string::npos)
            << message_text(messages[2]);
        // The refused call never reached the server: the counter is still 0.
        EXPECT_NE(message_text(messages[3]).find("counter = 0"), std::string::npos) << message_text(messages[3]);
        co_await rig->stop();
    });
}

TEST_F(Agent, TheTurnLimitStopsALoopingModel) {
    std::string script = "[";
    for (int i = 0; i < 3; ++i)
        script +=
            std::string(i ? ", " : "") + R"({"toolCalls": [)" + tool_call("echo", R"({"message":"again"})") + "]}";
    FakeLlm fake(dir.path, script + "]");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto cfg = config_of({{"demo", demo_entry()}});
        host::PoolOptions no_options;
        auto rig = co_await Rig::start(std::move(cfg), fake.settings(), no_options);
        agent::LoopOptions loop;
        loop.max_turns = 2;
        agent::Conversation limited(rig->context, std::make_shared<llm::Client>(ex, fake.settings()), loop);
        limited.approvals().all = true;
        auto result = co_await limited.send("loop", rig->observer);
        EXPECT_EQ(result.stop, agent::StopReason::max_turns);
        EXPECT_EQ(result.turns, 2);
        EXPECT_EQ(result.tool_calls.size(), 2u);
        co_await rig->stop();
    });
}

// A tool call echoing `bytes` characters (its result is as long as its arguments).
std::string big_echo(std::size_t bytes) {
    return R"({"toolCalls": [)" + tool_call("echo", R"({"message":")" + std::string(bytes, 'x') + R"("})") + "]}";
}

// The tool messages of a request body, as text.
std::vector<std::string> tool_texts(const json::value& body) {
    std::vector<std::string> out;
    for (const auto& m : body.at("messages").as_array())
        if (text_of(m.at("role")) == "tool") out.push_back(message_text(m));
    return out;
}

TEST_F(Agent, ALongConversationIsFittedToTheConfiguredContextWindow) {
    // Each exchange carries ~1,500 tokens of arguments and ~1,500 of result; the window leaves ~3,000 for the prompt.
    FakeLlm fake(dir.path, "[" + big_echo(6000) + R"(, {"content": "first done"}, )" + big_echo(6000) +
                               R"(, {"content": "second done"}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        auto cfg = config_of({{"demo", demo_entry()}});
        auto settings = fake.settings();
        settings.context_window = 4000;
        host::PoolOptions no_options;
        auto rig = co_await Rig::start(std::move(cfg), settings, no_options);
        std::vector<std::string> notices;
        rig->observer.on_notice = [&notices](std::string_view n) { notices.emplace_back(n); };
        auto result = co_await rig->conversation->send("Echo a lot.", rig->observer);
        EXPECT_EQ(result.stop, agent::StopReason::done) << result.error;
        result = co_await rig->conversation->send("Again.", rig->observer);
        EXPECT_EQ(result.stop, agent::StopReason::done) << result.error;
        EXPECT_EQ(result.answer, "second done");

        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 4u);
        // 2: the current exchange's result gave way (its call stays whole).
        auto tools = tool_texts(bodies[1]);
        CO_ASSERT_EQ(tools.size(), 1u);
        EXPECT_LT(tools[0].size(), 1500u);
        EXPECT_NE(tools[0].find("left out to fit the model's context window"), std::string::npos);
        // 3: a new question; the earlier result is cut, everything else is there.
        EXPECT_EQ(bodies[2].at("messages").as_array().size(), 5u);
        tools = tool_texts(bodies[2]);
        CO_ASSERT_EQ(tools.size(), 1u);
        EXPECT_LT(tools[0].size(), 1500u);
        // 4: the first exchange is left out whole; the request starts at "Again.".
        const auto& fourth = bodies[3].at("messages").as_array();
        CO_ASSERT_EQ(fourth.size(), 3u);
        EXPECT_EQ(message_text(fourth[0]), "Again.");
        // The conversation (what the store keeps) has every message whole.
        const auto& m = rig->conversation->messages();
        CO_ASSERT_EQ(m.size(), 8u);
        EXPECT_GE(m[2].text().size(), 6000u);
        EXPECT_GE(m[6].text().size(), 6000u);
        CO_ASSERT_FALSE(notices.empty());
        EXPECT_NE(notices.back().find("4000-token context window"), std::string::npos) << notices.back();
        co_await rig->stop();
    });
}

class AgentContextOverflow : public Agent, public ::testing::WithParamInterface<const char*> {};

TEST_P(AgentContextOverflow, TheEndpointsTooLongAnswerIsMetWithAFittedRetry) {
    // No contextWindow configured: the endpoint's 400 says the window (n_ctx, or "maximum context length is N").
    const std::string d = GetParam();
    FakeLlm fake(dir.path, R"({"contextTokens": 3000, "responses": [)" +
                               big_echo(6000).insert(1, R"("dialect": ")" + d + R"(", )") + R"(, {"dialect": ")" + d +
                               R"(", "content": "fitted"}]})");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        auto cfg = config_of({{"demo", demo_entry()}});
        host::PoolOptions no_options;
        auto rig = co_await Rig::start(std::move(cfg), fake.settings(), no_options);
        auto result = co_await rig->conversation->send("Echo a lot.", rig->observer);
        EXPECT_EQ(result.stop, agent::StopReason::done) << result.error;
        EXPECT_EQ(result.answer, "fitted");
        EXPECT_EQ(result.turns, 2);  // the refused request is not a turn
        EXPECT_EQ(rig->conversation->context_window(), 3000);
        const auto events = co_await fake.events();
        EXPECT_NE(std::find(events.begin(), events.end(), json::value("context 2")), events.end());
        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 3u);
        EXPECT_GE(tool_texts(bodies[1])[0].size(), 6000u);
        EXPECT_LT(tool_texts(bodies[2])[0].size(), 1500u);
        EXPECT_GE(rig->conversation->messages()[2].text().size(), 6000u);
        co_await rig->stop();
    });
}

INSTANTIATE_TEST_SUITE_P(EachWording, AgentContextOverflow, ::testing::Values("llamacpp", "openai", "vllm"));

}  // namespace
}  // namespace switchboard::test
