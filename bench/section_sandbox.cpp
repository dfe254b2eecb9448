// Section "sandbox": what confinement costs (host/sandbox.hpp). Cold start of 1 and 20 demo servers, confined
// (bwrap + switchboard-confine's seccomp filter + an egress proxy each) against the same servers unconfined, in the
// same run; and a stdio round trip (echo) through a confined server against an unconfined one.
#include "harness.hpp"
#include "sync.hpp"

#include <switchboard/host/context.hpp>
#include <switchboard/host/pool.hpp>

#include <boost/asio/io_context.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include <sched.h>

namespace switchboard::bench {

namespace asio = boost::asio;
namespace json = boost::json;
using clock = std::chrono::steady_clock;

namespace {

host::Config sandbox_config(const std::string& demo, int servers, bool confined) {
    host::Config cfg;
    cfg.source = "<bench>";
    for (int i = 0; i < servers; ++i) {
        host::ServerConfig s;
        s.name = fmt::format("demo{}", i);
        s.command = demo;
        s.args = {"--page-size", "0"};
        s.sandbox.enabled = confined;
        cfg.servers.push_back(std::move(s));
    }
    return cfg;
}

std::shared_ptr<host::ServerPool> started(asio::io_context& io, const host::Config& cfg,
                                          const std::shared_ptr<host::Sandboxer>& sandboxer) {
    host::PoolOptions o;
    o.sandboxer = sandboxer;
    auto pool = host::ServerPool::create(io.get_executor(), cfg, std::move(o));
    pool->start();
    run_sync(io, pool->wait_until_settled());
    for (const auto& st : pool->status())
        if (st.phase != host::Phase::connected)
            throw std::runtime_error(fmt::format("{}: {} ({})", st.name, to_string(st.phase), st.last_error));
    return pool;
}

double cold_ms(asio::io_context& io, const host::Config& cfg, const std::shared_ptr<host::Sandboxer>& sandboxer) {
    const auto t0 = clock::now();
    auto pool = started(io, cfg, sandboxer);
    const double ms = seconds_since(t0) * 1000;
    run_sync(io, pool->shutdown());
    return ms;
}

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// Median microseconds of an echo call to each server, the calls alternating between them so that both see the same
// machine (on a 2-core VM a round trip is 12 or 50 µs depending on where the scheduler puts the two processes).
std::pair<double, double> round_trips_us(asio::io_context& io, const std::shared_ptr<host::ServerPool>& pool,
                                         int calls) {
    std::vector<double> us[2];
    for (int i = 0; i < 2 * (calls + 50); ++i) {
        const auto server = fmt::format("demo{}", i % 2);
        const auto t0 = clock::now();
        auto r =
            run_sync(io, pool->call_tool(server, "echo", json::object{{"message", "hi"}}, host::ToolCallOptions{}));
        if (!r) throw std::runtime_error("echo failed: " + r.error().message);
        if (i >= 100) us[i % 2].push_back(seconds_since(t0) * 1e6);
    }
    return {median_of(std::move(us[0])), median_of(std::move(us[1]))};
}

std::vector<Row> run(const Context& ctx) {
    ::setenv("SWITCHBOARD_CONFINE", (ctx.bin_dir + "/switchboard-confine").c_str(), 0);
    const int runs = ctx.quick ? 3 : 7;
    asio::io_context io;
    // One sandboxer for the section: the layer is probed once (one bwrap run, about 5 ms, paid by the first confined
    // start of a process), as a long-running host does.
    auto sandboxer = std::make_shared<host::Sandboxer>(io.get_executor(), host::SandboxHost::from_environment());
    std::vector<Row> rows;
    try {
        cold_ms(io, sandbox_config(ctx.demo(), 1, true), sandboxer);  // probe, page cache
        for (int n : {1, 20}) {
            std::vector<double> confined, open;
            for (int i = 0; i < runs; ++i) {
                open.push_back(cold_ms(io, sandbox_config(ctx.demo(), n, false), sandboxer));
                confined.push_back(cold_ms(io, sandbox_config(ctx.demo(), n, true), sandboxer));
            }
            Row r;
            r.metric =
                fmt::format("{} server{} connected + indexed, confined (median of {})", n, n == 1 ? "" : "s", runs);
            r.unit = "ms";
            r.ours = median_of(confined);
            r.peer = median_of(open);
            r.peer_name = "the same, unconfined";
            const double limit = *r.peer + 10.0 * n;
            r.target = fmt::format("<= unconfined + {} ms = {:.1f} ms", 10 * n, limit);
            judge(r, *r.ours, limit, true, fmt::format("unconfined + {} ms", 10 * n));
            r.note += fmt::format("{}+{:.1f} ms per server", r.note.empty() ? "" : "; ", (*r.ours - *r.peer) / n);
            rows.push_back(std::move(r));
        }
        const int calls = ctx.quick ? 300 : 2000;
        auto both = sandbox_config(ctx.demo(), 2, false);
        both.servers[1].sandbox.enabled = true;
        // Every process on one core (the servers inherit it): where the scheduler puts them otherwise decides the
        // number more than anything confinement does.
        cpu_set_t was, one;
        ::sched_getaffinity(0, sizeof was, &was);
        CPU_ZERO(&one);
        CPU_SET(0, &one);
        ::sched_setaffinity(0, sizeof one, &one);
        auto pool = started(io, both, sandboxer);
        const auto [open_us, confined_us] = round_trips_us(io, pool, calls);
        run_sync(io, pool->shutdown());
        ::sched_setaffinity(0, sizeof was, &was);
        Row r;
        r.metric = fmt::format("stdio round trip (echo) p50, confined ({} calls)", calls);
        r.unit = "µs";
        r.ours = confined_us;
        r.peer = open_us;
        r.peer_name = "the same, unconfined";
        r.target = "unchanged (<= unconfined + 10%)";
        judge(r, confined_us, open_us * 1.10, true, "unconfined + 10%");
        r.note = "alternating calls, every process on CPU 0; " + r.note;
        rows.push_back(std::move(r));
    } catch (const std::exception& e) {
        rows.push_back(failed("confined cold start", e.what()));
    }
    sandboxer->close();
    return rows;
}

}  // namespace

SWITCHBOARD_BENCH_SECTION(Section{"sandbox", "3b. confined stdio servers against unconfined", 31, run});

}  // namespace switchboard::bench
