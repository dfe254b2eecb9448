// switchboard-bench: runs the registered bench sections side by side with their peers, prints one table and writes
// it as JSON. `scripts/bench` builds Release and calls this; see bench/README.md.
#include "harness.hpp"

#include <CLI/CLI.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <sys/utsname.h>
#include <unistd.h>

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace switchboard::bench;

namespace {

std::string format_value(const std::optional<double>& v, const std::string& unit) {
    if (!v) return "-";
    const double x = *v;
    std::string num;
    if (x >= 1e6)
        num = fmt::format("{:.2f}M", x / 1e6);
    else if (x >= 10000)
        num = fmt::format("{:.0f}", x);
    else if (x >= 100)
        num = fmt::format("{:.1f}", x);
    else
        num = fmt::format("{:.2f}", x);
    return unit.empty() ? num : num + " " + unit;
}

json::value opt(const std::optional<double>& v) { return v ? json::value(*v) : json::value(nullptr); }

std::string self_exe(const char* argv0) {
    std::error_code ec;
    auto p = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string(argv0) : p.string();
}

}  // namespace

int main(int argc, char** argv) {
    spdlog::set_level(spdlog::level::warn);
    // Child mode: `--bin-dir D --child NAME args...` (no CLI11: the args belong to the child).
    for (int i = 1; i < argc; ++i) {
        if (std::string_view(argv[i]) != "--child" || i + 1 >= argc) continue;
        std::vector<std::string> args;
        std::string bin_dir;
        for (int j = 1; j < i; ++j)
            if (std::string_view(argv[j]) == "--bin-dir" && j + 1 < i) bin_dir = argv[j + 1];
        args.push_back(bin_dir);  // args[0] is always the bin dir
        for (int j = i + 2; j < argc; ++j) args.emplace_back(argv[j]);
        for (auto& [name, fn] : child_modes())
            if (name == argv[i + 1]) {
                try {
                    fmt::print("{}\n", json::serialize(fn(args)));
                    return 0;
                } catch (const std::exception& e) {
                    fmt::print(stderr, "child {} failed: {}\n", name, e.what());
                    return 1;
                }
            }
        fmt::print(stderr, "unknown child mode {}\n", argv[i + 1]);
        return 2;
    }

    CLI::App app{"switchboard-bench: Switchboard next to its peers, one table", "switchboard-bench"};
    Context ctx;
    std::string json_out, commit = "unknown", only;
    bool list = false;
    ctx.self = self_exe(argv[0]);
    ctx.bin_dir = fs::path(ctx.self).parent_path().string();
    ctx.node = "node";
    ctx.peers_dir = (fs::path(SWITCHBOARD_SOURCE_DIR) / "bench" / "peers").string();
    app.add_flag("--quick", ctx.quick, "Fewer iterations (the whole run in under 2 minutes)");
    app.add_option("--json", json_out, "Also write the table as JSON to this file");
    app.add_option("--commit", commit, "Commit recorded in the JSON");
    app.add_option("--only", only, "Comma-separated section names to run");
    app.add_option("--bin-dir", ctx.bin_dir, "Directory of switchboard-demo-server (default: next to this binary)");
    app.add_option("--node", ctx.node, "Node binary for the TS SDK peers")->capture_default_str();
    app.add_option("--peers-dir", ctx.peers_dir, "bench/peers")->capture_default_str();
    app.add_option("--valgrind", ctx.valgrind, "valgrind binary for instruction counts (default: from PATH)");
    app.add_option("--strace", ctx.strace, "strace binary for system call counts (default: from PATH)");
    app.add_flag("--list", list, "List the sections and exit");
    CLI11_PARSE(app, argc, argv);
    if (ctx.valgrind.empty() && std::system("command -v valgrind >/dev/null 2>&1") == 0) ctx.valgrind = "valgrind";
    if (ctx.strace.empty() && std::system("command -v strace >/dev/null 2>&1") == 0) ctx.strace = "strace";

    auto& sections = registry();
    std::stable_sort(sections.begin(), sections.end(), [](auto& a, auto& b) { return a.order < b.order; });
    if (list) {
        for (auto& s : sections) fmt::print("{:12} {}\n", s.name, s.title);
        return 0;
    }
    std::set<std::string> wanted;
    for (std::stringstream ss(only); ss.good();) {
        std::string n;
        std::getline(ss, n, ',');
        if (!n.empty()) wanted.insert(n);
    }

    // Wall-clock numbers depend on what else runs: the load is recorded with them (ratios are the stable part).
    std::string loadavg;
    std::getline(std::ifstream("/proc/loadavg"), loadavg);
    fmt::print(stderr, "[bench] load average: {}\n", loadavg);
    std::vector<std::pair<const Section*, std::vector<Row>>> results;
    for (const auto& s : sections) {
        if (!wanted.empty() && !wanted.count(s.name)) continue;
        fmt::print(stderr, "[bench] {} ...\n", s.title);
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<Row> rows;
        try {
            rows = s.run(ctx);
        } catch (const std::exception& e) {
            rows.push_back(failed(s.name, e.what()));
        }
        fmt::print(stderr, "[bench] {} done in {:.1f} s\n", s.name, seconds_since(t0));
        results.emplace_back(&s, std::move(rows));
    }

    // One table.
    std::size_t w_metric = 6, w_ours = 4, w_peer = 4, w_target = 6;
    auto peer_text = [](const Row& r) {
        if (!r.peer) return std::string("-");
        return format_value(r.peer, r.unit) + " (" + r.peer_name + ")";
    };
    for (auto& [s, rows] : results)
        for (auto& r : rows) {
            w_metric = std::max(w_metric, r.metric.size() + 2);
            w_ours = std::max(w_ours, format_value(r.ours, r.unit).size());
            w_peer = std::max(w_peer, peer_text(r).size());
            w_target = std::max(w_target, r.target.size());
        }
    fmt::print("{:<{}}  {:>{}}  {:<{}}  {:>6}  {:<{}}  {:<13}  {}\n", "METRIC", w_metric, "OURS", w_ours, "PEER",
               w_peer, "RATIO", "TARGET", w_target, "STATUS", "NOTE");
    for (auto& [s, rows] : results) {
        fmt::print("{}\n", s->title);
        for (auto& r : rows) {
            auto ratio = r.ratio();
            fmt::print("  {:<{}}  {:>{}}  {:<{}}  {:>6}  {:<{}}  {:<13}  {}\n", r.metric, w_metric - 2,
                       format_value(r.ours, r.unit), w_ours, peer_text(r), w_peer,
                       ratio ? fmt::format("{:.2f}x", *ratio) : "-", r.target, w_target, to_string(r.status), r.note);
        }
    }

    std::fflush(stdout);  // the table before any later message on stderr
    if (!json_out.empty()) {
        utsname u{};
        ::uname(&u);
        json::object doc;
        doc["commit"] = commit;
        doc["date"] = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
        doc["quick"] = ctx.quick;
        doc["machine"] = json::object{{"cpus", std::thread::hardware_concurrency()},
                                      {"kernel", std::string(u.release)},
                                      {"arch", std::string(u.machine)},
                                      {"loadavg_at_start", loadavg}};
        doc["ratio_convention"] = "> 1 means Switchboard is better than the peer";
        json::array secs;
        for (auto& [s, rows] : results) {
            json::array jr;
            for (auto& r : rows) {
                json::object o;
                o["metric"] = r.metric;
                o["unit"] = r.unit;
                o["ours"] = opt(r.ours);
                o["peer"] = opt(r.peer);
                o["peer_name"] = r.peer_name;
                o["ratio"] = opt(r.ratio());
                o["target"] = r.target;
                o["status"] = to_string(r.status);
                o["note"] = r.note;
                jr.push_back(std::move(o));
            }
            secs.push_back(json::object{{"name", s->name}, {"title", s->title}, {"rows", std::move(jr)}});
        }
        doc["sections"] = std::move(secs);
        std::ofstream(json_out) << json::serialize(doc) << "\n";
        fmt::print(stderr, "[bench] wrote {}\n", json_out);
    }
    return 0;
}
