// `switchboard resources [--json]` and `switchboard read SERVER URI`.
#include "cli.hpp"

#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/core/scope_exit.hpp>

#include <fmt/format.h>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>
#include <cstdio>

namespace switchboard::cli {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

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

namespace {

void print_read(const GlobalOptions& g, const mcp::ReadResourceResult& r) {
    if (g.json)
        print_json(r.to_json());  // with --watch, one object per line
    else
        fmt::print("{}\n", render_contents(r.contents));
    std::fflush(stdout);
}

// `read --watch`: subscribed, the contents printed again after each notifications/resources/updated, until Ctrl-C.
awaitable<int> watch(Host& h, const GlobalOptions& g, const std::string& server, const std::string& uri) {
    auto ex = co_await asio::this_coro::executor;
    auto subscribed = co_await h.pool->subscribe_resource(server, uri);
    if (!subscribed) {
        fmt::print(stderr, "switchboard: cannot watch {}: {}\n", uri, subscribed.error().describe());
        co_return 1;
    }
    auto updated = std::make_shared<std::shared_ptr<core::OneShotEvent>>(std::make_shared<core::OneShotEvent>());
    const auto id = h.pool->events().subscribe([updated, server, uri](const host::Event& e) {
        if (e.kind == host::Event::Kind::resource_updated && e.server == server && e.uri == uri) (*updated)->set();
    });
    core::ScopeExit unsubscribe([&h, id] { h.pool->events().unsubscribe(id); });
    if (!g.json) fmt::print(stderr, "switchboard: watching {} (Ctrl-C stops)\n", uri);
    using namespace asio::experimental::awaitable_operators;
    asio::signal_set signals(ex, SIGINT, SIGTERM);
    for (;;) {
        auto next = *updated;
        auto woke = co_await (next->wait() || signals.async_wait(asio::use_awaitable));
        if (woke.index() == 1) break;
        *updated = std::make_shared<core::OneShotEvent>();
        auto r = co_await h.main->read_resource(server, uri, host::ReadMode::fresh);
        if (!r) {
            fmt::print(stderr, "switchboard: reading {} after its update failed: {}\n", uri, r.error().describe());
            continue;
        }
        if (!g.json) fmt::print("--- updated\n");
        print_read(g, *r);
    }
    co_await h.pool->unsubscribe_resource(server, uri);
    co_return 0;
}

}  // namespace

awaitable<int> read(const host::Config& config, const GlobalOptions& g, std::string server, std::string uri) {
    auto subset = only_server(config, server);
    if (!subset) co_return 1;
    co_return co_await with_host(std::move(*subset), [&](Host& h) -> awaitable<int> {
        // Asked for by a person: from the server, never from a cache. A trace of its own (`switchboard trace`).
        auto span = trace::Span::start_local_root("read", server, trace::SpanKind::internal);
        span.set("mcp.resource.uri", uri);
        auto r = co_await h.main->read_resource(server, uri, host::ReadMode::fresh, span.context());
        if (!r) {
            span.set_error(std::to_string(r.error().code), r.error().message);
            fmt::print(stderr, "switchboard: reading {} failed: {}\n", uri, r.error().describe());
            co_return 1;
        }
        span.end();
        print_read(g, *r);
        if (!g.watch) co_return 0;
        co_return co_await watch(h, g, server, uri);
    });
}

}  // namespace switchboard::cli
