#include "host_harness.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

namespace switchboard::test {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

std::string q(const std::string& s) { return json::serialize(json::value(s)); }

std::string demo_entry(const std::string& extra_args) {
    return R"({"command": )" + q(demo_server()) + R"(, "args": [)" + extra_args + "]}";
}

std::string sh_entry(const std::string& script, const std::string& extra) {
    return R"({"command": "sh", "args": ["-c", )" + q(script) + "]" + extra + "}";
}

host::Config config_of(const std::vector<std::pair<std::string, std::string>>& entries) {
    std::string text = R"({"mcpServers": {)";
    for (std::size_t i = 0; i < entries.size(); ++i)
        text += (i ? ", " : "") + q(entries[i].first) + ": " + entries[i].second;
    text += "}}";
    return host::parse_config(text, "<test>");
}

host::PoolOptions fast_options() {
    host::PoolOptions o;
    o.backoff.base = 50ms;
    o.backoff.max = 400ms;
    return o;
}

asio::awaitable<void> sleep_for(clock::duration d) {
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(asio::use_awaitable);
}

asio::awaitable<bool> wait_phase(std::shared_ptr<host::ServerPool> pool, std::string server, host::Phase phase,
                                 clock::duration limit) {
    const auto deadline = clock::now() + limit;
    while (clock::now() < deadline) {
        auto st = pool->status(server);
        if (st && st->phase == phase) co_return true;
        co_await sleep_for(10ms);
    }
    co_return false;
}

TempDir::TempDir() {
    path = fs::temp_directory_path() / ("switchboard-host-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(path);
}

TempDir::~TempDir() { fs::remove_all(path); }

std::vector<std::string> read_lines(const fs::path& file) {
    std::vector<std::string> lines;
    std::ifstream f(file);
    for (std::string line; std::getline(f, line);)
        if (!line.empty()) lines.push_back(line);
    return lines;
}

bool process_alive(int pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno != ESRCH); }

}  // namespace switchboard::test
