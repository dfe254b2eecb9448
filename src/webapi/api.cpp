#include <switchboard/webapi/api.hpp>

#include "routes.hpp"

#include <switchboard/host/pool.hpp>
#include <switchboard/webapi/event_stream.hpp>

#include <fmt/format.h>

namespace switchboard::webapi {

namespace bhttp = http::bhttp;

std::shared_ptr<host::ServerPool> lock(const PoolRef& pool) {
    auto p = pool.lock();
    if (!p || p->shutting_down()) throw http::HttpError(bhttp::status::service_unavailable, "the gateway is stopping");
    return p;
}

void require_server(const host::ServerPool& pool, const std::string& server) {
    if (!pool.server_config(server))
        throw http::HttpError(bhttp::status::not_found, fmt::format("no server named \"{}\"", server));
}

http::Router api_routes(PoolRef pool, Options options, std::shared_ptr<ChatService> chat) {
    http::Router r;
    add_server_routes(r, pool, options);
    add_catalog_routes(r, pool, options);
    add_chat_routes(r, pool, std::move(chat), options);
    r.add(bhttp::verb::get, "/api/events",
          [pool](http::ServerRequest&, http::Responder& res) { return serve_events(pool, res); });
    return r;
}

}  // namespace switchboard::webapi
