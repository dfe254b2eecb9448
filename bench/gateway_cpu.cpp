#include "gateway_cpu.hpp"

#include "harness.hpp"
#include "server_process.hpp"
#include "sync.hpp"

#include <switchboard/transport/http_client.hpp>
#include <switchboard/transport/stdio_process.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace switchboard::bench {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using clock = std::chrono::steady_clock;

std::string trimmed(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    return s;
}

// `era`: the protocol to speak without probing; default: probe (2026-07-28 with ours, legacy with the TS SDK v1).
awaitable<std::shared_ptr<mcp::ClientSession>> open_session(std::string url, std::optional<mcp::Era> era) {
    auto ex = co_await asio::this_coro::executor;
    transport::HttpClientOptions ho;
    ho.server_name = "bench";
    auto ch = transport::make_streamable_http_channel(ex, url, ho);
    mcp::ClientOptions co;
    co.server_name = "bench";
    co.known_era = era;
    auto s = co_await mcp::ClientSession::connect(ex, ch, co);
    if (!s) throw std::runtime_error("connect " + url + ": " + s.error().message);
    co_return *s;
}
awaitable<std::shared_ptr<mcp::ClientSession>> open_session(std::string url) {
    return open_session(std::move(url), std::nullopt);
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

// ---- CPU accounting of other processes ----------------------------------------------------------------------------

// ns on CPU per thread of a process: the first field of /proc/PID/task/TID/schedstat (sum_exec_runtime).
std::map<int, std::int64_t> thread_cpu_ns(int pid) {
    std::map<int, std::int64_t> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(fmt::format("/proc/{}/task", pid), ec)) {
        std::ifstream in(e.path() / "schedstat");
        std::int64_t ns = 0;
        if (in >> ns) out[std::stoi(e.path().filename().string())] = ns;
    }
    return out;
}

// Direct children: /proc/PID/task/*/children when the kernel has it (CONFIG_PROC_CHILDREN), else a scan of every
// /proc/N/stat for its parent (field 4, after the command name in parentheses).
std::vector<int> children_of(int pid) {
    std::set<int> out;
    std::error_code ec;
    bool have_children_file = false;
    for (const auto& e : std::filesystem::directory_iterator(fmt::format("/proc/{}/task", pid), ec)) {
        std::ifstream in(e.path() / "children");
        if (!in) continue;
        have_children_file = true;
        for (int c = 0; in >> c;) out.insert(c);
    }
    if (!have_children_file) {
        for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
            const auto name = e.path().filename().string();
            if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
            std::ifstream in(e.path() / "stat");
            std::string stat((std::istreambuf_iterator<char>(in)), {});
            const auto close = stat.rfind(')');
            if (close == std::string::npos) continue;
            std::istringstream rest(stat.substr(close + 1));
            std::string state;
            int ppid = 0;
            if (rest >> state >> ppid && ppid == pid) out.insert(std::stoi(name));
        }
    }
    return {out.begin(), out.end()};
}

std::vector<int> descendants_of(int pid) {
    std::vector<int> out;
    for (int c : children_of(pid)) {
        out.push_back(c);
        for (int d : descendants_of(c)) out.push_back(d);
    }
    return out;
}

// `calls` sequential keep-alive tools/call echo from one session, after 200 to warm up; the client is this process,
// so its CPU is not in either number.
CpuPerCall measure_cpu(const std::string& url, int gateway_pid, std::optional<mcp::Era> era, int calls) {
    asio::io_context io;
    auto s = run_sync(io, open_session(url, era));
    run_sync(io, echo_calls(s, 200, nullptr));
    const auto up = descendants_of(gateway_pid);
    if (up.empty()) throw std::runtime_error("the gateway has no upstream child process");
    const auto g0 = CpuSnapshot::of({gateway_pid});
    const auto u0 = CpuSnapshot::of(up);
    run_sync(io, echo_calls(s, calls, nullptr));
    const auto g1 = CpuSnapshot::of({gateway_pid});
    const auto u1 = CpuSnapshot::of(up);
    run_sync(io, s->close());
    CpuPerCall out;
    out.calls = calls;
    out.gateway_us = static_cast<double>(g1.since(g0, &out.lost_threads)) / 1e3 / calls;
    out.upstream_us = static_cast<double>(u1.since(u0, &out.lost_threads)) / 1e3 / calls;
    return out;
}

// measure_cpu in each era, each kept in its own BestCpu (an era that fails leaves the other measured).
void cpu_both_eras(const std::string& url, int pid, int calls, BestCpu& legacy, BestCpu& modern) {
    try {
        legacy.keep(measure_cpu(url, pid, mcp::Era::legacy, calls));
    } catch (const std::exception& e) {
        legacy.error = e.what();
    }
    try {
        modern.keep(measure_cpu(url, pid, mcp::Era::modern, calls));
    } catch (const std::exception& e) {
        modern.error = e.what();
    }
}

// ---- Counts per call: instructions (callgrind) and system calls (strace) of one process ---------------------------

namespace {

// In each era: a session, 100 calls to warm up, `begin()`, `calls` calls, then `end()`'s count divided by `calls`.
void count_both_eras(const std::string& url, int calls, const std::function<void(mcp::Era)>& begin,
                     const std::function<std::optional<double>(mcp::Era)>& end, CountsPerCall& out) {
    for (const auto era : {mcp::Era::legacy, mcp::Era::modern}) {
        auto& slot = era == mcp::Era::legacy ? out.legacy : out.modern;
        try {
            asio::io_context io;
            auto s = run_sync(io, open_session(url, era));
            run_sync(io, echo_calls(s, 100, nullptr));
            begin(era);
            run_sync(io, echo_calls(s, calls, nullptr));
            const auto total = end(era);
            run_sync(io, s->close());
            if (!total) throw std::runtime_error("no count was read");
            slot = *total / calls;
        } catch (const std::exception& e) {
            out.error += fmt::format("{}{}: {}", out.error.empty() ? "" : "; ",
                                     era == mcp::Era::legacy ? "legacy" : "stateless", e.what());
        }
    }
}

std::string scratch_dir(std::string_view what) {
    static int next = 0;
    const auto dir =
        std::filesystem::temp_directory_path() / fmt::format("switchboard-bench-{}-{}-{}", what, ::getpid(), next++);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir.string();
}

// Whether every thread of `pid` is traced (strace -f -p attaches them one by one).
bool all_threads_traced(int pid) {
    std::error_code ec;
    bool any = false;
    for (const auto& t : std::filesystem::directory_iterator(fmt::format("/proc/{}/task", pid), ec)) {
        std::ifstream in(t.path() / "status");
        std::string line;
        bool traced = false;
        while (std::getline(in, line))
            if (line.rfind("TracerPid:", 0) == 0) traced = std::atoi(line.c_str() + 10) != 0;
        if (!traced) return false;
        any = true;
    }
    return any;
}

// The calls column of `strace -c`'s "total" line ("100.00 0.000812 1 1234 [errors] total").
std::optional<double> strace_total(const std::string& file) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::vector<std::string> w{std::istream_iterator<std::string>(words), {}};
        if (w.size() >= 5 && w.back() == "total") return std::strtod(w[3].c_str(), nullptr);
    }
    return std::nullopt;
}

}  // namespace

CountsPerCall instructions_per_call(const Context& ctx, const std::vector<std::string>& argv, int calls) {
    CountsPerCall out;
    if (ctx.valgrind.empty()) {
        out.error = "valgrind not found";
        return out;
    }
    const auto control = (std::filesystem::path(ctx.valgrind).parent_path() / "callgrind_control").string();
    const auto dir = scratch_dir("cg");
    try {
        std::vector<std::string> full{ctx.valgrind, "--tool=callgrind", "--callgrind-out-file=" + dir + "/cg.out"};
        full.insert(full.end(), argv.begin(), argv.end());
        ServerProcess p(full, {});
        const auto pid = std::to_string(p.pid());
        const auto url = trimmed(p.wait_listening());
        count_both_eras(
            url, calls,
            [&](mcp::Era) {
                if (!run_capture({control, "-z", pid})) throw std::runtime_error("callgrind_control -z failed");
            },
            [&](mcp::Era) -> std::optional<double> {
                // Each dump is a new file (cg.out.1, cg.out.2, ...) holding the counts since the zeroing.
                std::set<std::string> before;
                for (const auto& e : std::filesystem::directory_iterator(dir)) before.insert(e.path().string());
                if (!run_capture({control, "-d", pid})) throw std::runtime_error("callgrind_control -d failed");
                for (const auto& e : std::filesystem::directory_iterator(dir))
                    if (!before.contains(e.path().string())) return callgrind_total(e.path().string());
                return std::nullopt;
            },
            out);
    } catch (const std::exception& e) {
        out.error = e.what();
    }
    std::filesystem::remove_all(dir);
    return out;
}

CountsPerCall syscalls_per_call(const Context& ctx, const std::vector<std::string>& argv, int calls) {
    CountsPerCall out;
    if (ctx.strace.empty()) {
        out.error = "strace not found";
        return out;
    }
    const auto dir = scratch_dir("strace");
    try {
        ServerProcess p(argv, {});
        const auto url = trimmed(p.wait_listening());
        std::unique_ptr<ServerProcess> tracer;
        std::string file;
        count_both_eras(
            url, calls,
            [&](mcp::Era era) {
                file = fmt::format("{}/{}.txt", dir, era == mcp::Era::legacy ? "legacy" : "modern");
                tracer = std::make_unique<ServerProcess>(
                    std::vector<std::string>{ctx.strace, "-f", "-c", "-qq", "-o", file, "-p", std::to_string(p.pid())},
                    std::vector<std::pair<std::string, std::string>>{});
                const auto deadline = clock::now() + std::chrono::seconds(10);
                while (!all_threads_traced(p.pid())) {
                    if (clock::now() > deadline) throw std::runtime_error("strace did not attach within 10 s");
                    std::this_thread::sleep_for(std::chrono::milliseconds(10));
                }
            },
            [&](mcp::Era) {
                tracer.reset();  // SIGTERM: strace detaches and writes its summary
                return strace_total(file);
            },
            out);
    } catch (const std::exception& e) {
        out.error = e.what();
    }
    std::filesystem::remove_all(dir);
    return out;
}

}  // namespace switchboard::bench
