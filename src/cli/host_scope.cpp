// with_host(): the start → print → shut down frame every one-shot command runs in.
#include "cli.hpp"

#include <switchboard/host/tool_catalog.hpp>

#include <fmt/format.h>
#include <boost/asio/this_coro.hpp>

#include <algorithm>

namespace switchboard::cli {

namespace asio = boost::asio;
using asio::awaitable;

awaitable<int> with_host(host::Config config, std::function<awaitable<int>(Host&)> body) {
    co_return co_await with_host(std::move(config), Settle::all, std::move(body));
}

awaitable<int> with_host(host::Config config, Settle settle, std::function<awaitable<int>(Host&)> body) {
    host::PoolOptions defaults;  // not a braced temporary inside the co_await (GCC 12)
    co_return co_await with_host(std::move(config), settle, std::move(defaults), std::move(body));
}

awaitable<int> with_host(host::Config config, Settle settle, host::PoolOptions options,
                         std::function<awaitable<int>(Host&)> body) {
    auto ex = co_await asio::this_coro::executor;
    Host h;
    h.pool = host::ServerPool::create(ex, std::move(config), std::move(options));
    host::ContextOptions main;
    // A command may name a lazy server explicitly (`call lazy__tool`): it is started for that call.
    main.calls_to_unseen_servers = true;
    h.main = host::Context::create(h.pool, main);
    // Every lazy server that connects has its tools recorded for tool search (host/tool_catalog.hpp).
    host::CatalogRecorder recorder(h.pool, host::ToolCatalog::from_env(host::process_env()));
    h.pool->start();
    if (settle == Settle::all) co_await h.pool->wait_until_settled();
    const int code = co_await body(h);
    // A lazy server this command started may still be listing its skills for the catalog: a moment for that.
    co_await recorder.finish(std::chrono::seconds(2));
    h.main.reset();
    co_await h.pool->shutdown();
    co_return code;
}

std::optional<host::Config> only_server(const host::Config& config, const std::string& name) {
    const auto* sc = config.find(name);
    if (!sc) {
        std::vector<std::string> names;
        for (const auto& s : config.servers) names.push_back(s.name);
        fmt::print(stderr, "switchboard: no server \"{}\" in {} (servers: {})\n", name, config.source,
                   fmt::join(names, ", "));
        return std::nullopt;
    }
    host::Config subset;
    subset.source = config.source;
    subset.servers.push_back(*sc);
    return subset;
}

namespace {
bool failed(const host::ServerStatus& s) {
    return s.enabled && (s.phase == host::Phase::error || s.phase == host::Phase::needs_auth);
}
}  // namespace

void report_failures(const host::ServerPool& pool) {
    for (const auto& s : pool.status())
        if (failed(s) && s.phase == host::Phase::needs_auth)
            fmt::print(stderr, "switchboard: {}\n", s.last_error);  // "server "x" needs a login: run ..."
        else if (failed(s))
            fmt::print(stderr, "switchboard: server \"{}\" failed: {}\n", s.name, s.last_error);
}

bool any_failed(const host::ServerPool& pool) {
    auto st = pool.status();
    return std::any_of(st.begin(), st.end(), failed);
}

}  // namespace switchboard::cli
