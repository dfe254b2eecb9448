// A context: one window onto the server pool. The main conversation is one; an agent run gets a forked one that sees
// only the servers it declared (lazy ones leased for it); each gateway client gets its own; a conversation switches
// servers and tools off for itself through its context's overrides.
//
// A context has
// - a set of servers: every enabled non-lazy server of the pool (following apply), or an explicit list, plus the
//   servers added with add_server(), each held by a Lease (a lazy server is started for it and released when the
//   context drops it or is destroyed);
// - its own tool index, built by the pool's conflict rule (tool_index.hpp) over just those servers, minus tools its
//   allow/deny patterns or overrides exclude. The index shares the pool's tool lists (no copies): creating and
//   dropping contexts is cheap;
// - the resources and prompts of its servers, and its own resource attachments for the next user message.
//
// Its events() re-emits the pool's events that concern its servers (and its own attachment changes).
//
// Thread-safety: single owner, on the pool's executor.
#pragma once

#include <switchboard/host/attachments.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/host/tool_index.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace switchboard::host {

struct ContextOptions {
    std::string name = "main";  ///< for logs and status ("main", "agent:reviewer", "gateway:<session>")
    /// The servers this context sees. nullopt: every enabled, non-lazy server of the pool's config (following
    /// apply()). A lazy server listed here is only seen once add_server() has leased it.
    std::optional<std::vector<std::string>> servers;
    /// Globs over tool names, matched against `server__tool` and the bare tool name: empty allow = all; deny wins.
    std::vector<std::string> allow_tools;
    std::vector<std::string> deny_tools;
    /// Whether `server__tool` may name a configured server this context does not see (a lazy one, say): the server
    /// is leased for that one call. The allow/deny patterns still apply.
    bool calls_to_unseen_servers = false;
};

/// A tool name resolved to the server that has it.
struct ResolvedTool {
    std::string server;
    std::string tool;  ///< the server's own name for it
};

class Context : public std::enable_shared_from_this<Context> {
public:
    static std::shared_ptr<Context> create(std::shared_ptr<ServerPool> pool, ContextOptions options);
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    const std::string& name() const { return options_.name; }
    ServerPool& pool() { return *pool_; }
    EventBus& events() { return events_; }

    // Servers.
    /// The servers this context sees now, in config order (a server switched off here is not among them).
    std::vector<std::string> servers() const;
    bool sees(std::string_view server) const;
    /// Leases `server` for this context (starting it when dormant) and adds it to the view.
    boost::asio::awaitable<Outcome<void>> add_server(std::string server);
    /// Drops the lease (a lazy server stops after its keepWarmSeconds when nobody else holds it) and the server.
    void remove_server(std::string_view server);
    /// The servers this context holds a lease on.
    std::vector<std::string> leased() const;
    /// Whether it is still as it was made: no lease, no server or tool switched off, no attachment. A gateway hands
    /// such a context, with its handler, to the next stateless request instead of making another.
    bool as_made() const;

    // Overrides, for this context only.
    void set_server_enabled(const std::string& server, bool enabled);
    void set_tool_enabled(const std::string& server, const std::string& tool, bool enabled);
    bool server_enabled(std::string_view server) const;
    bool tool_enabled(std::string_view server, std::string_view tool) const;

    // Tools.
    /// This context's tool index, rebuilt when the pool's tools, the view or the overrides changed.
    const ToolIndex& tools();
    /// The same index, shared: it stays what it is while the context's changes to another (a cheap way to tell
    /// whether the tools changed).
    std::shared_ptr<const ToolIndex> tool_index();
    /// Takes `like`'s current index as this context's own, when neither has leases or switched-off servers or tools:
    /// for a context made with the same options as `like` (a gateway's per-session contexts), which would work out the
    /// same index (its cache key alone cost about 3k instructions per stateless request).
    void share_index_of(Context& like);
    /// Resolves an exposed name (or `server__tool`). When the name is not known yet and servers of this context are
    /// still starting, it looks again at each of their changes and goes ahead as soon as it is known. Errors (local,
    /// invalid_params) name the tool and list what is available, or say that the tool is switched off here.
    boost::asio::awaitable<Outcome<ResolvedTool>> resolve_tool(std::string exposed_name);
    /// Resolves and calls: progress, timeout, cancellation of the awaiting coroutine → cancelled on the server.
    boost::asio::awaitable<Outcome<mcp::CallToolResult>> call_tool(std::string exposed_name,
                                                                   boost::json::object arguments,
                                                                   ToolCallOptions options);

    // Resources and prompts of this context's servers.
    std::vector<ResourceInfo> resources() const;
    /// resources() without the copies: `fn(server, resource)` for each, in the same order
    /// (ServerPool::visit_resources).
    void visit_resources(const std::function<void(const std::string& server, const mcp::Resource&)>& fn) const;
    std::vector<ResourceTemplateInfo> resource_templates() const;
    std::vector<PromptInfo> prompts() const;
    /// `trace`: the span the read belongs to (a gateway client's request), see mcp::CallOptions::trace.
    boost::asio::awaitable<Outcome<mcp::ReadResourceResult>> read_resource(std::string server, std::string uri,
                                                                           ReadMode mode, trace::SpanContext trace);
    boost::asio::awaitable<Outcome<mcp::ReadResourceResult>> read_resource(std::string server, std::string uri,
                                                                           ReadMode mode) {
        return read_resource(std::move(server), std::move(uri), mode, trace::SpanContext{});
    }
    boost::asio::awaitable<Outcome<mcp::ReadResourceResult>> read_resource(std::string server, std::string uri) {
        return read_resource(std::move(server), std::move(uri), ReadMode::cached);
    }
    boost::asio::awaitable<Outcome<mcp::GetPromptResult>> get_prompt(std::string server, std::string name,
                                                                     std::map<std::string, std::string> arguments,
                                                                     trace::SpanContext trace);
    boost::asio::awaitable<Outcome<mcp::GetPromptResult>> get_prompt(std::string server, std::string name,
                                                                     std::map<std::string, std::string> arguments) {
        return get_prompt(std::move(server), std::move(name), std::move(arguments), trace::SpanContext{});
    }
    boost::asio::awaitable<Outcome<mcp::CompleteResult>> complete(std::string server, boost::json::object ref,
                                                                  std::string argument, std::string value,
                                                                  std::map<std::string, std::string> context);

    // Attachments for the next user message.
    /// Adds an attachment (loading), reads it from the server (a person asked for it: ReadMode::fresh), and stores
    /// the content or the error; returns its id.
    boost::asio::awaitable<std::uint64_t> attach_resource(std::string server, std::string uri);
    /// Adds an attachment whose contents are given (a prompt's embedded resource or image): nothing is read.
    std::uint64_t attach_contents(std::string server, std::string uri, mcp::ReadResourceResult contents);
    const AttachmentList& attachments() const { return attachments_; }
    bool remove_attachment(std::uint64_t id);
    /// Every attachment that finished loading (content or error), in the order added; they are then cleared.
    std::vector<Attachment> consume_attachments();

private:
    Context(std::shared_ptr<ServerPool> pool, ContextOptions options);
    bool in_view(std::string_view server) const;  // the set, before overrides
    bool patterns_allow(std::string_view server, std::string_view tool) const;
    Outcome<void> check_server(std::string_view server) const;
    /// The longest startupTimeoutMs among this context's servers that are starting (0 when none is).
    std::chrono::milliseconds longest_startup_of_starting_servers() const;
    void on_pool_event(const Event& e);

    std::shared_ptr<ServerPool> pool_;
    ContextOptions options_;
    EventBus events_;
    EventBus::Id subscription_ = 0;
    std::map<std::string, Lease, std::less<>> leases_;
    std::set<std::string, std::less<>> servers_off_;
    std::set<std::pair<std::string, std::string>> tools_off_;
    std::shared_ptr<const ToolIndex> index_;  // shared with the pool's other contexts of the same inputs
    bool index_dirty_ = true;
    AttachmentList attachments_;
};

}  // namespace switchboard::host
