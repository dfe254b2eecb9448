// Section "gateway": `switchboard serve` (one upstream, the demo server over stdio) under load from our Streamable
// HTTP client, next to (a) the demo server itself over HTTP (`--http 0`: what the gateway adds) and (b) a gateway
// built on the TS SDK (bench/peers/ts_gateway.mjs: SDK Server over StreamableHTTPServerTransport with JSON responses,
// forwarding to an SDK Client over stdio to the same demo server). The load is the same C++ client for all three, so
// the client is never the limit: 1 client calling in sequence (p50, p99, calls/s), then 50 clients (50 sessions, each
// calling in sequence) for calls/s. Our client speaks 2026-07-28 to ours and to the demo server, 2025-11-25 to the TS
// SDK v1 gateway (the newest it knows). Rounds interleave the three; the best of each is kept.
//
// CPU per forwarded call: the kernel's own accounting of the server processes (the first field of
// /proc/PID/task/*/schedstat, ns on CPU, summed over threads), read before and after N sequential keep-alive calls
// from one client, for the gateway process and for its upstream (its child, the demo server over stdio) apart; the
// client's CPU is not counted. Ours in both eras (a legacy session: 2025-11-25 handshake and Mcp-Session-Id; and
// stateless 2026-07-28), the TS SDK gateway (node + its upstream) in the legacy era, the only one it speaks. Next to
// them the floor (bench/floor_proxy.cpp): a proxy that moves the same calls' bytes between the socket and the same
// upstream and parses nothing, so what any gateway costs on this machine before it does any work of its own.
#include "gateway_cpu.hpp"
#include "harness.hpp"
#include "server_process.hpp"
#include "sync.hpp"

#include <switchboard/mcp/client_session.hpp>
#include <switchboard/transport/http_client.hpp>
#include <switchboard/transport/stdio_process.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>

namespace switchboard::bench {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using clock = std::chrono::steady_clock;

namespace {

constexpr int clients_many = 50;

// µs of CPU per tools/list of `calls` sequential ones from one session (after 20 to warm up), in the serving process
// `pid` alone (its upstreams are not asked: the gateway answers from its index); the list's length is checked.
double list_cpu(const std::string& url, int pid, int calls, std::size_t tools) {
    asio::io_context io;
    auto s = run_sync(io, open_session(url));
    auto list = [&s, tools]() -> awaitable<void> {
        auto r = co_await s->list_tools();
        if (!r) throw std::runtime_error("tools/list: " + r.error().message);
        if (r->size() != tools) throw std::runtime_error(fmt::format("tools/list: {} tools, not {}", r->size(), tools));
    };
    for (int i = 0; i < 20; ++i) run_sync(io, list());
    const auto c0 = CpuSnapshot::of({pid});
    for (int i = 0; i < calls; ++i) run_sync(io, list());
    const auto c1 = CpuSnapshot::of({pid});
    run_sync(io, s->close());
    return static_cast<double>(c1.since(c0, nullptr)) / 1e3 / calls;
}

// tools/list of 1,000 tools and more through the gateway (one page), against the demo server serving the same list
// itself over HTTP: what a client that lists at every session's start costs each.
Row list_row(const Context& ctx, int rounds) {
    const std::string metric =
        "gateway tools/list CPU per call, the demo server's tools and 1,000 more in one page (vs the upstream serving "
        "them itself over HTTP)";
    constexpr int extra = 1000;
    const auto config =
        std::filesystem::temp_directory_path() / fmt::format("switchboard-bench-gw-list-{}.json", ::getpid());
    std::ofstream(config) << R"({"mcpServers": {"demo": {"command": ")" << ctx.demo()
                          << R"(", "args": ["--extra-tools", ")" << extra << R"(", "--page-size", "0"]}}})";
    const int calls = ctx.quick ? 100 : 300;
    std::optional<double> ours, peer;
    std::size_t tools = 0;
    Row r;
    r.metric = metric;
    r.unit = "µs CPU";
    try {
        for (int round = 0; round < rounds; ++round) {
            ServerProcess demo({ctx.demo(), "--http", "0", "--extra-tools", std::to_string(extra), "--page-size", "0"},
                               {});
            const auto demo_url = trimmed(demo.wait_listening());
            if (tools == 0) {  // the upstream's own count: the gateway must list the same
                asio::io_context io;
                auto s = run_sync(io, open_session(demo_url));
                auto counted = [&s, &tools]() -> awaitable<void> {
                    auto l = co_await s->list_tools();
                    if (!l) throw std::runtime_error("tools/list: " + l.error().message);
                    tools = l->size();
                };
                run_sync(io, counted());
                run_sync(io, s->close());
            }
            const auto p = list_cpu(demo_url, demo.pid(), calls, tools);
            if (!peer || p < *peer) peer = p;
            ServerProcess gw({ctx.bin_dir + "/switchboard", "--config", config.string(), "serve", "--port", "0",
                              "--page-size", "0", "--quiet"},
                             {});
            const auto o = list_cpu(trimmed(gw.wait_listening()), gw.pid(), calls, tools);
            if (!ours || o < *ours) ours = o;
        }
    } catch (const std::exception& e) {
        r = failed(metric, e.what());
    }
    std::error_code ec;
    std::filesystem::remove(config, ec);
    if (!ours || !peer || r.status == Status::failed) return r;
    r.ours = ours;
    r.peer = peer;
    r.peer_name = "demo server --http (StaticHandler)";
    r.note = fmt::format("{} tools, {} calls; the gateway answers a page it built before from its text "
                         "(gateway::ToolListCache)",
                         tools, calls);
    return r;
}

struct Numbers {
    Latencies one;        ///< 1 client, sequential
    double one_per_s = 0;
    double many_per_s = 0;  ///< 50 clients
};

// 1 client only, over stdio (no 50-client numbers: that would be 50 processes).
Numbers measure_stdio(const std::string& command, int calls) {
    asio::io_context io;
    Numbers out;
    auto s = run_sync(io, open_stdio(command));
    run_sync(io, echo_calls(s, 200, nullptr));
    const auto t0 = clock::now();
    run_sync(io, echo_calls(s, calls, &out.one.us));
    out.one_per_s = calls / seconds_since(t0);
    run_sync(io, s->close());
    return out;
}

Numbers measure(const std::string& url, int calls, int calls_each_many) {
    asio::io_context io;
    Numbers out;
    auto s = run_sync(io, open_session(url));
    run_sync(io, echo_calls(s, 200, nullptr));  // warm-up
    const auto t0 = clock::now();
    run_sync(io, echo_calls(s, calls, &out.one.us));
    out.one_per_s = calls / seconds_since(t0);
    run_sync(io, s->close());

    std::vector<std::shared_ptr<mcp::ClientSession>> many;
    for (int i = 0; i < clients_many; ++i) many.push_back(run_sync(io, open_session(url)));
    for (auto& c : many) run_sync(io, echo_calls(c, 20, nullptr));  // each session warm
    const auto t1 = clock::now();
    std::vector<asio::awaitable<void>> callers;
    for (auto& c : many) callers.push_back(echo_calls(c, calls_each_many, nullptr));
    run_all(io, std::move(callers));
    out.many_per_s = static_cast<double>(calls_each_many) * clients_many / seconds_since(t1);
    for (auto& c : many) run_sync(io, c->close());
    return out;
}

struct Best {
    std::optional<Numbers> n;
    std::string error;
    void keep(const Numbers& m) {
        if (!n) {
            n = m;
            return;
        }
        if (m.one.percentile(50) < n->one.percentile(50)) n->one = m.one;
        n->one_per_s = std::max(n->one_per_s, m.one_per_s);
        n->many_per_s = std::max(n->many_per_s, m.many_per_s);
    }
};

// The floor rows, one per era: what the proxy that parses nothing costs a call (its upstream apart: it is sent less,
// see bench/README.md, so no ratio is made of it), then what the gateway costs above that floor (its own work: HTTP
// fields, the JSON-RPC envelope, sessions, routing, the _meta of both eras) against what its upstream costs.
void floor_rows(std::vector<Row>& rows, const BestCpu& gateway, const BestCpu& floor, const std::string& era,
                std::string_view lost_note) {
    const auto metric = fmt::format("floor: a proxy that parses nothing, CPU per forwarded call, {}", era);
    const auto above =
        fmt::format("gateway CPU above the floor per call, {} (vs its upstream's own CPU per call)", era);
    if (!floor.c) {
        rows.push_back(failed(metric, floor.error));
        rows.push_back(failed(above, "no floor: " + floor.error));
        return;
    }
    const auto& f = *floor.c;
    Row r;
    r.metric = metric;
    r.unit = "µs CPU";
    r.ours = f.gateway_us;
    r.note = fmt::format("bench/floor_proxy.cpp (ppoll, read, write to the pipe, read from it, write); its upstream "
                         "{:.1f} µs; {} calls{}",
                         f.upstream_us, f.calls, f.lost_threads ? lost_note : "");
    rows.push_back(std::move(r));
    if (!gateway.c) {
        rows.push_back(failed(above, gateway.error));
        return;
    }
    Row a;
    a.metric = above;
    a.unit = "µs CPU";
    a.ours = gateway.c->gateway_us - f.gateway_us;
    a.peer = gateway.c->upstream_us;
    a.peer_name = "demo server (upstream, stdio)";
    a.note =
        fmt::format("the gateway's own work is {:.2f}x what its upstream spends on the whole call", *a.ours / *a.peer);
    rows.push_back(std::move(a));
}

// The CPU rows: the gateway against its own upstream in each era (<= 2x), and against the TS SDK gateway (>= 10x
// lower, both in the legacy era, the protocol the TS SDK v1 gateway speaks).
void cpu_rows(std::vector<Row>& rows, const BestCpu& legacy, const BestCpu& modern, const BestCpu& ts,
              const BestCpu& floor_legacy, const BestCpu& floor_modern) {
    auto lost = [](const CpuPerCall& c) {
        return c.lost_threads ? "; a thread ended during the window: its time is missing" : "";
    };
    auto vs_upstream = [&](const BestCpu& b, const BestCpu& floor, std::string era) {
        const auto metric = fmt::format("gateway CPU per forwarded call, {} (vs its stdio upstream's own)", era);
        if (!b.c) return failed(metric, b.error);
        const auto& c = *b.c;
        Row r;
        r.metric = metric;
        r.unit = "µs CPU";
        r.ours = c.gateway_us;
        r.peer = c.upstream_us;
        r.peer_name = "demo server (upstream, stdio)";
        r.target = "<= 2x the upstream";
        judge(r, c.gateway_us / c.upstream_us, 2.0, true, "x the upstream");
        r.note += fmt::format("; {} calls, schedstat of both processes{}", c.calls, lost(c));
        if (floor.c) r.note += fmt::format("; the floor (a proxy that parses nothing): {:.1f} µs", floor.c->gateway_us);
        return r;
    };
    rows.push_back(vs_upstream(legacy, floor_legacy, "legacy session (2025-11-25, Mcp-Session-Id)"));
    rows.push_back(vs_upstream(modern, floor_modern, "stateless 2026-07-28"));
    const std::string lost_note = "; a thread ended during the window: its time is missing";
    floor_rows(rows, legacy, floor_legacy, "legacy 2025-11-25", lost_note);
    floor_rows(rows, modern, floor_modern, "stateless 2026-07-28", lost_note);

    const std::string metric = "gateway CPU per forwarded call, legacy session (vs the TS SDK gateway's node process)";
    if (!legacy.c || !ts.c) {
        rows.push_back(failed(metric, !legacy.c ? legacy.error : ts.error));
        return;
    }
    Row r;
    r.metric = metric;
    r.unit = "µs CPU";
    r.ours = legacy.c->gateway_us;
    r.peer = ts.c->gateway_us;
    r.peer_name = "TS SDK gateway (node)";
    r.target = ">= 10x lower than TS SDK";
    judge(r, ts.c->gateway_us / legacy.c->gateway_us, 10.0, false, "x lower");
    if (modern.c) r.note += fmt::format("; ours in stateless 2026-07-28: {:.1f} µs", modern.c->gateway_us);
    if (floor_legacy.c)
        r.note += fmt::format("; the floor (a proxy that parses nothing) is {:.1f}x lower, {:.1f} µs",
                              ts.c->gateway_us / floor_legacy.c->gateway_us, floor_legacy.c->gateway_us);
    r.note += fmt::format("; TS SDK {} calls{}", ts.c->calls, lost(*ts.c));
    rows.push_back(std::move(r));

    Row t;
    t.metric = "gateway + upstream CPU per forwarded call, legacy session (vs the TS SDK gateway + its upstream)";
    t.unit = "µs CPU";
    t.ours = legacy.c->total_us();
    t.peer = ts.c->total_us();
    t.peer_name = "TS SDK gateway + demo server";
    t.note = fmt::format("the same demo server upstream: ours {:.1f} µs (spoken to in 2026-07-28), the TS SDK's {:.1f} "
                         "µs (legacy)",
                         legacy.c->upstream_us, ts.c->upstream_us);
    rows.push_back(std::move(t));
}

// Instructions and system calls per forwarded call in the gateway process, each era, next to the floor proxy's:
// what the CPU rows' microseconds are made of, in counts that do not move with the machine's load.
void count_rows(const Context& ctx, std::vector<Row>& rows, const std::string& config) {
    const std::vector<std::string> gateway{
        ctx.bin_dir + "/switchboard", "--config", config, "serve", "--port", "0", "--quiet"};
    const std::vector<std::string> floor{ctx.self, "--bin-dir", ctx.bin_dir, "--child", "floor_proxy", ctx.demo()};
    const int ir_calls = ctx.quick ? 300 : 1000, sys_calls = ctx.quick ? 1000 : 3000;
    const auto ir = instructions_per_call(ctx, gateway, ir_calls);
    const auto ir_floor = instructions_per_call(ctx, floor, ir_calls);
    const auto sys = syscalls_per_call(ctx, gateway, sys_calls);
    const auto sys_floor = syscalls_per_call(ctx, floor, sys_calls);
    auto row = [&rows](std::string metric, std::string unit, const CountsPerCall& ours, const CountsPerCall& peer,
                       std::optional<double> CountsPerCall::*era, std::string how) {
        Row r;
        r.metric = std::move(metric);
        r.unit = std::move(unit);
        r.ours = ours.*era;
        r.peer = peer.*era;
        r.peer_name = "floor proxy";
        r.note = std::move(how);
        if (!r.ours) r.note = "gateway: " + ours.error;
        if (!r.peer) r.note += (r.note.empty() ? "" : "; ") + ("floor: " + peer.error);
        if (!r.ours) r.status = Status::failed;
        rows.push_back(std::move(r));
    };
    const auto ir_how = fmt::format("callgrind, {} calls after a warm-up, user space only", ir_calls);
    const auto sys_how = fmt::format("strace -f -c attached for {} calls after a warm-up", sys_calls);
    row("gateway instructions per forwarded call, legacy 2025-11-25 (vs the floor proxy)", "Ir", ir, ir_floor,
        &CountsPerCall::legacy, ir_how);
    row("gateway instructions per forwarded call, stateless 2026-07-28 (vs the floor proxy)", "Ir", ir, ir_floor,
        &CountsPerCall::modern, ir_how);
    row("gateway system calls per forwarded call, legacy 2025-11-25 (vs the floor proxy)", "calls", sys, sys_floor,
        &CountsPerCall::legacy, sys_how);
    row("gateway system calls per forwarded call, stateless 2026-07-28 (vs the floor proxy)", "calls", sys, sys_floor,
        &CountsPerCall::modern, sys_how);
}

std::vector<Row> run_gateway(const Context& ctx) {
    const int rounds = ctx.quick ? 1 : 2;
    const int calls = ctx.quick ? 1000 : 5000, each = ctx.quick ? 40 : 200;
    const auto config = std::filesystem::temp_directory_path() / fmt::format("switchboard-bench-gw-{}.json", ::getpid());
    std::ofstream(config) << R"({"mcpServers": {"demo": {"command": ")" << ctx.demo() << R"("}}})";

    const int cpu_calls = ctx.quick ? 2000 : 5000, ts_cpu_calls = ctx.quick ? 1000 : 4000;
    Best ours, direct, stdio, ts;
    BestCpu cpu_legacy, cpu_modern, cpu_ts, floor_legacy, floor_modern;
    for (int round = 0; round < rounds; ++round) {
        try {
            ServerProcess gw({ctx.bin_dir + "/switchboard", "--config", config.string(), "serve", "--port", "0",
                              "--quiet"},
                             {});
            const auto url = trimmed(gw.wait_listening());
            ours.keep(measure(url, calls, each));
            cpu_both_eras(url, gw.pid(), cpu_calls, cpu_legacy, cpu_modern);
        } catch (const std::exception& e) {
            ours.error = e.what();
        }
        try {
            ServerProcess floor({ctx.self, "--bin-dir", ctx.bin_dir, "--child", "floor_proxy", ctx.demo()}, {});
            cpu_both_eras(trimmed(floor.wait_listening()), floor.pid(), cpu_calls, floor_legacy, floor_modern);
        } catch (const std::exception& e) {
            floor_legacy.error = floor_modern.error = e.what();
        }
        try {
            ServerProcess demo({ctx.demo(), "--http", "0"}, {});
            direct.keep(measure(trimmed(demo.wait_listening()), calls, each));
        } catch (const std::exception& e) {
            direct.error = e.what();
        }
        try {
            stdio.keep(measure_stdio(ctx.demo(), calls));
        } catch (const std::exception& e) {
            stdio.error = e.what();
        }
        try {
            const int port = free_port();
            ServerProcess peer(
                {ctx.node, ctx.peers_dir + "/ts_gateway.mjs", "--port", std::to_string(port), "--command", ctx.demo()},
                {});
            const auto url = trimmed(peer.wait_listening());
            ts.keep(measure(url, ctx.quick ? 500 : 2000, ctx.quick ? 10 : 40));
            try {
                cpu_ts.keep(measure_cpu(url, peer.pid(), mcp::Era::legacy, ts_cpu_calls));
            } catch (const std::exception& e) {
                cpu_ts.error = e.what();
            }
        } catch (const std::exception& e) {
            ts.error = e.what();
        }
    }

    std::vector<Row> rows;
    if (!ours.n) return {failed("gateway tools/call", ours.error)};
    auto row = [&](std::string metric, std::string unit, double v, const Best& peer, double pv, std::string peer_name,
                   bool higher) {
        Row r;
        r.metric = std::move(metric);
        r.unit = std::move(unit);
        r.ours = v;
        r.higher_is_better = higher;
        if (peer.n) {
            r.peer = pv;
            r.peer_name = std::move(peer_name);
        } else {
            r.note = peer.error;
        }
        return r;
    };
    const auto& o = *ours.n;
    rows.push_back(row("gateway tools/call p50, 1 client (vs TS SDK gateway)", "µs", o.one.percentile(50), ts,
                       ts.n ? ts.n->one.percentile(50) : 0, "TS SDK gateway", false));
    rows.push_back(row("gateway tools/call p99, 1 client (vs TS SDK gateway)", "µs", o.one.percentile(99), ts,
                       ts.n ? ts.n->one.percentile(99) : 0, "TS SDK gateway", false));
    rows.push_back(row("gateway calls/s, 1 client (vs TS SDK gateway)", "calls/s", o.one_per_s, ts,
                       ts.n ? ts.n->one_per_s : 0, "TS SDK gateway", true));
    auto many = row(fmt::format("gateway calls/s, {} clients (vs TS SDK gateway)", clients_many), "calls/s",
                    o.many_per_s, ts, ts.n ? ts.n->many_per_s : 0, "TS SDK gateway", true);
    many.target = ">= 10x TS SDK";
    if (many.ratio()) judge(many, *many.ratio(), 10.0, false, "x TS SDK");
    rows.push_back(std::move(many));
    rows.push_back(row(fmt::format("gateway calls/s, {} clients (vs the upstream served directly)", clients_many),
                       "calls/s", o.many_per_s, direct, direct.n ? direct.n->many_per_s : 0,
                       "demo server --http, direct", true));
    if (stdio.n) {
        Row added;
        added.metric = "gateway added latency p50 (through the gateway - the upstream called directly over stdio)";
        added.unit = "µs";
        added.ours = o.one.percentile(50) - stdio.n->one.percentile(50);
        added.target = "<= 50 µs";
        judge(added, *added.ours, 50.0, true, "µs");
        added.note += fmt::format("; direct stdio p50 {:.1f} µs; the difference holds the client's HTTP hop too",
                                  stdio.n->one.percentile(50));
        rows.push_back(std::move(added));
    } else {
        rows.push_back(failed("gateway added latency p50", stdio.error));
    }
    if (direct.n) {
        Row r;
        r.metric = "gateway p50 - the demo server's own HTTP p50 (the gateway's work and its stdio hop)";
        r.unit = "µs";
        r.ours = o.one.percentile(50) - direct.n->one.percentile(50);
        r.note = fmt::format("demo --http p50 {:.1f} µs", direct.n->one.percentile(50));
        rows.push_back(std::move(r));
    }
    cpu_rows(rows, cpu_legacy, cpu_modern, cpu_ts, floor_legacy, floor_modern);
    count_rows(ctx, rows, config.string());
    rows.push_back(list_row(ctx, rounds));
    std::error_code ec;
    std::filesystem::remove(config, ec);
    return rows;
}

}  // namespace

SWITCHBOARD_BENCH_SECTION(Section{"gateway", "7. gateway over Streamable HTTP", 70, run_gateway});

}  // namespace switchboard::bench
