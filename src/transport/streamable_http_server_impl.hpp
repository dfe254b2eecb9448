// The Streamable HTTP server's state, shared by its files (private to the transport layer):
//   streamable_http_server.cpp     the route table, the public API, delivering a stream as JSON or SSE
//   streamable_http_sessions.cpp   legacy sessions: POST / GET (resumable SSE replay) / DELETE, idle sweep
//   streamable_http_stateless.cpp  2026-07-28 requests: header checks, each answered alone (or by a session)
//
// Thread-safety: single owner; everything runs on the server's executor.
#pragma once

#include <switchboard/core/task_group.hpp>
#include <switchboard/http/server.hpp>
#include <switchboard/jsonrpc/message.hpp>
#include <switchboard/transport/http_server.hpp>

#include "push_channel.hpp"

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/container/small_vector.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::transport::streamable {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
namespace json = boost::json;
using clock = std::chrono::steady_clock;
using switchboard::http::Reply;
using switchboard::http::Responder;
using switchboard::http::ServerRequest;

// The Streamable HTTP transport mirrors this body field into the MCP-Protocol-Version header (2026-07-28).
constexpr std::string_view meta_protocol_version = "io.modelcontextprotocol/protocolVersion";
constexpr int code_header_mismatch = -32020;
constexpr int code_missing_capability = -32021;
constexpr int code_unsupported_version = -32022;
// What the official SDKs answer for transport-level problems (no JSON-RPC meaning of their own).
constexpr int code_transport = -32000;
constexpr int code_session_not_found = -32001;

/// A JSON-RPC error response body.
std::string error_body(int code, std::string message, const json::value& id, json::value data);
std::string error_body(int code, std::string message);
/// A reply with a JSON body.
Reply json_reply(bhttp::status status, std::string body);
bool contains(const std::vector<std::string>& list, std::string_view v);
std::string join(const std::vector<std::string>& list);

struct Event {
    std::uint64_t seq = 0;
    std::shared_ptr<const std::string> text;   // one JSON-RPC message; null for none
    bool final = false;                        // the response that ends the stream
    bhttp::status status = bhttp::status::ok;  // for a final response sent as application/json
};

// The events of a pipe or a stream's log, the first two held in place: a request's stream usually carries one, its
// answer (a deque allocates its map and a block for the first: four allocations a request, with the log's).
class EventQueue {
public:
    bool empty() const { return head_ == items_.size(); }
    std::size_t size() const { return items_.size() - head_; }
    Event& front() { return items_[head_]; }
    void push_back(Event e) { items_.push_back(std::move(e)); }
    void pop_front() {
        items_[head_] = Event{};  // its text let go now
        if (++head_ == items_.size()) {
            items_.clear();
            head_ = 0;
        } else if (head_ >= 32 && head_ * 2 >= items_.size()) {  // what was read taken out, now and then
            items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
            head_ = 0;
        }
    }
    auto begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
    auto end() const { return items_.end(); }

private:
    boost::container::small_vector<Event, 2> items_;
    std::size_t head_ = 0;
};

// Between the router and the HTTP response currently delivering one stream.
struct Pipe {
    explicit Pipe(const asio::any_io_executor& ex, std::size_t max_bytes) : signal(ex), limit(max_bytes) {}
    asio::steady_timer signal;
    EventQueue queue;
    std::size_t bytes = 0, limit;
    bool overflow = false;      // the client reads slower than we produce: drop it
    bool finish = false;        // end the response (session gone) without a final message
    bool disconnected = false;  // the client closed the connection
    bool watcher_done = true;
    bool stopping = false;
    bool watching = false;   // a watcher reads the connection (started once the answer takes a while)
    bool delivered = false;  // its delivery ended: not to be watched any more
    asio::cancellation_signal watch_stop;

    void push(Event e);
    Event pop();
};

// One logical SSE stream: the answer to one request, or a session's server-initiated stream.
struct Stream {
    std::string id;           // event ids are "<id>-<seq>"; empty: no ids (2026-07-28 streams are not resumable)
    std::size_t max_log = 0;  // 0: keep no log
    EventQueue log;
    std::size_t log_bytes = 0;
    std::uint64_t next_seq = 1;
    bool done = false;
    bool is_initialize = false;
    std::shared_ptr<Pipe> pipe;
    json::value request_id;                        // 2026-07-28: for cancellation on disconnect
    std::shared_ptr<detail::PushChannel> channel;  // 2026-07-28: the request's own session

    void emit(std::shared_ptr<const std::string> text, bool final, bhttp::status status);
};

struct Session {
    std::string id;
    std::shared_ptr<detail::PushChannel> channel;
    std::map<std::string, std::shared_ptr<Stream>> active;  // serialized request id -> its stream
    std::map<std::string, std::string> progress;            // serialized progress token -> request key
    std::deque<std::shared_ptr<Stream>> recent;             // answered streams, kept for resumption
    std::shared_ptr<Stream> standalone;                     // the GET stream
    std::uint64_t next_stream = 1;
    clock::time_point last_used = clock::now();
    std::string version;  // negotiated by initialize
    bool closed = false;

    std::shared_ptr<Stream> find_stream(std::string_view id) const;
};

struct DeliverOptions {
    bool sse_ok = true;      // the client accepts text/event-stream
    bool sse_now = false;    // open the stream at once (GET)
    bool priming = false;    // send an empty event carrying an id first
    std::string session_id;  // echoed as Mcp-Session-Id
    std::function<void()> on_disconnect;
    // Sent when the stream ends before any answer (its session ended): never leave the client waiting. The error's
    // body is built only then, not for every request (2.5 k instructions a request).
    bhttp::status unanswered_status = bhttp::status::internal_server_error;
    int unanswered_code = -32603;
    std::string_view unanswered_message;  // a string literal
    boost::json::value unanswered_id;
};

}  // namespace switchboard::transport::streamable

namespace switchboard::transport {

namespace asio = boost::asio;

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
    Impl(asio::any_io_executor e, SessionHandler h, HttpServerOptions o);

    using Stream = streamable::Stream;
    using Session = streamable::Session;
    using Pipe = streamable::Pipe;
    using Reply = streamable::Reply;
    using Responder = streamable::Responder;
    using ServerRequest = streamable::ServerRequest;

    asio::any_io_executor ex;
    SessionHandler handler;
    HttpServerOptions opt;
    std::unique_ptr<switchboard::http::Server> server;
    core::TaskGroup tasks;  // session handlers, stream watchers, the idle sweep
    asio::steady_timer sweep_timer;
    std::map<std::string, std::shared_ptr<Session>> sessions;
    bool stopped = false;
    // Deliveries still waiting for their answer and not watched yet, oldest first; one timer starts the watches of
    // those that wait too long (a timer per request cost a timerfd_settime per request).
    struct Unwatched {
        std::weak_ptr<Pipe> pipe;
        std::weak_ptr<switchboard::http::ServerConnection> connection;
        streamable::clock::time_point at;
    };
    std::deque<Unwatched> unwatched;
    asio::steady_timer watch_timer;
    bool watch_ticking = false;

    // streamable_http_server.cpp
    void start();  // after construction: the routes hold a weak reference
    switchboard::http::Router routes();
    std::size_t pipe_limit() const { return opt.max_message_size * 2 + 1024 * 1024; }
    void spawn_session(std::shared_ptr<jsonrpc::Channel> channel, std::function<void()> on_end);
    static void finish_stream(const std::shared_ptr<Stream>& st);
    asio::awaitable<void> handle_post(ServerRequest& req, Responder& res);
    static asio::awaitable<void> watch(std::shared_ptr<switchboard::http::ServerConnection> c, std::shared_ptr<Pipe> p);
    void start_watch(const std::shared_ptr<switchboard::http::ServerConnection>& c, const std::shared_ptr<Pipe>& p);
    asio::awaitable<void> stop_watch(std::shared_ptr<Pipe> p);
    void watch_later(const std::shared_ptr<switchboard::http::ServerConnection>& c, const std::shared_ptr<Pipe>& p);
    asio::awaitable<void> start_due_watches();
    asio::awaitable<void> deliver(Responder& res, std::shared_ptr<Stream> st, std::shared_ptr<Pipe> pipe,
                                  streamable::DeliverOptions d);
    void stop();

    // streamable_http_sessions.cpp
    std::shared_ptr<Session> create_session();
    void close_session(const std::shared_ptr<Session>& s, std::string why);
    void route(const std::weak_ptr<Session>& weak, std::string text);
    std::shared_ptr<Session> find_session(const ServerRequest& req, Reply& refusal);
    asio::awaitable<void> handle_legacy(ServerRequest& req, Responder& res, jsonrpc::Message msg,
                                        std::string header_version, bool sse_ok);
    asio::awaitable<void> handle_get(ServerRequest& req, Responder& res);
    asio::awaitable<void> handle_delete(ServerRequest& req, Responder& res);
    asio::awaitable<void> sweep();

    // streamable_http_stateless.cpp
    static void route_modern(const std::weak_ptr<Stream>& weak, std::string text);
    static asio::awaitable<void> answer_alone(asio::awaitable<std::string> answer, std::weak_ptr<Stream> weak);
    asio::awaitable<void> handle_modern(ServerRequest& req, Responder& res, jsonrpc::Message msg,
                                        std::string header_version, std::optional<std::string> body_version,
                                        bool sse_ok);
};

}  // namespace switchboard::transport
