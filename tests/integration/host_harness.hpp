// Helpers for tests of the server pool and contexts: configs written as text, waiting for phases, temp dirs.
#pragma once

#include "harness.hpp"

#include <switchboard/host/config.hpp>
#include <switchboard/host/pool.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace switchboard::test {

/// A JSON string literal for config text.
std::string q(const std::string& s);
/// A demo server entry; `extra_args` is the inside of the args array (`"--legacy-only"`).
std::string demo_entry(const std::string& extra_args = "");
/// A stdio entry running `script` under sh; `extra` adds keys (`, "lazy": true`).
std::string sh_entry(const std::string& script, const std::string& extra = "");
host::Config config_of(const std::vector<std::pair<std::string, std::string>>& entries);
/// Reconnect backoff in tens of milliseconds.
host::PoolOptions fast_options();

boost::asio::awaitable<void> sleep_for(std::chrono::steady_clock::duration d);
/// Waits until `server` is in `phase`, at most `limit`; true when it got there.
boost::asio::awaitable<bool> wait_phase(std::shared_ptr<host::ServerPool> pool, std::string server, host::Phase phase,
                                        std::chrono::steady_clock::duration limit);

/// A fresh directory named after the running test, removed at the end.
struct TempDir {
    TempDir();
    ~TempDir();
    std::filesystem::path path;
};

/// The lines of a file (empty when it does not exist).
std::vector<std::string> read_lines(const std::filesystem::path& file);
/// Whether a process with this pid exists (and is not a zombie we already reaped).
bool process_alive(int pid);

}  // namespace switchboard::test
