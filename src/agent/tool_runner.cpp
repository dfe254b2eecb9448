#include <switchboard/agent/tool_runner.hpp>

#include <switchboard/core/text.hpp>
#include <switchboard/mcp/apps.hpp>
#include <switchboard/mcp/types.hpp>

#include <fmt/format.h>

namespace switchboard::agent {

using Status = llm::ToolExecutionResult::Status;

namespace {

bool model_may_call(host::Context& context, const host::ResolvedTool& resolved) {
    const auto tools = context.pool().tools(resolved.server);
    if (!tools) return true;
    for (const auto& t : *tools)
        if (t.name == resolved.tool) return mcp::model_visible(t);
    return true;
}

}  // namespace

boost::asio::awaitable<llm::ToolExecutionResult> execute_tool(host::Context& context, llm::ToolCall call,
                                                              host::ToolCallOptions options) {
    auto resolved = co_await context.resolve_tool(call.name);
    if (!resolved) co_return llm::error_result(call, {}, resolved.error().message, Status::unknown_tool);
    if (!model_may_call(context, *resolved))  // an MCP App's own tool: only its app calls it
        co_return llm::error_result(call, resolved->server,
                                    fmt::format("tool \"{}\" is only for its MCP App, not for the model", call.name),
                                    Status::unknown_tool);
    std::string parse_error;
    auto args = llm::parse_tool_arguments(call.arguments, parse_error);
    if (!args)
        co_return llm::error_result(call, resolved->server,
                                    fmt::format("tool \"{}\" was not called: {}", call.name, parse_error),
                                    Status::bad_arguments);
    if (options.call_id.empty()) options.call_id = call.id;
    auto r = co_await context.call_tool(call.name, std::move(*args), std::move(options));
    if (!r)
        co_return llm::error_result(call, resolved->server, r.error().describe(),
                                    r.error().code == jsonrpc::code::cancelled ? Status::cancelled : Status::failed);
    co_return llm::format_tool_result(call, resolved->server, *r);
}

std::vector<llm::MessagePart> describe_media(std::vector<llm::MessagePart> parts) {
    for (auto& p : parts) {
        if (p.kind == llm::MessagePart::Kind::text) continue;
        p = llm::MessagePart::make_text(
            fmt::format("[{}, {}: not shown, the model is not configured as vision-capable]",
                        p.mime_type.empty() ? "binary" : p.mime_type,
                        core::size_text(mcp::base64_decoded_size(p.data))));
    }
    return parts;
}

}  // namespace switchboard::agent
