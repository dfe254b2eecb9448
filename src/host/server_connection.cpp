#include <switchboard/host/server_connection.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace switchboard::host {

namespace asio = boost::asio;
using asio::awaitable;

using clock = std::chrono::steady_clock;

awaitable<ServerConnection> connect_server(asio::any_io_executor ex, const ServerConfig& config,
                                           const ConnectOptions& options) {
    ServerConnection sc;
    sc.config = &config;
    const auto start = clock::now();
    auto finish = [&](std::string error) {
        sc.connect_time = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - start);
        if (!error.empty()) {
            sc.error = std::move(error);
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
    if (options.on_channel_open) options.on_channel_open(*channel);
    if (options.on_phase) options.on_phase(Phase::initializing);

    mcp::ClientOptions co;
    co.server_name = config.name;
    co.client_info = options.client_info;
    co.connect_timeout = config.startup_timeout;
    co.request_timeout = config.startup_timeout;
    co.known_era = options.known_era;
    co.network_transport = config.type == TransportKind::stdio ? "pipe" : "tcp";
    co.handlers = options.handlers.bind(config.name);
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
    // An optional list the server declared but answers "method not found" for is an empty list and a warning: its
    // tools stay usable. Any other error fails the connection, as a broken server should.
    const auto optional_list = [&](std::string_view method, const jsonrpc::Error& e) {
        if (e.code == jsonrpc::code::method_not_found) {
            spdlog::warn(
                "server \"{}\": {} answered \"method not found\" although it declares the capability; "
                "taken as empty",
                config.name, method);
            return;
        }
        error = fmt::format("{} failed: {}", method, e.describe());
    };
    if (error.empty() && options.list_resources && s.has_capability("resources")) {
        if (auto r = co_await s.list_resources())
            sc.resources = std::move(*r);
        else
            optional_list("resources/list", r.error());
        if (error.empty()) {
            if (auto r = co_await s.list_resource_templates())
                sc.resource_templates = std::move(*r);
            else
                optional_list("resources/templates/list", r.error());
        }
    }
    if (error.empty() && options.list_prompts && s.has_capability("prompts")) {
        if (auto r = co_await s.list_prompts())
            sc.prompts = std::move(*r);
        else
            optional_list("prompts/list", r.error());
    }
    finish(std::move(error));
    co_return sc;
}

}  // namespace switchboard::host
