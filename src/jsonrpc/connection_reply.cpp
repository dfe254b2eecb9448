#include "connection_state.hpp"

#include <switchboard/core/text.hpp>

#include <boost/json/serialize.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <regex>

// The reply path, from the read loop's dispatch: a reply to its waiter (woken at once where the channel allows it),
// progress to its request's callback (and its deadline moved), an oversize message's request failed by its id.
namespace switchboard::jsonrpc {

namespace asio = boost::asio;
namespace json = boost::json;
using core::size_text;
using detail::as_our_id;

namespace {

// Best effort: the id of a message we had to drop for its size, from its first or last bytes.
std::optional<std::int64_t> id_of_dropped(const std::string& head, const std::string& tail) {
    static const std::regex at_end(R"re("id"\s*:\s*(\d+)\s*\}\s*$)re");
    static const std::regex at_start(R"re(^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(\d+))re");
    std::smatch m;
    if (std::regex_search(tail, m, at_end) || std::regex_search(head, m, at_start)) return std::stoll(m[1].str());
    return std::nullopt;
}

}  // namespace

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

}  // namespace switchboard::jsonrpc
