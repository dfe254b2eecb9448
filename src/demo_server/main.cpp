// switchboard-demo-server: a small MCP server with tools, resources, a resource template, prompts and completions,
// built on switchboard's mcp::Server and mcp::StaticHandler. Used by tests and for trying the host by hand. Speaks
// stdio (default; stdout carries JSON-RPC only), Streamable HTTP (--http PORT) or WebSocket (--ws PORT); every log line
// goes to stderr.
#include "demo_server.hpp"

#include <switchboard/core/spawn.hpp>
#include <switchboard/mcp/server.hpp>
#include <switchboard/mcp/version.hpp>
#include <switchboard/transport/fd_channel.hpp>
#include <switchboard/transport/http_server.hpp>
#include <switchboard/transport/websocket.hpp>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <csignal>
#include <cstdio>
#include <exception>
#include <optional>

#ifndef SWITCHBOARD_VERSION
#define SWITCHBOARD_VERSION "0.0.0"
#endif

int main(int argc, char** argv) {
    using namespace switchboard;

    CLI::App app{"switchboard-demo-server: a demo MCP server over stdio, HTTP or WebSocket (for tests and manual runs)",
                 "switchboard-demo-server"};
    std::size_t page_size = 4;
    bool legacy_only = false, modern_only = false, verbose = false;
    std::string name = "switchboard-demo", instructions;
    app.add_option("--page-size", page_size, "Items per page of tools/resources/prompts lists (0: no pagination)")
        ->capture_default_str();
    auto* legacy_flag = app.add_flag("--legacy-only", legacy_only, "Answer only initialize (protocol <= 2025-11-25)");
    app.add_flag("--modern-only", modern_only, "Answer only server/discover and 2026-07-28 requests")
        ->excludes(legacy_flag);
    app.add_option("--name", name, "serverInfo name")->capture_default_str();
    bool dynamic_tools = false;
    app.add_flag("--dynamic-tools", dynamic_tools, "Add toggle_extra, which adds/removes a tool (tools/list_changed)");
    bool changing_tools = false;
    app.add_flag("--changing-tools", changing_tools,
                 "Add change_tools, which changes echo's description or schema, or adds a tool (tools/list_changed)");
    bool client_requests = false;
    app.add_flag("--client-requests", client_requests,
                 "Add ask_model, ask_user and list_roots (sampling, elicitation and roots requests to the client)");
    app.add_option("--instructions", instructions, "Instructions returned to the client");
    std::optional<std::uint16_t> http_port, ws_port;
    std::string bind = "127.0.0.1";
    std::vector<std::string> origins;
    std::size_t max_message_size = jsonrpc::default_max_message_size;
    std::string tls_cert, tls_key;
    app.add_option("--http", http_port, "Serve Streamable HTTP on PORT at /mcp (0: any free port) instead of stdio");
    app.add_option("--ws", ws_port, "Serve WebSocket (subprotocol mcp) on PORT (0: any free port) instead of stdio");
    app.add_option("--bind", bind, "Address to listen on with --http/--ws")->capture_default_str();
    app.add_option("--allow-origin", origins, "Origin accepted besides loopback ones (repeatable; * for any)");
    app.add_option("--tls-cert", tls_cert, "With --ws: PEM certificate chain; serves wss://");
    app.add_option("--tls-key", tls_key, "With --ws: PEM private key of --tls-cert");
    app.add_option("--max-message-size", max_message_size, "Largest message accepted, in bytes")->capture_default_str();
    app.add_flag("-v,--verbose", verbose, "Debug logging on stderr");
    int extra_tools = 0;
    bool blob_template = false;
    app.add_option("--extra-tools", extra_tools, "Also offer N echo-like tools echo_1 ... echo_N (benchmarks)")
        ->check(CLI::Range(0, 100000));
    app.add_flag("--blob-template", blob_template, "Also offer demo://blob/{bytes}, binary data (benchmarks)");
    bool conformance = false;
    app.add_flag("--conformance", conformance,
                 "Offer the official conformance server suite's fixtures (test_simple_text, test://static-text, "
                 "test_simple_prompt, ...) instead of the demo tools, resources and prompts");
    bool task_tools = false;
    app.add_flag("--tasks", task_tools,
                 "Add report, a long-running tool (N seconds, asks once for input) that runs as a task of the Tasks "
                 "extension for a client that declares it");
    bool apps = false;
    app.add_flag("--apps", apps,
                 "Add MCP Apps (io.modelcontextprotocol/ui): counter (with its app-only counter_bump) and csp_probe, "
                 "with their ui://demo/ views");
    app.set_version_flag("--version", std::string("switchboard-demo-server ") + SWITCHBOARD_VERSION);
    CLI11_PARSE(app, argc, argv);

    auto logger = spdlog::stderr_color_mt("demo");
    spdlog::set_default_logger(logger);
    spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::info);
    spdlog::flush_on(spdlog::level::trace);

    // A client that goes away must end the session through EOF/EPIPE, not kill us with SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);

    mcp::ServerOptions options;
    options.info = mcp::Implementation{name, SWITCHBOARD_VERSION, "Switchboard demo server"};
    options.instructions = instructions;
    options.legacy = !modern_only;
    options.modern = !legacy_only;
    // The same for every client, and list changes and resource updates are announced: fresh for a minute (but
    // demo://counter, which says 0: bump changes it).
    options.cache_ttl = std::chrono::minutes(1);
    options.cache_scope = "public";

    mcp::StaticHandlerOptions handler_options;
    handler_options.page_size = page_size;
    // The conformance fixtures change their lists (test_trigger_tool_change, test_trigger_prompt_change).
    handler_options.tools_list_changed = dynamic_tools || changing_tools || conformance;
    handler_options.prompts_list_changed = conformance;
    auto handler = std::make_shared<mcp::StaticHandler>(handler_options);
    boost::asio::io_context ctx;
    // Long-running tools run as tasks here; a client polls them from any of its requests (stateless HTTP too).
    auto tasks = mcp::TaskStore::create(ctx.get_executor(), mcp::TaskStoreOptions{});
    demo::DemoState state;
    state.extra_tools = extra_tools;
    state.blob_template = blob_template;
    state.name = name;
    if (conformance) {
        demo::add_conformance_fixtures(*handler);
        demo::add_task_fixtures(*handler, tasks);
    } else {
        demo::add_demo_tools(*handler, state);
        demo::add_demo_resources(*handler, state);
        demo::add_demo_prompts(*handler, state);
        demo::set_demo_completer(*handler);
    }
    if (task_tools) demo::add_task_tools(*handler, tasks);
    if (dynamic_tools) demo::add_dynamic_tools(*handler);
    if (changing_tools) demo::add_changing_tools(*handler);
    if (client_requests) demo::add_client_request_tools(*handler);
    if (apps) demo::add_app_tools(*handler, state);
    mcp::Server server(options, handler);

    int exit_code = 0;
    auto report = [&exit_code](const char* what) {
        return [&exit_code, what](std::exception_ptr e) {
            if (e) exit_code = 1;
            core::log_exception(e, what);
        };
    };

    if (http_port || ws_port) {
        auto serve = [&server](std::shared_ptr<jsonrpc::Channel> ch) { return server.serve(std::move(ch)); };
        std::unique_ptr<transport::HttpServer> http;
        std::unique_ptr<transport::WebSocketServer> ws;
        if (http_port) {
            transport::HttpServerOptions ho;
            ho.address = bind;
            ho.port = *http_port;
            ho.allowed_origins = origins;
            ho.max_message_size = max_message_size;
            ho.legacy = options.legacy;
            ho.modern = options.modern;
            for (auto v : mcp::legacy_versions) ho.legacy_versions.emplace_back(v);
            for (auto v : mcp::modern_versions) ho.modern_versions.emplace_back(v);
            ho.answer = [&server](jsonrpc::Message request, std::function<void(std::string)> send) {
                return server.answer(std::move(request), std::move(send));
            };
            http = std::make_unique<transport::HttpServer>(ctx.get_executor(), serve, ho);
            if (auto ec = http->listen()) {
                fmt::print(stderr, "cannot listen on {}:{}: {}\n", bind, *http_port, ec.message());
                return 1;
            }
            boost::asio::co_spawn(ctx, http->run(), report("http server"));
            fmt::print(stderr, "listening on {}\n", http->url());
        }
        if (ws_port) {
            transport::WebSocketServerOptions wo;
            wo.address = bind;
            wo.port = *ws_port;
            wo.allowed_origins = origins;
            wo.max_message_size = max_message_size;
            wo.tls_cert_file = tls_cert;
            wo.tls_key_file = tls_key;
            ws = std::make_unique<transport::WebSocketServer>(ctx.get_executor(), serve, wo);
            if (auto ec = ws->listen()) {
                fmt::print(stderr, "cannot listen on {}:{}: {}\n", bind, *ws_port, ec.message());
                return 1;
            }
            boost::asio::co_spawn(ctx, ws->run(), report("websocket server"));
            fmt::print(stderr, "listening on {}\n", ws->url());
        }
        // SIGTERM and SIGINT end the process through main's return, as stdin's end does in stdio mode: its exit
        // handlers run (a profile-guided build's instrumented server writes its profile there; scripts/bench).
        boost::asio::signal_set signals(ctx, SIGTERM, SIGINT);
        signals.async_wait([&ctx](const boost::system::error_code& ec, int) {
            if (!ec) ctx.stop();
        });
        std::fflush(stderr);
        ctx.run();
        return exit_code;
    }

    boost::asio::co_spawn(ctx, server.serve(transport::make_stdio_server_channel(ctx.get_executor(), max_message_size)),
                          [&exit_code](std::exception_ptr e) {
                              if (!e) spdlog::debug("stdin closed; session ended");
                              if (e) exit_code = 1;
                              core::log_exception(e, "the session");
                          });
    fmt::print(stderr, "switchboard-demo-server {} ready (stdio{}{})\n", SWITCHBOARD_VERSION,
               legacy_only ? ", legacy only" : "", modern_only ? ", modern only" : "");
    std::fflush(stderr);
    ctx.run();
    return exit_code;
}
