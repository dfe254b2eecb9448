#include "request_state.hpp"

#include <boost/json/object.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace switchboard::mcp {

namespace json = boost::json;
using boost::asio::awaitable;

namespace {

// The capability a client must declare before a server may ask it `method`.
std::string_view capability_of(std::string_view method) {
    if (method == "sampling/createMessage") return "sampling";
    if (method == "elicitation/create") return "elicitation";
    if (method == "roots/list") return "roots";
    return {};
}

}  // namespace

Era RequestContext::era() const { return state_->era; }
const std::string& RequestContext::method() const { return state_->method; }
namespace {
const json::object& or_empty(const std::shared_ptr<const json::object>& o) {
    static const json::object empty;
    return o ? *o : empty;
}
}  // namespace

const std::string& RequestContext::principal() const { return state_->principal; }

const trace::SpanContext& RequestContext::trace() const { return state_->trace; }

const json::object& RequestContext::client_capabilities() const { return or_empty(state_->client_capabilities); }

bool RequestContext::client_supports(std::string_view capability) const {
    return client_capabilities().contains(capability);
}

const json::object& RequestContext::client_info() const { return or_empty(state_->client_info); }

const jsonrpc::IncomingRequest& RequestContext::request() const { return *state_->request; }

bool RequestContext::takes_result_members() const { return state_->request && state_->request->takes_result_members(); }

void RequestContext::answer_with_members(std::shared_ptr<const std::string> members) const {
    if (state_->request) state_->request->set_result_members(std::move(members));
}

void RequestContext::progress(double progress, std::optional<double> total, std::string message) const {
    if (state_->on_status && !message.empty()) state_->on_status(message);
    if (state_->request) state_->request->progress(progress, total, std::move(message));
}

void RequestContext::log(std::string_view level, json::value data, std::string_view logger) const {
    const int wanted = log_severity(level);
    if (wanted < 0 || !state_->request) return;
    if (state_->log_level.empty() ? state_->era == Era::modern : wanted < log_severity(state_->log_level)) return;
    json::object params;
    params["level"] = level;
    if (!logger.empty()) params["logger"] = logger;
    params["data"] = std::move(data);
    state_->request->notify("notifications/message", std::move(params));
}

void RequestContext::notify(std::string_view method, json::object params) const {
    if (state_->request) state_->request->notify(method, std::move(params));
}

awaitable<Outcome<json::value>> RequestContext::create_message(json::object params) const {
    return ask("sampling/createMessage", std::move(params));
}

awaitable<Outcome<json::value>> RequestContext::elicit(json::object params) const {
    return ask("elicitation/create", std::move(params));
}

awaitable<Outcome<json::value>> RequestContext::list_roots() const { return ask("roots/list", json::object{}); }

awaitable<Outcome<json::value>> RequestContext::ask(std::string method, json::object params) const {
    return ask_as({}, std::move(method), std::move(params));
}

awaitable<Outcome<json::value>> RequestContext::ask_as(std::string key, std::string method, json::object params) const {
    const auto capability = capability_of(method);
    if (capability.empty())
        co_return Error{jsonrpc::code::invalid_params, fmt::format("a server cannot ask a client for {}", method)};
    if (!client_supports(capability))
        co_return Error{jsonrpc::code::missing_required_client_capability,
                        fmt::format("the client does not support {} ({})", capability, method),
                        json::object{{"requiredCapabilities", json::object{{capability, json::object{}}}}}};
    auto state = state_;  // keeps the state alive across the suspension
    co_return co_await state->ask(std::move(key), std::move(method), std::move(params));
}

}  // namespace switchboard::mcp
