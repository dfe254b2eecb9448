#include "connection_state.hpp"

#include <switchboard/core/as_tuple.hpp>

#include <boost/asio/this_coro.hpp>
#include <fmt/format.h>

// The request path: a request written (its progress token and _meta spliced into the text), its waiter parked on
// its Wakeup until the reply path, a deadline, a stall, a cancellation or the end of the connection wakes it.
namespace switchboard::jsonrpc {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using core::as_tuple_awaitable;

namespace {

std::string format_duration(std::chrono::milliseconds d) {
    if (d.count() % 1000 == 0) return fmt::format("{} s", d.count() / 1000);
    return fmt::format("{} ms", d.count());
}

}  // namespace

awaitable<Outcome<json::value>> Connection::request(std::string method, json::value params, RequestOptions options) {
    co_return co_await request_view(std::move(method), params, std::move(options));  // `params` lives in this frame
}

awaitable<Outcome<json::value>> Connection::request_view(std::string method, const json::value& params,
                                                         RequestOptions options) {
    if (closed_error_) co_return *closed_error_;
    const std::int64_t id = next_id_++;
    auto p = std::make_shared<Pending>(executor_, wakeups_);
    p->method = method;
    // Progress asked for: _meta.progressToken is written into the request's text, not set in a copy of the params.
    const bool tokened = static_cast<bool>(options.on_progress);
    if (tokened) p->on_progress = std::move(options.on_progress);
    const auto timeout = options.timeout.count() > 0 ? options.timeout : options_.default_timeout;
    const auto now = clock::now();
    p->timeout = timeout;
    p->deadline = now + timeout;
    p->max_deadline =
        options.max_total_timeout.count() > 0 ? now + options.max_total_timeout : clock::time_point::max();
    p->reset_on_progress = options.reset_timeout_on_progress;
    p->cancellable = options.cancellable;
    p->wants_blobs = options.blobs != nullptr;
    p->wants_text = options.result_text != nullptr;
    result_text_asked_ = result_text_asked_ || p->wants_text;
    pending_.emplace(id, p);
    if (options.on_sent) options.on_sent(id);
    std::optional<std::int64_t> token;
    if (tokened) token = id;
    if (tokened || options.meta)
        enqueue(serialize_request(id, method, params, options.meta.get(), token));
    else
        enqueue(serialize_request(id, method, params));
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
        if (options.result_text) options.result_text->assign(std::move(p->result_text));
        co_return std::move(*p->outcome);
    }

    pending_.erase(id);
    const bool total_expired = clock::now() >= p->max_deadline;
    std::string reason =
        cancelled
            ? (p->cancelled_because.empty() ? "cancelled by the client" : "cancelled: " + p->cancelled_because)
            : fmt::format("timed out after {}", format_duration(total_expired ? options.max_total_timeout : timeout));
    if (options.cancellable) notify("notifications/cancelled", json::object{{"requestId", id}, {"reason", reason}});
    if (cancelled) co_return Error::make_local(code::cancelled, with_context(method + " " + reason));
    std::string msg = fmt::format("no reply to {} ({})", method, reason);
    if (!last_protocol_error_.empty()) msg += "; last problem: it " + last_protocol_error_;
    co_return Error::make_local(code::timeout, with_context(msg));
}

void Connection::cancel_requests(std::string reason) {
    for (auto& [id, p] : pending_)
        if (p->cancellable && !p->outcome) {
            p->cancelled_because = reason;
            p->wakeup.wake();
        }
}

}  // namespace switchboard::jsonrpc
