#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/jsonrpc/connection.hpp>
#include <switchboard/mcp/client_session.hpp>
#include <switchboard/mcp/server.hpp>
#include <switchboard/mcp/version.hpp>
#include <switchboard/transport/fd_channel.hpp>

#include <gtest/gtest.h>

#include "coro_test.hpp"
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace json = boost::json;
namespace mcp = switchboard::mcp;
namespace rpc = switchboard::jsonrpc;
using asio::awaitable;
using mcp::Era;
using switchboard::transport::FdChannel;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

using switchboard::test::run;

namespace {

json::object text_content(const std::string& text) {
    json::array content;
    content.push_back(json::object{{"type", "text"}, {"text", text}});
    return json::object{{"content", std::move(content)}};
}

void populate(mcp::StaticHandler& s) {
    json::object echo_def{
        {"name", "echo"}, {"description", "Echoes its text"}, {"inputSchema", json::object{{"type", "object"}}}};
    s.add_tool(std::move(echo_def),
               [](json::object args, mcp::RequestContext) -> awaitable<rpc::Outcome<json::object>> {
                   const auto* t = args.if_contains("text");
                   co_return text_content(t && t->is_string() ? std::string(t->get_string()) : std::string("<none>"));
               });
    for (int i = 1; i <= 4; ++i) {
        json::object def{{"name", "tool" + std::to_string(i)}, {"inputSchema", json::object{{"type", "object"}}}};
        s.add_tool(std::move(def), [i](json::object, mcp::RequestContext) -> awaitable<rpc::Outcome<json::object>> {
            co_return text_content("tool" + std::to_string(i));
        });
    }
    json::object static_def{{"uri", "demo://static"}, {"name", "static"}, {"mimeType", "text/plain"}};
    s.add_resource(std::move(static_def),
                   [](const std::string& uri, const mcp::StaticHandler::Args&,
                      mcp::RequestContext) -> awaitable<rpc::Outcome<json::object>> {
                       json::array contents;
                       contents.push_back(json::object{{"uri", uri}, {"mimeType", "text/plain"}, {"text", "static"}});
                       co_return json::object{{"contents", std::move(contents)}};
                   });
    json::object greeting_def{{"uriTemplate", "demo://greeting/{name}"}, {"name", "greeting"}};
    s.add_resource_template(
        std::move(greeting_def),
        [](const std::string& uri, const mcp::StaticHandler::Args& vars,
           mcp::RequestContext) -> awaitable<rpc::Outcome<json::object>> {
            json::array contents;
            contents.push_back(
                json::object{{"uri", uri}, {"mimeType", "text/plain"}, {"text", "Hello, " + vars.at("name") + "!"}});
            co_return json::object{{"contents", std::move(contents)}};
        });
    json::array prompt_args;
    prompt_args.push_back(json::object{{"name", "name"}, {"required", true}});
    prompt_args.push_back(json::object{{"name", "style"}, {"required", false}});
    json::object prompt_def{{"name", "greet"}, {"arguments", std::move(prompt_args)}};
    s.add_prompt(
        std::move(prompt_def),
        [](const mcp::StaticHandler::Args& args, mcp::RequestContext) -> awaitable<rpc::Outcome<json::object>> {
            std::string text = "Hello, " + args.at("name") + "!";
            if (auto it = args.find("style"); it != args.end()) text += " (" + it->second + ")";
            json::array messages;
            messages.push_back(
                json::object{{"role", "user"}, {"content", json::object{{"type", "text"}, {"text", text}}}});
            co_return json::object{{"description", "A greeting"}, {"messages", std::move(messages)}};
        });
    s.set_completer([](const json::object& ref, const std::string& argument, const std::string& value,
                       const mcp::StaticHandler::Args& context) {
        std::vector<std::string> out;
        if (mcp::string_field(ref, "name") != "greet" || argument != "name") return out;
        for (std::string v : {"alice", "albert", "bob"})
            if (v.rfind(value, 0) == 0) out.push_back(v);
        if (auto it = context.find("style"); it != context.end()) out.push_back("style=" + it->second);
        return out;
    });
}

struct SessionFixture {
    std::unique_ptr<mcp::Server> server;  // declared first: destroyed after the io_context
    asio::io_context ctx;
    std::shared_ptr<FdChannel> client_channel, server_channel;
    std::vector<std::pair<std::string, json::value>> notifications;
    switchboard::core::OneShotEvent got_update;
    bool serve_failed = false;

    SessionFixture() {
        std::tie(client_channel, server_channel) = switchboard::transport::make_channel_pair(ctx.get_executor());
    }

    std::shared_ptr<mcp::StaticHandler> handler;

    void start_server(mcp::ServerOptions o = {}, mcp::StaticHandlerOptions ho = {}) {
        handler = std::make_shared<mcp::StaticHandler>(ho);
        populate(*handler);
        server = std::make_unique<mcp::Server>(std::move(o), handler);
        asio::co_spawn(ctx, server->serve(server_channel), [this](std::exception_ptr e) {
            if (e) serve_failed = true;
        });
    }

    mcp::ClientOptions client_options(std::optional<Era> known_era = {}) {
        mcp::ClientOptions o;
        o.server_name = "demo";
        o.request_timeout = 5s;
        o.connect_timeout = 5s;
        o.probe_timeout = 2s;
        o.known_era = known_era;
        o.on_notification = [this](const std::string& method, const json::value& params) {
            notifications.emplace_back(method, params);
            if (method == "notifications/resources/updated") got_update.set();
        };
        return o;
    }

    awaitable<std::shared_ptr<mcp::ClientSession>> connect(std::optional<Era> known_era = {}) {
        auto r = co_await mcp::ClientSession::connect(ctx.get_executor(), client_channel, client_options(known_era));
        if (!r) throw std::runtime_error("connect failed: " + r.error().message);
        co_return *r;
    }
};

struct SessionTest : ::testing::Test, SessionFixture {};

}  // namespace

// ---- Era negotiation --------------------------------------------------------------------------------------------

TEST_F(SessionTest, DualEraServerIsModern) {
    start_server();
    run(ctx, [&]() -> awaitable<void> {
        auto s = co_await connect();
        EXPECT_EQ(s->era(), Era::modern);
        EXPECT_EQ(s->protocol_version(), "2026-07-28");
        EXPECT_EQ(s->server_info().name, "switchboard-server");
        EXPECT_TRUE(s->has_capability("tools"));
        EXPECT_TRUE(s->has_capability("resources", "subscribe"));
        EXPECT_FALSE(s->has_capability("tools", "listChanged"));
        co_await s->close();
    });
}

TEST_F(SessionTest, LegacyOnlyServerIsLegacy) {
    mcp::ServerOptions o;
    o.modern = false;
    o.instructions = "be nice";
    start_server(o);
    run(ctx, [&]() -> awaitable<void> {
        auto s = co_await connect();
        EXPECT_EQ(s->era(), Era::legacy);
        EXPECT_EQ(s->protocol_version(), "2025-11-25");
        EXPECT_EQ(s->instructions(), "be nice");
        EXPECT_TRUE(s->has_capability("prompts"));
        co_await s->close();
    });
}

TEST_F(SessionTest, ModernOnlyServerIsModern) {
    mcp::ServerOptions o;
    o.legacy = false;
    start_server(o);
    run(ctx, [&]() -> awaitable<void> {
        auto s = co_await connect();
        EXPECT_EQ(s->era(), Era::modern);
        EXPECT_EQ(s->protocol_version(), "2026-07-28");
        co_await s->close();
    });
}

TEST_F(SessionTest, KnownLegacyEraSkipsProbe) {
    start_server();  // dual-era: a probe would have chosen modern
    run(ctx, [&]() -> awaitable<void> {
        auto s = co_await connect(Era::legacy);
        EXPECT_EQ(s->era(), Era::legacy);
        EXPECT_EQ(s->protocol_version(), "2025-11-25");
        co_await s->close();
    });
}

TEST_F(SessionTest, LegacyClientOnModernOnlyServerGetsClearError) {
    mcp::ServerOptions o;
    o.legacy = false;
    start_server(o);
    run(ctx, [&]() -> awaitable<void> {
        auto r = co_await mcp::ClientSession::connect(ctx.get_executor(), client_channel, client_options(Era::legacy));
        CO_ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, rpc::code::unsupported_protocol_version);
        EXPECT_NE(r.error().message.find("initialize"), std::string::npos) << r.error().message;
    });
}

TEST_F(SessionTest, UnsupportedInitializeVersionIsAClearError) {
    auto conn = rpc::Connection::create(ctx.get_executor(), server_channel, {});
    int discover_calls = 0, initialize_calls = 0;
    conn->on_request(
        [&](std::string method, json::value, rpc::IncomingRequest) -> awaitable<rpc::Outcome<json::value>> {
            if (method == "initialize") {
                ++initialize_calls;
                co_return json::value(json::object{{"protocolVersion", "1999-01-01"},
                                                   {"capabilities", json::object{}},
                                                   {"serverInfo", json::object{{"name", "old"}, {"version", "1"}}}});
            }
            if (method == "server/discover") ++discover_calls;
            co_return rpc::Error{rpc::code::method_not_found, "Method not found: " + method};
        });
    conn->start();
    run(ctx, [&]() -> awaitable<void> {
        auto r = co_await mcp::ClientSession::connect(ctx.get_executor(), client_channel, client_options());
        CO_ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, rpc::code::protocol_violation);
        EXPECT_NE(r.error().message.find("1999-01-01"), std::string::npos) << r.error().message;
        EXPECT_NE(r.error().message.find("demo"), std::string::npos) << r.error().message;
        EXPECT_EQ(discover_calls, 1);
        EXPECT_EQ(initialize_calls, 1);
        // The failed connect closed the channel: the raw server sees the end.
        asio::steady_timer wait(ctx.get_executor());
        for (int i = 0; i < 100 && conn->is_open(); ++i) {
            wait.expires_after(20ms);
            co_await wait.async_wait(asio::use_awaitable);
        }
        EXPECT_FALSE(conn->is_open());
    });
}

TEST_F(SessionTest, DiscoverUnsupportedWithOnlyLegacyVersionsFallsBackToInitialize) {
    auto conn = rpc::Connection::create(ctx.get_executor(), server_channel, {});
    std::vector<std::string> calls;
    bool initialized = false;
    conn->on_notification([&](const std::string& method, const json::value&) {
        if (method == "notifications/initialized") initialized = true;
    });
    conn->on_request(
        [&](std::string method, json::value params, rpc::IncomingRequest) -> awaitable<rpc::Outcome<json::value>> {
            calls.push_back(method);
            if (method == "server/discover") {
                json::array supported{"2025-11-25", "2025-06-18"};
                co_return rpc::Error{rpc::code::unsupported_protocol_version, "Unsupported protocol version",
                                     json::object{{"supported", std::move(supported)}, {"requested", "2026-07-28"}}};
            }
            if (method == "initialize") {
                EXPECT_EQ(params.as_object().at("protocolVersion"), json::value("2025-11-25"));
                co_return json::value(json::object{{"protocolVersion", "2025-06-18"},
                                                   {"capabilities", json::object{{"tools", json::object{}}}},
                                                   {"serverInfo", json::object{{"name", "dual"}, {"version", "2"}}}});
            }
            co_return rpc::Error{rpc::code::method_not_found, "Method not found: " + method};
        });
    conn->start();
    run(ctx, [&]() -> awaitable<void> {
        auto r = co_await mcp::ClientSession::connect(ctx.get_executor(), client_channel, client_options());
        CO_ASSERT_TRUE(r.has_value()) << r.error().message;
        auto s = *r;
        EXPECT_EQ(s->era(), Era::legacy);
        EXPECT_EQ(s->protocol_version(), "2025-06-18");
        EXPECT_EQ(s->server_info().name, "dual");
        EXPECT_TRUE(s->has_capability("tools"));
        EXPECT_EQ(calls, (std::vector<std::string>{"server/discover", "initialize"}));
        co_await s->close();
        EXPECT_TRUE(initialized);
    });
}

// ---- Operations in both eras ------------------------------------------------------------------------------------

class SessionEraTest : public ::testing::TestWithParam<Era>, public SessionFixture {
protected:
    /// Connects in the era under test: legacy is forced with known_era, modern is probed.
    awaitable<std::shared_ptr<mcp::ClientSession>> connect_in_era() {
        auto s = co_await connect(GetParam() == Era::legacy ? std::optional<Era>(Era::legacy) : std::nullopt);
        EXPECT_EQ(s->era(), GetParam());
        co_return s;
    }
};

INSTANTIATE_TEST_SUITE_P(Eras, SessionEraTest, ::testing::Values(Era::legacy, Era::modern),
                         [](const auto& info) { return std::string(mcp::to_string(info.param)); });

TEST_P(SessionEraTest, ListToolsFollowsPagination) {
    mcp::StaticHandlerOptions ho;
    ho.page_size = 2;
    start_server({}, ho);
    run(ctx, [&]() -> awaitable<void> {
        auto s = co_await connect_in_era();
        auto tools = co_await s->list_tools();
        CO_ASSERT_TRUE(tools.has_value()) << tools.error().message;
        std::vector<std::string> names;
        for (const auto& t : *tools) names.push_back(t.name);
        EXPECT_EQ(names, (std::vector<std::string>{"echo", "tool1", "tool2", "tool3", "tool4"}));
        EXPECT_EQ((*tools)[0].description, "Echoes its text");
        co_await s->close();
    });
}

TEST_P(SessionEraTest, CallToolEcho) {
    start_server();
    run(ctx, [&]() -> awaitable<void> {
        auto s = co_await connect_in_era();
        json::object args{{"text", "hello there"}};
        auto r = co_await s->call_tool("echo", std::move(args));
        CO_ASSERT_TRUE(r.has_value()) << r.error().message;
        EXPECT_FALSE(r->is_error);
        CO_ASSERT_EQ(r->content.size(), 1u);
        EXPECT_EQ(r->content[0].type, "text");
        EXPECT_EQ(r->content[0].text(), "hello there");
        // A 2026-07-28 result names its server in _meta (spliced in as the result is written); a legacy one does not.
        const auto* meta = r->raw.if_contains("_meta");
        const auto* info = meta && meta->is_object() ? meta->get_object().if_contains(mcp::meta::server_info) : nullptr;
        if (GetParam() == Era::modern) {
            CO_ASSERT_TRUE(info != nullptr) << json::serialize(r->raw);
            EXPECT_EQ(info->at("name"), json::value("switchboard-server"));
        } else {
            EXPECT_EQ(info, nullptr) << json::serialize(r->raw);
        }

        json::object none;
        auto unknown = co_await s->call_tool("no-such-tool", std::move(none));
        CO_ASSERT_FALSE(unknown.has_value());
        EXPECT_EQ(unknown.error().code, rpc::code::invalid_params);
        co_await s->close();
    });
}

TEST_P(SessionEraTest, ReadResourceFromTemplate) {
    start_server();
    run(ctx, [&]() -> awaitable<void> {
        auto s = co_await connect_in_era();
        auto r = co_await s->read_resource("demo://greeting/Bob");
        CO_ASSERT_TRUE(r.has_value()) << r.error().message;
        CO_ASSERT_EQ(r->contents.size(), 1u);
        EXPECT_EQ(r->contents[0].uri, "demo://greeting/Bob");
        CO_ASSERT_TRUE(r->contents[0].text.has_value());
        EXPECT_EQ(*r->contents[0].text, "Hello, Bob!");

        auto templates = co_await s->list_resource_templates();
        CO_ASSERT_TRUE(templates.has_value());
        CO_ASSERT_EQ(templates->size(), 1u);
        EXPECT_EQ((*templates)[0].uri_template, "demo://greeting/{name}");

        // "Resource not found" moved from -32002 to -32602 in 2026-07-28.
        auto missing = co_await s->read_resource("demo://nowhere/x/y");
        CO_ASSERT_FALSE(missing.has_value());
        EXPECT_EQ(missing.error().code,
                  GetParam() == Era::modern ? rpc::code::invalid_params : rpc::code::resource_not_found_legacy);
        co_await s->close();
    });
}

TEST_P(SessionEraTest, GetPromptWithArguments) {
    start_server();
    run(ctx, [&]() -> awaitable<void> {
        auto s = co_await connect_in_era();
        auto prompts = co_await s->list_prompts();
        CO_ASSERT_TRUE(prompts.has_value());
        CO_ASSERT_EQ(prompts->size(), 1u);
        CO_ASSERT_EQ((*prompts)[0].arguments.size(), 2u);
        EXPECT_TRUE((*prompts)[0].arguments[0].required);

        std::map<std::string, std::string> args{{"name", "Ada"}, {"style", "formal"}};
        auto r = co_await s->get_prompt("greet", args);
        CO_ASSERT_TRUE(r.has_value()) << r.error().message;
        EXPECT_EQ(r->description, "A greeting");
        CO_ASSERT_EQ(r->messages.size(), 1u);
        EXPECT_EQ(r->messages[0].at("content").at("text"), json::value("Hello, Ada! (formal)"));

        std::map<std::string, std::string> no_args;
        auto missing = co_await s->get_prompt("greet", no_args);
        CO_ASSERT_FALSE(missing.has_value());
        EXPECT_EQ(missing.error().code, rpc::code::invalid_params);
        co_await s->close();
    });
}

TEST_P(SessionEraTest, Complete) {
    start_server();
    run(ctx, [&]() -> awaitable<void> {
        auto s = co_await connect_in_era();
        json::object ref{{"type", "ref/prompt"}, {"name", "greet"}};
        auto r = co_await s->complete(ref, "name", "al");
        CO_ASSERT_TRUE(r.has_value()) << r.error().message;
        EXPECT_EQ(r->values, (std::vector<std::string>{"alice", "albert"}));
        CO_ASSERT_TRUE(r->total.has_value());
        EXPECT_EQ(*r->total, 2);
        EXPECT_FALSE(r->has_more);

        std::map<std::string, std::string> context{{"style", "x"}};
        auto with_context = co_await s->complete(ref, "name", "b", context);
        CO_ASSERT_TRUE(with_context.has_value());
        EXPECT_EQ(with_context->values, (std::vector<std::string>{"bob", "style=x"}));
        co_await s->close();
    });
}

TEST_P(SessionEraTest, SubscribeDeliversResourceUpdates) {
    start_server();
    run(ctx, [&]() -> awaitable<void> {
        auto s = co_await connect_in_era();
        auto sub = co_await s->subscribe("demo://static");
        CO_ASSERT_TRUE(sub.has_value()) << sub.error().message;
        handler->notify_resource_updated("demo://not-subscribed");
        handler->notify_resource_updated("demo://static");
        const bool updated_in_time = co_await got_update.wait_for(2s);
        EXPECT_TRUE(updated_in_time);
        std::vector<std::string> updated;
        for (const auto& [method, params] : notifications)
            if (method == "notifications/resources/updated") updated.emplace_back(params.at("uri").as_string());
        EXPECT_EQ(updated, (std::vector<std::string>{"demo://static"}));
        co_await s->close();
    });
}

TEST_P(SessionEraTest, PingAndToolsAfterSubscribe) {
    start_server();
    run(ctx, [&]() -> awaitable<void> {
        auto s = co_await connect_in_era();
        auto p = co_await s->ping();
        EXPECT_TRUE(p.has_value()) << p.error().message;
        auto sub = co_await s->subscribe("demo://static");
        CO_ASSERT_TRUE(sub.has_value()) << sub.error().message;
        // The listen stream (modern) must not block other requests.
        json::object args{{"text", "after"}};
        auto r = co_await s->call_tool("echo", std::move(args));
        CO_ASSERT_TRUE(r.has_value()) << r.error().message;
        CO_ASSERT_EQ(r->content.size(), 1u);
        EXPECT_EQ(r->content[0].text(), "after");
        co_await s->close();
    });
}

// ---- URI templates and versions ---------------------------------------------------------------------------------

TEST(MatchUriTemplate, SimpleVariable) {
    mcp::StaticHandler::Args vars;
    ASSERT_TRUE(mcp::match_uri_template("demo://greeting/{name}", "demo://greeting/alice", vars));
    EXPECT_EQ(vars, (mcp::StaticHandler::Args{{"name", "alice"}}));
}

TEST(MatchUriTemplate, SeveralVariablesWithLiteralsBetween) {
    mcp::StaticHandler::Args vars;
    ASSERT_TRUE(mcp::match_uri_template("file:///{dir}/{file}.txt", "file:///docs/readme.txt", vars));
    EXPECT_EQ(vars, (mcp::StaticHandler::Args{{"dir", "docs"}, {"file", "readme"}}));
    ASSERT_TRUE(mcp::match_uri_template("x://{a}-{b}", "x://foo-bar", vars));
    EXPECT_EQ(vars, (mcp::StaticHandler::Args{{"a", "foo"}, {"b", "bar"}}));
}

TEST(MatchUriTemplate, Mismatches) {
    mcp::StaticHandler::Args vars;
    EXPECT_FALSE(mcp::match_uri_template("demo://greeting/{name}", "demo://greeting/a/b", vars));
    EXPECT_FALSE(mcp::match_uri_template("demo://greeting/{name}", "demo://greeting/", vars));
    EXPECT_FALSE(mcp::match_uri_template("demo://greeting/{name}", "demo://other/alice", vars));
    EXPECT_FALSE(mcp::match_uri_template("demo://greeting/{name}", "demo://greeting", vars));
    EXPECT_FALSE(mcp::match_uri_template("file:///{file}.txt", "file:///readme.md", vars));
    EXPECT_FALSE(mcp::match_uri_template("demo://{broken", "demo://x", vars));
    EXPECT_TRUE(vars.empty());
}

TEST(MatchUriTemplate, NoVariables) {
    mcp::StaticHandler::Args vars;
    EXPECT_TRUE(mcp::match_uri_template("demo://static", "demo://static", vars));
    EXPECT_TRUE(vars.empty());
    EXPECT_FALSE(mcp::match_uri_template("demo://static", "demo://static2", vars));
}

TEST(Version, LegacyVersions) {
    for (auto v : {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) EXPECT_TRUE(mcp::is_legacy_version(v)) << v;
    EXPECT_FALSE(mcp::is_legacy_version("2026-07-28"));
    EXPECT_FALSE(mcp::is_legacy_version("2024-10-07"));
    EXPECT_FALSE(mcp::is_legacy_version(""));
}

TEST(Version, ModernVersions) {
    EXPECT_TRUE(mcp::is_modern_version("2026-07-28"));
    EXPECT_TRUE(mcp::is_modern_version(mcp::modern_version));
    EXPECT_FALSE(mcp::is_modern_version("2025-11-25"));
    EXPECT_FALSE(mcp::is_modern_version("2026-07-29"));
    EXPECT_FALSE(mcp::is_modern_version(""));
    EXPECT_TRUE(mcp::is_legacy_version(mcp::latest_legacy_version));
    EXPECT_EQ(mcp::to_string(Era::modern), "modern");
    EXPECT_EQ(mcp::to_string(Era::legacy), "legacy");
}
