// The web API and the embedded page of `switchboard serve` (docs/api.md), the real binary over raw HTTP with the demo
// server behind it: the page and its headers, servers/tools/resources/prompts/completion, the rules for state-changing
// requests and the token, config edits (validated, atomic, comments kept, applied live), and the live event stream.
#include "web_harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <thread>

namespace switchboard::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using boost::asio::awaitable;

using WebApi = WebHarness;

TEST_F(WebApi, ThePageIsEmbeddedCompressedWithHeadersThatKeepItToItself) {
    start();
    auto gz = request("GET", "/", {{"Accept-Encoding", "gzip, deflate, br"}});
    ASSERT_EQ(gz.status, 200) << gz.body;
    EXPECT_EQ(gz.headers["content-encoding"], "gzip");
    ASSERT_GE(gz.body.size(), 2u);
    EXPECT_EQ(static_cast<unsigned char>(gz.body[0]), 0x1f);  // the gzip magic
    EXPECT_NE(gz.headers["content-security-policy"].find("default-src 'none'"), std::string::npos);
    EXPECT_NE(gz.headers["content-security-policy"].find("connect-src 'self'"), std::string::npos);
    EXPECT_EQ(gz.headers["x-content-type-options"], "nosniff");

    // A client that does not take gzip gets the page itself.
    auto plain = get("/");
    ASSERT_EQ(plain.status, 200);
    EXPECT_EQ(plain.headers.count("content-encoding"), 0u);
    EXPECT_EQ(plain.headers["content-type"], "text/html; charset=utf-8");
    EXPECT_NE(plain.body.find("<html"), std::string::npos);
    EXPECT_NE(plain.body.find("Switchboard"), std::string::npos);
    EXPECT_GT(plain.body.size(), gz.body.size());

    auto again = request("GET", "/", {{"If-None-Match", gz.headers["etag"]}});
    EXPECT_EQ(again.status, 304);
    EXPECT_TRUE(again.body.empty());

    // A DNS-rebinding page (another Host name) is refused like on /mcp.
    HttpResult rebound;
    const auto port = gateway_->port;
    const Headers evil{{"Host", "evil.example"}};  // (no braced temporaries inside co_await: GCC 12)
    run([&rebound, port, evil]() -> awaitable<void> {
        rebound = co_await http_exchange(port, "GET", "/api/servers", evil, "");
    });
    EXPECT_EQ(rebound.status, 403);
}

TEST_F(WebApi, ServersToolsResourcesPromptsAndCompletion) {
    start();
    auto demo = wait_for_phase("demo", "connected");
    ASSERT_TRUE(demo.is_object());
    EXPECT_EQ(demo.at("transport").as_string(), "stdio");
    EXPECT_EQ(demo.at("config").at("command").as_string(), demo_server());
    EXPECT_GT(demo.at("tools").as_int64(), 0);

    auto info = parse(get("/api/info"));
    EXPECT_EQ(info.at("configPath").as_string(), fs::absolute(config_).string());
    EXPECT_FALSE(info.at("tokenRequired").as_bool());

    auto tools = parse(get("/api/tools"));
    bool found = false;
    for (const auto& t : tools.at("tools").as_array())
        if (t.at("name").as_string() == "add") {
            found = true;
            EXPECT_EQ(t.at("server").as_string(), "demo");
            EXPECT_TRUE(t.at("enabled").as_bool());
            EXPECT_TRUE(t.at("inputSchema").as_object().contains("properties"));
        }
    EXPECT_TRUE(found);

    auto call = post("/api/tools/call", {{"server", "demo"}, {"name", "add"}, {"arguments", {{"a", 2}, {"b", 3}}}});
    ASSERT_EQ(call.status, 200) << call.body;
    auto result = parse(call);
    EXPECT_EQ(result.at("content").at(0).at("text").as_string(), "5");
    EXPECT_TRUE(result.at("durationMs").is_double());

    auto unknown = post("/api/tools/call", {{"server", "nope"}, {"name", "add"}});
    EXPECT_EQ(unknown.status, 404);
    EXPECT_EQ(unknown.body, R"({"error":{"status":404,"message":"no server named \"nope\""}})");
    auto failed = post("/api/tools/call", {{"server", "demo"}, {"name", "no-such-tool"}});
    EXPECT_EQ(failed.status, 502) << failed.body;
    EXPECT_NE(failed.body.find("server \\\"demo\\\""), std::string::npos) << failed.body;

    auto resources = parse(get("/api/resources"));
    EXPECT_FALSE(resources.at("resources").as_array().empty());
    EXPECT_EQ(resources.at("templates").at(0).at("uriTemplate").as_string(), "demo://greeting/{name}");
    auto read = parse(post("/api/resources/read", {{"server", "demo"}, {"uri", "demo://text/readme"}}));
    EXPECT_NE(read.at("contents").at(0).at("text").as_string().find("demo"), std::string::npos);

    auto prompts = parse(get("/api/prompts"));
    EXPECT_EQ(prompts.at("prompts").at(0).at("server").as_string(), "demo");
    auto prompt =
        parse(post("/api/prompts/get",
                   {{"server", "demo"}, {"name", "greet"}, {"arguments", {{"name", "Ada"}, {"style", "pirate"}}}}));
    EXPECT_EQ(prompt.at("messages").at(0).at("content").at("text").as_string(),
              "Greet Ada the way a pirate would, arr!");

    auto completion = parse(post("/api/complete", {{"server", "demo"},
                                                   {"ref", {{"type", "ref/prompt"}, {"name", "greet"}}},
                                                   {"argument", {{"name", "style"}, {"value", "f"}}}}));
    ASSERT_EQ(completion.at("completion").at("values").as_array().size(), 1u);
    EXPECT_EQ(completion.at("completion").at("values").at(0).as_string(), "formal");
}

TEST_F(WebApi, ChangesNeedJsonFromThePagesOwnOriginAndEveryRouteTheToken) {
    start({"--token", "s3cret"});
    const Headers auth{{"Authorization", "Bearer s3cret"}};
    // The page asks for the token itself: it is served without one. The API is not.
    EXPECT_EQ(get("/").status, 200);
    EXPECT_EQ(get("/api/servers").status, 401);
    EXPECT_EQ(request("GET", "/api/servers", auth).status, 200);

    const std::string body = R"({"name":"demo"})";
    auto with = [&](Headers h) {
        h.insert(h.end(), auth.begin(), auth.end());
        return request("POST", "/api/servers/restart", h, body);
    };
    // A cross-site form can send text/plain without a preflight; it changes nothing here.
    auto form = with({{"Content-Type", "text/plain"}});
    EXPECT_EQ(form.status, 415) << form.body;
    auto other_site = with({{"Content-Type", "application/json"}, {"Origin", "http://evil.example"}});
    EXPECT_EQ(other_site.status, 403) << other_site.body;
    // Another loopback origin (another local app) may read /mcp, but not change servers.
    auto other_port = with({{"Content-Type", "application/json"}, {"Origin", "http://127.0.0.1:1"}});
    EXPECT_EQ(other_port.status, 403) << other_port.body;
    auto own = with({{"Content-Type", "application/json; charset=utf-8"}, {"Origin", "http://" + host()}});
    EXPECT_EQ(own.status, 202) << own.body;
    auto no_origin = with({{"Content-Type", "application/json"}});  // not a browser
    EXPECT_EQ(no_origin.status, 202) << no_origin.body;
    auto bad_json = request("POST", "/api/servers/restart",
                            {{"Content-Type", "application/json"}, {"Authorization", "Bearer s3cret"}}, "{nope");
    EXPECT_EQ(bad_json.status, 400);
    EXPECT_NE(bad_json.body.find("not JSON"), std::string::npos) << bad_json.body;
}

TEST_F(WebApi, ServerEditsAreCheckedWrittenInPlaceAndAppliedLive) {
    start();
    wait_for_phase("demo", "connected");
    const auto before = config_text();

    // Refused: nothing reaches the file.
    auto bad = post("/api/servers/save", {{"name", "web"}, {"config", {{"url", "ftp://example.com"}}}});
    EXPECT_EQ(bad.status, 400) << bad.body;
    EXPECT_NE(bad.body.find("server \\\"web\\\""), std::string::npos) << bad.body;
    auto taken = post("/api/servers/save", {{"name", "demo"}, {"previousName", "x"}, {"config", {{"command", "y"}}}});
    EXPECT_EQ(taken.status, 400) << taken.body;
    EXPECT_EQ(config_text(), before);

    // Added: in the file (comment kept), started at once.
    auto added =
        post("/api/servers/save",
             {{"name", "second"}, {"config", {{"command", demo_server()}, {"args", json::array{"--legacy-only"}}}}});
    ASSERT_EQ(added.status, 200) << added.body;
    auto text = config_text();
    EXPECT_NE(text.find("// kept through every edit"), std::string::npos) << text;
    EXPECT_NE(text.find("\"second\": {"), std::string::npos) << text;
    auto second = wait_for_phase("second", "connected");
    ASSERT_TRUE(second.is_object());
    EXPECT_EQ(second.at("config").at("args").at(0).as_string(), "--legacy-only");

    // A tool switched off: listed with enabled false, refused when called.
    auto off =
        post("/api/servers/save",
             {{"name", "demo"}, {"config", {{"command", demo_server()}, {"excludedTools", json::array{"add"}}}}});
    ASSERT_EQ(off.status, 200) << off.body;
    wait_for_phase("demo", "connected");
    const auto tools = parse(get("/api/tools"));  // (kept: a loop over a temporary's member would dangle)
    for (const auto& t : tools.at("tools").as_array())
        if (t.at("name").as_string() == "add" && t.at("server").as_string() == "demo") {
            EXPECT_FALSE(t.at("enabled").as_bool());
        }
    auto refused = post("/api/tools/call", {{"server", "demo"}, {"name", "add"}, {"arguments", {{"a", 1}, {"b", 1}}}});
    EXPECT_EQ(refused.status, 403) << refused.body;

    // Disabled, then removed.
    auto disabled = post("/api/servers/enable", {{"name", "second"}, {"enabled", false}});
    ASSERT_EQ(disabled.status, 200) << disabled.body;
    wait_for_phase("second", "disabled");
    EXPECT_NE(config_text().find("\"enabled\": false"), std::string::npos);
    auto removed = post("/api/servers/remove", {{"name", "second"}});
    ASSERT_EQ(removed.status, 200) << removed.body;
    EXPECT_EQ(config_text().find("second"), std::string::npos);
    const auto after = parse(removed);
    for (const auto& s : after.at("servers").as_array()) EXPECT_NE(s.at("name").as_string(), "second");
    // The watcher took note: the gateway did not reload the file it wrote itself.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_EQ(gateway_->log().find("reloading"), std::string::npos) << gateway_->log();
}

// The phases named in the `server` events of `body`, in order.
std::vector<std::string> server_phases(const std::string& body) {
    std::vector<std::string> phases;
    const std::string head = "event: server\ndata: ";
    for (auto pos = body.find(head); pos != std::string::npos; pos = body.find(head, pos + 1)) {
        const auto end = body.find("\n\n", pos);
        if (end == std::string::npos) break;
        json::error_code ec;
        auto v = json::parse(body.substr(pos + head.size(), end - pos - head.size()), ec);
        if (!ec) phases.emplace_back(v.at("phase").as_string());
    }
    return phases;
}

TEST_F(WebApi, TheEventStreamPushesEveryPhaseAServerGoesThrough) {
    start();
    wait_for_phase("demo", "connected");
    const auto port = gateway_->port;
    const auto h = host();
    bool first = false;
    std::string seen;
    const Headers get_headers{{"Host", h}};
    const Headers post_headers{{"Host", h}, {"Content-Type", "application/json"}};
    run([&, port, get_headers, post_headers]() -> awaitable<void> {
        auto stream = co_await http_open(port, "GET", "/api/events", get_headers, "");
        EXPECT_EQ(stream->status, 200) << stream->error;
        EXPECT_EQ(stream->parser.get()["Content-Type"], "text/event-stream");
        first = co_await http_read_until(stream, "event: servers\ndata: {\"servers\":[{\"name\":\"demo\"",
                                         std::chrono::seconds(5));
        auto r = co_await http_exchange(port, "POST", "/api/servers/restart", post_headers, R"({"name":"demo"})");
        EXPECT_EQ(r.status, 202);
        // Read until a `server` event says connected again (a named std::function: see read_event).
        std::function<bool(const std::string&)> connected_again = [](const std::string& body) {
            const auto phases = server_phases(body);
            return !phases.empty() && phases.back() == "connected";
        };
        co_await read_stream_until(stream, std::move(connected_again), std::chrono::seconds(10));
        seen = stream->parser.get().body();
    });
    EXPECT_TRUE(first) << seen;
    const auto phases = server_phases(seen);
    ASSERT_GE(phases.size(), 2u) << seen;
    EXPECT_EQ(phases.back(), "connected") << seen;
    // Closed and started again on the way there, each pushed as it happened.
    EXPECT_NE(phases.front(), "connected") << seen;
}

}  // namespace
}  // namespace switchboard::test
