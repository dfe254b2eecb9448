// Leases: acquire starts a dormant server and counts the hold; the last release stops a lazy server after its
// keepWarmSeconds. The lease count lives on the pool's entry for the server's name, so it survives apply().
#include "pool_server.hpp"

#include <switchboard/core/as_tuple.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace switchboard::host {

namespace asio = boost::asio;
using asio::awaitable;

Lease::Lease(Lease&& other) noexcept : pool_(std::move(other.pool_)), server_(std::move(other.server_)) {
    other.server_.clear();
}

Lease& Lease::operator=(Lease&& other) noexcept {
    if (this != &other) {
        release();
        pool_ = std::move(other.pool_);
        server_ = std::move(other.server_);
        other.server_.clear();
    }
    return *this;
}

Lease::~Lease() { release(); }

void Lease::release() {
    if (server_.empty()) return;
    if (auto pool = pool_.lock()) pool->release(server_);
    server_.clear();
    pool_.reset();
}

std::size_t ServerPool::leases(std::string_view server) const {
    auto s = find(server);
    return s ? s->leases : 0;
}

awaitable<Outcome<Lease>> ServerPool::acquire(std::string name) {
    if (stopping_) co_return Error::make_local(code::connection_closed, "the host is shutting down");
    auto s = find(name);
    if (!s) {
        std::vector<std::string> names;
        for (const auto& sc : config_.servers) names.push_back(sc.name);
        co_return Error::make_local(code::invalid_params,
                                    fmt::format("no server \"{}\" is configured (servers: {})", name,
                                                names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
    }
    if (!s->config.enabled)
        co_return Error::make_local(code::connection_closed, fmt::format("server \"{}\" is disabled", name));
    // Counted from now, so that a release racing with the start does not stop what this acquire is waiting for.
    Lease lease(weak_from_this(), name);
    ++s->leases;
    if (s->keep_warm_timer) s->keep_warm_timer->cancel();
    events_.emit(Event::leases_changed(name, s->leases));
    // A lazy server that failed earlier gets a new start from its next acquire (an agent run may come much later).
    if (s->config.lazy && s->phase == Phase::error && s->leases == 1) launch(s);
    auto r = co_await ready(name);
    if (!r) co_return r.error();
    co_return std::move(lease);
}

void ServerPool::release(const std::string& name) {
    auto s = find(name);
    if (!s || s->leases == 0) return;
    --s->leases;
    events_.emit(Event::leases_changed(name, s->leases));
    if (s->leases == 0 && s->config.lazy && !stopping_) keep_warm_or_stop(s);
}

void ServerPool::keep_warm_or_stop(const std::shared_ptr<Server>& s) {
    if (s->phase == Phase::dormant || s->phase == Phase::idle || s->phase == Phase::disconnected) return;
    const auto gen = s->gen;
    auto timer = std::make_shared<asio::steady_timer>(ex_, s->config.keep_warm);
    if (s->keep_warm_timer) s->keep_warm_timer->cancel();
    s->keep_warm_timer = timer;
    shared_->tasks.spawn(
        [self = shared_from_this(), s, gen, timer]() -> awaitable<void> {
            if (s->config.keep_warm.count() > 0) co_await timer->async_wait(core::as_tuple_awaitable);
            // An acquire inside the window took it again, or the server was stopped or replaced meanwhile.
            if (s->leases > 0 || s->gen != gen || self->stopping_ || s->keep_warm_timer != timer) co_return;
            s->keep_warm_timer.reset();
            spdlog::debug("server \"{}\": last lease released; stopping it", s->config.name);
            co_await self->stop_server(s, Phase::dormant);
        },
        "release " + s->config.name);
}

awaitable<Outcome<Lease>> ServerPool::lease_for_request(const std::string& server) {
    auto s = find(server);
    if (!s || !s->config.lazy) co_return Lease{};
    co_return co_await acquire(server);
}

std::optional<ServerPool::Held> ServerPool::held_at_once(const std::string& server) const {
    auto s = find(server);
    if (stopping_ || !s || s->config.lazy || !s->serving()) return std::nullopt;
    return Held{Lease{}, std::move(s)};
}

awaitable<Outcome<ServerPool::Held>> ServerPool::hold_for_request(std::string server) {
    auto lease = co_await lease_for_request(server);
    if (!lease) co_return lease.error();
    auto ready_server = co_await ready(std::move(server));
    if (!ready_server) co_return ready_server.error();
    Held held{std::move(*lease), std::move(*ready_server)};
    co_return std::move(held);
}

}  // namespace switchboard::host
