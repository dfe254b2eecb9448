#include "connection_state.hpp"

#include <switchboard/core/json_number.hpp>

#include <boost/json/serialize.hpp>
#include <spdlog/spdlog.h>

// The peer's requests: each answered in its own coroutine (started in dispatch), its result written whole or
// streamed, cancellable by the peer's notifications/cancelled; and what a handler can do meanwhile (IncomingRequest).
namespace switchboard::jsonrpc {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using detail::id_key;

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
        const auto max = members.empty() ? detail::stream_results_above : std::string::npos;
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

void Connection::forget_incoming(std::unordered_map<std::string, std::shared_ptr<Incoming>>::iterator it) {
    incoming_.erase(it);
    if (incoming_.empty()) incoming_idle_.fire();
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
