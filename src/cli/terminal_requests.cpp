#include "terminal_requests.hpp"

#include "agent_session.hpp"

#include <switchboard/core/text.hpp>

#include <fmt/format.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <unistd.h>

namespace switchboard::cli {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

awaitable<bool> approve_sampling_at_terminal(LineReader& reader, const std::string& server,
                                             const json::object& params) {
    const auto* m = params.if_contains("messages");
    fmt::print("\nServer \"{}\" asks to use the model (sampling) with {}\n", server,
               core::shorten(m ? json::serialize(*m) : "no messages", 300));
    auto a = co_await reader.read_line("allow? [y/n]: ");
    co_return a && (*a == "y" || *a == "yes");
}

awaitable<bool> approve_sampling_result_at_terminal(LineReader& reader, const std::string& server,
                                                    const json::object& result) {
    const auto* content = result.if_contains("content");
    const auto* text = content && content->is_object() ? content->get_object().if_contains("text") : nullptr;
    fmt::print("The model answered: {}\n",
               core::shorten(text && text->is_string() ? std::string(text->get_string())
                                                       : json::serialize(content ? *content : json::value()),
                             300));
    auto a = co_await reader.read_line(fmt::format("send it back to server \"{}\"? [y/n]: ", server));
    co_return a && (*a == "y" || *a == "yes");
}

awaitable<agent::ElicitationAnswer> elicit_at_terminal(LineReader& reader, const std::string& server,
                                                       const json::object& params) {
    agent::ElicitationAnswer answer;
    const auto* message = params.if_contains("message");
    fmt::print("\nServer \"{}\" asks: {}\n", server,
               message && message->is_string() ? std::string(message->get_string()) : "(no message)");
    if (const auto* url = params.if_contains("url"); url && url->is_string()) {
        fmt::print("It wants you to open: {}\n", std::string(url->get_string()));
        auto a = co_await reader.read_line("done? [y/n]: ");
        if (a && *a == "y") answer.action = agent::ElicitationAnswer::Action::accept;
        co_return answer;
    }
    const auto* schema = params.if_contains("requestedSchema");
    const auto* props = schema && schema->is_object() ? schema->get_object().if_contains("properties") : nullptr;
    for (;;) {
        answer.content.clear();
        if (props && props->is_object()) {
            for (const auto& kv : props->get_object()) {
                const auto* p = kv.value().if_object();
                const auto type = p && p->contains("type") && p->at("type").is_string()
                                      ? std::string(p->at("type").get_string())
                                      : "string";
                auto v = co_await reader.read_line(
                    fmt::format("  {} ({}; empty to skip, /decline): ", std::string(kv.key()), type));
                if (!v || *v == "/decline") {
                    answer.action = agent::ElicitationAnswer::Action::decline;
                    co_return answer;
                }
                if (v->empty()) continue;
                if (type == "string") {
                    answer.content[kv.key()] = *v;
                } else {
                    boost::system::error_code ec;
                    auto parsed = json::parse(*v, ec);
                    answer.content[kv.key()] = ec ? json::value(json::string(*v)) : parsed;
                }
            }
        }
        const auto problem =
            schema && schema->is_object() ? agent::check_elicitation(schema->get_object(), answer.content) : "";
        if (problem.empty()) break;
        fmt::print("  {}; again:\n", problem);
    }
    answer.action = agent::ElicitationAnswer::Action::accept;
    co_return answer;
}

host::ServerRequestHandlers one_shot_requests(const host::Config& config, asio::any_io_executor ex) {
    agent::ServerRequestOptions o;
    o.roots.push_back(std::filesystem::current_path());
    if (::isatty(0) && ::isatty(1)) {
        // Made on the first question only: a command nobody asks anything keeps the terminal as it is.
        auto reader = std::make_shared<std::unique_ptr<LineReader>>();
        auto terminal = [reader, ex]() -> LineReader& {
            if (!*reader) *reader = std::make_unique<LineReader>(ex, std::filesystem::path());
            return **reader;
        };
        o.elicit = [terminal](const std::string& server,
                              const json::object& params) -> awaitable<agent::ElicitationAnswer> {
            co_return co_await elicit_at_terminal(terminal(), server, params);
        };
        AgentOptions none;
        auto settings = endpoint_settings(config, none);
        if (settings.configured()) {
            o.llm = std::make_shared<llm::Client>(ex, settings);
            o.approve_sampling = [terminal](const std::string& server, const json::object& params) -> awaitable<bool> {
                co_return co_await approve_sampling_at_terminal(terminal(), server, params);
            };
            o.approve_sampling_result = [terminal](const std::string& server, const json::object&,
                                                   const json::object& result) -> awaitable<bool> {
                co_return co_await approve_sampling_result_at_terminal(terminal(), server, result);
            };
        }
    }
    return agent::make_server_request_handlers(std::move(o));
}

}  // namespace switchboard::cli
