#include <switchboard/webapi/questions.hpp>

#include <switchboard/mcp/types.hpp>

#include <boost/asio/this_coro.hpp>
#include <fmt/format.h>

#include <vector>

namespace switchboard::webapi {

namespace json = boost::json;
using boost::asio::awaitable;

namespace {
const std::string_view prefix = "r";  // request ids "r1", "r2", ...
// One count for the process: a page that kept an id it saw answered (a conversation reopened gets a new box) never
// meets it again for another question.
std::uint64_t next_request = 1;
}

awaitable<std::optional<json::object>> QuestionBox::ask(json::object question, std::chrono::milliseconds timeout) {
    const auto n = next_request++;
    auto q = std::make_shared<Question>();
    question["requestId"] = std::string(prefix) + std::to_string(n);
    q->data = std::move(question);
    open_.emplace(n, q);
    emit_("server_request", q->data);
    const bool answered = co_await q->done.wait_for(timeout);
    if (open_.count(n)) {  // timed out, or the coroutine was cancelled (the server gave up): no longer asked
        close(n);
        const auto state = co_await boost::asio::this_coro::cancellation_state;
        if (state.cancelled() == boost::asio::cancellation_type::none)
            emit_("notice", json::object{{"text", fmt::format("server \"{}\" asked ({}) and nobody answered within {} s: "
                                                               "it is told no",
                                                               mcp::string_field(q->data, "server"),
                                                               mcp::string_field(q->data, "kind"),
                                                               timeout.count() / 1000)}});
    }
    if (!answered) co_return std::nullopt;
    co_return std::move(q->answer);
}

bool QuestionBox::answer(const std::string& request_id, json::object answer) {
    if (request_id.size() <= prefix.size() || request_id.compare(0, prefix.size(), prefix) != 0) return false;
    std::uint64_t n = 0;
    try {
        n = std::stoull(request_id.substr(prefix.size()));
    } catch (const std::exception&) {
        return false;
    }
    auto it = open_.find(n);
    if (it == open_.end()) return false;
    auto q = it->second;
    q->answer = std::move(answer);
    close(n);
    q->done.set();
    return true;
}

const json::object* QuestionBox::find(const std::string& request_id) const {
    for (const auto& [n, q] : open_)
        if (mcp::string_field(q->data, "requestId") == request_id) return &q->data;
    return nullptr;
}

json::array QuestionBox::open() const {
    json::array out;
    for (const auto& [n, q] : open_) out.push_back(q->data);
    return out;
}

void QuestionBox::cancel_call(std::string_view call_id) {
    std::vector<std::shared_ptr<Question>> dropped;
    for (auto it = open_.begin(); it != open_.end();) {
        if (mcp::string_field(it->second->data, "callId") != call_id) {
            ++it;
            continue;
        }
        dropped.push_back(it->second);
        const auto n = (it++)->first;
        close(n);
    }
    for (auto& q : dropped) q->done.set();  // with no answer: nullopt
}

void QuestionBox::cancel_all() {
    auto all = std::move(open_);
    open_.clear();
    for (auto& [n, q] : all) {
        emit_("server_request_answered", json::object{{"requestId", q->data.at("requestId")}});
        q->done.set();
    }
}

void QuestionBox::close(std::uint64_t n) {
    auto it = open_.find(n);
    if (it == open_.end()) return;
    auto id = it->second->data.at("requestId");
    open_.erase(it);
    emit_("server_request_answered", json::object{{"requestId", id}});
}

}  // namespace switchboard::webapi
