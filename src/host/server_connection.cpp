#include <switchboard/host/server_connection.hpp>
#include <switchboard/jsonrpc/async_event.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>

namespace switchboard::host {

namespace asio = boost::asio;
using asio::awaitable;

namespace {

using clock = std::chrono::steady_clock;

// Runs `tasks` concurrently and waits for all of them.
awaitable<void> run_all(std::vector<std::function<awaitable<void>()>> tasks) {
    auto ex = co_await asio::this_coro::executor;
    auto left = std::make_shared<std::size_t>(tasks.size());
    auto done = std::make_shared<jsonrpc::AsyncEvent>();
    if (tasks.empty()) co_return;
    for (auto& t : tasks) {
        asio::co_spawn(ex, std::move(t), [left, done](std::exception_ptr e) {
            if (e) {
                try {
                    std::rethrow_exception(e);
                } catch (const std::exception& x) {
                    spdlog::error("internal error: {}", x.what());
                }
            }
            if (--*left == 0) done->set();
        });
    }
    for (bool all_done = false; !all_done;) all_done = co_await done->wait_for(std::chrono::hours(1));
}

}  // namespace

std::string_view to_string(ServerConnection::Phase phase) {
    switch (phase) {
    case ServerConnection::Phase::connected: return "connected";
    case ServerConnection::Phase::error: return "error";
    case ServerConnection::Phase::disabled: return "disabled";
    case ServerConnection::Phase::lazy: return "lazy";
    }
    return "?";
}

awaitable<ServerConnection> connect_server(asio::any_io_executor ex, const ServerConfig& config,
                                           const ConnectOptions& options) {
    ServerConnection sc;
    sc.config = &config;
    const auto start = clock::now();
    auto finish = [&](std::string error) {
        sc.connect_time = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - start);
        if (!error.empty()) {
            sc.phase = ServerConnection::Phase::error;
            sc.error = std::move(error);
        } else {
            sc.phase = ServerConnection::Phase::connected;
        }
    };
    if (!config.invalid.empty()) {
        finish(config.invalid);
        co_return sc;
    }
    if (options.on_phase) options.on_phase(Phase::starting);
    auto channel = co_await open_channel(ex, config, options.max_message_size, options.channel_hooks);
    if (!channel) {
        finish(channel.error().message);
        co_return sc;
    }
    if (options.on_phase) options.on_phase(Phase::initializing);

    mcp::ClientOptions co;
    co.server_name = config.name;
    co.client_info = options.client_info;
    co.connect_timeout = config.startup_timeout;
    co.request_timeout = config.startup_timeout;
    co.known_era = options.known_era;
    co.handlers = options.handlers;
    if (options.on_notification)
        co.on_notification = [cb = options.on_notification, name = config.name](
                                 const std::string& m, const boost::json::value& p) { cb(name, m, p); };
    auto session = co_await mcp::ClientSession::connect(ex, *channel, std::move(co));
    if (!session) {
        finish(session.error().describe());
        co_return sc;
    }
    sc.session = *session;
    auto& s = *sc.session;
    std::string error;
    if (options.on_phase) options.on_phase(Phase::listing);
    if (options.list_tools && s.has_capability("tools")) {
        if (auto r = co_await s.list_tools())
            sc.tools = std::move(*r);
        else
            error = "tools/list failed: " + r.error().describe();
    }
    if (error.empty() && options.list_resources && s.has_capability("resources")) {
        if (auto r = co_await s.list_resources())
            sc.resources = std::move(*r);
        else
            error = "resources/list failed: " + r.error().describe();
        if (error.empty()) {
            if (auto r = co_await s.list_resource_templates())
                sc.resource_templates = std::move(*r);
            else
                error = "resources/templates/list failed: " + r.error().describe();
        }
    }
    if (error.empty() && options.list_prompts && s.has_capability("prompts")) {
        if (auto r = co_await s.list_prompts())
            sc.prompts = std::move(*r);
        else
            error = "prompts/list failed: " + r.error().describe();
    }
    finish(std::move(error));
    co_return sc;
}

awaitable<std::vector<ServerConnection>> connect_all(asio::any_io_executor ex, const Config& config,
                                                     const ConnectOptions& options) {
    std::vector<ServerConnection> out(config.servers.size());
    std::vector<std::function<awaitable<void>()>> tasks;
    for (std::size_t i = 0; i < config.servers.size(); ++i) {
        const auto& sc = config.servers[i];
        out[i].config = &sc;
        if (!sc.enabled) {
            out[i].phase = ServerConnection::Phase::disabled;
            continue;
        }
        if (sc.lazy) {
            out[i].phase = ServerConnection::Phase::lazy;
            continue;
        }
        tasks.push_back(
            [&out, i, ex, &sc, &options]() -> awaitable<void> { out[i] = co_await connect_server(ex, sc, options); });
    }
    co_await run_all(std::move(tasks));
    co_return out;
}

awaitable<void> close_all(std::vector<ServerConnection>& servers) {
    std::vector<std::function<awaitable<void>()>> tasks;
    for (auto& s : servers)
        if (s.session) tasks.push_back([session = s.session]() -> awaitable<void> { co_await session->close(); });
    co_await run_all(std::move(tasks));
}

}  // namespace switchboard::host
