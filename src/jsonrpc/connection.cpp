#include <switchboard/jsonrpc/connection.hpp>

#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/json_number.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/core/wakeup.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <charconv>
#include <regex>

namespace switchboard::jsonrpc {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

namespace {

using core::as_tuple_awaitable;
using core::size_text;
constexpr std::size_t max_batch = 256;  // messages per channel write
constexpr std::size_t stream_results_above = 1u << 20;

// The key of a request id in incoming_: its JSON text (5, "abc"). Integers, the usual ids, without a serializer
// (setting one up cost a few hundred instructions a request).
std::string id_key(const json::value& id) {
    if (id.is_int64()) return fmt::format_int(id.get_int64()).str();
    if (id.is_uint64()) return fmt::format_int(id.get_uint64()).str();
    return json::serialize(id);
}

std::string format_duration(std::chrono::milliseconds d) {
    if (d.count() % 1000 == 0) return fmt::format("{} s", d.count() / 1000);
    return fmt::format("{} ms", d.count());
}

std::optional<std::int64_t> as_our_id(const json::value& id) {
    if (id.is_int64()) return id.get_int64();
    if (id.is_uint64() && id.get_uint64() <= INT64_MAX) return static_cast<std::int64_t>(id.get_uint64());
    if (id.is_string()) {  // tolerate peers that echo numeric ids as strings
        std::int64_t v = 0;
        const auto& s = id.get_string();
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc() && p == s.data() + s.size()) return v;
    }
    return std::nullopt;
}

// Best effort: the id of a message we had to drop for its size, from its first or last bytes.
std::optional<std::int64_t> id_of_dropped(const std::string& head, const std::string& tail) {
    static const std::regex at_end(R"re("id"\s*:\s*(\d+)\s*\}\s*$)re");
    static const std::regex at_start(R"re(^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(\d+))re");
    std::smatch m;
    if (std::regex_search(tail, m, at_end) || std::regex_search(head, m, at_start)) return std::stoll(m[1].str());
    return std::nullopt;
}

}  // namespace

struct Connection::Pending {
    // A reply wakes the waiter at once, inside the read loop, where the channel allows it (no event-loop round trip
    // between a reply and its caller); the deadline timer, a stall or the end of the connection queue the wake-up.
    Pending(const asio::any_io_executor& ex, core::Wakeup::Registry& wakeups) : wakeup(ex, wakeups) {}
    core::Wakeup wakeup;
    std::optional<Outcome<json::value>> outcome;
    std::string method;
    clock::duration timeout{};
    clock::time_point deadline, max_deadline;
    bool reset_on_progress = true;
    bool cancellable = true;
    std::function<void(const Progress&)> on_progress;
    DecodedBlobs blobs;        // taken out of the result as it was read
    bool wants_blobs = false;  // RequestOptions::blobs was given
    std::string cancelled_because;  // cancel_requests(): why
};

struct detail::IncomingState {
    asio::cancellation_signal signal;
    bool cancelled = false;
    std::shared_ptr<const MetaMembers> result_meta;     // see IncomingRequest::set_result_meta
    std::shared_ptr<const std::string> result_members;  // see IncomingRequest::set_result_members
    std::function<void(std::string)> send;              // a detached request's writer (IncomingRequest::detached)
};

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

namespace {

// A request's params._meta.progressToken; null when it has none.
json::value progress_token_of(const json::value& params) {
    if (const auto* p = params.if_object())
        if (const auto* meta = p->if_contains("_meta"); meta && meta->is_object())
            if (const auto* t = meta->as_object().if_contains("progressToken")) return *t;
    return nullptr;
}

}  // namespace

std::string serialize_failure(const Id& id, Error error) {
    if (error.local) {
        error.code = code::internal_error;
        error.local = false;
    }
    return serialize_error(id, error);
}

awaitable<void> Connection::handle_incoming(Message m, std::string key, std::shared_ptr<detail::IncomingState> inc) {
    IncomingRequest req(weak_from_this(), m.id, progress_token_of(m.params), inc);

    Outcome<json::value> out = json::value();  // always assigned below
    try {
        out = co_await request_handler_(m.method, std::move(m.params), req);
    } catch (const std::exception& e) {
        if (inc->cancelled || closed_error_) co_return;
        out = Error::from_exception(e);
    }
    if (inc->cancelled || closed_error_) co_return;  // a cancelled request gets no response
    forget_incoming(incoming_.find(key));            // answered: the peer may reuse the id from now on
    if (out) {
        // A result with members kept as text is written whole: they are held whole already.
        const std::string_view members = inc->result_members ? std::string_view(*inc->result_members) : "";
        const auto max = members.empty() ? stream_results_above : std::string::npos;
        if (auto text = serialize_result(m.id, *out, max, inc->result_meta.get(), members)) {
            enqueue(std::move(*text));
        } else if (!closed_error_) {
            // A big result goes out as it is serialized: its text is never held whole beside it.
            if (inc->result_meta) merge_meta(*out, *inc->result_meta);
            outbox_.push_back(Outgoing{{}, std::make_shared<ResultStream>(m.id, std::move(*out))});
            wake_writer();
        }
    } else {
        enqueue(serialize_failure(m.id, std::move(out.error())));
    }
}

void Connection::cancel_incoming(const json::value& params) {
    const auto* p = params.if_object();
    const auto* id = p ? p->if_contains("requestId") : nullptr;
    if (!id) return;  // malformed cancellations are ignored
    auto it = incoming_.find(id_key(*id));
    if (it == incoming_.end()) return;  // unknown or already finished
    std::string reason;
    if (const auto* r = p->if_contains("reason"); r && r->is_string()) reason = r->as_string().c_str();
    spdlog::debug("{}: request {} cancelled by peer{}{}", options_.peer_name, json::serialize(*id),
                  reason.empty() ? "" : ": ", reason);
    const auto inc = it->second;  // kept alive through emit(): a task ending inside it erases its entry
    inc->cancelled = true;
    inc->signal.emit(asio::cancellation_type::terminal);
}

// From the read loop: at once where the channel allows it (see Channel::resumes_callers_inline), else queued.
void Connection::wake_caller(Pending& p) {
    if (channel_->resumes_callers_inline())
        p.wakeup.wake_now();
    else
        p.wakeup.wake();
}

void Connection::handle_response(Message m) {
    auto id = as_our_id(m.id);
    if (!id) {
        protocol_error(m.error ? "sent an error without a request id: " + m.error->describe()
                               : "sent a response with an id we never used: " + json::serialize(m.id));
        return;
    }
    auto it = pending_.find(*id);
    if (it == pending_.end()) {
        spdlog::debug("{}: response to unknown or abandoned request {}", options_.peer_name, *id);
        return;
    }
    auto p = it->second;
    pending_.erase(it);
    if (m.error) {
        p->outcome = std::move(*m.error);
    } else {
        p->outcome = std::move(m.result);
        p->blobs = std::move(m.blobs);
    }
    wake_caller(*p);
}

void Connection::handle_oversize(const Received& r) {
    protocol_error(fmt::format("sent a message of {}, over the {} limit (it starts with: {})", size_text(r.length),
                               size_text(channel_->max_message_size()), preview(r.head, 80)));
    auto id = id_of_dropped(r.head, r.tail);
    if (!id) return;
    auto it = pending_.find(*id);
    if (it == pending_.end()) return;
    auto p = it->second;
    pending_.erase(it);
    p->outcome =
        Error::make_local(code::protocol_violation,
                          with_context(fmt::format("the reply to {} was {}, over the {} message size limit", p->method,
                                                   size_text(r.length), size_text(channel_->max_message_size()))));
    wake_caller(*p);
}

void Connection::route_progress(const json::value& params) {
    const auto* p = params.if_object();
    const auto* token = p ? p->if_contains("progressToken") : nullptr;
    auto id = token ? as_our_id(*token) : std::nullopt;
    auto it = id ? pending_.find(*id) : pending_.end();
    if (it == pending_.end()) {
        if (notification_handler_) notification_handler_("notifications/progress", params);
        return;
    }
    auto& pending = *it->second;
    Progress prog;
    if (const auto* v = p->if_contains("progress"); v && v->is_number()) prog.progress = v->to_number<double>();
    if (const auto* v = p->if_contains("total"); v && v->is_number()) prog.total = v->to_number<double>();
    if (const auto* v = p->if_contains("message"); v && v->is_string()) prog.message = v->as_string().c_str();
    if (pending.on_progress) pending.on_progress(prog);
    // A later deadline needs no wake-up: the deadline timer finds it when it fires for the earlier one.
    if (pending.reset_on_progress) pending.deadline = clock::now() + pending.timeout;
}

void Connection::cancel_requests(std::string reason) {
    for (auto& [id, p] : pending_)
        if (p->cancellable && !p->outcome) {
            p->cancelled_because = reason;
            p->wakeup.wake();
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

awaitable<Outcome<json::value>> Connection::request(std::string method, json::value params, RequestOptions options) {
    co_return co_await request_view(std::move(method), params, std::move(options));  // `params` lives in this frame
}

awaitable<Outcome<json::value>> Connection::request_view(std::string method, const json::value& params,
                                                         RequestOptions options) {
    if (closed_error_) co_return *closed_error_;
    const std::int64_t id = next_id_++;
    auto p = std::make_shared<Pending>(executor_, wakeups_);
    p->method = method;
    json::value with_token;  // only when progress is asked for: the params plus _meta.progressToken
    const bool tokened = static_cast<bool>(options.on_progress);
    if (tokened) {
        with_token = params.is_null() ? json::value(json::object{}) : params;
        if (auto* o = with_token.if_object()) {
            auto& meta = (*o)["_meta"];
            if (!meta.is_object()) meta = json::object{};
            meta.as_object()["progressToken"] = id;
        }
        p->on_progress = std::move(options.on_progress);
    }
    const json::value& sent = tokened ? with_token : params;
    const auto timeout = options.timeout.count() > 0 ? options.timeout : options_.default_timeout;
    const auto now = clock::now();
    p->timeout = timeout;
    p->deadline = now + timeout;
    p->max_deadline =
        options.max_total_timeout.count() > 0 ? now + options.max_total_timeout : clock::time_point::max();
    p->reset_on_progress = options.reset_timeout_on_progress;
    p->cancellable = options.cancellable;
    p->wants_blobs = options.blobs != nullptr;
    pending_.emplace(id, p);
    if (options.on_sent) options.on_sent(id);
    enqueue(options.meta ? serialize_request(id, method, sent, *options.meta) : serialize_request(id, method, sent));
    watch_stalls();

    bool cancelled = false;
    while (!p->outcome) {
        // Every wait arms its own deadline (nothing when an earlier one is armed): progress may have moved it after
        // the deadline timer woke this waiter and left it out of its next arming.
        arm_deadline(std::min(p->deadline, p->max_deadline));
        try {
            co_await p->wakeup.async_wait(as_tuple_awaitable);
            if (p->outcome) break;
            auto state = co_await asio::this_coro::cancellation_state;
            if (state.cancelled() != asio::cancellation_type::none || !p->cancelled_because.empty()) cancelled = true;
        } catch (const boost::system::system_error&) {
            cancelled = true;  // the awaiting coroutine was cancelled before it could wait
        }
        if (p->outcome) break;
        if (cancelled || clock::now() >= std::min(p->deadline, p->max_deadline)) break;
    }
    if (p->outcome) {
        if (options.blobs)
            *options.blobs = std::move(p->blobs);  // this reply's, none from an earlier round of the same call
        else if (!p->blobs.empty() && *p->outcome)
            restore_blobs(p->outcome->value(), std::move(p->blobs));
        co_return std::move(*p->outcome);
    }

    pending_.erase(id);
    const bool total_expired = clock::now() >= p->max_deadline;
    std::string reason = cancelled ? (p->cancelled_because.empty() ? "cancelled by the client"
                                                                    : "cancelled: " + p->cancelled_because)
                                   : fmt::format("timed out after {}",
                                                 format_duration(total_expired ? options.max_total_timeout : timeout));
    if (options.cancellable) notify("notifications/cancelled", json::object{{"requestId", id}, {"reason", reason}});
    if (cancelled) co_return Error::make_local(code::cancelled, with_context(method + " " + reason));
    std::string msg = fmt::format("no reply to {} ({})", method, reason);
    if (!last_protocol_error_.empty()) msg += "; last problem: it " + last_protocol_error_;
    co_return Error::make_local(code::timeout, with_context(msg));
}

// One timer for every waiting request, armed at the earliest deadline. A request with a later deadline than the
// armed one (the usual case: the same timeout, sent later) re-arms nothing, where a timer of its own at its deadline
// became the earliest timer and cost a timerfd_settime system call per request.
void Connection::arm_deadline(clock::time_point at) {
    if (at >= deadline_armed_ || closed_error_) return;
    deadline_armed_ = at;
    deadline_timer_.expires_at(at);  // cancels the wait for a later deadline; its handler sees operation_aborted
    // A plain handler holding a weak reference: a connection dropped while requests wait is not kept alive by it.
    deadline_timer_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
        if (ec) return;
        if (auto self = weak.lock()) self->on_deadline();
    });
}

void Connection::on_deadline() {
    deadline_armed_ = clock::time_point::max();
    const auto now = clock::now();
    auto next = clock::time_point::max();
    for (auto& [id, p] : pending_) {
        const auto due = std::min(p->deadline, p->max_deadline);
        if (due <= now)
            p->wakeup.wake();  // the waiter sees its deadline passed and gives up
        else
            next = std::min(next, due);
    }
    if (next != clock::time_point::max()) arm_deadline(next);
}

void Connection::watch_stalls() {
    if (stall_watch_ || closed_error_ || options_.stall_check_interval.count() <= 0 || !channel_->can_stall()) return;
    stall_watch_ = true;
    auto self = shared_from_this();
    asio::co_spawn(executor_, stall_watch(), [self](std::exception_ptr e) {
        if (!e) return;  // the coroutine cleared the flag itself (a later watch may have set it again since)
        core::log_exception(e, self->with_context("stall watch"));
        self->stall_watch_ = false;
    });
}

// A stopped process looks like a slow one from the pipe: without this its callers would wait out their timeouts.
// One timer per connection, armed only while requests wait. A peer that sent anything since the last tick is not
// asked (no /proc reads for a busy server), and requests fail only after two stalled ticks in a row with nothing
// read between them, so that a reply already in the pipe when the peer stopped is read, not thrown away.
awaitable<void> Connection::stall_watch() {
    auto seen = received_;
    int stalled_ticks = 0;
    while (!closed_error_ && !pending_.empty()) {
        stall_timer_.expires_after(options_.stall_check_interval);
        co_await stall_timer_.async_wait(as_tuple_awaitable);
        if (closed_error_ || pending_.empty()) break;
        if (received_ != seen) {
            seen = received_;
            stalled_ticks = 0;
            continue;
        }
        auto why = channel_->stalled();
        stalled_ticks = why ? stalled_ticks + 1 : 0;
        if (stalled_ticks < 2) continue;
        stalled_ticks = 0;
        // The connection stays: the peer answers again once it resumes. The requests it would answer late are
        // cancelled, so that it can skip them.
        auto pending = std::move(pending_);
        pending_.clear();
        for (auto& [id, p] : pending) {
            p->outcome = Error::make_local(
                code::unavailable, with_context(fmt::format("{}: no reply to {} can come until it resumes (SIGCONT)",
                                                            *why, p->method)));
            p->wakeup.wake();
            if (p->cancellable) notify("notifications/cancelled", json::object{{"requestId", id}, {"reason", *why}});
        }
        spdlog::warn("{}", with_context(fmt::format("{}: {} waiting request{} failed", *why, pending.size(),
                                                    pending.size() == 1 ? "" : "s")));
    }
    stall_watch_ = false;
}

awaitable<void> Connection::wait_drained(clock::time_point until) {
    while ((!outbox_.empty() || writing_) && !closed_error_ && clock::now() < until)
        co_await drained_.wait_for(until - clock::now());
}

void Connection::forget_incoming(std::unordered_map<std::string, std::shared_ptr<Incoming>>::iterator it) {
    incoming_.erase(it);
    if (incoming_.empty()) incoming_idle_.fire();
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

void IncomingRequest::progress(double progress, std::optional<double> total, std::string message) const {
    if (progress_token_.is_null()) return;
    // Whole numbers go out as integers ("3", not "3E0").
    auto number = [](double v) -> json::value {
        if (auto whole = core::json_exact_integer(json::value(v))) return *whole;
        return v;
    };
    json::object p{{"progressToken", progress_token_}, {"progress", number(progress)}};
    if (total) p["total"] = number(*total);
    if (!message.empty()) p["message"] = message;
    notify("notifications/progress", std::move(p));
}

void IncomingRequest::notify(std::string_view method, json::value params) const {
    if (auto c = conn_.lock())
        c->notify(method, std::move(params));
    else if (state_ && state_->send)
        state_->send(serialize_notification(method, params));
}

void IncomingRequest::set_result_meta(std::shared_ptr<const MetaMembers> meta) const {
    if (state_) state_->result_meta = std::move(meta);
}

std::shared_ptr<const MetaMembers> IncomingRequest::result_meta() const {
    return state_ ? state_->result_meta : nullptr;
}

void IncomingRequest::set_result_members(std::shared_ptr<const std::string> members) const {
    if (state_) state_->result_members = std::move(members);
}

std::shared_ptr<const std::string> IncomingRequest::result_members() const {
    return state_ ? state_->result_members : nullptr;
}

IncomingRequest IncomingRequest::detached(Id id, const json::value& params, std::function<void(std::string)> send) {
    auto state = std::make_shared<detail::IncomingState>();
    state->send = std::move(send);
    return IncomingRequest({}, std::move(id), progress_token_of(params), std::move(state));
}

}  // namespace switchboard::jsonrpc
