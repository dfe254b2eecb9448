// The Host: one object that owns every server connection and that every front end (CLI, chat, gateway, web UI) uses.
//
// - start(): every enabled, non-lazy server starts at once; the host is usable at once. A call to a server that is
//   still starting waits for it (up to its startupTimeoutMs); calls to other servers go ahead.
// - Health phases per server (events.hpp), observable as events and in status(), with time spent in each phase, the
//   last error and a stderr tail.
// - The tool index (tool_index.hpp), rebuilt whenever a server's tools change; execute_tool() runs an OpenAI-style
//   call and formats the result for an LLM (tool_result.hpp).
// - Resources (listing cache with TTL, byte-bounded content cache, subscriptions), attachments, prompts, completion.
// - Auto-reconnect for every transport: on close or error, back off min(30 s, 1 s * 2^attempt) with jitter, up to
//   maxReconnectAttempts (0 = forever), then phase error. In-flight calls fail at once; after reconnecting, the tool
//   index and subscriptions are restored. A server that fails its very first start is in phase error at once (a
//   wrong command does not fix itself); apply() or restart() tries again.
// - shutdown(): stops taking calls, waits for active ones up to a deadline, cancels the rest on the servers, closes
//   every transport, clears the indexes.
// - apply(config): hot reload; untouched servers keep running (no dropped calls).
//
// Thread-safety: single owner. Every member function must be called on the executor given to create(); event
// callbacks run there too.
#pragma once

#include <switchboard/host/attachments.hpp>
#include <switchboard/core/backoff.hpp>
#include <switchboard/host/config.hpp>
#include <switchboard/host/events.hpp>
#include <switchboard/host/resource_cache.hpp>
#include <switchboard/host/tool_index.hpp>
#include <switchboard/host/tool_result.hpp>
#include <switchboard/mcp/client_session.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::host {

using jsonrpc::Outcome;

struct HostOptions {
    std::size_t max_message_size = 64u * 1024 * 1024;
    std::chrono::milliseconds shutdown_deadline{5000};  ///< how long shutdown() waits for active calls
    core::BackoffPolicy backoff;
    std::size_t content_cache_bytes = 64u * 1024 * 1024;
    std::chrono::milliseconds listing_ttl{60'000};  ///< resource listings, when the server gives no ttlMs
    std::chrono::milliseconds content_ttl{60'000};  ///< read contents of unsubscribed resources, without ttlMs
    std::size_t stderr_tail_lines = 20;
    mcp::ServerRequestHandlers handlers;
    mcp::Implementation client_info{"switchboard", SWITCHBOARD_VERSION, "Switchboard"};
};

struct ServerStatus {
    std::string name;
    TransportKind transport = TransportKind::stdio;
    bool enabled = true;
    bool lazy = false;
    Phase phase = Phase::idle;
    std::chrono::milliseconds time_in_phase{0};
    std::array<std::chrono::milliseconds, phase_count> time_per_phase{};  ///< totals, the current phase included
    std::string last_error;
    std::string stderr_tail;  ///< last lines of stderr (stdio)
    std::optional<mcp::Era> era;
    std::string protocol_version;
    std::size_t tools = 0, resources = 0, resource_templates = 0, prompts = 0;
    std::chrono::milliseconds connect_time{0};  ///< of the last successful connect
    int reconnect_attempt = 0;                  ///< attempts since the connection was last stable
    int reconnects = 0;                         ///< successful reconnects since start
    std::size_t active_calls = 0;
};

struct ExecuteOptions {
    std::chrono::milliseconds timeout{0};  ///< 0: the server's toolTimeoutMs
    std::function<void(const jsonrpc::Progress&)> on_progress;
};

struct PromptInfo {
    std::string server;
    mcp::Prompt prompt;
};

struct ResourceInfo {
    std::string server;
    mcp::Resource resource;
};

struct ResourceTemplateInfo {
    std::string server;
    mcp::ResourceTemplate resource_template;
};

class Host : public std::enable_shared_from_this<Host> {
public:
    static std::shared_ptr<Host> create(boost::asio::any_io_executor ex, Config config, HostOptions options);
    ~Host();
    Host(const Host&) = delete;
    Host& operator=(const Host&) = delete;

    /// Starts every enabled, non-lazy server in parallel and returns at once.
    void start();
    /// Waits until no server is starting (each connected or failed), at most `max`.
    boost::asio::awaitable<void> wait_until_settled(std::chrono::milliseconds max);
    boost::asio::awaitable<void> wait_until_settled() { return wait_until_settled(std::chrono::hours(1)); }

    const Config& config() const { return config_; }
    std::vector<ServerStatus> status() const;  ///< in config order
    std::optional<ServerStatus> status(std::string_view server) const;
    EventBus& events() { return events_; }

    // Tools.
    const ToolIndex& tool_index() const { return index_; }
    /// Resolves `call.function.name` (an exposed name, or `<server>__<tool>` naming a server explicitly), parses the
    /// arguments, forwards the call (progress, timeout, cancellation of the awaiting coroutine → cancelled on the
    /// server) and formats the result. Never throws for a bad call: unknown tools, malformed arguments and server
    /// failures come back as an error result the LLM can read (`status` tells them apart).
    boost::asio::awaitable<ToolExecutionResult> execute_tool(ToolCall call, ExecuteOptions options);
    boost::asio::awaitable<ToolExecutionResult> execute_tool(ToolCall call) {
        return execute_tool(std::move(call), ExecuteOptions{});
    }
    /// The raw call on a named server and tool (waits for the server when it is starting).
    boost::asio::awaitable<Outcome<mcp::CallToolResult>> call_tool(std::string server, std::string tool,
                                                                   boost::json::object arguments,
                                                                   ExecuteOptions options);

    // Resources.
    std::vector<ResourceInfo> resources() const;  ///< last known listings of all servers
    std::vector<ResourceTemplateInfo> resource_templates() const;
    /// The listing of one server; served from the cache while fresh (ttlMs, else listing_ttl).
    boost::asio::awaitable<Outcome<ResourceListing>> list_resources(std::string server);
    /// Read through the content cache.
    boost::asio::awaitable<Outcome<mcp::ReadResourceResult>> read_resource(std::string server, std::string uri);
    boost::asio::awaitable<Outcome<void>> subscribe_resource(std::string server, std::string uri);
    boost::asio::awaitable<Outcome<void>> unsubscribe_resource(std::string server, std::string uri);
    const ResourceContentCache& content_cache() const { return cache_; }

    // Attachments for the next user message.
    /// Adds an attachment (loading), reads it, and stores the content or the error; returns its id.
    boost::asio::awaitable<std::uint64_t> attach_resource(std::string server, std::string uri);
    const AttachmentList& attachments() const { return attachments_; }
    bool remove_attachment(std::uint64_t id);
    /// The message parts of every loaded attachment, which are then cleared.
    std::vector<MessagePart> consume_attachments();

    // Prompts.
    std::vector<PromptInfo> prompts() const;
    boost::asio::awaitable<Outcome<mcp::GetPromptResult>> get_prompt(std::string server, std::string name,
                                                                     std::map<std::string, std::string> arguments);
    boost::asio::awaitable<Outcome<mcp::CompleteResult>> complete(std::string server, boost::json::object ref,
                                                                  std::string argument, std::string value,
                                                                  std::map<std::string, std::string> context);

    /// The session of a server, waiting while it starts (lazy servers are started). For what the Host does not wrap.
    boost::asio::awaitable<Outcome<std::shared_ptr<mcp::ClientSession>>> session(std::string server);

    // Lifecycle.
    /// Hot reload: connects added servers, closes removed ones, restarts changed ones, leaves the rest untouched.
    boost::asio::awaitable<void> apply(Config new_config);
    /// Closes and starts one server again (also after it ended in phase error).
    boost::asio::awaitable<void> restart(std::string server);
    boost::asio::awaitable<void> shutdown();
    bool shutting_down() const { return stopping_; }
    std::size_t active_calls() const { return active_flows_; }

    struct Server;  // per-server state (host.cpp)

private:
    Host(boost::asio::any_io_executor ex, Config config, HostOptions options);

    std::shared_ptr<Server> find(std::string_view name) const;
    std::shared_ptr<Server> make_server(const ServerConfig& config);
    void launch(const std::shared_ptr<Server>& s);
    boost::asio::awaitable<std::string> connect_attempt(std::shared_ptr<Server> s, std::uint64_t gen);
    boost::asio::awaitable<void> first_start(std::shared_ptr<Server> s, std::uint64_t gen);
    boost::asio::awaitable<void> reconnect_loop(std::shared_ptr<Server> s, std::uint64_t gen);
    void on_lost(const std::shared_ptr<Server>& s, std::uint64_t gen, const jsonrpc::Error& why);
    boost::asio::awaitable<void> stop_server(std::shared_ptr<Server> s, Phase final_phase);
    void set_phase(Server& s, Phase p, std::string error = {});
    void handle_notification(const std::shared_ptr<Server>& s, std::uint64_t gen, const std::string& method,
                             const boost::json::value& params);
    boost::asio::awaitable<void> relist(std::shared_ptr<Server> s, std::uint64_t gen, std::string what);
    boost::asio::awaitable<Outcome<std::shared_ptr<Server>>> ready(std::string name);
    void rebuild_index();
    ResourceListing make_listing(const Server& s) const;

    boost::asio::any_io_executor ex_;
    Config config_;
    HostOptions options_;
    std::map<std::string, std::shared_ptr<Server>, std::less<>> servers_;
    EventBus events_;
    ToolIndex index_;
    ResourceContentCache cache_;
    AttachmentList attachments_;
    bool started_ = false;
    bool stopping_ = false;
    std::size_t active_flows_ = 0;
    struct Signals;
    std::shared_ptr<Signals> signals_;
};

}  // namespace switchboard::host
