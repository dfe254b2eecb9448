// Servers that crash, hang, print garbage or huge lines: clear errors naming the cause, bounded memory, no crash.
#include "harness.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>

#include <csignal>
#include <cstdlib>

namespace switchboard::test {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using clock = std::chrono::steady_clock;

bool contains(const std::string& s, std::string_view what) { return s.find(what) != std::string::npos; }

TEST(Failure, ServerKilledMidCallFailsTheCallWithinASecond) {
    run([&]() -> awaitable<void> {
        mcp::ClientOptions o;
        o.server_name = "victim";
        auto c = co_await connect(demo_server(), std::vector<std::string>{}, o);
        CO_ASSERT_TRUE(c.session);
        json::object marker;
        marker["text"] = "marker-before-kill";
        CO_ASSERT_TRUE(co_await c.session->call_tool("write_stderr", marker));

        auto ex = co_await asio::this_coro::executor;
        asio::steady_timer killer(ex, std::chrono::milliseconds(200));
        clock::time_point killed_at;
        killer.async_wait([&](auto) {
            killed_at = clock::now();
            ::kill(c.process->pid(), SIGKILL);
        });
        json::object args;
        args["seconds"] = 30;
        auto r = co_await c.session->call_tool("slow", args);
        const auto latency = clock::now() - killed_at;
        CO_ASSERT_TRUE(!r);
        EXPECT_LT(latency, std::chrono::seconds(1));
        const auto& msg = r.error().message;
        EXPECT_EQ(r.error().code, jsonrpc::code::connection_closed);
        EXPECT_TRUE(contains(msg, "server \"victim\"")) << msg;
        EXPECT_TRUE(contains(msg, "killed by signal 9 (SIGKILL)")) << msg;
        EXPECT_TRUE(contains(msg, "marker-before-kill")) << msg;
        EXPECT_TRUE(contains(msg, "tools/call")) << msg;
        // Later calls fail at once with the same cause instead of hanging.
        auto later = co_await c.session->call_tool("echo", {});
        CO_ASSERT_TRUE(!later);
        EXPECT_TRUE(contains(later.error().message, "SIGKILL"));
        co_await c.session->close();
    });
}

TEST(Failure, ServerExitingReportsStatusAndStderr) {
    run([&]() -> awaitable<void> {
        auto c = co_await connect(demo_server(), std::vector<std::string>{});
        CO_ASSERT_TRUE(c.session);
        json::object args;
        args["code"] = 7;
        auto r = co_await c.session->call_tool("exit", args);
        CO_ASSERT_TRUE(!r);
        EXPECT_TRUE(contains(r.error().message, "exited with status 7")) << r.error().message;
        EXPECT_TRUE(contains(r.error().message, "demo server exiting with code 7")) << r.error().message;
        co_await c.session->close();
    });
}

TEST(Failure, ServerExitingAtStartReportsStatusAndStderr) {
    run([&]() -> awaitable<void> {
        std::vector<std::string> c_args{
            "-c", "echo 'fatal: missing API key' >&2; exit 3"};  // GCC 12: no init-list in co_await
        auto c = co_await connect("bash", c_args);
        CO_ASSERT_TRUE(!c.session);
        EXPECT_TRUE(contains(c.error, "exited with status 3")) << c.error;
        EXPECT_TRUE(contains(c.error, "fatal: missing API key")) << c.error;
    });
}

TEST(Failure, GarbageOnlyServerTimesOutNamingTheGarbage) {
    run([&]() -> awaitable<void> {
        mcp::ClientOptions o;
        o.server_name = "noisy";
        o.connect_timeout = std::chrono::milliseconds(1500);
        o.probe_timeout = std::chrono::milliseconds(500);
        const auto start = clock::now();
        std::vector<std::string> c_args{
            "-c", "echo 'hello, I am not JSON'; exec sleep 30"};  // GCC 12: no init-list in co_await
        auto c = co_await connect("bash", c_args, o);
        CO_ASSERT_TRUE(!c.session);
        EXPECT_LT(clock::now() - start, std::chrono::seconds(4));
        EXPECT_TRUE(contains(c.error, "server \"noisy\"")) << c.error;
        EXPECT_TRUE(contains(c.error, "initialize")) << c.error;
        EXPECT_TRUE(contains(c.error, "non-JSON output: hello, I am not JSON")) << c.error;
    });
}

TEST(Failure, GarbageBeforeARealServerIsToleratedAndReported) {
    run([&]() -> awaitable<void> {
        std::vector<std::string> c_args{
            "-c", "echo 'a log line on stdout'; exec " + demo_server()};  // GCC 12: no init-list in co_await
        auto c = co_await connect("bash", c_args);
        CO_ASSERT_TRUE(c.session);
        json::object args;
        args["message"] = "works";
        auto r = co_await c.session->call_tool("echo", args);
        CO_ASSERT_TRUE(r);
        EXPECT_TRUE(contains(c.session->connection().last_protocol_error(), "a log line on stdout"));
        co_await c.session->close();
    });
}

TEST(Failure, HundredMegabyteLineIsDroppedWithBoundedMemory) {
    run([&]() -> awaitable<void> {
        const auto before = peak_rss();
        transport::StdioProcessOptions po;
        po.max_message_size = 1024 * 1024;  // a small limit makes "bounded" measurable
        std::vector<std::string> c_args{"-c", "head -c 104857600 /dev/zero | tr '\\0' x; echo; exec " +
                                                  demo_server()};  // GCC 12: no init-list in co_await
        auto c = co_await connect("bash", c_args, po);
        CO_ASSERT_TRUE(c.session);
        json::object args;
        args["message"] = "after the flood";
        auto r = co_await c.session->call_tool("echo", args);
        CO_ASSERT_TRUE(r);
        const auto& problem = c.session->connection().last_protocol_error();
        EXPECT_TRUE(contains(problem, "100 MiB")) << problem;
        EXPECT_TRUE(contains(problem, "over the 1 MiB limit")) << problem;
        EXPECT_LT(peak_rss() - before, 32u * 1024 * 1024) << "memory grew with the line";
        co_await c.session->close();
    });
}

TEST(Failure, HundredMegabyteLineWithTheDefaultLimit) {
    run([&]() -> awaitable<void> {
        std::vector<std::string> c_args{"-c", "head -c 104857600 /dev/zero | tr '\\0' x; echo; exec " +
                                                  demo_server()};  // GCC 12: no init-list in co_await
        auto c = co_await connect("bash", c_args);
        CO_ASSERT_TRUE(c.session);
        EXPECT_TRUE(contains(c.session->connection().last_protocol_error(), "over the 64 MiB limit"));
        EXPECT_TRUE(co_await c.session->ping());
        co_await c.session->close();
    });
}

TEST(Failure, OversizeReplyFailsItsRequestAtOnce) {
    run([&]() -> awaitable<void> {
        transport::StdioProcessOptions po;
        po.max_message_size = 1024 * 1024;
        auto c = co_await connect(demo_server(), std::vector<std::string>{}, po);
        CO_ASSERT_TRUE(c.session);
        json::object args;
        args["message"] = std::string(2 * 1024 * 1024, 'y');
        const auto start = clock::now();
        auto r = co_await c.session->call_tool("echo", args);
        CO_ASSERT_TRUE(!r);
        EXPECT_LT(clock::now() - start, std::chrono::seconds(5));
        EXPECT_EQ(r.error().code, jsonrpc::code::protocol_violation);
        EXPECT_TRUE(contains(r.error().message, "over the 1 MiB message size limit")) << r.error().message;
        json::object small;
        small["message"] = "fine";
        EXPECT_TRUE(co_await c.session->call_tool("echo", small));
        co_await c.session->close();
    });
}

TEST(Failure, HungServerTimesOutAtItsStartupTimeout) {
    run([&]() -> awaitable<void> {
        mcp::ClientOptions o;
        o.server_name = "hung";
        o.connect_timeout = std::chrono::milliseconds(1000);
        o.probe_timeout = std::chrono::milliseconds(300);
        const auto start = clock::now();
        std::vector<std::string> c_args{"30"};  // GCC 12: no init-list in co_await
        auto c = co_await connect("sleep", c_args, o);
        const auto took = clock::now() - start;
        CO_ASSERT_TRUE(!c.session);
        EXPECT_GE(took, std::chrono::milliseconds(900));
        EXPECT_LT(took, std::chrono::seconds(5));  // includes SIGTERM of the hung process
        EXPECT_TRUE(contains(c.error, "server \"hung\"")) << c.error;
        EXPECT_TRUE(contains(c.error, "timed out")) << c.error;
    });
}

// Closing a server that never sent a message (a hung start): SIGTERM at once. Its stdin grace is an hour here, so
// waiting it out would fail the test by its timeout.
TEST(Failure, CloseSendsSigtermAtOnceToAServerThatNeverStarted) {
    run([&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto seen = std::make_shared<std::string>();
        transport::StdioProcessOptions po;
        po.command = "sh";
        // Never reads its stdin nor writes a message; says "TERM" on SIGTERM.
        po.args = {"-c", "trap 'echo TERM >&2; exit 0' TERM; while :; do sleep 0.05; done"};
        po.exit_grace = std::chrono::hours(1);
        po.on_stderr_line = [seen](std::string_view line) { *seen += std::string(line) + ";"; };
        auto ch = transport::StdioProcessChannel::spawn(ex, po);
        CO_ASSERT_TRUE(ch);
        asio::steady_timer settle(ex, std::chrono::milliseconds(200));  // the shell sets its trap
        co_await settle.async_wait(asio::use_awaitable);
        co_await (*ch)->close();
        EXPECT_TRUE((*ch)->exited());
        EXPECT_TRUE(contains(*seen, "TERM;")) << *seen;  // (sh may also report its `sleep` "Terminated")
    });
}

// The first child of `pid`: the real server under a wrapper (npx runs it so; here `sh`).
int child_of(int pid) {
    std::string out;
    return run_command(fmt::format("cat /proc/{0}/task/{0}/children", pid), out) == 0 ? std::atoi(out.c_str()) : 0;
}

// A stopped server (SIGSTOP) looks like a slow one from its pipes. Its waiting calls fail with `unavailable`, naming
// the stop, instead of waiting out their timeout (an hour here); once resumed (SIGCONT) it answers again on the
// same connection. The stopped process is the wrapper's child, as with npx.
TEST(Failure, StoppedServerFailsItsCallsAtOnceAndAnswersAgainOnceResumed) {
    run([&]() -> awaitable<void> {
        mcp::ClientOptions o;
        o.server_name = "frozen";
        o.request_timeout = std::chrono::hours(1);
        std::vector<std::string> c_args{"-c", demo_server() + "; true"};  // sh stays as the parent
        auto c = co_await connect("sh", c_args, o);
        CO_ASSERT_TRUE(c.session);
        const int server = child_of(c.process->pid());
        CO_ASSERT_TRUE(server > 0);

        ::kill(server, SIGSTOP);
        json::object args;
        args["message"] = "hello";
        auto r = co_await c.session->call_tool("echo", args);
        CO_ASSERT_TRUE(!r);
        EXPECT_EQ(r.error().code, jsonrpc::code::unavailable) << r.error().message;
        const auto& msg = r.error().message;
        EXPECT_TRUE(contains(msg, "server \"frozen\"")) << msg;
        EXPECT_TRUE(contains(msg, fmt::format("process {}, started by its process {}, is stopped (SIGSTOP or SIGTSTP)", server,
                                              c.process->pid())))
            << msg;
        EXPECT_TRUE(contains(msg, "tools/call")) << msg;
        EXPECT_TRUE(c.session->connection().is_open());

        ::kill(server, SIGCONT);
        auto again = co_await c.session->call_tool("echo", args);
        CO_ASSERT_TRUE(again) << again.error().message;
        co_await c.session->close();
    });
}

// A stopped process the server started that does not write to its stdout (a shell server's stopped job) does not
// keep the server from answering: its calls go on.
TEST(Failure, AStoppedChildNotWritingToTheServersStdoutIsNotAStoppedServer) {
    run([&]() -> awaitable<void> {
        std::vector<std::string> c_args{"-c", "sleep 300 >/dev/null 2>&1 & exec " + demo_server()};
        auto c = co_await connect("sh", c_args);
        CO_ASSERT_TRUE(c.session);
        const int job = child_of(c.process->pid());
        CO_ASSERT_TRUE(job > 0);
        ::kill(job, SIGSTOP);
        auto ex = co_await asio::this_coro::executor;
        asio::steady_timer settle(ex, std::chrono::milliseconds(100));
        co_await settle.async_wait(asio::use_awaitable);
        EXPECT_FALSE(c.process->stalled()) << *c.process->stalled();
        json::object args;
        args["seconds"] = 1;  // long enough for several checks, with no message (progress) before the end
        args["steps"] = 1;
        auto r = co_await c.session->call_tool("slow", args);
        EXPECT_TRUE(r) << r.error().message;
        ::kill(job, SIGKILL);
        co_await c.session->close();
    });
}

// Closing a stopped server: it could not read the end of its stdin, so it gets SIGTERM (with SIGCONT) at once
// instead of after the stdin grace, an hour here.
TEST(Failure, CloseEndsAStoppedServerAtOnce) {
    run([&]() -> awaitable<void> {
        transport::StdioProcessOptions po;
        po.exit_grace = std::chrono::hours(1);
        po.term_grace = std::chrono::hours(1);
        auto c = co_await connect(demo_server(), std::vector<std::string>{}, po);
        CO_ASSERT_TRUE(c.session);
        ::kill(c.process->pid(), SIGSTOP);
        auto ex = co_await asio::this_coro::executor;
        asio::steady_timer tick(ex);
        for (int i = 0; i < 200 && !c.process->stalled(); ++i) {  // the stop takes effect asynchronously
            tick.expires_after(std::chrono::milliseconds(10));
            co_await tick.async_wait(asio::use_awaitable);
        }
        EXPECT_TRUE(c.process->stalled().has_value());
        co_await c.session->close();
        EXPECT_TRUE(c.process->exited());
        EXPECT_TRUE(contains(c.process->exit_description(), "SIGTERM")) << c.process->exit_description();
    });
}

TEST(Failure, CommandNotFoundAndBadWorkingDirectory) {
    run([&]() -> awaitable<void> {
        auto missing = co_await connect("switchboard-no-such-command", std::vector<std::string>{});
        EXPECT_TRUE(contains(missing.error, "command \"switchboard-no-such-command\" not found in PATH"))
            << missing.error;
        transport::StdioProcessOptions po;
        po.cwd = "/nonexistent/dir";
        auto bad_cwd = co_await connect(demo_server(), std::vector<std::string>{}, po);
        EXPECT_TRUE(contains(bad_cwd.error, "working directory \"/nonexistent/dir\" does not exist")) << bad_cwd.error;
    });
}

}  // namespace
}  // namespace switchboard::test
