// transport::HttpServer in-process: any SessionHandler can sit behind it (not only mcp::Server), and its limits,
// session ends and modern-only mode behave as the transport requires.
#include <switchboard/mcp/server.hpp>
#include <switchboard/mcp/version.hpp>
#include <switchboard/transport/http_server.hpp>

#include "coro_test.hpp"
#include "raw_http.hpp"
#include <boost/asio/detached.hpp>
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

}  // namespace
}  // namespace switchboard::test
