// What a handler asked its client for and has not had yet, by key, and the answers as they come: a request's input
// rounds (InputRounds: the answers come with the client's retry) and a task's (TaskStore: with tasks/update) keep
// theirs in one of these, so both pick keys, list `inputRequests` and take answers the same way.
//
// Thread-safety: single owner, on its owner's executor.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <map>
#include <optional>
#include <string>

namespace switchboard::mcp::detail {

class PendingAsks {
public:
    /// Records an ask: under `wanted`, unless it is empty or taken (asked, not answered), else under
    /// "<method's first word>-N". The key it is under.
    std::string ask(std::string wanted, std::string method, boost::json::object params);
    /// The answer given for `key`, taken out; nullopt while there is none.
    std::optional<boost::json::value> take(const std::string& key);
    /// The client's answers (key -> result): each for a key asked and not answered is kept for its ask; other keys
    /// are ignored.
    void answer(const boost::json::object& responses);
    /// Answers given before anything was asked (a client that knows what will be asked): kept whatever their keys.
    void answer_ahead(const boost::json::object& responses);
    /// Whether something asked is not answered yet.
    bool waiting() const { return !asked_.empty(); }
    /// `inputRequests`: key -> {method, params}, for what is not answered yet.
    boost::json::object requests() const;
    /// Forgets what was asked (the work ended or was cancelled).
    void clear() { asked_.clear(); }

private:
    std::map<std::string, boost::json::object> asked_;   // key -> {method, params}, not answered yet
    std::map<std::string, boost::json::value> answers_;  // key -> the client's result, not taken yet
    int next_key_ = 0;
};

}  // namespace switchboard::mcp::detail
