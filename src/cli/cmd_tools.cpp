// `switchboard tools [--json]` and `switchboard call NAME ARGS`.
#include "cli.hpp"

#include <switchboard/core/text.hpp>
#include <switchboard/mcp/apps.hpp>

#include <fmt/format.h>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace switchboard::cli {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

awaitable<int> tools(const host::Config& config, const GlobalOptions& g) {
    co_return co_await with_host(config, [&g](Host& h) -> awaitable<int> {
        report_failures(*h.pool);
        const auto& index = h.main->tools();
        if (g.json) {
            json::array arr;
            for (const auto& t : index.tools()) {
                json::object o;
                o["name"] = t.name;
                o["server"] = t.server;
                o["tool"] = t.tool->name;
                o["description"] = t.tool->description;
                o["inputSchema"] = t.tool->input_schema;
                // _meta as the server sent it: an MCP App's _meta.ui (resourceUri, visibility) among the rest.
                if (const auto* meta = t.tool->raw.if_contains("_meta")) o["_meta"] = *meta;
                arr.push_back(std::move(o));
            }
            print_json(std::move(arr));
        } else {
            for (const auto& t : index.tools()) {
                // [app]: the tool has an MCP App view; [app only]: only its app may call it (the model never sees it).
                const auto ui = mcp::tool_ui(*t.tool);
                const char* mark = !ui ? "" : !ui->model ? "[app only] " : !ui->resource_uri.empty() ? "[app] " : "";
                fmt::print("{:<28} {:<16} {}{}\n", t.name, t.server, mark, core::first_line(t.tool->description));
            }
        }
        co_return any_failed(*h.pool) ? 1 : 0;
    });
}

namespace {

void print_progress(const jsonrpc::Progress& p) {
    const auto message = p.message.empty() ? std::string() : " " + p.message;
    if (p.total)
        fmt::print(stderr, "progress: {}/{}{}\n", p.progress, *p.total, message);
    else
        fmt::print(stderr, "progress: {}{}\n", p.progress, message);
}

void print_task_status(const mcp::TaskProgress& t) {
    fmt::print(stderr, "task {}: {}{}\n", t.task_id, t.status, t.status_message.empty() ? "" : " - " + t.status_message);
}

// An app tool's view can't be drawn in a terminal: name it and where the web UI shows it ("Try it" on the Tools page).
void print_app_line(host::ServerPool& pool, const host::ResolvedTool& resolved, const std::string& name) {
    const auto tools = pool.tools(resolved.server);
    if (!tools) return;
    for (const auto& t : *tools) {
        if (t.name != resolved.tool) continue;
        const auto uri = mcp::app_resource_uri(t);
        if (uri.empty()) return;
        fmt::print("app: {} (interactive view: run `switchboard serve`, open http://127.0.0.1:3333/#/tools/{})\n",
                   uri, name);
        return;
    }
}

}  // namespace

awaitable<int> call(const host::Config& config, const GlobalOptions& g, std::string name, json::object arguments) {
    // "server__tool" names one server: start only that one.
    host::Config subset;
    subset.source = config.source;
    if (auto sep = name.find("__"); sep != std::string::npos)
        if (const auto* sc = config.find(name.substr(0, sep))) subset.servers.push_back(*sc);
    const bool narrowed = !subset.servers.empty();

    co_return co_await with_host(narrowed ? subset : config, Settle::none, [&](Host& h) -> awaitable<int> {
        auto ex = co_await asio::this_coro::executor;
        auto resolved = co_await h.main->resolve_tool(name);
        if (!resolved) {
            report_failures(*h.pool);
            fmt::print(stderr, "switchboard: {} (`switchboard tools` lists them)\n", resolved.error().message);
            co_return 1;
        }
        host::ToolCallOptions opts;
        // The call is a trace of its own: `switchboard trace ID` shows it (a lazy load, a task's polls, the server's
        // work when it exports too).
        auto span = trace::Span::start_local_root("call", name, trace::SpanKind::internal);
        span.set("gen_ai.tool.name", name);
        opts.trace = span.context();
        // A task's status changes come as progress too: shown once, as the task's status line.
        auto in_task = std::make_shared<bool>(false);
        opts.on_progress = [in_task](const jsonrpc::Progress& p) {
            if (!*in_task) print_progress(p);
        };
        opts.on_task = [in_task](const mcp::TaskProgress& t) {
            *in_task = true;
            print_task_status(t);
        };
        opts.call_id = "cli";
        // Ctrl-C (or SIGTERM) cancels the call on the server: the losing branch sends notifications/cancelled (or
        // tasks/cancel for a call that became a task).
        using namespace asio::experimental::awaitable_operators;
        asio::signal_set signals(ex, SIGINT, SIGTERM);
        auto outcome = co_await (h.main->call_tool(name, std::move(arguments), std::move(opts)) ||
                                 signals.async_wait(asio::use_awaitable));
        if (outcome.index() == 1) {
            span.set_error("cancelled", "cancelled");
            fmt::print(stderr, "switchboard: call cancelled\n");
            co_return 130;
        }
        auto& r = std::get<0>(outcome);
        if (!r) {
            span.set_error(std::to_string(r.error().code), r.error().message);
            fmt::print(stderr, "switchboard: {} failed: {}{}\n", name, r.error().describe(),
                       span.context().valid() ? fmt::format(" (trace {})", span.context().trace_id_hex()) : "");
            co_return 1;
        }
        if (r->is_error) span.set_error("tool_error", "the tool answered with isError");
        if (g.json) {
            auto out = std::move(*r).to_json();
            if (span.context().valid()) out["traceId"] = span.context().trace_id_hex();
            print_json(std::move(out));
        } else if (r->content.empty() && r->structured_content) {
            print_json(std::move(*r->structured_content));
        } else {
            fmt::print("{}\n", render_content(r->content));
        }
        if (!g.json) print_app_line(*h.pool, *resolved, name);
        co_return r->is_error ? 1 : 0;
    });
}

}  // namespace switchboard::cli
