#include "stopped_process.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace switchboard::transport {

namespace {

std::string read_small_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) return {};
    std::ostringstream out;
    out << in.rdbuf();
    return std::move(out).str();
}

// The state letter of /proc/<pid>/stat ("123 (name) S 1 ..."; the name may hold spaces and parentheses, so the
// state follows the last ')'), or 0 when the process is gone or there is no /proc.
char process_state(int pid) {
    const auto stat = read_small_file(fmt::format("/proc/{}/stat", pid));
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) return 0;
    return stat[close + 2];
}

// Where the process's file descriptor `fd` leads ("pipe:[1234]"), or empty.
std::string link_target(int pid, int fd) {
    std::error_code ec;
    auto target = std::filesystem::read_symlink(fmt::format("/proc/{}/fd/{}", pid, fd), ec);
    return ec ? std::string() : target.string();
}

// The children of every thread of `pid` (a child belongs to the thread that started it).
void append_children(int pid, std::vector<int>& out) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(fmt::format("/proc/{}/task", pid), ec), end; !ec && it != end;
         it.increment(ec)) {
        const auto text = read_small_file(it->path().string() + "/children");
        const char* p = text.data();
        const char* last = text.data() + text.size();
        while (p < last) {
            while (p < last && std::isspace(static_cast<unsigned char>(*p))) ++p;
            int child = 0;
            auto [next, err] = std::from_chars(p, last, child);
            if (err != std::errc() || next == p) break;
            out.push_back(child);
            p = next;
        }
    }
}

}  // namespace

std::optional<std::string> stopped_process_in_tree(int pid) {
    if (pid <= 0) return std::nullopt;
    // Descendants count only while they write to the server's stdout (npx's node does): a stopped job of a shell
    // server, or a child stopped for touching the terminal, does not keep the server from answering.
    const auto server_stdout = link_target(pid, 1);
    std::vector<int> queue{pid};
    for (std::size_t i = 0; i < queue.size() && i < 64; ++i) {
        const int p = queue[i];
        if (process_state(p) == 'T' && (p == pid || (!server_stdout.empty() && link_target(p, 1) == server_stdout)))
            return p == pid
                       ? fmt::format("its process {} is stopped (SIGSTOP or SIGTSTP)", pid)
                       : fmt::format("process {}, started by its process {}, is stopped (SIGSTOP or SIGTSTP)", p, pid);
        append_children(p, queue);
    }
    return std::nullopt;
}

}  // namespace switchboard::transport
