// `switchboard serve --cors-proxy`, the real binary: what it forwards, and the addresses it refuses, directly and
// behind redirects. The targets are in-process http::Servers on 127.0.0.1 and 127.0.0.2 (Linux routes all of 127/8
// to loopback), so that "--cors-proxy-allow 127.0.0.2/32" allows exactly the first hop.
#include "harness.hpp"
#include "net_harness.hpp"

#include <switchboard/core/text.hpp>
#include <switchboard/http/server.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>
#include <fmt/format.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>

namespace switchboard::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
namespace asio = boost::asio;
namespace web = switchboard::http;
namespace bhttp = boost::beast::http;
using asio::awaitable;

std::string encode(std::string_view s) {
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
            out += static_cast<char>(c);
        else
            out += fmt::format("%{:02X}", c);
    }
    return out;
}

std::atomic<int> upstream_requests{0};

// /echo answers with what arrived; /redirect?to=URL redirects there (302).
awaitable<void> echo(web::ServerRequest& req, web::Responder& res) {
    ++upstream_requests;
    json::object headers;
    for (const auto& f : req) headers[core::ascii_lower(std::string_view(f.name_string()))] = std::string(f.value());
    json::object o;
    o["method"] = std::string(req.method_string());
    o["body"] = req.body();
    o["headers"] = std::move(headers);
    web::Reply r;
    r.body = json::serialize(o);
    r.headers.emplace_back("Set-Cookie", "upstream=1");
    r.headers.emplace_back("Mcp-Session-Id", "upstream-session");
    co_await res.send(std::move(r));
}

awaitable<void> redirect(web::ServerRequest& req, web::Responder& res) {
    ++upstream_requests;
    auto parsed = boost::urls::parse_origin_form(req.target());
    std::string to;
    if (parsed) {
        auto it = parsed->params().find("to");
        if (it != parsed->params().end()) to = std::string((*it).value);
    }
    web::Reply r;
    r.status = bhttp::status::found;
    r.headers.emplace_back("Location", to);
    co_await res.send(std::move(r));
}

class Upstreams {
public:
    Upstreams() {
        for (const char* address : {"127.0.0.1", "127.0.0.2"}) {
            web::Router r;
            r.add(bhttp::verb::get, "/echo", echo);
            r.add(bhttp::verb::post, "/echo", echo);
            r.add(bhttp::verb::get, "/redirect", redirect);
            web::ServerOptions o;
            o.address = address;
            auto s = std::make_unique<web::Server>(ctx_.get_executor(), r, o);
            ok_ = ok_ && !s->listen();
            servers_.push_back(std::move(s));
        }
        for (auto& s : servers_) asio::co_spawn(ctx_, s->run(), asio::detached);
        thread_ = std::thread([this] { ctx_.run(); });
    }
    ~Upstreams() {
        asio::post(ctx_, [this] {
            for (auto& s : servers_) s->stop();
        });
        thread_.join();
    }
    bool ok() const { return ok_; }
    std::uint16_t port(int i) const { return servers_[i]->port(); }

private:
    asio::io_context ctx_;
    std::vector<std::unique_ptr<web::Server>> servers_;
    std::thread thread_;
    bool ok_ = true;
};

class CorsProxy : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("switchboard-corsproxy-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
        config_ = (dir_ / "config.json").string();
        std::ofstream(config_) << R"({"mcpServers": {"a": {"command": ")" << demo_server() << R"("}}})";
        upstreams_ = std::make_unique<Upstreams>();
        ASSERT_TRUE(upstreams_->ok());
        one_ = "http://127.0.0.1:" + std::to_string(upstreams_->port(0));
        two_ = "http://127.0.0.2:" + std::to_string(upstreams_->port(1));
    }
    void TearDown() override {
        gateway_.reset();
        upstreams_.reset();
        fs::remove_all(dir_);
    }
    void start(std::vector<std::string> extra) {
        std::vector<std::string> args{"--config", config_, "serve", "--port", "0"};
        args.insert(args.end(), extra.begin(), extra.end());
        gateway_ = start_listening(SWITCHBOARD_CLI, args);
        ASSERT_TRUE(gateway_);
    }
    HttpResult get(const std::string& url, Headers headers) {
        HttpResult out;
        const auto port = gateway_->port;
        const auto target = "/cors-proxy?url=" + encode(url);
        run([&]() -> awaitable<void> { out = co_await http_exchange(port, "GET", target, headers, ""); });
        return out;
    }
    // Expects 403 naming `address`.
    void refused(const std::string& url, const std::string& address, const std::string& why) {
        auto r = get(url, {});
        EXPECT_EQ(r.status, 403) << url << ": " << r.body;
        EXPECT_NE(r.body.find(address + " is a" + (why == "unspecified" ? "n " : " ") + why + " address"),
                  std::string::npos)
            << url << ": " << r.body;
    }

    fs::path dir_;
    std::string config_;
    std::unique_ptr<Upstreams> upstreams_;
    std::string one_, two_;
    std::unique_ptr<ListeningServer> gateway_;
};

TEST_F(CorsProxy, OffByDefault) {
    start({});
    auto r = get(one_ + "/echo", {});
    EXPECT_EQ(r.status, 404) << r.body;
}

TEST_F(CorsProxy, RefusesSpecialAddresses) {
    start({"--cors-proxy"});
    const int before = upstream_requests;
    refused(one_ + "/echo", "127.0.0.1", "loopback");
    refused("http://10.0.0.1/", "10.0.0.1", "private");
    refused("http://169.254.169.254/latest/meta-data", "169.254.169.254", "cloud metadata");
    refused("http://[::1]:1/", "::1", "loopback");
    refused("http://[::ffff:127.0.0.1]:1/", "::ffff:127.0.0.1 (127.0.0.1)", "loopback");
    refused("http://0.0.0.0:1/", "0.0.0.0", "unspecified");
    refused("http://100.64.0.1/", "100.64.0.1", "CGNAT");
    // A name is judged by the addresses it resolves to.
    auto r = get("http://localhost:" + std::to_string(upstreams_->port(0)) + "/echo", {});
    EXPECT_EQ(r.status, 403) << r.body;
    EXPECT_NE(r.body.find("is a loopback address"), std::string::npos) << r.body;
    EXPECT_NE(r.body.find("localhost"), std::string::npos) << r.body;
    EXPECT_EQ(upstream_requests, before);  // nothing reached the targets

    // Bad URLs.
    EXPECT_EQ(get("ftp://example.com/", {}).status, 400);
    EXPECT_EQ(get("http://user:pw@example.com/", {}).status, 400);
    EXPECT_EQ(get("not a url", {}).status, 400);
    HttpResult none;
    const auto port = gateway_->port;
    run([&]() -> awaitable<void> { none = co_await http_exchange(port, "GET", "/cors-proxy", {}, ""); });
    EXPECT_EQ(none.status, 400) << none.body;
    // The gateway log names the refusal; the access log has no query (the URL may carry secrets).
    EXPECT_NE(gateway_->log().find("169.254.169.254 is a cloud metadata address"), std::string::npos);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the access line follows the response
    EXPECT_NE(gateway_->log().find("access method=GET path=/cors-proxy status=403"), std::string::npos);
    EXPECT_EQ(gateway_->log().find("169.254.169.254/latest"), std::string::npos);  // no query in the access log
}

TEST_F(CorsProxy, RedirectsAreCheckedAtEveryHop) {
    start({"--cors-proxy", "--cors-proxy-allow", "127.0.0.2/32"});
    // The first hop (127.0.0.2) is allowed; where it redirects to is not.
    const auto via = [&](const std::string& to) { return two_ + "/redirect?to=" + encode(to); };
    const int before = upstream_requests;
    refused(via(one_ + "/echo"), "127.0.0.1", "loopback");
    refused(via("http://10.0.0.1/"), "10.0.0.1", "private");
    refused(via("http://169.254.169.254/latest/meta-data"), "169.254.169.254", "cloud metadata");
    auto r = get(via("http://localhost:" + std::to_string(upstreams_->port(0)) + "/echo"), {});
    EXPECT_EQ(r.status, 403) << r.body;
    EXPECT_NE(r.body.find("127.0.0.1 is a loopback address"), std::string::npos) << r.body;
    EXPECT_EQ(upstream_requests, before + 4);  // the redirecting hops only
    // An allowed redirect target is followed.
    auto ok = get(via(two_ + "/echo"), {});
    EXPECT_EQ(ok.status, 200) << ok.body;
    // More than 5 redirects: refused.
    std::string chain = two_ + "/echo";
    for (int i = 0; i < 6; ++i) chain = via(chain);
    auto loop = get(chain, {});
    EXPECT_EQ(loop.status, 502) << loop.body;
    EXPECT_NE(loop.body.find("too many redirects"), std::string::npos) << loop.body;
}

TEST_F(CorsProxy, ForwardsOnlyPrefixedHeadersAndStreamsTheAnswerWithCors) {
    start({"--cors-proxy", "--cors-proxy-allow", "127.0.0.2/32"});
    Headers h;
    h.emplace_back("Origin", "http://localhost:5173");
    h.emplace_back("Cookie", "gateway-cookie=1");
    h.emplace_back("Authorization", "Bearer gateway-client-secret");
    h.emplace_back("X-Other", "not forwarded");
    h.emplace_back("X-Llama-Server-Proxy-Header-Authorization", "Bearer for-upstream");
    h.emplace_back("x-llama-server-proxy-header-x-api-key", "k1");
    h.emplace_back("x-llama-server-proxy-header-host", "evil.example");
    h.emplace_back("Content-Type", "application/json");
    HttpResult r;
    const auto port = gateway_->port;
    const auto target = "/cors-proxy?url=" + encode(two_ + "/echo?x=1");
    run([&]() -> awaitable<void> { r = co_await http_exchange(port, "POST", target, h, R"({"hi":1})"); });
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.headers["access-control-allow-origin"], "http://localhost:5173");
    EXPECT_EQ(r.headers["mcp-session-id"], "upstream-session");
    EXPECT_EQ(r.headers.count("set-cookie"), 0u);
    auto v = json::parse(r.body);
    EXPECT_EQ(v.at("method").as_string(), "POST");
    EXPECT_EQ(v.at("body").as_string(), R"({"hi":1})");
    const auto& got = v.at("headers").as_object();
    EXPECT_EQ(got.at("authorization").as_string(), "Bearer for-upstream") << v;
    EXPECT_EQ(got.at("x-api-key").as_string(), "k1") << v;
    EXPECT_EQ(got.at("content-type").as_string(), "application/json") << v;
    EXPECT_EQ(got.at("host").as_string(), "127.0.0.2:" + std::to_string(upstreams_->port(1))) << v;
    EXPECT_FALSE(got.contains("cookie")) << v;
    EXPECT_FALSE(got.contains("x-other")) << v;
    EXPECT_FALSE(got.contains("origin")) << v;
    EXPECT_EQ(r.body.find("gateway-client-secret"), std::string::npos) << r.body;

    // A preflight for the prefixed headers is answered.
    Headers pre;
    pre.emplace_back("Origin", "http://localhost:5173");
    pre.emplace_back("Access-Control-Request-Method", "POST");
    pre.emplace_back("Access-Control-Request-Headers", "x-llama-server-proxy-header-x-api-key");
    HttpResult p;
    run([&]() -> awaitable<void> { p = co_await http_exchange(port, "OPTIONS", "/cors-proxy", pre, ""); });
    EXPECT_EQ(p.status, 204);
    EXPECT_NE(p.headers["access-control-allow-headers"].find("*"), std::string::npos);

    // DELETE is answered here: nothing is forwarded.
    const int before = upstream_requests;
    HttpResult d;
    run([&]() -> awaitable<void> { d = co_await http_exchange(port, "DELETE", target, {}, ""); });
    EXPECT_EQ(d.status, 200) << d.body;
    EXPECT_EQ(upstream_requests, before);

    // A foreign origin is refused like on /mcp.
    Headers evil;
    evil.emplace_back("Origin", "http://evil.example");
    EXPECT_EQ(get(two_ + "/echo", evil).status, 403);
    EXPECT_EQ(upstream_requests, before);
}

TEST_F(CorsProxy, BadAllowBlockIsAUsageError) {
    std::string out;
    const auto cmd = std::string(SWITCHBOARD_CLI) + " --config " + config_ +
                     " serve --port 0 --cors-proxy --cors-proxy-allow 10.0.0.0/99 2>&1";
    EXPECT_EQ(run_command(cmd, out), 2) << out;
    EXPECT_NE(out.find("--cors-proxy-allow"), std::string::npos) << out;
}

}  // namespace
}  // namespace switchboard::test
