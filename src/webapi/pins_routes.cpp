// The pins (host/tool_pins.hpp) of the servers `serve` runs: what each server offers as approved, what is held and
// why (with a diff), and approving or resetting them, as `switchboard pins` does; the lockfile is the same.
#include "routes.hpp"

#include <switchboard/host/pool.hpp>
#include <switchboard/host/tool_pins.hpp>
#include <switchboard/webapi/json_request.hpp>

#include <fmt/format.h>

namespace switchboard::webapi {

namespace json = boost::json;
namespace bhttp = http::bhttp;
using boost::asio::awaitable;

namespace {

json::object pins_json(const host::ServerPool& pool) {
    const auto& store = pool.options().pins;
    json::array servers;
    for (const auto& sc : pool.config().servers) {
        json::array held;
        for (const auto& h : pool.held(sc.name)) held.push_back(host::to_json(h));
        json::object o{{"server", sc.name}, {"held", std::move(held)}};
        o["pinned"] = store ? store->count(sc.name) : 0;
        o["known"] = store && store->knows(sc.name);
        servers.push_back(std::move(o));
    }
    json::object body;
    body["lockfile"] = store && !store->file().empty() ? json::value(store->file().string()) : json::value(nullptr);
    body["mode"] = !store ? "off" : store->strict() ? "strict" : "trust-on-first-use";
    body["servers"] = std::move(servers);
    return body;
}

awaitable<void> list_pins(PoolRef weak, http::Responder& res) {
    auto pool = lock(weak);
    co_await send_json(res, pins_json(*pool));
}

// POST /api/pins/approve {"server", "name"?, "kind"?}, /api/pins/reset {"server"}: then as GET /api/pins.
awaitable<void> change_pins(PoolRef weak, Options o, bool approve, http::ServerRequest& req, http::Responder& res) {
    const auto body = post_body(req, o->allowed_origins);
    auto pool = lock(weak);
    const auto server = required_string(body, "server");
    require_server(*pool, server);
    std::string name;
    if (const auto* n = body.if_contains("name"); n && n->is_string()) name = n->get_string();
    std::optional<host::PinKind> kind;
    if (const auto* k = body.if_contains("kind"); k && !k->is_null()) {
        kind = k->is_string() ? host::pin_kind_named(k->get_string()) : std::nullopt;
        if (!kind)
            throw http::HttpError(bhttp::status::bad_request,
                                  "\"kind\" is one of \"tool\", \"prompt\", \"resourceTemplate\"");
    }
    std::optional<jsonrpc::Error> failed;
    if (approve) {
        if (auto r = pool->approve_pins(server, name, kind); !r) failed = r.error();
    } else {
        if (auto r = pool->reset_pins(server); !r) failed = r.error();
    }
    if (failed)
        throw http::HttpError(failed->code == jsonrpc::code::invalid_params ? bhttp::status::bad_request
                                                                            : bhttp::status::internal_server_error,
                              failed->message);
    co_await send_json(res, pins_json(*pool));
}

}  // namespace

void add_pins_routes(http::Router& r, PoolRef pool, Options o) {
    using Req = http::ServerRequest;
    using Res = http::Responder;
    add_route(r, bhttp::verb::get, "/api/pins", [pool](Req&, Res& res) { return list_pins(pool, res); });
    add_route(r, bhttp::verb::post, "/api/pins/approve",
              [pool, o](Req& q, Res& res) { return change_pins(pool, o, true, q, res); });
    add_route(r, bhttp::verb::post, "/api/pins/reset",
              [pool, o](Req& q, Res& res) { return change_pins(pool, o, false, q, res); });
}

}  // namespace switchboard::webapi
