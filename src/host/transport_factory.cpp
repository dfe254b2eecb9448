#include <switchboard/host/transport_factory.hpp>
#include <switchboard/transport/http_client.hpp>
#include <switchboard/transport/stdio_process.hpp>
#include <switchboard/transport/websocket.hpp>

#include <switchboard/core/text.hpp>

#include <fmt/format.h>

namespace switchboard::host {

namespace asio = boost::asio;
using asio::awaitable;
using ChannelPtr = std::shared_ptr<jsonrpc::Channel>;
using jsonrpc::Outcome;

namespace {

transport::HttpClientOptions http_options(const ServerConfig& config, std::size_t max_message_size,
                                          const ChannelHooks& hooks) {
    transport::HttpClientOptions o;
    o.server_name = config.name;
    o.headers = config.headers;
    o.max_message_size = max_message_size;
    o.ca_file = config.ca_file;
    o.connect_timeout = std::min<std::chrono::milliseconds>(o.connect_timeout, config.startup_timeout);
    o.authorizer = hooks.authorizer;
    return o;
}

}  // namespace

std::shared_ptr<auth::OAuthAuthorizer> make_authorizer(asio::any_io_executor ex, const ServerConfig& config,
                                                       std::shared_ptr<auth::TokenStore> store) {
    if (config.type == TransportKind::stdio || !config.oauth_enabled || !config.invalid.empty()) return nullptr;
    for (const auto& [k, v] : config.headers)
        if (core::iequals(k, "Authorization")) return nullptr;  // the user authorizes this server themselves
    http::ClientOptions o;
    o.ca_file = config.ca_file;
    o.connect_timeout = std::min<std::chrono::milliseconds>(o.connect_timeout, config.startup_timeout);
    o.read_timeout = config.startup_timeout;
    return std::make_shared<auth::OAuthAuthorizer>(ex, config.name, config.url, config.oauth, std::move(store), o);
}

// ${SWITCHBOARD_STATE_DIR} in the entry's arguments and environment, then the sandbox the entry asks for.
static std::optional<jsonrpc::Error> confine(const ServerConfig& config, Sandboxer* sandboxer,
                                             transport::StdioProcessOptions& po) {
    static constexpr std::string_view var = "${SWITCHBOARD_STATE_DIR}";
    std::string dir;
    const auto fill = [&](std::string& text) {
        for (auto at = text.find(var); at != std::string::npos; at = text.find(var, at + dir.size())) {
            if (dir.empty())
                dir = sandboxer ? sandboxer->state_dir(config.name)
                                : (SandboxHost::from_environment().state_root / config.name).string();
            text.replace(at, var.size(), dir);
        }
    };
    for (auto& a : po.args) fill(a);
    for (auto& [k, v] : po.env) fill(v);
    if (!config.sandbox.enabled.value_or(false) && !(sandboxer && sandboxer->host().confine_all.value_or(false)))
        return std::nullopt;
    if (!sandboxer)
        return jsonrpc::Error::make_local(jsonrpc::code::transport_error,
                                          fmt::format("server \"{}\" asks to be confined, and this host has no "
                                                      "sandbox set up",
                                                      config.name));
    if (!sandboxer->wants(config)) return std::nullopt;
    auto plan = sandboxer->wrap(config, po);
    if (!plan) return plan.error();
    return std::nullopt;
}

awaitable<Outcome<ChannelPtr>> open_channel(asio::any_io_executor ex, const ServerConfig& config,
                                            std::size_t max_message_size, const ChannelHooks& hooks) {
    if (!config.invalid.empty()) co_return jsonrpc::Error::make_local(jsonrpc::code::transport_error, config.invalid);
    switch (config.type) {
    case TransportKind::stdio: {
        transport::StdioProcessOptions po;
        po.name = config.name;
        po.command = config.command;
        po.args = config.args;
        po.env = config.env;
        po.cwd = config.cwd;
        po.max_message_size = max_message_size;
        po.on_stderr_line = hooks.on_stderr_line;
        if (auto failed = confine(config, hooks.sandboxer.get(), po)) co_return *failed;
        auto channel = transport::StdioProcessChannel::spawn(ex, std::move(po));
        if (!channel) co_return channel.error();
        co_return ChannelPtr(*channel);
    }
    case TransportKind::http:
        co_return transport::make_streamable_http_channel(ex, config.url, http_options(config, max_message_size, hooks));
    case TransportKind::sse: {
        auto channel = co_await transport::connect_sse_channel(ex, config.url, http_options(config, max_message_size, hooks));
        co_return channel;
    }
    case TransportKind::ws: {
        transport::WebSocketClientOptions wo;
        wo.server_name = config.name;
        wo.headers = config.headers;
        wo.max_message_size = max_message_size;
        wo.ca_file = config.ca_file;
        wo.connect_timeout = std::min<std::chrono::milliseconds>(wo.connect_timeout, config.startup_timeout);
        wo.authorizer = hooks.authorizer;
        auto channel = co_await transport::connect_websocket_channel(ex, config.url, std::move(wo));
        co_return channel;
    }
    }
    co_return jsonrpc::Error::make_local(
        jsonrpc::code::transport_error,
        fmt::format("the {} transport is not available in this build yet", to_string(config.type)));
}

}  // namespace switchboard::host
