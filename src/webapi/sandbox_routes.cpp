// A confined server's "Allow" (the servers page's Sandbox section): a refused path or domain added to the server's
// entry in the config file (`sandbox.filesystem.allowWrite`, `sandbox.network.allowedDomains`), written the way the
// server form's edits are (only that entry's text changes, atomically, checked as the loader checks it), then
// applied live: the server restarts with its new policy.
#include "routes.hpp"

#include <switchboard/host/config_edit.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/webapi/json_request.hpp>

#include <fmt/format.h>

namespace switchboard::webapi {

namespace json = boost::json;
namespace bhttp = http::bhttp;
using boost::asio::awaitable;

namespace {

[[noreturn]] void sandbox_bad_request(std::string message) {
    throw http::HttpError(bhttp::status::bad_request, std::move(message));
}

// `parent[key]` as an object, created when absent (400 when it is something else).
json::object& sandbox_object_at(json::object& parent, std::string_view key, std::string_view what) {
    auto* v = parent.if_contains(key);
    if (!v) return parent[key].emplace_object();
    if (!v->is_object()) sandbox_bad_request(fmt::format("\"{}\" is not an object in the config file", what));
    return v->get_object();
}

// Adds `value` to the list `key` of `parent` (created when absent); false when it is there already.
bool sandbox_add_to_list(json::object& parent, std::string_view key, const std::string& value, std::string_view what) {
    auto* v = parent.if_contains(key);
    if (!v) v = &(parent[key] = json::array());
    if (!v->is_array()) sandbox_bad_request(fmt::format("\"{}\" is not a list in the config file", what));
    auto& list = v->get_array();
    for (const auto& item : list)
        if (item.is_string() && item.get_string() == value) return false;
    list.emplace_back(value);
    return true;
}

// POST /api/servers/sandbox/allow {"name", "kind": "path" | "domain", "value"}.
awaitable<void> sandbox_allow(PoolRef weak, Options o, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    const auto name = required_string(body, "name");
    const auto kind = required_string(body, "kind");
    std::string value;
    if (const auto* v = body.if_contains("value"); v && v->is_string()) value = v->get_string();
    const bool path = kind == "path";
    if (!path && kind != "domain") sandbox_bad_request("\"kind\" must be \"path\" or \"domain\"");
    if (value.empty() || value.find_first_of("\r\n\t") != std::string::npos)
        sandbox_bad_request(path ? "\"value\" must be the path to allow" : "\"value\" must be the domain to allow");
    const auto* sc = pool->config().find(name);
    if (!sc) sandbox_bad_request(fmt::format("no server named \"{}\"", name));
    if (sc->type != host::TransportKind::stdio)
        sandbox_bad_request(fmt::format("server \"{}\" is not a stdio server: only those are confined", name));

    const auto file = config_file(*pool);
    std::map<std::string, json::object, std::less<>> raw;
    try {
        raw = host::raw_server_entries(host::read_config_text(file), file.string());
    } catch (const host::ConfigError& e) {
        throw http::HttpError(bhttp::status::conflict, e.what());
    } catch (const std::exception& e) {
        throw http::HttpError(bhttp::status::internal_server_error, e.what());
    }
    const auto it = raw.find(name);
    if (it == raw.end()) sandbox_bad_request(fmt::format("no server named \"{}\" in {}", name, file.string()));
    auto entry = it->second;  // the rest of the entry as written (${VAR} kept)
    auto& sandbox = sandbox_object_at(entry, "sandbox", "sandbox");
    const bool added = path ? sandbox_add_to_list(sandbox_object_at(sandbox, "filesystem", "sandbox.filesystem"),
                                                  "allowWrite", value, "sandbox.filesystem.allowWrite")
                            : sandbox_add_to_list(sandbox_object_at(sandbox, "network", "sandbox.network"),
                                                  "allowedDomains", value, "sandbox.network.allowedDomains");

    if (added) {
        co_await apply_edit(pool, o, name, std::string(), std::move(entry), res);
        co_return;
    }
    auto answer = servers_json(*pool);  // already allowed: nothing written
    answer["warnings"] = json::array();
    co_await send_json(res, std::move(answer));
}

}  // namespace

void add_sandbox_routes(http::Router& r, PoolRef pool, Options o) {
    using Req = http::ServerRequest;
    using Res = http::Responder;
    add_route(r, bhttp::verb::post, "/api/servers/sandbox/allow",
              [pool, o](Req& q, Res& res) { return sandbox_allow(pool, o, q, res); });
}

}  // namespace switchboard::webapi
