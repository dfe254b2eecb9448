// What the gateway sections measure with (bench/section_gateway.cpp, bench/section_tracing.cpp): sessions to a
// Streamable HTTP or stdio server, sequential echo calls, and the CPU a process and its descendants spend per call
// from the kernel's own accounting (/proc/PID/task/*/schedstat).
#pragma once

#include "harness.hpp"

#include <switchboard/mcp/client_session.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::bench {

/// `s` without surrounding whitespace.
std::string trimmed(std::string s);
/// A session to the Streamable HTTP server at `url`, in `era` (nullopt: whatever the server speaks).
boost::asio::awaitable<std::shared_ptr<mcp::ClientSession>> open_session(std::string url, std::optional<mcp::Era> era);
boost::asio::awaitable<std::shared_ptr<mcp::ClientSession>> open_session(std::string url);
boost::asio::awaitable<std::shared_ptr<mcp::ClientSession>> open_stdio(std::string command);
/// `n` sequential echo calls; each one's µs into `us` when given.
boost::asio::awaitable<void> echo_calls(std::shared_ptr<mcp::ClientSession> s, int n, std::vector<double>* us);
/// ns on CPU of each live thread of `pid`.
std::map<int, std::int64_t> thread_cpu_ns(int pid);
std::vector<int> children_of(int pid);
std::vector<int> descendants_of(int pid);

// CPU snapshots of a set of processes; `since` gives the ns spent since an earlier snapshot. A thread that ended in
// between takes its time with it (schedstat is per live thread): `lost_threads` says so.
struct CpuSnapshot {
    std::map<int, std::map<int, std::int64_t>> by_pid;
    static CpuSnapshot of(const std::vector<int>& pids) {
        CpuSnapshot s;
        for (int p : pids) s.by_pid[p] = thread_cpu_ns(p);
        return s;
    }
    std::int64_t since(const CpuSnapshot& before, bool* lost_threads) const {
        std::int64_t ns = 0;
        for (const auto& [pid, threads] : by_pid) {
            const auto b = before.by_pid.find(pid);
            for (const auto& [tid, t] : threads) {
                std::int64_t t0 = 0;
                if (b != before.by_pid.end())
                    if (auto i = b->second.find(tid); i != b->second.end()) t0 = i->second;
                ns += t - t0;
            }
            if (b != before.by_pid.end())
                for (const auto& [tid, t] : b->second)
                    if (!threads.contains(tid) && lost_threads) *lost_threads = true;
        }
        return ns;
    }
};

// µs of CPU per call in the gateway process and in its upstream (every descendant of it), one measurement window.
struct CpuPerCall {
    double gateway_us = 0;
    double upstream_us = 0;
    int calls = 0;
    bool lost_threads = false;
    double total_us() const { return gateway_us + upstream_us; }
};

/// `calls` sequential keep-alive tools/call echo from one session, after 200 to warm up; the client is this process,
/// so its CPU is not in either number.
CpuPerCall measure_cpu(const std::string& url, int gateway_pid, std::optional<mcp::Era> era, int calls);

// The window with the cheapest gateway, kept whole (its upstream from the same window).
struct BestCpu {
    std::optional<CpuPerCall> c;
    std::string error;
    void keep(const CpuPerCall& m) {
        if (!c || m.gateway_us < c->gateway_us) c = m;
    }
};

/// measure_cpu in each era, each kept in its own BestCpu (an era that fails leaves the other measured).
void cpu_both_eras(const std::string& url, int pid, int calls, BestCpu& legacy, BestCpu& modern);

// ---- Counts per call: instructions (callgrind) and system calls (strace) of one process ---------------------------

/// One count per call for each era; an era that failed says why.
struct CountsPerCall {
    std::optional<double> legacy, modern;
    std::string error;
};

/// Instructions per call of a server started as `argv` under callgrind: the counters are zeroed after a warm-up
/// (`callgrind_control -z`) and dumped after `calls` echo calls (`callgrind_control -d`), so start-up, session set-up
/// and shutdown are not in the number. User space only.
CountsPerCall instructions_per_call(const Context& ctx, const std::vector<std::string>& argv, int calls);
/// System calls per call of a server started as `argv`: `strace -f -c` attached to it (every thread) around `calls`
/// echo calls, after a warm-up.
CountsPerCall syscalls_per_call(const Context& ctx, const std::vector<std::string>& argv, int calls);

}  // namespace switchboard::bench
