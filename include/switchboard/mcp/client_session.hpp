// The client side of one MCP connection, dual-era.
//
// Connecting on a stream (stdio): probe with `server/discover` carrying modern `_meta`; a DiscoverResult or a modern
// error means a 2026-07-28 server, anything else (another error, no answer within the probe timeout) means a legacy
// server and the `initialize` handshake follows (offering 2025-11-25, accepting 2025-06-18, 2025-03-26, 2024-11-05).
// Modern requests carry protocol version, client capabilities and client info in `_meta`; an
// UnsupportedProtocolVersionError is retried once with a version from the server's list; `input_required` results
// are answered through the installed handlers and the request retried. Every list follows `nextCursor` to the end.
//
// Thread-safety: single owner; all calls on the executor given to connect().
#pragma once

#include <switchboard/core/trace.hpp>
#include <switchboard/jsonrpc/channel.hpp>
#include <switchboard/jsonrpc/connection.hpp>
#include <switchboard/jsonrpc/error.hpp>
#include <switchboard/mcp/types.hpp>
#include <switchboard/mcp/version.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace switchboard::mcp {

// The names of jsonrpc that every file of mcp uses, short.
using jsonrpc::Error;
using jsonrpc::Outcome;
namespace code = jsonrpc::code;

/// Answers to what a server asks of the client: legacy server-to-client requests and modern `inputRequests`.
/// A handler receives the request's params and returns its result. Without a handler the capability is not
/// advertised, and a server that asks anyway gets a JSON-RPC error.
struct ServerRequestHandlers {
    using Handler = std::function<boost::asio::awaitable<Outcome<boost::json::value>>(boost::json::value params)>;
    Handler roots;        ///< roots/list
    Handler sampling;     ///< sampling/createMessage
    Handler elicitation;  ///< elicitation/create
    /// For a client that passes the requests on (a gateway): when set, it answers all three instead, with the key the
    /// server gave the request in a modern input round (empty for a legacy request), and the requests of one round
    /// are answered concurrently. The three above still say which capabilities are declared.
    using KeyedHandler = std::function<boost::asio::awaitable<Outcome<boost::json::value>>(
        std::string key, std::string method, boost::json::value params)>;
    KeyedHandler keyed;
};

struct ClientOptions {
    std::string server_name = "server";
    Implementation client_info{"switchboard", "0", "Switchboard"};
    std::chrono::milliseconds request_timeout{60'000};
    std::chrono::milliseconds connect_timeout{30'000};  ///< probe + handshake together
    std::chrono::milliseconds probe_timeout{3'000};     ///< a legacy server that stays silent on the probe
    std::optional<Era> known_era;                       ///< from an earlier connect: no probing
    ServerRequestHandlers handlers;
    /// OTel's `network.transport` of the spans: "pipe" (stdio) or "tcp".
    std::string network_transport = "pipe";
    /// Every notification from the server (list changes, resource updates, log messages, ...).
    std::function<void(const std::string& method, const boost::json::value& params)> on_notification;
};

/// Where a task (the Tasks extension) that answered a request stands, as the session following it last saw it.
struct TaskProgress {
    std::string task_id;
    std::string status;  ///< working, input_required, completed, failed, cancelled
    std::string status_message;
};

/// How long to wait before the next tasks/get: the server's pollIntervalMs (1 s when it gave none) bounded to
/// [100 ms, 30 s], with +-10 % jitter picked by `unit_random` in [0, 1).
std::chrono::milliseconds task_poll_delay(std::optional<std::chrono::milliseconds> suggested, double unit_random);

/// What a request that a server may answer with a task (the Tasks extension) does with one.
enum class TaskMode {
    follow,      ///< the extension declared; the task is followed to its end and its result given
    hand_back,   ///< the extension declared; the task handle (CreateTaskResult) is the result, for a gateway to pass on
    undeclared,  ///< the extension not declared on this request: the server answers at once, or with -32021
};

struct CallOptions {
    std::chrono::milliseconds timeout{0};  ///< 0: the session's request timeout
    std::chrono::milliseconds max_total_timeout{0};
    /// Also called with a task's status message (progress counts its updates) while the session follows a task.
    std::function<void(const jsonrpc::Progress&)> on_progress;
    /// Called when the request is answered with a task, and on each change of its status or message while the
    /// session follows it to its end (the task id is what resume_task takes after a restart).
    std::function<void(const TaskProgress&)> on_task;
    /// See jsonrpc::RequestOptions::blobs.
    std::shared_ptr<jsonrpc::DecodedBlobs> blobs;
    TaskMode tasks = TaskMode::follow;
    /// call_tool: the result object kept whole (CallToolResult::whole), for a caller that forwards it.
    bool whole_result = false;
    /// call_tool with whole_result: receives the result's JSON text as the server wrote it when it is complete as it
    /// stands (no task, no input asked for, read whole), and the CallToolResult is then empty; otherwise this stays
    /// empty and the result comes as usual. For a caller that forwards the text (see jsonrpc::RequestOptions).
    std::shared_ptr<jsonrpc::ResultText> result_text;
    /// The span this request belongs to: its CLIENT span `{method} {target}` is a child, and the request's
    /// `_meta.traceparent` names that span (SEP-414). Invalid: a root when tracing exports, else nothing is added.
    trace::SpanContext trace;
};

class ClientSession : public std::enable_shared_from_this<ClientSession> {
public:
    /// Starts the connection on `channel` and establishes the session. On failure the channel is closed.
    static boost::asio::awaitable<Outcome<std::shared_ptr<ClientSession>>> connect(
        boost::asio::any_io_executor ex, std::shared_ptr<jsonrpc::Channel> channel, ClientOptions options);

    ~ClientSession();

    Era era() const { return era_; }
    const std::string& protocol_version() const { return protocol_version_; }
    /// e.g. has_capability("tools"), has_capability("resources", "subscribe").
    bool has_capability(std::string_view name, std::string_view flag = {}) const;
    /// Whether the server declared the extension `id` (capabilities.extensions.<id> is an object).
    bool has_extension(std::string_view id) const;
    /// The ServerCapabilities the server declared (an extension's settings are under "extensions").
    const boost::json::object& server_capabilities() const { return capabilities_; }
    const Implementation& server_info() const { return server_info_; }
    const std::string& instructions() const { return instructions_; }
    const std::string& server_name() const { return options_.server_name; }

    // Coroutines take no default arguments (GCC 12 miscompiles them); the short forms are plain overloads.
    boost::asio::awaitable<Outcome<void>> ping(CallOptions options);
    boost::asio::awaitable<Outcome<void>> ping() { return ping(CallOptions{}); }
    boost::asio::awaitable<Outcome<std::vector<Tool>>> list_tools();
    boost::asio::awaitable<Outcome<CallToolResult>> call_tool(std::string name, boost::json::object arguments,
                                                              CallOptions options);
    boost::asio::awaitable<Outcome<CallToolResult>> call_tool(std::string name, boost::json::object arguments) {
        return call_tool(std::move(name), std::move(arguments), CallOptions{});
    }
    boost::asio::awaitable<Outcome<std::vector<Resource>>> list_resources();
    boost::asio::awaitable<Outcome<std::vector<ResourceTemplate>>> list_resource_templates();
    boost::asio::awaitable<Outcome<ReadResourceResult>> read_resource(std::string uri, CallOptions options);
    boost::asio::awaitable<Outcome<ReadResourceResult>> read_resource(std::string uri) {
        return read_resource(std::move(uri), CallOptions{});
    }
    /// Legacy: resources/subscribe. Modern: (re)opens the subscriptions/listen stream with the new URI set and waits
    /// for its acknowledgment. Updates arrive through on_notification as notifications/resources/updated.
    boost::asio::awaitable<Outcome<void>> subscribe(std::string uri);
    boost::asio::awaitable<Outcome<void>> unsubscribe(std::string uri);
    /// Modern: opens the subscriptions/listen stream for the list changes the server advertises (`listChanged`), so
    /// that notifications/{tools,prompts,resources}/list_changed arrive through on_notification as they do unasked
    /// from a legacy server. No-op for legacy servers, when a stream is open, or when nothing is advertised.
    boost::asio::awaitable<Outcome<void>> listen_for_changes();
    boost::asio::awaitable<Outcome<std::vector<Prompt>>> list_prompts();
    boost::asio::awaitable<Outcome<GetPromptResult>> get_prompt(std::string name,
                                                                std::map<std::string, std::string> arguments,
                                                                CallOptions options);
    boost::asio::awaitable<Outcome<GetPromptResult>> get_prompt(std::string name,
                                                                std::map<std::string, std::string> arguments) {
        return get_prompt(std::move(name), std::move(arguments), CallOptions{});
    }
    /// `ref` is {"type":"ref/prompt","name":...} or {"type":"ref/resource","uri":...}.
    boost::asio::awaitable<Outcome<CompleteResult>> complete(boost::json::object ref, std::string argument,
                                                             std::string value,
                                                             std::map<std::string, std::string> context);
    boost::asio::awaitable<Outcome<CompleteResult>> complete(boost::json::object ref, std::string argument,
                                                             std::string value) {
        return complete(std::move(ref), std::move(argument), std::move(value), {});
    }
    /// Legacy: logging/setLevel. Modern: sent as `_meta` logLevel on every later request.
    boost::asio::awaitable<Outcome<void>> set_logging_level(std::string level);

    /// Follows a task that an earlier call_tool was answered with (e.g. before a restart) to its end: its result as
    /// call_tool would have given it. Cancelling the caller sends tasks/cancel.
    boost::asio::awaitable<Outcome<CallToolResult>> resume_task(std::string task_id, CallOptions options);

    /// Any request, with the era's handling (meta, version retry, input_required rounds, tasks followed to the end).
    boost::asio::awaitable<Outcome<boost::json::value>> request(std::string method, boost::json::object params,
                                                                CallOptions options);
    boost::asio::awaitable<Outcome<boost::json::value>> request(std::string method, boost::json::object params) {
        return request(std::move(method), std::move(params), CallOptions{});
    }

    /// The `ttlMs` (2026-07-28 CacheableResult) of the last list of `method` ("resources/list", ...); nullopt when the
    /// server gave none.
    std::optional<std::chrono::milliseconds> list_ttl(const std::string& method) const {
        auto it = list_ttl_.find(method);
        return it == list_ttl_.end() ? std::nullopt : it->second;
    }

    /// Ends the session and closes the channel as its transport prescribes.
    boost::asio::awaitable<void> close();
    bool is_open() const { return connection_->is_open(); }
    jsonrpc::Connection& connection() { return *connection_; }

private:
    /// request()'s body, giving its result through `convert`: a typed call (call_tool) is one coroutine frame, not
    /// one of its own around request()'s.
    template <class Result>
    boost::asio::awaitable<Outcome<Result>> request_as(std::string method, boost::json::object params,
                                                       CallOptions options, Result (*convert)(boost::json::value&&));
    ClientSession(std::shared_ptr<jsonrpc::Connection> c, ClientOptions o);

    boost::asio::awaitable<Outcome<void>> establish();
    boost::asio::awaitable<Outcome<bool>> probe(std::chrono::milliseconds timeout);  // true: modern
    boost::asio::awaitable<Outcome<void>> initialize(std::chrono::milliseconds timeout);
    void apply_discover_result(const boost::json::object& r);
    boost::json::object client_capabilities() const;
    const boost::json::object& modern_meta() const;
    boost::asio::awaitable<Outcome<boost::json::object>> answer_input_requests(const boost::json::object& requests);
    /// A modern server refused our protocol version and listed one we speak: it is ours from now on (retry).
    bool adopt_supported_version(const jsonrpc::Error& e);
    /// Why a request's result cannot be used (not an object, an unknown resultType, too many input rounds), or
    /// nullopt: complete, or input_required to answer.
    std::optional<jsonrpc::Error> unusable_result(const std::string& method, const boost::json::value& result,
                                                  int round) const;
    /// Polls the task a request was answered with (`handle`: the CreateTaskResult) to its end; the final result.
    boost::asio::awaitable<Outcome<boost::json::value>> follow_task(boost::json::value handle, CallOptions options);
    boost::asio::awaitable<Outcome<void>> cancel_task(std::string task_id);
    // 2025-11-25's experimental tasks: a server that declares tasks.requests.tools.call is asked for a task (the `task`
    // param) for the tools whose execution.taskSupport is "required" or "optional" (seen in tools/list).
    void note_legacy_task_tools(const std::vector<boost::json::value>& tools);
    bool wants_legacy_task(const std::string& tool) const;
    static bool is_legacy_task_handle(const std::string& method, const boost::json::object& result);
    /// The CLIENT span of one request (OTel's MCP conventions), under `parent`.
    trace::Span client_span(std::string_view method, const boost::json::object& params,
                            const trace::SpanContext& parent) const;
    /// tasks/get, tasks/update (`extra`: its inputResponses) with the era's _meta, a span under `parent`.
    boost::asio::awaitable<Outcome<boost::json::value>> task_request(std::string method, std::string task_id,
                                                                     boost::json::object extra,
                                                                     trace::SpanContext parent);
    boost::asio::awaitable<Outcome<boost::json::value>> handle_server_request(std::string key, std::string method,
                                                                              boost::json::value params);
    void handle_notification(const std::string& method, const boost::json::value& params);
    boost::asio::awaitable<Outcome<std::vector<boost::json::value>>> list_all(std::string method, std::string_view key);
    boost::asio::awaitable<Outcome<void>> reopen_listen();
    jsonrpc::RequestOptions request_options(const CallOptions& o) const;

    std::shared_ptr<jsonrpc::Connection> connection_;
    ClientOptions options_;
    Era era_ = Era::legacy;
    std::string protocol_version_;
    boost::json::object capabilities_;
    Implementation server_info_;
    std::string instructions_;
    std::string log_level_;  // modern: sent per request
    std::map<std::string, std::optional<std::chrono::milliseconds>> list_ttl_;
    // modern_meta() for the version and log level it was built with: every modern request carries it.
    mutable boost::json::object meta_cache_;
    mutable std::shared_ptr<const jsonrpc::MetaMembers> meta_members_;  // meta_cache_ serialized, for requests
    // meta_members_ without the Tasks extension (TaskMode::undeclared), and the meta_members_ it was made from.
    mutable std::shared_ptr<const jsonrpc::MetaMembers> meta_untasked_;
    mutable const jsonrpc::MetaMembers* meta_untasked_from_ = nullptr;
    std::shared_ptr<const jsonrpc::MetaMembers> meta_for(TaskMode mode) const;
    mutable std::string meta_cache_version_, meta_cache_level_;

    // Modern subscriptions: one listen stream carrying the whole filter.
    struct Listen;
    /// Starts a subscriptions/listen request for `filter` in the background, held by `l` (its id, its cancel signal,
    /// settled when it ends); `what` names it in a log line if it throws.
    void open_listen(std::shared_ptr<Listen> l, boost::json::object filter, std::string what);
    std::set<std::string> subscribed_;
    std::shared_ptr<Listen> listen_;
    std::set<std::string> legacy_task_tools_;
    // Tasks followed with a subscriptions/listen stream of their own (notifications/tasks), by task id.
    struct TaskWatch;
    std::map<std::string, std::shared_ptr<TaskWatch>> task_watches_;
    std::shared_ptr<TaskWatch> watch_task(const std::string& task_id);
    bool on_task_notification(const std::string& method, const boost::json::value& params);
};

}  // namespace switchboard::mcp
