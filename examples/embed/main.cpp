// Embedding Switchboard: start a server pool from a config file, call one tool through the main context, print the
// text it returned. Usage: embed CONFIG TOOL [ARGUMENTS-JSON]
#include <switchboard/host/config.hpp>
#include <switchboard/host/context.hpp>
#include <switchboard/host/pool.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>

#include <cstdio>
#include <string>

namespace asio = boost::asio;
using namespace switchboard;

asio::awaitable<int> run(host::Config config, std::string tool, boost::json::object arguments) {
    // No braced temporaries inside a co_await expression: g++ 12 miscompiles them (docs/design.md).
    auto ex = co_await asio::this_coro::executor;
    auto pool = host::ServerPool::create(ex, std::move(config), host::PoolOptions{});
    auto main = host::Context::create(pool, host::ContextOptions{});
    pool->start();  // every non-lazy server, in parallel; calls wait for the one they need
    host::ToolCallOptions options;
    auto result = co_await main->call_tool(tool, std::move(arguments), options);
    int status = 0;
    if (!result) {
        std::fprintf(stderr, "embed: %s\n", result.error().describe().c_str());
        status = 1;
    } else {
        for (const auto& c : result->content)
            if (c.type == "text") std::printf("%s\n", c.text().c_str());
        status = result->is_error ? 1 : 0;
    }
    co_await pool->shutdown();  // waits for calls in flight, then closes every server
    co_return status;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: embed CONFIG TOOL [ARGUMENTS-JSON]\n");
        return 2;
    }
    try {
        auto config = host::load_config_file(argv[1]);
        auto arguments = boost::json::parse(argc > 3 ? argv[3] : "{}").as_object();
        asio::io_context io;
        int status = 1;
        asio::co_spawn(io, run(std::move(config), argv[2], std::move(arguments)),
                       [&](std::exception_ptr e, int s) { status = e ? 70 : s; });
        io.run();
        return status;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "embed: %s\n", e.what());
        return 2;
    }
}
