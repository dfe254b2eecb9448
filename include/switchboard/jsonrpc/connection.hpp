// The JSON-RPC engine over one Channel: request/response correlation, per-request timeouts (reset on progress, with
// a maximum total), `notifications/cancelled` on abort or timeout, progress routing, and dispatch of incoming
// requests (each in its own coroutine, cancellable by the peer) and notifications. Used by both MCP roles.
//
// Thread-safety: single owner. Every member function must be called on the executor given at construction;
// the io_context that runs it is the only thread that touches the object.
#pragma once

#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/jsonrpc/channel.hpp>
#include <switchboard/jsonrpc/error.hpp>
#include <switchboard/jsonrpc/message.hpp>
#include <switchboard/jsonrpc/signal.hpp>
#include <switchboard/jsonrpc/stream_parser.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace switchboard::core::detail {
class WakeupService;  // core/wakeup.hpp
}

namespace switchboard::jsonrpc {

struct Progress {
    double progress = 0;
    std::optional<double> total;
    std::string message;
};

struct RequestOptions {
    std::chrono::milliseconds timeout{0};            ///< 0: the connection's default
    std::chrono::milliseconds max_total_timeout{0};  ///< 0: none; caps progress resets
    bool reset_timeout_on_progress = true;
    bool cancellable = true;  ///< false for `initialize`, which must never be cancelled
    /// Set to receive progress: a progressToken is added to params._meta.
    std::function<void(const Progress&)> on_progress;
    /// Called with the request's id just before it is sent (a modern subscription is keyed by it).
    std::function<void(std::int64_t id)> on_sent;
    /// Added to params._meta as the request is written (see MetaMembers); null: nothing.
    std::shared_ptr<const MetaMembers> meta;
    /// Receives the blobs a big response had decoded as it was read (see StreamParser); the result then holds an
    /// empty string in each one's place. Null: they are put back into the result as base64.
    std::shared_ptr<DecodedBlobs> blobs;
    /// Receives the result's JSON text as the peer wrote it, when the reply is a result object read whole (not in
    /// pieces by a StreamParser) on one line: the returned value is then null. For a caller that forwards a result
    /// as it came (a gateway), which would otherwise build it into values and write it out again. Any other reply (an
    /// error, a result read in pieces, one with a line break in its whitespace) comes as a value, and this stays
    /// empty.
    std::shared_ptr<ResultText> result_text;
};

namespace detail {
struct IncomingState;  // one request being answered (connection.cpp)
}

/// What a handler of an incoming request can do besides returning its result.
class IncomingRequest {
public:
    /// A request answered outside any Connection (a stateless HTTP request answered on its own), given its id and
    /// params: what it notifies is written with `send`, and the result's _meta members are read back with
    /// result_meta().
    static IncomingRequest detached(Id id, const boost::json::value& params, std::function<void(std::string)> send);

    const Id& id() const { return id_; }
    /// Sends notifications/progress when the request carried a progressToken; otherwise does nothing.
    void progress(double progress, std::optional<double> total = {}, std::string message = {}) const;
    /// Sends a notification to the peer (e.g. a log message related to this request).
    void notify(std::string_view method, boost::json::value params) const;
    /// Members the result's _meta gets as it is written (see MetaMembers), when the result is an object: what every
    /// result of a session carries (a 2026-07-28 server's serverInfo), serialized once instead of copied into each.
    void set_result_meta(std::shared_ptr<const MetaMembers> meta) const;
    /// What set_result_meta() set (null: nothing).
    std::shared_ptr<const MetaMembers> result_meta() const;
    /// Members written ahead of the result's own, as serialize_result's `members` (JSON text kept serialized, e.g. a
    /// list answered the same way to many requests); the result must then be an object without those keys.
    void set_result_members(std::shared_ptr<const std::string> members) const;
    /// What set_result_members() set (null: nothing).
    std::shared_ptr<const std::string> result_members() const;
    /// Whether set_result_members() reaches a writer (false for a default-constructed request).
    bool takes_result_members() const { return state_ != nullptr; }

private:
    friend class Connection;
    IncomingRequest(std::weak_ptr<class Connection> c, Id id, boost::json::value token,
                    std::shared_ptr<detail::IncomingState> state)
        : conn_(std::move(c)), id_(std::move(id)), progress_token_(std::move(token)), state_(std::move(state)) {}
    std::weak_ptr<Connection> conn_;
    Id id_;
    boost::json::value progress_token_;
    std::shared_ptr<detail::IncomingState> state_;
};

/// The error answer to request `id` as the peer gets it: a local error (this process's own codes never go on the
/// wire) as an internal error.
std::string serialize_failure(const Id& id, Error error);

class Connection : public std::enable_shared_from_this<Connection> {
public:
    using clock = std::chrono::steady_clock;
    /// Handles an incoming request. Runs in its own coroutine with a cancellation slot that fires on the peer's
    /// notifications/cancelled; after cancellation no response is sent.
    using RequestHandler = std::function<boost::asio::awaitable<Outcome<boost::json::value>>(
        std::string method, boost::json::value params, IncomingRequest request)>;
    using NotificationHandler = std::function<void(const std::string& method, const boost::json::value& params)>;
    using CloseHandler = std::function<void(const Error& why)>;

    struct Options {
        std::string peer_name = "peer";  ///< used in every error message ("server \"x\" ...")
        std::chrono::milliseconds default_timeout{60'000};
        bool reply_to_invalid = false;  ///< server role: answer unparseable input with -32700 / -32600
        /// Server role: when the peer's stream ends, still answer the requests in progress (bounded), so that
        /// `printf '...' | server` gets every reply.
        std::chrono::milliseconds finish_incoming_on_eof{0};
        /// While requests wait, how often to ask a channel that can stall (Channel::stalled) whether its peer can
        /// answer; when it cannot at two checks in a row, the waiting requests fail with `unavailable`. 0: never ask.
        std::chrono::milliseconds stall_check_interval{200};
    };

    static std::shared_ptr<Connection> create(boost::asio::any_io_executor ex, std::shared_ptr<Channel> channel,
                                              Options options);
    ~Connection();

    void on_request(RequestHandler h) { request_handler_ = std::move(h); }
    void on_notification(NotificationHandler h) { notification_handler_ = std::move(h); }
    void on_close(CloseHandler h) { close_handler_ = std::move(h); }

    /// Starts reading and writing. Handlers must be set before.
    void start();

    /// Sends a request and waits for its response, the timeout, the connection's end, or cancellation of the
    /// awaiting coroutine (terminal cancellation, e.g. through awaitable operators or a bound cancellation slot),
    /// whichever comes first. Never throws for expected failures: they are Errors with `local == true`.
    boost::asio::awaitable<Outcome<boost::json::value>> request(std::string method, boost::json::value params,
                                                                RequestOptions options);
    /// The same, reading `params` where they are instead of taking them over: they must outlive the request, so
    /// await it at once (`co_await c.request_view(m, p, o)`), never store it. For a caller that keeps its params for
    /// a retry (ClientSession), which would otherwise copy them for every attempt.
    boost::asio::awaitable<Outcome<boost::json::value>> request_view(std::string method,
                                                                     const boost::json::value& params,
                                                                     RequestOptions options);
    /// Coroutines take no default arguments (GCC 12 miscompiles them): this is the plain short form.
    boost::asio::awaitable<Outcome<boost::json::value>> request(std::string method, boost::json::value params) {
        return request(std::move(method), std::move(params), RequestOptions{});
    }

    /// Queues a notification. Never blocks.
    void notify(std::string_view method, boost::json::value params = nullptr);

    /// Closes the channel gracefully (queued messages are flushed first, up to a short deadline) and fails every
    /// pending request. Safe to call more than once.
    boost::asio::awaitable<void> close();

    /// Cancels every request this side is waiting for (a cancellable one): each sends notifications/cancelled with
    /// `reason` and its caller gets a `cancelled` error. For a host that shuts down with calls still running: no
    /// call has to race its request against a shutdown event (two coroutines and a parallel group a call).
    void cancel_requests(std::string reason);

    bool is_open() const { return !closed_error_; }
    /// The channel's terminate(): the peer ends now (see Channel::terminate).
    void terminate() { channel_->terminate(); }
    /// Why the connection ended; nullopt while open.
    const std::optional<Error>& closed_error() const { return closed_error_; }
    /// The last thing the peer sent that could not be used (non-JSON line, oversize message), for error messages.
    const std::string& last_protocol_error() const { return last_protocol_error_; }
    std::size_t pending_requests() const { return pending_.size(); }
    boost::asio::any_io_executor get_executor() const { return executor_; }

private:
    struct Pending;
    Connection(boost::asio::any_io_executor ex, std::shared_ptr<Channel> channel, Options options);

    boost::asio::awaitable<void> read_loop();
    boost::asio::awaitable<void> write_loop();
    boost::asio::awaitable<void> handle_incoming(Message m, std::string key,
                                                 std::shared_ptr<detail::IncomingState> inc);
    void dispatch(std::string text);
    void dispatch(StreamedMessage streamed);
    void dispatch(Outcome<Message>&& parsed, std::string_view text);
    void handle_response(Message m);
    bool dispatch_result_text(std::string_view text);
    void wake_caller(Pending& p);
    void handle_oversize(const Received& r);
    void route_progress(const boost::json::value& params);
    void cancel_incoming(const boost::json::value& params);
    void protocol_error(std::string what);
    void fail_all(Error why);
    std::function<void(std::exception_ptr)> loop_done();
    void wake_writer();
    void arm_deadline(clock::time_point at);
    void on_deadline();
    void watch_stalls();
    boost::asio::awaitable<void> stall_watch();
    boost::asio::awaitable<void> wait_drained(clock::time_point until);
    using Incoming = detail::IncomingState;
    void forget_incoming(std::unordered_map<std::string, std::shared_ptr<Incoming>>::iterator it);
    void enqueue(std::string text);
    std::string with_context(std::string message) const;

    boost::asio::any_io_executor executor_;
    core::detail::WakeupService& wakeups_;  // for each request's Wakeup (core::Wakeup::Registry)
    std::shared_ptr<Channel> channel_;
    Options options_;
    RequestHandler request_handler_;
    NotificationHandler notification_handler_;
    CloseHandler close_handler_;

    std::int64_t next_id_ = 1;
    std::unordered_map<std::int64_t, std::shared_ptr<Pending>> pending_;
    std::unordered_map<std::string, std::shared_ptr<Incoming>> incoming_;  // key: serialized id

    struct Outgoing {
        std::string text;
        std::shared_ptr<ResultStream> stream;  // instead of text: a big result, serialized as it is written
    };
    std::deque<Outgoing> outbox_;
    boost::asio::steady_timer outbox_signal_;
    boost::asio::steady_timer stall_timer_;  // armed only while requests wait on a channel that can stall
    bool stall_watch_ = false;
    // Armed at the earliest deadline of the waiting requests (max: not armed); see arm_deadline().
    boost::asio::steady_timer deadline_timer_;
    clock::time_point deadline_armed_ = clock::time_point::max();
    std::uint64_t received_ = 0;  // reads from the channel, for the stall watch
    bool result_text_asked_ = false;  // a request asked for RequestOptions::result_text: replies are looked at first
    Signal loops_done_;  // fired when both loops have ended
    int running_loops_ = 0;
    bool write_loop_started_ = false;
    bool started_ = false;
    bool closing_ = false;
    bool writing_ = false;  // the write loop is inside a channel write
    std::optional<Error> closed_error_;
    core::OneShotEvent closed_event_;
    // Fired when the outbox is empty and no write is in flight (close() and end-of-input flush on it).
    Signal drained_;
    // Fired when the last incoming request is answered (end of input waits on it).
    Signal incoming_idle_;
    std::string last_protocol_error_;

    friend class IncomingRequest;
};

}  // namespace switchboard::jsonrpc
