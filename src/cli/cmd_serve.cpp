// `switchboard serve`: the gateway. Every configured server re-exposed as one MCP server, over Streamable HTTP (both
// eras, at /mcp) or stdio. The pool starts once for the process; each client session gets a context of its own.
#include "cli.hpp"

#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/gateway/aggregate_handler.hpp>
#include <switchboard/mcp/version.hpp>
#include <switchboard/transport/fd_channel.hpp>
#include <switchboard/transport/http_server.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <csignal>
#include <cstdio>

namespace switchboard::cli {

namespace asio = boost::asio;
using asio::awaitable;

namespace {

constexpr std::chrono::seconds drain_deadline{10};

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
                                    std::shared_ptr<core::OneShotEvent> ended) {
    core::ScopeExit set_ended([ended] { ended->set(); });
    co_await gw->serve(std::move(channel));
}

awaitable<void> run_http(std::shared_ptr<transport::HttpServer> http) { co_await http->run(); }

awaitable<int> run_gateway(Host& h, std::shared_ptr<gateway::ClientRelay> relay, ServeOptions o) {
    auto ex = co_await asio::this_coro::executor;
    report_failures(*h.pool);
    h.main.reset();  // the gateway's clients get contexts of their own

    gateway::GatewayOptions go;
    go.context.name = "gateway";
    go.context.allow_tools = o.tools;
    go.server.info = mcp::Implementation{"switchboard", SWITCHBOARD_VERSION, "Switchboard gateway"};
    go.server.instructions =
        "Switchboard gateway: the tools, resources and prompts of several MCP servers. A name two servers share is "
        "prefixed with its server's name (server__name).";
    auto gw = gateway::Gateway::create(h.pool, relay, std::move(go));

    auto stop = std::make_shared<core::OneShotEvent>();
    asio::signal_set signals(ex, SIGINT, SIGTERM);
    signals.async_wait([stop](const boost::system::error_code& ec, int sig) {
        if (ec) return;
        spdlog::info("serve: signal {}; stopping", sig);
        stop->set();
    });

    if (o.stdio) {
        auto channel = transport::make_stdio_server_channel(ex);
        core::spawn_logged(ex, serve_stdio_session(gw, channel, stop), "serve: stdio session");
        fmt::print(stderr, "switchboard serve: serving one client on stdin/stdout\n");
        std::fflush(stderr);
        co_await stop->wait();  // stdin closed, or a signal
        co_await drain(*h.pool, drain_deadline);
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
    if (transport::is_loopback_address(o.bind)) ho.allowed_hosts = transport::loopback_hosts();
    for (auto v : mcp::legacy_versions) ho.legacy_versions.emplace_back(v);
    for (auto v : mcp::modern_versions) ho.modern_versions.emplace_back(v);
    auto session = [gw](std::shared_ptr<jsonrpc::Channel> ch) { return gw->serve(std::move(ch)); };
    auto http = std::make_shared<transport::HttpServer>(ex, session, ho);
    if (auto ec = http->listen()) {
        fmt::print(stderr, "switchboard serve: cannot listen on {}:{}: {}\n", o.bind, o.port, ec.message());
        signals.cancel();
        co_return 1;
    }
    core::spawn_logged(ex, run_http(http), "serve: http");
    fmt::print(stderr, "listening on {}\n", http->url());
    std::fflush(stderr);

    co_await stop->wait();
    // Graceful: no new connections; the calls in flight finish (up to the deadline); then everything ends.
    http->stop_accepting();
    co_await drain(*h.pool, drain_deadline);
    http->stop();
    signals.cancel();
    co_return 0;
}

}  // namespace

std::optional<std::string> check_serve_options(ServeOptions& o) {
    if (o.token.empty())
        if (const char* t = std::getenv("SWITCHBOARD_TOKEN"); t && *t) o.token = t;
    if (o.stdio) return std::nullopt;
    if (!transport::is_loopback_address(o.bind) && o.token.empty())
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
    std::function<awaitable<int>(Host&)> body = [relay, options](Host& h) { return run_gateway(h, relay, options); };
    co_return co_await with_host(config, Settle::all, std::move(po), std::move(body));
}

}  // namespace switchboard::cli
