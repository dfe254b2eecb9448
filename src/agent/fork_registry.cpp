#include <switchboard/agent/fork_registry.hpp>

#include <switchboard/core/atomic_file.hpp>

#include <fmt/format.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace switchboard::agent {

namespace fs = std::filesystem;
namespace json = boost::json;

ForkRegistry::ForkRegistry(fs::path dir) : dir_(std::move(dir)) {}

ForkRegistry::~ForkRegistry() {
    forks_.clear();
    publish();
}

fs::path ForkRegistry::default_dir() {
    if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg && *xdg) return fs::path(xdg) / "switchboard";
    return fs::temp_directory_path() / fmt::format("switchboard-{}", ::getuid());
}

std::uint64_t ForkRegistry::add(RunningFork fork) {
    const auto id = next_++;
    forks_.emplace(id, std::move(fork));
    publish();
    return id;
}

void ForkRegistry::remove(std::uint64_t id) {
    if (forks_.erase(id)) publish();
}

void ForkRegistry::publish() {
    if (dir_.empty()) return;
    std::error_code ec;
    const auto file = dir_ / fmt::format("forks-{}.json", ::getpid());
    if (forks_.empty()) {
        fs::remove(file, ec);
        return;
    }
    fs::create_directories(dir_, ec);
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::replace, ec);
    json::array forks;
    for (const auto& [id, f] : forks_) {
        json::array servers;
        for (const auto& s : f.servers) servers.emplace_back(s);
        forks.push_back(json::object{{"kind", f.kind},
                                     {"name", f.name},
                                     {"parent", f.parent},
                                     {"depth", f.depth},
                                     {"servers", std::move(servers)},
                                     {"startedAtMs", f.started_at_ms}});
    }
    const auto text = json::serialize(json::object{{"pid", ::getpid()}, {"forks", std::move(forks)}});
    // A reader never sees half a file. Best effort: the forks run regardless of a failed write.
    core::AtomicWriteOptions options;
    options.durable = false;
    core::write_file_atomically(file, text, options);
}

std::vector<PublishedForks> read_published_forks(const fs::path& dir) {
    std::vector<PublishedForks> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const auto name = entry.path().filename().string();
        if (!name.starts_with("forks-") || !name.ends_with(".json")) continue;
        const int pid = std::atoi(name.substr(6).c_str());
        if (pid <= 0) continue;
        if (::kill(pid, 0) != 0 && errno == ESRCH) {
            std::error_code ignored;
            fs::remove(entry.path(), ignored);  // its process is gone
            continue;
        }
        std::ifstream in(entry.path(), std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        json::error_code jec;
        auto v = json::parse(ss.str(), jec);
        const auto* o = jec ? nullptr : v.if_object();
        const auto* forks = o ? o->if_contains("forks") : nullptr;
        if (!forks || !forks->is_array()) continue;
        PublishedForks p;
        p.pid = pid;
        for (const auto& f : forks->get_array()) {
            const auto* fo = f.if_object();
            if (!fo) continue;
            RunningFork r;
            if (const auto* k = fo->if_contains("kind"); k && k->is_string()) r.kind = k->get_string();
            if (const auto* n = fo->if_contains("name"); n && n->is_string()) r.name = n->get_string();
            if (const auto* pa = fo->if_contains("parent"); pa && pa->is_string()) r.parent = pa->get_string();
            if (const auto* d = fo->if_contains("depth"); d && d->is_int64())
                r.depth = static_cast<int>(d->get_int64());
            if (const auto* t = fo->if_contains("startedAtMs"); t && t->is_int64()) r.started_at_ms = t->get_int64();
            if (const auto* s = fo->if_contains("servers"); s && s->is_array())
                for (const auto& x : s->get_array())
                    if (x.is_string()) r.servers.emplace_back(x.get_string());
            p.forks.push_back(std::move(r));
        }
        if (!p.forks.empty()) out.push_back(std::move(p));
    }
    return out;
}

}  // namespace switchboard::agent
