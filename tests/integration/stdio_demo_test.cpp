// The client against the C++ demo server over real stdio, in both eras.
#include "harness.hpp"

#include <switchboard/core/base64.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <thread>

namespace switchboard::test {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

struct EraCase {
    const char* flag;  // demo server flag selecting what it speaks
    mcp::Era era;
    const char* version;
};

class DemoServer : public ::testing::TestWithParam<EraCase> {};

INSTANTIATE_TEST_SUITE_P(Eras, DemoServer,
                         ::testing::Values(EraCase{"--modern-only", mcp::Era::modern, "2026-07-28"},
                                           EraCase{"--legacy-only", mcp::Era::legacy, "2025-11-25"}),
                         [](const auto& info) { return info.param.era == mcp::Era::modern ? "modern" : "legacy"; });

TEST_P(DemoServer, NegotiatesListsEverythingAndCalls) {
    run([&]() -> awaitable<void> {
        std::vector<std::string> c_args{GetParam().flag, "--page-size", "3"};  // GCC 12: no init-list in co_await
        auto c = co_await connect(demo_server(), c_args);
        CO_ASSERT_TRUE(c.session);
        auto& s = *c.session;
        EXPECT_EQ(s.era(), GetParam().era);
        EXPECT_EQ(s.protocol_version(), GetParam().version);
        EXPECT_EQ(s.server_info().name, "switchboard-demo");

        // Page size 3: every list takes several pages and must come back whole.
        auto tools = co_await s.list_tools();
        CO_ASSERT_TRUE(tools);
        EXPECT_EQ(tools->size(), 9u);
        auto resources = co_await s.list_resources();
        CO_ASSERT_TRUE(resources);
        EXPECT_EQ(resources->size(), 13u);
        EXPECT_EQ(resources->back().uri, "demo://items/10");
        auto templates = co_await s.list_resource_templates();
        CO_ASSERT_TRUE(templates);
        EXPECT_EQ(templates->size(), 1u);
        auto prompts = co_await s.list_prompts();
        CO_ASSERT_TRUE(prompts);
        EXPECT_EQ(prompts->size(), 3u);

        json::object args;
        args["message"] = "hello over stdio";
        auto echo = co_await s.call_tool("echo", args);
        CO_ASSERT_TRUE(echo);
        EXPECT_FALSE(echo->is_error);
        EXPECT_EQ(echo->content.at(0).text(), "hello over stdio");

        json::object sum_args;
        sum_args["a"] = 20;
        sum_args["b"] = 22;
        auto sum = co_await s.call_tool("add", sum_args);
        CO_ASSERT_TRUE(sum);
        EXPECT_EQ(sum->content.at(0).text(), "42");

        auto fail = co_await s.call_tool("fail", {});
        CO_ASSERT_TRUE(fail);
        EXPECT_TRUE(fail->is_error);

        json::object city;
        city["city"] = "Oslo";
        auto structured = co_await s.call_tool("structured", city);
        CO_ASSERT_TRUE(structured);
        CO_ASSERT_TRUE(structured->structured_content.has_value());
        EXPECT_EQ(structured->structured_content->at("city").as_string(), "Oslo");

        auto unknown = co_await s.call_tool("no-such-tool", {});
        CO_ASSERT_TRUE(!unknown);
        EXPECT_EQ(unknown.error().code, jsonrpc::code::invalid_params);

        auto text = co_await s.read_resource("demo://text/readme");
        CO_ASSERT_TRUE(text);
        CO_ASSERT_TRUE(text->contents.at(0).text.has_value());
        auto png = co_await s.read_resource("demo://binary/logo.png");
        CO_ASSERT_TRUE(png);
        CO_ASSERT_TRUE(png->contents.at(0).blob.has_value());
        EXPECT_EQ(mcp::base64_decoded_size(*png->contents.at(0).blob), 70u);
        auto greeting = co_await s.read_resource("demo://greeting/Ann");
        CO_ASSERT_TRUE(greeting);
        EXPECT_EQ(*greeting->contents.at(0).text, "Hello, Ann!");

        std::map<std::string, std::string> prompt_args{{"name", "Ann"}, {"style", "formal"}};
        auto prompt = co_await s.get_prompt("greet", prompt_args);
        CO_ASSERT_TRUE(prompt);
        EXPECT_EQ(prompt->messages.size(), 1u);
        auto missing = co_await s.get_prompt("greet", {});
        CO_ASSERT_TRUE(!missing);
        EXPECT_EQ(missing.error().code, jsonrpc::code::invalid_params);

        json::object ref;
        ref["type"] = "ref/prompt";
        ref["name"] = "greet";
        auto completion = co_await s.complete(ref, "style", "p");
        CO_ASSERT_TRUE(completion);
        EXPECT_EQ(completion->values, std::vector<std::string>{"pirate"});

        EXPECT_TRUE(co_await s.ping());
        EXPECT_TRUE(co_await s.set_logging_level("debug"));
        co_await s.close();
        EXPECT_TRUE(c.process->exited());
        EXPECT_EQ(c.process->exit_description(), "exited with status 0");  // closing stdin was enough
    });
}

TEST_P(DemoServer, ProgressArrivesAndResetsTheTimeout) {
    run([&]() -> awaitable<void> {
        std::vector<std::string> c_args{GetParam().flag};  // GCC 12: no init-list in co_await
        auto c = co_await connect(demo_server(), c_args);
        CO_ASSERT_TRUE(c.session);
        std::vector<double> seen;
        mcp::CallOptions opts;
        opts.timeout = std::chrono::milliseconds(400);  // shorter than the call; progress every 150 ms keeps it alive
        opts.on_progress = [&](const jsonrpc::Progress& p) { seen.push_back(p.progress); };
        json::object args;
        args["seconds"] = 0.9;
        args["steps"] = 6;
        auto r = co_await c.session->call_tool("slow", args, opts);
        CO_ASSERT_TRUE(r);
        EXPECT_EQ(seen, (std::vector<double>{1, 2, 3, 4, 5, 6}));

        opts.max_total_timeout = std::chrono::milliseconds(300);  // the cap wins over progress resets
        auto capped = co_await c.session->call_tool("slow", args, opts);
        CO_ASSERT_TRUE(!capped);
        EXPECT_EQ(capped.error().code, jsonrpc::code::timeout);
        co_await c.session->close();
    });
}

TEST_P(DemoServer, CancellationReachesTheServer) {
    run([&]() -> awaitable<void> {
        std::vector<std::string> stderr_lines;
        transport::StdioProcessOptions po;
        po.on_stderr_line = [&](std::string_view l) { stderr_lines.emplace_back(l); };
        std::vector<std::string> c_args{GetParam().flag};  // GCC 12: no init-list in co_await
        auto c = co_await connect(demo_server(), c_args, po);
        CO_ASSERT_TRUE(c.session);
        using namespace asio::experimental::awaitable_operators;
        asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::milliseconds(300));
        json::object args;
        args["seconds"] = 20;
        const auto start = std::chrono::steady_clock::now();
        auto r = co_await (c.session->call_tool("slow", args) || timer.async_wait(asio::use_awaitable));
        EXPECT_EQ(r.index(), 1u);  // the timer won; the call was cancelled
        EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
        // The server logs the cancellation it received; and the session still works afterwards.
        json::object echo_args;
        echo_args["message"] = "still alive";
        auto after = co_await c.session->call_tool("echo", echo_args);
        CO_ASSERT_TRUE(after);
        EXPECT_EQ(after->content.at(0).text(), "still alive");
        co_await c.session->close();
        bool saw = false;
        for (const auto& l : stderr_lines) saw = saw || l.find("slow: cancelled") != std::string::npos;
        EXPECT_TRUE(saw) << "the server did not report the cancellation";
    });
}

TEST_P(DemoServer, SubscribedResourceUpdatesArrive) {
    run([&]() -> awaitable<void> {
        std::vector<std::string> updated;
        mcp::ClientOptions o;
        o.on_notification = [&](const std::string& method, const json::value& params) {
            if (method == "notifications/resources/updated") updated.emplace_back(params.at("uri").as_string());
        };
        std::vector<std::string> c_args{GetParam().flag};  // GCC 12: no init-list in co_await
        auto c = co_await connect(demo_server(), c_args, o);
        CO_ASSERT_TRUE(c.session);
        auto sub = co_await c.session->subscribe("demo://counter");
        CO_ASSERT_TRUE(sub);
        auto bump = co_await c.session->call_tool("bump", {});
        CO_ASSERT_TRUE(bump);
        asio::steady_timer t(co_await asio::this_coro::executor);
        for (int i = 0; i < 100 && updated.empty(); ++i) {
            t.expires_after(std::chrono::milliseconds(10));
            co_await t.async_wait(asio::use_awaitable);
        }
        EXPECT_EQ(updated, std::vector<std::string>{"demo://counter"});
        auto counter = co_await c.session->read_resource("demo://counter");
        CO_ASSERT_TRUE(counter);
        EXPECT_EQ(*counter->contents.at(0).text, "1");
        auto unsub = co_await c.session->unsubscribe("demo://counter");
        EXPECT_TRUE(unsub);
        co_await c.session->close();
    });
}

TEST(DemoServerDualEra, DefaultServerIsModernAndKnownLegacySkipsTheProbe) {
    run([&]() -> awaitable<void> {
        auto modern = co_await connect(demo_server(), std::vector<std::string>{});
        CO_ASSERT_TRUE(modern.session);
        EXPECT_EQ(modern.session->era(), mcp::Era::modern);
        co_await modern.session->close();
        mcp::ClientOptions o;
        o.known_era = mcp::Era::legacy;
        auto legacy = co_await connect(demo_server(), std::vector<std::string>{}, o);
        CO_ASSERT_TRUE(legacy.session);
        EXPECT_EQ(legacy.session->era(), mcp::Era::legacy);
        EXPECT_EQ(legacy.session->protocol_version(), "2025-11-25");
        co_await legacy.session->close();
    });
}

// demo://blob/{bytes} encodes one period of its repeating bytes and copies it: every size around a period's end
// (753 bytes) and its padding must still decode to exactly (i * 7) mod 251.
std::string decode_base64(std::string_view text) { return core::base64_decode(text).value_or("not base64"); }

TEST(DemoServerBlob, EverySizeAroundTheRepeatDecodesExactly) {
    run([&]() -> awaitable<void> {
        std::vector<std::string> args{"--blob-template"};  // GCC 12: no init-list in co_await or a range-for
        const std::vector<std::size_t> sizes{0, 1, 2, 3, 4, 752, 753, 754, 755, 1505, 1506, 1507, 1508, 2259, 100003};
        auto c = co_await connect(demo_server(), args);
        CO_ASSERT_TRUE(c.session);
        for (std::size_t bytes : sizes) {
            auto r = co_await c.session->read_resource("demo://blob/" + std::to_string(bytes));
            CO_ASSERT_TRUE(r) << bytes << ": " << r.error().message;
            CO_ASSERT_TRUE(r->contents.at(0).blob.has_value());
            const auto& text = *r->contents.at(0).blob;
            EXPECT_EQ(text.size(), (bytes + 2) / 3 * 4) << bytes;
            std::string expected;
            for (std::size_t i = 0; i < bytes; ++i) expected.push_back(static_cast<char>((i * 7) % 251));
            EXPECT_TRUE(decode_base64(text) == expected) << bytes << " bytes decode to something else";
        }
        co_await c.session->close();
    });
}

// A blob whose line is over the framer's streaming threshold (1 MiB) is parsed as it arrives: read_resource gets its
// bytes decoded (never the base64 too), a plain request gets the result as it was sent, and to_json writes it back.
TEST(DemoServerBlob, ABigBlobArrivesDecodedAndAPlainRequestGetsTheTextAsSent) {
    run([&]() -> awaitable<void> {
        std::vector<std::string> args{"--blob-template"};
        auto c = co_await connect(demo_server(), args);
        CO_ASSERT_TRUE(c.session);
        const std::size_t bytes = 3'000'001;
        std::string expected;
        for (std::size_t i = 0; i < bytes; ++i) expected.push_back(static_cast<char>((i * 7) % 251));
        const std::string uri = "demo://blob/" + std::to_string(bytes);

        auto typed = co_await c.session->read_resource(uri);
        CO_ASSERT_TRUE(typed) << typed.error().message;
        const auto& item = typed->contents.at(0);
        EXPECT_FALSE(item.blob.has_value());
        CO_ASSERT_TRUE(item.blob_bytes.has_value());
        EXPECT_TRUE(*item.blob_bytes == expected);
        EXPECT_EQ(item.blob_size(), bytes);
        EXPECT_EQ(item.uri, uri);
        const auto back = item.to_json();
        EXPECT_FALSE(back.contains("blob") && back.at("blob").get_string().empty());
        EXPECT_TRUE(decode_base64(back.at("blob").get_string()) == expected);

        json::object params;
        params["uri"] = uri;
        auto plain = co_await c.session->request("resources/read", std::move(params));
        CO_ASSERT_TRUE(plain) << plain.error().message;
        const auto& blob = plain->at_pointer("/contents/0/blob");
        CO_ASSERT_TRUE(blob.is_string());
        EXPECT_EQ(blob.get_string().size(), (bytes + 2) / 3 * 4);
        EXPECT_TRUE(decode_base64(blob.get_string()) == expected);
        co_await c.session->close();
    });
}

}  // namespace
}  // namespace switchboard::test
