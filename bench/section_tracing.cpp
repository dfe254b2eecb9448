// Section "tracing": what tracing costs, each number against the same thing without it, measured in the same run.
//
// - The gateway's CPU per forwarded call (schedstat of the gateway process, as in section "gateway") with tracing as
//   it is by default (a tracer installed, no collector: only what a person starts is recorded) against tracing
//   disabled (OTEL_SDK_DISABLED=true: no tracer at all, what the code did before it traced), and with export on (a
//   collector at 127.0.0.1, every request a sampled trace: a SERVER and a CLIENT span per call, batched and sent as
//   protobuf) against export off. Both eras. The three gateways run side by side and windows of calls alternate between
//   them; the median window of each is kept.
// - The stdio round trip in this process, calls alternating in blocks between no tracer and an installed one (export
//   off), the median of each.
// Every process measured is on CPU 0 (the client, the gateway and its upstream inherit it; the collector goes to
// CPU 1): on a 2-core VM where the scheduler puts them decides the number more than anything measured here.
#include "gateway_cpu.hpp"
#include "harness.hpp"
#include "server_process.hpp"
#include "sync.hpp"

#include <switchboard/core/trace.hpp>

#include <boost/asio/io_context.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <sched.h>
#include <unistd.h>

namespace switchboard::bench {

namespace asio = boost::asio;
namespace json = boost::json;
using clock = std::chrono::steady_clock;

namespace {

double median_us(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// Medians of the stdio echo round trip without a tracer and with one installed (export off), alternating blocks.
std::pair<double, double> stdio_round_trips(const std::string& demo, int calls) {
    asio::io_context io;
    auto s = run_sync(io, open_stdio(demo));
    run_sync(io, echo_calls(s, 300, nullptr));
    std::vector<double> off, on;
    trace::Tracer tracer(trace::TracerOptions{});
    constexpr int block = 100;
    for (int done = 0; done < calls; done += block) {
        run_sync(io, echo_calls(s, block, &off));
        {
            trace::InstallTracer installed(&tracer);
            run_sync(io, echo_calls(s, block, &on));
        }
    }
    run_sync(io, s->close());
    return {median_us(std::move(off)), median_us(std::move(on))};
}

// The median of a list of per-call CPU windows (its upstream from the same window).
struct Windows {
    std::vector<CpuPerCall> list;
    std::string error;
    std::optional<CpuPerCall> median() const {
        if (list.empty()) return std::nullopt;
        auto v = list;
        std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.gateway_us < b.gateway_us; });
        return v[v.size() / 2];
    }
};

Row ratio_row(std::string metric, const Windows& ours, const Windows& base, std::string base_name, double limit,
              std::string target) {
    const auto o = ours.median(), b = base.median();
    if (!o || !b) return failed(metric, !o ? ours.error : base.error);
    Row r;
    r.metric = std::move(metric);
    r.unit = "µs CPU";
    r.ours = o->gateway_us;
    r.peer = b->gateway_us;
    r.peer_name = std::move(base_name);
    r.target = std::move(target);
    judge(r, o->gateway_us / b->gateway_us, limit, true, "x");
    r.note += fmt::format("; median of {} windows of {} calls, alternating between the gateways", ours.list.size(),
                          o->calls);
    return r;
}

std::vector<Row> run(const Context& ctx) {
    const int windows = ctx.quick ? 3 : 9;
    const int window_calls = ctx.quick ? 500 : 1000;
    const auto config =
        std::filesystem::temp_directory_path() / fmt::format("switchboard-bench-tracing-{}.json", ::getpid());
    std::ofstream(config) << R"({"mcpServers": {"demo": {"command": ")" << ctx.demo() << R"("}}})";
    const auto trace_file =
        std::filesystem::temp_directory_path() / fmt::format("switchboard-bench-traces-{}.jsonl", ::getpid());

    cpu_set_t was, one;
    ::sched_getaffinity(0, sizeof was, &was);
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    ::sched_setaffinity(0, sizeof one, &one);
    // The three gateways run side by side; windows of calls alternate between them, so that each sees the same
    // machine (its caches, its other load) as the others.
    Windows disabled[2], off[2], on[2];  // [legacy, stateless]
    try {
        std::unique_ptr<ServerProcess> collector;
        collector = std::make_unique<ServerProcess>(
            std::vector<std::string>{"python3",
                                     std::string(SWITCHBOARD_SOURCE_DIR) + "/tests/peers/scripts/otlp_receiver.py",
                                     "--port", "0"},
            std::vector<std::pair<std::string, std::string>>{});
        cpu_set_t other;
        CPU_ZERO(&other);
        CPU_SET(1, &other);
        ::sched_setaffinity(collector->pid(), sizeof other, &other);
        const auto collector_url = trimmed(collector->wait_listening());
        auto start = [&](std::vector<std::pair<std::string, std::string>> env, std::vector<std::string> extra) {
            env.emplace_back("SWITCHBOARD_TRACE_FILE", trace_file.string());
            std::vector<std::string> argv{ctx.bin_dir + "/switchboard", "--config", config.string()};
            argv.insert(argv.end(), extra.begin(), extra.end());
            for (const char* a : {"serve", "--port", "0", "--quiet"}) argv.push_back(a);
            return std::make_unique<ServerProcess>(argv, env);
        };
        auto gw_disabled = start({{"OTEL_SDK_DISABLED", "true"}}, {});
        auto gw_off = start({}, {});
        auto gw_on = start({}, {"--otlp-endpoint", collector_url});
        struct Gw {
            ServerProcess* p;
            std::string url;
            Windows* w;
        };
        std::vector<Gw> gws{{gw_disabled.get(), trimmed(gw_disabled->wait_listening()), disabled},
                            {gw_off.get(), trimmed(gw_off->wait_listening()), off},
                            {gw_on.get(), trimmed(gw_on->wait_listening()), on}};
        for (int w = 0; w < windows; ++w)
            for (auto& g : gws)
                for (int era = 0; era < 2; ++era) {
                    try {
                        g.w[era].list.push_back(measure_cpu(g.url, g.p->pid(),
                                                            era == 0 ? mcp::Era::legacy : mcp::Era::modern,
                                                            window_calls));
                    } catch (const std::exception& e) {
                        g.w[era].error = e.what();
                    }
                }
    } catch (const std::exception& e) {
        for (auto* w : {disabled, off, on}) w[0].error = w[1].error = e.what();
    }
    std::error_code ec;
    std::filesystem::remove(config, ec);
    std::filesystem::remove(trace_file, ec);

    std::vector<Row> rows;
    const char* eras[2] = {"legacy session", "stateless 2026-07-28"};
    for (int e = 0; e < 2; ++e) {
        rows.push_back(ratio_row(fmt::format("gateway CPU per forwarded call, {}, export off (vs tracing disabled)",
                                             eras[e]),
                                 off[e], disabled[e], "OTEL_SDK_DISABLED=true", 1.03,
                                 "no measurable change (<= 1.03x)"));
        rows.push_back(ratio_row(fmt::format("gateway CPU per forwarded call, {}, export on (vs export off)", eras[e]),
                                 on[e], off[e], "export off", 1.05, "<= 1.05x"));
    }
    try {
        const auto [without, with] = stdio_round_trips(ctx.demo(), ctx.quick ? 2000 : 10000);
        Row r;
        r.metric = "stdio tools/call round trip p50, export off (vs no tracer)";
        r.unit = "µs";
        r.ours = with;
        r.peer = without;
        r.peer_name = "no tracer installed";
        r.target = "no measurable change (<= 1.03x)";
        judge(r, with / without, 1.03, true, "x");
        r.note += "; blocks of 100 calls alternating in one process and one session, both processes on CPU 0";
        rows.push_back(std::move(r));
    } catch (const std::exception& e) {
        rows.push_back(failed("stdio tools/call round trip, export off", e.what()));
    }
    ::sched_setaffinity(0, sizeof was, &was);
    return rows;
}

}  // namespace

SWITCHBOARD_BENCH_SECTION(Section{"tracing", "7b. tracing against none (gateway CPU, stdio round trip)", 72, run});

}  // namespace switchboard::bench
