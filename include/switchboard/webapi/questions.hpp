// Questions a web page answers for a server: an elicitation, a sampling request to approve, the model's answer to
// approve before it goes back. Each is an event (`server_request`) of the stream the page reads, kept open until the
// page answers, the call it belongs to ends, or a bounded wait passes; a page that opens later (a reload, another tab)
// is sent the open ones. An answered or dropped question is announced (`server_request_answered`), so that every page
// closes its dialog.
//
// Thread-safety: single owner, on the pool's executor.
#pragma once

#include <switchboard/core/one_shot_event.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace switchboard::webapi {

class QuestionBox {
public:
    /// Where the box's events go (the stream of the page's run or call).
    using Emit = std::function<void(std::string_view event, boost::json::object data)>;
    explicit QuestionBox(Emit emit) : emit_(std::move(emit)) {}
    QuestionBox(const QuestionBox&) = delete;
    QuestionBox& operator=(const QuestionBox&) = delete;

    /// Asks the page: a `server_request` event with `question` and a new "requestId"; the page's answer, or nullopt
    /// when none came within `timeout`, the question was dropped (cancel_call, cancel_all) or the awaiting coroutine
    /// was cancelled.
    boost::asio::awaitable<std::optional<boost::json::object>> ask(boost::json::object question,
                                                                  std::chrono::milliseconds timeout);
    /// The page's answer to `request_id`; false when no such question is open.
    bool answer(const std::string& request_id, boost::json::object answer);
    /// The open question `request_id` (its event's data), or nullptr.
    const boost::json::object* find(const std::string& request_id) const;
    /// The open questions (their events' data), oldest first.
    boost::json::array open() const;
    /// Drops the questions asked for call `call_id` ("callId"): it ended, nobody needs their answers.
    void cancel_call(std::string_view call_id);
    /// Drops every open question (the run stopped).
    void cancel_all();

private:
    struct Question {
        boost::json::object data;
        std::optional<boost::json::object> answer;
        core::OneShotEvent done;
    };
    void close(std::uint64_t n);

    Emit emit_;
    std::map<std::uint64_t, std::shared_ptr<Question>> open_;  // by number: oldest first
};

}  // namespace switchboard::webapi
