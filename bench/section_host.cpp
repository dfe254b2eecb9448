// Sections "coldstart" (N stdio servers to all connected and indexed) and "memory" (host RSS with 20 servers and
// about 1,000 tools), measured on the real host: a host::ServerPool and its main context created, started, settled
// (every server connected and the tool index built), then shut down.
#include "harness.hpp"
#include "sync.hpp"

#include <switchboard/host/context.hpp>
#include <switchboard/host/pool.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace switchboard::bench {

namespace asio = boost::asio;
namespace json = boost::json;
using clock = std::chrono::steady_clock;

namespace {

host::Config demo_config(const std::string& demo, int servers, int extra_tools) {
    host::Config cfg;
    cfg.source = "<bench>";
    for (int i = 0; i < servers; ++i) {
        host::ServerConfig s;
        s.name = fmt::format("demo{}", i);
        s.command = demo;
        s.args = {"--page-size", "0"};
        if (extra_tools > 0) {
            s.args.push_back("--extra-tools");
            s.args.push_back(std::to_string(extra_tools));
        }
        cfg.servers.push_back(std::move(s));
    }
    return cfg;
}

struct Connected {
    double ms = 0;
    std::size_t tools = 0;
};

struct StartedHost {
    std::shared_ptr<host::ServerPool> pool;
    std::shared_ptr<host::Context> main;
    std::size_t tools() { return main->tools().size(); }
    void shutdown(asio::io_context& io) {
        main.reset();
        run_sync(io, pool->shutdown());
    }
};

// A started pool with every server connected (tools, resources, prompts listed) and the main context's tool index
// built.
StartedHost start_host(asio::io_context& io, const host::Config& cfg) {
    StartedHost h;
    h.pool = host::ServerPool::create(io.get_executor(), cfg, host::PoolOptions{});
    h.main = host::Context::create(h.pool, host::ContextOptions{});
    h.pool->start();
    run_sync(io, h.pool->wait_until_settled());
    for (const auto& st : h.pool->status())
        if (st.phase != host::Phase::connected)
            throw std::runtime_error(fmt::format("{}: {} ({})", st.name, to_string(st.phase), st.last_error));
    h.main->tools();
    return h;
}

// Starts a host on `cfg` until settled, then shuts it down (not timed).
Connected connect_once(asio::io_context& io, const host::Config& cfg) {
    const auto t0 = clock::now();
    auto h = start_host(io, cfg);
    Connected c;
    c.ms = seconds_since(t0) * 1000;
    c.tools = h.tools();
    h.shutdown(io);
    return c;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

std::vector<Row> run_coldstart(const Context& ctx) {
    const int runs = ctx.quick ? 3 : 7;
    std::vector<Row> rows;
    asio::io_context io;
    connect_once(io, demo_config(ctx.demo(), 1, 0));  // warm the page cache
    double single = 0;
    for (int n : {1, 5, 20}) {
        const auto cfg = demo_config(ctx.demo(), n, 0);
        std::vector<double> ours, peer;
        for (int i = 0; i < runs; ++i) ours.push_back(connect_once(io, cfg).ms);
        for (int i = 0; i < (ctx.quick ? 2 : 3); ++i) {
            auto ts = run_json({ctx.node, ctx.peers_dir + "/stdio_coldstart.mjs", "--command", ctx.demo(), "--args",
                                "--page-size 0", "--servers", std::to_string(n)});
            if (auto ms = ts ? number(*ts, "ms") : std::nullopt) peer.push_back(*ms);
        }
        Row r;
        r.metric = fmt::format("{} server{} connected + indexed (median of {})", n, n == 1 ? "" : "s", runs);
        r.unit = "ms";
        r.ours = median(ours);
        if (!peer.empty()) r.peer = median(peer);
        r.peer_name = "TS SDK, one after another";
        if (n == 1) single = *r.ours;
        if (n == 20) {
            r.target = fmt::format("<= single + 20 ms = {:.1f} ms", single + 20);
            judge(r, *r.ours, single + 20, true, "single + 20 ms");
        }
        if (peer.empty()) r.note = "TS SDK peer failed";
        rows.push_back(std::move(r));
    }
    return rows;
}

std::vector<Row> run_memory(const Context& ctx) {
    std::vector<Row> rows;
    auto out = run_child(ctx, "memory", {"20", "41"});
    if (!out) return {failed("host RSS, 20 servers", "child run failed")};
    Row base;
    base.metric = "host RSS before connecting";
    base.unit = "MiB";
    base.ours = *number(*out, "rss_before_kib") / 1024.0;
    if (const auto* m = out->if_contains("before_by_mapping_kib"); m && m->is_object()) {
        std::vector<std::pair<double, std::string>> parts;
        for (const auto& [name, kib] : m->get_object()) parts.emplace_back(kib.to_number<double>(), name);
        std::sort(parts.rbegin(), parts.rend());
        for (std::size_t i = 0; i < parts.size() && i < 6; ++i)
            base.note += fmt::format("{}{} {:.1f}", i ? ", " : "", parts[i].second, parts[i].first / 1024.0);
    }
    rows.push_back(base);
    Row r;
    r.metric = fmt::format("host RSS, 20 servers, {} tools indexed", *number(*out, "tools"));
    r.unit = "MiB";
    r.ours = *number(*out, "rss_after_kib") / 1024.0;
    r.target = "<= 12 MB (11.44 MiB)";
    judge(r, *r.ours, 12e6 / (1024.0 * 1024.0), true, "12 MB");
    r.note += fmt::format("; peak {:.1f} MiB", *number(*out, "peak_kib") / 1024.0);
    // glibc's count; 0 when the bench runs on mimalloc (SWITCHBOARD_MIMALLOC), which glibc's mallinfo2 cannot see.
    if (auto heap = number(*out, "heap_in_use_kib"); heap && *heap > 0)
        r.note += fmt::format("; heap in use {:.2f} MiB", *heap / 1024.0);
    rows.push_back(std::move(r));
    return rows;
}

// Child: connect `servers` demo servers with `extra` extra tools each, report RSS.
json::object memory_child(const std::vector<std::string>& args) {
    const std::string demo = args.at(0) + "/switchboard-demo-server";
    const int servers = std::stoi(args.at(1)), extra = std::stoi(args.at(2));
    json::object out;
    out["rss_before_kib"] = rss_kib();
    json::object by_mapping;
    for (const auto& [name, kib] : rss_by_mapping())
        if (kib >= 64) by_mapping[name] = kib;
    out["before_by_mapping_kib"] = std::move(by_mapping);
    asio::io_context io;
    const auto cfg = demo_config(demo, servers, extra);
    auto h = start_host(io, cfg);
    out["rss_after_kib"] = rss_kib();
    out["peak_kib"] = peak_rss_kib();
    out["heap_in_use_kib"] = static_cast<std::int64_t>(mallinfo2().uordblks / 1024);  // glibc: allocated, not freed
    out["tools"] = h.tools();
    // SWITCHBOARD_BENCH_MEMORY_EXIT=1: exit here, without shutting down, so that heaptrack reports what a settled host
    // holds as leaked (`heaptrack_print --print-leaks 1`).
    if (const char* e = std::getenv("SWITCHBOARD_BENCH_MEMORY_EXIT"); e && *e == '1') {
        std::puts(json::serialize(out).c_str());
        std::fflush(stdout);
        std::_Exit(0);
    }
    h.shutdown(io);
    return out;
}

}  // namespace

SWITCHBOARD_BENCH_SECTION(Section{"coldstart", "3. cold start of stdio servers (demo server)", 30, run_coldstart});
SWITCHBOARD_BENCH_SECTION(Section{"memory", "4. memory: host with 20 servers, ~1,000 tools", 40, run_memory});
static ChildRegistrar memory_child_registrar("memory", memory_child);

}  // namespace switchboard::bench
