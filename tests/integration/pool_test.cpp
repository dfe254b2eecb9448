// Leases on real processes: lazy servers start when acquired and stop when released (keepWarmSeconds), share one
// process between concurrent holders, reconnect while leased; contexts over the same servers with their own
// overrides.
#include "host_harness.hpp"

#include <switchboard/core/spawn.hpp>
#include <switchboard/host/context.hpp>
#include <switchboard/host/pool.hpp>

#include <boost/asio/this_coro.hpp>

#include <signal.h>

#include <filesystem>

namespace switchboard::test {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using asio::awaitable;
using host::Phase;
using clock = std::chrono::steady_clock;

// A lazy demo server that appends its pid to `pids` when it starts.
std::string counted_lazy_entry(const fs::path& pids, const std::string& extra = "") {
    return sh_entry("echo $$ >> " + pids.string() + "; exec " + demo_server(), R"(, "lazy": true)" + extra);
}

// A named value, not `ToolCallOptions{}` in the co_await expression: GCC 12 miscompiles braced temporaries there.
host::ToolCallOptions no_options() { return host::ToolCallOptions(); }

json::object echo_args(std::string message) {
    json::object o;
    o["message"] = std::move(message);
    return o;
}

// Waits until `pid` is gone, at most `limit`.
awaitable<bool> wait_gone(int pid, clock::duration limit) {
    const auto deadline = clock::now() + limit;
    while (process_alive(pid) && clock::now() < deadline) co_await sleep_for(10ms);
    co_return !process_alive(pid);
}

TEST(Pool, ALazyServerNobodyAcquiresIsNeverSpawned) {
    TempDir dir;
    const auto pids = dir.path / "pids";
    auto cfg = config_of({{"eager", demo_entry()}, {"lazy", counted_lazy_entry(pids)}});
    run([&]() -> awaitable<void> {
        auto pool = host::ServerPool::create(co_await asio::this_coro::executor, cfg, fast_options());
        auto main = host::Context::create(pool, host::ContextOptions{});
        pool->start();
        co_await pool->wait_until_settled(20s);
        co_await sleep_for(200ms);
        EXPECT_EQ(pool->status("eager")->phase, Phase::connected);
        EXPECT_EQ(pool->status("lazy")->phase, Phase::dormant);
        EXPECT_EQ(pool->status("lazy")->lifecycle(), "dormant");
        EXPECT_FALSE(fs::exists(pids));
        EXPECT_EQ(main->servers(), std::vector<std::string>{"eager"});
        EXPECT_FALSE(main->tools().empty());
        for (const auto& t : main->tools().tools()) EXPECT_EQ(t.server, "eager");
        co_await pool->shutdown();
        EXPECT_FALSE(fs::exists(pids));
    });
}

TEST(Pool, ConcurrentAcquiresShareOneProcessWhichStopsWithTheLastLease) {
    TempDir dir;
    const auto pids = dir.path / "pids";
    auto cfg = config_of({{"lazy", counted_lazy_entry(pids)}});
    run([&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto pool = host::ServerPool::create(ex, cfg, fast_options());
        pool->start();
        std::vector<std::string> lifecycles;
        pool->events().subscribe([&](const host::Event&) {
            auto l = pool->status("lazy")->lifecycle();
            if (lifecycles.empty() || lifecycles.back() != l) lifecycles.push_back(l);
        });
        std::optional<host::Lease> a, b;
        std::vector<asio::awaitable<void>> both;
        both.push_back([](std::shared_ptr<host::ServerPool> p, std::optional<host::Lease>& out) -> awaitable<void> {
            auto l = co_await p->acquire("lazy");
            if (l) out = std::move(*l);
        }(pool, a));
        both.push_back([](std::shared_ptr<host::ServerPool> p, std::optional<host::Lease>& out) -> awaitable<void> {
            auto l = co_await p->acquire("lazy");
            if (l) out = std::move(*l);
        }(pool, b));
        co_await core::run_all(std::move(both));
        CO_ASSERT_TRUE(a && b);
        EXPECT_EQ(read_lines(pids).size(), 1u);  // one start, one process
        EXPECT_EQ(pool->status("lazy")->leases, 2u);
        EXPECT_EQ(pool->status("lazy")->lifecycle(), "active");
        const int pid = std::stoi(read_lines(pids).at(0));
        EXPECT_TRUE(process_alive(pid));

        auto r = co_await pool->call_tool("lazy", "echo", echo_args("hi"), no_options());
        CO_ASSERT_TRUE(r.has_value());
        EXPECT_EQ(r->content.at(0).text(), "hi");

        a.reset();  // one holder left: still running
        co_await sleep_for(100ms);
        EXPECT_TRUE(process_alive(pid));
        EXPECT_EQ(pool->status("lazy")->leases, 1u);
        b.reset();  // the last lease, keepWarmSeconds 0: stopped
        EXPECT_TRUE(co_await wait_gone(pid, 5s));
        EXPECT_EQ(pool->status("lazy")->phase, Phase::dormant);
        EXPECT_EQ(pool->status("lazy")->leases, 0u);
        CO_ASSERT_TRUE(lifecycles.size() >= 4u);
        EXPECT_EQ(lifecycles[0], "dormant");  // leased, not started yet
        EXPECT_EQ(lifecycles[1], "loading");
        EXPECT_NE(std::find(lifecycles.begin(), lifecycles.end(), "active"), lifecycles.end());
        EXPECT_EQ(lifecycles.back(), "dormant");
        co_await pool->shutdown();
    });
}

TEST(Pool, KeepWarmKeepsTheProcessForAReacquireThenStopsIt) {
    TempDir dir;
    const auto pids = dir.path / "pids";
    auto cfg = config_of({{"lazy", counted_lazy_entry(pids, R"(, "keepWarmSeconds": 0.6)")}});
    run([&]() -> awaitable<void> {
        auto pool = host::ServerPool::create(co_await asio::this_coro::executor, cfg, fast_options());
        pool->start();
        {
            auto lease = co_await pool->acquire("lazy");
            CO_ASSERT_TRUE(lease.has_value());
        }
        const int pid = std::stoi(read_lines(pids).at(0));
        co_await sleep_for(200ms);
        EXPECT_TRUE(process_alive(pid));  // inside the keep-warm window
        EXPECT_EQ(pool->status("lazy")->lifecycle(), "warm");
        {
            auto again = co_await pool->acquire("lazy");  // reused, not restarted
            CO_ASSERT_TRUE(again.has_value());
            EXPECT_EQ(read_lines(pids).size(), 1u);
            co_await sleep_for(800ms);  // longer than the window while held: still up
            EXPECT_TRUE(process_alive(pid));
        }
        co_await sleep_for(200ms);
        EXPECT_TRUE(process_alive(pid));
        EXPECT_TRUE(co_await wait_gone(pid, 5s));  // the window after the last release ends it
        EXPECT_EQ(pool->status("lazy")->phase, Phase::dormant);
        EXPECT_EQ(read_lines(pids).size(), 1u);
        co_await pool->shutdown();
    });
}

TEST(Pool, AcquireWhileTheServerIsStoppingStartsAFreshOneAfterTheOldIsGone) {
    TempDir dir;
    const auto pids = dir.path / "pids";
    // Slow to stop: after the demo server exits (stdin closed), its shell lingers half a second.
    auto cfg = config_of({{"lazy", sh_entry("echo $$ >> " + pids.string() + "; " + demo_server() + "; sleep 0.5",
                                            R"(, "lazy": true)")}});
    run([&]() -> awaitable<void> {
        auto pool = host::ServerPool::create(co_await asio::this_coro::executor, cfg, fast_options());
        pool->start();
        auto first = co_await pool->acquire("lazy");
        CO_ASSERT_TRUE(first.has_value());
        const int old_pid = std::stoi(read_lines(pids).at(0));
        first->release();
        EXPECT_TRUE(co_await wait_phase(pool, "lazy", Phase::dormant, 5s));  // stopping has begun
        EXPECT_TRUE(process_alive(old_pid));                                 // ...and is not over
        auto second = co_await pool->acquire("lazy");
        CO_ASSERT_TRUE(second.has_value()) << second.error().describe();
        auto lines = read_lines(pids);
        CO_ASSERT_EQ(lines.size(), 2u);
        EXPECT_FALSE(process_alive(old_pid));  // one process at a time: the new one started after the old was gone
        EXPECT_TRUE(process_alive(std::stoi(lines[1])));
        auto r = co_await pool->call_tool("lazy", "echo", echo_args("again"), no_options());
        CO_ASSERT_TRUE(r.has_value());
        EXPECT_EQ(r->content.at(0).text(), "again");
        co_await pool->shutdown();
        EXPECT_TRUE(co_await wait_gone(std::stoi(lines[1]), 5s));
    });
}

TEST(Pool, ALeasedServerKilledReconnectsAndHoldersSeeAClearError) {
    TempDir dir;
    const auto pids = dir.path / "pids";
    auto cfg = config_of({{"lazy", counted_lazy_entry(pids)}});
    run(
        [&]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            auto pool = host::ServerPool::create(ex, cfg, fast_options());
            pool->start();
            auto lease = co_await pool->acquire("lazy");
            CO_ASSERT_TRUE(lease.has_value());
            const int pid = std::stoi(read_lines(pids).at(0));
            // A call in flight when the process dies.
            std::optional<jsonrpc::Outcome<mcp::CallToolResult>> in_flight;
            core::spawn_logged(
                ex,
                [&]() -> awaitable<void> {
                    json::object slow;
                    slow["seconds"] = 20;
                    slow["steps"] = 20;
                    in_flight = co_await pool->call_tool("lazy", "slow", slow, no_options());
                },
                "slow call");
            co_await sleep_for(300ms);
            ::kill(pid, SIGKILL);
            for (int i = 0; i < 500 && !in_flight; ++i) co_await sleep_for(10ms);
            CO_ASSERT_TRUE(in_flight.has_value());
            CO_ASSERT_FALSE(in_flight->has_value());
            EXPECT_NE(in_flight->error().describe().find("disconnected during the call"), std::string::npos)
                << in_flight->error().describe();
            EXPECT_TRUE(co_await wait_phase(pool, "lazy", Phase::connected, 20s));
            EXPECT_EQ(read_lines(pids).size(), 2u);
            EXPECT_EQ(pool->status("lazy")->leases, 1u);
            EXPECT_EQ(pool->status("lazy")->reconnects, 1);
            auto r = co_await pool->call_tool("lazy", "echo", echo_args("back"), no_options());
            CO_ASSERT_TRUE(r.has_value());
            EXPECT_EQ(r->content.at(0).text(), "back");
            const int new_pid = std::stoi(read_lines(pids).at(1));
            lease->release();
            EXPECT_TRUE(co_await wait_gone(new_pid, 5s));
            co_await pool->shutdown();
        },
        60s);
}

TEST(Pool, AcquireNamesWhatIsWrong) {
    auto cfg = config_of({{"off", R"({"command": "true", "enabled": false})"}});
    run([&]() -> awaitable<void> {
        auto pool = host::ServerPool::create(co_await asio::this_coro::executor, cfg, fast_options());
        pool->start();
        auto missing = co_await pool->acquire("nope");
        CO_ASSERT_FALSE(missing.has_value());
        EXPECT_NE(missing.error().message.find("no server \"nope\" is configured (servers: off)"), std::string::npos)
            << missing.error().message;
        auto off = co_await pool->acquire("off");
        CO_ASSERT_FALSE(off.has_value());
        EXPECT_NE(off.error().message.find("disabled"), std::string::npos);
        co_await pool->shutdown();
    });
}

TEST(Context, TwoContextsOverTheSameServersKeepTheirOwnOverrides) {
    auto cfg = config_of({{"a", demo_entry()}, {"b", demo_entry(R"("--legacy-only")")}});
    run([&]() -> awaitable<void> {
        auto pool = host::ServerPool::create(co_await asio::this_coro::executor, cfg, fast_options());
        auto one = host::Context::create(pool, host::ContextOptions{});
        host::ContextOptions narrow;
        narrow.name = "narrow";
        narrow.deny_tools = {"*slow*", "b__*"};
        auto two = host::Context::create(pool, narrow);
        pool->start();
        co_await pool->wait_until_settled(20s);

        // Same servers, same conflict rule: both servers' echo is qualified in `one`; `two` denies b's tools, so a's
        // echo keeps its bare name there.
        EXPECT_TRUE(one->tools().find("a__echo"));
        EXPECT_TRUE(one->tools().find("b__echo"));
        EXPECT_TRUE(one->tools().find("a__slow"));
        EXPECT_TRUE(two->tools().find("echo"));
        EXPECT_FALSE(two->tools().find("b__echo"));
        EXPECT_FALSE(two->tools().find("slow"));

        // A tool switched off in one context only.
        one->set_tool_enabled("a", "add", false);
        EXPECT_FALSE(one->tools().find("a__add"));
        EXPECT_TRUE(two->tools().find("add"));
        json::object add;
        add["a"] = 2;
        add["b"] = 3;
        auto refused = co_await one->call_tool("a__add", add, no_options());
        CO_ASSERT_FALSE(refused.has_value());
        EXPECT_NE(refused.error().message.find("switched off"), std::string::npos) << refused.error().message;
        auto allowed = co_await two->call_tool("add", add, no_options());
        CO_ASSERT_TRUE(allowed.has_value()) << allowed.error().describe();
        EXPECT_EQ(allowed->content.at(0).text(), "5");
        auto denied = co_await two->call_tool("b__echo", echo_args("x"), no_options());
        EXPECT_FALSE(denied.has_value());

        // A server switched off in one context: gone from its view and its index, untouched in the other.
        one->set_server_enabled("b", false);
        EXPECT_EQ(one->servers(), std::vector<std::string>{"a"});
        EXPECT_TRUE(one->tools().find("echo"));  // no conflict left in `one`
        auto off = co_await one->call_tool("b__echo", echo_args("x"), no_options());
        CO_ASSERT_FALSE(off.has_value());
        EXPECT_NE(off.error().message.find("switched off"), std::string::npos) << off.error().message;
        EXPECT_EQ(two->servers().size(), 2u);
        EXPECT_EQ(pool->status("b")->phase, Phase::connected);

        one->set_server_enabled("b", true);
        one->set_tool_enabled("a", "add", true);
        EXPECT_TRUE(one->tools().find("a__add"));
        co_await pool->shutdown();
    });
}

// Contexts whose index is made of the same inputs share one (a gateway makes a context per stateless request); one
// that switched a tool off, or has other patterns, or sees other servers, has its own; a changed input is a new index.
TEST(Context, ContextsOfTheSameInputsShareOneToolIndex) {
    auto cfg = config_of({{"a", demo_entry()}, {"b", demo_entry()}});
    run([&]() -> awaitable<void> {
        auto pool = host::ServerPool::create(co_await asio::this_coro::executor, cfg, fast_options());
        auto one = host::Context::create(pool, host::ContextOptions{});
        auto two = host::Context::create(pool, host::ContextOptions{});
        host::ContextOptions denying;
        denying.deny_tools = {"b__*"};
        auto three = host::Context::create(pool, denying);
        host::ContextOptions only_a;
        only_a.servers = std::vector<std::string>{"a"};
        auto four = host::Context::create(pool, only_a);
        pool->start();
        co_await pool->wait_until_settled(20s);

        EXPECT_EQ(one->tool_index(), two->tool_index());
        EXPECT_TRUE(one->tools().find("a__echo"));
        EXPECT_NE(three->tool_index(), one->tool_index());
        EXPECT_TRUE(three->tools().find("echo"));
        EXPECT_NE(four->tool_index(), one->tool_index());
        EXPECT_FALSE(four->tools().find("b__echo"));

        // Switched off in `two` only: `two` gets an index of its own, `one` keeps the shared one.
        const auto shared = one->tool_index();
        two->set_tool_enabled("a", "add", false);
        EXPECT_NE(two->tool_index(), shared);
        EXPECT_FALSE(two->tools().find("a__add"));
        EXPECT_TRUE(one->tools().find("a__add"));
        EXPECT_EQ(one->tool_index(), shared);
        two->set_tool_enabled("a", "add", true);
        EXPECT_EQ(two->tool_index(), shared);  // the same inputs again: the shared one

        // A server gone from the pool is a new input: a new index, without its tools.
        auto without_b = config_of({{"a", demo_entry()}});  // not inside co_await: GCC 12 (docs/design.md)
        co_await pool->apply(std::move(without_b));
        const auto after = one->tool_index();
        EXPECT_NE(after, shared);
        EXPECT_TRUE(one->tools().find("echo"));
        EXPECT_FALSE(one->tools().find("b__echo"));
        EXPECT_EQ(two->tool_index(), after);
        co_await pool->shutdown();
    });
}

TEST(Context, AForkedContextLeasesItsLazyServerAndReleasesItWhenDropped) {
    TempDir dir;
    const auto pids = dir.path / "pids";
    auto cfg = config_of({{"main", demo_entry()}, {"lazy", counted_lazy_entry(pids)}});
    run([&]() -> awaitable<void> {
        auto pool = host::ServerPool::create(co_await asio::this_coro::executor, cfg, fast_options());
        auto main = host::Context::create(pool, host::ContextOptions{});
        pool->start();
        co_await pool->wait_until_settled(20s);
        const auto main_tools = main->tools().size();

        host::ContextOptions fork_options;
        fork_options.name = "agent:test";
        fork_options.servers = std::vector<std::string>{"lazy"};
        auto fork = host::Context::create(pool, fork_options);
        EXPECT_TRUE(fork->tools().empty());  // declared, not loaded yet
        auto added = co_await fork->add_server("lazy");
        CO_ASSERT_TRUE(added.has_value()) << added.error().describe();
        EXPECT_EQ(fork->servers(), std::vector<std::string>{"lazy"});
        EXPECT_TRUE(fork->tools().find("echo"));
        for (const auto& t : fork->tools().tools()) EXPECT_EQ(t.server, "lazy");
        EXPECT_EQ(main->tools().size(), main_tools);  // the main context stays clean
        for (const auto& t : main->tools().tools()) EXPECT_EQ(t.server, "main");
        auto r = co_await fork->call_tool("echo", echo_args("from the fork"), no_options());
        CO_ASSERT_TRUE(r.has_value());
        EXPECT_EQ(r->content.at(0).text(), "from the fork");
        // The main context cannot call it by name: it does not see lazy servers.
        auto from_main = co_await main->call_tool("lazy__echo", echo_args("x"), no_options());
        CO_ASSERT_FALSE(from_main.has_value());
        EXPECT_NE(from_main.error().message.find("not available in context \"main\""), std::string::npos)
            << from_main.error().message;

        const int pid = std::stoi(read_lines(pids).at(0));
        fork.reset();  // the fork ends: its lease goes, and the lazy server with it
        EXPECT_TRUE(co_await wait_gone(pid, 5s));
        EXPECT_EQ(pool->status("lazy")->phase, Phase::dormant);
        co_await pool->shutdown();
    });
}

TEST(Context, RemovingALeasedServerReleasesItAndTakesItOutOfTheView) {
    TempDir dir;
    const auto pids = dir.path / "pids";
    auto cfg = config_of({{"lazy", counted_lazy_entry(pids)}});
    run([&]() -> awaitable<void> {
        auto pool = host::ServerPool::create(co_await asio::this_coro::executor, cfg, fast_options());
        pool->start();
        host::ContextOptions options;
        options.servers = std::vector<std::string>{"lazy"};
        auto ctx = host::Context::create(pool, options);
        auto added = co_await ctx->add_server("lazy");
        CO_ASSERT_TRUE(added.has_value()) << added.error().describe();
        EXPECT_EQ(ctx->leased(), std::vector<std::string>{"lazy"});
        EXPECT_TRUE(ctx->tools().find("echo"));
        const int pid = std::stoi(read_lines(pids).at(0));
        ctx->remove_server("lazy");
        EXPECT_TRUE(ctx->leased().empty());
        EXPECT_TRUE(ctx->servers().empty());
        EXPECT_TRUE(ctx->tools().empty());
        EXPECT_TRUE(co_await wait_gone(pid, 5s));  // nobody else held it
        co_await pool->shutdown();
    });
}

}  // namespace
}  // namespace switchboard::test

namespace switchboard::test {
namespace {

TEST(Pool, ASecondPoolOnTheSameLoopAfterTheFirstShutDownStartsAndSettles) {
    // A long-lived front end (the gateway reloading, a bench) creates pools one after the other on one io_context.
    run([&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        for (int round = 0; round < 2; ++round) {
            auto cfg = config_of({{"demo", demo_entry()}});
            auto pool = host::ServerPool::create(ex, std::move(cfg), fast_options());
            pool->start();
            co_await pool->wait_until_settled(10s);
            EXPECT_EQ(pool->status("demo")->phase, Phase::connected) << "round " << round;
            co_await pool->shutdown();
        }
    });
}

}  // namespace
}  // namespace switchboard::test
