#include "connection_state.hpp"

#include <switchboard/core/text.hpp>

#include <boost/json/serialize.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstring>
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

namespace {

// A reply's id and result, as their texts.
struct ReplyParts {
    std::string_view id, result;
};

// `{"jsonrpc":"2.0","id":<id>,"result":<result>}`, as our serializers and most SDKs write a reply: its parts found
// without reading the result (nullopt for any other text). The whole text is valid JSON when the result's text is
// one valid value and the id is one of ours (digits, or the same in quotes), since the rest is fixed.
std::optional<ReplyParts> result_last(std::string_view text) {
    constexpr std::string_view head = R"({"jsonrpc":"2.0","id":)", member = R"(,"result":)";
    if (!text.starts_with(head)) return std::nullopt;
    auto rest = text.substr(head.size());
    const auto comma = rest.find(',');
    if (comma == std::string_view::npos) return std::nullopt;
    ReplyParts parts{rest.substr(0, comma), {}};
    rest.remove_prefix(comma);
    if (!rest.starts_with(member)) return std::nullopt;
    rest.remove_prefix(member.size());
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t' || rest.back() == '\r' || rest.back() == '\n'))
        rest.remove_suffix(1);
    if (rest.size() < 3 || rest.back() != '}') return std::nullopt;
    parts.result = rest.substr(0, rest.size() - 1);
    return parts;
}

// The same from the members of any other envelope (another order, spacing): nullopt for anything but a result.
std::optional<ReplyParts> result_anywhere(std::string_view text) {
    auto members = object_members(text);
    if (!members) return std::nullopt;
    std::string_view version;
    ReplyParts parts;
    for (const auto& m : *members) {
        auto* part = m.key == "jsonrpc"  ? &version
                     : m.key == "id"     ? &parts.id
                     : m.key == "result" ? &parts.result
                                         : nullptr;
        if (!part || !part->empty()) return std::nullopt;  // an error, a request, another member, or one twice
        *part = m.value;
    }
    if (version != "\"2.0\"") return std::nullopt;
    return parts;
}

// One of our ids (1, 2, …), or the same in quotes (a peer that echoes ids as strings).
std::optional<std::int64_t> our_id_text(std::string_view id) {
    if (id.size() >= 2 && id.front() == '"' && id.back() == '"') id = id.substr(1, id.size() - 2);
    std::int64_t n = 0;
    if (id.empty() || id.front() < '1' || id.front() > '9') return std::nullopt;  // no sign, no leading zero
    const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), n);
    if (ec != std::errc() || end != id.data() + id.size()) return std::nullopt;
    return n;
}

}  // namespace

// A reply whose waiter asked for the result's text (RequestOptions::result_text): the envelope's parts are found in
// the text and the result is handed over as it was written, never built into values. false: not such a reply, or
// not valid JSON (the usual parse then reports what is wrong with it).
bool Connection::dispatch_result_text(std::string_view text) {
    auto parts = result_last(text);
    const bool fixed_envelope = parts.has_value();
    // Any other envelope is read whole, unless it has no result (a notification, a request, an error: memmem, not
    // string_view::find, whose every quote in the text would be a memchr and a compare).
    constexpr std::string_view result_key = R"("result")";
    if (!parts && ::memmem(text.data(), text.size(), result_key.data(), result_key.size()) != nullptr)
        parts = result_anywhere(text);
    if (!parts || parts->result.empty() || parts->result.front() != '{') return false;
    const auto id = our_id_text(parts->id);
    auto it = id ? pending_.find(*id) : pending_.end();
    if (it == pending_.end() || !it->second->wants_text) return false;
    // Valid JSON, checked without building it: in the usual envelope only the result needs it (one level less deep:
    // the envelope is around it), the rest being fixed. A line break can only be whitespace there, and the text goes
    // out inside a line of someone else's (an SSE data line, a line on stdio): such a result comes as a value.
    const auto& r = parts->result;
    if (!(fixed_envelope ? json_text_is_valid(r, max_message_depth - 1) : json_text_is_valid(text)) ||
        std::memchr(r.data(), '\n', r.size()) != nullptr || std::memchr(r.data(), '\r', r.size()) != nullptr)
        return false;
    auto p = it->second;
    pending_.erase(it);
    p->result_text.assign(parts->result.data(), parts->result.size());
    p->outcome = json::value();
    wake_caller(*p);
    return true;
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
