// The pool's lifecycle: start, phases, connect attempts, reconnect with backoff, stop, restart, apply, shutdown.
// Leases are in pool_leases.cpp, requests in pool_requests.cpp.
#include "pool_server.hpp"

#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/host/server_connection.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

namespace switchboard::host {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using core::as_tuple_awaitable;

std::shared_ptr<const std::vector<mcp::Tool>> no_tools() {
    static const auto empty = std::make_shared<const std::vector<mcp::Tool>>();
    return empty;
}

namespace {

std::chrono::milliseconds ms(pool_clock::duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

// The phase a server rests in when nothing runs it.
Phase resting_phase(const ServerConfig& c) { return c.lazy && c.enabled ? Phase::dormant : Phase::idle; }

}  // namespace

std::string ServerStatus::lifecycle() const {
    if (!lazy || !enabled) return std::string(to_string(phase));
    if (phase == Phase::dormant || phase == Phase::idle) return "dormant";
    if (is_starting(phase)) return "loading";
    if (phase == Phase::connected) return leases > 0 ? "active" : "warm";
    return std::string(to_string(phase));
}

// ---------------------------------------------------------------------------------------------------------------
// Construction, status

ServerPool::ServerPool(asio::any_io_executor ex, Config config, PoolOptions options)
    : ex_(std::move(ex)),
      config_(std::move(config)),
      options_(std::move(options)),
      cache_(options_.content_cache_bytes),
      shared_(std::make_shared<Shared>(ex_)) {
    if (!options_.token_store)
        options_.token_store = std::make_shared<auth::TokenStore>(auth::TokenStore::default_path());
    if (!options_.sandboxer) {
        auto host = SandboxHost::from_environment();
        host.own_secrets.push_back(options_.token_store->path().string());
        options_.sandboxer = std::make_shared<Sandboxer>(ex_, std::move(host));
    }
    // Refusals change a server's status: whoever shows it hears of them (the web UI's card, `status --watch`).
    options_.sandboxer->on_refused = [bus = &events_](const std::string& server, const SandboxRefusal& r) {
        bus->emit(Event::sandbox_refused(server, r.kind, r.target));
    };
}

ServerPool::~ServerPool() {
    options_.sandboxer->on_refused = nullptr;  // the sandboxer may outlive this pool (and its event bus)
}

std::shared_ptr<ServerPool> ServerPool::create(asio::any_io_executor ex, Config config, PoolOptions options) {
    std::shared_ptr<ServerPool> p(new ServerPool(std::move(ex), std::move(config), std::move(options)));
    for (const auto& sc : p->config_.servers) {
        auto s = std::make_shared<Server>();
        s->config = sc;
        s->phase = resting_phase(sc);
        p->servers_.emplace(sc.name, std::move(s));
    }
    return p;
}

std::shared_ptr<ServerPool::Server> ServerPool::find(std::string_view name) const {
    auto it = servers_.find(name);
    return it == servers_.end() ? nullptr : it->second;
}

void ServerPool::start() {
    if (started_ || stopping_) return;
    started_ = true;
    for (const auto& sc : config_.servers)
        if (auto s = find(sc.name); s && sc.enabled && !sc.lazy && s->phase == Phase::idle) launch(s);
}

std::vector<ServerStatus> ServerPool::status() const {
    std::vector<ServerStatus> out;
    for (const auto& sc : config_.servers)
        if (auto st = status(sc.name)) out.push_back(std::move(*st));
    return out;
}

std::optional<ServerStatus> ServerPool::status(std::string_view name) const {
    auto s = find(name);
    if (!s) return std::nullopt;
    ServerStatus st;
    const auto now = pool_clock::now();
    st.name = s->config.name;
    st.transport = s->config.type;
    st.enabled = s->config.enabled;
    st.lazy = s->config.lazy;
    st.phase = s->phase;
    st.time_in_phase = ms(now - s->since);
    for (int i = 0; i < phase_count; ++i) st.time_per_phase[i] = ms(s->time_in[i]);
    st.time_per_phase[static_cast<int>(s->phase)] += st.time_in_phase;
    st.last_error = s->last_error;
    for (const auto& l : s->stderr_lines) st.stderr_tail += l + "\n";
    st.era = s->era;
    if (s->session) st.protocol_version = s->session->protocol_version();
    st.tools = s->tools->size();
    st.resources = s->listing.resources.size();
    st.resource_templates = s->listing.templates.size();
    st.prompts = s->prompts.size();
    st.connect_time = s->connect_time;
    st.reconnect_attempt = s->attempt;
    st.reconnects = s->reconnects;
    st.last_lost = s->last_lost;
    st.last_lost_at = s->last_lost_at;
    // What the server is asked for: nothing of a 2025 server that does not offer logging.
    const bool logs = !s->session || s->session->era() == mcp::Era::modern || s->session->has_capability("logging");
    if (logs) st.log_level = s->log_level.empty() ? options_.log_level : s->log_level;
    st.active_calls = s->active_calls;
    st.held = s->held.size();
    if (s->config.type == TransportKind::stdio) {
        const auto& sb = *options_.sandboxer;
        if (!sb.wants(s->config)) {
            st.sandbox_layer = "unconfined";
        } else if (auto plan = sb.plan_in_force(name)) {
            st.sandbox = std::move(plan);
        } else if (auto planned = sb.plan(s->config)) {  // not started yet: what it would start with
            st.sandbox = std::move(*planned);
        } else {
            st.sandbox_error = planned.error().message;
        }
        if (st.sandbox) st.sandbox_layer = std::string(layer_name(st.sandbox->layer));
        st.sandbox_refusals = sb.refusals(name);
    }
    st.leases = s->leases;
    st.keep_warm = s->config.keep_warm;
    return st;
}

void ServerPool::set_phase(Server& s, Phase p, std::string error) {
    if (p == s.phase && error.empty()) return;
    const auto now = pool_clock::now();
    s.time_in[static_cast<int>(s.phase)] += now - s.since;
    s.since = now;
    s.phase = p;
    if (!error.empty()) s.last_error = error;
    if (p == Phase::connected) s.last_error.clear();
    s.notify();
    events_.emit(Event::phase_changed(s.config.name, p, std::move(error)));
}

ResourceListing ServerPool::make_listing(const Server& s) const {
    ResourceListing l;
    l.valid = true;
    l.fetched = pool_clock::now();
    l.ttl = options_.listing_ttl;
    if (s.session)
        if (auto ttl = s.session->list_ttl("resources/list")) l.ttl = *ttl;
    return l;
}

// ---------------------------------------------------------------------------------------------------------------
// Connecting, reconnecting, stopping

void ServerPool::launch(const std::shared_ptr<Server>& s) {
    const auto gen = ++s->gen;
    s->attempt = 0;
    s->oauth = make_authorizer(ex_, s->config, options_.token_store);
    set_phase(*s, Phase::starting);
    // The task group posts the start: co_spawn would run up to the first suspension inline, and a spawn (fork/exec)
    // blocks for a moment; start() returns at once and each server's I/O overlaps the next one's spawn.
    shared_->tasks.spawn([self = shared_from_this(), s, gen] { return self->first_start(s, gen); }, "server start");
}

awaitable<void> ServerPool::first_start(std::shared_ptr<Server> s, std::uint64_t gen) {
    // A previous process of this server that is still being stopped goes first (one process at a time).
    while (s->closing > 0 && s->gen == gen) {
        auto changed = s->changed;
        co_await changed->wait();
    }
    if (s->gen != gen || stopping_) co_return;
    auto attempt = co_await connect_attempt(s, gen);
    if (s->gen != gen || stopping_ || attempt.result != Attempt::Result::failed) co_return;
    if (needs_login(*s)) {
        set_phase(*s, Phase::needs_auth, s->oauth->problem());
        co_await await_login(s, gen);
        co_return;
    }
    // A first start that fails is final: a wrong command or URL does not fix itself (apply/restart try again).
    set_phase(*s, Phase::error, attempt.error);
}

awaitable<ServerPool::Attempt> ServerPool::connect_attempt(std::shared_ptr<Server> s, std::uint64_t gen) {
    std::weak_ptr<ServerPool> weak = weak_from_this();
    ConnectOptions o;
    o.max_message_size = options_.max_message_size;
    o.handlers = options_.handlers;
    o.client_info = options_.client_info;
    o.known_era = s->era;
    // An attempt abandoned at its deadline keeps running in the background: it must not touch the server's phase
    // (a later attempt may have connected meanwhile), hence a token per attempt besides the server's generation.
    auto live = std::make_shared<bool>(true);
    o.on_phase = [weak, s, gen, live](Phase p) {
        auto pool = weak.lock();
        if (pool && *live && s->gen == gen && !pool->stopping_) pool->set_phase(*s, p);
    };
    o.on_notification = [weak, s, gen, live](const std::string&, const std::string& method, const json::value& params) {
        if (auto pool = weak.lock(); pool && *live) pool->handle_notification(s, gen, method, params);
    };
    o.channel_hooks.authorizer = s->oauth;
    o.channel_hooks.sandboxer = options_.sandboxer;
    o.channel_hooks.on_stderr_line = [ws = std::weak_ptr<Server>(s), weak, sandboxer = options_.sandboxer,
                                      max = options_.stderr_tail_lines](std::string_view line) {
        auto sp = ws.lock();
        if (sp) sandboxer->note_stderr(sp->config.name, line);
        if (!sp || max == 0) return;
        sp->stderr_lines.emplace_back(line.substr(0, 1000));
        while (sp->stderr_lines.size() > max) sp->stderr_lines.pop_front();
        if (auto pool = weak.lock()) pool->events_.emit(Event::stderr_line(sp->config.name, std::string(line)));
    };
    // The whole start (spawn, handshake, listings) is bounded by startupTimeoutMs. The connection runs on its own,
    // to its end, so that the deadline is kept even when giving up takes longer (closing a hung stdio server waits
    // for it to exit), and so that a result nobody takes any more (deadline passed, or this coroutine cancelled by
    // shutdown) is closed when it arrives instead of leaving a process behind.
    struct Pending {
        std::optional<ServerConnection> result;
        core::OneShotEvent done;
        bool abandoned = false;
        std::weak_ptr<jsonrpc::Channel> channel;  // open, handshake under way
    };
    auto pending = std::make_shared<Pending>();
    o.on_channel_open = [pending](const std::shared_ptr<jsonrpc::Channel>& channel) { pending->channel = channel; };
    core::spawn_logged(
        ex_,
        [ex = ex_, s, o, pending]() -> awaitable<void> {
            auto result = co_await connect_server(ex, s->config, o);
            if (pending->abandoned) {
                if (result.session) co_await result.session->close();
                co_return;
            }
            pending->result = std::move(result);
            pending->done.set();
        },
        "connect " + s->config.name);
    core::ScopeExit abandon([pending, ex = ex_] {
        pending->abandoned = true;
        if (pending->result && pending->result->session) {
            core::spawn_logged(
                ex, [session = pending->result->session] { return session->close(); },
                "closing an abandoned connection");
        } else if (auto channel = pending->channel.lock(); channel && !pending->done.is_set()) {
            // Still in the handshake: closing the channel ends it now (the attempt then closes what it got).
            core::spawn_logged(
                ex, [channel] { return channel->close(); }, "closing an abandoned connection");
        }
        pending->result.reset();
    });
    const auto began = pool_clock::now();
    const auto limit = s->config.startup_timeout + std::chrono::milliseconds(200);
    const bool finished = co_await pending->done.wait_for(limit);
    auto out_of_time = [&] {
        return fmt::format("server \"{}\" did not finish starting within {} ms (startupTimeoutMs; it was {})",
                           s->config.name, s->config.startup_timeout.count(), to_string(s->phase));
    };
    if (!finished) {
        *live = false;
        co_return Attempt::failed(out_of_time());
    }
    auto sc = std::move(*pending->result);
    pending->result.reset();
    abandon.release();
    // The handshake's own deadline (the same startupTimeoutMs) and ours end together: whichever is seen first, a
    // start that failed for time says so the same way, with the step that timed out.
    if (!sc.session && !sc.error.empty() && pool_clock::now() - began >= s->config.startup_timeout)
        sc.error = out_of_time() + ": " + sc.error;
    if (s->gen != gen || stopping_) {
        if (sc.session) co_await sc.session->close();
        co_return Attempt::stopped();
    }
    if (!sc.error.empty() || !sc.session) {
        // A listing that failed leaves the session open: close it, or its process would outlive the attempt.
        if (sc.session) co_await sc.session->close();
        co_return Attempt::failed(sc.error.empty() ? std::string("connect failed") : sc.error);
    }

    auto session = sc.session;
    s->session = session;
    s->era = session->era();
    s->listing = make_listing(*s);
    s->listing.resources = std::move(sc.resources);
    set_served(*s, std::move(sc.tools), std::move(sc.prompts), std::move(sc.resource_templates));
    s->connect_time = sc.connect_time;
    s->connected_at = pool_clock::now();

    // Restore subscriptions (a reconnect, or a subscription made while the server was away).
    std::vector<std::string> uris;
    for (const auto& [uri, holders] : s->subscriptions) uris.push_back(uri);
    for (const auto& uri : uris) {
        auto r = co_await session->subscribe(uri);
        if (!r)
            spdlog::warn("server \"{}\": re-subscribing to {} failed: {}", s->config.name, uri, r.error().describe());
        if (s->gen != gen || stopping_) {
            co_await session->close();
            co_return Attempt::stopped();
        }
    }

    const auto log_level = s->log_level.empty() ? options_.log_level : s->log_level;
    if (!log_level.empty() && (session->era() == mcp::Era::modern || session->has_capability("logging"))) {
        auto r = co_await session->set_logging_level(log_level);
        if (!r)
            spdlog::info("server \"{}\": setting the log level failed: {}", s->config.name, r.error().describe());
        if (s->gen != gen || stopping_) {
            co_await session->close();
            co_return Attempt::stopped();
        }
    }

    // A modern server sends list changes only on a subscriptions/listen stream (legacy ones send them unasked). A
    // change between our listings and the stream's acknowledgment would be lost: list again once it is open.
    if (session->era() == mcp::Era::modern && s->subscriptions.empty())
        shared_->tasks.spawn(
            [weak, s, gen, session]() -> awaitable<void> {
                auto r = co_await session->listen_for_changes();
                if (!r) {
                    // The session closing under the stream is an orderly end, not a failure.
                    if (session->is_open() && s->gen == gen)
                        spdlog::warn("server \"{}\": listening for list changes failed: {}", s->config.name,
                                     r.error().describe());
                    co_return;
                }
                auto pool = weak.lock();
                if (!pool || s->gen != gen) co_return;
                if (session->has_capability("tools", "listChanged")) co_await pool->relist(s, gen, "tools");
                if (session->has_capability("prompts", "listChanged")) co_await pool->relist(s, gen, "prompts");
                if (session->has_capability("resources", "listChanged")) co_await pool->relist(s, gen, "resources");
            },
            "listen " + s->config.name);

    session->connection().on_close([weak, s, gen](const Error& why) {
        if (auto pool = weak.lock()) pool->on_lost(s, gen, why);
    });
    set_phase(*s, Phase::connected);
    events_.emit(Event::tools_changed(s->config.name));
    events_.emit(Event::prompts_changed(s->config.name));
    events_.emit(Event::resources_changed(s->config.name));
    if (!session->is_open() && s->session == session) {
        auto why = session->connection().closed_error();
        on_lost(s, gen, why ? *why : Error::make_local(code::connection_closed, "connection closed"));
    }
    co_return Attempt::connected();
}

void ServerPool::on_lost(const std::shared_ptr<Server>& s, std::uint64_t gen, const Error& why) {
    if (s->gen != gen || stopping_ || s->phase != Phase::connected) return;
    auto old = std::move(s->session);
    s->last_error = why.describe();
    s->last_lost = s->last_error;
    s->last_lost_at = std::chrono::system_clock::now();
    spdlog::warn("server \"{}\" lost: {}", s->config.name, s->last_error);
    // Reaping the process / releasing the transport runs to its end, whoever owns the pool by then.
    if (old)
        core::spawn_logged(
            ex_, [old] { return old->close(); }, "closing a lost session");
    shared_->tasks.spawn([self = shared_from_this(), s, gen] { return self->reconnect_loop(s, gen); },
                         "reconnect " + s->config.name);
}

awaitable<void> ServerPool::reconnect_loop(std::shared_ptr<Server> s, std::uint64_t gen) {
    // Only a connection that stayed up for a while resets the count: a crash loop must reach the limit.
    if (pool_clock::now() - s->connected_at >= options_.backoff.stable_after) s->attempt = 0;
    for (;;) {
        const int limit = s->config.max_reconnect_attempts;
        if (limit > 0 && s->attempt >= limit) {
            s->listing = ResourceListing{};
            set_served(*s, std::vector<mcp::Tool>{}, std::vector<mcp::Prompt>{}, std::vector<mcp::ResourceTemplate>{});
            set_phase(*s, Phase::error,
                      fmt::format("gave up after {} reconnect attempt{}; last error: {}", s->attempt,
                                  s->attempt == 1 ? "" : "s", s->last_error));
            events_.emit(Event::tools_changed(s->config.name));
            co_return;
        }
        const auto delay = core::backoff_delay(options_.backoff, s->attempt);
        ++s->attempt;
        set_phase(*s, Phase::reconnecting, s->last_error);
        auto timer = std::make_shared<asio::steady_timer>(ex_, delay);
        s->backoff_timer = timer;
        co_await timer->async_wait(as_tuple_awaitable);
        if (s->gen != gen || stopping_) co_return;
        auto attempt = co_await connect_attempt(s, gen);
        if (s->gen != gen || stopping_) co_return;
        if (attempt.result == Attempt::Result::connected) {
            ++s->reconnects;
            spdlog::info("server \"{}\" reconnected (attempt {})", s->config.name, s->attempt);
            co_return;
        }
        s->last_error = attempt.error;
        if (needs_login(*s)) {  // the token was revoked and cannot be refreshed
            set_phase(*s, Phase::needs_auth, s->oauth->problem());
            co_await await_login(s, gen);
            co_return;
        }
    }
}

bool ServerPool::needs_login(const Server& s) const {
    return s.oauth && s.oauth->status() == auth::OAuthAuthorizer::Status::needs_login;
}

awaitable<void> ServerPool::await_login(std::shared_ptr<Server> s, std::uint64_t gen) {
    // Said once, by whoever shows the server's status (the phase carries the message): not logged here too.
    spdlog::debug("{}", s->oauth->problem());
    for (;;) {
        auto timer = std::make_shared<asio::steady_timer>(ex_, options_.login_poll);
        s->backoff_timer = timer;
        co_await timer->async_wait(as_tuple_awaitable);
        if (s->gen != gen || stopping_) co_return;
        if (!s->oauth->reload_from_store()) continue;
        spdlog::info("server \"{}\": logged in; connecting", s->config.name);
        set_phase(*s, Phase::starting);
        auto attempt = co_await connect_attempt(s, gen);
        if (s->gen != gen || stopping_ || attempt.result != Attempt::Result::failed) co_return;
        if (!needs_login(*s)) {
            set_phase(*s, Phase::error, attempt.error);
            co_return;
        }
        set_phase(*s, Phase::needs_auth, s->oauth->problem());
    }
}

awaitable<void> ServerPool::stop_server(std::shared_ptr<Server> s, Phase final_phase) {
    ++s->gen;
    if (s->backoff_timer) s->backoff_timer->cancel();
    if (s->keep_warm_timer) s->keep_warm_timer->cancel();
    auto session = std::move(s->session);
    const bool had_tools = !s->tools->empty();
    s->listing = ResourceListing{};
    set_served(*s, std::vector<mcp::Tool>{}, std::vector<mcp::Prompt>{}, std::vector<mcp::ResourceTemplate>{});
    cache_.erase_server(s->config.name);
    set_phase(*s, final_phase);
    if (had_tools) events_.emit(Event::tools_changed(s->config.name));
    if (!session) co_return;
    // The close runs to its end even when the coroutine awaiting it is cancelled (a shutdown ending a keep-warm
    // task): a process is always reaped, and the next start of this server waits for it.
    ++s->closing;
    auto done = std::make_shared<core::OneShotEvent>();
    core::spawn_logged(
        ex_,
        [s, session, done]() -> awaitable<void> {
            core::ScopeExit closed([&] {
                --s->closing;
                s->notify();
                done->set();
            });
            co_await session->close();
        },
        "closing " + s->config.name);
    co_await done->wait();
}

bool ServerPool::Server::serving() const { return phase == Phase::connected && session && session->is_open(); }

awaitable<Outcome<std::shared_ptr<ServerPool::Server>>> ServerPool::ready(std::string name) {
    std::optional<pool_clock::time_point> deadline;
    for (;;) {
        if (stopping_) co_return Error::make_local(code::connection_closed, "the host is shutting down");
        auto s = find(name);
        if (!s) co_return Error::make_local(code::invalid_params, fmt::format("no server \"{}\"", name));
        if (!deadline) deadline = pool_clock::now() + s->config.startup_timeout;
        switch (s->phase) {
        case Phase::connected:
            if (s->serving()) co_return s;
            break;
        case Phase::idle:
        case Phase::dormant:
            if (!s->config.enabled)
                co_return Error::make_local(code::connection_closed, fmt::format("server \"{}\" is disabled", name));
            launch(s);
            continue;
        case Phase::error:
            co_return Error::make_local(code::connection_closed,
                                        fmt::format("server \"{}\" is unavailable: {}", name, s->last_error));
        case Phase::needs_auth:
            co_return Error::make_local(code::connection_closed, s->last_error);
        case Phase::disconnected:
            co_return Error::make_local(code::connection_closed, fmt::format("server \"{}\" was closed", name));
        default: break;
        }
        const auto now = pool_clock::now();
        if (now >= *deadline)
            co_return Error::make_local(code::timeout,
                                        fmt::format("server \"{}\" was not ready within {} ms (phase {}{}{})", name,
                                                    s->config.startup_timeout.count(), to_string(s->phase),
                                                    s->last_error.empty() ? "" : "; last error: ", s->last_error));
        auto changed = s->changed;
        co_await changed->wait_for(*deadline - now);
    }
}

awaitable<void> ServerPool::wait_until_settled(std::vector<std::string> servers, std::chrono::milliseconds max) {
    const auto deadline = pool_clock::now() + max;
    for (;;) {
        std::shared_ptr<Server> pending;
        for (const auto& [name, s] : servers_)
            if ((is_starting(s->phase) || (s->relists > 0 && s->phase == Phase::connected)) &&
                (servers.empty() || std::find(servers.begin(), servers.end(), name) != servers.end()))
                pending = s;
        if (!pending || pool_clock::now() >= deadline) co_return;
        auto changed = pending->changed;
        co_await changed->wait_for(deadline - pool_clock::now());
    }
}

awaitable<void> ServerPool::wait_for_relists(std::chrono::milliseconds max) {
    const auto deadline = pool_clock::now() + max;
    for (;;) {
        std::shared_ptr<Server> pending;
        for (const auto& [name, s] : servers_)
            if (s->relists > 0 && s->phase == Phase::connected) pending = s;
        if (!pending || pool_clock::now() >= deadline) co_return;
        auto changed = pending->changed;
        co_await changed->wait_for(deadline - pool_clock::now());
    }
}

awaitable<void> ServerPool::wait_until_settled(std::chrono::milliseconds max) {
    std::vector<std::string> all;
    co_await wait_until_settled(all, max);
}

awaitable<void> ServerPool::wait_until_settled() { co_await wait_until_settled(std::chrono::hours(1)); }

awaitable<void> ServerPool::restart(std::string name) {
    auto s = find(name);
    if (!s || stopping_) co_return;
    co_await stop_server(s, resting_phase(s->config));
    // A request may have started it meanwhile: never start it twice. A lazy server starts again only when leased.
    const bool wanted = s->config.enabled && (!s->config.lazy || s->leases > 0);
    if (wanted && (s->phase == Phase::idle || s->phase == Phase::dormant)) launch(s);
}

awaitable<void> ServerPool::apply(Config new_config) {
    if (stopping_) co_return;
    std::vector<std::shared_ptr<Server>> to_stop;
    std::vector<std::shared_ptr<Server>> to_launch;
    std::map<std::string, std::shared_ptr<Server>, std::less<>> next;
    for (const auto& sc : new_config.servers) {
        auto old = find(sc.name);
        if (old && old->config == sc) {
            next.emplace(sc.name, old);  // untouched: its session and calls go on
            continue;
        }
        if (old) to_stop.push_back(old);
        auto s = std::make_shared<Server>();
        s->config = sc;
        s->phase = resting_phase(sc);
        if (old) {
            s->subscriptions = old->subscriptions;
            s->log_level = old->log_level;
            s->leases = old->leases;  // leases are held by name: they carry over to the new entry
        }
        next.emplace(sc.name, s);
        const bool wanted = sc.enabled && (!sc.lazy || s->leases > 0);
        if (wanted && started_) to_launch.push_back(s);
    }
    for (const auto& [name, s] : servers_)
        if (!new_config.find(name)) {
            to_stop.push_back(s);
            options_.sandboxer->release(name);
        }
    servers_ = std::move(next);
    config_ = std::move(new_config);
    // The view changed now (a removed server's own events no longer reach the contexts): an index kept from before
    // (a gateway's, shared by its stateless requests) is worked out again at once, not after the old servers stop.
    events_.emit(Event::tools_changed({}));

    std::vector<awaitable<void>> stops;
    for (auto& s : to_stop) stops.push_back(stop_server(s, Phase::disconnected));
    co_await core::run_all(std::move(stops));
    for (auto& s : to_launch)
        if (s->phase == Phase::idle || s->phase == Phase::dormant) launch(s);  // not when a request started it
    events_.emit(Event::tools_changed({}));
}

awaitable<void> ServerPool::shutdown() {
    auto shared = shared_;
    if (stopping_) {
        co_await shared->shut_down.wait();
        co_return;
    }
    stopping_ = true;
    // 1. Let active requests finish, up to the deadline.
    const auto deadline = pool_clock::now() + options_.shutdown_deadline;
    auto wait_idle = [this, shared](pool_clock::time_point until) -> awaitable<void> {
        while (active_requests_ > 0 && pool_clock::now() < until) {
            if (!shared->idle) shared->idle = std::make_shared<core::OneShotEvent>();
            auto idle = shared->idle;
            co_await idle->wait_for(until - pool_clock::now());
        }
    };
    co_await wait_idle(deadline);
    // 2. Cancel the rest: each sends notifications/cancelled to its server (flushed by the close below).
    if (active_requests_ > 0) {
        spdlog::info("shutdown: cancelling {} request(s) still running", active_requests_);
        for (auto& [name, s] : servers_)
            if (s->session) s->session->connection().cancel_requests("the host is shutting down");
        co_await wait_idle(pool_clock::now() + std::chrono::milliseconds(500));
    }
    // 3. Close every transport as its spec says, in parallel.
    std::vector<awaitable<void>> stops;
    for (auto& [name, s] : servers_) stops.push_back(stop_server(s, Phase::disconnected));
    co_await core::run_all(std::move(stops));
    // 4. Background tasks (starts, reconnects, relists, keep-warm timers) end.
    co_await shared->tasks.shutdown();
    options_.sandboxer->close();
    cache_.clear();
    events_.emit(Event::tools_changed({}));
    shared->shut_down.set();
}

void ServerPool::terminate_now() {
    stopping_ = true;
    for (auto& [name, s] : servers_)
        if (s->session) s->session->connection().terminate();
}

// ---------------------------------------------------------------------------------------------------------------
// Notifications

void ServerPool::handle_notification(const std::shared_ptr<Server>& s, std::uint64_t gen, const std::string& method,
                                     const json::value& params) {
    if (s->gen != gen || stopping_) return;
    auto spawn_relist = [&](std::string what) {
        ++s->relists;  // counted from the notification on: wait_until_settled waits for the listing
        shared_->tasks.spawn(
            [self = shared_from_this(), s, gen, what]() -> awaitable<void> {
                core::ScopeExit done([s] {
                    --s->relists;
                    s->notify();
                });
                co_await self->relist(s, gen, what);
            },
            "relist " + s->config.name);
    };
    if (method == "notifications/tools/list_changed") {
        spawn_relist("tools");
    } else if (method == "notifications/prompts/list_changed") {
        spawn_relist("prompts");
    } else if (method == "notifications/resources/list_changed") {
        s->listing.valid = false;
        spawn_relist("resources");
    } else if (method == "notifications/resources/updated") {
        const auto* p = params.if_object();
        std::string uri = p ? mcp::string_field(*p, "uri") : "";
        cache_.erase(s->config.name, uri);
        // Only for what someone holds a subscription to: an update the server sent before it saw the last holder
        // let go (a 2026-07-28 listen stream being replaced) reaches nobody.
        if (s->subscriptions.count(uri)) events_.emit(Event::resource_updated(s->config.name, std::move(uri), params));
    } else if (method == "notifications/elicitation/complete") {
        events_.emit(Event::elicitation_complete(s->config.name, params));
    } else if (method == "notifications/message") {
        if (options_.recent_log_messages > 0) {
            s->log.push_back(LogMessage{std::chrono::system_clock::now(), params});
            while (s->log.size() > options_.recent_log_messages) s->log.pop_front();
        }
        events_.emit(Event::log_message(s->config.name, params));
    }
}

awaitable<void> ServerPool::relist(std::shared_ptr<Server> s, std::uint64_t gen, std::string what) {
    auto session = s->session;
    if (!session) co_return;
    if (what == "tools") {
        auto r = co_await session->list_tools();
        if (s->gen != gen) co_return;
        if (!r) {
            spdlog::warn("server \"{}\": tools/list after list_changed failed: {}", s->config.name,
                         r.error().describe());
            co_return;
        }
        set_served(*s, std::move(*r), std::nullopt, std::nullopt);
        events_.emit(Event::tools_changed(s->config.name));
    } else if (what == "prompts") {
        auto r = co_await session->list_prompts();
        if (s->gen != gen || !r) co_return;
        set_served(*s, std::nullopt, std::move(*r), std::nullopt);
        events_.emit(Event::prompts_changed(s->config.name));
    } else {
        auto r = co_await session->list_resources();
        if (s->gen != gen || !r) co_return;
        auto t = co_await session->list_resource_templates();
        if (s->gen != gen) co_return;
        auto listing = make_listing(*s);
        listing.resources = std::move(*r);
        s->listing = std::move(listing);
        set_served(*s, std::nullopt, std::nullopt, t ? std::move(*t) : std::vector<mcp::ResourceTemplate>{});
        events_.emit(Event::resources_changed(s->config.name));
    }
}

}  // namespace switchboard::host
