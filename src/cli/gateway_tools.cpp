#include "gateway_tools.hpp"

#include <switchboard/agent/tool_search.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/host/tool_catalog.hpp>

#include <fmt/format.h>
#include <boost/json/serialize.hpp>

namespace switchboard::cli {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

namespace {

// A host tool's result as a CallToolResult.
json::object call_tool_result(const llm::ToolExecutionResult& r) {
    json::array content;
    for (const auto& p : r.parts) {
        json::object c;
        if (p.kind == llm::MessagePart::Kind::text) {
            c["type"] = "text";
            c["text"] = p.text;
        } else {
            c["type"] = p.kind == llm::MessagePart::Kind::image ? "image" : "audio";
            c["data"] = p.data;
            c["mimeType"] = p.mime_type;
        }
        content.push_back(std::move(c));
    }
    json::object result;
    result["content"] = std::move(content);
    if (r.structured_content) result["structuredContent"] = *r.structured_content;
    if (r.is_error) result["isError"] = true;
    return result;
}

// (The tool by shared_ptr: GCC 12 miscompiles aggregate coroutine parameters.)
awaitable<jsonrpc::Outcome<json::object>> run_local(std::shared_ptr<const agent::LocalTool> tool,
                                                    json::object arguments, mcp::RequestContext ctx) {
    llm::ToolCall call;
    call.id = "gateway";
    call.name = tool->name;
    call.arguments = json::serialize(arguments);
    // The fork's steps reach the client as progress messages (when it asked for progress).
    agent::Observer observer;
    auto steps = std::make_shared<int>(0);
    observer.on_tool_start = [ctx, steps](const llm::ToolCall& c, const std::string& server) {
        ctx.progress(++*steps, std::nullopt, fmt::format("{} {}", server.empty() ? c.name : server + "/" + c.name,
                                                         core::shorten(c.arguments, 200)));
    };
    auto r = co_await tool->run(std::move(call), observer);
    co_return call_tool_result(r);
}

gateway::HostTool host_tool(agent::LocalTool t) {
    gateway::HostTool h;
    h.name = t.name;
    h.description = t.description;
    h.input_schema = t.parameters;
    h.call = [t = std::make_shared<const agent::LocalTool>(std::move(t))](json::object arguments,
                                                                           mcp::RequestContext ctx) {
        return run_local(t, std::move(arguments), std::move(ctx));
    };
    return h;
}

}  // namespace

std::function<std::vector<gateway::HostTool>(std::shared_ptr<host::Context>)> gateway_host_tools(
    std::shared_ptr<host::ServerPool> pool, std::shared_ptr<GatewayTools> tools) {
    return [pool, tools](std::shared_ptr<host::Context> context) {
        std::vector<gateway::HostTool> out;
        if (tools->llm && !tools->definitions.empty()) {
            auto approvals = std::make_shared<agent::Approvals>();
            approvals->all = true;  // the client's call of the agent tool approved the run
            agent::ForkEnvironment env{pool, context, tools->llm, tools->definitions, std::move(approvals)};
            env.registry = tools->registry;
            if (tools->tool_search) *env.tool_search = host::ToolCatalog::from_env(host::process_env());
            for (auto& t : agent::fork_tools(env, 1, "")) out.push_back(host_tool(std::move(t)));
        }
        if (tools->tool_search) {
            agent::ToolSearchEnvironment env{pool, context, host::ToolCatalog::from_env(host::process_env())};
            for (auto& t : agent::tool_search_tools(std::move(env))) out.push_back(host_tool(std::move(t)));
        }
        return out;
    };
}

}  // namespace switchboard::cli
