// `switchboard status [--json] [--watch]`: the servers, then the forks other processes run. --json prints
// {"servers": [...], "forks": [...]}.
#include "cli.hpp"

#include <switchboard/agent/fork_registry.hpp>
#include <switchboard/core/as_tuple.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>

#include <unistd.h>

namespace switchboard::cli {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using core::as_tuple_awaitable;

namespace {

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Forks that other Switchboard processes (run, chat, serve) are running now (agent/fork_registry.hpp).
std::string render_forks(const std::vector<agent::PublishedForks>& published) {
    if (published.empty()) return {};
    const auto now = now_ms();
    std::string out = "\nRunning forks:\n";
    for (const auto& p : published)
        for (const auto& f : p.forks)
            out +=
                fmt::format("  pid {:<7} {} {:<24} from {:<12} depth {}  {:>6.1f} s  servers: {}\n", p.pid, f.kind,
                            f.name, f.parent.empty() ? std::string("?") : f.parent, f.depth,
                            static_cast<double>(now - f.started_at_ms) / 1000.0,
                            f.servers.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(f.servers, ", ")));
    return out;
}

// The same as JSON: one object per fork, every process's together.
json::array forks_json(const std::vector<agent::PublishedForks>& published) {
    const auto now = now_ms();
    json::array out;
    for (const auto& p : published)
        for (const auto& f : p.forks) {
            json::array servers;
            for (const auto& s : f.servers) servers.emplace_back(s);
            json::object o;
            o["kind"] = f.kind;
            o["name"] = f.name;
            o["parent"] = f.parent;
            o["depth"] = f.depth;
            o["servers"] = std::move(servers);
            o["startedAtMs"] = f.started_at_ms;
            o["elapsedMs"] = std::max<std::int64_t>(0, now - f.started_at_ms);
            o["pid"] = p.pid;
            out.push_back(std::move(o));
        }
    return out;
}

void print_status(const host::ServerPool& pool, const GlobalOptions& g) {
    const auto published = agent::read_published_forks(agent::ForkRegistry::default_dir());
    if (g.json) {
        json::object o;
        o["servers"] = status_json(pool.status());
        o["forks"] = forks_json(published);
        print_json(std::move(o));
    } else {
        fmt::print("{}{}", render_status(pool.status()), render_forks(published));
    }
}

// Redraws on every pool event and each second (time in phase), until Ctrl-C.
awaitable<int> watch(const host::Config& config, const GlobalOptions& g) {
    auto ex = co_await asio::this_coro::executor;
    host::PoolOptions options;
    options.sandboxer = make_sandboxer(ex, config);
    auto pool = host::ServerPool::create(ex, config, std::move(options));
    asio::steady_timer wake(ex);
    auto sub = pool->events().subscribe([&wake](const host::Event& e) {
        if (e.kind != host::Event::Kind::log_message && e.kind != host::Event::Kind::progress) wake.cancel();
    });
    pool->start();
    asio::signal_set signals(ex, SIGINT, SIGTERM);
    const bool tty = ::isatty(STDOUT_FILENO) != 0;
    using namespace asio::experimental::awaitable_operators;
    for (;;) {
        if (!g.json) fmt::print("{}", tty ? "\033[H\033[2J" : "\n");
        print_status(*pool, g);
        if (!g.json) fmt::print("(Ctrl-C to quit)\n");
        std::fflush(stdout);
        wake.expires_after(std::chrono::seconds(1));
        auto r = co_await (wake.async_wait(as_tuple_awaitable) || signals.async_wait(as_tuple_awaitable));
        if (r.index() == 1) break;
    }
    pool->events().unsubscribe(sub);
    co_await pool->shutdown();
    co_return 0;
}

}  // namespace

awaitable<int> status(const host::Config& config, const GlobalOptions& g) {
    if (g.watch) co_return co_await watch(config, g);
    co_return co_await with_host(config, [&g](Host& h) -> awaitable<int> {
        print_status(*h.pool, g);
        co_return any_failed(*h.pool) ? 1 : 0;
    });
}

}  // namespace switchboard::cli
