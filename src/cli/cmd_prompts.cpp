// `switchboard prompts [--json]` and `switchboard prompt SERVER NAME key=value...`.
#include "cli.hpp"

#include <switchboard/core/text.hpp>

#include <fmt/format.h>

namespace switchboard::cli {

namespace json = boost::json;
using boost::asio::awaitable;

awaitable<int> prompts(const host::Config& config, const GlobalOptions& g) {
    co_return co_await with_host(config, [&g](Host& h) -> awaitable<int> {
        report_failures(*h.pool);
        auto all = h.main->prompts();
        if (g.json) {
            json::array arr;
            for (const auto& p : all) {
                json::object o = p.prompt.raw;
                o["server"] = p.server;
                arr.push_back(std::move(o));
            }
            print_json(std::move(arr));
        } else {
            for (const auto& p : all) {
                std::vector<std::string> args;
                for (const auto& a : p.prompt.arguments) args.push_back(a.required ? a.name : "[" + a.name + "]");
                fmt::print("{:<16} {:<20} {:<30} {}\n", p.server, p.prompt.name, fmt::join(args, " "),
                           core::first_line(p.prompt.description, 60));
            }
        }
        co_return any_failed(*h.pool) ? 1 : 0;
    });
}

awaitable<int> prompt(const host::Config& config, const GlobalOptions& g, std::string server, std::string name,
                      std::map<std::string, std::string> arguments) {
    auto subset = only_server(config, server);
    if (!subset) co_return 1;
    co_return co_await with_host(std::move(*subset), [&](Host& h) -> awaitable<int> {
        auto span = trace::Span::start_local_root("prompt", name, trace::SpanKind::internal);  // `switchboard trace`
        auto r = co_await h.main->get_prompt(server, name, arguments, span.context());
        span.end();
        if (!r) {
            fmt::print(stderr, "switchboard: prompt \"{}\" failed: {}\n", name, r.error().describe());
            co_return 1;
        }
        if (g.json) {
            print_json(std::move(r->raw));
            co_return 0;
        }
        if (!r->description.empty()) fmt::print("# {}\n", r->description);
        for (const auto& m : r->messages) {
            const auto* o = m.if_object();
            if (!o) continue;
            std::vector<mcp::Content> content;
            if (const auto* c = o->if_contains("content")) {
                if (c->is_array())
                    for (const auto& item : c->get_array()) content.push_back(mcp::Content::from_json(item));
                else
                    content.push_back(mcp::Content::from_json(*c));
            }
            fmt::print("[{}] {}\n", mcp::string_field(*o, "role"), render_content(content));
        }
        co_return 0;
    });
}

}  // namespace switchboard::cli
