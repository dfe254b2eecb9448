// What a spawned server process gets: its own process group, the three pipes and no other descriptor of ours, the
// working directory, the environment overrides, argv[0] the resolved path; and a relative command runs from `cwd`.
#include "harness.hpp"

#include <boost/asio/this_coro.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <map>

#include <fcntl.h>
#include <unistd.h>

namespace switchboard::test {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using asio::awaitable;

// Runs `command args` with `po`, collecting its stderr lines of the form key=value until it exits.
awaitable<std::map<std::string, std::string>> run_reporting(transport::StdioProcessOptions po) {
    auto lines = std::make_shared<std::map<std::string, std::string>>();
    po.on_stderr_line = [lines](std::string_view line) {
        if (auto eq = line.find('='); eq != std::string_view::npos)
            (*lines)[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    };
    auto ex = co_await asio::this_coro::executor;
    auto ch = transport::StdioProcessChannel::spawn(ex, po);
    EXPECT_TRUE(ch) << (ch ? "" : ch.error().message);
    if (!ch) co_return *lines;
    auto r = co_await (*ch)->read();  // ends when the script exits; read() waits for the rest of stderr
    EXPECT_EQ(r.kind, jsonrpc::Received::Kind::closed);
    EXPECT_NE(r.reason.find("exited with status 0"), std::string::npos) << r.reason;
    (*lines)["pid"] = std::to_string((*ch)->pid());
    co_return *lines;
}

const char* report_script =
    "echo pgid=$(cut -d' ' -f5 /proc/$$/stat) >&2; "
    "echo cwd=$(pwd -P) >&2; "
    "echo argv0=$0 >&2; "
    "echo var=$SWITCHBOARD_SPAWN_TEST >&2; "
    "fds=; for f in /proc/$$/fd/*; do fds=\"$fds ${f##*/}\"; done; echo fds=$fds >&2";

TEST(Spawn, ChildGetsItsOwnGroupThePipesTheDirectoryAndTheEnvironment) {
    // A descriptor of ours without close-on-exec: the child must not inherit it (Asio's sockets are such).
    // (Numbered high so that it cannot be the one the child's glob opens on /proc/$$/fd.)
    const int devnull = ::open("/dev/null", O_RDONLY);
    ASSERT_GE(devnull, 0);
    const int leaky = ::fcntl(devnull, F_DUPFD, 60);
    ::close(devnull);
    ASSERT_GE(leaky, 60);
    const auto dir = fs::canonical(fs::temp_directory_path());
    run([&]() -> awaitable<void> {
        transport::StdioProcessOptions po;
        po.name = "reporter";
        po.command = "sh";
        po.args = {"-c", report_script, "sh"};
        po.cwd = dir.string();
        po.env["SWITCHBOARD_SPAWN_TEST"] = "over-ridden";
        auto seen = co_await run_reporting(po);
        EXPECT_EQ(seen["pgid"], seen["pid"]);  // its own group: shutdown signals reach its whole tree
        EXPECT_EQ(seen["cwd"], dir.string());
        EXPECT_EQ(seen["var"], "over-ridden");
        // $$'s descriptors while the loop runs: the three pipes, and the one the glob has open on /proc/$$/fd, if any.
        std::string fds = seen["fds"];
        fds.erase(0, fds.find_first_not_of(' '));
        EXPECT_EQ(fds.rfind("0 1 2", 0), 0u) << fds;
        EXPECT_EQ((" " + fds + " ").find(" " + std::to_string(leaky) + " "), std::string::npos)
            << "inherited fd " << leaky << ": " << fds;
    });
    ::close(leaky);
}

TEST(Spawn, RelativeCommandRunsFromTheWorkingDirectory) {
    const auto dir = fs::temp_directory_path() / fmt::format("switchboard-spawn-{}", ::getpid());
    fs::create_directories(dir / "bin");
    {
        const auto script = dir / "bin" / "report.sh";
        FILE* f = std::fopen(script.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fprintf(f, "#!/bin/sh\n%s\n", report_script);
        std::fclose(f);
        fs::permissions(script, fs::perms::owner_all);
    }
    run([&]() -> awaitable<void> {
        transport::StdioProcessOptions po;
        po.name = "relative";
        po.command = "./bin/report.sh";
        po.cwd = dir.string();
        auto seen = co_await run_reporting(po);
        EXPECT_EQ(seen["cwd"], fs::canonical(dir).string());
        EXPECT_EQ(seen["argv0"], fs::absolute(dir / "./bin/report.sh").string());
    });
    fs::remove_all(dir);
}

TEST(Spawn, ManyServersStartAndAllExit) {
    run([&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        std::vector<std::shared_ptr<transport::StdioProcessChannel>> chans;
        for (int i = 0; i < 20; ++i) {
            transport::StdioProcessOptions po;
            po.name = fmt::format("s{}", i);
            po.command = "sh";
            po.args = {"-c", fmt::format("echo '{{\"jsonrpc\":\"2.0\",\"method\":\"n{}\"}}'", i)};
            auto ch = transport::StdioProcessChannel::spawn(ex, po);
            CO_ASSERT_TRUE(ch);
            chans.push_back(*ch);
        }
        for (int i = 0; i < 20; ++i) {
            auto r = co_await chans[i]->read();
            CO_ASSERT_EQ(r.kind, jsonrpc::Received::Kind::message);
            EXPECT_NE(r.text.find(fmt::format("\"n{}\"", i)), std::string::npos) << r.text;
            auto end = co_await chans[i]->read();
            EXPECT_EQ(end.kind, jsonrpc::Received::Kind::closed);
            EXPECT_TRUE(chans[i]->exited());
        }
    });
}

}  // namespace
}  // namespace switchboard::test
