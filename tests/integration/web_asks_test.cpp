// What a server asks during a web page's call goes to that page (docs/api.md, "What servers ask"), against the real
// binary, the demo server with --client-requests, switchboard-fake-llm as the model: an elicitation answered (and a
// form refused when it breaks the server's schema), declined, or left until Stop; a sampling request approved, run on
// the conversation's model and its answer approved on the way back, or denied; roots from the config's `roots`
// (Settings); a "Try it" call's elicitation; and a gateway client's requests still going to that client while a web
// page's question is open.
#include "web_harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <thread>

namespace switchboard::test {
namespace {

namespace json = boost::json;
using boost::asio::awaitable;
using namespace std::chrono_literals;

class WebAsks : public WebHarness {
protected:
    /// The demo server offering the tools that ask (ask_user, ask_model, list_roots).
    void start_asking(const FakeLlm& fake) {
        write_config("  \"llm\": {\"baseUrl\": \"" + fake.url() + "\", \"model\": \"test-model\"},\n");
        // The demo entry with --client-requests.
        auto text = config_text();
        const auto command = "\"command\": \"" + demo_server() + "\"";
        text.replace(text.find(command), command.size(), command + ", \"args\": [\"--client-requests\"]");
        std::ofstream(config_) << text;
        start();
        wait_for_phase("demo", "connected");
        // Nothing else asks: the conversation's calls of demo's tools are allowed.
        ASSERT_EQ(post("/api/conversations/create", {{"title", "asks"}}).status, 200);
        ASSERT_EQ(post("/api/conversations/settings", {{"id", 1}, {"approvedServers", json::array{"demo"}}}).status,
                  200);
    }
    /// POST /api/chat/respond; its status.
    static awaitable<int> respond(std::uint16_t port, Headers headers, std::string request_id, json::object answer) {
        json::object body{{"conversationId", 1}, {"requestId", request_id}, {"answer", std::move(answer)}};
        auto r = co_await http_exchange(port, "POST", "/api/chat/respond", headers, json::serialize(body));
        co_return r.status;
    }
    /// The result text of the stream's only tool_end.
    static std::string tool_text(const std::string& body) {
        const auto ends = sse_events(body, "tool_end");
        if (ends.size() != 1) return "(" + std::to_string(ends.size()) + " tool_end events)";
        return std::string(ends[0].at("result").at("content").at(0).at("text").as_string());
    }
};

std::string message_of(const json::object& request) {
    return std::string(request.at("params").at("message").as_string());
}

TEST_F(WebAsks, AnElicitationIsThePagesFormCheckedAgainstTheServersSchema) {
    TempDir dir;
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("ask_user", R"({"message": "Who are you?"})") +
                               R"(]}, {"content": "Nice to meet you."}])");
    ASSERT_TRUE(fake.running());
    start_asking(fake);
    const auto port = gateway_->port;
    const auto headers = post_headers();
    std::string body;
    int refused = 0, accepted = 0;
    run([&, port, headers]() -> awaitable<void> {
        auto stream = co_await http_open(port, "POST", "/api/chat", headers,
                                         R"({"conversationId": 1, "text": "Ask me who I am"})");
        co_await read_event(stream, "server_request", 10s);
        const auto asked = sse_events(stream->parser.get().body(), "server_request");
        CO_ASSERT_EQ(asked.size(), 1u);
        const auto id = std::string(asked[0].at("requestId").as_string());
        // The schema requires a name: a form without one stays open.
        json::object no_name{{"action", "accept"}, {"content", json::object{{"age", 36}}}};
        refused = co_await respond(port, headers, id, std::move(no_name));
        json::object answer{{"action", "accept"}, {"content", json::object{{"name", "Ada"}, {"age", 36}}}};
        accepted = co_await respond(port, headers, id, std::move(answer));
        co_await read_event(stream, "done", 10s);
        body = stream->parser.get().body();
    });
    const auto asked = sse_events(body, "server_request");
    ASSERT_EQ(asked.size(), 1u) << body;
    EXPECT_EQ(asked[0].at("kind").as_string(), "elicitation");
    EXPECT_EQ(asked[0].at("server").as_string(), "demo");
    EXPECT_EQ(message_of(asked[0]), "Who are you?");
    EXPECT_TRUE(asked[0].at("params").at("requestedSchema").is_object());
    EXPECT_EQ(sse_events(body, "tool_start").at(0).at("id"), asked[0].at("callId"));  // the call it belongs to
    EXPECT_EQ(refused, 400);
    EXPECT_EQ(accepted, 200);
    EXPECT_EQ(sse_events(body, "server_request_answered").size(), 1u) << body;
    const auto text = tool_text(body);
    EXPECT_NE(text.find("\"action\":\"accept\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"name\":\"Ada\""), std::string::npos) << text;
}

TEST_F(WebAsks, AUrlModeElicitationIsAcceptedWhenThePageOpensItAndItsCompletionIsAnnounced) {
    TempDir dir;
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("sign_in", R"({"url": "https://partner.example/in"})") +
                               R"(]}, {"content": "Signed in."}])");
    ASSERT_TRUE(fake.running());
    start_asking(fake);
    const auto port = gateway_->port;
    const auto headers = post_headers();
    const Headers get_headers{{"Host", host()}};
    std::string body, events;
    run([&, port, headers, get_headers]() -> awaitable<void> {
        auto live = co_await http_open(port, "GET", "/api/events", get_headers, "");
        co_await read_event(live, "servers", 5s);
        auto stream = co_await http_open(port, "POST", "/api/chat", headers, R"({"conversationId": 1, "text": "Sign in"})");
        co_await read_event(stream, "server_request", 10s);
        const auto asked = sse_events(stream->parser.get().body(), "server_request");
        json::object opened{{"action", "accept"}};
        EXPECT_EQ(co_await respond(port, headers, std::string(asked.at(0).at("requestId").as_string()),
                                   std::move(opened)),
                  200);
        co_await read_event(stream, "done", 10s);
        body = stream->parser.get().body();
        co_await read_event(live, "elicitation_complete", 5s);
        events = live->parser.get().body();
    });
    const auto asked = sse_events(body, "server_request");
    ASSERT_EQ(asked.size(), 1u) << body;
    EXPECT_EQ(asked[0].at("params").at("mode").as_string(), "url");
    EXPECT_EQ(asked[0].at("params").at("url").as_string(), "https://partner.example/in");
    EXPECT_EQ(tool_text(body), R"({"action":"accept"})");
    const auto complete = sse_events(events, "elicitation_complete");
    ASSERT_EQ(complete.size(), 1u) << events;
    EXPECT_EQ(complete[0].at("elicitationId").as_string(), "sign-in-1");
    EXPECT_EQ(complete[0].at("server").as_string(), "demo");
}

TEST_F(WebAsks, AQuestionLeftOpenIsSentToAReloadedPageAndStopAnswersItAsCancelled) {
    TempDir dir;
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("ask_user", "{}") + R"(]}, {"content": "unused"}])");
    ASSERT_TRUE(fake.running());
    start_asking(fake);
    const auto port = gateway_->port;
    const auto headers = post_headers();
    std::string attached;
    json::value pending;
    run([&, port, headers]() -> awaitable<void> {
        auto first = co_await http_open(port, "POST", "/api/chat", headers, R"({"conversationId": 1, "text": "Ask"})");
        co_await read_event(first, "server_request", 10s);
        // A reload: the page that comes back is asked again.
        boost::system::error_code ignored;
        first->stream.socket().close(ignored);
        auto get = co_await http_exchange(port, "GET", "/api/conversations/get?id=1", headers, "");
        pending = json::parse(get.body).at("pendingRequests");
        auto second = co_await http_open(port, "GET", "/api/chat/attach?conversationId=1", headers, "");
        co_await read_event(second, "server_request", 5s);
        co_await http_exchange(port, "POST", "/api/chat/stop", headers, R"({"conversationId": 1})");
        co_await read_event(second, "done", 10s);
        attached = second->parser.get().body();
    });
    ASSERT_EQ(pending.as_array().size(), 1u) << pending;
    EXPECT_EQ(pending.at(0).at("kind").as_string(), "elicitation");
    EXPECT_EQ(sse_events(attached, "server_request").size(), 1u) << attached;
    EXPECT_FALSE(sse_events(attached, "server_request_answered").empty()) << attached;
    EXPECT_EQ(sse_events(attached, "done").at(0).at("stop").as_string(), "cancelled") << attached;
    EXPECT_TRUE(parse(get("/api/conversations/get?id=1")).at("pendingRequests").as_array().empty());
}

TEST_F(WebAsks, SamplingIsApprovedRunsOnTheConversationsModelAndItsAnswerIsApprovedOnTheWayBack) {
    TempDir dir;
    // The model is asked three times: the run, the server's sampling request, the run again.
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("ask_model", R"({"question": "What is blue?"})") +
                               R"(]}, {"content": "The sky."}, {"content": "It said the sky."}])");
    ASSERT_TRUE(fake.running());
    start_asking(fake);
    const auto port = gateway_->port;
    const auto headers = post_headers();
    std::string body;
    run([&, port, headers]() -> awaitable<void> {
        auto stream =
            co_await http_open(port, "POST", "/api/chat", headers, R"({"conversationId": 1, "text": "Ask the model"})");
        co_await read_event(stream, "server_request", 10s);
        auto asked = sse_events(stream->parser.get().body(), "server_request");
        const auto approve_id = std::string(asked.at(0).at("requestId").as_string());
        json::object once{{"decision", "once"}};
        EXPECT_EQ(co_await respond(port, headers, approve_id, std::move(once)), 200);
        // The model answered the server's request: shown before it goes back.
        std::function<bool(const std::string&)> two = [](const std::string& b) {
            return sse_events(b, "server_request").size() >= 2;
        };
        co_await read_stream_until(stream, std::move(two), 10s);
        asked = sse_events(stream->parser.get().body(), "server_request");
        CO_ASSERT_EQ(asked.size(), 2u);
        const auto send_id = std::string(asked.at(1).at("requestId").as_string());
        json::object send{{"decision", "send"}};
        EXPECT_EQ(co_await respond(port, headers, send_id, std::move(send)), 200);
        co_await read_event(stream, "done", 10s);
        body = stream->parser.get().body();
    });
    const auto asked = sse_events(body, "server_request");
    ASSERT_EQ(asked.size(), 2u) << body;
    EXPECT_EQ(asked[0].at("kind").as_string(), "sampling");
    EXPECT_EQ(asked[0].at("params").at("systemPrompt").as_string(), "You answer in one line.");
    EXPECT_EQ(asked[1].at("kind").as_string(), "sampling_result");
    EXPECT_EQ(asked[1].at("result").at("content").at("text").as_string(), "The sky.");
    const auto text = tool_text(body);
    EXPECT_NE(text.find("The sky."), std::string::npos) << text;
    json::array bodies;
    run([&]() -> awaitable<void> { bodies = co_await fake.request_bodies(); });
    ASSERT_EQ(bodies.size(), 3u);
    EXPECT_NE(json::serialize(bodies[1]).find("What is blue?"), std::string::npos) << bodies[1];
}

TEST_F(WebAsks, ADeniedSamplingRequestNeverReachesTheModel) {
    TempDir dir;
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("ask_model", "{}") + R"(]}, {"content": "Refused."}])");
    ASSERT_TRUE(fake.running());
    start_asking(fake);
    const auto port = gateway_->port;
    const auto headers = post_headers();
    std::string body;
    run([&, port, headers]() -> awaitable<void> {
        auto stream = co_await http_open(port, "POST", "/api/chat", headers, R"({"conversationId": 1, "text": "Ask"})");
        co_await read_event(stream, "server_request", 10s);
        const auto asked = sse_events(stream->parser.get().body(), "server_request");
        json::object deny{{"decision", "deny"}};
        EXPECT_EQ(co_await respond(port, headers, std::string(asked.at(0).at("requestId").as_string()),
                                   std::move(deny)),
                  200);
        co_await read_event(stream, "done", 10s);
        body = stream->parser.get().body();
    });
    EXPECT_NE(tool_text(body).find("declined the sampling request"), std::string::npos) << body;
    json::array bodies;
    run([&]() -> awaitable<void> { bodies = co_await fake.request_bodies(); });
    EXPECT_EQ(bodies.size(), 2u);  // the run twice; never the server's request
}

TEST_F(WebAsks, RootsAreTheSettingsDirectoriesAndTheServersAreToldWhenTheyChange) {
    TempDir dir;
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("list_roots", "{}") + R"(]}, {"content": "ok"}])");
    ASSERT_TRUE(fake.running());
    // server-everything asks for roots when it starts and again at roots/list_changed, and logs how many it got:
    // nobody calls it then, so the config's roots answer.
    auto everything = everything_command();
    ASSERT_FALSE(everything.empty());
    json::array args;
    for (std::size_t i = 1; i < everything.size(); ++i) args.emplace_back(everything[i]);
    write_config("", "\"everything\": {\"command\": \"" + everything[0] + "\", \"args\": " + json::serialize(args) +
                         "},\n    ");
    auto text = config_text();
    text.replace(0, text.find("\"mcpServers\""), "{\n  \"llm\": {\"baseUrl\": \"" + fake.url() + "\", \"model\": \"m\"},\n  ");
    text.replace(text.find("\"command\": \"" + demo_server() + "\""), 13 + demo_server().size(),
                 "\"command\": \"" + demo_server() + "\", \"args\": [\"--client-requests\"]");
    std::ofstream(config_) << text;
    start();
    wait_for_phase("demo", "connected");
    wait_for_phase("everything", "connected");
    ASSERT_EQ(post("/api/conversations/create", {{"title", "roots"}}).status, 200);
    ASSERT_EQ(post("/api/conversations/settings", {{"id", 1}, {"approvedServers", json::array{"demo"}}}).status, 200);

    const auto root = std::filesystem::canonical(dir.path).string();
    auto set = post("/api/settings/roots", {{"roots", json::array{json::string(root), "/tmp"}}});
    ASSERT_EQ(set.status, 200) << set.body;
    EXPECT_EQ(parse(set).at("effective").at(0).at("uri").as_string(), "file://" + root);
    EXPECT_NE(config_text().find("\"roots\""), std::string::npos) << config_text();
    EXPECT_EQ(post("/api/settings/roots", {{"roots", json::array{"relative/dir"}}}).status, 400);
    // Told, it asked again and got both.
    bool told = false;
    for (int i = 0; i < 50 && !told; ++i) {
        told = json::serialize(parse(get("/api/servers/logs?name=everything"))).find("Roots updated: 2 root(s)") !=
               std::string::npos;
        if (!told) std::this_thread::sleep_for(100ms);
    }
    EXPECT_TRUE(told) << json::serialize(parse(get("/api/servers/logs?name=everything")));
    // A web page's call is answered with them too.
    auto chat = request("POST", "/api/chat", post_headers(), R"({"conversationId": 1, "text": "Which roots?"})");
    const auto roots = tool_text(chat.body);
    EXPECT_NE(roots.find("file://" + root), std::string::npos) << chat.body;
    EXPECT_NE(roots.find("file:///tmp"), std::string::npos) << chat.body;
}

TEST_F(WebAsks, ATasksQuestionIsThePagesAndTheBlockSaysItWaitsOnTheUser) {
    TempDir dir;
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("report", R"({"seconds": 2, "topic": "tea"})") +
                               R"(]}, {"content": "Done."}])");
    ASSERT_TRUE(fake.running());
    write_config("  \"llm\": {\"baseUrl\": \"" + fake.url() + "\", \"model\": \"test-model\"},\n");
    auto text = config_text();
    const auto command = "\"command\": \"" + demo_server() + "\"";
    text.replace(text.find(command), command.size(), command + ", \"args\": [\"--tasks\"]");
    std::ofstream(config_) << text;
    start();
    wait_for_phase("demo", "connected");
    ASSERT_EQ(post("/api/conversations/create", {{"title", "task"}}).status, 200);
    ASSERT_EQ(post("/api/conversations/settings", {{"id", 1}, {"approvedServers", json::array{"demo"}}}).status, 200);
    const auto port = gateway_->port;
    const auto headers = post_headers();
    std::string body;
    run([&, port, headers]() -> awaitable<void> {
        auto stream = co_await http_open(port, "POST", "/api/chat", headers, R"({"conversationId": 1, "text": "Report"})");
        co_await read_event(stream, "server_request", 15s);
        const auto asked = sse_events(stream->parser.get().body(), "server_request");
        json::object answer{{"action", "accept"}, {"content", json::object{{"format", "haiku"}}}};
        EXPECT_EQ(co_await respond(port, headers, std::string(asked.at(0).at("requestId").as_string()),
                                   std::move(answer)),
                  200);
        co_await read_event(stream, "done", 15s);
        body = stream->parser.get().body();
    });
    const auto asked = sse_events(body, "server_request");
    ASSERT_EQ(asked.size(), 1u) << body;
    EXPECT_EQ(message_of(asked[0]), "Which format should the report have?");
    bool waited = false;  // the call's block shows the task waiting on the user
    for (const auto& t : sse_events(body, "tool_task")) waited = waited || t.at("status").as_string() == "input_required";
    EXPECT_TRUE(waited) << body;
    EXPECT_NE(tool_text(body).find("Report on tea (haiku, 2 s)"), std::string::npos) << body;
}

TEST_F(WebAsks, TryItsCallAsksItsOwnPage) {
    TempDir dir;
    FakeLlm fake(dir.path, R"([{"content": "unused"}])");
    ASSERT_TRUE(fake.running());
    start_asking(fake);
    const auto port = gateway_->port;
    const auto headers = post_headers();
    std::string body;
    run([&, port, headers]() -> awaitable<void> {
        auto stream = co_await http_open(port, "POST", "/api/tools/call", headers,
                                         R"({"server": "demo", "name": "ask_user", "arguments": {}, "stream": true})");
        co_await read_event(stream, "server_request", 10s);
        const auto so_far = stream->parser.get().body();
        const auto call = sse_events(so_far, "call").at(0).at("id").as_string();
        const auto asked = sse_events(so_far, "server_request").at(0);
        EXPECT_EQ(asked.at("callId").as_string(), call);
        json::object decline{{"action", "decline"}};
        json::object answer{{"callId", call}, {"requestId", asked.at("requestId")}, {"answer", std::move(decline)}};
        auto r = co_await http_exchange(port, "POST", "/api/tools/respond", headers, json::serialize(answer));
        EXPECT_EQ(r.status, 200) << r.body;
        co_await read_event(stream, "result", 10s);
        body = stream->parser.get().body();
    });
    const auto result = sse_events(body, "result");
    ASSERT_EQ(result.size(), 1u) << body;
    EXPECT_EQ(result[0].at("content").at(0).at("text").as_string(), R"({"action":"decline"})");
}

TEST_F(WebAsks, AGatewayClientsRequestsStillGoToThatClientWhileAPageIsAsked) {
    TempDir dir;
    FakeLlm fake(dir.path, R"([{"toolCalls": [)" + tool_call("a__ask_user", "{}") + R"(]}, {"content": "ok"}])");
    ASSERT_TRUE(fake.running());
    // The gateway client's script calls a__ask_model, a__list_roots, a__ask_user: servers a and b share those names.
    const auto asking = "{\"command\": \"" + demo_server() + "\", \"args\": [\"--client-requests\"]}";
    write_config("  \"llm\": {\"baseUrl\": \"" + fake.url() + "\", \"model\": \"test-model\"},\n",
                 "\"a\": " + asking + ",\n    \"b\": " + asking + ",\n    ");
    start();
    wait_for_phase("a", "connected");
    wait_for_phase("b", "connected");
    ASSERT_EQ(post("/api/conversations/create", {{"title", "apart"}}).status, 200);
    ASSERT_EQ(post("/api/conversations/settings", {{"id", 1}, {"approvedServers", json::array{"a"}}}).status, 200);
    const auto port = gateway_->port;
    const auto headers = post_headers();
    const auto url = gateway_->url;
    std::string body, sdk;
    run([&, port, headers, url]() -> awaitable<void> {
        auto stream = co_await http_open(port, "POST", "/api/chat", headers, R"({"conversationId": 1, "text": "Ask"})");
        co_await read_event(stream, "server_request", 10s);
        // While the page's question is open, a gateway client calls the same server: its requests are its own.
        run_command(peers_node() + " " + PEERS_DIR + "/scripts/sdk_gateway_client.mjs http " + url + " relay", sdk);
        const auto asked = sse_events(stream->parser.get().body(), "server_request");
        json::object answer{{"action", "accept"}, {"content", json::object{{"name", "Web"}}}};
        EXPECT_EQ(co_await respond(port, headers, std::string(asked.at(0).at("requestId").as_string()),
                                   std::move(answer)),
                  200);
        co_await read_event(stream, "done", 10s);
        body = stream->parser.get().body();
    });
    json::error_code ec;
    auto v = json::parse(sdk, ec);
    ASSERT_FALSE(ec) << sdk;
    EXPECT_NE(v.at("sampling").as_string().find("the model read: what is 2+2?"), std::string::npos) << v;
    EXPECT_NE(v.at("roots").as_string().find("file:///gateway-root"), std::string::npos) << v;
    EXPECT_TRUE(v.at("elicitation").at("isError").as_bool()) << v;  // that client declared no elicitation
    EXPECT_EQ(sse_events(body, "server_request").size(), 1u) << body;  // the page was asked once, by its own call
    EXPECT_NE(tool_text(body).find("\"name\":\"Web\""), std::string::npos) << body;
}

}  // namespace
}  // namespace switchboard::test
