// A custom mcp::ServerHandler behind mcp::Server, with our ClientSession on an in-process channel pair, in both eras:
// a tool that asks the client for a sampling, an elicitation and its roots (legacy: server-to-client requests;
// 2026-07-28: input_required rounds), progress and log messages from a handler, and list changes it announces.
#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/jsonrpc/connection.hpp>
#include <switchboard/mcp/client_session.hpp>
#include <switchboard/mcp/server.hpp>
#include <switchboard/mcp/server_handler.hpp>
#include <switchboard/mcp/version.hpp>
#include <switchboard/transport/fd_channel.hpp>

#include <gtest/gtest.h>

#include "coro_test.hpp"
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace json = boost::json;
namespace mcp = switchboard::mcp;
namespace rpc = switchboard::jsonrpc;
using asio::awaitable;
using mcp::Era;
using namespace std::chrono_literals;
using switchboard::test::run;

namespace {

json::object text_result(std::string text, bool is_error = false) {
    json::array content;
    content.push_back(json::object{{"type", "text"}, {"text", std::move(text)}});
    return json::object{{"content", std::move(content)}, {"isError", is_error}};
}

std::string text_of(const json::value* v) { return v && v->is_string() ? std::string(v->get_string()) : "?"; }

// Asks the client for everything a server can ask, and reports progress and logs on the way.
class AskingHandler : public mcp::ServerHandler {
public:
    int calls = 0;  // handler invocations: a modern retry must resume the call, not start it again
    std::vector<std::string> ask_errors;  // what the asks of ask_elicitation_only failed with

    json::object capabilities() const override { return json::object{{"tools", json::object{{"listChanged", true}}}}; }

    Reply<json::object> list_tools(std::string, mcp::RequestContext) override {
        json::array tools;
        for (auto name : {"ask", "ask_elicitation_only"})
            tools.push_back(json::object{{"name", name}, {"inputSchema", json::object{{"type", "object"}}}});
        co_return json::object{{"tools", std::move(tools)}};
    }

    Reply<json::object> call_tool(std::string name, json::object, mcp::RequestContext ctx) override {
        ++calls;
        if (name == "throws") throw std::runtime_error("the tool broke");
        if (name == "ask_elicitation_only") {
            auto answer = co_await ctx.elicit(elicitation());
            if (!answer) ask_errors.push_back(answer.error().message);
            if (!answer) co_return answer.error();
            co_return text_result("elicited");
        }
        ctx.progress(1, 3, "asking");
        ctx.log("info", "asking the client", "asker");
        ctx.log("debug", "below the client's level");
        json::array messages;
        messages.push_back(json::object{{"role", "user"},
                                        {"content", json::object{{"type", "text"}, {"text", "Capital of France?"}}}});
        json::object sampling{{"messages", std::move(messages)}, {"maxTokens", 10}};
        auto sample = co_await ctx.create_message(std::move(sampling));
        if (!sample) co_return sample.error();
        ctx.progress(2, 3, "sampled");
        auto elicited = co_await ctx.elicit(elicitation());
        if (!elicited) co_return elicited.error();
        auto roots = co_await ctx.list_roots();
        if (!roots) co_return roots.error();
        ctx.progress(3, 3, "done");
        const auto& s = sample->as_object().at("content").as_object();
        const auto& e = elicited->as_object().at("content").as_object();
        const auto& r = roots->as_object().at("roots").as_array().at(0).as_object();
        co_return text_result(text_of(s.if_contains("text")) + "|" + text_of(e.if_contains("name")) + "|" +
                              text_of(r.if_contains("uri")));
    }

private:
    static json::object elicitation() {
        json::object schema{{"type", "object"},
                            {"properties", json::object{{"name", json::object{{"type", "string"}}}}},
                            {"required", json::array{"name"}}};
        return json::object{
            {"mode", "form"}, {"message", "Your GitHub login?"}, {"requestedSchema", std::move(schema)}};
    }
};

mcp::ServerRequestHandlers answering_handlers(std::vector<std::string>& asked) {
    mcp::ServerRequestHandlers h;
    h.sampling = [&asked](json::value params) -> awaitable<rpc::Outcome<json::value>> {
        const auto& text = params.at("messages").at(0).at("content").at("text");
        asked.push_back("sampling: " + std::string(text.as_string()));
        co_return json::object{{"role", "assistant"},
                               {"content", json::object{{"type", "text"}, {"text", "Paris"}}},
                               {"model", "test-model"},
                               {"stopReason", "endTurn"}};
    };
    h.elicitation = [&asked](json::value params) -> awaitable<rpc::Outcome<json::value>> {
        asked.push_back("elicitation: " + std::string(params.at("message").as_string()));
        co_return json::object{{"action", "accept"}, {"content", json::object{{"name", "octocat"}}}};
    };
    h.roots = [&asked](json::value) -> awaitable<rpc::Outcome<json::value>> {
        asked.push_back("roots");
        co_return json::object{{"roots", json::array{json::object{{"uri", "file:///work"}, {"name", "work"}}}}};
    };
    return h;
}

class ServerHandlerTest : public ::testing::TestWithParam<Era> {
protected:
    std::unique_ptr<mcp::Server> server;  // declared first: destroyed after the io_context
    asio::io_context ctx;
    std::shared_ptr<AskingHandler> handler = std::make_shared<AskingHandler>();
    std::shared_ptr<rpc::Channel> client_channel, server_channel;
    std::vector<std::pair<std::string, json::value>> notifications;
    std::vector<std::string> asked;  // what the client was asked, in order

    void SetUp() override {
        std::tie(client_channel, server_channel) = switchboard::transport::make_channel_pair(ctx.get_executor());
        mcp::ServerOptions o;
        o.info = mcp::Implementation{"asking", "1", ""};
        server = std::make_unique<mcp::Server>(o, handler);
        asio::co_spawn(ctx, server->serve(server_channel), asio::detached);
    }

    awaitable<std::shared_ptr<mcp::ClientSession>> connect(mcp::ServerRequestHandlers handlers) {
        mcp::ClientOptions o;
        o.server_name = "asking";
        o.request_timeout = 5s;
        o.connect_timeout = 5s;
        o.known_era = GetParam() == Era::legacy ? std::optional<Era>(Era::legacy) : std::nullopt;
        o.handlers = std::move(handlers);
        o.on_notification = [this](const std::string& method, const json::value& params) {
            notifications.emplace_back(method, params);
        };
        auto r = co_await mcp::ClientSession::connect(ctx.get_executor(), client_channel, o);
        if (!r) throw std::runtime_error("connect failed: " + r.error().message);
        EXPECT_EQ((*r)->era(), GetParam());
        co_return *r;
    }

    std::vector<std::string> notifications_named(std::string_view method) const {
        std::vector<std::string> out;
        for (const auto& [m, params] : notifications)
            if (m == method) out.push_back(json::serialize(params));
        return out;
    }
};

INSTANTIATE_TEST_SUITE_P(Eras, ServerHandlerTest, ::testing::Values(Era::legacy, Era::modern),
                         [](const auto& info) { return std::string(mcp::to_string(info.param)); });

}  // namespace

TEST_P(ServerHandlerTest, ToolAsksTheClientForSamplingElicitationAndRoots) {
    run(ctx, [&]() -> awaitable<void> {
        auto s = co_await connect(answering_handlers(asked));
        auto level = co_await s->set_logging_level("info");
        CO_ASSERT_TRUE(level.has_value()) << level.error().message;
        std::vector<std::string> progress;
        mcp::CallOptions call;
        call.on_progress = [&progress](const rpc::Progress& p) { progress.push_back(p.message); };
        json::object no_arguments;  // built before: no braced init-list next to co_await (GCC 12)
        auto r = co_await s->call_tool("ask", no_arguments, call);
        CO_ASSERT_TRUE(r.has_value()) << r.error().message;
        CO_ASSERT_EQ(r->content.size(), 1u);
        EXPECT_EQ(r->content[0].text(), "Paris|octocat|file:///work");
        EXPECT_FALSE(r->is_error);
        EXPECT_EQ(asked, (std::vector<std::string>{"sampling: Capital of France?", "elicitation: Your GitHub login?",
                                                   "roots"}));
        EXPECT_EQ(handler->calls, 1);  // resumed across the rounds, never replayed
        EXPECT_EQ(progress, (std::vector<std::string>{"asking", "sampled", "done"}));
        auto logs = notifications_named("notifications/message");
        CO_ASSERT_EQ(logs.size(), 1u);
        EXPECT_EQ(logs[0], R"({"level":"info","logger":"asker","data":"asking the client"})");
        co_await s->close();
    });
}

TEST_P(ServerHandlerTest, AskingForWhatTheClientLacksFailsTheCall) {
    run(ctx, [&]() -> awaitable<void> {
        mcp::ServerRequestHandlers only_sampling = answering_handlers(asked);
        only_sampling.elicitation = nullptr;  // not declared: the server must not ask
        auto s = co_await connect(only_sampling);
        json::object no_arguments;
        auto r = co_await s->call_tool("ask_elicitation_only", no_arguments);
        CO_ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, rpc::code::missing_required_client_capability);
        EXPECT_TRUE(asked.empty());
        co_await s->close();
    });
}

TEST_P(ServerHandlerTest, HandlerAnnouncesListChanges) {
    run(ctx, [&]() -> awaitable<void> {
        auto s = co_await connect(answering_handlers(asked));
        auto listening = co_await s->listen_for_changes();  // modern: opens the stream; legacy: nothing to do
        CO_ASSERT_TRUE(listening.has_value()) << listening.error().message;
        handler->notify_list_changed(mcp::ListKind::tools);
        handler->notify_list_changed(mcp::ListKind::prompts);  // not advertised, not asked for
        auto tools = co_await s->list_tools();                 // a round trip: the notification is in by then
        CO_ASSERT_TRUE(tools.has_value());
        EXPECT_EQ(notifications_named("notifications/tools/list_changed").size(), 1u);
        if (GetParam() == Era::modern) {
            EXPECT_TRUE(notifications_named("notifications/prompts/list_changed").empty());
        }
        co_await s->close();
    });
}

namespace {

// A plain JSON-RPC client speaking 2026-07-28 to a server with the AskingHandler: the wire shape, not our client.
struct WireFixture {
    std::unique_ptr<mcp::Server> server;  // declared first: destroyed after the io_context
    asio::io_context ctx;
    std::shared_ptr<AskingHandler> handler = std::make_shared<AskingHandler>();
    std::shared_ptr<rpc::Connection> conn;

    explicit WireFixture(mcp::ServerOptions o = {}) {
        auto [client_channel, server_channel] = switchboard::transport::make_channel_pair(ctx.get_executor());
        server = std::make_unique<mcp::Server>(o, handler);
        asio::co_spawn(ctx, server->serve(server_channel), asio::detached);
        conn = rpc::Connection::create(ctx.get_executor(), client_channel, rpc::Connection::Options{});
        conn->start();
    }

    static json::object call_params() {
        json::object caps{{"elicitation", json::object{}}};
        json::object meta{{std::string(mcp::meta::protocol_version), mcp::modern_version},
                          {std::string(mcp::meta::client_capabilities), std::move(caps)}};
        return json::object{{"_meta", meta}, {"name", "ask_elicitation_only"}, {"arguments", json::object{}}};
    }
};

}  // namespace

// input_required with the asks and an opaque requestState; the retry with the answers gets the result; a forged or
// used-up requestState is refused.
TEST(ServerHandlerWire, ModernInputRequiredRoundTrip) {
    WireFixture w;
    run(w.ctx, [&]() -> awaitable<void> {
        const auto params = WireFixture::call_params();
        auto first = co_await w.conn->request("tools/call", params);
        CO_ASSERT_TRUE(first.has_value()) << first.error().message;
        const auto& o = first->as_object();
        EXPECT_EQ(o.at("resultType"), "input_required");
        const auto& requests = o.at("inputRequests").as_object();
        CO_ASSERT_EQ(requests.size(), 1u);
        const auto& [key, request] = *requests.begin();
        EXPECT_EQ(request.at("method"), "elicitation/create");
        const auto state = std::string(o.at("requestState").as_string());

        json::object forged = params;
        forged["requestState"] = state + "x";
        auto refused = co_await w.conn->request("tools/call", forged);
        CO_ASSERT_FALSE(refused.has_value());
        EXPECT_EQ(refused.error().code, rpc::code::invalid_params);

        json::object answers;
        answers[key] = json::object{{"action", "accept"}, {"content", json::object{{"name", "x"}}}};
        json::object retry = params;
        retry["requestState"] = state;
        retry["inputResponses"] = std::move(answers);
        auto done = co_await w.conn->request("tools/call", retry);
        CO_ASSERT_TRUE(done.has_value()) << done.error().message;
        EXPECT_EQ(done->at("resultType"), "complete");
        EXPECT_EQ(done->at("content").at(0).at("text"), "elicited");
        EXPECT_EQ(w.handler->calls, 1);

        auto again = co_await w.conn->request("tools/call", retry);  // the state is used up
        CO_ASSERT_FALSE(again.has_value());
        EXPECT_EQ(again.error().code, rpc::code::invalid_params);
        co_await w.conn->close();
    });
}

// A handler that throws inside an input round (its client declared elicitation) is answered with an internal error,
// as outside the rounds, instead of leaving the request to wait for its client to give up.
TEST(ServerHandlerWire, AHandlerThrowingInARoundIsAnInternalError) {
    WireFixture w;
    run(w.ctx, [&]() -> awaitable<void> {
        auto params = WireFixture::call_params();
        params["name"] = "throws";
        auto r = co_await w.conn->request("tools/call", params);
        CO_ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, rpc::code::internal_error);
        EXPECT_NE(r.error().message.find("the tool broke"), std::string::npos) << r.error().message;
        co_await w.conn->close();
    });
}

// A client that does not come back: the suspended handler's ask fails after the input timeout, and the state expires.
TEST(ServerHandlerWire, UnansweredInputExpires) {
    mcp::ServerOptions o;
    o.input_timeout = 50ms;
    WireFixture w(o);
    run(w.ctx, [&]() -> awaitable<void> {
        auto params = WireFixture::call_params();
        auto first = co_await w.conn->request("tools/call", params);
        CO_ASSERT_TRUE(first.has_value()) << first.error().message;
        EXPECT_EQ(first->at("resultType"), "input_required");
        asio::steady_timer pause(w.ctx, 300ms);
        co_await pause.async_wait(asio::use_awaitable);
        CO_ASSERT_EQ(w.handler->ask_errors.size(), 1u);
        EXPECT_NE(w.handler->ask_errors[0].find("did not answer"), std::string::npos) << w.handler->ask_errors[0];
        params["requestState"] = first->at("requestState");
        auto late = co_await w.conn->request("tools/call", params);
        CO_ASSERT_FALSE(late.has_value());
        EXPECT_EQ(late.error().code, rpc::code::invalid_params);
        co_await w.conn->close();
    });
}
