// `switchboard serve`: the gateway. Every configured server re-exposed as one MCP server, over Streamable HTTP (both
// eras, at /mcp) or stdio. The pool starts once for the process; each client session gets a context of its own.
#include "cli.hpp"
#include "agent_session.hpp"
#include "gateway_tools.hpp"

#include <switchboard/agent/definition.hpp>

#include <switchboard/auth/resource_server.hpp>
#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/gateway/aggregate_handler.hpp>
#include <switchboard/gateway/ops.hpp>
#include <switchboard/http/cors_proxy.hpp>
#include <switchboard/http/listener.hpp>
#include <switchboard/http/server.hpp>
#include <switchboard/mcp/version.hpp>
#include <switchboard/transport/fd_channel.hpp>
#include <switchboard/transport/http_server.hpp>
#include <switchboard/transport/param_headers.hpp>
#include <switchboard/webapi/api.hpp>
#include <switchboard/webapi/chat_service.hpp>
#include <switchboard/webapi/ui_page.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <csignal>
#include <cstdio>
#include <set>
#include <unordered_map>
#include <sys/stat.h>

namespace switchboard::cli {

namespace asio = boost::asio;
using asio::awaitable;

namespace {

constexpr std::chrono::seconds drain_deadline{10};
// After a stop signal: the drain, the pool's own shutdown deadline and the closes of the servers fit well within this.
constexpr std::chrono::seconds stop_watchdog{30};

// Waits until no tool call (or other request) is active in the pool, at most `deadline`.
awaitable<void> drain(host::ServerPool& pool, std::chrono::steady_clock::duration deadline) {
    const auto until = std::chrono::steady_clock::now() + deadline;
    asio::steady_timer timer(co_await asio::this_coro::executor);
    while (pool.active_calls() > 0 && std::chrono::steady_clock::now() < until) {
        timer.expires_after(std::chrono::milliseconds(50));
        co_await timer.async_wait(core::as_tuple_awaitable);
    }
    if (pool.active_calls() > 0)
        spdlog::warn("serve: {} call(s) still running after {} s; stopping anyway", pool.active_calls(),
                     std::chrono::duration_cast<std::chrono::seconds>(deadline).count());
}

awaitable<void> serve_stdio_session(std::shared_ptr<gateway::Gateway> gw, std::shared_ptr<jsonrpc::Channel> channel,
                                    std::shared_ptr<core::OneShotEvent> settled,
                                    std::shared_ptr<core::OneShotEvent> ended) {
    core::ScopeExit set_ended([ended] { ended->set(); });
    co_await settled->wait();
    if (!settled->is_set()) co_return;  // cancelled (stopping)
    co_await gw->serve(std::move(channel));
}

// A client session starts once the first start of the servers is over, so that its first tools/list sees them all
// (the listener, /healthz and /readyz answer before).
awaitable<void> serve_session(std::shared_ptr<gateway::Gateway> gw, std::shared_ptr<core::OneShotEvent> settled,
                              std::shared_ptr<jsonrpc::Channel> channel) {
    co_await settled->wait();
    if (!settled->is_set()) co_return;  // cancelled (stopping)
    co_await gw->serve(std::move(channel));
}

// A stateless 2026-07-28 request, answered on its own (transport::HttpServerOptions::answer), once the servers'
// first start is over like a session.
awaitable<std::string> answer_when_settled(std::shared_ptr<gateway::Gateway> gw,
                                           std::shared_ptr<core::OneShotEvent> settled, jsonrpc::Message request,
                                           std::function<void(std::string)> send) {
    co_await settled->wait();
    if (!settled->is_set()) co_return std::string();  // cancelled (stopping)
    co_return co_await gw->answer(std::move(request), std::move(send));
}

// Not a coroutine: once the servers have settled, the gateway's own coroutine is what the transport awaits.
awaitable<std::string> answer_request(const std::shared_ptr<gateway::Gateway>& gw,
                                      const std::shared_ptr<core::OneShotEvent>& settled, jsonrpc::Message request,
                                      std::function<void(std::string)> send) {
    if (settled->is_set()) return gw->answer(std::move(request), std::move(send));
    return answer_when_settled(gw, settled, std::move(request), std::move(send));
}

awaitable<void> settle(std::shared_ptr<host::ServerPool> pool, std::shared_ptr<core::OneShotEvent> settled,
                       std::shared_ptr<GatewayTools> tools, std::shared_ptr<gateway::SkillDirectory> skills) {
    co_await pool->wait_until_settled();
    report_failures(*pool);
    // Agents and skills (served skills need the servers up) become tools of every client session.
    if (tools->llm) tools->definitions = co_await all_definitions(pool);
    // The skills the gateway serves, listed once before the first client asks (its handshake declares them).
    co_await skills->listing();
    settled->set();
}

// `serve --skills`: the local skill folders run and chat would find, under names the Skills extension allows.
std::vector<gateway::LocalSkill> local_skills() {
    std::vector<gateway::LocalSkill> out;
    auto found = agent::discover(agent::DiscoveryOptions::from_environment(std::filesystem::current_path()));
    for (const auto& d : found.definitions) {
        if (d.kind != agent::Definition::Kind::skill || d.path.empty()) continue;
        if (d.name.find('_') != std::string::npos) {
            spdlog::warn("serve --skills: skill \"{}\" is not served: the Skills extension's names have no '_'",
                         d.name);
            continue;
        }
        out.push_back(gateway::LocalSkill{d.name, d.description, d.path.parent_path()});
    }
    return out;
}

awaitable<void> run_http(std::shared_ptr<transport::HttpServer> http) { co_await http->run(); }

// Live config: SIGHUP, or a change of the config file (its mtime, size or inode, polled every second), re-reads the
// file and hands it to ServerPool::apply (unchanged servers are left alone). A file that does not load is reported
// and the running config stays. One reload at a time: a change during a reload is picked up on the next tick. The
// lockfile beside it (pins: `switchboard pins approve` in another process, an edit) is read again the same way, and
// what it approves is offered at once (list_changed to every client).
class ConfigWatch : public std::enable_shared_from_this<ConfigWatch> {
public:
    static std::shared_ptr<ConfigWatch> start(asio::any_io_executor ex, std::shared_ptr<host::ServerPool> pool) {
        auto w = std::shared_ptr<ConfigWatch>(new ConfigWatch(ex, std::move(pool)));
        w->stamp_ = stamp(w->path_);
        w->pins_stamp_ = stamp(w->pins_path_);
        w->wait_signal();
        core::spawn_logged(ex, loop(w), "serve: config watch");
        return w;
    }
    void stop() {
        stopped_ = true;
        timer_.cancel();
        signals_.cancel();
    }
    /// The file was just written by us (the web API), which applies it itself: not a change to reload.
    void note_written() { stamp_ = stamp(path_); }

private:
    struct Stamp {
        bool exists = false;
        std::int64_t mtime_ns = 0, size = 0;
        std::uint64_t inode = 0;
        bool operator==(const Stamp&) const = default;
    };
    ConfigWatch(asio::any_io_executor ex, std::shared_ptr<host::ServerPool> pool)
        : pool_(std::move(pool)),
          path_(pool_->config().source),
          pins_path_(pool_->options().pins ? pool_->options().pins->file().string() : std::string()),
          timer_(ex),
          signals_(ex, SIGHUP) {}

    static Stamp stamp(const std::string& path) {
        struct ::stat st {};
        Stamp s;
        if (::stat(path.c_str(), &st) != 0) return s;
        s.exists = true;
        s.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
        s.size = st.st_size;
        s.inode = st.st_ino;
        return s;
    }

    void wait_signal() {
        signals_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec, int) {
            auto self = weak.lock();
            if (ec || !self || self->stopped_) return;
            fmt::print(stderr, "serve: SIGHUP: reloading {}\n", self->path_);
            std::fflush(stderr);
            self->hup_ = true;
            self->timer_.cancel();  // reload now
            self->wait_signal();
        });
    }

    static awaitable<void> loop(std::shared_ptr<ConfigWatch> self) {
        while (!self->stopped_) {
            self->timer_.expires_after(std::chrono::seconds(1));
            co_await self->timer_.async_wait(core::as_tuple_awaitable);
            if (self->stopped_ || self->pool_->shutting_down()) break;
            const auto now = stamp(self->path_);
            const bool changed = now != self->stamp_ && now.exists;  // a file being replaced may be gone a moment
            const auto pins_now = stamp(self->pins_path_);
            if ((pins_now != self->pins_stamp_ && pins_now.exists) || self->hup_) {
                self->pins_stamp_ = pins_now;
                self->reload_pins();
            }
            if (!changed && !self->hup_) continue;
            if (changed) fmt::print(stderr, "serve: {} changed; reloading\n", self->path_);
            self->hup_ = false;
            self->stamp_ = now;
            co_await self->reload();
        }
    }

    void reload_pins() {
        if (pins_path_.empty()) return;
        if (auto r = pool_->reload_pins(); !r)
            fmt::print(stderr, "serve: {} not reloaded, the pins in use stay: {}\n", pins_path_, r.error().message);
    }

    awaitable<void> reload() {
        std::optional<host::Config> next;
        try {
            next = host::load_config_file(path_);
        } catch (const std::exception& e) {
            fmt::print(stderr, "serve: config not reloaded, the running one stays: {}\n", e.what());
            std::fflush(stderr);
            co_return;
        }
        for (const auto& w : next->warnings) fmt::print(stderr, "serve: warning: {}\n", w);
        std::set<std::string> before, after, changed;
        for (const auto& sc : pool_->config().servers) before.insert(sc.name);
        for (const auto& sc : next->servers) {
            after.insert(sc.name);
            const auto* old = pool_->config().find(sc.name);
            if (old && !(*old == sc)) changed.insert(sc.name);
        }
        std::vector<std::string> added, removed;
        for (const auto& n : after)
            if (!before.count(n)) added.push_back(n);
        for (const auto& n : before)
            if (!after.count(n)) removed.push_back(n);
        co_await pool_->apply(std::move(*next));
        fmt::print(stderr, "serve: config reloaded: added [{}], removed [{}], changed [{}]\n", fmt::join(added, ", "),
                   fmt::join(removed, ", "), fmt::join(changed, ", "));
        std::fflush(stderr);
    }

    std::shared_ptr<host::ServerPool> pool_;
    std::string path_;
    std::string pins_path_;  // the lockfile; empty: none
    Stamp pins_stamp_;
    asio::steady_timer timer_;
    asio::signal_set signals_;
    Stamp stamp_;
    bool hup_ = false, stopped_ = false;
};

// A logfmt value: quoted (with \ and " escaped) when it holds a space, a quote or a control character.
std::string logfmt_value(std::string_view v) {
    bool plain = !v.empty();
    for (char c : v)
        if (c == ' ' || c == '"' || c == '=' || c == '\\' || static_cast<unsigned char>(c) < 0x20) plain = false;
    if (plain) return std::string(v);
    std::string out = "\"";
    for (char c : v) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20)
            out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        else
            out += c;
    }
    return out + "\"";
}

// One access log line: method, path, status, duration, session id (request or response header), bytes. Never a
// header value besides the session id (no Authorization, no Cookie), never the query (it may carry a URL).
void log_access(const http::AccessEntry& e) {
    auto session = http::header_value(e.request, "Mcp-Session-Id");
    if (session.empty()) session = std::string(e.response.sent_header("Mcp-Session-Id"));
    const double ms = std::chrono::duration<double, std::milli>(e.duration).count();
    fmt::print(stderr, "access method={} path={} status={} duration_ms={:.1f}{}{} bytes_in={} bytes_out={}\n",
               logfmt_value(std::string_view(e.request.method_string())), logfmt_value(e.path), e.response.status(), ms,
               session.empty() ? "" : " session=", session.empty() ? "" : logfmt_value(session),
               e.body_bytes, e.response.bytes_sent());
    std::fflush(stderr);
}

// Ends the process's event loop now: what is still running is dropped (each stdio server's process group is killed
// as its channel goes). Says what was still going on, so that a stop that hangs can be told apart.
void force_stop(const std::weak_ptr<host::ServerPool>& weak, const std::string& why) {
    std::string state;
    if (auto pool = weak.lock()) {
        state = fmt::format("{} call(s) active", pool->active_calls());
        for (const auto& st : pool->status())
            state += fmt::format("; {}: {}{}", st.name, to_string(st.phase),
                                 st.active_calls ? fmt::format(" ({} calls)", st.active_calls) : "");
    }
    fmt::print(stderr, "serve: {}: stopping now ({})\n", why, state);
    std::fflush(stderr);
    if (auto pool = weak.lock()) {
        pool->terminate_now();
        static_cast<asio::io_context&>(asio::query(pool->executor(), asio::execution::context)).stop();
    }
}

awaitable<int> run_gateway(Host& h, std::shared_ptr<gateway::ClientRelay> relay, ServeOptions o,
                           std::shared_ptr<asio::steady_timer> watchdog) {
    auto ex = co_await asio::this_coro::executor;
    h.main.reset();  // the gateway's clients get contexts of their own
    auto settled = std::make_shared<core::OneShotEvent>();
    auto tools = std::make_shared<GatewayTools>();
    tools->tool_search = h.pool->config().tool_search.value_or(false);
    const auto settings = endpoint_settings(h.pool->config(), AgentOptions{});
    if (settings.configured()) {
        tools->llm = std::make_shared<llm::Client>(ex, settings);
        tools->registry = std::make_shared<agent::ForkRegistry>(agent::ForkRegistry::default_dir());
    }

    gateway::GatewayOptions go;
    go.context.name = "gateway";
    go.context.allow_tools = o.tools;
    go.server.info = mcp::Implementation{"switchboard", SWITCHBOARD_VERSION, "Switchboard gateway"};
    auto metrics = std::make_shared<gateway::Metrics>();
    go.metrics = metrics;
    go.host_tools = gateway_host_tools(h.pool, tools);
    go.server.instructions =
        "Switchboard gateway: the tools, resources and prompts of several MCP servers. A name two servers share is "
        "prefixed with its server's name (server__name).";
    // The gateway's tools as a client sees them (same view, same names), for checking Mcp-Param-* headers.
    auto tool_view = host::Context::create(h.pool, go.context);
    if (o.skills) go.local_skills = local_skills();
    go.page_size = static_cast<std::size_t>(o.page_size);
    go.instance_id = o.instance_id;
    // Instances behind one balancer share it, so that each accepts the task ids the others give (docs/gateway.md).
    if (const char* key = std::getenv("SWITCHBOARD_TASK_KEY")) go.task_key = key;
    go.server.transport_principals = !o.stdio;  // HTTP names who a token belongs to; stdio has no tokens
    auto gw = gateway::Gateway::create(h.pool, relay, std::move(go));
    core::spawn_logged(ex, settle(h.pool, settled, tools, gw->skills()), "serve: first start");

    auto watch = ConfigWatch::start(ex, h.pool);
    core::ScopeExit stop_watch([watch] { watch->stop(); });

    auto stop = std::make_shared<core::OneShotEvent>();
    asio::signal_set signals(ex, SIGINT, SIGTERM);
    signals.async_wait(
        [stop, &signals, watchdog, pool = std::weak_ptr(h.pool)](const boost::system::error_code& ec, int sig) {
            if (ec) return;
            spdlog::info("serve: signal {}; stopping", sig);
            stop->set();
            // A second signal stops at once; so does a stop that takes far longer than its deadlines add up to.
            signals.async_wait([pool](const boost::system::error_code& ec2, int) {
                if (!ec2) force_stop(pool, "a second signal");
            });
            watchdog->expires_after(stop_watchdog);
            watchdog->async_wait([pool](const boost::system::error_code& ec2) {
                if (!ec2) force_stop(pool, fmt::format("still stopping after {} s", stop_watchdog.count()));
            });
        });

    if (o.stdio) {
        // --metrics-port: the operations endpoints on a listener of their own (stdout carries the one client).
        std::shared_ptr<http::Server> ops;
        if (o.metrics_port >= 0) {
            http::ServerOptions so;
            so.name = "metrics";
            so.address = o.bind;
            so.port = static_cast<std::uint16_t>(o.metrics_port);
            so.bearer_token = o.token;
            if (transport::is_loopback_address(o.bind)) so.allowed_hosts = transport::loopback_hosts();
            ops = std::make_shared<http::Server>(ex, gateway::ops_routes(h.pool, gw, metrics), std::move(so));
            if (auto ec = ops->listen()) {
                fmt::print(stderr, "switchboard serve: cannot listen on {}:{}: {}\n", o.bind, o.metrics_port,
                           ec.message());
                signals.cancel();
                co_return 1;
            }
            core::spawn_logged(ex, [ops]() -> awaitable<void> { co_await ops->run(); }, "serve: metrics");
            fmt::print(stderr, "metrics: listening on http://{}:{}/metrics\n", http::url_host(o.bind), ops->port());
        }
        core::ScopeExit stop_ops([ops] {
            if (ops) ops->stop();
        });
        auto channel = transport::make_stdio_server_channel(ex);
        core::spawn_logged(ex, serve_stdio_session(gw, channel, settled, stop), "serve: stdio session");
        fmt::print(stderr, "switchboard serve: serving one client on stdin/stdout\n");
        std::fflush(stderr);
        co_await stop->wait();  // stdin closed, or a signal
        co_await drain(*h.pool, drain_deadline);
        co_await gw->shutdown();
        co_await channel->close();
        signals.cancel();
        co_return 0;
    }

    transport::HttpServerOptions ho;
    ho.address = o.bind;
    ho.port = o.port;
    ho.path = "/mcp";
    ho.allowed_origins = o.allow_origins;
    ho.bearer_token = o.token;
    ho.cors = true;
    ho.session_id_prefix = o.instance_id;
    ho.header_timeout = std::chrono::seconds(o.header_timeout);
    ho.idle_timeout = std::chrono::seconds(o.idle_timeout);
    if (transport::is_loopback_address(o.bind)) ho.allowed_hosts = transport::loopback_hosts();
    for (auto v : mcp::legacy_versions) ho.legacy_versions.emplace_back(v);
    for (auto v : mcp::modern_versions) ho.modern_versions.emplace_back(v);
    ho.extra_routes = gateway::ops_routes(h.pool, gw, metrics);
    if (o.auth == "oauth") {
        auth::ResourceServerSettings rs;
        rs.issuer = o.issuer;
        rs.audience = o.audience;
        rs.jwks_url = o.jwks_url;
        rs.leeway = std::chrono::seconds(o.clock_skew);
        if (auto problem = auth::parse_scope_map(h.pool->config().gateway, rs.scopes); !problem.empty()) {
            fmt::print(stderr, "switchboard serve: {}: {}\n", h.pool->config().source, problem);
            co_return 2;
        }
        auto verifier = std::make_shared<auth::JwtVerifier>(ex, std::move(rs));
        ho.token_verifier = verifier;
        // The Protected Resource Metadata, where MCP clients look for it (path-based and at the root).
        auto metadata = std::make_shared<const std::string>(boost::json::serialize(verifier->resource_metadata()));
        http::Handler prm = [metadata](http::ServerRequest&, http::Responder& res) -> awaitable<void> {
            http::Reply r;
            r.body = *metadata;
            co_await res.send(std::move(r));
        };
        http::RouteOptions open;
        open.requires_token = false;
        ho.extra_routes.add(http::bhttp::verb::get, verifier->metadata_path(), prm, open);
        if (verifier->metadata_path() != "/.well-known/oauth-protected-resource")
            ho.extra_routes.add(http::bhttp::verb::get, "/.well-known/oauth-protected-resource", prm, open);
    }
    auto api = std::make_shared<webapi::ApiOptions>();
    api->allowed_origins = o.allow_origins;
    api->token_required = !o.token.empty();
    api->config_written = [weak = std::weak_ptr(watch)] {
        if (auto w = weak.lock()) w->note_written();
    };
    webapi::ChatOptions chat_options;
    chat_options.llm = tools->llm;
    chat_options.settings = settings;
    chat_options.not_configured_help = llm::not_configured_help(settings);
    // The settings page changed the config's `llm`: the web chat and the gateway's agent tools take the new model.
    chat_options.model_for = [ex, tools](const host::Config& config) {
        auto next = endpoint_settings(config, AgentOptions{});
        tools->llm = next.configured() ? std::make_shared<llm::Client>(ex, next) : nullptr;
        return std::make_pair(next, tools->llm);
    };
    chat_options.definitions = [tools] { return tools->definitions; };  // filled once the servers settled
    chat_options.registry = tools->registry;
    chat_options.db = o.db.empty() ? store::ConversationStore::default_path() : std::filesystem::path(o.db);
    // What a server asks during a web page's call goes to that page; when nobody calls it, roots come from the config.
    chat_options.asks = webapi::PageAsks::create(relay, h.pool, std::chrono::minutes(5));
    relay->set_fallback(chat_options.asks->fallback());
    auto chats = webapi::ChatService::create(h.pool, std::move(chat_options));
    ho.extra_routes.add_all(webapi::api_routes(h.pool, api, chats));
    ho.extra_routes.add_all(webapi::ui_routes());
    // A tool's Mcp-Param-* headers, read from its schema once per index (every stateless tools/call asks; copying
    // and reading the schema each time cost about 7 k instructions a call). The index keeps the tools alive, so their
    // addresses are keys until it changes.
    struct ParamHeaderCache {
        std::shared_ptr<const host::ToolIndex> index;
        std::unordered_map<const mcp::Tool*, std::optional<std::vector<transport::ParamHeader>>> by_tool;
    };
    ho.tool_param_headers = [tool_view, cache = std::make_shared<ParamHeaderCache>()](
                                std::string_view name) -> std::optional<std::vector<transport::ParamHeader>> {
        auto index = tool_view->tool_index();
        if (index != cache->index) {
            cache->by_tool.clear();
            cache->index = std::move(index);
        }
        const auto* t = cache->index->find(name);
        if (!t || !t->tool) return std::nullopt;
        auto [it, fresh] = cache->by_tool.try_emplace(t->tool);
        if (fresh) {
            auto spec = transport::parse_param_headers(boost::json::value(t->tool->input_schema));
            if (spec.error.empty()) it->second = std::move(spec.headers);
        }
        return it->second;
    };
    if (o.cors_proxy) {
        http::CorsProxyOptions cp;
        for (const auto& text : o.cors_proxy_allow) {
            std::string error;
            auto cidr = http::parse_cidr(text, error);  // checked in check_serve_options
            if (cidr) cp.policy.allow.push_back(*cidr);
        }
        ho.extra_routes.add_all(http::cors_proxy_routes(ex, std::move(cp)));
        ho.cors_extra_allow_headers = "*";
    }
    ho.access_log = [metrics, quiet = o.quiet](const http::AccessEntry& e) {
        metrics->record_http(e.response.status(), e.body_bytes, e.response.bytes_sent());
        if (!quiet) log_access(e);
    };
    auto session = [gw, settled](std::shared_ptr<jsonrpc::Channel> ch) {
        return serve_session(gw, settled, std::move(ch));
    };
    ho.answer = [gw, settled](jsonrpc::Message request, std::function<void(std::string)> send) {
        return answer_request(gw, settled, std::move(request), std::move(send));
    };
    auto http = std::make_shared<transport::HttpServer>(ex, session, ho);
    if (auto ec = http->listen()) {
        fmt::print(stderr, "switchboard serve: cannot listen on {}:{}: {}\n", o.bind, o.port, ec.message());
        signals.cancel();
        co_return 1;
    }
    core::spawn_logged(ex, run_http(http), "serve: http");
    chats->follow_stored_tasks();  // tasks of web conversations that were running when serve last stopped
    fmt::print(stderr, "listening on {}\n", http->url());
    fmt::print(stderr, "web UI: http://{}:{}/{}\n", o.bind.find(':') != std::string::npos ? "[" + o.bind + "]" : o.bind,
               http->port(), webapi::ui_built() ? "" : " (not built: run scripts/setup)");
    std::fflush(stderr);

    co_await stop->wait();
    // Graceful: no new connections; the calls in flight finish (up to the deadline); then everything ends.
    http->stop_accepting();
    co_await chats->shutdown();  // runs stopped: each keeps its completed messages
    co_await drain(*h.pool, drain_deadline);
    co_await gw->shutdown();
    http->stop();
    signals.cancel();
    co_return 0;
}

}  // namespace

std::optional<std::string> check_serve_options(ServeOptions& o) {
    if (o.token.empty())
        if (const char* t = std::getenv("SWITCHBOARD_TOKEN"); t && *t) o.token = t;
    for (const auto& text : o.cors_proxy_allow) {
        std::string error;
        if (!http::parse_cidr(text, error)) return fmt::format("--cors-proxy-allow: {}", error);
    }
    if (!o.cors_proxy_allow.empty() && !o.cors_proxy) return std::string("--cors-proxy-allow needs --cors-proxy");
    if (o.metrics_port >= 0 && !o.stdio)
        return std::string("--metrics-port goes with --stdio (over HTTP, /metrics is on the --port listener)");
    if (!o.auth.empty() && o.auth != "oauth") return fmt::format("--auth: \"{}\" is not a mode (oauth)", o.auth);
    if (o.auth == "oauth" && (o.issuer.empty() || o.audience.empty()))
        return std::string("--auth oauth needs --issuer URL (the authorization server) and --audience URL (this "
                           "gateway's resource URL, e.g. http://127.0.0.1:3333/mcp)");
    if (o.auth.empty() && (!o.issuer.empty() || !o.audience.empty() || !o.jwks_url.empty()))
        return std::string("--issuer, --audience and --jwks-url need --auth oauth");
    if (o.stdio && !o.auth.empty()) return std::string("--auth oauth is for HTTP; --stdio has no tokens");
    if (o.stdio) return std::nullopt;
    if (!transport::is_loopback_address(o.bind) && o.token.empty() && o.auth.empty())
        return fmt::format(
            "refusing to serve on {} without a token: any machine that can reach it could use every configured "
            "server. Pass --token T (or set SWITCHBOARD_TOKEN), or bind to 127.0.0.1.",
            o.bind);
    return std::nullopt;
}

awaitable<int> serve(const host::Config& config, const GlobalOptions&, ServeOptions options) {
    std::signal(SIGPIPE, SIG_IGN);  // a client that goes away ends its session through EPIPE, not the process
    auto relay = gateway::ClientRelay::create();
    host::PoolOptions po;
    po.handlers = relay->handlers();
    po.log_level = "debug";  // every upstream log message reaches the gateway; each client's own level filters it
    // A body that is not itself a coroutine: run_gateway gets everything by value (GCC 12, lambda captures).
    auto watchdog = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor);
    core::ScopeExit stop_watchdog_timer([watchdog] { watchdog->cancel(); });
    std::function<awaitable<int>(Host&)> body = [relay, options, watchdog](Host& h) {
        return run_gateway(h, relay, options, watchdog);
    };
    // Settle::none: the listener opens at once (health checks); client sessions wait for the first start (settle()).
    co_return co_await with_host(config, Settle::none, std::move(po), std::move(body));
}

}  // namespace switchboard::cli
