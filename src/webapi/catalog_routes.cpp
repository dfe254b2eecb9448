// What the servers offer, and using it: tools (list, call), resources (list, read), prompts (list, get), completion,
// and the catalog of the lazy servers (what a dormant one offers, listed from what it offered when it last ran).
#include "routes.hpp"

#include <switchboard/host/pool.hpp>
#include <switchboard/host/tool_catalog.hpp>
#include <switchboard/host/tool_index.hpp>
#include <switchboard/webapi/json_request.hpp>

#include <fmt/format.h>

#include <chrono>

namespace switchboard::webapi {

namespace json = boost::json;
namespace bhttp = http::bhttp;
using boost::asio::awaitable;

namespace {

// A lazy server that is not running: what the catalog recorded for its current entry when it last ran (nullopt:
// nothing). Its items are listed marked "dormant"; using one starts the server for that use (the pool leases it).
std::optional<host::CatalogEntry> dormant_entry(const host::ServerPool& pool, const host::ServerConfig& sc) {
    if (!sc.lazy || !sc.enabled || pool.phase(sc.name) == host::Phase::connected) return std::nullopt;
    auto entry = host::ToolCatalog::from_env(host::process_env()).read(sc.name);
    if (!entry || entry->config_hash != host::catalog_hash(sc)) return std::nullopt;
    return entry;
}

json::object item_json(json::object o, const std::string& server, bool dormant) {
    o["server"] = server;
    if (dormant) o["dormant"] = true;
    return o;
}

awaitable<void> tools(PoolRef weak, http::Responder& res) {
    auto pool = lock(weak);
    json::array out;
    for (const auto& sc : pool->config().servers) {
        const auto add = [&](const mcp::Tool& t, bool dormant) {
            auto o = item_json(t.to_json(), sc.name, dormant);
            o["enabled"] = host::tool_allowed(t.name, sc.allowed_tools, sc.excluded_tools);
            out.push_back(std::move(o));
        };
        if (auto entry = dormant_entry(*pool, sc)) {
            for (const auto& t : entry->tools) add(t, true);
        } else if (const auto list = pool->tools(sc.name)) {
            for (const auto& t : *list) add(t, false);
        }
    }
    json::object body;
    body["tools"] = std::move(out);
    co_await send_json(res, std::move(body));
}

awaitable<void> call_tool(PoolRef weak, std::shared_ptr<ChatService> chat, Options o, http::ServerRequest& req,
                          http::Responder& res) {
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
    if (const auto* stream = body.if_contains("stream"); stream && stream->is_bool() && stream->get_bool()) {
        co_await stream_tool_call(pool, chat, server, name, std::move(arguments), res);
        co_return;
    }
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
    for (const auto& sc : pool->config().servers) {
        if (auto entry = dormant_entry(*pool, sc)) {
            for (const auto& r : entry->resources) list.push_back(item_json(r.raw, sc.name, true));
            for (const auto& t : entry->templates) templates.push_back(item_json(t.raw, sc.name, true));
            continue;
        }
        for (const auto& r : pool->resources(sc.name)) list.push_back(item_json(r.resource.raw, sc.name, false));
        for (const auto& t : pool->resource_templates(sc.name))
            templates.push_back(item_json(t.resource_template.raw, sc.name, false));
    }
    json::object body;
    body["resources"] = std::move(list);
    body["templates"] = std::move(templates);
    co_await send_json(res, std::move(body));
}

std::int64_t unix_ms(std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// A person's read asks the server, as a browser's reload does. `"cached": true` (an app's view, loaded again) may be
// answered from the content cache, saying so: `fromCache` and `ageMs`.
awaitable<void> read_resource(PoolRef weak, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    const auto server = required_string(body, "server");
    const auto uri = required_string(body, "uri");
    require_server(*pool, server);
    if (const auto* cached = body.if_contains("cached"); cached && cached->is_bool() && cached->get_bool())
        if (auto hit = pool->cached_resource(server, uri)) {
            auto out = hit->result.to_json();
            out["fromCache"] = true;
            out["ageMs"] = hit->age.count();
            out["readAtMs"] = unix_ms(std::chrono::system_clock::now() - hit->age);
            co_await send_json(res, std::move(out));
            co_return;
        }
    auto result = co_await pool->read_resource(server, uri, host::ReadMode::fresh);
    if (!result) upstream_failed(server, result.error());
    auto out = result->to_json();
    out["fromCache"] = false;
    out["readAtMs"] = unix_ms(std::chrono::system_clock::now());
    co_await send_json(res, std::move(out));
}

awaitable<void> prompts(PoolRef weak, http::Responder& res) {
    auto pool = lock(weak);
    json::array list;
    for (const auto& sc : pool->config().servers) {
        if (auto entry = dormant_entry(*pool, sc)) {
            for (const auto& p : entry->prompts) list.push_back(item_json(p.raw, sc.name, true));
            continue;
        }
        for (const auto& p : pool->prompts(sc.name)) list.push_back(item_json(p.prompt.raw, sc.name, false));
    }
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

json::object catalog_json(const host::ServerConfig& sc, const std::optional<host::CatalogEntry>& entry) {
    json::object o{{"server", sc.name}, {"cached", bool(entry)}};
    o["current"] = entry && entry->config_hash == host::catalog_hash(sc);
    if (entry) {
        o["updated"] = entry->updated;
        o["tools"] = entry->tools.size();
        o["resources"] = entry->resources.size();
        o["templates"] = entry->templates.size();
        o["prompts"] = entry->prompts.size();
    }
    return o;
}

// GET /api/catalog: what the catalog holds for each lazy server (as `switchboard catalog --json`).
awaitable<void> catalog(PoolRef weak, http::Responder& res) {
    auto pool = lock(weak);
    const auto store = host::ToolCatalog::from_env(host::process_env());
    json::array servers;
    for (const auto& sc : pool->config().servers)
        if (sc.lazy && sc.enabled) servers.push_back(catalog_json(sc, store.read(sc.name)));
    json::object body;
    body["servers"] = std::move(servers);
    co_await send_json(res, std::move(body));
}

// POST /api/catalog/refresh {"name"}: starts a lazy server once, records what it offers, and releases it (as
// `switchboard catalog refresh NAME`).
awaitable<void> refresh_catalog(PoolRef weak, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    const auto name = required_string(body, "name");
    require_server(*pool, name);
    const auto* sc = pool->server_config(name);
    if (!sc->lazy)
        throw http::HttpError(bhttp::status::bad_request,
                              fmt::format("server \"{}\" is not lazy: its lists are live", name));
    auto lease = co_await pool->acquire(name);
    if (!lease) upstream_failed(name, lease.error());
    const auto store = host::ToolCatalog::from_env(host::process_env());
    std::string error;
    const bool saved = host::record_listing(store, *pool, *sc, true, &error);
    lease->release();
    if (!saved)
        throw http::HttpError(bhttp::status::internal_server_error,
                              fmt::format("server \"{}\": cannot record it in the catalog: {}", name, error));
    const auto* still = pool->server_config(name);  // (built before the co_await: GCC 12)
    auto out = catalog_json(still ? *still : *sc, store.read(name));
    co_await send_json(res, std::move(out));
}

}  // namespace

void add_catalog_routes(http::Router& r, PoolRef pool, std::shared_ptr<ChatService> chat, Options o) {
    using Req = http::ServerRequest;
    using Res = http::Responder;
    add_route(r, bhttp::verb::get, "/api/tools", [pool](Req&, Res& res) { return tools(pool, res); });
    add_route(r, bhttp::verb::post, "/api/tools/call",
              [pool, chat, o](Req& q, Res& res) { return call_tool(pool, chat, o, q, res); });
    add_route(r, bhttp::verb::post, "/api/tools/respond",
              [chat, o](Req& q, Res& res) { return respond_to_call(chat, o, q, res); });
    add_route(r, bhttp::verb::get, "/api/resources", [pool](Req&, Res& res) { return resources(pool, res); });
    add_route(r, bhttp::verb::post, "/api/resources/read",
              [pool, o](Req& q, Res& res) { return read_resource(pool, o, q, res); });
    add_route(r, bhttp::verb::get, "/api/prompts", [pool](Req&, Res& res) { return prompts(pool, res); });
    add_route(r, bhttp::verb::post, "/api/prompts/get",
              [pool, o](Req& q, Res& res) { return get_prompt(pool, o, q, res); });
    add_route(r, bhttp::verb::post, "/api/complete", [pool, o](Req& q, Res& res) { return complete(pool, o, q, res); });
    add_route(r, bhttp::verb::get, "/api/catalog", [pool](Req&, Res& res) { return catalog(pool, res); });
    add_route(r, bhttp::verb::post, "/api/catalog/refresh",
              [pool, o](Req& q, Res& res) { return refresh_catalog(pool, o, q, res); });
    add_route(r, bhttp::verb::get, "/api/resources/watch", [pool](Req& q, Res& res) { return watch_resource(pool, q, res); });
}

}  // namespace switchboard::webapi
