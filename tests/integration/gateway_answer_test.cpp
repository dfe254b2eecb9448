// Gateway::answer, the path of every stateless 2026-07-28 request, in front of the demo server in a real pool: a
// finished request's handler (its context, its subscription to the pool's events, its host tools) serves the next
// request only when nothing of its client is left in it.
#include "harness.hpp"
#include "host_harness.hpp"

#include <switchboard/gateway/aggregate_handler.hpp>
#include <switchboard/gateway/relay.hpp>
#include <switchboard/jsonrpc/message.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_to.hpp>

#include <string>
#include <string_view>

namespace switchboard::test {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using boost::asio::awaitable;
using namespace std::chrono_literals;

// A 2026-07-28 request whose client declares elicitation; `params` are the members before _meta.
jsonrpc::Message stateless_request(int id, std::string_view method, std::string_view params) {
    const std::string text = R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + std::string(method) +
                             R"(","params":{)" + std::string(params) + (params.empty() ? "" : ",") +
                             R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                             R"("io.modelcontextprotocol/clientInfo":{"name":"answer-test","version":"1"},)"
                             R"("io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}})";
    auto m = jsonrpc::parse_message(text);
    EXPECT_TRUE(m.has_value()) << text;
    return m ? std::move(*m) : jsonrpc::Message{};
}

// The result of an answer's text (null when it is an error).
json::value result_of(const std::string& text) {
    auto v = json::parse(text);
    const auto* r = v.as_object().if_contains("result");
    return r ? *r : json::value();
}

awaitable<std::string> answer(std::shared_ptr<gateway::Gateway> gw, int id, std::string method, std::string params) {
    co_return co_await gw->answer(stateless_request(id, method, params), [](std::string) {});
}

TEST(GatewayAnswer, AFinishedRequestsHandlerServesTheNextOnlyWhenNothingOfItsClientIsLeft) {
    auto relay = gateway::ClientRelay::create();
    auto options = fast_options();
    options.handlers = relay->handlers();
    // The demo's own tools (echo, slow) and the conformance fixtures (an input round, a tool list that changes).
    const auto cfg = config_of({{"demo", demo_entry()}, {"fixtures", demo_entry(R"("--conformance")")}});
    run([&]() -> awaitable<void> {
        using namespace asio::experimental::awaitable_operators;
        auto pool = host::ServerPool::create(co_await asio::this_coro::executor, cfg, options);
        pool->start();
        co_await pool->wait_until_settled(20s);
        gateway::GatewayOptions go;
        go.server.info = mcp::Implementation{"answer-test-gateway", "1", ""};
        // A tool the gateway answers itself (as an agent or a skill is): what it keeps may be its client's.
        go.host_tools = [](std::shared_ptr<host::Context>) {
            gateway::HostTool note;
            note.name = "local_note";
            note.description = "Answered by the gateway";
            note.input_schema = json::object{{"type", "object"}};
            note.call = [](json::object, mcp::RequestContext) -> awaitable<jsonrpc::Outcome<json::object>> {
                json::object block{{"type", "text"}, {"text", "noted"}};
                json::object result{{"content", json::array{block}}};
                co_return result;
            };
            return std::vector<gateway::HostTool>{note};
        };
        auto gw = gateway::Gateway::create(pool, relay, go);

        // One after another: the first request's handler serves the two after it.
        for (int i = 1; i <= 3; ++i) {
            const auto text = co_await answer(gw, i, "tools/call", R"("name":"echo","arguments":{"message":"hi"})");
            const auto r = result_of(text);
            EXPECT_TRUE(r.is_object()) << text;
            EXPECT_NE(text.find(R"("text":"hi")"), std::string::npos) << text;
            EXPECT_EQ(gw->idle_handlers(), 1u) << "after request " << i;
        }

        // Two at once: a handler each (the idle one and a new one), both kept once done.
        const auto slow = R"("name":"slow","arguments":{"seconds":0.3,"steps":2})";
        auto [a, b] = co_await (answer(gw, 4, "tools/call", slow) && answer(gw, 5, "tools/call", slow));
        EXPECT_NE(a.find("done after 2 steps"), std::string::npos) << a;
        EXPECT_NE(b.find("done after 2 steps"), std::string::npos) << b;
        EXPECT_EQ(gw->idle_handlers(), 2u);

        // An input round: the request's handler waits in it for the client's retry, so it is not handed on; the
        // retry (requestState) is answered by an idle handler, which is kept again.
        const auto asked =
            co_await answer(gw, 6, "tools/call", R"("name":"test_elicitation","arguments":{"message":"who?"})");
        const auto round = result_of(asked);
        CO_ASSERT_TRUE(round.is_object());
        EXPECT_EQ(json::value_to<std::string>(round.at("resultType")), "input_required") << asked;
        CO_ASSERT_TRUE(round.as_object().contains("requestState"));
        const auto& requests = round.at("inputRequests").as_object();
        CO_ASSERT_EQ(requests.size(), 1u);
        EXPECT_EQ(gw->idle_handlers(), 1u) << "the waiting handler was handed on";
        const std::string key = requests.begin()->key();
        const std::string retry = R"("name":"test_elicitation","arguments":{"message":"who?"},"requestState":)" +
                                  json::serialize(round.at("requestState")) + R"(,"inputResponses":{)" +
                                  json::serialize(json::value(key)) +
                                  R"(:{"action":"accept","content":{"username":"ada","email":"ada@example.org"}}})";
        const auto done = co_await answer(gw, 7, "tools/call", retry);
        EXPECT_NE(done.find("ada"), std::string::npos) << done;
        EXPECT_EQ(done.find("input_required"), std::string::npos) << done;
        // The retry's handler (the other idle one) is kept again; the one that waited in the round is not.
        EXPECT_EQ(gw->idle_handlers(), 1u);

        // A tool list after the tools changed: an idle handler lists the new tools.
        const auto before = co_await answer(gw, 8, "tools/list", "");
        const bool had = before.find(R"("name":"test_dynamic_tool")") != std::string::npos;
        co_await answer(gw, 9, "tools/call", R"("name":"test_trigger_tool_change","arguments":{})");
        bool has = had;
        for (int i = 0; i < 100 && has == had; ++i) {
            co_await sleep_for(20ms);
            const auto after = co_await answer(gw, 10 + i, "tools/list", "");
            has = after.find(R"("name":"test_dynamic_tool")") != std::string::npos;
        }
        EXPECT_NE(has, had) << "a kept handler still lists the tools as they were";
        EXPECT_GE(gw->idle_handlers(), 1u);

        // A host tool's handler is not kept (an agent's tools keep the skills a run loaded).
        const auto idle = gw->idle_handlers();
        const auto noted = co_await answer(gw, 200, "tools/call", R"("name":"local_note","arguments":{})");
        EXPECT_NE(noted.find("noted"), std::string::npos) << noted;
        EXPECT_EQ(gw->idle_handlers(), idle - 1);

        // After shutdown() none is kept, not even of a request answered meanwhile.
        co_await gw->shutdown();
        EXPECT_EQ(gw->idle_handlers(), 0u);
        const auto late = co_await answer(gw, 201, "tools/call", R"("name":"echo","arguments":{"message":"late"})");
        EXPECT_NE(late.find("late"), std::string::npos) << late;
        EXPECT_EQ(gw->idle_handlers(), 0u);
        co_await pool->shutdown();
    });
}

}  // namespace
}  // namespace switchboard::test
