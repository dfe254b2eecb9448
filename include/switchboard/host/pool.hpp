// The server pool: the one owner of every configured server's lifecycle. Front ends look at the servers through
// contexts (context.hpp); the pool itself knows nothing of tool names as a model sees them.
//
// - start(): every enabled, non-lazy server starts at once; the pool is usable at once. A request to a server that is
//   still starting waits for it (up to its startupTimeoutMs); requests to other servers go ahead.
// - Health phases per server (events.hpp), observable as events and in status(), with time spent in each phase, the
//   last error and a stderr tail.
// - Leases: acquire(name) returns a Lease on a connected server, starting it when it is dormant (a `lazy: true`
//   server is dormant until acquired). Concurrent acquires of a dormant server share one start and one process.
//   When the last lease of a lazy server is dropped it stops after its keepWarmSeconds; an acquire inside that window
//   reuses it. Leases on non-lazy servers only count.
// - Auto-reconnect for every transport: on close or error, back off min(30 s, 1 s * 2^attempt) with jitter, up to
//   maxReconnectAttempts (0 = forever), then phase error. In-flight requests fail at once; after reconnecting, tool
//   lists and subscriptions are restored. A server that fails its very first start is in phase error at once (a wrong
//   command does not fix itself); apply() or restart() tries again, and so does the next acquire of a lazy server.
// - shutdown(): stops taking requests, waits for active ones up to a deadline, cancels the rest on the servers,
//   closes every transport, then cancels and joins every background task.
// - apply(config): hot reload; untouched servers keep running (no dropped calls).
//
// Thread-safety: single owner. Every member function must be called on the executor given to create(); event
// callbacks run there too.
#pragma once

#include <switchboard/core/backoff.hpp>
#include <switchboard/host/config.hpp>
#include <switchboard/host/events.hpp>
#include <switchboard/host/resource_cache.hpp>
#include <switchboard/host/sandbox.hpp>
#include <switchboard/host/server_requests.hpp>
#include <switchboard/host/tool_pins.hpp>
#include <switchboard/mcp/client_session.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::host {

// The names of jsonrpc that every file of host uses, short.
using jsonrpc::Error;
using jsonrpc::Outcome;
namespace code = jsonrpc::code;

struct PoolOptions {
    std::size_t max_message_size = 64u * 1024 * 1024;
    std::chrono::milliseconds shutdown_deadline{5000};  ///< how long shutdown() waits for active requests
    core::BackoffPolicy backoff;
    std::size_t content_cache_bytes = 64u * 1024 * 1024;
    std::chrono::milliseconds listing_ttl{60'000};  ///< resource listings, when the server gives no ttlMs
    std::size_t stderr_tail_lines = 20;
    ServerRequestHandlers handlers;  ///< sampling, elicitation, roots: unset ones are not offered to servers
    /// Asked of every server once connected ("debug" ... "emergency"; legacy: logging/setLevel when the server
    /// offers logging; modern: `_meta` logLevel on every request). Empty: the servers' defaults (a modern server
    /// then sends no log messages). The gateway sets "debug" and filters per client.
    std::string log_level;
    /// The log messages kept per server for whoever looks later (recent_logs).
    std::size_t recent_log_messages = 200;
    mcp::Implementation client_info{"switchboard", SWITCHBOARD_VERSION, "Switchboard"};
    /// The approved definitions (tool_pins.hpp): what a server lists that is not its pin is held (not in tools(),
    /// prompts(), resource_templates()). Null: nothing is pinned.
    std::shared_ptr<PinStore> pins;
    /// Where remote servers' OAuth tokens are kept; null: auth::TokenStore::default_path().
    std::shared_ptr<auth::TokenStore> token_store;
    /// Confines the stdio servers that ask for it (sandbox.hpp); null: one made from the environment.
    std::shared_ptr<Sandboxer> sandboxer;
    /// How often a server in phase needs-auth looks for a login made elsewhere (the token file changed).
    std::chrono::milliseconds login_poll{1000};
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
    /// Why the connection was last lost (empty: it never was), and when: kept after the reconnect succeeds.
    std::string last_lost;
    std::chrono::system_clock::time_point last_lost_at{};
    std::string log_level;  ///< what the server is asked to send (set_log_level, else PoolOptions::log_level)
    std::size_t active_calls = 0;
    std::size_t held = 0;  ///< definitions it lists that are held (not approved)
    /// stdio: "bwrap", "landlock", "container" or "unconfined"; empty for remote servers. For a confined one, the plan
    /// in force (or the one it would start with) and what it was refused lately; `sandbox_error` when it cannot be
    /// confined here.
    std::string sandbox_layer;
    std::optional<SandboxPlan> sandbox;
    std::vector<SandboxRefusal> sandbox_refusals;
    std::string sandbox_error;
    std::size_t leases = 0;
    std::chrono::milliseconds keep_warm{0};

    /// A lazy server's lifecycle as the lazy-loading design names it: "dormant" (not running), "loading" (starting),
    /// "active" (running, leased), "warm" (running, no lease, keepWarmSeconds not over yet), or the phase when it is
    /// none of these (reconnecting, error, ...). For other servers: the phase.
    std::string lifecycle() const;
};

/// Options of one tool call through the pool.
struct ToolCallOptions {
    std::chrono::milliseconds timeout{0};  ///< 0: the server's toolTimeoutMs
    std::function<void(const jsonrpc::Progress&)> on_progress;
    std::string call_id;  ///< names the call in progress events (Event::progress)
    /// A call answered with a task (the Tasks extension): its id and each status change (see mcp::CallOptions).
    std::function<void(const mcp::TaskProgress&)> on_task;
    /// Whether the call declares the Tasks extension, and whether a task it is answered with is followed (see
    /// mcp::TaskMode; a gateway hands it back to its client).
    mcp::TaskMode tasks = mcp::TaskMode::follow;
    /// The result object kept whole (mcp::CallOptions::whole_result): for a caller that forwards it.
    bool whole_result = false;
    /// With whole_result: receives a complete result's JSON text as the server wrote it, and the CallToolResult is
    /// then empty (see mcp::CallOptions::result_text).
    std::shared_ptr<jsonrpc::ResultText> result_text;
    /// The span the call belongs to (the model turn that asked, a gateway client's request); see mcp::CallOptions.
    trace::SpanContext trace;
};

/// How a resource read may be answered.
enum class ReadMode {
    /// From the content cache while its entry is fresh: the server's ttlMs, or a subscription that would have told us
    /// of a change. For reads nobody asked for by hand (a gateway client's, an app's view, a skill's files).
    cached,
    /// From the server, always (the cache is refreshed): a person's read (a page opened or refreshed, Attach, `read`),
    /// as a browser's reload is.
    fresh,
};

/// Contents the cache holds, and how old they are.
struct CachedContents {
    mcp::ReadResourceResult result;
    std::chrono::milliseconds age{0};
};

/// A server's notifications/message, as kept for recent_logs.
struct LogMessage {
    std::chrono::system_clock::time_point at;
    boost::json::value params;  ///< {level, logger?, data}
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

class ServerPool;
class ToolIndex;

/// A hold on a server: while any lease on a lazy server exists, the server stays up (reconnecting when it crashes).
/// Move-only; dropping it (or release()) gives the hold back. Safe to drop after the pool is gone.
class Lease {
public:
    Lease() = default;
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();

    const std::string& server() const { return server_; }
    explicit operator bool() const { return !server_.empty(); }
    void release();

private:
    friend class ServerPool;
    Lease(std::weak_ptr<ServerPool> pool, std::string server) : pool_(std::move(pool)), server_(std::move(server)) {}
    std::weak_ptr<ServerPool> pool_;
    std::string server_;
};

class ServerPool : public std::enable_shared_from_this<ServerPool> {
public:
    static std::shared_ptr<ServerPool> create(boost::asio::any_io_executor ex, Config config, PoolOptions options);
    ~ServerPool();
    ServerPool(const ServerPool&) = delete;
    ServerPool& operator=(const ServerPool&) = delete;

    /// Starts every enabled, non-lazy server in parallel and returns at once.
    void start();
    /// Waits until none of `servers` (all when empty) is starting (each connected, failed or dormant) nor listing again
    /// after a list_changed (a server that adds tools once it knows our capabilities), at most `max`.
    boost::asio::awaitable<void> wait_until_settled(std::vector<std::string> servers, std::chrono::milliseconds max);
    boost::asio::awaitable<void> wait_until_settled(std::chrono::milliseconds max);
    boost::asio::awaitable<void> wait_until_settled();
    /// Waits (at most `max`) while a server lists again after a list_changed: what the next look at its lists sees
    /// is what it says now. Returns at once when none does.
    boost::asio::awaitable<void> wait_for_relists(std::chrono::milliseconds max);

    const boost::asio::any_io_executor& executor() const { return ex_; }
    const Config& config() const { return config_; }
    /// Where the remote servers' OAuth tokens are kept (a login stores its token there; the servers in phase
    /// needs-auth notice it).
    const std::shared_ptr<auth::TokenStore>& token_store() const { return options_.token_store; }
    const PoolOptions& options() const { return options_; }
    std::vector<ServerStatus> status() const;  ///< in config order
    std::optional<ServerStatus> status(std::string_view server) const;
    EventBus& events() { return events_; }

    // Leases.
    /// A lease on a connected server: starts a dormant (or failed lazy) server and waits while it starts, up to its
    /// startupTimeoutMs. Errors name the server and the cause.
    boost::asio::awaitable<Outcome<Lease>> acquire(std::string server);
    std::size_t leases(std::string_view server) const;

    // What each server offers, as last listed. Shared with the caller, never copied: tool schemas are the bulk of a
    // host's memory, and every context's tool index points into these lists.
    std::shared_ptr<const std::vector<mcp::Tool>> tools(std::string_view server) const;
    /// The tool index made from exactly the inputs `key` names, shared by the contexts that ask with the same key
    /// (one built by `build` when none is kept). A gateway makes a context per stateless request, and each built
    /// its own index: thousands of instructions a request, millions with a thousand tools. The key must name every
    /// input of the index (see Context::tool_index); `lists`, the tool lists it names by address, are kept with it,
    /// so that no other list takes one of those addresses while the key is kept. The last few used are kept.
    std::shared_ptr<const ToolIndex> shared_tool_index(const std::string& key,
                                                       std::vector<std::shared_ptr<const std::vector<mcp::Tool>>> lists,
                                                       const std::function<ToolIndex()>& build);
    std::vector<ResourceInfo> resources(std::string_view server) const;
    /// resources() read in place, for a caller that looks at a field of each: `fn` gets each of `server`'s resources,
    /// in order, and must not change the pool.
    void visit_resources(std::string_view server, const std::function<void(const mcp::Resource&)>& fn) const;
    std::vector<ResourceTemplateInfo> resource_templates(std::string_view server) const;
    std::vector<PromptInfo> prompts(std::string_view server) const;
    Phase phase(std::string_view server) const;  ///< Phase::idle for an unknown server
    /// The config entry of `server`, or nullptr.
    const ServerConfig* server_config(std::string_view server) const;

    // Requests. A server that is starting is waited for; a lazy server is leased for the request's duration.
    /// Forwards a tools/call (progress, timeout, cancellation of the awaiting coroutine → cancelled on the server).
    boost::asio::awaitable<Outcome<mcp::CallToolResult>> call_tool(std::string server, std::string tool,
                                                                   boost::json::object arguments,
                                                                   ToolCallOptions options);
    /// The listing of one server; served from the cache while fresh (ttlMs, else listing_ttl).
    boost::asio::awaitable<Outcome<ResourceListing>> list_resources(std::string server);
    /// Reads a resource (ReadMode::cached: through the content cache). Contents are cached only when the server gave
    /// a ttlMs or the resource is subscribed (its updates drop them); anything else may change at any time.
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
    /// What a ReadMode::cached read would be answered with without asking the server, with its age; nullopt: it
    /// would ask.
    std::optional<CachedContents> cached_resource(const std::string& server, const std::string& uri);
    /// Subscriptions are counted per URI: the server is asked to subscribe by the first holder and to unsubscribe when
    /// the last one lets go (a gateway's clients and the web UI's watches share one upstream subscription).
    boost::asio::awaitable<Outcome<void>> subscribe_resource(std::string server, std::string uri);
    boost::asio::awaitable<Outcome<void>> unsubscribe_resource(std::string server, std::string uri);
    const ResourceContentCache& content_cache() const { return cache_; }
    /// Asks `server` for log messages from `level` up ("debug" ... "emergency") from now on, also after a reconnect
    /// (legacy: logging/setLevel, which needs the server's logging capability; modern: `_meta` logLevel).
    boost::asio::awaitable<Outcome<void>> set_log_level(std::string server, std::string level);
    /// The server's latest log messages (at most PoolOptions::recent_log_messages), oldest first.
    std::vector<LogMessage> recent_logs(std::string_view server) const;
    // Pins (pool_pins.cpp).
    /// What `server` lists that is held (changed since approved, or new), in listing order.
    std::vector<HeldDefinition> held(std::string_view server) const;
    /// The held definition of `kind` named `name` that some server lists, or nullptr.
    const HeldDefinition* held_named(std::string_view server, PinKind kind, std::string_view name) const;
    /// Approves what `server` lists now: everything held (`name` empty) or the held definitions named `name` (of
    /// `kind` when given: a tool and a prompt may share a name); writes the lockfile and offers them (list changes
    /// announced). An error names what could not be written or found.
    Outcome<std::size_t> approve_pins(const std::string& server, const std::string& name,
                                      std::optional<PinKind> kind = std::nullopt);
    /// Forgets `server`'s pins and pins what it lists now (in strict mode: holds all of it); writes the lockfile.
    Outcome<void> reset_pins(const std::string& server);
    /// Reads the lockfile again (changed by another process: `pins approve`, an edit) and applies it to every server.
    Outcome<void> reload_pins();

    /// Tells every connected server that answers our roots (a 2025 session: notifications/roots/list_changed) that
    /// the list changed; it asks again. (A 2026-07-28 server asks within each request.)
    void notify_roots_changed();
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
    /// The session of a server, waiting while it starts (for what the pool does not wrap). A lazy server is not
    /// leased by this: hold a Lease while using the session.
    boost::asio::awaitable<Outcome<std::shared_ptr<mcp::ClientSession>>> session(std::string server);

    // Lifecycle.
    /// Hot reload: connects added servers, closes removed ones, restarts changed ones, leaves the rest untouched.
    boost::asio::awaitable<void> apply(Config new_config);
    /// Closes and starts one server again (also after it ended in phase error).
    boost::asio::awaitable<void> restart(std::string server);
    boost::asio::awaitable<void> shutdown();
    bool shutting_down() const { return stopping_; }
    /// The last resort of a process that exits without shutdown(): every connected server's peer is ended now (a
    /// stdio server's process group killed), so that nothing outlives us. A server still in its handshake gets EOF
    /// on its stdin when we exit.
    void terminate_now();
    std::size_t active_calls() const { return active_requests_; }

    struct Server;  // per-server state (pool_server.hpp)
    struct Shared;  // what outlives the pool while its tasks still run (pool_server.hpp)

private:
    friend class Lease;
    ServerPool(boost::asio::any_io_executor ex, Config config, PoolOptions options);

    // Lifecycle (pool.cpp).
    std::shared_ptr<Server> find(std::string_view name) const;
    void launch(const std::shared_ptr<Server>& s);
    struct Attempt;
    boost::asio::awaitable<Attempt> connect_attempt(std::shared_ptr<Server> s, std::uint64_t gen);
    boost::asio::awaitable<void> first_start(std::shared_ptr<Server> s, std::uint64_t gen);
    boost::asio::awaitable<void> reconnect_loop(std::shared_ptr<Server> s, std::uint64_t gen);
    /// needs-auth: waits for a login (a new token in the store), then connects.
    boost::asio::awaitable<void> await_login(std::shared_ptr<Server> s, std::uint64_t gen);
    bool needs_login(const Server& s) const;
    void on_lost(const std::shared_ptr<Server>& s, std::uint64_t gen, const jsonrpc::Error& why);
    boost::asio::awaitable<void> stop_server(std::shared_ptr<Server> s, Phase final_phase);
    void set_phase(Server& s, Phase p, std::string error = {});
    void handle_notification(const std::shared_ptr<Server>& s, std::uint64_t gen, const std::string& method,
                             const boost::json::value& params);
    boost::asio::awaitable<void> relist(std::shared_ptr<Server> s, std::uint64_t gen, std::string what);
    boost::asio::awaitable<Outcome<std::shared_ptr<Server>>> ready(std::string name);
    ResourceListing make_listing(const Server& s) const;
    // Pins (pool_pins.cpp).
    /// A new listing of `s` (what changed: tools, prompts, templates; nullopt: keep): its pins worked out, then
    /// apply_pins.
    void set_served(Server& s, std::optional<std::vector<mcp::Tool>> tools,
                    std::optional<std::vector<mcp::Prompt>> prompts,
                    std::optional<std::vector<mcp::ResourceTemplate>> templates);
    /// tools, prompts and templates from what `s` serves and its pins (first seen: pinned as it is, unless strict).
    void apply_pins(Server& s);
    // Leases (pool_leases.cpp).
    void release(const std::string& server);
    void keep_warm_or_stop(const std::shared_ptr<Server>& s);
    /// A lease for one request on a lazy server (nothing for other servers).
    boost::asio::awaitable<Outcome<Lease>> lease_for_request(const std::string& server);
    struct Held;  // a server ready for one request, with its lease
    /// lease_for_request, then ready: what every request does first.
    boost::asio::awaitable<Outcome<Held>> hold_for_request(std::string server);
    /// The same when nothing needs waiting for (a serving server that is not lazy needs no lease), without
    /// hold_for_request's coroutines; nullopt otherwise.
    std::optional<Held> held_at_once(const std::string& server) const;

    boost::asio::any_io_executor ex_;
    Config config_;
    PoolOptions options_;
    std::map<std::string, std::shared_ptr<Server>, std::less<>> servers_;
    EventBus events_;
    ResourceContentCache cache_;
    bool started_ = false;
    bool stopping_ = false;
    std::size_t active_requests_ = 0;
    std::shared_ptr<Shared> shared_;  // what outlives the pool while tasks still run
    struct KeptIndex {
        std::string key;
        std::vector<std::shared_ptr<const std::vector<mcp::Tool>>> lists;
        std::shared_ptr<const ToolIndex> index;
    };
    std::vector<KeptIndex> tool_indexes_;  // shared_tool_index, most recently used last
};

}  // namespace switchboard::host
