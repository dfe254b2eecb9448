// switchboard-demo-server: a small MCP server over stdio with tools, resources, a resource template, prompts and
// completions, built on switchboard's mcp::Server. Used by tests and for trying the host by hand.
// stdout carries JSON-RPC only; every log line goes to stderr.
#include "demo_server.hpp"

#include <switchboard/mcp/server.hpp>
#include <switchboard/transport/fd_channel.hpp>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <csignal>
#include <cstdio>
#include <exception>

#ifndef SWITCHBOARD_VERSION
#define SWITCHBOARD_VERSION "0.0.0"
#endif

int main(int argc, char** argv) {
    using namespace switchboard;

    CLI::App app{"switchboard-demo-server: a demo MCP server over stdio (for tests and manual runs)",
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
    app.add_option("--instructions", instructions, "Instructions returned to the client");
    app.add_flag("-v,--verbose", verbose, "Debug logging on stderr");
    int extra_tools = 0;
    bool blob_template = false;
    app.add_option("--extra-tools", extra_tools, "Also offer N echo-like tools echo_1 ... echo_N (benchmarks)")
        ->check(CLI::Range(0, 100000));
    app.add_flag("--blob-template", blob_template, "Also offer demo://blob/{bytes}, binary data (benchmarks)");
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
    options.page_size = page_size;
    options.legacy = !modern_only;
    options.modern = !legacy_only;

    mcp::Server server(options);
    demo::DemoState state;
    state.extra_tools = extra_tools;
    state.blob_template = blob_template;
    demo::add_demo_tools(server, state);
    demo::add_demo_resources(server, state);
    demo::add_demo_prompts(server, state);
    demo::set_demo_completer(server);

    boost::asio::io_context ctx;
    int exit_code = 0;
    boost::asio::co_spawn(ctx, server.serve(transport::make_stdio_server_channel(ctx.get_executor())),
                          [&exit_code](std::exception_ptr e) {
                              if (!e) {
                                  spdlog::debug("stdin closed; session ended");
                                  return;
                              }
                              exit_code = 1;
                              try {
                                  std::rethrow_exception(e);
                              } catch (const std::exception& x) {
                                  spdlog::error("session failed: {}", x.what());
                              }
                          });
    fmt::print(stderr, "switchboard-demo-server {} ready (stdio{}{})\n", SWITCHBOARD_VERSION,
               legacy_only ? ", legacy only" : "", modern_only ? ", modern only" : "");
    std::fflush(stderr);
    ctx.run();
    return exit_code;
}
