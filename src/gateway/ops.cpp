#include <switchboard/gateway/ops.hpp>

#include <switchboard/host/pool.hpp>

#include <boost/json/serialize.hpp>

namespace switchboard::gateway {

namespace json = boost::json;
namespace bhttp = boost::beast::http;
using boost::asio::awaitable;

std::vector<std::string> servers_starting(const host::ServerPool& pool) {
    std::vector<std::string> out;
    for (const auto& s : pool.status())
        if (s.enabled && !s.lazy && (s.phase == host::Phase::idle || host::is_starting(s.phase))) out.push_back(s.name);
    return out;
}

namespace {

http::Reply text_reply(bhttp::status status, std::string body, std::string content_type) {
    http::Reply r;
    r.status = status;
    r.body = std::move(body);
    r.content_type = std::move(content_type);
    r.headers.emplace_back("Cache-Control", "no-store");
    return r;
}

awaitable<void> healthz(http::Responder& res) {
    auto r = text_reply(bhttp::status::ok, "ok\n", "text/plain; charset=utf-8");
    co_await res.send(std::move(r));
}

awaitable<void> readyz(std::weak_ptr<host::ServerPool> weak, http::Responder& res) {
    auto pool = weak.lock();
    if (!pool || pool->shutting_down()) throw http::HttpError(bhttp::status::service_unavailable, "stopping");
    const auto starting = servers_starting(*pool);
    json::object body;
    body["ready"] = starting.empty();
    if (!starting.empty()) {
        json::array names;
        for (const auto& n : starting) names.emplace_back(n);
        body["starting"] = std::move(names);
    }
    auto r = text_reply(starting.empty() ? bhttp::status::ok : bhttp::status::service_unavailable,
                        json::serialize(body), "application/json");
    co_await res.send(std::move(r));
}

awaitable<void> metrics(std::weak_ptr<host::ServerPool> weak_pool, std::weak_ptr<Gateway> weak_gw,
                        std::shared_ptr<Metrics> m, http::Responder& res) {
    auto pool = weak_pool.lock();
    if (!pool) throw http::HttpError(bhttp::status::service_unavailable, "stopping");
    auto gw = weak_gw.lock();
    auto r = text_reply(bhttp::status::ok, m->render(*pool, gw ? gw->sessions() : 0),
                        "text/plain; version=0.0.4; charset=utf-8");
    co_await res.send(std::move(r));
}

}  // namespace

http::Router ops_routes(std::weak_ptr<host::ServerPool> pool, std::weak_ptr<Gateway> gateway,
                        std::shared_ptr<Metrics> m) {
    http::Router r;
    http::RouteOptions open;
    open.requires_token = false;
    // Plain lambdas that return the coroutine of a free function (its arguments by value): no capturing coroutine.
    r.add(
        bhttp::verb::get, "/healthz", [](http::ServerRequest&, http::Responder& res) { return healthz(res); }, open);
    r.add(
        bhttp::verb::get, "/readyz", [pool](http::ServerRequest&, http::Responder& res) { return readyz(pool, res); },
        open);
    r.add(bhttp::verb::get, "/metrics",
          [pool, gateway, m](http::ServerRequest&, http::Responder& res) { return metrics(pool, gateway, m, res); });
    return r;
}

}  // namespace switchboard::gateway
