#include <switchboard/webapi/event_stream.hpp>

#include "routes.hpp"

#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/webapi/json_request.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/serialize.hpp>

#include <deque>
#include <set>

namespace switchboard::webapi {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

namespace {

// Log lines a slow client may fall behind by; older ones are dropped (statuses are coalesced, never dropped).
constexpr std::size_t max_queued = 1000;

// What the pool's callbacks leave for the writer.
struct Pending {
    explicit Pending(asio::any_io_executor ex) : wake(std::move(ex)) {}
    asio::steady_timer wake;
    std::set<std::string> servers;  // whose status changed
    bool all = false;               // the set of servers changed: send every one
    std::deque<std::pair<std::string, json::object>> events;
    std::size_t dropped = 0;

    bool empty() const { return servers.empty() && !all && events.empty(); }
    void push(std::string event, json::object data) {
        if (events.size() >= max_queued) {
            events.pop_front();
            ++dropped;
        }
        events.emplace_back(std::move(event), std::move(data));
    }
};

void on_event(Pending& p, const host::Event& e) {
    using K = host::Event::Kind;
    const auto named = [&](std::string_view what) {
        json::object data;
        data["server"] = e.server;
        p.push(std::string(what), std::move(data));
    };
    switch (e.kind) {
    case K::phase_changed:
    case K::leases_changed:
    case K::stderr_line:  // its status's stderrTail changed
    case K::pins_held:    // its status's held count changed
    case K::sandbox_refused:  // its status's sandbox refusals changed
        if (e.server.empty())
            p.all = true;
        else
            p.servers.insert(e.server);
        break;
    case K::tools_changed:
    case K::prompts_changed:
    case K::resources_changed:
        // Counts are part of the status; an empty name is "every server" (a config apply).
        if (e.server.empty())
            p.all = true;
        else
            p.servers.insert(e.server);
        named(e.kind == K::tools_changed ? "tools" : e.kind == K::prompts_changed ? "prompts" : "resources");
        break;
    case K::elicitation_complete: {
        // A URL-mode question's flow finished: its dialog closes.
        json::object data = e.data.is_object() ? e.data.get_object() : json::object();
        data["server"] = e.server;
        p.push("elicitation_complete", std::move(data));
        break;
    }
    case K::resource_updated: {
        json::object data{{"server", e.server}, {"uri", e.uri}};
        p.push("resource_updated", std::move(data));
        break;
    }
    case K::log_message: {
        json::object data;
        if (const auto* params = e.data.if_object()) data = *params;
        data["server"] = e.server;
        p.push("log", std::move(data));
        break;
    }
    default: return;  // progress and attachments are for the chat
    }
    p.wake.cancel();
}

bool cancelled(const asio::cancellation_state& s) { return s.cancelled() != asio::cancellation_type::none; }

// Everything pending, statuses first (they are what a badge shows).
awaitable<bool> flush(http::Responder& res, Pending& p, const host::ServerPool& pool) {
    const bool all = p.all;
    auto servers = std::move(p.servers);
    auto events = std::move(p.events);
    p.all = false;
    p.servers.clear();
    p.events.clear();
    // (No `!co_await` in a condition: GCC 12 miscompiles it.)
    if (all) {
        auto all_servers = servers_json(pool);
        const bool ok = co_await write_event(res, "servers", std::move(all_servers));
        if (!ok) co_return false;
    } else {
        for (const auto& name : servers) {
            auto status = server_json(pool, name);
            // A server that is gone: the whole list says so.
            json::object data = status ? std::move(*status) : servers_json(pool);
            const std::string_view event = status ? "server" : "servers";
            const bool ok = co_await write_event(res, event, std::move(data));
            if (!ok) co_return false;
        }
    }
    for (auto& [event, data] : events) {
        const bool ok = co_await write_event(res, event, std::move(data));
        if (!ok) co_return false;
    }
    co_return true;
}

}  // namespace

awaitable<void> serve_events(std::weak_ptr<host::ServerPool> weak, http::Responder& res) {
    auto pending = std::make_shared<Pending>(co_await asio::this_coro::executor);
    host::EventBus::Id subscription = 0;
    {
        auto pool = lock(weak);
        subscription = pool->events().subscribe([w = std::weak_ptr<Pending>(pending)](const host::Event& e) {
            if (auto p = w.lock()) on_event(*p, e);
        });
    }
    core::ScopeExit unsubscribe([weak, subscription] {
        if (auto pool = weak.lock()) pool->events().unsubscribe(subscription);
    });
    http::Fields headers;
    headers.emplace_back("Cache-Control", "no-store");
    headers.emplace_back("X-Accel-Buffering", "no");  // a reverse proxy must pass each event on at once
    const bool started = co_await res.begin_stream("text/event-stream", std::move(headers));
    if (!started) co_return;
    pending->all = true;  // the first event: every server
    for (;;) {
        if (!pending->empty()) {
            auto pool = weak.lock();
            if (!pool || pool->shutting_down()) break;
            const bool ok = co_await flush(res, *pending, *pool);
            if (!ok) co_return;
        }
        pending->wake.expires_after(event_keep_alive_every);
        auto [ec] = co_await pending->wake.async_wait(core::as_tuple_awaitable);
        const auto state = co_await asio::this_coro::cancellation_state;
        if (cancelled(state)) co_return;
        if (!ec && pending->empty()) {  // 15 s without events: a comment, which also finds a client that left
            const bool ok = co_await res.write_chunk(": keep-alive", "", "\n\n");
            if (!ok) co_return;
        }
    }
    co_await res.end_stream();
}

}  // namespace switchboard::webapi
