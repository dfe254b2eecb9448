// Section "stdio": a tools/call of the demo server's echo tool through the library (ClientSession over a child's
// stdio), next to the TS SDK client against the same server, next to a plain pipe ping-pong of the same bytes.
#include "harness.hpp"
#include "sync.hpp"

#include <switchboard/mcp/client_session.hpp>
#include <switchboard/transport/stdio_process.hpp>

#include <boost/asio/io_context.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

namespace switchboard::bench {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using clock = std::chrono::steady_clock;

namespace {

constexpr int inflight = 64;

// Records the bytes of one request and its response while `tap` is set (the floor replays them).
class TapChannel : public jsonrpc::Channel {
public:
    explicit TapChannel(std::shared_ptr<jsonrpc::Channel> inner) : inner_(std::move(inner)) {}
    // Untapped, the inner channel's own awaitable is returned: no coroutine frame of the bench's in the measured path.
    awaitable<jsonrpc::Received> read() override { return tap ? tapped_read() : inner_->read(); }
    awaitable<boost::system::error_code> write(std::string message) override {
        if (tap) last_written = message;
        return inner_->write(std::move(message));
    }
    awaitable<boost::system::error_code> write_batch(std::vector<std::string> messages) override {
        return inner_->write_batch(std::move(messages));
    }
    bool try_write(std::string& message) override {
        if (tap) last_written = message;
        return inner_->try_write(message);
    }
    awaitable<void> close() override { return inner_->close(); }
    std::size_t max_message_size() const override { return inner_->max_message_size(); }
    bool resumes_callers_inline() const override { return inner_->resumes_callers_inline(); }

    bool tap = false;
    std::string last_written, last_read;

private:
    awaitable<jsonrpc::Received> tapped_read() {
        auto r = co_await inner_->read();
        if (r.kind == jsonrpc::Received::Kind::message) last_read = r.text;
        co_return r;
    }

    std::shared_ptr<jsonrpc::Channel> inner_;
};

struct Measured {
    Latencies seq;
    double seq_seconds = 0;
    double pipelined_per_s = 0;
};

awaitable<void> seq_calls(mcp::ClientSession& s, int n, Measured& m) {
    m.seq.us.reserve(static_cast<std::size_t>(n));
    const auto t0 = clock::now();
    for (int i = 0; i < n; ++i) {
        const auto s0 = clock::now();
        json::object args;
        args["message"] = "hello";
        auto r = co_await s.call_tool("echo", std::move(args));
        if (!r) throw std::runtime_error("tools/call failed: " + r.error().message);
        m.seq.us.push_back(std::chrono::duration<double, std::micro>(clock::now() - s0).count());
    }
    m.seq_seconds = seconds_since(t0);
}

awaitable<void> pipelined_worker(std::shared_ptr<mcp::ClientSession> s, int* issued, int total) {
    while (*issued < total) {
        ++*issued;
        json::object args;
        args["message"] = "hello";
        auto r = co_await s->call_tool("echo", std::move(args));
        if (!r) throw std::runtime_error("tools/call failed: " + r.error().message);
    }
}

struct OursResult {
    Measured m;
    std::string request, response;  // one exchange's bytes, for the floor
    int server_pid = -1;
};

// `era`: the protocol to speak without probing (the TS SDK v1 client speaks only the legacy one); default: probe, which
// the demo server answers as a 2026-07-28 server.
OursResult measure_ours(const Context& ctx, int n, int pipelined, std::optional<mcp::Era> era = std::nullopt) {
    asio::io_context io;
    transport::StdioProcessOptions po;
    po.name = "demo";
    po.command = ctx.demo();
    po.args = {"--page-size", "0"};
    auto ch = transport::StdioProcessChannel::spawn(io.get_executor(), po);
    if (!ch) throw std::runtime_error("spawn: " + ch.error().message);
    const int server_pid = (*ch)->pid();
    auto tap = std::make_shared<TapChannel>(*ch);
    mcp::ClientOptions co;
    co.server_name = "demo";
    // The demo server answers the probe: never fall back to the legacy handshake because a server started slowly
    // (under valgrind), so that every run does the same work before the calls.
    co.probe_timeout = std::chrono::seconds(30);
    co.known_era = era;
    auto session = run_sync(io, mcp::ClientSession::connect(io.get_executor(), tap, co));
    if (!session) throw std::runtime_error("connect: " + session.error().message);
    auto& s = **session;

    OursResult out;
    out.server_pid = server_pid;
    Measured warm;
    run_sync(io, seq_calls(s, 500, warm));
    tap->tap = true;
    run_sync(io, seq_calls(s, 1, warm));
    tap->tap = false;
    out.request = tap->last_written;
    out.response = tap->last_read;
    run_sync(io, seq_calls(s, n, out.m));

    int issued = 0;
    const auto t0 = clock::now();
    std::vector<asio::awaitable<void>> workers;
    for (int i = 0; i < inflight; ++i) workers.push_back(pipelined_worker(*session, &issued, pipelined));
    run_all(io, std::move(workers));
    out.m.pipelined_per_s = pipelined / seconds_since(t0);
    run_sync(io, s.close());
    return out;
}

bool write_all(int fd, const char* p, std::size_t n) {
    while (n > 0) {
        auto w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

// The floor: a child that answers each line with the recorded response, over two pipes, blocking I/O both sides.
Measured measure_floor(const std::string& request, const std::string& response, int n, int pipelined) {
    int to_child[2], from_child[2];
    if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) throw std::runtime_error("pipe");
    const std::string req = request + "\n", resp = response + "\n";
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(to_child[1]);
        ::close(from_child[0]);
        std::vector<char> buf(1 << 16);
        for (;;) {
            auto r = ::read(to_child[0], buf.data(), buf.size());
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) ::_exit(0);
            for (ssize_t i = 0; i < r; ++i)
                if (buf[static_cast<std::size_t>(i)] == '\n' && !write_all(from_child[1], resp.data(), resp.size()))
                    ::_exit(1);
        }
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    std::vector<char> buf(1 << 16);
    std::size_t pending_lines = 0;
    auto read_responses = [&](std::size_t want) {  // reads until `want` newlines arrived
        while (pending_lines < want) {
            auto r = ::read(from_child[0], buf.data(), buf.size());
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) throw std::runtime_error("floor child ended");
            for (ssize_t i = 0; i < r; ++i) pending_lines += buf[static_cast<std::size_t>(i)] == '\n';
        }
        pending_lines -= want;
    };
    Measured m;
    for (int i = 0; i < 500; ++i) {
        write_all(to_child[1], req.data(), req.size());
        read_responses(1);
    }
    m.seq.us.reserve(static_cast<std::size_t>(n));
    const auto t0 = clock::now();
    for (int i = 0; i < n; ++i) {
        const auto s0 = clock::now();
        write_all(to_child[1], req.data(), req.size());
        read_responses(1);
        m.seq.us.push_back(std::chrono::duration<double, std::micro>(clock::now() - s0).count());
    }
    m.seq_seconds = seconds_since(t0);
    // Pipelined: keep `inflight` requests outstanding.
    const auto t1 = clock::now();
    int sent = 0, done = 0;
    for (; sent < inflight; ++sent) write_all(to_child[1], req.data(), req.size());
    while (done < pipelined) {
        read_responses(1);
        ++done;
        if (sent < pipelined) {
            write_all(to_child[1], req.data(), req.size());
            ++sent;
        }
    }
    m.pipelined_per_s = pipelined / seconds_since(t1);
    ::close(to_child[1]);
    ::close(from_child[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return m;
}

// ---- Cost per round trip: system calls (strace) and instructions (callgrind), each process on its own ----------
//
// `switchboard-bench --child stdio_seq N ours|floor` makes N sequential calls (ours: ClientSession -> demo server;
// floor: the pipe ping-pong). Start-up, warm-up and shutdown are the same for every N, so the difference between a
// run of n2 and one of n1 calls, divided by n2 - n1, is what one round trip costs. By hand:
//   strace -f -ff -qq -o /tmp/sb/t build-rel/switchboard-bench --bin-dir build-rel --child stdio_seq 2000 ours
//   valgrind --tool=callgrind --trace-children=yes --callgrind-out-file=/tmp/sb/cg.%p
//            build-rel/switchboard-bench --bin-dir build-rel --child stdio_seq 2000 ours
// (then the same with another N; t.<pid> has one line per system call, cg.<pid> a "totals:" line).

// The floor's bytes for the counting runs (their size does not change the number of calls).
const std::string sample_request =
    R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}})";
const std::string sample_response =
    R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}],"isError":false}})";

json::object stdio_seq_child(const std::vector<std::string>& args) {
    Context ctx;
    ctx.bin_dir = args.at(0);
    const int n = std::stoi(args.at(1));
    json::object out;
    out["host_pid"] = ::getpid();
    if (args.at(2) == "floor") {
        measure_floor(sample_request, sample_response, n, 0);
    } else {  // "ours", or "legacy": our client in the legacy era (bench/README.md: counting by hand)
        const auto era = args.at(2) == "legacy" ? std::optional<mcp::Era>(mcp::Era::legacy) : std::nullopt;
        out["server_pid"] = measure_ours(ctx, n, 0, era).server_pid;
    }
    return out;
}

struct PerSide {
    double host = 0, server = 0;  // the calling process, the answering process(es)
};

// Totals of one run: `count(file)` for each per-process file in `dir`, summed by side.
std::optional<PerSide> side_totals(const std::string& dir, int host_pid,
                                   const std::function<std::optional<double>(const std::string&)>& count) {
    PerSide t;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        const auto name = e.path().filename().string();
        const auto dot = name.rfind('.');
        if (dot == std::string::npos) continue;
        const int pid = std::atoi(name.c_str() + dot + 1);
        auto c = count(e.path().string());
        if (!c) return std::nullopt;
        (pid == host_pid ? t.host : t.server) += *c;
    }
    return t;
}

// Per round trip: (run of n2 - run of n1) / (n2 - n1), each run under `tool` writing one file per process to a
// fresh directory.
std::optional<PerSide> per_round_trip(const Context& ctx, const std::string& mode, int n1, int n2,
                                      const std::function<std::vector<std::string>(const std::string& dir)>& tool,
                                      const std::function<std::optional<double>(const std::string&)>& count) {
    std::optional<PerSide> at[2];
    const int ns[2] = {n1, n2};
    for (int i = 0; i < 2; ++i) {
        const auto dir =
            (std::filesystem::temp_directory_path() / fmt::format("switchboard-bench-{}-{}-{}", ::getpid(), mode, i))
                .string();
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        auto argv = tool(dir);
        for (std::string a : {ctx.self, std::string("--bin-dir"), ctx.bin_dir, std::string("--child"),
                              std::string("stdio_seq"), std::to_string(ns[i]), mode})
            argv.push_back(std::move(a));
        auto out = run_json(argv);
        const auto host_pid = out ? number(*out, "host_pid") : std::nullopt;
        if (host_pid) at[i] = side_totals(dir, static_cast<int>(*host_pid), count);
        std::filesystem::remove_all(dir);
        if (!at[i]) return std::nullopt;
    }
    const double d = n2 - n1;
    return PerSide{(at[1]->host - at[0]->host) / d, (at[1]->server - at[0]->server) / d};
}

std::optional<PerSide> syscalls_per_round_trip(const Context& ctx, const std::string& mode, int n1, int n2) {
    if (ctx.strace.empty()) return std::nullopt;
    return per_round_trip(
        ctx, mode, n1, n2,
        [&](const std::string& dir) {
            return std::vector<std::string>{ctx.strace, "-f", "-ff", "-qq", "-o", dir + "/t"};
        },
        [](const std::string& file) -> std::optional<double> {
            std::ifstream in(file);
            std::string line;
            double n = 0;
            while (std::getline(in, line))  // one line per call; signals ("--- SIG") and exits ("+++") are not calls
                if (!line.empty() && line.rfind("---", 0) != 0 && line.rfind("+++", 0) != 0) ++n;
            return n;
        });
}

std::optional<PerSide> instructions_per_round_trip(const Context& ctx, int n1, int n2) {
    if (ctx.valgrind.empty()) return std::nullopt;
    return per_round_trip(
        ctx, "ours", n1, n2,
        [&](const std::string& dir) {
            return std::vector<std::string>{ctx.valgrind, "--tool=callgrind", "--trace-children=yes",
                                            "--callgrind-out-file=" + dir + "/cg.%p"};
        },
        [](const std::string& file) { return callgrind_total(file); });
}

// One contender's numbers; over rounds, the best of each (the machine may be busy with other work in some of them).
struct Summary {
    double p50 = 0, p99 = 0, per_s_1 = 0, per_s_pipe = 0;
    bool valid = false;
    void keep_latency(double r50, double r99, double r1) {  // each the best of its own (placements, rounds)
        p50 = valid ? std::min(p50, r50) : r50;
        p99 = valid ? std::min(p99, r99) : r99;
        per_s_1 = std::max(per_s_1, r1);
        valid = true;
    }
    void keep_pipelined(double rpipe) { per_s_pipe = std::max(per_s_pipe, rpipe); }
};

// Pins this thread, and the processes it starts while pinned (they inherit it), to one CPU. One call at a time is
// measured so, for every contender alike: on some virtual machines a process waking another on a different CPU costs
// ~20 µs (the hypervisor's inter-processor interrupt) where the whole ping-pong on one CPU takes 4 µs, and which CPUs
// the scheduler picks changed from run to run (p50 swung between 16 and 80 µs). Calls in flight use every CPU.
class OneCpu {
public:
    OneCpu() {
        if (::sched_getaffinity(0, sizeof(old_), &old_) != 0) return;
        for (int c = 0; c < CPU_SETSIZE; ++c) {
            if (!CPU_ISSET(c, &old_)) continue;
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            pinned_ = ::sched_setaffinity(0, sizeof(one), &one) == 0;
            break;
        }
    }
    OneCpu(const OneCpu&) = delete;
    OneCpu& operator=(const OneCpu&) = delete;
    ~OneCpu() {
        if (pinned_) ::sched_setaffinity(0, sizeof(old_), &old_);
    }

private:
    cpu_set_t old_{};
    bool pinned_ = false;
};

std::vector<Row> run(const Context& ctx) {
    const int n = ctx.quick ? 3000 : 20000;
    const int pipelined = ctx.quick ? 20000 : 100000;
    const int rounds = ctx.quick ? 2 : 3;
    std::vector<Row> rows;

    // Each pass measures one thing; the other's counts are kept small and their numbers unused.
    const int few_calls = 200, few_pipelined = 1000;

    auto run_ts = [&](int calls, int piped) {
        return run_json({ctx.node, ctx.peers_dir + "/stdio_roundtrip.mjs", "--command", ctx.demo(), "--args",
                         "--page-size 0", "--calls", std::to_string(calls), "--pipelined", std::to_string(piped),
                         "--inflight", std::to_string(inflight)});
    };
    Summary us, fl, tss, legacy;
    for (int round = 0; round < rounds; ++round) {  // interleaved, so that a busy moment hits all three alike
        {
            const OneCpu pin;  // one call at a time: every process on one CPU (see OneCpu)
            auto ours = measure_ours(ctx, n, few_pipelined);
            us.keep_latency(ours.m.seq.percentile(50), ours.m.seq.percentile(99), n / ours.m.seq_seconds);
            // The same calls in the legacy era, the protocol the TS SDK v1 client speaks: 2026-07-28 puts the
            // client's version, info and capabilities in every request's _meta (315 bytes where legacy sends 105).
            auto old = measure_ours(ctx, n, few_pipelined, mcp::Era::legacy);
            legacy.keep_latency(old.m.seq.percentile(50), old.m.seq.percentile(99), n / old.m.seq_seconds);
            auto floor = measure_floor(ours.request, ours.response, n, few_pipelined);
            fl.keep_latency(floor.seq.percentile(50), floor.seq.percentile(99), n / floor.seq_seconds);
            auto ts = run_ts(ctx.quick ? 2000 : 10000, few_pipelined);
            auto t50 = ts ? number(*ts, "p50_us") : std::nullopt, t99 = ts ? number(*ts, "p99_us") : std::nullopt;
            auto t1 = ts ? number(*ts, "calls_per_s_1") : std::nullopt;
            if (t50 && t99 && t1) tss.keep_latency(*t50, *t99, *t1);
        }
        auto ours = measure_ours(ctx, few_calls, pipelined);  // calls in flight: every CPU
        us.keep_pipelined(ours.m.pipelined_per_s);
        fl.keep_pipelined(measure_floor(ours.request, ours.response, few_calls, pipelined).pipelined_per_s);
        // The TS SDK's one-at-a-time numbers are also taken here, unpinned, and the better kept: on one CPU its
        // runtime's own threads (the garbage collector) stretch its p99, which is not what is compared.
        auto ts = run_ts(ctx.quick ? 2000 : 10000, ctx.quick ? 10000 : 40000);
        auto t50 = ts ? number(*ts, "p50_us") : std::nullopt, t99 = ts ? number(*ts, "p99_us") : std::nullopt;
        auto t1 = ts ? number(*ts, "calls_per_s_1") : std::nullopt;
        if (t50 && t99 && t1) tss.keep_latency(*t50, *t99, *t1);
        if (auto tpipe = ts ? number(*ts, "calls_per_s_pipelined") : std::nullopt) tss.keep_pipelined(*tpipe);
    }
    const std::optional<double> ts_p50 = tss.valid ? std::optional<double>(tss.p50) : std::nullopt;
    const std::optional<double> ts_p99 = tss.valid ? std::optional<double>(tss.p99) : std::nullopt;
    const std::optional<double> ts_1 = tss.valid ? std::optional<double>(tss.per_s_1) : std::nullopt;
    const std::optional<double> ts_pipe = tss.valid ? std::optional<double>(tss.per_s_pipe) : std::nullopt;
    const bool ts_ok = tss.valid;

    auto row = [](std::string metric, std::string unit, double v, bool higher) {
        Row r;
        r.metric = std::move(metric);
        r.unit = std::move(unit);
        r.ours = v;
        r.higher_is_better = higher;
        return r;
    };
    const double p50 = us.p50, p99 = us.p99;
    auto vs_ts = [&](std::string metric, double ours, std::string what) {
        Row r = row(std::move(metric), "µs", ours, false);
        r.peer = ts_p50;
        r.peer_name = "TS SDK";
        r.target = ">= 2x TS SDK";
        if (r.ratio()) {
            r.status = *r.ratio() >= 2.0 ? Status::met : Status::missed;
            r.note = fmt::format("{:.2f}x TS SDK; {}", *r.ratio(), what);
        } else if (!ts_ok) {
            r.note = "TS SDK peer failed";
        }
        rows.push_back(std::move(r));
    };
    vs_ts("tools/call p50 (vs TS SDK)", p50, "ours in 2026-07-28, the TS SDK v1 in 2025-11-25");
    vs_ts("tools/call p50, both in the legacy era (vs TS SDK)", legacy.p50, "the same protocol on both sides");
    {
        // The floor is measured in the same run, so the target moves with the machine: at most 8 µs of our own.
        Row r = row("tools/call p50 (vs pipe floor)", "µs", p50, false);
        r.peer = fl.p50;
        r.peer_name = "pipe floor";
        r.target = "<= floor + 8 µs";
        r.note = fmt::format("best of {} rounds each, every process on one CPU", rounds);
        judge(r, p50 - fl.p50, 8.0, true, fmt::format("{:.1f} µs above the floor: 8 µs", p50 - fl.p50));
        rows.push_back(std::move(r));
    }
    {
        Row r = row("tools/call p99 (vs TS SDK)", "µs", p99, false);
        r.peer = ts_p99;
        r.peer_name = "TS SDK";
        rows.push_back(std::move(r));
    }
    {
        Row r = row("tools/call p99 (vs pipe floor)", "µs", p99, false);
        r.peer = fl.p99;
        r.peer_name = "pipe floor";
        rows.push_back(std::move(r));
    }
    {
        Row r = row("calls/s, 1 in flight (vs TS SDK)", "calls/s", us.per_s_1, true);
        r.peer = ts_1;
        r.peer_name = "TS SDK";
        rows.push_back(std::move(r));
    }
    {
        Row r = row("calls/s, 1 in flight (vs pipe floor)", "calls/s", us.per_s_1, true);
        r.peer = fl.per_s_1;
        r.peer_name = "pipe floor";
        rows.push_back(std::move(r));
    }
    {
        Row r = row("calls/s, 64 in flight (vs TS SDK)", "calls/s", us.per_s_pipe, true);
        r.peer = ts_pipe;
        r.peer_name = "TS SDK";
        r.target = ">= 250k calls/s";
        judge(r, us.per_s_pipe, 250000, false, "250k/s");
        rows.push_back(std::move(r));
    }
    {
        Row r = row("calls/s, 64 in flight (vs pipe floor)", "calls/s", us.per_s_pipe, true);
        r.peer = fl.per_s_pipe;
        r.peer_name = "pipe floor";
        rows.push_back(std::move(r));
    }
    // Cost per round trip, each process on its own (skipped without strace / valgrind).
    const int c1 = ctx.quick ? 300 : 1000, c2 = ctx.quick ? 1300 : 3000;
    const auto sys = syscalls_per_round_trip(ctx, "ours", c1, c2);
    const auto sys_floor = syscalls_per_round_trip(ctx, "floor", c1, c2);
    auto sys_row = [&](std::string side, double PerSide::*field) {
        Row r = row("system calls per round trip, " + side + " (vs pipe floor)", "calls", 0, false);
        r.ours.reset();
        if (sys) r.ours = (*sys).*field;
        if (sys_floor) r.peer = (*sys_floor).*field;
        r.peer_name = "pipe floor";
        r.note = ctx.strace.empty() ? "strace not found"
                 : !sys             ? "strace run failed"
                        : "strace -f, runs of " + std::to_string(c2) + " - " + std::to_string(c1) + " calls";
        return r;
    };
    rows.push_back(sys_row("client process", &PerSide::host));
    rows.push_back(sys_row("server process", &PerSide::server));
    {
        Row r = row("system calls per round trip, both processes (vs pipe floor)", "calls", 0, false);
        r.ours.reset();
        if (sys) r.ours = sys->host + sys->server;
        if (sys_floor) r.peer = sys_floor->host + sys_floor->server;
        r.peer_name = "pipe floor";
        r.target = "<= 5";
        if (r.ours) judge(r, *r.ours, 5.0, true, "5 calls");
        rows.push_back(std::move(r));
    }
    const int i1 = ctx.quick ? 200 : 500, i2 = ctx.quick ? 700 : 2000;
    const auto ir = instructions_per_round_trip(ctx, i1, i2);
    for (auto [side, field] :
         {std::pair{"client process", &PerSide::host}, std::pair{"server process", &PerSide::server}}) {
        Row r = row(std::string("instructions per round trip, ") + side + " (callgrind)", "Ir", 0, false);
        r.ours.reset();
        if (ir) r.ours = (*ir).*field;
        r.note = ctx.valgrind.empty() ? "valgrind not found" : !ir ? "callgrind run failed" : "user space only";
        rows.push_back(std::move(r));
    }
    return rows;
}

// Child for profiling (`valgrind --tool=callgrind --trace-children=yes switchboard-bench --child stdio_calls N`):
// N sequential echo calls, client and demo server each profiled in its own file.
json::object stdio_calls_child(const std::vector<std::string>& args) {
    Context ctx;
    ctx.bin_dir = args.at(0);
    const int n = std::stoi(args.at(1));
    auto out = measure_ours(ctx, n, n);
    return json::object{{"p50_us", out.m.seq.percentile(50)}, {"pipelined_per_s", out.m.pipelined_per_s}};
}

}  // namespace

static ChildRegistrar stdio_calls_registrar("stdio_calls", stdio_calls_child);
static ChildRegistrar stdio_seq_registrar("stdio_seq", stdio_seq_child);
SWITCHBOARD_BENCH_SECTION(Section{"stdio", "1. stdio tools/call round trip (demo server, echo)", 10, run});

}  // namespace switchboard::bench
