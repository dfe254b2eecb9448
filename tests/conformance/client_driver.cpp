// The client the official conformance runner starts: `switchboard-conformance-client <server-url>`, with the scenario
// in MCP_CONFORMANCE_SCENARIO. It is a plain Switchboard client (the library's Streamable HTTP channel and
// ClientSession), not a fixture that knows the answers: it connects, then exercises what the server offers — every
// tool with arguments made from its input schema, every resource, every prompt — and answers elicitation, sampling
// and roots requests with generic handlers. Scenario names only pick which of those steps run.
#include <switchboard/auth/oauth.hpp>
#include <switchboard/mcp/client_session.hpp>
#include <switchboard/transport/http_client.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <set>
#include <string>

namespace asio = boost::asio;
namespace json = boost::json;
using namespace switchboard;

namespace {

/// A value a generic client would fill in for one schema property: its default, first example or enum value, else
/// a plain value of its type.
json::value sample_value(const json::object& prop, int index) {
    if (const auto* d = prop.if_contains("default")) return *d;
    if (const auto* ex = prop.if_contains("examples"); ex && ex->is_array() && !ex->get_array().empty())
        return ex->get_array().front();
    if (const auto* en = prop.if_contains("enum"); en && en->is_array() && !en->get_array().empty())
        return en->get_array().front();
    std::string type = mcp::string_field(prop, "type");
    if (type == "number" || type == "integer") return index + 2;  // add_numbers(2, 3)
    if (type == "boolean") return true;
    if (type == "array") return json::array{};
    if (type == "object") return json::object{};
    return "test";
}

json::object sample_arguments(const json::value& schema) {
    json::object args;
    const auto* s = schema.if_object();
    const auto* props = s ? s->if_contains("properties") : nullptr;
    if (!props || !props->is_object()) return args;
    int index = 0;
    for (const auto& [name, prop] : props->get_object())
        if (const auto* p = prop.if_object()) args[name] = sample_value(*p, index++);
    return args;
}

mcp::ServerRequestHandlers generic_handlers() {
    mcp::ServerRequestHandlers h;
    // Accept, filling only fields that have no default: the library applies defaults itself (SEP-1034).
    h.elicitation = [](json::value params) -> asio::awaitable<mcp::Outcome<json::value>> {
        json::object content;
        const auto* p = params.if_object();
        const auto* schema = p ? p->if_contains("requestedSchema") : nullptr;
        const auto* props = schema && schema->is_object() ? schema->get_object().if_contains("properties") : nullptr;
        if (props && props->is_object()) {
            int index = 0;
            for (const auto& [name, prop] : props->get_object())
                if (const auto* po = prop.if_object(); po && !po->contains("default"))
                    content[name] = sample_value(*po, index++);
        }
        json::object result;
        result["action"] = "accept";
        result["content"] = std::move(content);
        co_return json::value(std::move(result));
    };
    h.sampling = [](json::value) -> asio::awaitable<mcp::Outcome<json::value>> {
        json::value result = json::parse(
            R"({"role":"assistant","content":{"type":"text","text":"ok"},"model":"conformance","stopReason":"endTurn"})");
        co_return result;
    };
    h.roots = [](json::value) -> asio::awaitable<mcp::Outcome<json::value>> {
        json::value result = json::parse(R"({"roots":[]})");
        co_return result;
    };
    return h;
}

struct Run;
std::shared_ptr<auth::OAuthAuthorizer> make_authorizer(const asio::any_io_executor& ex, const Run& r);

struct Run {
    std::string url;
    std::string scenario;
    json::array context_calls;
    json::object context;
    int status = 1;
};

/// The OAuth client as a user would configure it, from the runner's context: a pre-registered client when it names
/// one, client credentials or a workload assertion when it carries those, else the defaults (Dynamic Client
/// Registration, or the Client ID Metadata Document URL the runner expects when the server supports it). The user
/// agent is headless: the test authorization server approves at once, so the redirect is read from its Location.
std::shared_ptr<auth::OAuthAuthorizer> make_authorizer(const asio::any_io_executor& ex, const Run& r) {
    auto text = [&](std::string_view key) { return mcp::string_field(r.context, key); };
    auth::OAuthSettings settings;
    settings.client_metadata_url = "https://conformance-test.local/client-metadata.json";
    settings.client_id = text("client_id");
    settings.client_secret = text("client_secret");
    settings.client_name = "switchboard-conformance-client";
    if (!text("private_key_pem").empty()) {
        settings.grant = auth::OAuthSettings::Grant::client_credentials;
        settings.private_key_pem = text("private_key_pem");
    } else if (r.scenario.find("client-credentials") != std::string::npos) {
        settings.grant = auth::OAuthSettings::Grant::client_credentials;
    } else if (!text("idp_id_token").empty()) {
        settings.grant = auth::OAuthSettings::Grant::enterprise;
        settings.id_token = text("idp_id_token");
        settings.idp_token_endpoint = text("idp_token_endpoint");
        settings.idp_client_id = text("idp_client_id");
    } else if (!text("valid_jwt").empty()) {
        settings.grant = auth::OAuthSettings::Grant::jwt_bearer;
        settings.assertion = text("valid_jwt");
    }
    auto authorizer = std::make_shared<auth::OAuthAuthorizer>(ex, "conformance", r.url, std::move(settings), nullptr);
    authorizer->set_user_agent(std::make_shared<auth::HeadlessUserAgent>(ex, "http://localhost:3000/callback"));
    return authorizer;
}

asio::awaitable<void> run(Run& r) {
    auto ex = co_await asio::this_coro::executor;
    transport::HttpClientOptions http;
    http.server_name = "conformance";
    http.authorizer = make_authorizer(ex, r);
    auto channel = transport::make_streamable_http_channel(ex, r.url, http);

    mcp::ClientOptions options;
    options.server_name = "conformance";
    options.client_info = mcp::Implementation{"switchboard-conformance-client", SWITCHBOARD_VERSION, "Switchboard"};
    options.handlers = generic_handlers();
    auto connected = co_await mcp::ClientSession::connect(ex, channel, std::move(options));
    if (!connected) {
        fmt::print(stderr, "connect failed: {}\n", connected.error().message);
        co_return;
    }
    auto session = *connected;
    bool ok = true;
    auto fail = [&](std::string_view what, const jsonrpc::Error& e) {
        fmt::print(stderr, "{} failed: {}\n", what, e.message);
        ok = false;
    };

    auto tools = co_await session->list_tools();
    if (!tools) fail("tools/list", tools.error());
    const bool list_only = r.scenario == "initialize" || r.scenario == "json-schema-ref-no-deref";
    if (tools && !list_only && !r.context_calls.empty()) {
        // The scenario names the calls to make (MCP_CONFORMANCE_CONTEXT {"toolCalls": [{name, arguments}]}).
        for (const auto& c : r.context_calls) {
            const auto* o = c.if_object();
            if (!o) continue;
            std::string name = mcp::string_field(*o, "name");
            json::object args;
            if (const auto* a = o->if_contains("arguments"); a && a->is_object()) args = a->get_object();
            auto called = co_await session->call_tool(name, std::move(args));
            if (!called) fail("tools/call " + name, called.error());
        }
    } else if (tools && !list_only) {
        const mcp::Tool* focal = nullptr;  // json-schema-2020-12-preservation: echo the schema we were shown
        for (const auto& t : *tools)
            if (t.name == "json_schema_2020_12_tool") focal = &t;
        for (const auto& t : *tools) {
            if (focal && &t == focal) continue;
            json::object args = sample_arguments(t.input_schema);
            if (focal && t.name == "json_schema_echo") {
                args.clear();
                args["schema"] = focal->input_schema;
            }
            auto called = co_await session->call_tool(t.name, std::move(args));
            if (!called)
                fail("tools/call " + t.name, called.error());
            else
                fmt::print("tools/call {}: {}\n", t.name, called->is_error ? "isError" : "ok");
        }
    }
    if (!list_only && session->has_capability("resources")) {
        auto resources = co_await session->list_resources();
        if (!resources)
            fail("resources/list", resources.error());
        else
            for (const auto& res : *resources) {
                auto read = co_await session->read_resource(res.uri);
                if (!read) fail("resources/read " + res.uri, read.error());
            }
    }
    if (!list_only && session->has_capability("prompts")) {
        auto prompts = co_await session->list_prompts();
        if (!prompts)
            fail("prompts/list", prompts.error());
        else
            for (const auto& p : *prompts) {
                std::map<std::string, std::string> args;
                for (const auto& a : p.arguments) args[a.name] = "test";
                auto got = co_await session->get_prompt(p.name, std::move(args));
                if (!got) fail("prompts/get " + p.name, got.error());
            }
    }
    co_await session->close();
    r.status = ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        fmt::print(stderr, "usage: {} <server-url>   (scenario in MCP_CONFORMANCE_SCENARIO)\n", argv[0]);
        return 2;
    }
    spdlog::set_level(std::getenv("SWITCHBOARD_DEBUG") ? spdlog::level::debug : spdlog::level::warn);
    Run r;
    r.url = argv[argc - 1];
    if (const char* s = std::getenv("MCP_CONFORMANCE_SCENARIO")) r.scenario = s;
    if (const char* c = std::getenv("MCP_CONFORMANCE_CONTEXT")) {
        boost::system::error_code ec;
        auto context = json::parse(c, ec);
        if (!ec && context.is_object()) r.context = context.get_object();
        if (!ec && context.is_object())
            if (const auto* calls = context.get_object().if_contains("toolCalls"); calls && calls->is_array())
                r.context_calls = calls->get_array();
    }
    asio::io_context ctx;
    asio::co_spawn(ctx, run(r), [](std::exception_ptr e) {
        if (e) std::rethrow_exception(e);
    });
    ctx.run();
    return r.status;
}
