#include "connection_state.hpp"

#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/core/text.hpp>

#include <boost/asio/co_spawn.hpp>
#include <spdlog/spdlog.h>

// The Connection's life: start, the read loop (every message dispatched from it), the write loop, and closing. The
// request path is in connection_request.cpp, the reply path in connection_reply.cpp, deadlines and stalls in
// connection_timeouts.cpp, the peer's requests in connection_incoming.cpp.
namespace switchboard::jsonrpc {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using core::as_tuple_awaitable;
using detail::as_our_id;
using detail::id_key;
using detail::max_batch;

std::shared_ptr<Connection> Connection::create(asio::any_io_executor ex, std::shared_ptr<Channel> channel,
                                               Options options) {
    return std::shared_ptr<Connection>(new Connection(std::move(ex), std::move(channel), std::move(options)));
}

Connection::Connection(asio::any_io_executor ex, std::shared_ptr<Channel> channel, Options options)
    : executor_(ex),
      wakeups_(core::Wakeup::registry(executor_)),
      channel_(std::move(channel)),
      options_(std::move(options)),
      outbox_signal_(ex),
      stall_timer_(ex),
      deadline_timer_(ex) {}

Connection::~Connection() = default;

void Connection::start() {
    if (started_) return;
    started_ = true;
    running_loops_ = 1;
    // A reply's blobs are decoded for a requester who takes the bytes; for the others they stay text.
    channel_->set_blob_policy([weak = weak_from_this()](const json::value& id) {
        auto self = weak.lock();
        const auto ours = self ? as_our_id(id) : std::nullopt;
        if (!ours) return true;
        const auto it = self->pending_.find(*ours);
        return it == self->pending_.end() || it->second->wants_blobs;
    });
    asio::co_spawn(executor_, read_loop(), loop_done());
    if (!outbox_.empty()) wake_writer();  // queued before the start
}

std::function<void(std::exception_ptr)> Connection::loop_done() {
    return [self = shared_from_this()](std::exception_ptr e) {
        if (e) {
            core::log_exception(e, self->with_context("connection loop"));
            self->fail_all(Error::make_local(code::transport_error, self->with_context("internal error in a loop")));
        }
        if (--self->running_loops_ == 0) self->loops_done_.fire();
    };
}

// The write loop starts with the first message that cannot be written at once: a channel whose writes all go out
// at once (an HTTP request's own session: its sink only queues) never needs it, and a session per request saves a
// coroutine and a scheduler pass.
void Connection::wake_writer() {
    if (started_ && !write_loop_started_ && !closed_error_) {
        write_loop_started_ = true;
        ++running_loops_;
        asio::co_spawn(executor_, write_loop(), loop_done());
    }
    outbox_signal_.cancel();
}

std::string Connection::with_context(std::string message) const {
    return fmt::format("{}: {}", options_.peer_name, message);
}

awaitable<void> Connection::read_loop() {
    for (;;) {
        Received r = co_await channel_->read();
        ++received_;
        switch (r.kind) {
        case Received::Kind::message:
            if (r.streamed)
                dispatch(std::move(*r.streamed));
            else
                dispatch(std::move(r.text));
            break;
        case Received::Kind::oversize: handle_oversize(r); break;
        case Received::Kind::closed:
            if (!closing_ && options_.finish_incoming_on_eof.count() > 0) {
                const auto until = clock::now() + options_.finish_incoming_on_eof;
                while (!incoming_.empty() && clock::now() < until)
                    co_await incoming_idle_.wait_for(until - clock::now());
                // Let the writer flush what the finished requests queued.
                co_await wait_drained(until);
            }
            if (closing_)
                fail_all(Error::make_local(code::connection_closed, with_context("connection closed")));
            else
                fail_all(Error::make_local(code::connection_closed,
                                           with_context(r.reason.empty() ? "closed the connection" : r.reason)));
            co_return;
        }
    }
}

awaitable<void> Connection::write_loop() {
    while (!closed_error_) {
        if (outbox_.empty()) {
            drained_.fire();
            outbox_signal_.expires_at(clock::time_point::max());
            co_await outbox_signal_.async_wait(as_tuple_awaitable);
            continue;
        }
        // Everything queued goes out in one channel write: pipelined requests and the replies to a burst of them
        // cost one system call instead of one each.
        boost::system::error_code ec;
        writing_ = true;
        if (outbox_.front().stream) {
            auto stream = std::move(outbox_.front().stream);
            outbox_.pop_front();
            ec = co_await channel_->write_stream(std::move(stream));
        } else if (outbox_.size() == 1 || outbox_[1].stream) {
            std::string text = std::move(outbox_.front().text);
            outbox_.pop_front();
            ec = co_await channel_->write(std::move(text));
        } else {
            std::vector<std::string> batch;
            batch.reserve(std::min<std::size_t>(outbox_.size(), max_batch));
            while (!outbox_.empty() && !outbox_.front().stream && batch.size() < max_batch) {
                batch.push_back(std::move(outbox_.front().text));
                outbox_.pop_front();
            }
            ec = co_await channel_->write_batch(std::move(batch));
        }
        writing_ = false;
        if (ec) {
            // A peer that died makes writes fail before reads see the end; the reader's reason (exit status,
            // stderr) is the useful one, so give it a moment.
            co_await closed_event_.wait_for(std::chrono::seconds(1));
            fail_all(Error::make_local(code::transport_error, with_context("write failed: " + ec.message())));
            co_return;
        }
    }
}

void Connection::enqueue(std::string text) {
    if (closed_error_) return;
    // Nothing queued and no write in flight: write now, without waking the write loop (one event-loop round trip
    // and its completion less per message). A partial write leaves the rest to the loop.
    if (started_ && !closing_ && !writing_ && outbox_.empty() && channel_->try_write(text)) return;
    outbox_.push_back(Outgoing{std::move(text), nullptr});
    wake_writer();
}

void Connection::notify(std::string_view method, json::value params) {
    if (closed_error_) {
        spdlog::debug("{}: dropped notification {} after close", options_.peer_name, method);
        return;
    }
    enqueue(serialize_notification(method, params));
}

void Connection::protocol_error(std::string what) {
    spdlog::warn("{}", with_context(what));
    last_protocol_error_ = std::move(what);
}

void Connection::dispatch(std::string text) {
    if (result_text_asked_ && dispatch_result_text(text)) return;
    auto parsed = parse_message(text);
    dispatch(std::move(parsed), text);
}

void Connection::dispatch(StreamedMessage streamed) {
    if (streamed.error) {
        dispatch(std::move(*streamed.error), streamed.head + "…");
        return;
    }
    if (streamed.message) {
        dispatch(Outcome<Message>(std::move(*streamed.message)), std::string_view());
        return;
    }
    dispatch(parse_message(std::move(streamed.value), std::move(streamed.blobs)), streamed.head + "…");
}

// `text` is the message's text, or its first bytes, for a report of what was wrong with it.
void Connection::dispatch(Outcome<Message>&& parsed, std::string_view text) {
    if (!parsed) {
        const bool is_json = parsed.error().code != code::parse_error;
        protocol_error(fmt::format("{}: {}", is_json ? "sent an invalid JSON-RPC message" : "wrote non-JSON output",
                                   preview(text, 200)));
        if (options_.reply_to_invalid) enqueue(serialize_error(nullptr, parsed.error()));
        return;
    }
    Message m = std::move(*parsed);
    switch (m.kind) {
    case Message::Kind::response: handle_response(std::move(m)); return;
    case Message::Kind::notification:
        if (m.method == "notifications/progress") {
            route_progress(m.params);
        } else if (m.method == "notifications/cancelled") {
            cancel_incoming(m.params);
        } else if (notification_handler_) {
            try {
                notification_handler_(m.method, m.params);
            } catch (const std::exception& e) {
                spdlog::error("{}: notification handler for {} failed: {}", options_.peer_name, m.method, e.what());
            }
        }
        return;
    case Message::Kind::request: {
        if (!request_handler_) {
            enqueue(serialize_error(m.id, Error{code::method_not_found, "Method not found: " + m.method, {}, false}));
            return;
        }
        auto key = id_key(m.id);
        auto inc = std::make_shared<Incoming>();  // made first: the map never holds a null entry
        if (!incoming_.try_emplace(key, inc).second) {
            enqueue(serialize_error(m.id, Error{code::invalid_request, "Duplicate request id " + key, {}, false}));
            return;
        }
        auto self = shared_from_this();
        // Started here and finished inline when the handler answers at once (no event-loop round trip for it).
        core::start_inline(executor_, handle_incoming(std::move(m), key, inc), inc->signal.slot(),
                           [self, key, inc](std::exception_ptr e) {
                               if (e) core::log_exception(e, self->with_context("request handler"));
                               // The id may already be reused by a newer request: erase only our own entry.
                               if (auto it = self->incoming_.find(key);
                                   it != self->incoming_.end() && it->second == inc)
                                   self->forget_incoming(it);
                           });
        return;
    }
    }
}

void Connection::fail_all(Error why) {
    if (closed_error_) return;
    closed_error_ = why;
    closed_event_.set();
    auto pending = std::move(pending_);
    pending_.clear();
    for (auto& [id, p] : pending) {
        Error e = why;
        if (!closing_) e.message += fmt::format(" (while waiting for the reply to {})", p->method);
        p->outcome = std::move(e);
        p->wakeup.wake();
    }
    // Collected first: a task that ended inside emit() would erase its entry while the map is walked.
    std::vector<std::shared_ptr<Incoming>> running;
    running.reserve(incoming_.size());
    for (auto& [key, inc] : incoming_) running.push_back(inc);
    for (auto& inc : running) {
        inc->cancelled = true;
        inc->signal.emit(asio::cancellation_type::terminal);
    }
    outbox_.clear();
    outbox_signal_.cancel();
    stall_timer_.cancel();
    deadline_timer_.cancel();
    deadline_armed_ = clock::time_point::max();
    drained_.fire();
    if (close_handler_) {
        auto h = std::move(close_handler_);
        h(why);
    }
}

awaitable<void> Connection::wait_drained(clock::time_point until) {
    while ((!outbox_.empty() || writing_) && !closed_error_ && clock::now() < until)
        co_await drained_.wait_for(until - clock::now());
}

awaitable<void> Connection::close() {
    const bool first = !closing_;
    closing_ = true;
    if (first) {
        // Flush what is queued (e.g. a last notifications/cancelled), briefly.
        if (started_) co_await wait_drained(clock::now() + std::chrono::milliseconds(500));
        co_await channel_->close();
        if (!started_) fail_all(Error::make_local(code::connection_closed, with_context("connection closed")));
    }
    // Bounded: a channel whose close() does not end its read must not hang the caller.
    const auto loops_deadline = clock::now() + std::chrono::seconds(15);
    while (started_ && running_loops_ > 0 && clock::now() < loops_deadline)
        co_await loops_done_.wait_for(loops_deadline - clock::now());
    if (!closed_error_) fail_all(Error::make_local(code::connection_closed, with_context("connection closed")));
}
}  // namespace switchboard::jsonrpc
