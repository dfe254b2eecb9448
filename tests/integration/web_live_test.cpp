// What the web API shows is current and whole (docs/api.md), against the real binary and the demo server: a read asks
// the server (and says when it did not), "Try it" streams a call's progress and logs and cancels it when the page
// closes the stream, a watched resource updates live, the servers' log messages and their level, a dormant lazy
// server's items listed from the catalog and usable, a conversation exported.
#include "web_harness.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <thread>

namespace switchboard::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using boost::asio::awaitable;
using namespace std::chrono_literals;

using WebLive = WebHarness;

std::string first_text(const json::value& read) { return std::string(read.at("contents").at(0).at("text").as_string()); }

TEST_F(WebLive, AReadAsksTheServerAndSaysWhenItCameFromTheCache) {
    start();
    wait_for_phase("demo", "connected");
    const auto read = [&](const std::string& uri, bool cached) {
        return parse(post("/api/resources/read", {{"server", "demo"}, {"uri", uri}, {"cached", cached}}));
    };
    // The counter changes with bump: read after it, it is the new value (no content is kept without a ttlMs).
    auto before = read("demo://counter", false);
    EXPECT_EQ(first_text(before), "0");
    EXPECT_FALSE(before.at("fromCache").as_bool());
    EXPECT_TRUE(before.at("readAtMs").is_int64());
    ASSERT_EQ(post("/api/tools/call", {{"server", "demo"}, {"name", "bump"}}).status, 200);
    EXPECT_EQ(first_text(read("demo://counter", false)), "1");
    EXPECT_EQ(first_text(read("demo://counter", true)), "1");  // ttlMs 0: nothing to answer from
    EXPECT_FALSE(read("demo://counter", true).at("fromCache").as_bool());

    // The readme is fresh for a minute (its ttlMs): what the page loads by itself may come from the cache, saying so
    // and how old it is; a person's read asks the server all the same.
    EXPECT_FALSE(read("demo://text/readme", false).at("fromCache").as_bool());
    std::this_thread::sleep_for(300ms);
    auto cached = read("demo://text/readme", true);
    EXPECT_TRUE(cached.at("fromCache").as_bool());
    EXPECT_GE(cached.at("ageMs").as_int64(), 300);
    EXPECT_NE(first_text(cached).find("demo"), std::string::npos);
    EXPECT_FALSE(read("demo://text/readme", false).at("fromCache").as_bool());
    auto renewed = read("demo://text/readme", true);  // the person's read stored the server's answer anew
    EXPECT_TRUE(renewed.at("fromCache").as_bool());
    EXPECT_LT(renewed.at("ageMs").as_int64(), 300);
}

TEST_F(WebLive, TryItStreamsProgressLogsAndTheResultAndClosingItCancelsTheCall) {
    start();
    wait_for_phase("demo", "connected");
    const auto port = gateway_->port;
    const Headers headers{{"Host", host()}, {"Content-Type", "application/json"}, {"Origin", "http://" + host()}};
    std::string body;
    run([&, port, headers]() -> awaitable<void> {
        auto stream = co_await http_open(port, "POST", "/api/tools/call", headers,
                                         R"({"server":"demo","name":"slow","arguments":{"seconds":0.6,"steps":3},)"
                                         R"("stream":true})");
        EXPECT_EQ(stream->status, 200) << stream->error;
        EXPECT_EQ(stream->parser.get()["Content-Type"], "text/event-stream");
        co_await read_event(stream, "result", 10s);
        body = stream->parser.get().body();
    });
    const auto progress = sse_events(body, "progress");
    ASSERT_EQ(progress.size(), 3u) << body;
    EXPECT_EQ(progress.back().at("message").as_string(), "step 3 of 3");
    EXPECT_EQ(progress.back().at("total").as_double(), 3);
    const auto logs = sse_events(body, "log");
    ASSERT_EQ(logs.size(), 3u) << body;  // serve asks every server for debug and up
    EXPECT_EQ(logs.front().at("data").as_string(), "slow: step 1 of 3 done");
    EXPECT_EQ(logs.front().at("logger").as_string(), "slow");
    const auto result = sse_events(body, "result");
    ASSERT_EQ(result.size(), 1u) << body;
    EXPECT_EQ(result[0].at("content").at(0).at("text").as_string(), "done after 3 steps");
    EXPECT_GT(result[0].at("durationMs").as_double(), 500);

    // A page that closes the stream (Cancel, the dialog closed) cancels the call on the server, which says so.
    run([&, port, headers]() -> awaitable<void> {
        auto stream = co_await http_open(port, "POST", "/api/tools/call", headers,
                                         R"({"server":"demo","name":"slow","arguments":{"seconds":30,"steps":30},)"
                                         R"("stream":true})");
        co_await read_event(stream, "progress", 10s);
        boost::system::error_code ignored;
        stream->stream.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
        stream->stream.close();
    });
    json::value status;
    for (int i = 0; i < 100; ++i) {
        status = wait_for_phase("demo", "connected");
        if (status.at("stderrTail").as_string().find("slow: cancelled") != std::string::npos) break;
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_NE(status.at("stderrTail").as_string().find("slow: cancelled"), std::string::npos) << status;
    EXPECT_EQ(status.at("activeCalls").as_int64(), 0);
}

TEST_F(WebLive, AWatchedResourceIsSentAgainAfterEveryUpdateUntilThePageLetsGo) {
    start();
    wait_for_phase("demo", "connected");
    const auto port = gateway_->port;
    const Headers get_headers{{"Host", host()}};
    std::string body;
    run([&, port, get_headers]() -> awaitable<void> {
        auto watch = co_await http_open(port, "GET", "/api/resources/watch?server=demo&uri=demo%3A%2F%2Fcounter",
                                        get_headers, "");
        EXPECT_EQ(watch->status, 200) << watch->error;
        co_await read_event(watch, "contents", 10s);
        const Headers post_headers{{"Host", get_headers[0].second}, {"Content-Type", "application/json"}};
        auto bumped =
            co_await http_exchange(port, "POST", "/api/tools/call", post_headers, R"({"server":"demo","name":"bump"})");
        EXPECT_EQ(bumped.status, 200);
        std::function<bool(const std::string&)> twice = [](const std::string& b) {
            return sse_events(b, "contents").size() >= 2;
        };
        co_await read_stream_until(watch, std::move(twice), 10s);
        body = watch->parser.get().body();
    });
    const auto contents = sse_events(body, "contents");
    ASSERT_EQ(contents.size(), 2u) << body;
    EXPECT_EQ(first_text(contents[0]), "0");
    EXPECT_EQ(first_text(contents[1]), "1");

    // A server without subscriptions is refused before any stream.
    auto missing = get("/api/resources/watch?server=demo");
    EXPECT_EQ(missing.status, 400) << missing.body;
}

TEST_F(WebLive, AHealthyServersStderrLineIsPushedAsItsStatus) {
    start();
    wait_for_phase("demo", "connected");
    const auto port = gateway_->port;
    const Headers get_headers{{"Host", host()}};
    const Headers post_headers{{"Host", host()}, {"Content-Type", "application/json"}};
    bool pushed = false;
    std::string body;
    run([&, port, get_headers, post_headers]() -> awaitable<void> {
        auto events = co_await http_open(port, "GET", "/api/events", get_headers, "");
        co_await read_event(events, "servers", 5s);
        auto r = co_await http_exchange(port, "POST", "/api/tools/call", post_headers,
                                        R"({"server":"demo","name":"write_stderr","arguments":{"text":"hello there"}})");
        EXPECT_EQ(r.status, 200) << r.body;
        std::function<bool(const std::string&)> tail = [](const std::string& b) {
            for (const auto& s : sse_events(b, "server"))
                if (s.at("stderrTail").as_string().find("hello there") != std::string::npos) return true;
            return false;
        };
        pushed = co_await read_stream_until(events, std::move(tail), 5s);
        body = events->parser.get().body();
    });
    EXPECT_TRUE(pushed) << body;
}

TEST_F(WebLive, TheServersLogMessagesAreKeptAndTheirLevelIsTheServersToSet) {
    start();
    wait_for_phase("demo", "connected");
    const auto slow = [&] {
        auto r = post("/api/tools/call",
                      {{"server", "demo"}, {"name", "slow"}, {"arguments", {{"seconds", 0.2}, {"steps", 2}}}});
        ASSERT_EQ(r.status, 200) << r.error << r.body;
    };
    slow();
    json::value logs;
    for (int i = 0; i < 50; ++i) {  // the messages may arrive just after the result
        logs = parse(get("/api/servers/logs?name=demo"));
        if (logs.at("logs").as_array().size() >= 2) break;
        std::this_thread::sleep_for(50ms);
    }
    EXPECT_EQ(logs.at("level").as_string(), "debug");
    ASSERT_EQ(logs.at("logs").as_array().size(), 2u) << logs;
    EXPECT_EQ(logs.at("logs").at(0).at("level").as_string(), "info");
    EXPECT_EQ(logs.at("logs").at(0).at("data").as_string(), "slow: step 1 of 2 done");
    EXPECT_EQ(logs.at("logs").at(1).at("level").as_string(), "notice");
    EXPECT_TRUE(logs.at("logs").at(0).at("timeMs").is_int64());

    // From "warning" up: the server sends neither info nor notice any more.
    auto set = post("/api/servers/log-level", {{"name", "demo"}, {"level", "warning"}});
    ASSERT_EQ(set.status, 200) << set.body;
    EXPECT_EQ(parse(set).at("logLevel").as_string(), "warning");
    slow();
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(parse(get("/api/servers/logs?name=demo")).at("logs").as_array().size(), 2u);
    EXPECT_EQ(post("/api/servers/log-level", {{"name", "demo"}, {"level", "loud"}}).status, 400);
}

TEST_F(WebLive, ADormantLazyServersItemsAreListedFromTheCatalogAndUsable) {
    write_config("", "\"notes\": {\"command\": \"" + demo_server() + "\", \"lazy\": true, \"keepWarmSeconds\": 0},\n    ");
    const auto cache = (dir_ / "cache").string();
    gateway_ = start_listening("/usr/bin/env", {"XDG_CACHE_HOME=" + cache, SWITCHBOARD_CLI, "--config", config_, "--db",
                                                (dir_ / "conversations.db").string(), "serve", "--port", "0",
                                                "--quiet"});
    ASSERT_TRUE(gateway_);
    wait_for_phase("demo", "connected");
    const auto dormant_items = [&](const std::string& path, const std::string& key) {
        std::size_t n = 0;
        const auto listed = parse(get(path));
        for (const auto& item : listed.at(key).as_array())
            if (item.at("server").as_string() == "notes") {
                EXPECT_TRUE(item.as_object().contains("dormant")) << item;
                ++n;
            }
        return n;
    };
    // Never ran: nothing recorded, nothing listed.
    EXPECT_EQ(dormant_items("/api/tools", "tools"), 0u);
    auto catalog = parse(get("/api/catalog"));
    ASSERT_EQ(catalog.at("servers").as_array().size(), 1u);
    EXPECT_FALSE(catalog.at("servers").at(0).at("cached").as_bool());

    // Recorded once (started, listed, released), its items are listed marked dormant while it does not run.
    auto refreshed = post("/api/catalog/refresh", {{"name", "notes"}});
    ASSERT_EQ(refreshed.status, 200) << refreshed.body;
    EXPECT_EQ(parse(refreshed).at("tools").as_int64(), 9);
    wait_for_phase("notes", "dormant");
    EXPECT_EQ(dormant_items("/api/tools", "tools"), 9u);
    EXPECT_EQ(dormant_items("/api/resources", "resources"), 13u);
    EXPECT_EQ(dormant_items("/api/resources", "templates"), 1u);
    EXPECT_EQ(dormant_items("/api/prompts", "prompts"), 3u);

    // Using one starts the server for that use only.
    auto call = post("/api/tools/call", {{"server", "notes"}, {"name", "add"}, {"arguments", {{"a", 2}, {"b", 3}}}});
    ASSERT_EQ(call.status, 200) << call.body;
    EXPECT_EQ(parse(call).at("content").at(0).at("text").as_string(), "5");
    auto read = parse(post("/api/resources/read", {{"server", "notes"}, {"uri", "demo://greeting/Ann"}}));
    EXPECT_EQ(first_text(read), "Hello, Ann!");
    wait_for_phase("notes", "dormant");
    EXPECT_EQ(post("/api/catalog/refresh", {{"name", "demo"}}).status, 400);  // not lazy
}

TEST_F(WebLive, AConversationIsExportedAsMarkdownOrJson) {
    start();
    auto created = parse(post("/api/conversations/create", {{"title", "Kept `as` it was"}}));
    const auto id = created.at("conversation").at("id").as_int64();
    auto md = get("/api/conversations/export?id=" + std::to_string(id) + "&format=markdown");
    ASSERT_EQ(md.status, 200) << md.body;
    EXPECT_EQ(md.headers["content-type"], "text/markdown; charset=utf-8");
    EXPECT_EQ(md.headers["content-disposition"],
              "attachment; filename=\"conversation-" + std::to_string(id) + ".md\"");
    EXPECT_EQ(md.body.rfind("# Kept `as` it was\n", 0), 0u) << md.body;
    auto js = get("/api/conversations/export?id=" + std::to_string(id) + "&format=json");
    ASSERT_EQ(js.status, 200) << js.body;
    auto doc = parse(js);
    EXPECT_EQ(doc.at("id").as_int64(), id);
    EXPECT_TRUE(doc.at("messages").as_array().empty());
    EXPECT_TRUE(doc.at("settings").is_object());
    EXPECT_EQ(get("/api/conversations/export?id=" + std::to_string(id) + "&format=pdf").status, 400);
    EXPECT_EQ(get("/api/conversations/export?id=99999&format=json").status, 404);
}

}  // namespace
}  // namespace switchboard::test
