// `switchboard resources [--json]` and `switchboard read SERVER URI`.
#include "cli.hpp"

#include <fmt/format.h>

namespace switchboard::cli {

namespace json = boost::json;
using boost::asio::awaitable;

awaitable<int> resources(const host::Config& config, const GlobalOptions& g) {
    co_return co_await with_host(config, [&g](Host& h) -> awaitable<int> {
        report_failures(*h.pool);
        auto res = h.main->resources();
        auto templates = h.main->resource_templates();
        if (g.json) {
            json::array arr;
            for (const auto& r : res) {
                json::object o = r.resource.raw;
                o["server"] = r.server;
                arr.push_back(std::move(o));
            }
            for (const auto& t : templates) {
                json::object o = t.resource_template.raw;
                o["server"] = t.server;
                arr.push_back(std::move(o));
            }
            print_json(std::move(arr));
        } else {
            for (const auto& r : res)
                fmt::print("{:<16} {:<40} {:<24} {}\n", r.server, r.resource.uri, r.resource.name,
                           r.resource.mime_type);
            for (const auto& t : templates)
                fmt::print("{:<16} {:<40} {:<24} {} (template)\n", t.server, t.resource_template.uri_template,
                           t.resource_template.name, t.resource_template.mime_type);
        }
        co_return any_failed(*h.pool) ? 1 : 0;
    });
}

awaitable<int> read(const host::Config& config, const GlobalOptions& g, std::string server, std::string uri) {
    auto subset = only_server(config, server);
    if (!subset) co_return 1;
    co_return co_await with_host(std::move(*subset), [&](Host& h) -> awaitable<int> {
        auto r = co_await h.main->read_resource(server, uri);
        if (!r) {
            fmt::print(stderr, "switchboard: reading {} failed: {}\n", uri, r.error().describe());
            co_return 1;
        }
        if (g.json)
            print_json(r->to_json());
        else
            fmt::print("{}\n", render_contents(r->contents));
        co_return 0;
    });
}

}  // namespace switchboard::cli
