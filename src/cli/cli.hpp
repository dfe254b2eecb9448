// The command-line front end: one function per command, each a coroutine returning the process exit status.
#pragma once

#include <switchboard/host/config.hpp>
#include <switchboard/host/host.hpp>

#include <boost/asio/awaitable.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::cli {

struct GlobalOptions {
    std::optional<std::string> config_file;
    bool json = false;
    bool watch = false;  ///< status --watch
};

struct CallArgs {
    std::string name;
    std::string arguments = "{}";
};

/// Connects through a Host; with g.watch, redraws on every phase change (and each second) until Ctrl-C.
boost::asio::awaitable<int> status(const host::Config& config, const GlobalOptions& g);
boost::asio::awaitable<int> tools(const host::Config& config, const GlobalOptions& g);
boost::asio::awaitable<int> call(const host::Config& config, const GlobalOptions& g, CallArgs args);
boost::asio::awaitable<int> resources(const host::Config& config, const GlobalOptions& g);
boost::asio::awaitable<int> read(const host::Config& config, const GlobalOptions& g, std::string server,
                                 std::string uri);
boost::asio::awaitable<int> prompts(const host::Config& config, const GlobalOptions& g);
boost::asio::awaitable<int> prompt(const host::Config& config, const GlobalOptions& g, std::string server,
                                   std::string name, std::vector<std::string> key_values);

/// Human-readable rendering of a tool result or resource contents; binary parts as "[image/png, N bytes]".
std::string render_content(const std::vector<mcp::Content>& content);
std::string render_contents(const std::vector<mcp::ResourceContents>& contents);

/// The status table (also what `status --watch` redraws).
std::string render_status(const std::vector<host::ServerStatus>& servers);

}  // namespace switchboard::cli
