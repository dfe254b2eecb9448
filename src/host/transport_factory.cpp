#include <switchboard/host/transport_factory.hpp>
#include <switchboard/transport/stdio_process.hpp>

#include <fmt/format.h>

namespace switchboard::host {

jsonrpc::Outcome<std::shared_ptr<jsonrpc::Channel>> open_channel(boost::asio::any_io_executor ex,
                                                                 const ServerConfig& config,
                                                                 std::size_t max_message_size,
                                                                 const ChannelHooks& hooks) {
    if (!config.invalid.empty()) return jsonrpc::Error::make_local(jsonrpc::code::transport_error, config.invalid);
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
        auto channel = transport::StdioProcessChannel::spawn(ex, po);
        if (!channel) return channel.error();
        return std::shared_ptr<jsonrpc::Channel>(*channel);
    }
    case TransportKind::http:
    case TransportKind::sse:
    case TransportKind::ws: break;
    }
    return jsonrpc::Error::make_local(
        jsonrpc::code::transport_error,
        fmt::format("the {} transport is not available in this build yet", to_string(config.type)));
}

}  // namespace switchboard::host
