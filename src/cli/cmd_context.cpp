// `switchboard status --context [--json]`: what the tool definitions of the main context cost a model on every
// request, next to what they would cost with every server eager — the saving lazy servers buy. Lazy servers are
// started for the measurement (each leased once) and stopped again.
//
// The estimate is the byte size of the OpenAI `tools` array the model receives, divided by 4: about four bytes of
// JSON per token for BPE tokenizers (cl100k, Llama 3, Qwen) on English and JSON. It is not a tokenizer.
#include "cli.hpp"

#include <switchboard/agent/tool_schema.hpp>

#include <fmt/format.h>
#include <boost/json/serialize.hpp>

namespace switchboard::cli {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

namespace {

std::int64_t tokens(const host::ToolIndex& index) {
    return static_cast<std::int64_t>(json::serialize(agent::openai_tools(index)).size() / 4);
}

}  // namespace

awaitable<int> context_cost(const host::Config& config, const GlobalOptions& g) {
    co_return co_await with_host(config, [&](Host& h) -> awaitable<int> {
        report_failures(*h.pool);
        const auto main_tokens = tokens(h.main->tools());
        json::array servers;
        std::vector<std::string> all;
        for (const auto& s : h.pool->config().servers) {
            if (!s.enabled) continue;
            all.push_back(s.name);
            host::ContextOptions one;
            one.name = "measure:" + s.name;
            one.servers = std::vector<std::string>{s.name};
            auto context = host::Context::create(h.pool, std::move(one));
            if (s.lazy) {
                auto leased = co_await context->add_server(s.name);
                if (!leased)
                    fmt::print(stderr, "switchboard: lazy server \"{}\" could not start: {}\n", s.name,
                               leased.error().message);
            }
            servers.push_back(json::object{{"name", s.name}, {"lazy", s.lazy}, {"tokens", tokens(context->tools())}});
        }
        // Every server at once (names shared by two servers get their prefix, as in a real eager context).
        host::ContextOptions every;
        every.name = "measure:eager";
        every.servers = all;
        auto eager = host::Context::create(h.pool, std::move(every));
        for (const auto& s : h.pool->config().servers)
            if (s.enabled && s.lazy) co_await eager->add_server(s.name);
        const auto eager_tokens = tokens(eager->tools());
        if (g.json) {
            print_json(json::object{{"mainTokens", main_tokens},
                                    {"eagerTokens", eager_tokens},
                                    {"method", "bytes of the OpenAI tools array / 4"},
                                    {"servers", std::move(servers)}});
        } else {
            fmt::print("{:<24} {:>5} {:>8}\n", "SERVER", "LAZY", "TOKENS");
            for (const auto& s : servers)
                fmt::print("{:<24} {:>5} {:>8}\n", std::string(s.at("name").as_string()),
                           s.at("lazy").as_bool() ? "yes" : "no", s.at("tokens").as_int64());
            fmt::print("main context: ~{} tokens of tool definitions per request; with every server eager: ~{} "
                       "(estimate: bytes / 4)\n",
                       main_tokens, eager_tokens);
        }
        co_return 0;
    });
}

}  // namespace switchboard::cli
