#include <switchboard/webapi/api.hpp>

#include "routes.hpp"

#include <switchboard/host/pool.hpp>
#include <switchboard/webapi/event_stream.hpp>

#include <boost/json/serialize.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace switchboard::webapi {

namespace bhttp = http::bhttp;
namespace json = boost::json;
using boost::asio::awaitable;

std::shared_ptr<host::ServerPool> lock(const PoolRef& pool) {
    auto p = pool.lock();
    if (!p || p->shutting_down()) throw http::HttpError(bhttp::status::service_unavailable, "the gateway is stopping");
    return p;
}

void require_server(const host::ServerPool& pool, const std::string& server) {
    if (!pool.server_config(server))
        throw http::HttpError(bhttp::status::not_found, fmt::format("no server named \"{}\"", server));
}

void upstream_failed(const std::string& server, const jsonrpc::Error& e) {
    throw http::HttpError(bhttp::status::bad_gateway, fmt::format("server \"{}\": {}", server, e.describe()));
}

namespace {

awaitable<void> guarded(http::Handler handler, http::ServerRequest& req, http::Responder& res) {
    auto status = bhttp::status::ok;
    std::string message;
    http::Fields headers;
    try {
        co_await handler(req, res);
        co_return;
    } catch (const http::HttpError& e) {
        status = e.status();
        message = e.what();
        headers = e.headers();
    } catch (const std::exception& e) {
        status = bhttp::status::internal_server_error;
        message = std::string("internal error: ") + e.what();
        spdlog::error("web api: {} {}: {}", std::string_view(req.method_string()), std::string_view(req.target()),
                      e.what());
    }
    if (res.started()) co_return;  // a stream already under way cannot turn into an error
    json::object error;
    error["status"] = static_cast<int>(status);
    error["message"] = std::move(message);
    json::object body;
    body["error"] = std::move(error);
    http::Reply r;
    r.status = status;
    r.body = json::serialize(body);
    r.headers = std::move(headers);
    r.headers.emplace_back("Cache-Control", "no-store");
    co_await res.send(std::move(r));
}

}  // namespace

void add_route(http::Router& r, bhttp::verb method, std::string path, http::Handler handler) {
    r.add(method, std::move(path), [handler = std::move(handler)](http::ServerRequest& req, http::Responder& res) {
        return guarded(handler, req, res);
    });
}

http::Router api_routes(PoolRef pool, Options options, std::shared_ptr<ChatService> chat) {
    http::Router r;
    add_server_routes(r, pool, options);
    add_catalog_routes(r, pool, chat, options);
    add_pins_routes(r, pool, options);
    add_sandbox_routes(r, pool, options);
    add_registry_routes(r, pool, options);
    add_login_routes(r, pool, options);
    add_settings_routes(r, pool, chat, options);
    add_chat_routes(r, pool, std::move(chat), options);
    add_route(r, bhttp::verb::get, "/api/events",
              [pool](http::ServerRequest&, http::Responder& res) { return serve_events(pool, res); });
    return r;
}

}  // namespace switchboard::webapi
