// transport::HttpServer in-process: any SessionHandler can sit behind it (not only mcp::Server), and its limits,
// session ends and modern-only mode behave as the transport requires.
#include <switchboard/jsonrpc/message.hpp>
#include <switchboard/mcp/server.hpp>
#include <switchboard/mcp/version.hpp>
#include <switchboard/transport/http_server.hpp>

#include "coro_test.hpp"
#include "raw_http.hpp"
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace switchboard::test {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

constexpr const char* init_body =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},)"
    R"("clientInfo":{"name":"unit","version":"1"}}})";

Headers post_headers() {
    Headers h;
    h.emplace_back("Content-Type", "application/json");
    h.emplace_back("Accept", "application/json, text/event-stream");
    return h;
}

Headers with_session(const std::string& sid) {
    auto h = post_headers();
    h.emplace_back("Mcp-Session-Id", sid);
    return h;
}

transport::HttpServerOptions options() {
    transport::HttpServerOptions o;
    for (auto v : mcp::legacy_versions) o.legacy_versions.emplace_back(v);
    for (auto v : mcp::modern_versions) o.modern_versions.emplace_back(v);
    return o;
}

// Answers `answer` requests with {"method": ...}, then returns (ending its session) without answering the next one.
awaitable<void> raw_handler(std::shared_ptr<jsonrpc::Channel> channel, int answer) {
    for (int answered = 0;;) {
        auto r = co_await channel->read();
        if (r.kind != jsonrpc::Received::Kind::message) co_return;
        // The HTTP server hands requests over parsed and checked (it read them to route them).
        jsonrpc::Outcome<jsonrpc::Message> msg = jsonrpc::parse_message(r.text);
        if (r.streamed && r.streamed->message) msg = std::move(*r.streamed->message);
        if (!msg || msg->kind != jsonrpc::Message::Kind::request) continue;
        if (answered++ == answer) co_return;
        json::object result;
        result["method"] = msg->method;
        co_await channel->write(jsonrpc::serialize_result(msg->id, result));
    }
}

TEST(HttpServer, ServesAnySessionHandlerAndEndsSessionsWithIt) {
    asio::io_context ctx;
    transport::HttpServer server(
        ctx.get_executor(), [](std::shared_ptr<jsonrpc::Channel> ch) { return raw_handler(std::move(ch), 2); },
        options());
    ASSERT_FALSE(server.listen());
    asio::co_spawn(ctx, server.run(), asio::detached);
    const auto port = server.port();
    EXPECT_EQ(server.url(), "http://127.0.0.1:" + std::to_string(port) + "/mcp");
    run(ctx, [&]() -> awaitable<void> {
        auto h = post_headers();
        auto init = co_await http_exchange(port, "POST", "/mcp", h, init_body);
        CO_ASSERT_EQ(init.status, 200);
        const auto sid = init.headers["mcp-session-id"];
        EXPECT_EQ(server.session_count(), 1u);
        auto sh = with_session(sid);
        auto second = co_await http_exchange(port, "POST", "/mcp", sh, R"({"jsonrpc":"2.0","id":2,"method":"x/y"})");
        CO_ASSERT_EQ(second.status, 200);
        EXPECT_EQ(json::parse(second.body).at("result").at("method").as_string(), "x/y");
        // The handler returns instead of answering the third request: the client is told, not left waiting.
        auto third = co_await http_exchange(port, "POST", "/mcp", sh, R"({"jsonrpc":"2.0","id":3,"method":"x/z"})");
        EXPECT_EQ(third.status, 404);
        EXPECT_NE(third.body.find("Session ended"), std::string::npos) << third.body;
        auto after = co_await http_exchange(port, "POST", "/mcp", sh, R"({"jsonrpc":"2.0","id":4,"method":"x/z"})");
        EXPECT_EQ(after.status, 404);
        EXPECT_EQ(server.session_count(), 0u);
        server.stop();
    });
}

TEST(HttpServer, SessionLimitAndStopEndsStreams) {
    asio::io_context ctx;
    mcp::Server mcp_server(mcp::ServerOptions{});
    auto o = options();
    o.max_sessions = 1;
    transport::HttpServer server(
        ctx.get_executor(), [&mcp_server](std::shared_ptr<jsonrpc::Channel> ch) { return mcp_server.serve(ch); }, o);
    ASSERT_FALSE(server.listen());
    asio::co_spawn(ctx, server.run(), asio::detached);
    const auto port = server.port();
    run(ctx, [&]() -> awaitable<void> {
        auto h = post_headers();
        auto first = co_await http_exchange(port, "POST", "/mcp", h, init_body);
        CO_ASSERT_EQ(first.status, 200);
        auto refused = co_await http_exchange(port, "POST", "/mcp", h, init_body);
        EXPECT_EQ(refused.status, 503);
        auto gh = with_session(first.headers["mcp-session-id"]);
        gh[1].second = "text/event-stream";
        auto stream = co_await http_open(port, "GET", "/mcp", gh, "");
        CO_ASSERT_EQ(stream->status, 200);
        CO_ASSERT_TRUE(co_await http_read_until(stream, "data: \n\n", std::chrono::seconds(5)));
        server.stop();
        // The stream ends (the connection is dropped) instead of hanging.
        const bool more = co_await http_read_until(stream, "never sent", std::chrono::seconds(5));
        EXPECT_FALSE(more);
        EXPECT_FALSE(stream->error.empty() && !stream->parser.is_done());
    });
}

TEST(HttpServer, ModernOnlyRefusesTheLegacyShape) {
    asio::io_context ctx;
    mcp::ServerOptions so;
    so.legacy = false;
    mcp::Server mcp_server(so);
    auto o = options();
    o.legacy = false;
    transport::HttpServer server(
        ctx.get_executor(), [&mcp_server](std::shared_ptr<jsonrpc::Channel> ch) { return mcp_server.serve(ch); }, o);
    ASSERT_FALSE(server.listen());
    asio::co_spawn(ctx, server.run(), asio::detached);
    const auto port = server.port();
    run(ctx, [&]() -> awaitable<void> {
        auto h = post_headers();
        auto init = co_await http_exchange(port, "POST", "/mcp", h, init_body);
        EXPECT_EQ(init.status, 400);
        EXPECT_EQ(init.headers.count("mcp-session-id"), 0u);
        EXPECT_EQ(json::parse(init.body).at("error").at("code").as_int64(), -32022);
        auto get = co_await http_exchange(port, "GET", "/mcp", h, "");
        EXPECT_EQ(get.status, 405);
        auto del = co_await http_exchange(port, "DELETE", "/mcp", h, "");
        EXPECT_EQ(del.status, 405);
        // server/discover, stateless.
        auto mh = post_headers();
        mh.emplace_back("MCP-Protocol-Version", "2026-07-28");
        mh.emplace_back("Mcp-Method", "server/discover");
        auto discover = co_await http_exchange(
            port, "POST", "/mcp", mh,
            R"({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})");
        EXPECT_EQ(discover.status, 200) << discover.body;
        EXPECT_NE(discover.body.find("supportedVersions"), std::string::npos) << discover.body;
        server.stop();
    });
}

// With an answerer, a 2026-07-28 request is answered by it, not by a session (subscriptions/listen still gets one): its
// notifications come first on its stream, an answerer that throws still answers the client, closing the stream
// cancels the answerer, and stop() ends one still running.
TEST(HttpServer, AStatelessRequestGoesToTheAnswererAndListenToASession) {
    asio::io_context ctx;
    auto o = options();
    int cancelled = 0;
    o.answer = [&cancelled](jsonrpc::Message m, std::function<void(std::string)> send) -> awaitable<std::string> {
        if (m.method == "x/throw") throw std::runtime_error("boom");
        send(jsonrpc::serialize_notification("notifications/message", json::object{{"data", "first"}}));
        if (m.method == "x/wait") {
            asio::steady_timer forever(co_await asio::this_coro::executor, std::chrono::hours(1));
            auto [ec] = co_await forever.async_wait(asio::as_tuple(asio::use_awaitable));
            if (ec) ++cancelled;
            co_return std::string();
        }
        co_return jsonrpc::serialize_result(m.id, json::object{{"by", "answerer"}, {"method", m.method}});
    };
    transport::HttpServer server(
        ctx.get_executor(), [](std::shared_ptr<jsonrpc::Channel> ch) { return raw_handler(std::move(ch), 1); }, o);
    ASSERT_FALSE(server.listen());
    asio::co_spawn(ctx, server.run(), asio::detached);
    const auto port = server.port();
    const auto body = [](const std::string& method) {
        return R"({"jsonrpc":"2.0","id":5,"method":")" + method +
               R"(","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
               R"("io.modelcontextprotocol/clientCapabilities":{}}}})";
    };
    const auto headers = [](const std::string& method) {
        auto h = post_headers();
        h.emplace_back("MCP-Protocol-Version", "2026-07-28");
        h.emplace_back("Mcp-Method", method);
        return h;
    };
    run(ctx, [&]() -> awaitable<void> {
        auto r = co_await http_exchange(port, "POST", "/mcp", headers("x/y"), body("x/y"));
        EXPECT_EQ(r.status, 200) << r.body;
        const auto first = r.body.find("first"), answer = r.body.find(R"("by":"answerer")");
        EXPECT_NE(first, std::string::npos) << r.body;
        EXPECT_NE(answer, std::string::npos) << r.body;
        EXPECT_LT(first, answer) << r.body;  // the notification before the answer, on one stream
        EXPECT_EQ(server.session_count(), 0u);

        auto listen =
            co_await http_exchange(port, "POST", "/mcp", headers("subscriptions/listen"), body("subscriptions/listen"));
        EXPECT_NE(listen.body.find(R"("method":"subscriptions/listen")"), std::string::npos) << listen.body;
        EXPECT_EQ(listen.body.find("answerer"), std::string::npos) << listen.body;

        auto thrown = co_await http_exchange(port, "POST", "/mcp", headers("x/throw"), body("x/throw"));
        EXPECT_EQ(thrown.status, 500) << thrown.body;
        EXPECT_NE(thrown.body.find("ended without an answer"), std::string::npos) << thrown.body;

        auto waiting = co_await http_open(port, "POST", "/mcp", headers("x/wait"), body("x/wait"));
        CO_ASSERT_EQ(waiting->status, 200);
        CO_ASSERT_TRUE(co_await http_read_until(waiting, "first", std::chrono::seconds(5)));
        waiting->stream.close();
        for (int i = 0; i < 500 && cancelled == 0; ++i) {
            asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(10));
            co_await t.async_wait(asio::use_awaitable);
        }
        EXPECT_EQ(cancelled, 1);  // the client closed the stream: the answerer was cancelled

        auto stopped = co_await http_open(port, "POST", "/mcp", headers("x/wait"), body("x/wait"));
        CO_ASSERT_EQ(stopped->status, 200);
        CO_ASSERT_TRUE(co_await http_read_until(stopped, "first", std::chrono::seconds(5)));
        server.stop();
        for (int i = 0; i < 500 && cancelled == 1; ++i) {
            asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(10));
            co_await t.async_wait(asio::use_awaitable);
        }
        EXPECT_EQ(cancelled, 2);  // stopping the server ended the one still running
    });
}

}  // namespace
}  // namespace switchboard::test
