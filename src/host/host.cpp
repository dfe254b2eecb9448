#include <switchboard/host/host.hpp>
#include <switchboard/host/server_connection.hpp>
#include <switchboard/jsonrpc/async_event.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <deque>
#include <set>
#include <unordered_set>

namespace switchboard::host {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using jsonrpc::Error;
namespace code = jsonrpc::code;
using clock = std::chrono::steady_clock;

namespace {

// The empty tool list every server starts with (shared: no allocation per server).
std::shared_ptr<const std::vector<mcp::Tool>> no_tools() {
    static const auto empty = std::make_shared<const std::vector<mcp::Tool>>();
    return empty;
}

constexpr auto as_tuple_awaitable = asio::as_tuple(asio::use_awaitable);

std::chrono::milliseconds ms(clock::duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d); }

// A one-shot signal with any number of waiters; adding and removing a waiter is O(1), so 10,000 concurrent calls
// can each wait on it.
class Trigger {
public:
    bool fired() const { return fired_; }
    void fire() {
        fired_ = true;
        auto waiters = waiters_;
        for (auto* t : waiters) t->cancel();
    }
    awaitable<void> wait() {
        if (fired_) co_return;
        asio::steady_timer t(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
        waiters_.insert(&t);
        co_await t.async_wait(as_tuple_awaitable);
        waiters_.erase(&t);
    }

private:
    bool fired_ = false;
    std::unordered_set<asio::steady_timer*> waiters_;
};

// Runs `f` when the scope ends (also when a coroutine frame is destroyed).
template <class F>
class ScopeExit {
public:
    explicit ScopeExit(F f) : f_(std::move(f)) {}
    ~ScopeExit() { f_(); }
    ScopeExit(const ScopeExit&) = delete;
    ScopeExit& operator=(const ScopeExit&) = delete;

private:
    F f_;
};

void log_exception(std::exception_ptr e, std::string_view what) {
    if (!e) return;
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& x) {
        spdlog::error("internal error in {}: {}", what, x.what());
    }
}

// Runs `tasks` concurrently and waits for all of them.
awaitable<void> run_all(std::vector<awaitable<void>> tasks) {
    if (tasks.empty()) co_return;
    auto ex = co_await asio::this_coro::executor;
    auto left = std::make_shared<std::size_t>(tasks.size());
    auto done = std::make_shared<jsonrpc::AsyncEvent>();
    for (auto& t : tasks)
        asio::co_spawn(ex, std::move(t), [left, done](std::exception_ptr e) {
            log_exception(e, "host task");
            if (--*left == 0) done->set();
        });
    for (bool all_done = false; !all_done;) all_done = co_await done->wait_for(std::chrono::hours(1));
}

bool is_starting(Phase p) { return p == Phase::starting || p == Phase::initializing || p == Phase::listing; }

}  // namespace

struct Host::Signals {
    Trigger cancel_calls;                       // shutdown: cancel what is still running
    std::shared_ptr<jsonrpc::AsyncEvent> idle;  // set when active_flows_ drops to 0
    jsonrpc::AsyncEvent shut_down;
};

struct Host::Server {
    ServerConfig config;
    Phase phase = Phase::idle;
    clock::time_point since = clock::now();
    std::array<clock::duration, phase_count> time_in{};
    std::string last_error;
    std::deque<std::string> stderr_lines;
    std::shared_ptr<mcp::ClientSession> session;
    std::optional<mcp::Era> era;
    std::shared_ptr<const std::vector<mcp::Tool>> tools = no_tools();  // shared with the tool index
    std::vector<mcp::Prompt> prompts;
    ResourceListing listing;
    std::set<std::string> subscriptions;
    std::uint64_t gen = 0;  // bumped by every stop/launch: coroutines of an older generation leave it alone
    int attempt = 0;
    int reconnects = 0;
    clock::time_point connected_at{};
    std::chrono::milliseconds connect_time{0};
    std::shared_ptr<jsonrpc::AsyncEvent> changed = std::make_shared<jsonrpc::AsyncEvent>();
    std::shared_ptr<asio::steady_timer> backoff_timer;
    std::size_t active_calls = 0;
};

// ---------------------------------------------------------------------------------------------------------------
// Construction, status

Host::Host(asio::any_io_executor ex, Config config, HostOptions options)
    : ex_(std::move(ex)),
      config_(std::move(config)),
      options_(std::move(options)),
      cache_(options_.content_cache_bytes),
      signals_(std::make_shared<Signals>()) {}

Host::~Host() = default;

std::shared_ptr<Host> Host::create(asio::any_io_executor ex, Config config, HostOptions options) {
    std::shared_ptr<Host> h(new Host(std::move(ex), std::move(config), std::move(options)));
    for (const auto& sc : h->config_.servers) h->servers_.emplace(sc.name, h->make_server(sc));
    return h;
}

std::shared_ptr<Host::Server> Host::make_server(const ServerConfig& config) {
    auto s = std::make_shared<Server>();
    s->config = config;
    return s;
}

std::shared_ptr<Host::Server> Host::find(std::string_view name) const {
    auto it = servers_.find(name);
    return it == servers_.end() ? nullptr : it->second;
}

void Host::start() {
    if (started_ || stopping_) return;
    started_ = true;
    for (const auto& sc : config_.servers)
        if (auto s = find(sc.name); s && sc.enabled && !sc.lazy && s->phase == Phase::idle) launch(s);
}

std::vector<ServerStatus> Host::status() const {
    std::vector<ServerStatus> out;
    for (const auto& sc : config_.servers)
        if (auto st = status(sc.name)) out.push_back(std::move(*st));
    return out;
}

std::optional<ServerStatus> Host::status(std::string_view name) const {
    auto s = find(name);
    if (!s) return std::nullopt;
    ServerStatus st;
    const auto now = clock::now();
    st.name = s->config.name;
    st.transport = s->config.type;
    st.enabled = s->config.enabled;
    st.lazy = s->config.lazy;
    st.phase = s->phase;
    st.time_in_phase = ms(now - s->since);
    for (int i = 0; i < phase_count; ++i) st.time_per_phase[i] = ms(s->time_in[i]);
    st.time_per_phase[static_cast<int>(s->phase)] += st.time_in_phase;
    st.last_error = s->last_error;
    std::string tail;
    for (const auto& l : s->stderr_lines) tail += l + "\n";
    st.stderr_tail = std::move(tail);
    st.era = s->era;
    if (s->session) st.protocol_version = s->session->protocol_version();
    st.tools = s->tools->size();
    st.resources = s->listing.resources.size();
    st.resource_templates = s->listing.templates.size();
    st.prompts = s->prompts.size();
    st.connect_time = s->connect_time;
    st.reconnect_attempt = s->attempt;
    st.reconnects = s->reconnects;
    st.active_calls = s->active_calls;
    return st;
}

void Host::set_phase(Server& s, Phase p, std::string error) {
    if (p == s.phase && error.empty()) return;
    const auto now = clock::now();
    s.time_in[static_cast<int>(s.phase)] += now - s.since;
    s.since = now;
    s.phase = p;
    if (!error.empty()) s.last_error = error;
    if (p == Phase::connected) s.last_error.clear();
    auto changed = std::move(s.changed);
    s.changed = std::make_shared<jsonrpc::AsyncEvent>();
    changed->set();
    Event e{Event::Kind::phase_changed, s.config.name, p, std::move(error), {}, {}, nullptr};
    events_.emit(e);
}

void Host::rebuild_index() {
    std::vector<ServerTools> in;
    for (const auto& [name, s] : servers_) {
        if (s->phase != Phase::connected && s->phase != Phase::reconnecting) continue;
        in.push_back(ServerTools{name, {}, s->config.allowed_tools, s->config.excluded_tools, s->tools});
    }
    index_ = ToolIndex::build(in);
    Event e{Event::Kind::tools_changed, {}, Phase::idle, {}, {}, {}, nullptr};
    events_.emit(e);
}

ResourceListing Host::make_listing(const Server& s) const {
    ResourceListing l;
    l.valid = true;
    l.fetched = clock::now();
    l.ttl = options_.listing_ttl;
    if (s.session)
        if (auto ttl = s.session->list_ttl("resources/list")) l.ttl = *ttl;
    return l;
}

// ---------------------------------------------------------------------------------------------------------------
// Connecting, reconnecting, stopping

void Host::launch(const std::shared_ptr<Server>& s) {
    const auto gen = ++s->gen;
    s->attempt = 0;
    set_phase(*s, Phase::starting);
    // Posted, not dispatched: co_spawn would run up to the first suspension inline, and a spawn (fork/exec) blocks
    // for milliseconds; start() returns at once and each server's I/O overlaps the next one's spawn.
    asio::post(ex_, [self = shared_from_this(), s, gen] {
        asio::co_spawn(self->ex_, self->first_start(s, gen),
                       [self](std::exception_ptr e) { log_exception(e, "server start"); });
    });
}

awaitable<void> Host::first_start(std::shared_ptr<Server> s, std::uint64_t gen) {
    auto error = co_await connect_attempt(s, gen);
    if (s->gen != gen || stopping_ || error.empty()) co_return;
    // A first start that fails is final: a wrong command or URL does not fix itself (apply/restart try again).
    set_phase(*s, Phase::error, error);
}

awaitable<std::string> Host::connect_attempt(std::shared_ptr<Server> s, std::uint64_t gen) {
    std::weak_ptr<Host> weak = weak_from_this();
    ConnectOptions o;
    o.max_message_size = options_.max_message_size;
    o.handlers = options_.handlers;
    o.client_info = options_.client_info;
    o.known_era = s->era;
    // An attempt abandoned at its deadline keeps running in the background: it must not touch the server's phase
    // (a later attempt may have connected meanwhile), hence a token per attempt besides the server's generation.
    auto live = std::make_shared<bool>(true);
    o.on_phase = [weak, s, gen, live](Phase p) {
        auto h = weak.lock();
        if (h && *live && s->gen == gen && !h->stopping_) h->set_phase(*s, p);
    };
    o.on_notification = [weak, s, gen, live](const std::string&, const std::string& method, const json::value& params) {
        if (auto h = weak.lock(); h && *live) h->handle_notification(s, gen, method, params);
    };
    o.channel_hooks.on_stderr_line = [ws = std::weak_ptr<Server>(s),
                                      max = options_.stderr_tail_lines](std::string_view line) {
        auto sp = ws.lock();
        if (!sp || max == 0) return;
        sp->stderr_lines.emplace_back(line.substr(0, 1000));
        while (sp->stderr_lines.size() > max) sp->stderr_lines.pop_front();
    };
    // The whole start (spawn, handshake, listings) is bounded by startupTimeoutMs. The attempt runs on its own so
    // that the deadline is kept even when giving up takes longer (closing a hung stdio server waits for it to exit);
    // a late result is closed when it arrives.
    struct Attempt {
        std::optional<ServerConnection> result;
        jsonrpc::AsyncEvent done;
    };
    auto attempt = std::make_shared<Attempt>();
    asio::co_spawn(
        ex_,
        [ex = ex_, s, o, attempt]() -> awaitable<void> {
            attempt->result = co_await connect_server(ex, s->config, o);
            attempt->done.set();
        },
        [attempt](std::exception_ptr e) {
            log_exception(e, "connect");
            attempt->done.set();
        });
    const auto limit = s->config.startup_timeout + std::chrono::milliseconds(200);
    const bool finished = co_await attempt->done.wait_for(limit);
    if (!finished || !attempt->result) {
        *live = false;
        const auto phase = s->phase;
        asio::co_spawn(
            ex_,
            [attempt]() -> awaitable<void> {
                for (bool done = attempt->done.is_set(); !done;)
                    done = co_await attempt->done.wait_for(std::chrono::hours(1));
                if (attempt->result && attempt->result->session) co_await attempt->result->session->close();
            },
            asio::detached);
        co_return fmt::format("server \"{}\" did not finish starting within {} ms (startupTimeoutMs; it was {})",
                              s->config.name, s->config.startup_timeout.count(), to_string(phase));
    }
    auto sc = std::move(*attempt->result);
    if (s->gen != gen || stopping_) {
        if (sc.session) co_await sc.session->close();
        co_return std::string("stopped");
    }
    if (sc.phase != ServerConnection::Phase::connected) {
        // A listing that failed leaves the session open: close it, or its process would outlive the attempt.
        if (sc.session) co_await sc.session->close();
        co_return sc.error.empty() ? std::string("connect failed") : sc.error;
    }

    auto session = sc.session;
    s->session = session;
    s->era = session->era();
    s->tools = std::make_shared<const std::vector<mcp::Tool>>(std::move(sc.tools));
    s->prompts = std::move(sc.prompts);
    s->listing = make_listing(*s);
    s->listing.resources = std::move(sc.resources);
    s->listing.templates = std::move(sc.resource_templates);
    s->connect_time = sc.connect_time;
    s->connected_at = clock::now();

    // Restore subscriptions (a reconnect, or a subscription made while the server was away).
    auto uris = s->subscriptions;
    for (const auto& uri : uris) {
        auto r = co_await session->subscribe(uri);
        if (!r)
            spdlog::warn("server \"{}\": re-subscribing to {} failed: {}", s->config.name, uri, r.error().describe());
        if (s->gen != gen || stopping_) {
            co_await session->close();
            co_return std::string("stopped");
        }
    }

    // A modern server sends list changes only on a subscriptions/listen stream (legacy ones send them unasked). A
    // change between our listings and the stream's acknowledgment would be lost: list again once it is open.
    if (session->era() == mcp::Era::modern && s->subscriptions.empty())
        asio::co_spawn(
            ex_,
            [weak, s, gen, session]() -> awaitable<void> {
                auto r = co_await session->listen_for_changes();
                if (!r) {
                    spdlog::warn("server \"{}\": listening for list changes failed: {}", s->config.name,
                                 r.error().describe());
                    co_return;
                }
                auto h = weak.lock();
                if (!h || s->gen != gen) co_return;
                if (session->has_capability("tools", "listChanged")) co_await h->relist(s, gen, "tools");
                if (session->has_capability("prompts", "listChanged")) co_await h->relist(s, gen, "prompts");
                if (session->has_capability("resources", "listChanged")) co_await h->relist(s, gen, "resources");
            },
            asio::detached);

    session->connection().on_close([weak, s, gen](const Error& why) {
        if (auto h = weak.lock()) h->on_lost(s, gen, why);
    });
    set_phase(*s, Phase::connected);
    rebuild_index();
    Event pe{Event::Kind::prompts_changed, s->config.name, Phase::connected, {}, {}, {}, nullptr};
    events_.emit(pe);
    Event re{Event::Kind::resources_changed, s->config.name, Phase::connected, {}, {}, {}, nullptr};
    events_.emit(re);
    if (!session->is_open() && s->session == session) {
        auto why = session->connection().closed_error();
        on_lost(s, gen, why ? *why : Error::make_local(code::connection_closed, "connection closed"));
    }
    co_return std::string();
}

void Host::on_lost(const std::shared_ptr<Server>& s, std::uint64_t gen, const Error& why) {
    if (s->gen != gen || stopping_ || s->phase != Phase::connected) return;
    auto old = std::move(s->session);
    s->last_error = why.describe();
    spdlog::warn("server \"{}\" lost: {}", s->config.name, s->last_error);
    if (old)  // reap the process / release the transport
        asio::co_spawn(
            ex_, [old]() -> awaitable<void> { co_await old->close(); }, asio::detached);
    asio::co_spawn(ex_, reconnect_loop(s, gen),
                   [self = shared_from_this()](std::exception_ptr e) { log_exception(e, "reconnect"); });
}

awaitable<void> Host::reconnect_loop(std::shared_ptr<Server> s, std::uint64_t gen) {
    // Only a connection that stayed up for a while resets the count: a crash loop must reach the limit.
    if (clock::now() - s->connected_at >= options_.backoff.stable_after) s->attempt = 0;
    for (;;) {
        const int limit = s->config.max_reconnect_attempts;
        if (limit > 0 && s->attempt >= limit) {
            s->tools = no_tools();
            s->prompts.clear();
            s->listing = ResourceListing{};
            set_phase(*s, Phase::error,
                      fmt::format("gave up after {} reconnect attempt{}; last error: {}", s->attempt,
                                  s->attempt == 1 ? "" : "s", s->last_error));
            rebuild_index();
            co_return;
        }
        const auto delay = core::backoff_delay(options_.backoff, s->attempt);
        ++s->attempt;
        set_phase(*s, Phase::reconnecting, s->last_error);
        auto timer = std::make_shared<asio::steady_timer>(ex_, delay);
        s->backoff_timer = timer;
        co_await timer->async_wait(as_tuple_awaitable);
        if (s->gen != gen || stopping_) co_return;
        auto error = co_await connect_attempt(s, gen);
        if (s->gen != gen || stopping_) co_return;
        if (error.empty()) {
            ++s->reconnects;
            spdlog::info("server \"{}\" reconnected (attempt {})", s->config.name, s->attempt);
            co_return;
        }
        s->last_error = error;
    }
}

awaitable<void> Host::stop_server(std::shared_ptr<Server> s, Phase final_phase) {
    ++s->gen;
    if (s->backoff_timer) s->backoff_timer->cancel();
    auto session = std::move(s->session);
    const bool had_tools = !s->tools->empty();
    s->tools = no_tools();
    s->prompts.clear();
    s->listing = ResourceListing{};
    cache_.erase_server(s->config.name);
    set_phase(*s, final_phase);
    if (had_tools) rebuild_index();
    if (session) co_await session->close();
}

awaitable<Outcome<std::shared_ptr<Host::Server>>> Host::ready(std::string name) {
    std::optional<clock::time_point> deadline;
    for (;;) {
        if (stopping_) co_return Error::make_local(code::connection_closed, "the host is shutting down");
        auto s = find(name);
        if (!s) co_return Error::make_local(code::invalid_params, fmt::format("no server \"{}\"", name));
        if (!deadline) deadline = clock::now() + s->config.startup_timeout;
        switch (s->phase) {
        case Phase::connected:
            if (s->session && s->session->is_open()) co_return s;
            break;
        case Phase::idle:
            if (!s->config.enabled)
                co_return Error::make_local(code::connection_closed, fmt::format("server \"{}\" is disabled", name));
            launch(s);  // lazy: started on first use
            continue;
        case Phase::error:
            co_return Error::make_local(code::connection_closed,
                                        fmt::format("server \"{}\" is unavailable: {}", name, s->last_error));
        case Phase::disconnected:
            co_return Error::make_local(code::connection_closed, fmt::format("server \"{}\" was closed", name));
        default: break;
        }
        const auto now = clock::now();
        if (now >= *deadline)
            co_return Error::make_local(code::timeout,
                                        fmt::format("server \"{}\" was not ready within {} ms (phase {}{}{})", name,
                                                    s->config.startup_timeout.count(), to_string(s->phase),
                                                    s->last_error.empty() ? "" : "; last error: ", s->last_error));
        auto changed = s->changed;
        co_await changed->wait_for(*deadline - now);
    }
}

awaitable<void> Host::wait_until_settled(std::chrono::milliseconds max) {
    const auto deadline = clock::now() + max;
    for (;;) {
        std::shared_ptr<Server> pending;
        for (const auto& [name, s] : servers_)
            if (is_starting(s->phase)) pending = s;
        if (!pending || clock::now() >= deadline) co_return;
        auto changed = pending->changed;
        co_await changed->wait_for(deadline - clock::now());
    }
}

awaitable<void> Host::restart(std::string name) {
    auto s = find(name);
    if (!s || stopping_) co_return;
    co_await stop_server(s, Phase::idle);
    // A call may have started it meanwhile (idle servers start on first use): never start it twice.
    if (s->config.enabled && s->phase == Phase::idle) launch(s);
}

awaitable<void> Host::apply(Config new_config) {
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
        auto s = make_server(sc);
        if (old) s->subscriptions = old->subscriptions;
        next.emplace(sc.name, s);
        if (sc.enabled && !sc.lazy && started_) to_launch.push_back(s);
    }
    for (const auto& [name, s] : servers_)
        if (!new_config.find(name)) to_stop.push_back(s);
    servers_ = std::move(next);
    config_ = std::move(new_config);

    std::vector<awaitable<void>> stops;
    for (auto& s : to_stop) stops.push_back(stop_server(s, Phase::disconnected));
    co_await run_all(std::move(stops));
    for (auto& s : to_launch)
        if (s->phase == Phase::idle) launch(s);  // not when a call started it during the stops
    rebuild_index();
}

awaitable<void> Host::shutdown() {
    auto signals = signals_;
    if (stopping_) {
        for (bool done = false; !done;) done = co_await signals->shut_down.wait_for(std::chrono::hours(1));
        co_return;
    }
    stopping_ = true;
    // 1. Let active calls finish, up to the deadline.
    const auto deadline = clock::now() + options_.shutdown_deadline;
    while (active_flows_ > 0 && clock::now() < deadline) {
        if (!signals->idle) signals->idle = std::make_shared<jsonrpc::AsyncEvent>();
        auto idle = signals->idle;
        co_await idle->wait_for(deadline - clock::now());
    }
    // 2. Cancel the rest: each sends notifications/cancelled to its server (flushed by the close below).
    if (active_flows_ > 0) {
        spdlog::info("shutdown: cancelling {} call(s) still running", active_flows_);
        signals->cancel_calls.fire();
        const auto grace = clock::now() + std::chrono::milliseconds(500);
        while (active_flows_ > 0 && clock::now() < grace) {
            if (!signals->idle) signals->idle = std::make_shared<jsonrpc::AsyncEvent>();
            auto idle = signals->idle;
            co_await idle->wait_for(grace - clock::now());
        }
    }
    // 3. Close every transport as its spec says, in parallel.
    std::vector<awaitable<void>> stops;
    for (auto& [name, s] : servers_) stops.push_back(stop_server(s, Phase::disconnected));
    co_await run_all(std::move(stops));
    // 4. Clear the indexes.
    index_ = ToolIndex{};
    cache_.clear();
    attachments_.clear();
    Event e{Event::Kind::tools_changed, {}, Phase::disconnected, {}, {}, {}, nullptr};
    events_.emit(e);
    signals->shut_down.set();
}

// ---------------------------------------------------------------------------------------------------------------
// Notifications

void Host::handle_notification(const std::shared_ptr<Server>& s, std::uint64_t gen, const std::string& method,
                               const json::value& params) {
    if (s->gen != gen || stopping_) return;
    auto spawn_relist = [&](std::string what) {
        asio::co_spawn(ex_, relist(s, gen, std::move(what)),
                       [self = shared_from_this()](std::exception_ptr e) { log_exception(e, "relist"); });
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
        Event e{Event::Kind::resource_updated, s->config.name, s->phase, {}, uri, {}, params};
        events_.emit(e);
    } else if (method == "notifications/message") {
        Event e{Event::Kind::log_message, s->config.name, s->phase, {}, {}, {}, params};
        events_.emit(e);
    }
}

awaitable<void> Host::relist(std::shared_ptr<Server> s, std::uint64_t gen, std::string what) {
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
        s->tools = std::make_shared<const std::vector<mcp::Tool>>(std::move(*r));
        rebuild_index();
    } else if (what == "prompts") {
        auto r = co_await session->list_prompts();
        if (s->gen != gen) co_return;
        if (!r) co_return;
        s->prompts = std::move(*r);
        Event e{Event::Kind::prompts_changed, s->config.name, s->phase, {}, {}, {}, nullptr};
        events_.emit(e);
    } else {
        auto r = co_await session->list_resources();
        if (s->gen != gen || !r) co_return;
        auto t = co_await session->list_resource_templates();
        if (s->gen != gen) co_return;
        auto listing = make_listing(*s);
        listing.resources = std::move(*r);
        if (t) listing.templates = std::move(*t);
        s->listing = std::move(listing);
        Event e{Event::Kind::resources_changed, s->config.name, s->phase, {}, {}, {}, nullptr};
        events_.emit(e);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Tools

awaitable<ToolExecutionResult> Host::execute_tool(ToolCall call, ExecuteOptions options) {
    using Status = ToolExecutionResult::Status;
    if (stopping_) co_return error_result(call, {}, "the host is shutting down; the tool was not called");
    std::string server, tool;
    auto resolve = [&] {
        if (const auto* t = index_.find(call.name)) {
            server = t->server;
            tool = t->tool->name;
            return true;
        }
        // "<server>__<tool>" names a server explicitly, even when the tool's name is unique.
        if (auto sep = call.name.find("__"); sep != std::string::npos && find(call.name.substr(0, sep))) {
            server = call.name.substr(0, sep);
            tool = call.name.substr(sep + 2);
            return true;
        }
        return false;
    };
    bool resolved = resolve();
    if (!resolved) {
        // A server still starting may bring it.
        std::chrono::milliseconds longest{0};
        for (const auto& [name, s] : servers_)
            if (is_starting(s->phase)) longest = std::max(longest, s->config.startup_timeout);
        if (longest.count() > 0) {
            co_await wait_until_settled(longest);
            resolved = resolve();
        }
    }
    if (!resolved) {
        std::vector<std::string> names;
        for (const auto& t : index_.tools()) {
            if (names.size() == 30) {
                names.push_back("...");
                break;
            }
            names.push_back(t.name);
        }
        co_return error_result(call, {},
                               fmt::format("no tool \"{}\" on any connected server (available: {})", call.name,
                                           names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))),
                               Status::unknown_tool);
    }
    std::string parse_error;
    auto args = parse_tool_arguments(call.arguments, parse_error);
    if (!args)
        co_return error_result(call, server, fmt::format("tool \"{}\" was not called: {}", call.name, parse_error),
                               Status::bad_arguments);

    std::weak_ptr<Host> weak = weak_from_this();
    auto user_progress = std::move(options.on_progress);
    options.on_progress = [weak, user_progress, id = call.id, server](const jsonrpc::Progress& p) {
        if (user_progress) user_progress(p);
        auto h = weak.lock();
        if (!h) return;
        json::object data;
        data["progress"] = p.progress;
        if (p.total) data["total"] = *p.total;
        if (!p.message.empty()) data["message"] = p.message;
        Event e{Event::Kind::progress, server, Phase::connected, p.message, {}, id, std::move(data)};
        h->events_.emit(e);
    };
    auto r = co_await call_tool(server, tool, std::move(*args), std::move(options));
    if (!r)
        co_return error_result(call, server, r.error().describe(),
                               r.error().code == code::cancelled ? Status::cancelled : Status::failed);
    co_return format_tool_result(call, server, *r);
}

awaitable<Outcome<mcp::CallToolResult>> Host::call_tool(std::string server, std::string tool, json::object arguments,
                                                        ExecuteOptions options) {
    if (stopping_) co_return Error::make_local(code::connection_closed, "the host is shutting down");
    auto signals = signals_;
    ++active_flows_;
    ScopeExit flow([this, signals] {
        if (--active_flows_ == 0 && signals->idle) {
            signals->idle->set();
            signals->idle.reset();
        }
    });
    auto ready_server = co_await ready(server);
    if (!ready_server) co_return ready_server.error();
    auto s = *ready_server;
    auto session = s->session;
    ++s->active_calls;
    ScopeExit per_server([s] { --s->active_calls; });

    mcp::CallOptions co;
    co.timeout = options.timeout.count() > 0 ? options.timeout : s->config.tool_timeout;
    co.on_progress = std::move(options.on_progress);
    using namespace asio::experimental::awaitable_operators;
    auto outcome = co_await (session->call_tool(tool, std::move(arguments), co) || signals->cancel_calls.wait());
    if (outcome.index() == 1)
        co_return Error::make_local(
            code::cancelled,
            fmt::format("server \"{}\": tools/call {} cancelled: the host is shutting down", server, tool));
    auto r = std::move(std::get<0>(outcome));
    if (!r && r.error().local &&
        (r.error().code == code::connection_closed || r.error().code == code::transport_error)) {
        Error e = r.error();
        e.message = fmt::format("server \"{}\" disconnected during the call to {} ({}); the host is reconnecting it",
                                server, tool, e.message);
        co_return e;
    }
    co_return r;
}

// ---------------------------------------------------------------------------------------------------------------
// Resources, attachments, prompts

std::vector<ResourceInfo> Host::resources() const {
    std::vector<ResourceInfo> out;
    for (const auto& sc : config_.servers)
        if (auto s = find(sc.name))
            for (const auto& r : s->listing.resources) out.push_back({sc.name, r});
    return out;
}

std::vector<ResourceTemplateInfo> Host::resource_templates() const {
    std::vector<ResourceTemplateInfo> out;
    for (const auto& sc : config_.servers)
        if (auto s = find(sc.name))
            for (const auto& t : s->listing.templates) out.push_back({sc.name, t});
    return out;
}

awaitable<Outcome<ResourceListing>> Host::list_resources(std::string server) {
    auto existing = find(server);
    if (existing && existing->phase == Phase::connected && existing->listing.fresh()) co_return existing->listing;
    auto ready_server = co_await ready(server);
    if (!ready_server) co_return ready_server.error();
    auto s = *ready_server;
    if (s->listing.fresh()) co_return s->listing;
    const auto gen = s->gen;
    auto session = s->session;
    if (!session->has_capability("resources")) {
        auto l = make_listing(*s);
        s->listing = l;
        co_return l;
    }
    auto r = co_await session->list_resources();
    if (!r) co_return r.error();
    auto t = co_await session->list_resource_templates();
    if (!t) co_return t.error();
    auto listing = make_listing(*s);
    listing.resources = std::move(*r);
    listing.templates = std::move(*t);
    if (s->gen == gen) s->listing = listing;
    co_return listing;
}

awaitable<Outcome<mcp::ReadResourceResult>> Host::read_resource(std::string server, std::string uri) {
    if (auto hit = cache_.get(server, uri)) co_return std::move(*hit);
    if (stopping_) co_return Error::make_local(code::connection_closed, "the host is shutting down");
    auto signals = signals_;
    ++active_flows_;
    ScopeExit flow([this, signals] {
        if (--active_flows_ == 0 && signals->idle) {
            signals->idle->set();
            signals->idle.reset();
        }
    });
    auto ready_server = co_await ready(server);
    if (!ready_server) co_return ready_server.error();
    auto s = *ready_server;
    mcp::CallOptions co;
    co.timeout = s->config.tool_timeout;
    auto session = s->session;  // kept alive across the await: a reconnect may drop s->session meanwhile
    auto r = co_await session->read_resource(uri, co);
    if (!r) co_return r.error();
    std::optional<std::chrono::milliseconds> ttl;
    if (const auto* t = r->raw.if_contains("ttlMs"); t && t->is_number())
        ttl = std::chrono::milliseconds(static_cast<std::int64_t>(t->to_number<double>()));
    else if (!s->subscriptions.count(uri))
        ttl = options_.content_ttl;  // no notifications will tell us it changed
    cache_.put(server, uri, *r, ttl);
    co_return std::move(*r);
}

awaitable<Outcome<void>> Host::subscribe_resource(std::string server, std::string uri) {
    auto ready_server = co_await ready(server);
    if (!ready_server) co_return ready_server.error();
    auto s = *ready_server;
    auto session = s->session;  // kept alive across the await
    if (!session->has_capability("resources", "subscribe"))
        co_return Error::make_local(code::method_not_found,
                                    fmt::format("server \"{}\" does not offer resource subscriptions", server));
    auto r = co_await session->subscribe(uri);
    if (!r) co_return r.error();
    s->subscriptions.insert(uri);
    cache_.erase(server, uri);  // cached without notifications; from now on updates invalidate it
    co_return Outcome<void>{};
}

awaitable<Outcome<void>> Host::unsubscribe_resource(std::string server, std::string uri) {
    auto s = find(server);
    if (!s) co_return Error::make_local(code::invalid_params, fmt::format("no server \"{}\"", server));
    s->subscriptions.erase(uri);
    cache_.erase(server, uri);
    if (!s->session || !s->session->is_open()) co_return Outcome<void>{};
    auto session = s->session;
    co_return co_await session->unsubscribe(uri);
}

awaitable<std::uint64_t> Host::attach_resource(std::string server, std::string uri) {
    const auto id = attachments_.add(server, uri).id;
    Event added{Event::Kind::attachments_changed, server, Phase::idle, {}, uri, {}, nullptr};
    events_.emit(added);
    auto r = co_await read_resource(server, uri);
    if (r)
        attachments_.set_content(id, std::move(*r));
    else
        attachments_.set_error(id, r.error().describe());
    Event done{Event::Kind::attachments_changed, server, Phase::idle, {}, uri, {}, nullptr};
    events_.emit(done);
    co_return id;
}

bool Host::remove_attachment(std::uint64_t id) { return attachments_.remove(id); }

std::vector<MessagePart> Host::consume_attachments() {
    auto parts = attachments_.consume();
    Event e{Event::Kind::attachments_changed, {}, Phase::idle, {}, {}, {}, nullptr};
    events_.emit(e);
    return parts;
}

std::vector<PromptInfo> Host::prompts() const {
    std::vector<PromptInfo> out;
    for (const auto& sc : config_.servers)
        if (auto s = find(sc.name))
            for (const auto& p : s->prompts) out.push_back({sc.name, p});
    return out;
}

awaitable<Outcome<mcp::GetPromptResult>> Host::get_prompt(std::string server, std::string name,
                                                          std::map<std::string, std::string> arguments) {
    auto ready_server = co_await ready(server);
    if (!ready_server) co_return ready_server.error();
    auto s = *ready_server;
    mcp::CallOptions co;
    co.timeout = s->config.tool_timeout;
    auto session = s->session;
    co_return co_await session->get_prompt(std::move(name), std::move(arguments), co);
}

awaitable<Outcome<mcp::CompleteResult>> Host::complete(std::string server, json::object ref, std::string argument,
                                                       std::string value, std::map<std::string, std::string> context) {
    auto ready_server = co_await ready(server);
    if (!ready_server) co_return ready_server.error();
    auto session = (*ready_server)->session;
    if (!session->has_capability("completions"))
        co_return Error::make_local(code::method_not_found,
                                    fmt::format("server \"{}\" does not offer argument completion", server));
    co_return co_await session->complete(std::move(ref), std::move(argument), std::move(value), std::move(context));
}

awaitable<Outcome<std::shared_ptr<mcp::ClientSession>>> Host::session(std::string server) {
    auto ready_server = co_await ready(std::move(server));
    if (!ready_server) co_return ready_server.error();
    co_return (*ready_server)->session;
}

}  // namespace switchboard::host
