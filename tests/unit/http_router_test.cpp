// http::Server in-process on 127.0.0.1: the route table and the one exception boundary answer over real sockets.
#include <switchboard/http/origin.hpp>
#include <switchboard/http/server.hpp>

#include "coro_test.hpp"
#include "raw_http.hpp"
#include <boost/asio/detached.hpp>
#include <boost/json/parse.hpp>

#include <stdexcept>

namespace switchboard::test {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace web = switchboard::http;
namespace bhttp = boost::beast::http;
using asio::awaitable;

awaitable<void> hello(web::ServerRequest& req, web::Responder& res) {
    web::Reply r;
    r.body = R"({"hello":")" + req.body() + R"("})";
    co_await res.send(std::move(r));
}

awaitable<void> throws_runtime(web::ServerRequest&, web::Responder&) {
    throw std::runtime_error("boom");
    co_return;
}

awaitable<void> throws_http_error(web::ServerRequest&, web::Responder&) {
    throw web::HttpError(bhttp::status::conflict, "Conflict: already there");
    co_return;
}

awaitable<void> answers_nothing(web::ServerRequest&, web::Responder&) { co_return; }

web::Router routes() {
    web::Router r;
    r.add(bhttp::verb::post, "/hello", hello);
    r.add(bhttp::verb::get, "/hello", hello);
    r.add(bhttp::verb::post, "/boom", throws_runtime);
    r.add(bhttp::verb::post, "/conflict", throws_http_error);
    r.add(bhttp::verb::get, "/silent", answers_nothing);
    return r;
}

std::string error_message(const std::string& body) {
    return std::string(json::parse(body).at("error").at("message").as_string());
}

TEST(HttpRouter, RoutesAndTheExceptionBoundaryAnswerWithJsonErrors) {
    asio::io_context ctx;
    web::ServerOptions o;
    o.allowed_origins.push_back("https://app.example");
    o.cors = true;
    web::Server server(ctx.get_executor(), routes(), o);
    ASSERT_FALSE(server.listen());
    asio::co_spawn(ctx, server.run(), asio::detached);
    const auto port = server.port();
    run(ctx, [&]() -> awaitable<void> {
        auto ok = co_await http_exchange(port, "POST", "/hello?x=1", {}, "you");
        CO_ASSERT_EQ(ok.status, 200);
        EXPECT_EQ(ok.body, R"({"hello":"you"})");
        EXPECT_EQ(ok.headers["content-type"], "application/json");

        auto boom = co_await http_exchange(port, "POST", "/boom", {}, "");
        CO_ASSERT_EQ(boom.status, 500);
        EXPECT_EQ(boom.headers["content-type"], "application/json");
        EXPECT_EQ(json::parse(boom.body).at("error").at("status").as_int64(), 500);
        EXPECT_NE(error_message(boom.body).find("boom"), std::string::npos) << boom.body;

        auto conflict = co_await http_exchange(port, "POST", "/conflict", {}, "");
        CO_ASSERT_EQ(conflict.status, 409);
        EXPECT_EQ(error_message(conflict.body), "Conflict: already there");

        auto silent = co_await http_exchange(port, "GET", "/silent", {}, "");
        CO_ASSERT_EQ(silent.status, 500);
        EXPECT_NE(error_message(silent.body).find("no response"), std::string::npos) << silent.body;

        auto unknown = co_await http_exchange(port, "GET", "/nowhere", {}, "");
        CO_ASSERT_EQ(unknown.status, 404);
        EXPECT_NE(error_message(unknown.body).find("/nowhere"), std::string::npos) << unknown.body;

        auto wrong = co_await http_exchange(port, "DELETE", "/hello", {}, "");
        CO_ASSERT_EQ(wrong.status, 405);
        EXPECT_EQ(wrong.headers["allow"], "POST, GET");

        Headers foreign;
        foreign.emplace_back("Origin", "https://evil.example");
        auto forbidden = co_await http_exchange(port, "POST", "/hello", foreign, "x");
        CO_ASSERT_EQ(forbidden.status, 403);
        EXPECT_NE(error_message(forbidden.body).find("evil.example"), std::string::npos) << forbidden.body;

        Headers local;
        local.emplace_back("Origin", "http://localhost:5173");
        auto loopback = co_await http_exchange(port, "POST", "/hello", local, "x");
        EXPECT_EQ(loopback.status, 200);

        Headers preflight;
        preflight.emplace_back("Origin", "https://app.example");
        preflight.emplace_back("Access-Control-Request-Method", "POST");
        auto cors = co_await http_exchange(port, "OPTIONS", "/hello", preflight, "");
        CO_ASSERT_EQ(cors.status, 204);
        EXPECT_EQ(cors.headers["access-control-allow-origin"], "https://app.example");
        EXPECT_EQ(cors.headers["access-control-allow-methods"], "POST, GET");
        server.stop();
    });
}

TEST(HttpRouter, BodyLimitAndCustomErrorBodies) {
    asio::io_context ctx;
    web::ServerOptions o;
    o.max_body_size = 16;
    o.error_body = [](bhttp::status status, const std::string& message) {
        return "custom " + std::to_string(static_cast<unsigned>(status)) + ": " + message;
    };
    web::Server server(ctx.get_executor(), routes(), o);
    ASSERT_FALSE(server.listen());
    asio::co_spawn(ctx, server.run(), asio::detached);
    const auto port = server.port();
    run(ctx, [&]() -> awaitable<void> {
        auto big = co_await http_exchange(port, "POST", "/hello", {}, std::string(17, 'x'));
        CO_ASSERT_EQ(big.status, 413);
        EXPECT_EQ(big.body, "custom 413: Payload Too Large: the message size limit is 16 bytes");
        auto boom = co_await http_exchange(port, "POST", "/boom", {}, "");
        EXPECT_EQ(boom.body, "custom 500: Internal Server Error: boom");
        server.stop();
    });
}

TEST(HttpRouter, OpenRoutesSkipTheTokenAndTheAccessLogSeesEachRequest) {
    asio::io_context ctx;
    web::Router r = routes();
    web::Router ops;
    web::RouteOptions open;
    open.requires_token = false;
    ops.add(bhttp::verb::get, "/open", hello, open);
    r.add_all(ops);
    web::ServerOptions o;
    o.bearer_token = "s3cret";
    struct Seen {
        std::string method, path, auth;
        unsigned status;
        std::size_t bytes;
    };
    std::vector<Seen> seen;
    o.access_log = [&seen](const web::AccessEntry& e) {
        seen.push_back(Seen{std::string(e.request.method_string()), std::string(e.path),
                            web::header_value(e.request, "Authorization"), e.response.status(),
                            e.response.bytes_sent()});
    };
    web::Server server(ctx.get_executor(), r, o);
    ASSERT_FALSE(server.listen());
    asio::co_spawn(ctx, server.run(), asio::detached);
    const auto port = server.port();
    run(ctx, [&]() -> awaitable<void> {
        auto a = co_await http_exchange(port, "GET", "/open?q=1", {}, "");
        EXPECT_EQ(a.status, 200);
        auto b = co_await http_exchange(port, "GET", "/hello", {}, "");
        EXPECT_EQ(b.status, 401);
        auto c = co_await http_exchange(port, "POST", "/open", {}, "");
        EXPECT_EQ(c.status, 405);  // the path skips the token: its 405 too
        Headers auth;
        auth.emplace_back("Authorization", "Bearer s3cret");
        auto d = co_await http_exchange(port, "GET", "/hello", auth, "");
        EXPECT_EQ(d.status, 200);
        server.stop();
    });
    ASSERT_EQ(seen.size(), 4u);
    EXPECT_EQ(seen[0].path, "/open");
    EXPECT_EQ(seen[0].status, 200u);
    EXPECT_GT(seen[0].bytes, 0u);
    EXPECT_EQ(seen[1].status, 401u);
    EXPECT_EQ(seen[2].method, "POST");
    EXPECT_EQ(seen[2].status, 405u);
    EXPECT_EQ(seen[3].status, 200u);
}

TEST(HttpOrigin, LoopbackAndListedOriginsOnly) {
    std::vector<std::string> allowed{"https://app.example"};
    EXPECT_TRUE(web::origin_allowed("http://127.0.0.1:8080", allowed));
    EXPECT_TRUE(web::origin_allowed("http://[::1]", allowed));
    EXPECT_TRUE(web::origin_allowed("https://app.example", allowed));
    EXPECT_FALSE(web::origin_allowed("https://app.example.evil", allowed));
    EXPECT_FALSE(web::origin_allowed("null", allowed));
}

}  // namespace
}  // namespace switchboard::test
