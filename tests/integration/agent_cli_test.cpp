// `switchboard run`, `chat` and `models` as a user runs them: the real binary, real demo servers, the scripted model,
// a real SQLite file. Exit codes, --json, approvals by flag, sampling declined or allowed, Ctrl-C reaching a slow
// tool, kill -9 mid-turn, resume with overrides.
#include "agent_harness.hpp"
#include "net_harness.hpp"

#include <switchboard/store/conversation_store.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fstream>
#include <tuple>

namespace switchboard::test {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;

/// Runs a coroutine body and returns what it produced.
template <class T, class F>
T fetch(F f) {
    T out{};
    run([&]() -> boost::asio::awaitable<void> { out = co_await f(); });
    return out;
}

class AgentCli : public ::testing::Test {
protected:
    TempDir dir;

    /// A config with the demo server (extra args inside the array) and the fake model.
    std::string config(const FakeLlm& fake, const std::string& demo_args = "") {
        const auto file = dir.path / "config.json";
        std::ofstream(file) << R"({"mcpServers": {"demo": )" << demo_entry(demo_args) << R"(},
            "llm": {"baseUrl": )" << q(fake.url()) << R"(, "model": "test-model", "apiKey": "${TEST_KEY:-sk-none}"}})";
        return file.string();
    }
    std::string db() const { return (dir.path / "conversations.db").string(); }
    /// The CLI after `prefix` (e.g. "cd D && VAR=x "), stdout and stderr together.
    int cli_in(const std::string& prefix, const std::string& args, std::string& out) {
        return run_command(prefix + "XDG_CACHE_HOME=" + (dir.path / "cache").string() + " " + SWITCHBOARD_CLI + " " +
                               args + " 2>&1",
                           out);
    }
    int cli(const std::string& args, std::string& out, const std::string& redirect = "2>&1") {
        // The tool catalog (lazy servers that start are recorded) goes to the temp dir, not the user's cache.
        return run_command("XDG_CACHE_HOME=" + (dir.path / "cache").string() + " " + SWITCHBOARD_CLI + " " + args +
                               " " + redirect,
                           out);
    }
    json::array bodies(FakeLlm& fake) {
        return fetch<json::array>([&] { return fake.request_bodies(); });
    }
};

TEST_F(AgentCli, RunPrintsTheAnswerAndJson) {
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("echo", R"({"message":"hi"})") +
                               R"(], "usage": {"prompt_tokens": 20, "completion_tokens": 3}}, {"content": "It said hi.", "usage": {"prompt_tokens": 30, "completion_tokens": 4}}])");
    ASSERT_TRUE(fake.running());
    std::string out;
    EXPECT_EQ(cli("--config " + config(fake) + " run 'echo hi' --yes --json --db " + db(), out, "2>/dev/null"), 0)
        << out;
    auto v = json::parse(out).as_object();
    EXPECT_EQ(v.at("answer"), "It said hi.");
    EXPECT_EQ(v.at("stopReason"), "done");
    EXPECT_EQ(v.at("turns"), 2);
    EXPECT_GT(v.at("conversationId").as_int64(), 0);
    const auto& calls = v.at("toolCalls").as_array();
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].at("name"), "echo");
    EXPECT_EQ(calls[0].at("server"), "demo");
    EXPECT_EQ(calls[0].at("tool"), "echo");
    EXPECT_EQ(calls[0].at("arguments").at("message"), "hi");
    EXPECT_EQ(calls[0].at("isError"), false);
    EXPECT_EQ(calls[0].at("denied"), false);
    EXPECT_TRUE(calls[0].at("ms").is_int64());
    EXPECT_EQ(v.at("usage").at("promptTokens").as_int64(), 50);  // both turns
    EXPECT_EQ(v.at("usage").at("completionTokens").as_int64(), 7);
    // The conversation is in the database, whole.
    store::ConversationStore s(db());
    auto msgs = s.messages(v.at("conversationId").as_int64());
    ASSERT_EQ(msgs.size(), 4u);
    EXPECT_EQ(msgs[3].message.text(), "It said hi.");
}

TEST_F(AgentCli, RunDeniesToolsItWasNotAllowedAndShowsProgressOnStderr) {
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("echo", R"({"message":"hi"})") +
                               R"(]}, {"content": "Could not."}])");
    ASSERT_TRUE(fake.running());
    std::string out;
    EXPECT_EQ(cli("--config " + config(fake) + " run 'echo hi' --no-store", out), 0) << out;
    EXPECT_NE(out.find("→ echo"), std::string::npos) << out;
    EXPECT_NE(out.find("← denied"), std::string::npos) << out;
    EXPECT_NE(out.find("Could not."), std::string::npos) << out;
    auto b = bodies(fake);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_NE(message_text(b[1].at("messages").as_array().back()).find("--allow-tools"), std::string::npos);
}

TEST_F(AgentCli, ExitStatusesSayHowTheRunEnded) {
    std::string out;
    {  // No model configured: how to point at llama-server or Ollama.
        const auto file = dir.path / "nollm.json";
        std::ofstream(file) << R"({"mcpServers": {}})";
        EXPECT_EQ(run_command("env -u OPENAI_BASE_URL " + std::string(SWITCHBOARD_CLI) + " --config " + file.string() +
                                  " run hello 2>&1",
                              out),
                  1);
        EXPECT_NE(out.find("http://127.0.0.1:8080/v1"), std::string::npos) << out;
        EXPECT_NE(out.find("http://127.0.0.1:11434/v1"), std::string::npos) << out;
    }
    {  // The turn limit: 3.
        FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("echo", R"({"message":"a"})") + "]}]");
        ASSERT_TRUE(fake.running());
        EXPECT_EQ(cli("--config " + config(fake) + " run loop --yes --max-turns 1 --no-store", out), 3) << out;
    }
    {  // The endpoint refuses: 1, with what it said and never the key.
        FakeLlm fake(dir.path, R"([{"status": 401, "body": "{\"error\": {\"message\": \"invalid api key\"}}"}])");
        ASSERT_TRUE(fake.running());
        EXPECT_EQ(run_command("TEST_KEY=sk-very-secret-123 " + std::string(SWITCHBOARD_CLI) + " --config " +
                                  config(fake) + " run hello --no-store 2>&1",
                              out),
                  1);
        EXPECT_NE(out.find("401"), std::string::npos) << out;
        EXPECT_NE(out.find("invalid api key"), std::string::npos) << out;
        EXPECT_EQ(out.find("sk-very-secret-123"), std::string::npos) << out;
    }
}

TEST_F(AgentCli, SamplingIsDeclinedInRunUnlessAllowed) {
    const std::string ask = R"({"toolCalls": [)" + tool_call("ask_model", R"({"question":"colour?"})") + "]}";
    {
        FakeLlm fake(dir.path, "[" + ask + R"(, {"content": "no answer"}])");
        ASSERT_TRUE(fake.running());
        std::string out;
        EXPECT_EQ(cli("--config " + config(fake, R"("--client-requests")") + " run ask --yes --no-store", out), 0)
            << out;
        EXPECT_NE(out.find("declined (--allow-sampling"), std::string::npos) << out;
        auto b = bodies(fake);
        ASSERT_EQ(b.size(), 2u);
        EXPECT_NE(message_text(b[1].at("messages").as_array().back()).find("declined"), std::string::npos);
    }
    {
        FakeLlm fake(dir.path, "[" + ask + R"(, {"content": "green"}, {"content": "The model likes green."}])");
        ASSERT_TRUE(fake.running());
        std::string out;
        EXPECT_EQ(cli("--config " + config(fake, R"("--client-requests")") +
                          " run ask --yes --allow-sampling --no-store",
                      out),
                  0)
            << out;
        auto b = bodies(fake);
        ASSERT_EQ(b.size(), 3u);
        EXPECT_NE(message_text(b[2].at("messages").as_array().back()).find("green"), std::string::npos);
    }
}

TEST_F(AgentCli, CtrlCCancelsASlowToolOnTheServer) {
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("slow", R"({"seconds": 30, "steps": 30})") +
                               R"(]}, {"content": "never"}])");
    ASSERT_TRUE(fake.running());
    const auto log = dir.path / "demo.log";
    // The demo server logs to a file through a wrapper, so the test can see the server's side of the cancellation.
    const auto wrapper = dir.path / "demo.sh";
    std::ofstream(wrapper) << "#!/bin/sh\nexec " << demo_server() << " \"$@\" 2>>" << log.string() << "\n";
    fs::permissions(wrapper, fs::perms::owner_all);
    const auto file = dir.path / "config.json";
    std::ofstream(file) << R"({"mcpServers": {"demo": {"command": )" << q(wrapper.string()) << R"(}},
        "llm": {"baseUrl": )" << q(fake.url()) << R"(, "model": "m"}})";
    std::string out;
    run_command("sh -c '" + std::string(SWITCHBOARD_CLI) + " --config " + file.string() +
                    " run slow --yes --no-store & pid=$!; sleep 2; kill -INT $pid; wait $pid; echo \"exit=$?\"' 2>&1",
                out);
    EXPECT_NE(out.find("exit=130"), std::string::npos) << out;
    std::string server_log;
    run_command("cat " + log.string(), server_log);
    EXPECT_NE(server_log.find("slow: cancelled"), std::string::npos) << server_log;
}

TEST_F(AgentCli, KillMinusNineMidTurnLeavesASoundDatabaseWithEveryCompletedMessage) {
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("echo", R"({"message":"first"})") +
                               R"(]}, {"toolCalls": [)" + tool_call("slow", R"({"seconds": 30, "steps": 30})") +
                               R"(]}, {"content": "never"}, {"content": "Resumed fine."}])");
    ASSERT_TRUE(fake.running());
    const auto cfg = config(fake);
    std::string out;
    run_command("sh -c '" + std::string(SWITCHBOARD_CLI) + " --config " + cfg + " run work --yes --db " + db() +
                    " & pid=$!; sleep 2.5; kill -9 $pid; wait $pid; echo \"exit=$?\"' 2>&1",
                out);
    EXPECT_NE(out.find("exit=137"), std::string::npos) << out;
    std::int64_t id = 0;
    {
        store::ConversationStore s(db());
        EXPECT_EQ(s.integrity_check(), "ok");
        auto list = s.list();
        ASSERT_EQ(list.size(), 1u);
        id = list[0].id;
        auto msgs = s.messages(id);
        // The user message and the complete first tool turn; the interrupted second turn is absent, not half there.
        ASSERT_EQ(msgs.size(), 3u);
        EXPECT_EQ(msgs[1].message.tool_calls.size(), 1u);
        EXPECT_EQ(msgs[2].message.role, llm::Role::tool);
    }
    // Resume: the model sees the earlier messages, then the new one.
    EXPECT_EQ(cli("--config " + cfg + " run 'go on' --yes --db " + db() + " --resume " + std::to_string(id), out), 0)
        << out;
    auto b = bodies(fake);
    ASSERT_EQ(b.size(), 3u);
    const auto& messages = b[2].at("messages").as_array();
    ASSERT_EQ(messages.size(), 4u);
    EXPECT_EQ(message_text(messages[0]), "work");
    EXPECT_EQ(message_text(messages[3]), "go on");
}

TEST_F(AgentCli, ChatKeepsOverridesAndApprovalsWithTheConversation) {
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("add", R"({"a": 2, "b": 3})") +
                               R"(]}, {"content": "five"}, {"toolCalls": [)" + tool_call("add", R"({"a": 1, "b": 1})") +
                               R"(]}, {"content": "two"}])");
    ASSERT_TRUE(fake.running());
    const auto cfg = config(fake);
    std::string out;
    // Piped input: switch echo off, ask, approve "always this tool", quit.
    EXPECT_EQ(run_command("printf '/disable echo\\nadd them\\nt\\n/quit\\n' | " + std::string(SWITCHBOARD_CLI) +
                              " --config " + cfg + " chat --db " + db() + " 2>&1",
                          out),
              0)
        << out;
    EXPECT_NE(out.find("five"), std::string::npos) << out;
    std::int64_t id = 0;
    {
        store::ConversationStore s(db());
        auto list = s.list();
        ASSERT_EQ(list.size(), 1u);
        id = list[0].id;
        auto settings = s.settings(id);
        EXPECT_EQ(settings.tools_off.count({"demo", "echo"}), 1u);
        EXPECT_EQ(settings.approved_tools.count("add"), 1u);
    }
    // Resumed: echo is still off and add runs without asking (no answer line is given: it would be read as a message).
    EXPECT_EQ(run_command("printf 'again\\n' | " + std::string(SWITCHBOARD_CLI) + " --config " + cfg + " chat --db " +
                              db() + " --resume " + std::to_string(id) + " 2>&1",
                          out),
              0)
        << out;
    EXPECT_NE(out.find("two"), std::string::npos) << out;
    EXPECT_EQ(out.find("[y] once"), std::string::npos) << out;
    auto b = bodies(fake);
    ASSERT_EQ(b.size(), 4u);
    for (const auto& body : b) {
        auto tools = offered_tools(body.as_object());
        EXPECT_FALSE(has(tools, "echo"));
        EXPECT_TRUE(has(tools, "add"));
    }
}

TEST_F(AgentCli, AttachInChatReadsTheResourceAsItIsNow) {
    // /attach reads the counter (0); the model bumps it; /attach again must see 1, not the first read kept.
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("bump", "{}") +
                               R"(]}, {"content": "bumped"}, {"content": "ok"}])");
    ASSERT_TRUE(fake.running());
    const auto cfg = config(fake);
    std::string out;
    EXPECT_EQ(run_command("printf '/attach demo demo://counter\\nfirst\\ny\\n/attach demo demo://counter\\nsecond\\n"
                          "/quit\\n' | " +
                              std::string(SWITCHBOARD_CLI) + " --config " + cfg + " chat --db " + db() + " 2>&1",
                          out),
              0)
        << out;
    EXPECT_NE(out.find("bumped"), std::string::npos) << out;
    auto b = bodies(fake);
    ASSERT_EQ(b.size(), 3u) << out;
    std::vector<std::string> users;
    for (const auto& m : b[2].at("messages").as_array())
        if (m.at("role").as_string() == "user") users.push_back(message_text(m));
    ASSERT_EQ(users.size(), 2u) << json::serialize(b[2]);
    EXPECT_EQ(users[0], "first\nResource demo://counter (text/plain):\n0") << out;
    EXPECT_EQ(users[1], "second\nResource demo://counter (text/plain):\n1") << out;
}

TEST_F(AgentCli, ChatShowsTheModelsAnswerToASamplingRequestBeforeItGoesBack) {
    // The run, the server's sampling request, the run again; the user allows the request, then sends the answer back.
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("ask_model", R"({"question": "colour?"})") +
                               R"(]}, {"content": "blue"}, {"content": "It said blue."}])");
    ASSERT_TRUE(fake.running());
    std::string out;
    EXPECT_EQ(run_command("printf 'ask it\\ny\\ny\\ny\\n/quit\\n' | " + std::string(SWITCHBOARD_CLI) + " --config " +
                              config(fake, R"("--client-requests")") + " chat --no-store 2>&1",
                          out),
              0)
        << out;
    EXPECT_NE(out.find("asks to use the model (sampling)"), std::string::npos) << out;
    EXPECT_NE(out.find("The model answered: blue"), std::string::npos) << out;
    EXPECT_NE(out.find("send it back to server \"demo\"?"), std::string::npos) << out;
    EXPECT_NE(out.find("It said blue."), std::string::npos) << out;
    auto b = bodies(fake);
    ASSERT_EQ(b.size(), 3u) << out;
    EXPECT_NE(json::serialize(b[2]).find("blue"), std::string::npos) << b[2];  // the tool result the model read
}

TEST_F(AgentCli, AToolChangedMidRunIsNotOfferedToTheModelAndItsCallIsRefused) {
    // Turn 1: the model makes the server change echo's description (a hidden instruction); the model is asked again
    // without echo; its call of echo anyway is refused, naming the change.
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("change_tools", R"({"step": "description"})") +
                               R"(]}, {"toolCalls": [)" + tool_call("echo", R"({"message": "hi"})") +
                               R"(]}, {"content": "done"}])");
    ASSERT_TRUE(fake.running());
    std::string out;
    EXPECT_EQ(cli("--config " + config(fake, R"("--changing-tools")") + " run go --yes --json --no-store", out,
                  "2>" + (dir.path / "err.txt").string()),
              0)
        << out;
    std::ifstream err(dir.path / "err.txt");
    const std::string stderr_text((std::istreambuf_iterator<char>(err)), {});
    EXPECT_NE(stderr_text.find("switchboard: tool \"echo\" of server \"demo\" changed since it was approved "
                               "(description): held"),
              std::string::npos)
        << stderr_text;
    auto b = bodies(fake);
    ASSERT_EQ(b.size(), 3u);
    EXPECT_TRUE(has(offered_tools(b[0].as_object()), "echo"));
    EXPECT_FALSE(has(offered_tools(b[1].as_object()), "echo"));  // the changed definition never reaches the model
    EXPECT_EQ(json::serialize(b[1]).find("id_rsa"), std::string::npos);
    auto v = json::parse(out).as_object();
    const auto& calls = v.at("toolCalls").as_array();
    ASSERT_EQ(calls.size(), 2u);
    EXPECT_TRUE(calls[1].at("isError").as_bool());
    EXPECT_NE(json::serialize(b[2]).find("changed since it was approved (description): held"), std::string::npos)
        << b[2];
}

// The three changes of a "rug pull", each kept from the scripted model by `run`: the server changes (a description
// with a hidden instruction, a schema asking for more, a new tool), the next run is not offered the change, and its
// call anyway is refused; `pins approve` (a person), and the next run offers the new definition and calls it. The
// demo server runs over HTTP, so that what it changes lasts from one command to the next. (A change in the middle of
// a run is AToolChangedMidRunIsNotOfferedToTheModelAndItsCallIsRefused, over stdio: over HTTP, list_changed comes on
// the GET stream and may come after the tool's result, so the next request could still carry the old definition.)
TEST_F(AgentCli, EachChangeIsKeptFromTheModelUntilApprovedThenOffered) {
    auto demo = start_listening(demo_server(), {"--http", "0", "--changing-tools"});
    ASSERT_TRUE(demo);
    const auto cfg = (dir.path / "pinned.json").string();
    std::string out;
    const auto write_config = [&](const FakeLlm& fake) {
        std::ofstream(cfg) << R"({"mcpServers": {"demo": {"url": )" << q(demo->url) << R"(}},
            "llm": {"baseUrl": )" << q(fake.url()) << R"(, "model": "test-model"}})";
    };
    // The offered definition of `name` in a request body, as text ("" when not offered).
    const auto offered = [](const json::value& body, const std::string& name) -> std::string {
        for (const auto& t : body.at("tools").as_array())
            if (t.at("function").at("name").as_string() == name) return json::serialize(t);
        return "";
    };
    {
        FakeLlm first(dir.path, R"([{"content": "hello"}])");  // pins the server as first seen
        write_config(first);
        ASSERT_EQ(cli("--config " + cfg + " run hi --yes --no-store", out), 0) << out;
    }
    for (const auto& [step, name, mark] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"description", "echo", "id_rsa"}, {"schema", "echo", "secret"}, {"add", "newcomer", "not there before"}}) {
        SCOPED_TRACE(step);
        ASSERT_EQ(cli("--config " + cfg + " call change_tools '{\"step\": \"" + step + "\"}'", out), 0) << out;
        {
            FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call(name, R"({"message": "hi"})") +
                                       R"(]}, {"content": "done"}])");
            write_config(fake);
            EXPECT_EQ(cli("--config " + cfg + " run go --yes --json --no-store", out, "2>/dev/null"), 0) << out;
            auto b = bodies(fake);
            ASSERT_EQ(b.size(), 2u) << out;
            EXPECT_EQ(offered(b[0], name), "") << b[0];  // the change never reaches the model
            EXPECT_EQ(json::serialize(b[0]).find(mark), std::string::npos) << b[0];
            const auto v = json::parse(out.substr(out.find('{')));
            const auto& calls = v.at("toolCalls").as_array();
            ASSERT_EQ(calls.size(), 1u) << out;
            EXPECT_TRUE(calls[0].at("isError").as_bool()) << out;
            EXPECT_NE(json::serialize(b[1]).find("held until a person approves it"), std::string::npos) << b[1];
        }
        ASSERT_EQ(cli("--config " + cfg + " pins approve demo", out), 0) << out;
        {
            FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call(name, R"({"message": "hi"})") +
                                       R"(]}, {"content": "done"}])");
            write_config(fake);
            EXPECT_EQ(cli("--config " + cfg + " run go --yes --json --no-store", out, "2>/dev/null"), 0) << out;
            auto b = bodies(fake);
            ASSERT_EQ(b.size(), 2u) << out;
            EXPECT_NE(offered(b[0], name).find(mark), std::string::npos) << b[0];  // approved: offered as it is now
            const auto v = json::parse(out.substr(out.find('{')));
            EXPECT_FALSE(v.at("toolCalls").at(0).at("isError").as_bool()) << out;
        }
    }
}

TEST_F(AgentCli, StatusContextComparesTheMainContextWithEveryServerEager) {
    const auto file = dir.path / "lazy.json";
    std::ofstream(file) << R"({"mcpServers": {"main": )" << demo_entry() << R"(, "notes": )"
                        << demo_entry(R"("--extra-tools", "20")").insert(1, R"("lazy": true, )") << "}}";
    std::string out;
    EXPECT_EQ(cli("--config " + file.string() + " status --context --json", out, "2>/dev/null"), 0) << out;
    auto v = json::parse(out).as_object();
    const auto main_tokens = v.at("mainTokens").as_int64();
    const auto eager_tokens = v.at("eagerTokens").as_int64();
    EXPECT_GT(main_tokens, 100);
    EXPECT_GT(eager_tokens, main_tokens + 1000);  // 20 extra tools stay out of the main context
    const auto& servers = v.at("servers").as_array();
    ASSERT_EQ(servers.size(), 2u);
    EXPECT_EQ(servers[1].at("name"), "notes");
    EXPECT_EQ(servers[1].at("lazy"), true);
    EXPECT_GT(servers[1].at("tokens").as_int64(), 1000);
    EXPECT_EQ(servers[0].at("tokens").as_int64(), main_tokens);
}

TEST_F(AgentCli, AClaudeCodeAgentWithAnInlineServerRunsInItsForkFromRunAndFromTheMainConversation) {
    // A Claude Code agent file: `tools` as a string, `mcpServers` with an inline stdio config that exists only for
    // this agent. Its server starts for the fork (it records its pid) and its tools never reach the main context.
    const auto project = dir.path / "project";
    fs::create_directories(project / ".claude" / "agents");
    const auto pids = dir.path / "inline.pids";
    std::ofstream(project / ".claude" / "agents" / "librarian.md")
        << "---\nname: librarian\ndescription: Finds books.\ntools: Read, Grep\nmodel: inherit\nmcpServers:\n"
        << "  - books:\n      command: sh\n      args: [\"-c\", \"echo $$ >> " << pids.string() << "; exec "
        << demo_server() << " --extra-tools 2\"]\n---\nYou are a librarian.\n";
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("echo_2", R"({"message": "a book"})") +
                               R"(]}, {"content": "Found a book."}, {"toolCalls": [)" +
                               tool_call("agent__librarian", R"({"task": "find a book"})") +
                               R"(]}, {"content": "Found it again."}, {"content": "The librarian found it."}])");
    ASSERT_TRUE(fake.running());
    const auto cfg = config(fake);
    std::string out;
    // Directly: run --agent.
    EXPECT_EQ(run_command("cd " + project.string() + " && XDG_CACHE_HOME=" + dir.path.string() + " " +
                              SWITCHBOARD_CLI + " --config " + cfg + " run --agent librarian 'find a book' --yes " +
                              "--no-store 2>&1",
                          out),
              0)
        << out;
    EXPECT_NE(out.find("Found a book."), std::string::npos) << out;
    EXPECT_EQ(read_lines(pids).size(), 1u);
    // From the main conversation: agent__librarian is offered, the fork's server is not.
    EXPECT_EQ(run_command("cd " + project.string() + " && XDG_CACHE_HOME=" + dir.path.string() + " " +
                              SWITCHBOARD_CLI + " --config " + cfg + " run 'ask the librarian' --yes --no-store 2>&1",
                          out),
              0)
        << out;
    EXPECT_NE(out.find("The librarian found it."), std::string::npos) << out;
    auto b = bodies(fake);
    ASSERT_EQ(b.size(), 5u);
    EXPECT_TRUE(has(offered_tools(b[0].as_object()), "echo_2"));           // the fork (run --agent)
    EXPECT_EQ(message_text(b[0].at("messages").as_array()[0]), "You are a librarian.");
    auto main_tools = offered_tools(b[2].as_object());
    EXPECT_TRUE(has(main_tools, "agent__librarian"));
    EXPECT_FALSE(has(main_tools, "echo_2"));
    EXPECT_TRUE(has(offered_tools(b[3].as_object()), "echo_2"));  // the fork of the main conversation
    EXPECT_EQ(read_lines(pids).size(), 2u);  // started once per run, for its fork only
}

TEST_F(AgentCli, ModelsListsTheEndpointsModels) {
    FakeLlm fake(dir.path, "[]");
    ASSERT_TRUE(fake.running());
    std::string out;
    EXPECT_EQ(cli("--config " + config(fake) + " models --json", out, "2>/dev/null"), 0) << out;
    auto v = json::parse(out).as_array();
    ASSERT_FALSE(v.empty());
    EXPECT_TRUE(v[0].at("id").is_string());
}

}  // namespace
}  // namespace switchboard::test

#include <iostream>
#include <thread>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

namespace switchboard::test {
namespace {

/// A child process on a pseudo-terminal: what a user at a terminal sees and types.
class Terminal {
public:
    explicit Terminal(const std::vector<std::string>& argv) {
        pid_ = ::forkpty(&fd_, nullptr, nullptr, nullptr);
        if (pid_ == 0) {
            std::vector<char*> args;
            for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
            args.push_back(nullptr);
            ::execv(args[0], args.data());
            ::_exit(127);
        }
    }
    ~Terminal() {
        if (pid_ > 0 && !reaped_) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        if (fd_ >= 0) ::close(fd_);
    }
    void type(const std::string& keys) { [[maybe_unused]] auto n = ::write(fd_, keys.data(), keys.size()); }
    /// Reads until `needle` appears in everything read so far, at most `limit`.
    bool wait_for(const std::string& needle, std::chrono::milliseconds limit) {
        const auto end = std::chrono::steady_clock::now() + limit;
        while (screen_.find(needle) == std::string::npos) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
            if (left.count() <= 0) return false;
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
            char buf[4096];
            const auto n = ::read(fd_, buf, sizeof buf);
            if (n <= 0) return screen_.find(needle) != std::string::npos;
            screen_.append(buf, static_cast<std::size_t>(n));
        }
        return true;
    }
    int exit_status() {
        int status = 0;
        for (int i = 0; i < 100; ++i) {
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                reaped_ = true;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            wait_for("\x01never", std::chrono::milliseconds(50));  // keeps draining the terminal
            std::this_thread::sleep_for(std::chrono::milliseconds(50));  // once the terminal closed, reads end at once
        }
        return -1;
    }
    const std::string& screen() const { return screen_; }

private:
    int fd_ = -1;
    pid_t pid_ = -1;
    bool reaped_ = false;
    std::string screen_;
};

TEST_F(AgentCli, ChatAtATerminalStreamsDimmedReasoningAndCtrlCCancelsATurn) {
    FakeLlm fake(dir.path, R"([{"dialect": "llamacpp", "reasoning": "Let me think.", "content": "Hello from the model."},
        {"toolCalls": [)" + tool_call("slow", R"({"seconds": 30, "steps": 30})") + R"(]}])");
    ASSERT_TRUE(fake.running());
    Terminal t({SWITCHBOARD_CLI, "--config", config(fake), "chat", "--yes", "--no-store"});
    ASSERT_TRUE(t.wait_for("you> ", std::chrono::seconds(20))) << t.screen();
    t.type("hi there\r");
    ASSERT_TRUE(t.wait_for("Hello from the model.", std::chrono::seconds(20))) << t.screen();
    EXPECT_NE(t.screen().find("\x1b[2mthinking: Let me think."), std::string::npos) << t.screen();  // dimmed
    t.type("go slow\r");
    ASSERT_TRUE(t.wait_for("→ slow", std::chrono::seconds(20))) << t.screen();
    t.type("\x03");  // Ctrl-C: the terminal sends SIGINT
    ASSERT_TRUE(t.wait_for("(cancelled)", std::chrono::seconds(10))) << t.screen();
    EXPECT_NE(t.screen().find("← error"), std::string::npos) << t.screen();
    ASSERT_TRUE(t.wait_for("you> ", std::chrono::seconds(5))) << t.screen();
    t.type("\x04");  // Ctrl-D on an empty line quits
    EXPECT_EQ(t.exit_status(), 0) << t.screen();
    if (std::getenv("SHOW_SCREEN")) std::cerr << t.screen();
}

}  // namespace
}  // namespace switchboard::test

namespace switchboard::test {
namespace {

// An agent, "waiter", whose fork runs the demo server's slow tool for 3 s: a fork that other processes can see.
std::string waiter_fork_script(const fs::path& dir) {
    fs::create_directories(dir / ".switchboard/agents");
    std::ofstream(dir / ".switchboard/agents/waiter.md")
        << "---\nname: waiter\ndescription: Waits.\nmcp: [demo]\ntools: []\n---\nYou wait.\n";
    return R"([{"toolCalls": [)" + tool_call("agent__waiter", R"({"task": "wait"})") + R"(]}, {"toolCalls": [)" +
           tool_call("slow", R"({"seconds": 3, "steps": 3})") + R"(]}, {"content": "waited"}, {"content": "done"}])";
}

// A fork that runs for a while is listed by `switchboard status` in another process, and gone once it ended.
TEST_F(AgentCli, StatusListsTheForksOtherProcessesAreRunning) {
    FakeLlm fake(dir.path, waiter_fork_script(dir.path));
    ASSERT_TRUE(fake.running());
    const auto cfg = config(fake);
    const auto env = "cd " + dir.path.string() + " && XDG_RUNTIME_DIR=" + (dir.path / "run").string() + " ";
    std::string run_out;
    std::thread runner([&] { cli_in(env, "--config " + cfg + " run 'wait a bit' --yes --no-store", run_out); });
    std::string status_out;
    bool listed = false;
    for (int i = 0; i < 50 && !listed; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        cli_in(env, "--config " + cfg + " status", status_out);
        listed = status_out.find("Running forks:") != std::string::npos;
    }
    runner.join();
    EXPECT_TRUE(listed) << status_out << run_out;
    EXPECT_NE(status_out.find("agent waiter"), std::string::npos) << status_out;
    EXPECT_NE(status_out.find("servers: demo"), std::string::npos) << status_out;
    EXPECT_NE(run_out.find("done"), std::string::npos) << run_out;
    cli_in(env, "--config " + cfg + " status", status_out);
    EXPECT_EQ(status_out.find("Running forks:"), std::string::npos) << status_out;
    EXPECT_FALSE(fs::exists(dir.path / "run/switchboard") && !fs::is_empty(dir.path / "run/switchboard"));
}

// `status --json` lists them too ({"servers": [...], "forks": [...]}): kind, agent, the context it was forked from,
// its leased servers, how long it has run, and the process running it.
TEST_F(AgentCli, StatusJsonListsTheRunningForksWithTheirParentContext) {
    FakeLlm fake(dir.path, waiter_fork_script(dir.path));
    ASSERT_TRUE(fake.running());
    const auto cfg = config(fake);
    const auto env = "cd " + dir.path.string() + " && XDG_RUNTIME_DIR=" + (dir.path / "run").string() + " ";
    const auto status = [&] {
        std::string out;
        cli_in(env, "--config " + cfg + " status --json", out);
        const auto pos = out.find("{\"servers\"");  // after any warning on stderr
        json::error_code ec;
        auto v = json::parse(pos == std::string::npos ? std::string() : out.substr(pos), ec);
        return ec || !v.is_object() ? json::object() : v.as_object();
    };
    std::string run_out;
    std::thread runner([&] { cli_in(env, "--config " + cfg + " run 'wait a bit' --yes --no-store", run_out); });
    json::object seen;
    for (int i = 0; i < 50 && seen.empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        auto s = status();
        if (s.contains("forks") && !s.at("forks").as_array().empty()) seen = std::move(s);
    }
    runner.join();
    ASSERT_FALSE(seen.empty()) << run_out;
    EXPECT_EQ(seen.at("servers").as_array().at(0).at("name").as_string(), "demo");
    const auto& forks = seen.at("forks").as_array();
    ASSERT_EQ(forks.size(), 1u) << json::serialize(seen);
    const auto& f = forks[0].as_object();
    EXPECT_EQ(f.at("kind").as_string(), "agent");
    EXPECT_EQ(f.at("name").as_string(), "waiter");
    EXPECT_EQ(f.at("parent").as_string(), "main");  // run's conversation is on the main context
    EXPECT_EQ(f.at("depth").as_int64(), 1);
    ASSERT_EQ(f.at("servers").as_array().size(), 1u);
    EXPECT_EQ(f.at("servers").as_array()[0].as_string(), "demo");
    EXPECT_GE(f.at("elapsedMs").as_int64(), 0);
    EXPECT_LT(f.at("elapsedMs").as_int64(), 60'000);
    EXPECT_GT(f.at("startedAtMs").as_int64(), 0);
    EXPECT_GT(f.at("pid").as_int64(), 0);
    EXPECT_NE(f.at("pid").as_int64(), ::getpid());  // the run's process, not the test's
    EXPECT_NE(run_out.find("done"), std::string::npos) << run_out;
    // Once it ended: an empty list, not a missing one.
    const auto after = status();
    ASSERT_TRUE(after.contains("forks")) << run_out;
    EXPECT_TRUE(after.at("forks").as_array().empty()) << json::serialize(after);
}

}  // namespace
}  // namespace switchboard::test
