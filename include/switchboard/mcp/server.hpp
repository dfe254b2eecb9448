// The server side of MCP, dual-era: answers `initialize` (legacy, negotiating 2024-11-05 … 2025-11-25) and
// `server/discover` plus per-request `_meta` (2026-07-28) on the same channel. A Server holds the definitions and
// handlers; serve() runs one session on one channel. Lists are paginated when a page size is set.
//
// Thread-safety: single owner; add definitions before serving; serve() and notify_* on one executor.
#pragma once

#include <switchboard/jsonrpc/channel.hpp>
#include <switchboard/jsonrpc/connection.hpp>
#include <switchboard/mcp/types.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace switchboard::mcp {

using jsonrpc::Outcome;

struct ServerOptions {
    Implementation info{"switchboard-server", "0", ""};
    std::string instructions;
    std::size_t page_size = 0;  ///< 0: every list in one page
    bool legacy = true;         ///< answer `initialize`
    bool modern = true;         ///< answer `server/discover` and modern requests
    /// Advertise `tools.listChanged`; notify_tools_list_changed() then tells legacy sessions and modern listen streams
    /// that asked for `toolsListChanged`.
    bool tools_list_changed = false;
};

class Server {
public:
    using Args = std::map<std::string, std::string>;
    /// Returns a CallToolResult object. Runs in its own coroutine; cancelled when the client cancels.
    using ToolHandler = std::function<boost::asio::awaitable<Outcome<boost::json::object>>(
        boost::json::object arguments, const jsonrpc::IncomingRequest& request)>;
    /// Returns a ReadResourceResult object for `uri` (template variables in `vars`).
    using ResourceReader =
        std::function<boost::asio::awaitable<Outcome<boost::json::object>>(const std::string& uri, const Args& vars)>;
    /// Returns a GetPromptResult object.
    using PromptGetter = std::function<boost::asio::awaitable<Outcome<boost::json::object>>(const Args& arguments)>;
    /// Completion values for an argument of a prompt or resource template.
    using Completer = std::function<std::vector<std::string>(
        const boost::json::object& ref, const std::string& argument, const std::string& value, const Args& context)>;

    explicit Server(ServerOptions options);
    ~Server();

    void add_tool(boost::json::object definition, ToolHandler handler);
    /// Removes a tool by name; false when there is none.
    bool remove_tool(std::string_view name);
    void add_resource(boost::json::object definition, ResourceReader reader);
    /// `definition.uriTemplate` with simple `{name}` variables (RFC 6570 level 1).
    void add_resource_template(boost::json::object definition, ResourceReader reader);
    void add_prompt(boost::json::object definition, PromptGetter getter);
    void set_completer(Completer completer);

    /// Runs one session until the channel ends.
    boost::asio::awaitable<void> serve(std::shared_ptr<jsonrpc::Channel> channel);

    /// Sends notifications/resources/updated to every session subscribed to `uri` (legacy subscribe or a modern
    /// subscriptions/listen that names it).
    void notify_resource_updated(const std::string& uri);
    /// Sends notifications/tools/list_changed (see ServerOptions::tools_list_changed).
    void notify_tools_list_changed();

    const ServerOptions& options() const { return options_; }

    struct Session;

private:
    friend struct Session;
    struct Entry;
    ServerOptions options_;
    std::vector<std::shared_ptr<Entry>> tools_, resources_, templates_, prompts_;
    Completer completer_;
    std::vector<std::weak_ptr<Session>> sessions_;
};

/// Matches `uri` against a level-1 URI template ("demo://greeting/{name}"); fills `vars` on success.
bool match_uri_template(std::string_view tmpl, std::string_view uri, Server::Args& vars);

}  // namespace switchboard::mcp
