// What the servers offer, and using it: tools (list, call), resources (list, read), prompts (list, get), completion.
#include "routes.hpp"

#include <switchboard/host/pool.hpp>
#include <switchboard/host/tool_index.hpp>
#include <switchboard/webapi/json_request.hpp>

#include <fmt/format.h>

#include <chrono>

namespace switchboard::webapi {

namespace json = boost::json;
namespace bhttp = http::bhttp;
using boost::asio::awaitable;

namespace {

// A request that reached the server and failed there (or could not reach it): 502, naming the server.
[[noreturn]] void upstream_failed(const std::string& server, const jsonrpc::Error& e) {
    throw http::HttpError(bhttp::status::bad_gateway, fmt::format("server \"{}\": {}", server, e.describe()));
}

json::object with_server(json::object o, const std::string& server) {
    o["server"] = server;
    return o;
}

awaitable<void> tools(PoolRef weak, http::Responder& res) {
    auto pool = lock(weak);
    json::array out;
    for (const auto& s : pool->status()) {
        const auto* sc = pool->server_config(s.name);
        const auto list = pool->tools(s.name);
        if (!sc || !list) continue;
        for (const auto& t : *list) {
            auto o = with_server(t.to_json(), s.name);
            o["enabled"] = host::tool_allowed(t.name, sc->allowed_tools, sc->excluded_tools);
            out.push_back(std::move(o));
        }
    }
    json::object body;
    body["tools"] = std::move(out);
    co_await send_json(res, std::move(body));
}

awaitable<void> call_tool(PoolRef weak, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    const auto server = required_string(body, "server");
    const auto name = required_string(body, "name");
    auto arguments = optional_object(body, "arguments");
    require_server(*pool, server);
    const auto* sc = pool->server_config(server);
    if (!host::tool_allowed(name, sc->allowed_tools, sc->excluded_tools))
        throw http::HttpError(bhttp::status::forbidden,
                              fmt::format("tool \"{}\" of server \"{}\" is switched off (its allowedTools or "
                                          "excludedTools)",
                                          name, server));
    const auto started = std::chrono::steady_clock::now();
    host::ToolCallOptions options;  // the server's toolTimeoutMs
    auto result = co_await pool->call_tool(server, name, std::move(arguments), std::move(options));
    if (!result) upstream_failed(server, result.error());
    auto out = std::move(*result).to_json();
    out["durationMs"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    co_await send_json(res, std::move(out));
}

awaitable<void> resources(PoolRef weak, http::Responder& res) {
    auto pool = lock(weak);
    json::array list, templates;
    for (const auto& s : pool->status()) {
        for (const auto& r : pool->resources(s.name)) list.push_back(with_server(r.resource.raw, s.name));
        for (const auto& t : pool->resource_templates(s.name))
            templates.push_back(with_server(t.resource_template.raw, s.name));
    }
    json::object body;
    body["resources"] = std::move(list);
    body["templates"] = std::move(templates);
    co_await send_json(res, std::move(body));
}

awaitable<void> read_resource(PoolRef weak, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    const auto server = required_string(body, "server");
    const auto uri = required_string(body, "uri");
    require_server(*pool, server);
    auto result = co_await pool->read_resource(server, uri);
    if (!result) upstream_failed(server, result.error());
    co_await send_json(res, result->to_json());
}

awaitable<void> prompts(PoolRef weak, http::Responder& res) {
    auto pool = lock(weak);
    json::array list;
    for (const auto& s : pool->status())
        for (const auto& p : pool->prompts(s.name)) list.push_back(with_server(p.prompt.raw, s.name));
    json::object body;
    body["prompts"] = std::move(list);
    co_await send_json(res, std::move(body));
}

// {"k": "v"} (strings only: prompt arguments and completion context are strings in MCP).
std::map<std::string, std::string> string_map(const json::object& o, std::string_view what) {
    std::map<std::string, std::string> out;
    for (const auto& item : o) {
        if (!item.value().is_string())
            throw http::HttpError(bhttp::status::bad_request,
                                  fmt::format("{} \"{}\" must be a string", what, std::string_view(item.key())));
        out.emplace(item.key(), item.value().get_string());
    }
    return out;
}

awaitable<void> get_prompt(PoolRef weak, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    const auto server = required_string(body, "server");
    const auto name = required_string(body, "name");
    auto arguments = string_map(optional_object(body, "arguments"), "argument");
    require_server(*pool, server);
    auto result = co_await pool->get_prompt(server, name, std::move(arguments));
    if (!result) upstream_failed(server, result.error());
    json::object out = result->raw;
    out["messages"] = result->messages;
    if (!result->description.empty()) out["description"] = result->description;
    co_await send_json(res, std::move(out));
}

awaitable<void> complete(PoolRef weak, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    const auto server = required_string(body, "server");
    auto ref = optional_object(body, "ref");
    if (ref.empty()) throw http::HttpError(bhttp::status::bad_request, "\"ref\" must be a prompt or resource ref");
    const auto argument = optional_object(body, "argument");
    const auto arg_name = required_string(argument, "name");
    const auto* value = argument.if_contains("value");
    std::string arg_value = value && value->is_string() ? std::string(value->get_string()) : std::string();
    auto context = string_map(optional_object(optional_object(body, "context"), "arguments"), "context argument");
    require_server(*pool, server);
    auto result = co_await pool->complete(server, std::move(ref), arg_name, std::move(arg_value), std::move(context));
    if (!result) upstream_failed(server, result.error());
    json::array values;
    for (const auto& v : result->values) values.emplace_back(v);
    json::object completion;
    completion["values"] = std::move(values);
    if (result->total) completion["total"] = *result->total;
    completion["hasMore"] = result->has_more;
    json::object out;
    out["completion"] = std::move(completion);
    co_await send_json(res, std::move(out));
}

}  // namespace

void add_catalog_routes(http::Router& r, PoolRef pool, Options o) {
    using Req = http::ServerRequest;
    using Res = http::Responder;
    add_route(r, bhttp::verb::get, "/api/tools", [pool](Req&, Res& res) { return tools(pool, res); });
    add_route(r, bhttp::verb::post, "/api/tools/call",
              [pool, o](Req& q, Res& res) { return call_tool(pool, o, q, res); });
    add_route(r, bhttp::verb::get, "/api/resources", [pool](Req&, Res& res) { return resources(pool, res); });
    add_route(r, bhttp::verb::post, "/api/resources/read",
              [pool, o](Req& q, Res& res) { return read_resource(pool, o, q, res); });
    add_route(r, bhttp::verb::get, "/api/prompts", [pool](Req&, Res& res) { return prompts(pool, res); });
    add_route(r, bhttp::verb::post, "/api/prompts/get",
              [pool, o](Req& q, Res& res) { return get_prompt(pool, o, q, res); });
    add_route(r, bhttp::verb::post, "/api/complete", [pool, o](Req& q, Res& res) { return complete(pool, o, q, res); });
}

}  // namespace switchboard::webapi
