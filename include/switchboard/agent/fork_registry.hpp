// The forks (agent/fork.hpp) running in this process, published for `switchboard status` in other processes: one
// small JSON file per process in the runtime directory ($XDG_RUNTIME_DIR/switchboard, else
// /tmp/switchboard-<uid>), rewritten atomically when a fork starts or ends and removed when none runs. A file whose
// process is gone is stale: readers ignore and remove it.
//
//   {"pid": 123, "forks": [{"kind": "agent", "name": "researcher", "parent": "main", "depth": 1,
//                           "servers": ["notes"], "startedAtMs": 1700000000000}]}
//
// Readers take what they know and ignore the rest; "parent" was added later (a file without it reads as "").
//
// Thread-safety: on one thread (the pool's executor); the files are written and read with plain file calls (a few
// hundred bytes, on a tmpfs in the usual case).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace switchboard::agent {

struct RunningFork {
    std::string kind;  ///< "agent" or "skill"
    std::string name;
    std::string parent;  ///< the context it was forked from ("main", "web:12", "gateway:3", "agent:<name>")
    int depth = 1;
    std::vector<std::string> servers;  ///< the servers it declared (leased for it)
    std::int64_t started_at_ms = 0;    ///< Unix time
};

class ForkRegistry {
public:
    /// Publishes into `dir` (created when needed); an empty `dir` publishes nothing.
    explicit ForkRegistry(std::filesystem::path dir);
    ~ForkRegistry();
    ForkRegistry(const ForkRegistry&) = delete;
    ForkRegistry& operator=(const ForkRegistry&) = delete;

    std::uint64_t add(RunningFork fork);
    void remove(std::uint64_t id);

    /// $XDG_RUNTIME_DIR/switchboard, or /tmp/switchboard-<uid>.
    static std::filesystem::path default_dir();

private:
    void publish();
    std::filesystem::path dir_;
    std::map<std::uint64_t, RunningFork> forks_;
    std::uint64_t next_ = 1;
};

struct PublishedForks {
    int pid = 0;
    std::vector<RunningFork> forks;
};

/// What the live processes published in `dir`, by pid; stale files (their process is gone) are removed.
std::vector<PublishedForks> read_published_forks(const std::filesystem::path& dir);

}  // namespace switchboard::agent
