// The bench harness: a registry of sections, each producing rows (metric, ours, peer, ratio, target, status) that
// main() prints as one table and writes as one JSON document. A new section (HTTP, gateway, ...) is one more
// SWITCHBOARD_BENCH_SECTION in its own file; nothing else changes.
//
// Thread-safety: single-threaded; sections run one after another on the main thread.
#pragma once

#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::bench {

/// Everything a section may need to find its peers and scale its work.
struct Context {
    bool quick = false;
    std::string bin_dir;    ///< where switchboard, switchboard-demo-server and switchboard-bench are
    std::string self;       ///< this executable (child modes, callgrind)
    std::string node;       ///< node binary
    std::string peers_dir;  ///< bench/peers (the TS SDK scripts)
    std::string valgrind;   ///< empty: callgrind rows are skipped
    std::string strace;     ///< empty: system call rows are skipped
    std::string demo() const { return bin_dir + "/switchboard-demo-server"; }
};

enum class Status { met, missed, info, not_built, failed };
std::string_view to_string(Status s);

struct Row {
    std::string metric;  ///< e.g. "tools/call p50"
    std::string unit;    ///< "µs", "calls/s", "ms", "MiB", "ns/op", "Ir/op"
    std::optional<double> ours;
    std::optional<double> peer;
    std::string peer_name;  ///< "TS SDK", "pipe floor", ...
    bool higher_is_better = false;
    std::string target;  ///< human text: "<= 15 µs", ">= 4x TS SDK"
    Status status = Status::info;
    std::string note;  ///< how far from the target, or why a row has no number

    /// ours/peer for "higher is better" rows, peer/ours otherwise: > 1 means we are better.
    std::optional<double> ratio() const;
};

/// Rows for a section that waits for code not in this build; never numbers.
Row not_built(std::string metric, std::string what);
/// A row for a measurement that failed (peer missing, process error): the reason goes into the note.
Row failed(std::string metric, std::string why);
/// Sets status and note from a limit: met when `value` is on the right side of `limit`.
void judge(Row& r, double value, double limit, bool at_most, std::string_view what);

struct Section {
    std::string name;   ///< short key: "stdio", "http", "coldstart", ...
    std::string title;  ///< table heading
    int order = 0;      ///< sections run and print in this order
    std::function<std::vector<Row>(const Context&)> run;
};

std::vector<Section>& registry();
struct Registrar {
    explicit Registrar(Section s) { registry().push_back(std::move(s)); }
};
#define SWITCHBOARD_BENCH_CAT2(a, b) a##b
#define SWITCHBOARD_BENCH_CAT(a, b) SWITCHBOARD_BENCH_CAT2(a, b)
/// Registers a section at static-initialisation time: SWITCHBOARD_BENCH_SECTION({"name", "Title", 10, run_fn});
#define SWITCHBOARD_BENCH_SECTION(...) \
    static ::switchboard::bench::Registrar SWITCHBOARD_BENCH_CAT(bench_section_, __LINE__)(__VA_ARGS__)

/// Child modes: `switchboard-bench --child NAME [args]` runs a registered function in a fresh process (memory
/// numbers must not include other sections' heap) and prints one JSON object on stdout.
using ChildMain = std::function<boost::json::object(const std::vector<std::string>& args)>;
std::vector<std::pair<std::string, ChildMain>>& child_modes();
struct ChildRegistrar {
    ChildRegistrar(std::string name, ChildMain f) { child_modes().emplace_back(std::move(name), std::move(f)); }
};

// ---- helpers shared by sections ----------------------------------------------------------------------------------

struct Latencies {
    std::vector<double> us;             ///< one sample per operation, microseconds
    double percentile(double p) const;  ///< sorts a copy
};

/// Runs a command, captures stdout (stderr passes through unless `quiet_stderr`); nullopt when it fails.
std::optional<std::string> run_capture(const std::vector<std::string>& argv, bool quiet_stderr = true);
/// Runs a command whose stdout is one JSON object (a child mode or a peer script); nullopt on any failure.
std::optional<boost::json::object> run_json(const std::vector<std::string>& argv);
/// Runs `self --child name args...`.
std::optional<boost::json::object> run_child(const Context& ctx, const std::string& name,
                                             std::vector<std::string> args);
/// The total instructions of a callgrind output file (its "summary:" or "totals:" line), or nullopt.
std::optional<double> callgrind_total(const std::string& file);
/// A number from a JSON object, or nullopt.
std::optional<double> number(const boost::json::object& o, std::string_view key);

/// VmRSS / VmHWM of a process (self when pid is 0), in KiB; 0 when unknown.
std::int64_t rss_kib(int pid = 0);
std::int64_t peak_rss_kib(int pid = 0);
/// Resident KiB per mapping name from /proc/<pid>/smaps (file name, "[heap]", "[stack]", "[anon]"), largest first.
std::vector<std::pair<std::string, std::int64_t>> rss_by_mapping(int pid = 0);

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to 0, read, closed).
int free_port();

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace switchboard::bench
