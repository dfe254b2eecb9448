#include "pending_asks.hpp"

#include <fmt/format.h>

namespace switchboard::mcp::detail {

namespace json = boost::json;

std::string PendingAsks::ask(std::string wanted, std::string method, json::object params) {
    std::string key = std::move(wanted);
    if (key.empty() || asked_.contains(key))
        key = fmt::format("{}-{}", method.substr(0, method.find('/')), ++next_key_);
    // Answered before it was asked: nothing to list.
    if (!answers_.contains(key))
        asked_[key] = json::object{{"method", std::move(method)}, {"params", std::move(params)}};
    return key;
}

std::optional<json::value> PendingAsks::take(const std::string& key) {
    auto it = answers_.find(key);
    if (it == answers_.end()) return std::nullopt;
    json::value answer = std::move(it->second);
    answers_.erase(it);
    return answer;
}

void PendingAsks::answer(const json::object& responses) {
    for (const auto& [key, answer] : responses)
        if (asked_.erase(key)) answers_[std::string(key)] = answer;
}

void PendingAsks::answer_ahead(const json::object& responses) {
    for (const auto& [key, answer] : responses) answers_[std::string(key)] = answer;
}

json::object PendingAsks::requests() const {
    json::object out;
    for (const auto& [key, request] : asked_) out[key] = request;
    return out;
}

}  // namespace switchboard::mcp::detail
