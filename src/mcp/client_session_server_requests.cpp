#include <switchboard/core/json_number.hpp>
#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/mcp/client_session.hpp>
#include <switchboard/mcp/apps.hpp>
#include <switchboard/mcp/tasks.hpp>

#include "client_session_listen.hpp"
#include "client_trace.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

// What the server sends the client: its requests (sampling, elicitation, roots, and those inside an input_required
// result, answered together) and its notifications.
namespace switchboard::mcp {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
namespace {

struct InputAnswer {
    std::string key, method;
    json::value params;
    std::optional<Outcome<json::value>> result;
};

}  // namespace

awaitable<Outcome<json::object>> ClientSession::answer_input_requests(const json::object& requests) {
    std::vector<std::shared_ptr<InputAnswer>> slots;
    for (const auto& [key, req] : requests) {
        auto slot = std::make_shared<InputAnswer>();
        const auto* ro = req.if_object();
        slot->key = std::string(key);
        slot->method = ro ? string_field(*ro, "method") : "";
        slot->params = ro && ro->contains("params") ? ro->at("params") : json::value(json::object{});
        slots.push_back(std::move(slot));
    }
    if (options_.handlers.keyed && slots.size() > 1) {
        // Passed on together, so the next hop can ask its own client for all of them in one round.
        std::vector<awaitable<void>> tasks;
        auto self = shared_from_this();
        for (auto& slot : slots)
            tasks.push_back([](std::shared_ptr<ClientSession> s, std::shared_ptr<InputAnswer> a) -> awaitable<void> {
                a->result = co_await s->handle_server_request(a->key, a->method, std::move(a->params));
            }(self, slot));
        co_await core::run_all(std::move(tasks));
    } else {
        // One at a time: a person may be answering at a terminal.
        for (auto& slot : slots) {
            auto r = co_await handle_server_request(slot->key, slot->method, std::move(slot->params));
            slot->result = std::move(r);
            if (!*slot->result) break;
        }
    }
    json::object answers;
    for (auto& slot : slots) {
        if (!slot->result) continue;
        auto& r = *slot->result;
        // The client we answer for lacks the capability: that is the answer to the whole request (-32021, with the
        // capabilities it needs), for a gateway to hand to its client.
        if (!r && r.error().code == code::missing_required_client_capability) co_return r.error();
        if (!r)
            co_return Error::make_local(
                code::protocol_violation,
                fmt::format("server \"{}\" asked for input ({}) that Switchboard cannot give: {}", options_.server_name,
                            slot->method.empty() ? "?" : slot->method, r.error().message));
        answers[slot->key] = std::move(*r);
    }
    co_return answers;
}

awaitable<Outcome<json::value>> ClientSession::handle_server_request(std::string key, std::string method,
                                                                     json::value params) {
    const ServerRequestHandlers::Handler* h = nullptr;
    if (method == "ping") co_return json::value(json::object{});
    const bool known = method == "roots/list" || method == "sampling/createMessage" || method == "elicitation/create";
    if (options_.handlers.keyed && known) {
        json::value schema;
        if (method == "elicitation/create")
            if (const auto* p = params.if_object())
                if (const auto* s = p->if_contains("requestedSchema")) schema = *s;
        const bool elicitation = method == "elicitation/create";
        auto answer = co_await options_.handlers.keyed(std::move(key), std::move(method), std::move(params));
        if (!answer || !elicitation) co_return answer;
        co_return apply_elicitation_defaults(schema, std::move(*answer));
    }
    if (method == "roots/list") h = &options_.handlers.roots;
    if (method == "sampling/createMessage") h = &options_.handlers.sampling;
    if (method == "elicitation/create") h = &options_.handlers.elicitation;
    if (!h || !*h)
        co_return Error{
            code::method_not_found, fmt::format("Method not found: {} (no handler in this client)", method), {}, false};
    if (method != "elicitation/create") co_return co_await (*h)(std::move(params));
    json::value schema;
    if (const auto* p = params.if_object())
        if (const auto* s = p->if_contains("requestedSchema")) schema = *s;
    auto answer = co_await (*h)(std::move(params));
    if (!answer) co_return answer;
    co_return apply_elicitation_defaults(schema, std::move(*answer));
}

void ClientSession::handle_notification(const std::string& method, const json::value& params) {
    if (!task_watches_.empty() && on_task_notification(method, params)) return;  // a followed task's stream
    if (method == "notifications/subscriptions/acknowledged" && listen_) {
        const auto* p = params.if_object();
        const auto* m = p ? p->if_contains("_meta") : nullptr;
        const auto* id = m && m->is_object() ? m->get_object().if_contains(meta::subscription_id) : nullptr;
        if (id && core::json_exact_integer(*id) == listen_->id) {
            listen_->acknowledged = true;
            listen_->settled.set();
        }
    }
    if (method == "notifications/message") {
        const auto* p = params.if_object();
        spdlog::debug("[{}] log: {}", options_.server_name,
                      p ? json::serialize(p->contains("data") ? p->at("data") : params) : "");
    }
    if (options_.on_notification) options_.on_notification(method, params);
}

}  // namespace switchboard::mcp
