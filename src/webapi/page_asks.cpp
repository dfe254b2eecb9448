#include <switchboard/webapi/page_asks.hpp>

#include <switchboard/agent/server_requests.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/mcp/types.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

namespace switchboard::webapi {

namespace json = boost::json;
using boost::asio::awaitable;
using jsonrpc::Error;
using jsonrpc::Outcome;

namespace {

// One question about `server`'s request, with what the page needs to show it; the page's answer, or nullopt.
awaitable<std::optional<json::object>> ask_page(PageAsker a, std::chrono::milliseconds timeout, std::string kind,
                                                std::string server, json::object fields) {
    json::object question = a.call;
    question["kind"] = std::move(kind);
    question["server"] = std::move(server);
    for (auto& field : fields) question[field.key()] = std::move(field.value());
    co_return co_await a.box->ask(std::move(question), timeout);
}

std::string decision_of(const std::optional<json::object>& answer) {
    return answer ? mcp::string_field(*answer, "decision") : std::string();
}

// The agent's answers to a server's requests (agent/server_requests.hpp), each question put to the page.
agent::ServerRequestOptions page_options(PageAsker a, std::chrono::milliseconds timeout) {
    agent::ServerRequestOptions o;
    o.llm = a.model;
    o.approve_sampling = [a, timeout](const std::string& server, const json::object& params) -> awaitable<bool> {
        if (a.sampling_servers->count(server)) co_return true;
        json::object fields{{"params", params}};
        auto answer = co_await ask_page(a, timeout, "sampling", server, std::move(fields));
        const auto decision = decision_of(answer);
        if (decision == "server") a.sampling_servers->insert(server);
        co_return decision == "once" || decision == "server";
    };
    o.approve_sampling_result = [a, timeout](const std::string& server, const json::object& params,
                                             const json::object& result) -> awaitable<bool> {
        json::object fields{{"params", params}, {"result", result}};
        auto answer = co_await ask_page(a, timeout, "sampling_result", server, std::move(fields));
        co_return decision_of(answer) == "send";
    };
    o.elicit = [a, timeout](const std::string& server, const json::object& params)
        -> awaitable<agent::ElicitationAnswer> {
        json::object fields{{"params", params}};
        auto answer = co_await ask_page(a, timeout, "elicitation", server, std::move(fields));
        agent::ElicitationAnswer out;
        using Action = agent::ElicitationAnswer::Action;
        const auto action = answer ? mcp::string_field(*answer, "action") : std::string("cancel");
        out.action = action == "accept" ? Action::accept : action == "decline" ? Action::decline : Action::cancel;
        if (const auto* content = answer ? answer->if_contains("content") : nullptr; content && content->is_object())
            out.content = content->get_object();
        co_return out;
    };
    return o;
}

awaitable<Outcome<json::value>> answer_for_page(std::weak_ptr<PageAsks> weak, std::string server, PageAsker a,
                                                std::string method, json::value params) {
    auto self = weak.lock();
    if (!self) co_return Error{jsonrpc::code::internal_error, "switchboard: shutting down", {}, false};
    if (method == "roots/list") co_return json::value(self->roots());
    const auto timeout = self->timeout();
    if (method == "sampling/createMessage" && !a.model)
        co_return Error{jsonrpc::code::invalid_request,
                        fmt::format("server \"{}\" asked to use the model (sampling), but no model is configured for "
                                    "the web UI (Settings)",
                                    server),
                        {}, false};
    // Made per request: the agent's handlers hold the page's questions for this one request.
    auto handlers = agent::make_server_request_handlers(page_options(std::move(a), timeout));
    if (method == "sampling/createMessage") co_return co_await handlers.sampling(std::move(server), std::move(params));
    if (method == "elicitation/create")
        co_return co_await handlers.elicitation(std::move(server), std::move(params));
    co_return Error{jsonrpc::code::method_not_found, fmt::format("switchboard: {} is not answered", method), {}, false};
}

awaitable<Outcome<json::value>> answer_unasked(std::weak_ptr<PageAsks> weak, std::string method) {
    auto self = weak.lock();
    if (self && method == "roots/list") co_return json::value(self->roots());
    co_return Error{jsonrpc::code::invalid_request,
                    fmt::format("switchboard: cannot answer {}: nobody is calling the server now (its requests are "
                                "answered during a call: a gateway client's, or a web page's)",
                                method),
                    {}, false};
}

}  // namespace

std::string answer_problem(const json::object& question, const json::object& answer) {
    const auto kind = mcp::string_field(question, "kind");
    const auto one_of = [&](std::string_view key, std::initializer_list<std::string_view> allowed) -> std::string {
        const auto value = mcp::string_field(answer, key);
        for (auto a : allowed)
            if (value == a) return {};
        return fmt::format("\"{}\" must be one of {}", key, fmt::join(allowed, ", "));
    };
    if (kind == "sampling") return one_of("decision", {"once", "server", "deny"});
    if (kind == "sampling_result") return one_of("decision", {"send", "deny"});
    if (kind != "elicitation") return {};
    if (auto problem = one_of("action", {"accept", "decline", "cancel"}); !problem.empty()) return problem;
    const auto* params = question.if_contains("params");
    const auto* schema = params && params->is_object() ? params->get_object().if_contains("requestedSchema") : nullptr;
    if (mcp::string_field(answer, "action") != "accept" || !schema || !schema->is_object()) return {};
    const auto* content = answer.if_contains("content");
    const auto values = content && content->is_object() ? content->get_object() : json::object();
    return agent::check_elicitation(schema->get_object(), values);
}

std::shared_ptr<PageAsks> PageAsks::create(std::shared_ptr<gateway::ClientRelay> relay,
                                           std::weak_ptr<host::ServerPool> pool, std::chrono::milliseconds timeout) {
    return std::shared_ptr<PageAsks>(new PageAsks(std::move(relay), std::move(pool), timeout));
}

gateway::ClientRelay::Registration PageAsks::enter(const std::string& server, PageAsker asker) {
    std::weak_ptr<PageAsks> weak = weak_from_this();
    return relay_->enter(server, [weak, server, asker](std::string, std::string method, json::value params) {
        return answer_for_page(weak, server, asker, std::move(method), std::move(params));
    });
}

json::object page_roots(const host::Config& config) {
    std::vector<std::filesystem::path> dirs(config.roots.begin(), config.roots.end());
    if (dirs.empty()) dirs.push_back(std::filesystem::current_path());
    return agent::roots_result(dirs);
}

json::object PageAsks::roots() const {
    auto pool = pool_.lock();
    return pool ? page_roots(pool->config()) : page_roots(host::Config{});
}

gateway::ClientRelay::Asker PageAsks::fallback() {
    std::weak_ptr<PageAsks> weak = weak_from_this();
    return [weak](std::string, std::string method, json::value) { return answer_unasked(weak, std::move(method)); };
}

std::string PageAsks::add_call(std::shared_ptr<QuestionBox> box) {
    auto id = "try-" + std::to_string(next_call_++);
    calls_[id] = box;
    return id;
}

std::shared_ptr<QuestionBox> PageAsks::call(const std::string& id) const {
    auto it = calls_.find(id);
    return it == calls_.end() ? nullptr : it->second.lock();
}

}  // namespace switchboard::webapi
