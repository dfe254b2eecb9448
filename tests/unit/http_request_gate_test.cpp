// The checks every route of http::Server shares, decided without I/O (request_gate.hpp): route, Host, Origin, CORS
// preflight, token, method, and the refusals of a failed read.
#include <switchboard/http/request_gate.hpp>

#include <boost/beast/http/error.hpp>
#include <gtest/gtest.h>

#include <stdexcept>

namespace switchboard::http {
namespace {

using Action = RequestVerdict::Action;

Router routes() {
    Router r;
    r.add(bhttp::verb::post, "/mcp", {});
    r.add(bhttp::verb::get, "/health", {}, RouteOptions{false});
    return r;
}

ServerRequest request(bhttp::verb method, std::string target, Fields headers) {
    ServerRequest req{method, target, 11};
    for (auto& [name, value] : headers) req.set(name, value);
    return req;
}

bool has_header(const Fields& headers, std::string_view name, std::string_view value) {
    for (const auto& [n, v] : headers)
        if (n == name && v == value) return true;
    return false;
}

TEST(RequestGate, HostMustBeAListedNameWithAtMostAPort) {
    ServerOptions o;
    o.allowed_hosts = {"127.0.0.1", "localhost", "[::1]"};
    const auto r = routes();
    for (std::string host : {"127.0.0.1", "127.0.0.1:3333", "LOCALHOST:80", "[::1]", "[::1]:8080", "localhost:"}) {
        auto v = gate_request(request(bhttp::verb::post, "/mcp?x=1", {{"Host", host}}), r, o);
        EXPECT_EQ(v.action, Action::handle) << host;
        EXPECT_EQ(v.path, "/mcp");
    }
    // A rebinding page's name, and values that only start like a listed one (found by fuzz_http_request).
    for (std::string host :
         {"evil.example", "[::1]~:80", "localhost:80:81", "127.0.0.1:x", "[::1", "localhost.evil.example", ""}) {
        auto v = gate_request(request(bhttp::verb::post, "/mcp", {{"Host", host}}), r, o);
        EXPECT_EQ(v.action, Action::refuse) << host;
        EXPECT_EQ(v.status, bhttp::status::forbidden) << host;
    }
}

TEST(RequestGate, OriginPreflightTokenAndMethodInThatOrder) {
    ServerOptions o;
    o.bearer_token = "tok";
    o.cors = true;
    o.allowed_origins = {"https://app.example"};
    const auto r = routes();

    auto unknown = gate_request(request(bhttp::verb::get, "/nope", {}), r, o);
    EXPECT_EQ(unknown.status, bhttp::status::not_found);
    EXPECT_EQ(unknown.message, "Not Found: no route for /nope");

    auto foreign = gate_request(request(bhttp::verb::post, "/mcp", {{"Origin", "https://evil.example"}}), r, o);
    EXPECT_EQ(foreign.status, bhttp::status::forbidden);

    // A preflight needs no token.
    auto preflight =
        gate_request(request(bhttp::verb::options, "/mcp",
                             {{"Origin", "https://app.example"}, {"Access-Control-Request-Method", "POST"}}),
                     r, o);
    EXPECT_EQ(preflight.action, Action::preflight);
    EXPECT_TRUE(has_header(preflight.headers, "Access-Control-Allow-Origin", "https://app.example"));

    // Refused for the token, with the CORS headers an allowed origin needs to read the refusal.
    auto no_token = gate_request(request(bhttp::verb::post, "/mcp", {{"Origin", "https://app.example"}}), r, o);
    EXPECT_EQ(no_token.status, bhttp::status::unauthorized);
    EXPECT_TRUE(has_header(no_token.headers, "WWW-Authenticate", "Bearer"));
    EXPECT_TRUE(has_header(no_token.response_headers, "Access-Control-Allow-Origin", "https://app.example"));
    auto wrong = gate_request(request(bhttp::verb::post, "/mcp", {{"Authorization", "Bearer tok2"}}), r, o);
    EXPECT_TRUE(has_header(wrong.headers, "WWW-Authenticate", "Bearer error=\"invalid_token\""));

    // 405 only for who may know the path.
    auto method_without_token = gate_request(request(bhttp::verb::put, "/mcp", {}), r, o);
    EXPECT_EQ(method_without_token.status, bhttp::status::unauthorized);
    auto method = gate_request(request(bhttp::verb::put, "/mcp", {{"Authorization", "bearer tok"}}), r, o);
    EXPECT_EQ(method.status, bhttp::status::method_not_allowed);
    EXPECT_TRUE(has_header(method.headers, "Allow", "POST"));

    auto ok = gate_request(request(bhttp::verb::post, "/mcp", {{"Authorization", "Bearer tok"}}), r, o);
    EXPECT_EQ(ok.action, Action::handle);
    ASSERT_NE(ok.route, nullptr);
    EXPECT_EQ(ok.route->path, "/mcp");
    auto health = gate_request(request(bhttp::verb::get, "/health", {}), r, o);
    EXPECT_EQ(health.action, Action::handle);
}

class Refuses : public TokenVerifier {
public:
    boost::asio::awaitable<TokenVerdict> verify(const ServerRequest&) override { throw std::logic_error("unused"); }
};

TEST(RequestGate, TheVerifierIsAskedUnlessTheStaticTokenMatched) {
    ServerOptions o;
    o.bearer_token = "ui";
    o.token_verifier = std::make_shared<Refuses>();
    const auto r = routes();
    auto jwt = gate_request(request(bhttp::verb::post, "/mcp", {{"Authorization", "Bearer eyJ.x.y"}}), r, o);
    EXPECT_EQ(jwt.action, Action::handle);
    EXPECT_TRUE(jwt.verify_token);
    auto ui = gate_request(request(bhttp::verb::post, "/mcp", {{"Authorization", "Bearer ui"}}), r, o);
    EXPECT_FALSE(ui.verify_token);
    auto health = gate_request(request(bhttp::verb::get, "/health", {}), r, o);
    EXPECT_FALSE(health.verify_token);
}

TEST(RequestGate, ReadRefusals) {
    ServerOptions o;
    o.max_body_size = 1024;
    EXPECT_EQ(read_refusal(bhttp::error::body_limit, o)->status, bhttp::status::payload_too_large);
    EXPECT_NE(read_refusal(bhttp::error::body_limit, o)->message.find("1.0 KiB"), std::string::npos)
        << read_refusal(bhttp::error::body_limit, o)->message;
    EXPECT_EQ(read_refusal(bhttp::error::header_limit, o)->status, bhttp::status::request_header_fields_too_large);
    EXPECT_EQ(read_refusal(bhttp::error::bad_method, o)->status, bhttp::status::bad_request);
    EXPECT_FALSE(read_refusal(bhttp::error::end_of_stream, o));
    EXPECT_FALSE(read_refusal(bhttp::error::partial_message, o));
    EXPECT_FALSE(read_refusal(boost::asio::error::operation_aborted, o));
}

}  // namespace
}  // namespace switchboard::http
