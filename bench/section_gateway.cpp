// Section "gateway": `switchboard serve` (one upstream, the demo server over stdio) under load from our Streamable
// HTTP client, next to (a) the demo server itself over HTTP (`--http 0`: what the gateway adds) and (b) a gateway
// built on the TS SDK (bench/peers/ts_gateway.mjs: SDK Server over StreamableHTTPServerTransport with JSON responses,
// forwarding to an SDK Client over stdio to the same demo server). The load is the same C++ client for all three, so
// the client is never the limit: 1 client calling in sequence (p50, p99, calls/s), then 50 clients (50 sessions, each
// calling in sequence) for calls/s. Our client speaks 2026-07-28 to ours and to the demo server, 2025-11-25 to the TS
// SDK v1 gateway (the newest it knows). Rounds interleave the three; the best of each is kept.
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

#include <unistd.h>

namespace switchboard::bench {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using clock = std::chrono::steady_clock;

namespace {

constexpr int clients_many = 50;

std::string trimmed(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    return s;
}

awaitable<std::shared_ptr<mcp::ClientSession>> open_session(std::string url) {
    auto ex = co_await asio::this_coro::executor;
    transport::HttpClientOptions ho;
    ho.server_name = "bench";
    auto ch = transport::make_streamable_http_channel(ex, url, ho);
    mcp::ClientOptions co;
    co.server_name = "bench";
    auto s = co_await mcp::ClientSession::connect(ex, ch, co);
    if (!s) throw std::runtime_error("connect " + url + ": " + s.error().message);
    co_return *s;
}

// The upstream itself over stdio, as the gateway reaches it.
awaitable<std::shared_ptr<mcp::ClientSession>> open_stdio(std::string command) {
    auto ex = co_await asio::this_coro::executor;
    transport::StdioProcessOptions po;
    po.name = "bench";
    po.command = command;
    auto ch = transport::StdioProcessChannel::spawn(ex, po);
    if (!ch) throw std::runtime_error("spawn " + command + ": " + ch.error().describe());
    mcp::ClientOptions co;
    co.server_name = "bench";
    auto s = co_await mcp::ClientSession::connect(ex, *ch, co);
    if (!s) throw std::runtime_error("connect " + command + ": " + s.error().message);
    co_return *s;
}

awaitable<void> echo_calls(std::shared_ptr<mcp::ClientSession> s, int n, std::vector<double>* us) {
    for (int i = 0; i < n; ++i) {
        json::object args;
        args["message"] = "hello";
        const auto t0 = clock::now();
        auto r = co_await s->call_tool("echo", std::move(args));
        if (!r) throw std::runtime_error("tools/call: " + r.error().message);
        if (r->content.empty() || r->is_error) throw std::runtime_error("tools/call: unexpected result");
        if (us) us->push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
    }
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

std::vector<Row> run_gateway(const Context& ctx) {
    const int rounds = ctx.quick ? 1 : 2;
    const int calls = ctx.quick ? 1000 : 5000, each = ctx.quick ? 40 : 200;
    const auto config = std::filesystem::temp_directory_path() / fmt::format("switchboard-bench-gw-{}.json", ::getpid());
    std::ofstream(config) << R"({"mcpServers": {"demo": {"command": ")" << ctx.demo() << R"("}}})";

    Best ours, direct, stdio, ts;
    for (int round = 0; round < rounds; ++round) {
        try {
            ServerProcess gw({ctx.bin_dir + "/switchboard", "--config", config.string(), "serve", "--port", "0",
                              "--quiet"},
                             {});
            ours.keep(measure(trimmed(gw.wait_listening()), calls, each));
        } catch (const std::exception& e) {
            ours.error = e.what();
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
            ServerProcess peer({ctx.node, ctx.peers_dir + "/ts_gateway.mjs", "--port", std::to_string(port),
                                "--command", ctx.demo()},
                               {});
            ts.keep(measure(trimmed(peer.wait_listening()), ctx.quick ? 500 : 2000, ctx.quick ? 10 : 40));
        } catch (const std::exception& e) {
            ts.error = e.what();
        }
    }
    std::error_code ec;
    std::filesystem::remove(config, ec);

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
    return rows;
}

}  // namespace

SWITCHBOARD_BENCH_SECTION(Section{"gateway", "7. gateway over Streamable HTTP", 70, run_gateway});

}  // namespace switchboard::bench
