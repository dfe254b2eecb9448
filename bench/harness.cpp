#include "harness.hpp"

#include <boost/json/parse.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <spawn.h>
#include <sys/wait.h>

extern char** environ;

namespace switchboard::bench {

namespace json = boost::json;

std::string_view to_string(Status s) {
    switch (s) {
    case Status::met: return "met";
    case Status::missed: return "MISSED";
    case Status::info: return "-";
    case Status::not_built: return "not built yet";
    case Status::failed: return "FAILED";
    }
    return "?";
}

std::optional<double> Row::ratio() const {
    if (!ours || !peer || *ours <= 0 || *peer <= 0) return std::nullopt;
    return higher_is_better ? *ours / *peer : *peer / *ours;
}

Row not_built(std::string metric, std::string what) {
    Row r;
    r.metric = std::move(metric);
    r.status = Status::not_built;
    r.note = std::move(what);
    return r;
}

Row failed(std::string metric, std::string why) {
    Row r;
    r.metric = std::move(metric);
    r.status = Status::failed;
    r.note = std::move(why);
    return r;
}

void judge(Row& r, double value, double limit, bool at_most, std::string_view what) {
    const bool ok = at_most ? value <= limit : value >= limit;
    r.status = ok ? Status::met : Status::missed;
    const double factor = at_most ? value / limit : limit / value;
    if (!r.note.empty()) r.note += "; ";
    if (ok)
        r.note += fmt::format("{} met ({:.2f}x of the limit)", what, value / limit);
    else
        r.note += fmt::format("{} missed by {:.2f}x", what, factor);
}

std::vector<Section>& registry() {
    static std::vector<Section> sections;
    return sections;
}

std::vector<std::pair<std::string, ChildMain>>& child_modes() {
    static std::vector<std::pair<std::string, ChildMain>> modes;
    return modes;
}

double Latencies::percentile(double p) const {
    if (us.empty()) return 0;
    auto v = us;
    const auto i = std::min(v.size() - 1, static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size())));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
    return v[i];
}

std::optional<std::string> run_capture(const std::vector<std::string>& argv, bool quiet_stderr) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return std::nullopt;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    if (quiet_stderr) posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    const int rc = ::posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    if (rc != 0) {
        ::close(out[0]);
        return std::nullopt;
    }
    std::string text;
    char buf[65536];
    for (;;) {
        const auto n = ::read(out[0], buf, sizeof buf);
        if (n > 0) {
            text.append(buf, static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        break;
    }
    ::close(out[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
    return text;
}

std::optional<json::object> run_json(const std::vector<std::string>& argv) {
    auto text = run_capture(argv);
    if (!text) return std::nullopt;
    // The last non-empty line is the result (a peer may log before it).
    auto end = text->find_last_not_of("\n\r ");
    if (end == std::string::npos) return std::nullopt;
    auto start = text->rfind('\n', end);
    start = start == std::string::npos ? 0 : start + 1;
    json::error_code ec;
    auto v = json::parse(std::string_view(*text).substr(start, end + 1 - start), ec);
    if (ec || !v.is_object()) return std::nullopt;
    return v.get_object();
}

std::optional<double> callgrind_total(const std::string& file) {
    std::ifstream in(file);
    std::string line;
    std::optional<double> total;
    while (std::getline(in, line))
        if (line.rfind("summary:", 0) == 0 || line.rfind("totals:", 0) == 0)
            total = std::strtod(line.c_str() + line.find(':') + 1, nullptr);
    return total;
}

std::optional<json::object> run_child(const Context& ctx, const std::string& name, std::vector<std::string> args) {
    std::vector<std::string> argv{ctx.self, "--bin-dir", ctx.bin_dir, "--child", name};
    for (auto& a : args) argv.push_back(std::move(a));
    return run_json(argv);
}

std::optional<double> number(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (!v || !v->is_number()) return std::nullopt;
    return v->to_number<double>();
}

namespace {
std::int64_t status_field(int pid, std::string_view field) {
    std::ifstream in(pid ? fmt::format("/proc/{}/status", pid) : std::string("/proc/self/status"));
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field, 0) == 0) return std::strtoll(line.c_str() + field.size(), nullptr, 10);
    return 0;
}
}  // namespace

std::vector<std::pair<std::string, std::int64_t>> rss_by_mapping(int pid) {
    std::ifstream in(pid ? fmt::format("/proc/{}/smaps", pid) : std::string("/proc/self/smaps"));
    std::map<std::string, std::int64_t> by_name;
    std::string line, current = "[anon]";
    while (std::getline(in, line)) {
        if (line.rfind("Rss:", 0) == 0) {
            by_name[current] += std::strtoll(line.c_str() + 4, nullptr, 10);
            continue;
        }
        // A mapping header: "start-end perms offset dev inode [path]"; field lines are "Name:   value".
        const auto sp = line.find(' ');
        if (sp == std::string::npos || line.find('-') > sp) continue;
        std::istringstream h(line);
        std::string range, perms, offset, dev, inode, path;
        h >> range >> perms >> offset >> dev >> inode;
        std::getline(h >> std::ws, path);
        if (path.empty()) path = "[anon]";
        if (const auto slash = path.rfind('/'); slash != std::string::npos) path = path.substr(slash + 1);
        current = path;
    }
    std::vector<std::pair<std::string, std::int64_t>> out(by_name.begin(), by_name.end());
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return out;
}

std::int64_t rss_kib(int pid) { return status_field(pid, "VmRSS:"); }
std::int64_t peak_rss_kib(int pid) { return status_field(pid, "VmHWM:"); }

int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    const bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
    if (fd >= 0) ::close(fd);
    if (!ok) throw std::runtime_error("no free port on 127.0.0.1");
    return ntohs(a.sin_port);
}

}  // namespace switchboard::bench
