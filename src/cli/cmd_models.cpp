// `switchboard models [--json]`: what the configured endpoint offers (GET {baseUrl}/models).
#include "agent_session.hpp"

#include <fmt/format.h>
#include <boost/asio/this_coro.hpp>

namespace switchboard::cli {

namespace asio = boost::asio;
namespace json = boost::json;

asio::awaitable<int> models(const host::Config& config, const GlobalOptions& g, AgentOptions options) {
    // Listing needs only the endpoint: a missing model name is no reason to refuse.
    auto settings = std::make_optional(endpoint_settings(config, options));
    if (settings->base_url.empty()) {
        fmt::print(stderr, "{}\n", llm::not_configured_help(*settings));
        co_return 1;
    }
    llm::Client client(co_await asio::this_coro::executor, *settings);
    auto r = co_await client.models();
    if (!r) {
        fmt::print(stderr, "switchboard: {}\n", r.error().message);
        co_return 1;
    }
    if (g.json) {
        json::array out;
        for (const auto& m : *r) {
            json::object o{{"id", m.id}, {"ownedBy", m.owned_by}};
            if (m.context_window) o["contextWindow"] = *m.context_window;
            out.push_back(std::move(o));
        }
        print_json(std::move(out));
    } else {
        for (const auto& m : *r)
            fmt::print("{}{}{}\n", m.id, m.id == settings->model ? "  (configured)" : "",
                       m.context_window ? fmt::format("  context {}", *m.context_window) : "");
        if (r->empty()) fmt::print(stderr, "switchboard: {} lists no models\n", settings->base_url);
    }
    co_return 0;
}

}  // namespace switchboard::cli
