// The demo server's Streamable HTTP mode (transport::HttpServer) over real sockets: the official TypeScript SDK
// client, and raw HTTP for the transport rules of both eras.
#include "harness.hpp"
#include "net_harness.hpp"

#include <switchboard/transport/http_client.hpp>

#include <boost/asio/this_coro.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <filesystem>
#include <fstream>
#include <thread>

namespace switchboard::test {
namespace {

namespace json = boost::json;
using boost::asio::awaitable;

Headers session_headers(const std::string& sid) {
    auto h = post_headers();
    h.emplace_back("Mcp-Session-Id", sid);
    h.emplace_back("MCP-Protocol-Version", "2025-11-25");
    return h;
}

std::string modern_call(int id, const std::string& tool, const std::string& args, const std::string& version) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"tools/call","params":{"name":")" + tool +
           R"(","arguments":)" + args + R"(,"_meta":{"io.modelcontextprotocol/protocolVersion":")" + version +
           R"(","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},)"
           R"("io.modelcontextprotocol/clientCapabilities":{}}}})";
}

Headers modern_headers(const std::string& method, const std::string& name, const std::string& version) {
    auto h = post_headers();
    h.emplace_back("MCP-Protocol-Version", version);
    h.emplace_back("Mcp-Method", method);
    if (!name.empty()) h.emplace_back("Mcp-Name", name);
    return h;
}

int error_code(const std::string& body) {
    auto v = json::parse(body);
    return static_cast<int>(v.at("error").at("code").as_int64());
}

class HttpServe : public ::testing::Test {
protected:
    void SetUp() override {
        server_ = start_listening(demo_server(), {"--http", "0"});
        ASSERT_TRUE(server_);
        port_ = server_->port;
    }
    std::unique_ptr<ListeningServer> server_;
    std::uint16_t port_ = 0;
};

TEST_F(HttpServe, OfficialTypeScriptClientListsAndCallsTools) {
    std::string out;
    int rc =
        run_command(std::string("node ") + PEERS_DIR + "/scripts/sdk_http_client.mjs " + server_->url + " check", out);
    ASSERT_EQ(rc, 0) << out << server_->log();
    auto v = json::parse(out);
    const auto& o = v.as_object();
    EXPECT_EQ(o.at("sessionId").as_string().size(), 32u);
    EXPECT_EQ(o.at("protocolVersion").as_string(), "2025-11-25");
    std::vector<std::string> tools;
    for (const auto& t : o.at("tools").as_array()) tools.emplace_back(t.as_string());
    EXPECT_NE(std::find(tools.begin(), tools.end(), "echo"), tools.end());
    EXPECT_NE(std::find(tools.begin(), tools.end(), "slow"), tools.end());
    EXPECT_EQ(o.at("echo").as_string(), "hello over http");
    EXPECT_EQ(o.at("slow").as_string(), "done after 4 steps");
    EXPECT_EQ(o.at("progress").as_int64(), 4);  // progress came on the request's SSE stream
}

TEST_F(HttpServe, LegacySessionLifecycle) {
    run([this]() -> awaitable<void> {
        auto h = post_headers();
        auto r = co_await http_exchange(port_, "POST", "/mcp", h, init_body);
        CO_ASSERT_EQ(r.status, 200);
        CO_ASSERT_EQ(r.headers["content-type"], "application/json");
        const auto sid = r.headers["mcp-session-id"];
        CO_ASSERT_EQ(sid.size(), 32u);
        EXPECT_EQ(json::parse(r.body).at("result").at("protocolVersion").as_string(), "2025-11-25");

        auto sh = session_headers(sid);
        auto note = co_await http_exchange(port_, "POST", "/mcp", sh,
                                           R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
        EXPECT_EQ(note.status, 202);

        auto list =
            co_await http_exchange(port_, "POST", "/mcp", sh, R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");
        CO_ASSERT_EQ(list.status, 200);
        EXPECT_EQ(json::parse(list.body).at("result").at("tools").as_array().size(), 4u);  // page size 4

        // Progress before the result: an SSE response with a priming event and event ids.
        auto slow = co_await http_exchange(
            port_, "POST", "/mcp", sh,
            R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":0.2,"steps":2},"_meta":{"progressToken":"p1"}}})");
        CO_ASSERT_EQ(slow.status, 200);
        EXPECT_EQ(slow.headers["content-type"], "text/event-stream");
        EXPECT_NE(slow.body.find("data: \n\n"), std::string::npos) << slow.body;  // priming
        EXPECT_NE(slow.body.find("\"progressToken\":\"p1\""), std::string::npos) << slow.body;
        EXPECT_NE(slow.body.find("done after 2 steps"), std::string::npos) << slow.body;
        EXPECT_NE(slow.body.find("id: "), std::string::npos) << slow.body;

        // Missing session, unknown session.
        auto missing = co_await http_exchange(port_, "POST", "/mcp", h, R"({"jsonrpc":"2.0","id":4,"method":"ping"})");
        EXPECT_EQ(missing.status, 400);
        EXPECT_NE(missing.body.find("Mcp-Session-Id header is required"), std::string::npos) << missing.body;
        auto bogus = session_headers("0123456789abcdef0123456789abcdef");
        auto unknown =
            co_await http_exchange(port_, "POST", "/mcp", bogus, R"({"jsonrpc":"2.0","id":5,"method":"ping"})");
        EXPECT_EQ(unknown.status, 404);

        // Unsupported MCP-Protocol-Version.
        auto bad_version = session_headers(sid);
        bad_version.back().second = "1999-01-01";
        auto bv =
            co_await http_exchange(port_, "POST", "/mcp", bad_version, R"({"jsonrpc":"2.0","id":6,"method":"ping"})");
        EXPECT_EQ(bv.status, 400);
        EXPECT_NE(bv.body.find("Unsupported protocol version"), std::string::npos) << bv.body;

        // DELETE ends the session; it is unknown afterwards.
        auto del = co_await http_exchange(port_, "DELETE", "/mcp", sh, "");
        EXPECT_EQ(del.status, 200);
        auto after = co_await http_exchange(port_, "POST", "/mcp", sh, R"({"jsonrpc":"2.0","id":7,"method":"ping"})");
        EXPECT_EQ(after.status, 404);
    });
}

TEST_F(HttpServe, RefusesForeignOriginOversizeBodyAndBadInput) {
    run([this]() -> awaitable<void> {
        auto evil = post_headers();
        evil.emplace_back("Origin", "http://evil.example");
        auto forbidden = co_await http_exchange(port_, "POST", "/mcp", evil, init_body);
        EXPECT_EQ(forbidden.status, 403);
        EXPECT_NE(forbidden.body.find("evil.example"), std::string::npos) << forbidden.body;

        auto local = post_headers();
        local.emplace_back("Origin", "http://localhost:3000");
        auto allowed = co_await http_exchange(port_, "POST", "/mcp", local, init_body);
        EXPECT_EQ(allowed.status, 200);

        // 64 MiB + 1: refused from the Content-Length alone.
        auto big = post_headers();
        big.emplace_back("Content-Length", std::to_string(64u * 1024 * 1024 + 1));
        auto s = co_await http_open(port_, "POST", "/mcp", big, "");
        EXPECT_EQ(s->status, 413) << s->error;

        auto h = post_headers();
        auto garbage = co_await http_exchange(port_, "POST", "/mcp", h, "{not json");
        EXPECT_EQ(garbage.status, 400);
        EXPECT_EQ(error_code(garbage.body), -32700);

        auto plain = post_headers();
        plain[0].second = "text/plain";
        auto media = co_await http_exchange(port_, "POST", "/mcp", plain, init_body);
        EXPECT_EQ(media.status, 415);

        auto wrong_path = co_await http_exchange(port_, "POST", "/other", h, init_body);
        EXPECT_EQ(wrong_path.status, 404);
        auto put = co_await http_exchange(port_, "PUT", "/mcp", h, init_body);
        EXPECT_EQ(put.status, 405);

        // The server is still fine.
        auto again = co_await http_exchange(port_, "POST", "/mcp", h, init_body);
        EXPECT_EQ(again.status, 200);
    });
}

TEST_F(HttpServe, GetStreamReceivesResourceUpdatesAndResumes) {
    run([this]() -> awaitable<void> {
        auto h = post_headers();
        auto init = co_await http_exchange(port_, "POST", "/mcp", h, init_body);
        const auto sid = init.headers["mcp-session-id"];
        CO_ASSERT_EQ(sid.size(), 32u);
        auto sh = session_headers(sid);
        auto gh = sh;
        gh[1].second = "text/event-stream";
        auto stream = co_await http_open(port_, "GET", "/mcp", gh, "");
        CO_ASSERT_EQ(stream->status, 200);
        CO_ASSERT_TRUE(co_await http_read_until(stream, "data: \n\n", std::chrono::seconds(5)));  // priming

        // A second GET stream for the same session is refused.
        auto second = co_await http_exchange(port_, "GET", "/mcp", gh, "");
        EXPECT_EQ(second.status, 409);

        auto sub = co_await http_exchange(
            port_, "POST", "/mcp", sh,
            R"({"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"demo://counter"}})");
        CO_ASSERT_EQ(sub.status, 200);
        auto bump = co_await http_exchange(
            port_, "POST", "/mcp", sh, R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bump"}})");
        CO_ASSERT_EQ(bump.status, 200);
        const bool got = co_await http_read_until(stream, "notifications/resources/updated", std::chrono::seconds(5));
        CO_ASSERT_TRUE(got);
        const auto body = stream->parser.get().body();
        EXPECT_NE(body.find("demo://counter"), std::string::npos);
        EXPECT_NE(body.find("id: 0-1\n"), std::string::npos) << body;

        // Drop the stream, bump again, reconnect with Last-Event-ID: the missed event is replayed.
        stream->stream.close();
        auto bump2 = co_await http_exchange(
            port_, "POST", "/mcp", sh, R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"bump"}})");
        CO_ASSERT_EQ(bump2.status, 200);
        auto resume = gh;
        resume.emplace_back("Last-Event-ID", "0-1");
        auto again = co_await http_open(port_, "GET", "/mcp", resume, "");
        CO_ASSERT_EQ(again->status, 200);
        const bool replayed = co_await http_read_until(again, "id: 0-2\n", std::chrono::seconds(5));
        EXPECT_TRUE(replayed) << again->parser.get().body();
    });
}

TEST_F(HttpServe, ModernRequestsAreStatelessAndChecked) {
    run([this]() -> awaitable<void> {
        const std::string v = "2026-07-28";
        auto h = modern_headers("tools/call", "echo", v);
        auto r = co_await http_exchange(port_, "POST", "/mcp", h, modern_call(1, "echo", R"({"message":"hi"})", v));
        CO_ASSERT_EQ(r.status, 200);
        EXPECT_EQ(r.headers.count("mcp-session-id"), 0u);
        auto res = json::parse(r.body);
        EXPECT_EQ(res.at("result").at("content").at(0).at("text").as_string(), "hi");
        EXPECT_EQ(res.at("result").at("resultType").as_string(), "complete");

        // The same id again is fine: no session, no shared id space.
        auto r2 = co_await http_exchange(port_, "POST", "/mcp", h, modern_call(1, "echo", R"({"message":"again"})", v));
        EXPECT_EQ(r2.status, 200);

        auto wrong_name = modern_headers("tools/call", "add", v);
        auto mismatch =
            co_await http_exchange(port_, "POST", "/mcp", wrong_name, modern_call(2, "echo", R"({"message":"x"})", v));
        EXPECT_EQ(mismatch.status, 400);
        EXPECT_EQ(error_code(mismatch.body), -32020);

        // Mcp-Name in the base64 sentinel form.
        auto encoded = modern_headers("tools/call", "=?base64?ZWNobw==?=", v);
        auto enc =
            co_await http_exchange(port_, "POST", "/mcp", encoded, modern_call(3, "echo", R"({"message":"b64"})", v));
        EXPECT_EQ(enc.status, 200) << enc.body;

        auto no_method = modern_headers("", "echo", v);
        std::erase_if(no_method, [](const auto& kv) { return kv.first == "Mcp-Method"; });
        auto nm =
            co_await http_exchange(port_, "POST", "/mcp", no_method, modern_call(4, "echo", R"({"message":"x"})", v));
        EXPECT_EQ(nm.status, 400);
        EXPECT_EQ(error_code(nm.body), -32020);

        // The era signal: an unsupported version is a recognizable 400 listing what the server speaks.
        auto future = modern_headers("tools/call", "echo", "2099-01-01");
        auto uv = co_await http_exchange(port_, "POST", "/mcp", future,
                                         modern_call(5, "echo", R"({"message":"x"})", "2099-01-01"));
        EXPECT_EQ(uv.status, 400);
        EXPECT_EQ(error_code(uv.body), -32022);
        EXPECT_NE(uv.body.find("2026-07-28"), std::string::npos) << uv.body;

        // Unknown method: 404 with -32601 (not a legacy server's bare 404).
        auto unknown_h = modern_headers("nope/nothing", "", v);
        std::string unknown_body =
            R"({"jsonrpc":"2.0","id":6,"method":"nope/nothing","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})";
        auto un = co_await http_exchange(port_, "POST", "/mcp", unknown_h, unknown_body);
        EXPECT_EQ(un.status, 404);
        EXPECT_EQ(error_code(un.body), -32601);

        // Progress before the result: an SSE stream without event ids (not resumable in 2026-07-28).
        auto slow_h = modern_headers("tools/call", "slow", v);
        std::string slow_body =
            R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":0.2,"steps":2},"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})";
        auto slow = co_await http_exchange(port_, "POST", "/mcp", slow_h, slow_body);
        EXPECT_EQ(slow.headers["content-type"], "text/event-stream");
        EXPECT_NE(slow.body.find("notifications/progress"), std::string::npos) << slow.body;
        EXPECT_NE(slow.body.find("done after 2 steps"), std::string::npos) << slow.body;
        EXPECT_EQ(slow.body.find("id: "), std::string::npos) << slow.body;
    });
}

TEST_F(HttpServe, ModernClosingTheStreamCancelsTheRequest) {
    run([this]() -> awaitable<void> {
        const std::string v = "2026-07-28";
        auto h = modern_headers("tools/call", "slow", v);
        std::string body =
            R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":30,"steps":300},"_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})";
        auto s = co_await http_open(port_, "POST", "/mcp", h, body);
        CO_ASSERT_EQ(s->status, 200);
        CO_ASSERT_TRUE(co_await http_read_until(s, "notifications/progress", std::chrono::seconds(5)));
        s->stream.close();
    });
    for (int i = 0; i < 300 && server_->log().find("slow: cancelled") == std::string::npos; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_NE(server_->log().find("slow: cancelled"), std::string::npos) << server_->log();
}

TEST_F(HttpServe, LegacyAnswerSurvivesADroppedConnection) {
    run([this]() -> awaitable<void> {
        auto h = post_headers();
        auto init = co_await http_exchange(port_, "POST", "/mcp", h, init_body);
        const auto sid = init.headers["mcp-session-id"];
        CO_ASSERT_EQ(sid.size(), 32u);
        auto sh = session_headers(sid);
        auto s = co_await http_open(
            port_, "POST", "/mcp", sh,
            R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":0.6,"steps":3},"_meta":{"progressToken":9}}})");
        CO_ASSERT_EQ(s->status, 200);
        CO_ASSERT_TRUE(co_await http_read_until(s, "\"progress\":1", std::chrono::seconds(5)));
        // The event id of the first progress: "<stream>-1".
        const auto body = s->parser.get().body();
        const auto at = body.find("id: ", body.find("data: \n\n"));
        CO_ASSERT_TRUE(at != std::string::npos);
        const auto last_id = body.substr(at + 4, body.find('\n', at) - at - 4);
        s->stream.close();  // a dropped connection is not a cancellation in the legacy era

        auto gh = sh;
        gh[1].second = "text/event-stream";
        gh.emplace_back("Last-Event-ID", last_id);
        auto resumed = co_await http_open(port_, "GET", "/mcp", gh, "");
        CO_ASSERT_EQ(resumed->status, 200);
        const bool got = co_await http_read_until(resumed, "done after 3 steps", std::chrono::seconds(5));
        EXPECT_TRUE(got) << resumed->parser.get().body();
        EXPECT_NE(resumed->parser.get().body().find("\"progress\":3"), std::string::npos);
        EXPECT_EQ(resumed->parser.get().body().find("\"progress\":1,"), std::string::npos);  // not replayed twice
    });
}

TEST_F(HttpServe, ModernListenStreamCarriesResourceUpdates) {
    run([this]() -> awaitable<void> {
        const std::string v = "2026-07-28";
        auto lh = modern_headers("subscriptions/listen", "", v);
        std::string listen =
            R"({"jsonrpc":"2.0","id":"L1","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["demo://counter"]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})";
        auto stream = co_await http_open(port_, "POST", "/mcp", lh, listen);
        CO_ASSERT_EQ(stream->status, 200);
        EXPECT_EQ(stream->parser.get()["Content-Type"], "text/event-stream");
        CO_ASSERT_TRUE(
            co_await http_read_until(stream, "notifications/subscriptions/acknowledged", std::chrono::seconds(5)));
        auto bh = modern_headers("tools/call", "bump", v);
        auto bump = co_await http_exchange(port_, "POST", "/mcp", bh, modern_call(2, "bump", "{}", v));
        CO_ASSERT_EQ(bump.status, 200);
        const bool got = co_await http_read_until(stream, "notifications/resources/updated", std::chrono::seconds(5));
        CO_ASSERT_TRUE(got);
        EXPECT_NE(stream->parser.get().body().find(R"("io.modelcontextprotocol/subscriptionId":"L1")"),
                  std::string::npos)
            << stream->parser.get().body();
    });
}

TEST(HttpServeDynamic, ListChangedReachesTheGetStreamAndAListenStream) {
    auto server = start_listening(demo_server(), {"--http", "0", "--dynamic-tools"});
    ASSERT_TRUE(server);
    const auto port = server->port;
    run([port]() -> awaitable<void> {
        auto h = post_headers();
        auto init = co_await http_exchange(port, "POST", "/mcp", h, init_body);
        const auto sid = init.headers["mcp-session-id"];
        CO_ASSERT_EQ(sid.size(), 32u);
        EXPECT_NE(init.body.find(R"("tools":{"listChanged":true})"), std::string::npos) << init.body;
        auto sh = session_headers(sid);
        auto gh = sh;
        gh[1].second = "text/event-stream";
        auto stream = co_await http_open(port, "GET", "/mcp", gh, "");
        CO_ASSERT_EQ(stream->status, 200);
        CO_ASSERT_TRUE(co_await http_read_until(stream, "data: \n\n", std::chrono::seconds(5)));

        // A 2026-07-28 client listening for tool list changes, statelessly, at the same time.
        const std::string v = "2026-07-28";
        auto lh = modern_headers("subscriptions/listen", "", v);
        std::string listen =
            R"({"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})";
        auto modern = co_await http_open(port, "POST", "/mcp", lh, listen);
        CO_ASSERT_EQ(modern->status, 200);
        CO_ASSERT_TRUE(co_await http_read_until(modern, "acknowledged", std::chrono::seconds(5)));

        auto toggle = co_await http_exchange(
            port, "POST", "/mcp", sh,
            R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"toggle_extra"}})");
        CO_ASSERT_EQ(toggle.status, 200);
        const bool legacy_got =
            co_await http_read_until(stream, "notifications/tools/list_changed", std::chrono::seconds(5));
        EXPECT_TRUE(legacy_got) << stream->parser.get().body();
        const bool modern_got =
            co_await http_read_until(modern, "notifications/tools/list_changed", std::chrono::seconds(5));
        EXPECT_TRUE(modern_got) << modern->parser.get().body();
    });
}

// Our own Streamable HTTP client against our own server, in the era the server pins (or the modern one).
void own_client_round_trip(const std::vector<std::string>& server_args, const std::string& expected_version) {
    auto server = start_listening(demo_server(), server_args);
    ASSERT_TRUE(server);
    run([&]() -> awaitable<void> {
        auto ex = co_await boost::asio::this_coro::executor;
        transport::HttpClientOptions ho;
        ho.server_name = "own";
        auto channel = transport::make_streamable_http_channel(ex, server->url, ho);
        mcp::ClientOptions co;
        co.server_name = "own";
        auto s = co_await mcp::ClientSession::connect(ex, channel, co);
        CO_ASSERT_TRUE(s.has_value());
        auto session = *s;
        EXPECT_EQ(session->protocol_version(), expected_version);
        auto tools = co_await session->list_tools();  // four pages of up to 4
        CO_ASSERT_TRUE(tools.has_value());
        EXPECT_EQ(tools->size(), 9u);
        json::object args;
        args["message"] = "own client";
        auto echo = co_await session->call_tool("echo", args);
        CO_ASSERT_TRUE(echo.has_value());
        EXPECT_EQ(echo->content.at(0).text(), "own client");
        int progress = 0;
        mcp::CallOptions opts;
        opts.on_progress = [&progress](const jsonrpc::Progress&) { ++progress; };
        json::object slow_args;
        slow_args["seconds"] = 0.3;
        slow_args["steps"] = 3;
        auto slow = co_await session->call_tool("slow", slow_args, opts);
        CO_ASSERT_TRUE(slow.has_value());
        EXPECT_EQ(slow->content.at(0).text(), "done after 3 steps");
        EXPECT_EQ(progress, 3);
        co_await session->close();
    });
}

TEST(HttpServeOwnClient, ModernRoundTrip) { own_client_round_trip({"--http", "0"}, "2026-07-28"); }

TEST(HttpServeOwnClient, LegacyRoundTripAfterFallback) {
    own_client_round_trip({"--http", "0", "--legacy-only"}, "2025-11-25");
}

TEST(HttpServeOwnClient, CliThroughAnHttpServer) {
    namespace fs = std::filesystem;
    auto server = start_listening(demo_server(), {"--http", "0"});
    ASSERT_TRUE(server);
    auto dir = fs::temp_directory_path() / ("switchboard-http-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    auto cfg = (dir / "config.json").string();
    std::ofstream(cfg) << R"({"mcpServers": {"remote": {"url": ")" << server->url << R"("}}})";
    std::string out;
    int rc = run_command(
        std::string(SWITCHBOARD_CLI) + " --config " + cfg + " call echo '{\"message\": \"via http\"}' 2>&1", out);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("via http"), std::string::npos) << out;
    fs::remove_all(dir);
}

TEST(HttpServeLegacyOnly, ModernProbeGetsANonModern400) {
    auto server = start_listening(demo_server(), {"--http", "0", "--legacy-only"});
    ASSERT_TRUE(server);
    run([&]() -> awaitable<void> {
        const std::string v = "2026-07-28";
        auto h = modern_headers("tools/call", "echo", v);
        auto r =
            co_await http_exchange(server->port, "POST", "/mcp", h, modern_call(1, "echo", R"({"message":"hi"})", v));
        EXPECT_EQ(r.status, 400);
        // Not a modern error code: a dual-era client falls back to initialize.
        const int code = error_code(r.body);
        EXPECT_TRUE(code != -32020 && code != -32021 && code != -32022) << r.body;
        auto ph = post_headers();
        auto init = co_await http_exchange(server->port, "POST", "/mcp", ph, init_body);
        EXPECT_EQ(init.status, 200);
    });
}

}  // namespace
}  // namespace switchboard::test
