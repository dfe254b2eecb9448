// The HTTP transports over real sockets on 127.0.0.1: the official server-everything in streamableHttp and sse
// modes, and a scripted Node server (peers/http_fault_server.mjs) for session expiry, stream resumption, oversize
// events, cut connections, TLS with a private CA, redirects and header handling.
#include "harness.hpp"

#include <switchboard/transport/http_client.hpp>

#include <switchboard/core/as_tuple.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace switchboard;
using asio::awaitable;
using switchboard::test::run;

namespace {

using switchboard::core::as_tuple_awaitable;

std::string everything_js() {
    std::string path = PEERS_DIR;  // appended, not `string + literal`: GCC 12 warns falsely (-Warray-bounds) on that
    path += "/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
    return path;
}
std::string fault_js() { return std::string(FAULT_SERVER); }

int free_port() {
    asio::io_context ctx;
    asio::ip::tcp::acceptor a(ctx, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    return a.local_endpoint().port();
}

awaitable<bool> wait_for_port(int port) {
    auto ex = co_await asio::this_coro::executor;
    for (int i = 0; i < 150; ++i) {
        asio::ip::tcp::socket s(ex);
        auto [ec] = co_await s.async_connect(
            asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)),
            as_tuple_awaitable);
        if (!ec) co_return true;
        asio::steady_timer t(ex, std::chrono::milliseconds(100));
        co_await t.async_wait(as_tuple_awaitable);
    }
    co_return false;
}

std::shared_ptr<transport::StdioProcessChannel> spawn_node(asio::any_io_executor ex, std::vector<std::string> args,
                                                           std::map<std::string, std::string> env) {
    transport::StdioProcessOptions po;
    po.name = "peer";
    po.command = "node";
    po.args = std::move(args);
    po.env = std::move(env);
    auto p = transport::StdioProcessChannel::spawn(ex, po);
    return p ? *p : nullptr;
}

struct FaultServer {
    std::shared_ptr<transport::StdioProcessChannel> proc;
    int http = 0, https = 0;
};

awaitable<FaultServer> start_fault_server(std::vector<std::string> args) {
    auto ex = co_await asio::this_coro::executor;
    FaultServer f;
    args.insert(args.begin(), fault_js());
    f.proc = spawn_node(ex, std::move(args), {});
    if (!f.proc) co_return f;
    auto line = co_await f.proc->read();
    if (line.kind != jsonrpc::Received::Kind::message) co_return f;
    auto v = json::parse(line.text);
    f.http = static_cast<int>(v.at("http").to_number<int>());
    f.https = static_cast<int>(v.at("https").to_number<int>());
    co_return f;
}

// A plain synchronous GET for the fault server's /stats (test side only).
json::value get_stats(int port) {
    std::string out;
    test::run_command("curl -s http://127.0.0.1:" + std::to_string(port) + "/stats", out);
    return json::parse(out);
}

transport::HttpClientOptions options(std::string name) {
    transport::HttpClientOptions o;
    o.server_name = std::move(name);
    return o;
}

struct Session {
    std::shared_ptr<mcp::ClientSession> session;
    std::string error;
};

awaitable<Session> connect_http(std::string url, transport::HttpClientOptions o, std::shared_ptr<int> messages) {
    auto ex = co_await asio::this_coro::executor;
    Session s;
    mcp::ClientOptions co;
    co.server_name = o.server_name;
    if (messages)
        co.on_notification = [messages](const std::string& method, const json::value&) {
            if (method == "notifications/message") ++*messages;
        };
    co.request_timeout = std::chrono::seconds(20);
    auto channel = transport::make_streamable_http_channel(ex, std::move(url), std::move(o));
    auto r = co_await mcp::ClientSession::connect(ex, channel, std::move(co));
    if (r)
        s.session = *r;
    else
        s.error = r.error().describe();
    co_return s;
}

awaitable<Session> connect_http(std::string url, transport::HttpClientOptions o) {
    return connect_http(std::move(url), std::move(o), nullptr);
}

awaitable<std::string> echo(mcp::ClientSession& s, std::string message) {
    json::object args;
    args["message"] = std::move(message);
    auto r = co_await s.call_tool("echo", std::move(args));
    if (!r) co_return "error: " + r.error().describe();
    co_return r->content.empty() ? std::string("(no content)") : r->content[0].text();
}

bool has_tool(const std::vector<mcp::Tool>& tools, std::string_view name) {
    return std::any_of(tools.begin(), tools.end(), [&](const mcp::Tool& t) { return t.name == name; });
}

}  // namespace

TEST(HttpEverything, StreamableHttpListAndCallConcurrently) {
    const int port = free_port();
    run(
        [port]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            std::map<std::string, std::string> env{{"PORT", std::to_string(port)}};
            std::vector<std::string> args{everything_js(), "streamableHttp"};
            auto server = spawn_node(ex, std::move(args), std::move(env));
            CO_ASSERT_TRUE(server != nullptr);
            const bool up = co_await wait_for_port(port);
            CO_ASSERT_TRUE(up);
            auto s = co_await connect_http("http://127.0.0.1:" + std::to_string(port) + "/mcp", options("everything"));
            CO_ASSERT_TRUE(s.session) << s.error;
            EXPECT_EQ(s.session->era(), mcp::Era::legacy);
            auto tools = co_await s.session->list_tools();
            CO_ASSERT_TRUE(tools);
            EXPECT_TRUE(has_tool(*tools, "echo"));
            EXPECT_EQ(co_await echo(*s.session, "over http"), "Echo: over http");
            // Several calls in flight at once, each on its own connection.
            auto left = std::make_shared<int>(8);
            auto results = std::make_shared<std::vector<std::string>>(8);
            for (int i = 0; i < 8; ++i)
                asio::co_spawn(
                    ex,
                    [s = s.session, i, results, left]() -> awaitable<void> {
                        (*results)[i] = co_await echo(*s, "n" + std::to_string(i));
                        --*left;
                    },
                    asio::detached);
            for (int i = 0; i < 200 && *left > 0; ++i) {
                asio::steady_timer t(ex, std::chrono::milliseconds(50));
                co_await t.async_wait(as_tuple_awaitable);
            }
            for (int i = 0; i < 8; ++i) EXPECT_EQ((*results)[i], "Echo: n" + std::to_string(i));
            co_await s.session->close();
            co_await server->close();
        },
        std::chrono::seconds(60));
}

TEST(HttpEverything, ServerInitiatedMessagesArriveOnTheGetStream) {
    const int port = free_port();
    run(
        [port]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            std::map<std::string, std::string> env{{"PORT", std::to_string(port)}};
            std::vector<std::string> args{everything_js(), "streamableHttp"};
            auto server = spawn_node(ex, std::move(args), std::move(env));
            const bool up = co_await wait_for_port(port);
            CO_ASSERT_TRUE(up);
            auto messages = std::make_shared<int>(0);
            auto s = co_await connect_http("http://127.0.0.1:" + std::to_string(port) + "/mcp", options("everything"),
                                           messages);
            CO_ASSERT_TRUE(s.session) << s.error;
            auto r = co_await s.session->call_tool("toggle-simulated-logging", json::object());
            CO_ASSERT_TRUE(r) << r.error().describe();
            // The server logs once at once and then every 5 s, outside any request: only the GET stream carries it.
            for (int i = 0; i < 240 && *messages == 0; ++i) {
                asio::steady_timer t(ex, std::chrono::milliseconds(50));
                co_await t.async_wait(as_tuple_awaitable);
            }
            EXPECT_GT(*messages, 0);
            co_await s.session->close();
            co_await server->close();
        },
        std::chrono::seconds(60));
}

TEST(HttpEverything, LegacySseListAndCall) {
    const int port = free_port();
    run(
        [port]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            std::map<std::string, std::string> env{{"PORT", std::to_string(port)}};
            std::vector<std::string> args{everything_js(), "sse"};
            auto server = spawn_node(ex, std::move(args), std::move(env));
            CO_ASSERT_TRUE(server != nullptr);
            const bool up = co_await wait_for_port(port);
            CO_ASSERT_TRUE(up);
            auto channel = co_await transport::connect_sse_channel(
                ex, "http://127.0.0.1:" + std::to_string(port) + "/sse", options("everything-sse"));
            CO_ASSERT_TRUE(channel) << channel.error().describe();
            mcp::ClientOptions co;
            co.server_name = "everything-sse";
            auto s = co_await mcp::ClientSession::connect(ex, *channel, std::move(co));
            CO_ASSERT_TRUE(s) << s.error().describe();
            auto tools = co_await (*s)->list_tools();
            CO_ASSERT_TRUE(tools);
            EXPECT_TRUE(has_tool(*tools, "echo"));
            EXPECT_EQ(co_await echo(**s, "over sse"), "Echo: over sse");
            co_await (*s)->close();
            co_await server->close();
        },
        std::chrono::seconds(60));
}

TEST(HttpEverything, CliToolsAndCallInBothModes) {
    const int p1 = free_port(), p2 = free_port();
    run(
        [p1, p2]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            std::vector<std::string> a1{everything_js(), "streamableHttp"}, a2{everything_js(), "sse"};
            std::map<std::string, std::string> e1{{"PORT", std::to_string(p1)}}, e2{{"PORT", std::to_string(p2)}};
            auto s1 = spawn_node(ex, std::move(a1), std::move(e1));
            auto s2 = spawn_node(ex, std::move(a2), std::move(e2));
            const bool up1 = co_await wait_for_port(p1);
            const bool up2 = co_await wait_for_port(p2);
            CO_ASSERT_TRUE(up1 && up2);
            auto cfg = fs::temp_directory_path() / ("sb-http-cli-" + std::to_string(::getpid()) + ".json");
            std::ofstream(cfg) << R"({"mcpServers": {"web": {"url": "http://127.0.0.1:)" << p1
                               << R"(/mcp"}, "old": {"url": "http://127.0.0.1:)" << p2 << R"(/sse"}}})";
            std::string out;
            const std::string cli = std::string(SWITCHBOARD_CLI) + " --config " + cfg.string();
            EXPECT_EQ(test::run_command(cli + " tools 2>&1", out), 0) << out;
            EXPECT_NE(out.find("web"), std::string::npos) << out;
            EXPECT_NE(out.find("old"), std::string::npos) << out;
            EXPECT_EQ(test::run_command(cli + " call web__echo '{\"message\": \"cli http\"}' 2>&1", out), 0) << out;
            EXPECT_EQ(out, "Echo: cli http\n");
            EXPECT_EQ(test::run_command(cli + " call old__echo '{\"message\": \"cli sse\"}' 2>&1", out), 0) << out;
            EXPECT_EQ(out, "Echo: cli sse\n");
            fs::remove(cfg);
            co_await s1->close();
            co_await s2->close();
        },
        std::chrono::seconds(90));
}

class HttpFault : public ::testing::Test {};

TEST_F(HttpFault, PrimingEventAndJsonReplies) {
    run([]() -> awaitable<void> {
        auto f = co_await start_fault_server({});
        CO_ASSERT_TRUE(f.http > 0);
        for (std::string path : {"/mcp", "/json"}) {
            auto s = co_await connect_http("http://127.0.0.1:" + std::to_string(f.http) + path, options("fault"));
            CO_ASSERT_TRUE(s.session) << s.error;
            EXPECT_EQ(co_await echo(*s.session, "a"), "Echo: a") << path;
            co_await s.session->close();
        }
        auto stats = get_stats(f.http);
        EXPECT_EQ(stats.at("deletes").to_number<int>(), 2);  // DELETE on close
        // Sequential requests reuse kept-alive connections.
        std::set<std::int64_t> sockets;
        for (const auto& r : stats.at("requests").as_array()) sockets.insert(r.at("port").to_number<std::int64_t>());
        EXPECT_GE(stats.at("requests").as_array().size(), 8u);
        EXPECT_LE(sockets.size(), 4u);
        co_await f.proc->close();
    });
}

TEST_F(HttpFault, ExpiredSessionIsRenewedOnceAndTheCallRetried) {
    run([]() -> awaitable<void> {
        auto f = co_await start_fault_server({});
        CO_ASSERT_TRUE(f.http > 0);
        auto s = co_await connect_http("http://127.0.0.1:" + std::to_string(f.http) + "/expire", options("fault"));
        CO_ASSERT_TRUE(s.session) << s.error;
        EXPECT_EQ(co_await echo(*s.session, "after expiry"), "Echo: after expiry");
        EXPECT_EQ(co_await echo(*s.session, "again"), "Echo: again");
        EXPECT_EQ(get_stats(f.http).at("initializes").to_number<int>(), 2);
        co_await s.session->close();
        co_await f.proc->close();
    });
}

TEST_F(HttpFault, BrokenReplyStreamResumesWithLastEventIdAfterRetry) {
    run([]() -> awaitable<void> {
        auto f = co_await start_fault_server({});
        CO_ASSERT_TRUE(f.http > 0);
        auto s = co_await connect_http("http://127.0.0.1:" + std::to_string(f.http) + "/resume", options("fault"));
        CO_ASSERT_TRUE(s.session) << s.error;
        EXPECT_EQ(co_await echo(*s.session, "resumed"), "Echo: resumed");
        auto stats = get_stats(f.http);
        CO_ASSERT_TRUE(stats.at("resume").is_object()) << json::serialize(stats.at("resume"));
        EXPECT_EQ(stats.at("resume").at("lastEventId").as_string(), "e1");
        EXPECT_GE(stats.at("resume").at("delayMs").to_number<int>(), 250);  // the server said retry: 300
        co_await s.session->close();
        co_await f.proc->close();
    });
}

TEST_F(HttpFault, OversizeEventIsAClearErrorAndTheSessionStaysUsable) {
    run([]() -> awaitable<void> {
        auto f = co_await start_fault_server({});
        CO_ASSERT_TRUE(f.http > 0);
        auto o = options("fault");
        o.max_message_size = 64 * 1024;
        auto s = co_await connect_http("http://127.0.0.1:" + std::to_string(f.http) + "/oversize", o);
        CO_ASSERT_TRUE(s.session) << s.error;
        auto big = co_await echo(*s.session, "big");
        EXPECT_NE(big.find("error"), std::string::npos) << big;
        EXPECT_NE(big.find("limit"), std::string::npos) << big;
        EXPECT_EQ(co_await echo(*s.session, "small"), "Echo: small");
        auto big_json = co_await echo(*s.session, "bigjson");  // the same as a JSON body
        EXPECT_NE(big_json.find("limit"), std::string::npos) << big_json;
        EXPECT_EQ(co_await echo(*s.session, "small again"), "Echo: small again");
        co_await s.session->close();
        co_await f.proc->close();
    });
}

TEST_F(HttpFault, AHundredMebibyteEventFailsItsRequestWithTheSizeAndTheSessionStaysUsable) {
    // One SSE event of 100 MiB against the default 64 MiB limit: dropped as it streams, the request fails with the
    // limit named once the event ends (it used to be parsed quadratically and end in a timeout).
    run(
        []() -> awaitable<void> {
            auto f = co_await start_fault_server({});
            CO_ASSERT_TRUE(f.http > 0);
            auto o = options("fault");
            o.read_timeout = std::chrono::seconds(60);
            auto s = co_await connect_http("http://127.0.0.1:" + std::to_string(f.http) + "/oversize", o);
            CO_ASSERT_TRUE(s.session) << s.error;
            auto huge = co_await echo(*s.session, "huge");
            EXPECT_NE(huge.find("limit"), std::string::npos) << huge;
            EXPECT_NE(huge.find("MiB"), std::string::npos) << huge;
            EXPECT_EQ(huge.find("timed out"), std::string::npos) << huge;
            EXPECT_EQ(co_await echo(*s.session, "small"), "Echo: small");
            co_await s.session->close();
            co_await f.proc->close();
        },
        std::chrono::seconds(90));
}

TEST_F(HttpFault, ConnectionClosedMidResponseNamesTheServer) {
    run([]() -> awaitable<void> {
        auto f = co_await start_fault_server({});
        CO_ASSERT_TRUE(f.http > 0);
        auto s = co_await connect_http("http://127.0.0.1:" + std::to_string(f.http) + "/cut", options("cutter"));
        CO_ASSERT_TRUE(s.session) << s.error;
        auto r = co_await echo(*s.session, "x");
        EXPECT_NE(r.find("server \"cutter\""), std::string::npos) << r;
        EXPECT_NE(r.find("closed the connection"), std::string::npos) << r;
        auto tools = co_await s.session->list_tools();  // still usable
        EXPECT_TRUE(tools);
        co_await s.session->close();
        co_await f.proc->close();
    });
}

TEST_F(HttpFault, AbandonedRequestClosesItsConnectionAndIsCancelled) {
    run([]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto f = co_await start_fault_server({});
        CO_ASSERT_TRUE(f.http > 0);
        auto s = co_await connect_http("http://127.0.0.1:" + std::to_string(f.http) + "/slow", options("slow"));
        CO_ASSERT_TRUE(s.session) << s.error;
        mcp::CallOptions co;
        co.timeout = std::chrono::milliseconds(300);
        json::object args;
        args["message"] = "late";
        auto r = co_await s.session->call_tool("echo", std::move(args), co);
        EXPECT_FALSE(r);
        json::value stats;
        for (int i = 0; i < 60; ++i) {
            stats = get_stats(f.http);
            if (stats.at("slowClosed").to_number<int>() > 0 && stats.at("cancelledNotes").to_number<int>() > 0) break;
            asio::steady_timer t(ex, std::chrono::milliseconds(50));
            co_await t.async_wait(as_tuple_awaitable);
        }
        EXPECT_EQ(stats.at("slowClosed").to_number<int>(), 1);      // the connection was closed, long before 10 s
        EXPECT_EQ(stats.at("cancelledNotes").to_number<int>(), 1);  // and, legacy era, notifications/cancelled sent
        co_await s.session->close();
        co_await f.proc->close();
    });
}

TEST_F(HttpFault, UnreachableServerIsAClearError) {
    const int port = free_port();  // nothing listens there
    run([port]() -> awaitable<void> {
        auto s = co_await connect_http("http://127.0.0.1:" + std::to_string(port) + "/mcp", options("gone"));
        EXPECT_FALSE(s.session);
        EXPECT_NE(s.error.find("server \"gone\": cannot connect to 127.0.0.1:"), std::string::npos) << s.error;
        EXPECT_NE(s.error.find("refused"), std::string::npos) << s.error;
    });
}

TEST_F(HttpFault, RedirectsAreFollowedUpToTheLimitAndNeverToPlainHttp) {
    run([]() -> awaitable<void> {
        auto f = co_await start_fault_server({});
        CO_ASSERT_TRUE(f.http > 0);
        auto ok = co_await connect_http("http://127.0.0.1:" + std::to_string(f.http) + "/redirect/5", options("r"));
        CO_ASSERT_TRUE(ok.session) << ok.error;
        EXPECT_EQ(co_await echo(*ok.session, "r"), "Echo: r");
        co_await ok.session->close();
        auto bad = co_await connect_http("http://127.0.0.1:" + std::to_string(f.http) + "/redirect/6", options("r"));
        EXPECT_FALSE(bad.session);
        EXPECT_NE(bad.error.find("too many redirects"), std::string::npos) << bad.error;
        co_await f.proc->close();
    });
}

TEST_F(HttpFault, RedirectsNeverLeadToMetadataOrLinkLocalAddressesNorFromLoopbackToPrivateOnes) {
    run([]() -> awaitable<void> {
        auto f = co_await start_fault_server({});
        CO_ASSERT_TRUE(f.http > 0);
        const std::string base = "http://127.0.0.1:" + std::to_string(f.http) + "/redirect-to?url=";
        for (std::string target : {"http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/mcp",
                                   "http://[fe80::1]/mcp", "http://100.64.0.1/mcp"}) {
            const auto t0 = std::chrono::steady_clock::now();
            std::string query;  // brackets percent-encoded in a query
            for (char c : target)
                query += c == '[' ? std::string("%5B") : c == ']' ? std::string("%5D") : std::string(1, c);
            auto bad = co_await connect_http(base + query, options("r"));
            EXPECT_FALSE(bad.session) << target;
            // Refused before any connection (no connect timeout), naming the refused address.
            EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3)) << target;
            EXPECT_NE(bad.error.find("a redirect may not lead from a loopback origin"), std::string::npos) << bad.error;
            const auto host = target.substr(7, target.find('/', 8) - 7);
            const auto bare = host.front() == '[' ? host.substr(1, host.size() - 2) : host;
            EXPECT_NE(bad.error.find(bare), std::string::npos) << bad.error;
        }
        // Loopback to loopback is still followed.
        auto ok = co_await connect_http(base + "http://127.0.0.1:" + std::to_string(f.http) + "/mcp", options("r"));
        CO_ASSERT_TRUE(ok.session) << ok.error;
        co_await ok.session->close();
        co_await f.proc->close();
    });
}

namespace {
// A private CA and a server certificate for 127.0.0.1, made with the openssl CLI.
fs::path make_certs() {
    auto dir = fs::temp_directory_path() / ("sb-tls-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::string out;
    const std::string d = dir.string();
    test::run_command(
        "cd " + d +
            " && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem "
            "-days 2 -subj '/CN=Switchboard Test CA' 2>&1"
            " && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out "
            "server.csr -subj '/CN=127.0.0.1' 2>&1"
            " && printf 'subjectAltName=IP:127.0.0.1,DNS:localhost' > ext.cnf"
            " && openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 "
            "-extfile ext.cnf 2>&1",
        out);
    return dir;
}
}  // namespace

TEST_F(HttpFault, TlsWithAPrivateCaNeedsCaFile) {
    auto dir = make_certs();
    ASSERT_TRUE(fs::exists(dir / "server.pem"));
    run([dir]() -> awaitable<void> {
        std::vector<std::string> args{"--cert", (dir / "server.pem").string(), "--key", (dir / "server.key").string()};
        auto f = co_await start_fault_server(std::move(args));
        CO_ASSERT_TRUE(f.https > 0);
        const std::string url = "https://127.0.0.1:" + std::to_string(f.https) + "/mcp";
        auto refused = co_await connect_http(url, options("tls"));
        EXPECT_FALSE(refused.session);
        EXPECT_NE(refused.error.find("certificate"), std::string::npos) << refused.error;
        EXPECT_NE(refused.error.find("server \"tls\""), std::string::npos) << refused.error;
        auto o = options("tls");
        o.ca_file = (dir / "ca.pem").string();
        auto s = co_await connect_http(url, o);
        CO_ASSERT_TRUE(s.session) << s.error;
        EXPECT_EQ(co_await echo(*s.session, "secure"), "Echo: secure");
        co_await s.session->close();
        // A redirect from https to plain http is refused.
        auto down = co_await connect_http("https://127.0.0.1:" + std::to_string(f.https) + "/tohttp", o);
        EXPECT_FALSE(down.session);
        EXPECT_NE(down.error.find("https to http"), std::string::npos) << down.error;
        co_await f.proc->close();
    });
    fs::remove_all(dir);
}

TEST_F(HttpFault, HeadersOnEveryRequestAndNeverInLogs) {
    std::ostringstream logs;
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(logs);
    auto previous = spdlog::default_logger();
    auto logger = std::make_shared<spdlog::logger>("capture", sink);
    logger->set_level(spdlog::level::debug);
    spdlog::set_default_logger(logger);
    int port = 0;
    std::string auth_error;
    run([&port, &auth_error]() -> awaitable<void> {
        auto f = co_await start_fault_server({});
        CO_ASSERT_TRUE(f.http > 0);
        port = f.http;
        auto o = options("hdr");
        o.headers["Authorization"] = "Bearer sekrit-token-123";
        o.headers["X-Tenant"] = "acme";
        auto s = co_await connect_http("http://127.0.0.1:" + std::to_string(f.http) + "/mcp", o);
        CO_ASSERT_TRUE(s.session) << s.error;
        EXPECT_EQ(co_await echo(*s.session, "h"), "Echo: h");
        co_await s.session->close();
        auto stats = get_stats(f.http);
        int checked = 0;
        for (const auto& r : stats.at("requests").as_array()) {
            const auto& h = r.at("headers").as_object();
            EXPECT_EQ(h.at("authorization").as_string(), "Bearer sekrit-token-123");
            EXPECT_EQ(h.at("x-tenant").as_string(), "acme");
            ++checked;
        }
        EXPECT_GE(checked, 4);  // initialize, initialized, tools/call, DELETE (and the probe)
        // A server that echoes the credential back in an error body: the error shows it redacted.
        auto refused = co_await connect_http("http://127.0.0.1:" + std::to_string(f.http) + "/auth401", o);
        EXPECT_FALSE(refused.session);
        auth_error = refused.error;
        co_await f.proc->close();
    });
    spdlog::set_default_logger(previous);
    const auto text = logs.str();
    EXPECT_EQ(auth_error.find("sekrit-token-123"), std::string::npos) << auth_error;
    EXPECT_NE(auth_error.find("HTTP 401"), std::string::npos) << auth_error;
    EXPECT_NE(auth_error.find("[redacted]"), std::string::npos) << auth_error;
    EXPECT_EQ(text.find("sekrit-token-123"), std::string::npos) << text;
    EXPECT_NE(text.find("Authorization: Bearer [redacted]"), std::string::npos) << text;
    EXPECT_NE(text.find("X-Tenant: acme"), std::string::npos);
}

TEST_F(HttpFault, ModernServerGetsHeadersNoSessionAndAListenStreamClosedOnCancel) {
    run([]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto f = co_await start_fault_server({});
        CO_ASSERT_TRUE(f.http > 0);
        auto s = co_await connect_http("http://127.0.0.1:" + std::to_string(f.http) + "/modern", options("modern"));
        CO_ASSERT_TRUE(s.session) << s.error;
        EXPECT_EQ(s.session->era(), mcp::Era::modern);
        auto tools = co_await s.session->list_tools();
        CO_ASSERT_TRUE(tools) << tools.error().describe();
        EXPECT_EQ(co_await echo(*s.session, "now"), "Echo: now");
        // A name that is not plain ASCII goes into Mcp-Name in the spec's Base64 sentinel form.
        json::object args;
        args["message"] = "x";
        auto accented = co_await s.session->call_tool(
            "\xC3\xA9"
            "cho",
            std::move(args));
        EXPECT_TRUE(accented) << accented.error().describe();
        auto sub = co_await s.session->subscribe("file:///x");
        EXPECT_TRUE(sub) << sub.error().describe();
        // A second subscription replaces the listen stream: cancelling the first must close its HTTP stream.
        auto sub2 = co_await s.session->subscribe("file:///y");
        EXPECT_TRUE(sub2) << sub2.error().describe();
        json::value stats;
        for (int i = 0; i < 40; ++i) {  // the server notices the closed stream shortly after
            stats = get_stats(f.http);
            if (stats.at("listenClosed").to_number<int>() >= 1) break;
            asio::steady_timer t(ex, std::chrono::milliseconds(50));
            co_await t.async_wait(as_tuple_awaitable);
        }
        EXPECT_TRUE(stats.at("headerErrors").as_array().empty()) << json::serialize(stats.at("headerErrors"));
        EXPECT_EQ(stats.at("base64Names").to_number<int>(), 1);
        EXPECT_EQ(stats.at("listenOpened").to_number<int>(), 2);
        EXPECT_EQ(stats.at("listenClosed").to_number<int>(), 1);  // the session is still open
        EXPECT_TRUE(s.session->is_open());
        co_await s.session->close();
        co_await f.proc->close();
    });
}
