// Agents and skills in forked contexts (agent/fork.hpp) with real processes and the scripted model: a lazy server's
// process exists only while the fork that declared it runs; the main context's requests never carry its tools; two
// forks share one process; required and optional servers; a server dying mid-fork; inline skills; no self-calls;
// approvals shared live between the conversation and its forks.
#include "agent_harness.hpp"
#include "coro_test.hpp"

#include <switchboard/agent/fork.hpp>
#include <switchboard/host/context.hpp>

#include <boost/asio/this_coro.hpp>
#include <boost/json/serialize.hpp>

namespace switchboard::test {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
using asio::awaitable;
using namespace std::chrono_literals;

agent::Definition researcher() {
    agent::Definition d;
    d.name = "researcher";
    d.description = "Looks things up in the notes.";
    d.body = "You are a careful researcher.";
    d.required = {"notes"};
    d.tools = std::vector<std::string>{};  // none of the main context's tools
    return d;
}

class Fork : public ::testing::Test {
protected:
    TempDir dir;
    std::optional<host::ToolCatalog> search_;  ///< set: the main conversation offers tool search (forks follow)
    bool yes_ = true;                          ///< false: calls are approved by the observer's ask_approval
    fs::path pids() const { return dir.path / "notes.pids"; }
    /// An eager demo server "main" and a lazy one "notes" (with the extra tool echo_1) that records its pid.
    host::Config config() const {
        return config_of({{"main", demo_entry()},
                          {"notes", sh_entry("echo $$ >> " + pids().string() + "; exec " + demo_server() +
                                                 " --extra-tools 1",
                                             R"(, "lazy": true)")}});
    }
    struct Rig {
        std::shared_ptr<host::ServerPool> pool;
        std::shared_ptr<host::Context> main;
        std::unique_ptr<agent::Conversation> conversation;
        agent::Observer observer;
    };
    awaitable<Rig> start(const FakeLlm& fake, std::vector<agent::Definition> defs) {
        auto ex = co_await asio::this_coro::executor;
        Rig r;
        r.pool = host::ServerPool::create(ex, config(), fast_options());
        r.main = host::Context::create(r.pool, host::ContextOptions{});
        auto llm = std::make_shared<llm::Client>(ex, fake.settings());
        r.conversation = std::make_unique<agent::Conversation>(r.main, llm, agent::LoopOptions{});
        r.conversation->approvals().all = yes_;
        agent::ForkEnvironment env{r.pool, r.main, llm, std::move(defs), r.conversation->shared_approvals()};
        *env.tool_search = search_;
        for (auto& t : agent::fork_tools(env, 1, "")) r.conversation->add_local_tool(std::move(t));
        r.pool->start();
        co_await r.pool->wait_until_settled(20s);
        co_return r;
    }
};

TEST_F(Fork, ALazyServerRunsOnlyWhileItsAgentRunsAndOnlyTheForkSeesItsTools) {
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("agent__researcher", R"({"task": "Find the note."})") +
                               R"(]}, {"toolCalls": [)" + tool_call("echo_1", R"({"message": "the note"})") +
                               R"(]}, {"content": "Found: the note."}, {"content": "The researcher found the note."}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        std::vector<agent::Definition> defs{researcher()};  // built before the co_await (GCC 12)
        auto rig = co_await start(fake, std::move(defs));
        EXPECT_FALSE(fs::exists(pids()));  // dormant: never spawned
        EXPECT_EQ(rig.pool->status("notes")->lifecycle(), "dormant");
        bool alive_during_fork = false;
        rig.observer.on_tool_start = [&](const llm::ToolCall& call, const std::string&) {
            if (call.name != "echo_1") return;
            auto lines = read_lines(pids());
            alive_during_fork = lines.size() == 1 && process_alive(std::stoi(lines[0]));
        };
        auto result = co_await rig.conversation->send("Ask the researcher.", rig.observer);
        EXPECT_EQ(result.stop, agent::StopReason::done) << result.error;
        EXPECT_EQ(result.answer, "The researcher found the note.");
        EXPECT_TRUE(alive_during_fork);
        // Released after the fork: keepWarmSeconds 0 stops it.
        const auto lines = read_lines(pids());
        CO_ASSERT_EQ(lines.size(), 1u);
        bool gone = false;
        for (int i = 0; i < 60 && !gone; ++i) {
            gone = !process_alive(std::stoi(lines[0]));
            if (!gone) co_await sleep_for(50ms);
        }
        EXPECT_TRUE(gone);

        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 4u);
        auto main_tools = offered_tools(bodies[0].as_object());
        EXPECT_TRUE(has(main_tools, "agent__researcher"));
        EXPECT_TRUE(has(main_tools, "echo"));
        EXPECT_FALSE(has(main_tools, "echo_1"));  // the lazy server's tools never reach the main context
        auto fork_tools = offered_tools(bodies[1].as_object());
        EXPECT_TRUE(has(fork_tools, "echo_1"));
        EXPECT_FALSE(has(fork_tools, "add") && !has(fork_tools, "echo_1"));
        EXPECT_FALSE(has(fork_tools, "agent__researcher"));  // never itself
        const auto& fork_messages = bodies[1].at("messages").as_array();
        EXPECT_EQ(text_of(fork_messages[0].at("role")), "system");
        EXPECT_EQ(message_text(fork_messages[0]), "You are a careful researcher.");
        EXPECT_EQ(message_text(fork_messages[1]), "Find the note.");
        // The main conversation gets the answer with the fork's calls summarised.
        const auto result_text = message_text(bodies[3].at("messages").as_array().back());
        EXPECT_NE(result_text.find("Found: the note."), std::string::npos) << result_text;
        EXPECT_NE(result_text.find("1 tool call: echo_1"), std::string::npos) << result_text;
        co_await rig.pool->shutdown();
    });
}

TEST_F(Fork, WithToolSearchOnAForkOffersItToo) {
    search_ = host::ToolCatalog(dir.path / "catalog");
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("agent__researcher", R"({"task": "Look."})") +
                               R"(]}, {"content": "Looked."}, {"content": "Done."}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        std::vector<agent::Definition> defs{researcher()};  // built before the co_await (GCC 12)
        auto rig = co_await start(fake, std::move(defs));
        auto result = co_await rig.conversation->send("Ask.", rig.observer);
        EXPECT_EQ(result.stop, agent::StopReason::done) << result.error;
        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 3u);
        auto fork_tools = offered_tools(bodies[1].as_object());
        EXPECT_TRUE(has(fork_tools, "search_tools"));
        EXPECT_TRUE(has(fork_tools, "call_tool"));
        EXPECT_TRUE(has(fork_tools, "echo_1"));  // its declared server's own tools as before
        co_await rig.pool->shutdown();
    });
}

// The fork shares the conversation's approvals, not a copy taken when it started: the user allows the fork's server
// in the parent (the web UI's switches, or an answer given for another fork) while the fork runs, and the fork's next
// call runs without asking.
TEST_F(Fork, AnApprovalTheParentGivesWhileAForkRunsCoversTheForksNextCall) {
    yes_ = false;
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("agent__researcher", R"({"task": "Look twice."})") +
                               R"(]}, {"toolCalls": [)" + tool_call("echo_1", R"({"message": "one"})") +
                               R"(]}, {"toolCalls": [)" + tool_call("echo_1", R"({"message": "two"})") +
                               R"(]}, {"content": "Looked twice."}, {"content": "Done."}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        std::vector<agent::Definition> defs{researcher()};  // built before the co_await (GCC 12)
        auto rig = co_await start(fake, std::move(defs));
        int asked = 0;
        rig.observer.ask_approval = [&](const agent::ApprovalRequest& r) -> awaitable<agent::Decision> {
            ++asked;
            EXPECT_EQ(r.server, "notes");
            // Once for the first call; a second question would be a copy's doing: denied, so that it shows.
            co_return asked == 1 ? agent::Decision::allow_once : agent::Decision::deny;
        };
        std::vector<agent::ToolCallRecord> fork_calls;
        rig.observer.on_tool_end = [&](const agent::ToolCallRecord& record, const llm::ToolExecutionResult&) {
            if (record.name != "echo_1") return;
            fork_calls.push_back(record);
            // Between the fork's two calls, the user allows the server in the parent conversation.
            if (fork_calls.size() == 1)
                rig.conversation->approvals().remember(agent::Decision::always_server, "", "notes");
        };
        auto result = co_await rig.conversation->send("Ask the researcher.", rig.observer);
        EXPECT_EQ(result.stop, agent::StopReason::done) << result.error;
        EXPECT_EQ(result.answer, "Done.");
        EXPECT_EQ(asked, 1);
        CO_ASSERT_EQ(fork_calls.size(), 2u);
        EXPECT_FALSE(fork_calls[0].denied);
        EXPECT_FALSE(fork_calls[1].denied);
        EXPECT_FALSE(fork_calls[1].is_error);
        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 5u);
        const auto main_result = message_text(bodies[4].at("messages").as_array().back());
        EXPECT_NE(main_result.find("2 tool calls: echo_1"), std::string::npos) << main_result;
        EXPECT_EQ(main_result.find("failed"), std::string::npos) << main_result;
        co_await rig.pool->shutdown();
    });
}

// An "always for this tool" answered for a fork's call is the conversation's: the next fork of the agent does not
// ask again, and it is kept as server__tool, so the main context's own tool of the same name (another server's) still
// asks.
TEST_F(Fork, AnAlwaysGivenForAForksCallIsTheConversationsUnderTheToolsServer) {
    yes_ = false;
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("agent__researcher", R"({"task": "one"})") +
                               R"(]}, {"toolCalls": [)" + tool_call("echo", R"({"message": "a"})") +
                               R"(]}, {"content": "a"}, {"toolCalls": [)" +
                               tool_call("agent__researcher", R"({"task": "two"})") + R"(]}, {"toolCalls": [)" +
                               tool_call("echo", R"({"message": "b"})") + R"(]}, {"content": "b"}, {"toolCalls": [)" +
                               tool_call("echo", R"({"message": "c"})") + R"(]}, {"content": "done"}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        std::vector<agent::Definition> defs{researcher()};  // built before the co_await (GCC 12)
        auto rig = co_await start(fake, std::move(defs));
        std::vector<std::string> asked;  // server of each question
        rig.observer.ask_approval = [&](const agent::ApprovalRequest& r) -> awaitable<agent::Decision> {
            asked.push_back(r.server);
            EXPECT_EQ(r.name, "echo");
            co_return asked.size() == 1 ? agent::Decision::always_tool : agent::Decision::allow_once;
        };
        auto result = co_await rig.conversation->send("Twice, then yourself.", rig.observer);
        EXPECT_EQ(result.stop, agent::StopReason::done) << result.error;
        EXPECT_EQ(result.answer, "done");
        // The first fork's echo (notes) asked; the second fork's did not; the main context's echo (main) did.
        CO_ASSERT_EQ(asked.size(), 2u);
        EXPECT_EQ(asked[0], "notes");
        EXPECT_EQ(asked[1], "main");
        const auto& approvals = rig.conversation->approvals();
        EXPECT_EQ(approvals.tools.count("notes__echo"), 1u);
        EXPECT_EQ(approvals.tools.count("echo"), 0u);
        CO_ASSERT_EQ(result.tool_calls.size(), 3u);
        EXPECT_EQ(result.tool_calls[2].server, "main");
        EXPECT_FALSE(result.tool_calls[2].denied);
        co_await rig.pool->shutdown();
    });
}

TEST_F(Fork, TwoForksAtOnceShareOneProcess) {
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("agent__researcher", R"({"task": "one"})") + ", " +
                               tool_call("agent__researcher", R"({"task": "two"})") +
                               R"(]}, {"content": "a"}, {"content": "b"}, {"content": "both"}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        std::vector<agent::Definition> defs{researcher()};  // built before the co_await (GCC 12)
        auto rig = co_await start(fake, std::move(defs));
        auto result = co_await rig.conversation->send("Twice.", rig.observer);
        EXPECT_EQ(result.answer, "both");
        CO_ASSERT_EQ(result.tool_calls.size(), 2u);
        EXPECT_FALSE(result.tool_calls[0].is_error);
        EXPECT_FALSE(result.tool_calls[1].is_error);
        EXPECT_EQ(read_lines(pids()).size(), 1u);
        co_await rig.pool->shutdown();
    });
}

TEST_F(Fork, ARequiredServerNotConfiguredFailsBeforeAnythingStarts) {
    auto d = researcher();
    d.required = {"notes", "ghost"};
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("agent__researcher", R"({"task": "x"})") +
                               R"(]}, {"content": "It could not run."}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        std::vector<agent::Definition> defs{d};  // built before the co_await (GCC 12)
        auto rig = co_await start(fake, std::move(defs));
        auto result = co_await rig.conversation->send("Try.", rig.observer);
        EXPECT_EQ(result.answer, "It could not run.");
        CO_ASSERT_EQ(result.tool_calls.size(), 1u);
        EXPECT_TRUE(result.tool_calls[0].is_error);
        EXPECT_FALSE(fs::exists(pids()));  // notes was not started either
        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 2u);  // no fork request
        const auto text = message_text(bodies[1].at("messages").as_array().back());
        EXPECT_NE(text.find("\"ghost\", which is not configured"), std::string::npos) << text;
        co_await rig.pool->shutdown();
    });
}

TEST_F(Fork, AMissingOptionalServerIsLeftOutAndTheForkIsTold) {
    auto d = researcher();
    d.optional = {"weather"};
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("agent__researcher", R"({"task": "x"})") +
                               R"(]}, {"content": "done without weather"}, {"content": "ok"}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        std::vector<agent::Definition> defs{d};  // built before the co_await (GCC 12)
        auto rig = co_await start(fake, std::move(defs));
        co_await rig.conversation->send("Go.", rig.observer);
        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 3u);
        const auto first = message_text(bodies[1].at("messages").as_array()[1]);
        EXPECT_NE(first.find("unavailable"), std::string::npos) << first;
        EXPECT_NE(first.find("weather (not configured)"), std::string::npos) << first;
        co_await rig.pool->shutdown();
    });
}

TEST_F(Fork, ALazyServerDyingMidForkIsTheForksErrorAndTheMainConversationGoesOn) {
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("agent__researcher", R"({"task": "x"})") +
                               R"(]}, {"toolCalls": [)" + tool_call("exit", R"({"code": 3})") +
                               R"(]}, {"content": "the notes server died"}, {"content": "Carrying on."}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        std::vector<agent::Definition> defs{researcher()};  // built before the co_await (GCC 12)
        auto rig = co_await start(fake, std::move(defs));
        auto result = co_await rig.conversation->send("Go.", rig.observer);
        EXPECT_EQ(result.stop, agent::StopReason::done) << result.error;
        EXPECT_EQ(result.answer, "Carrying on.");
        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 4u);
        const auto fork_result = message_text(bodies[2].at("messages").as_array().back());
        EXPECT_NE(fork_result.find("notes"), std::string::npos) << fork_result;  // the error names the server
        const auto main_result = message_text(bodies[3].at("messages").as_array().back());
        EXPECT_NE(main_result.find("1 failed"), std::string::npos) << main_result;
        co_await rig.pool->shutdown();
    });
}

TEST_F(Fork, ASkillThatDoesNotForkReturnsItsInstructionsInline) {
    agent::Definition skill;
    skill.kind = agent::Definition::Kind::skill;
    skill.name = "style";
    skill.description = "House style for answers.";
    skill.body = "Answer in one sentence, no jargon.";
    skill.fork = false;
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("skill__style", R"({"task": "how?"})") +
                               R"(]}, {"content": "Short."}])");
    ASSERT_TRUE(fake.running());
    run([&]() -> awaitable<void> {
        std::vector<agent::Definition> defs{skill};  // built before the co_await (GCC 12)
        auto rig = co_await start(fake, std::move(defs));
        auto result = co_await rig.conversation->send("Use the style.", rig.observer);
        EXPECT_EQ(result.answer, "Short.");
        auto bodies = co_await fake.request_bodies();
        CO_ASSERT_EQ(bodies.size(), 2u);  // no fork of its own
        EXPECT_EQ(message_text(bodies[1].at("messages").as_array().back()), "Answer in one sentence, no jargon.");
        co_await rig.pool->shutdown();
    });
}

}  // namespace
}  // namespace switchboard::test
