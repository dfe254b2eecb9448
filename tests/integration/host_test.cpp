// The server pool and its main context against real processes: parallel start with misbehaving servers, reconnect after
// SIGKILL, name conflicts in either connect order, 10,000 concurrent calls, shutdown, hot reload, lazy servers,
// resources and prompts.
#include "host_harness.hpp"

#include <switchboard/agent/tool_runner.hpp>
#include <switchboard/host/context.hpp>
#include <switchboard/host/pool.hpp>
#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/llm/tool_result.hpp>

#include <fmt/format.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace switchboard::test {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using asio::awaitable;
using host::Event;
using host::Phase;
using clock = std::chrono::steady_clock;

// The pool and its main context as one object, with the OpenAI-style execution the agent layer will do (parse the
// model's argument text, resolve, call, format) so the assertions read as a model would see the results.
class Host {
public:
    static std::shared_ptr<Host> create(asio::any_io_executor ex, host::Config config, host::PoolOptions options) {
        auto h = std::make_shared<Host>();
        h->pool = host::ServerPool::create(std::move(ex), std::move(config), std::move(options));
        host::ContextOptions main;
        main.calls_to_unseen_servers = true;  // `lazy__tool` leases a lazy server for the call, as the CLI does
        h->main = host::Context::create(h->pool, main);
        return h;
    }
    std::shared_ptr<host::ServerPool> pool;
    std::shared_ptr<host::Context> main;

    void start() { pool->start(); }
    awaitable<void> wait_until_settled(std::chrono::milliseconds max) { return pool->wait_until_settled(max); }
    std::vector<host::ServerStatus> status() const { return pool->status(); }
    std::optional<host::ServerStatus> status(std::string_view s) const { return pool->status(s); }
    host::EventBus& events() { return pool->events(); }
    const host::ToolIndex& tool_index() { return main->tools(); }
    std::size_t active_calls() const { return pool->active_calls(); }
    awaitable<void> shutdown() { return pool->shutdown(); }
    awaitable<void> apply(host::Config c) { return pool->apply(std::move(c)); }

    awaitable<llm::ToolExecutionResult> execute_tool(llm::ToolCall call) {
        host::ToolCallOptions options;
        co_return co_await agent::execute_tool(*main, std::move(call), std::move(options));
    }
};

llm::ToolCall tool_call(std::string id, std::string name, std::string arguments) {
    llm::ToolCall c;
    c.id = std::move(id);
    c.name = std::move(name);
    c.arguments = std::move(arguments);
    return c;
}

int read_pid(const fs::path& file) {
    std::ifstream f(file);
    int pid = 0;
    f >> pid;
    return pid;
}

TEST(Host, TenServersStartInParallelDespiteHungExitingAndCrashLoopingOnes) {
    // Seven healthy demo servers (both eras), one that never answers, one that exits at start, one that connects and
    // is killed two seconds later (time to finish its handshake even under ASan on a loaded machine), again and again.
    std::vector<std::pair<std::string, std::string>> entries;
    for (int i = 0; i < 7; ++i)
        entries.push_back({"ok" + std::to_string(i), demo_entry(i % 2 ? R"("--legacy-only")" : R"("--modern-only")")});
    entries.push_back({"hung", sh_entry("sleep 1000", R"(, "startupTimeoutMs": 4000)")});
    entries.push_back({"exits", sh_entry("echo 'fatal: bad token' >&2; exit 3")});
    entries.push_back({"crashloop", sh_entry("(sleep 2; kill -9 $$) >/dev/null 2>&1 </dev/null & exec " + demo_server(),
                                             R"(, "maxReconnectAttempts": 3)")});
    run(
        [&]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            auto h = Host::create(ex, config_of(entries), fast_options());
            std::map<std::string, std::vector<Phase>> phases;
            std::map<std::string, clock::time_point> connected_at, error_at;
            h->events().subscribe([&](const Event& e) {
                if (e.kind != Event::Kind::phase_changed) return;
                phases[e.server].push_back(e.phase);
                if (e.phase == Phase::connected && !connected_at.count(e.server)) connected_at[e.server] = clock::now();
                if (e.phase == Phase::error) error_at[e.server] = clock::now();
            });
            const auto t0 = clock::now();
            h->start();
            // Usable at once: a call to a healthy server goes ahead while the hung one is still starting.
            json::object early;
            early["message"] = "early";
            host::ToolCallOptions no_options;
            auto r = co_await h->pool->call_tool("ok0", "echo", early, no_options);
            CO_ASSERT_TRUE(r.has_value());
            EXPECT_EQ(r->content.at(0).text(), "early");
            EXPECT_EQ(h->status("hung")->phase, Phase::initializing);

            co_await h->wait_until_settled(20s);
            for (int i = 0; i < 7; ++i) {
                auto name = "ok" + std::to_string(i);
                auto st = h->status(name);
                EXPECT_EQ(st->phase, Phase::connected) << name << ": " << st->last_error;
                EXPECT_EQ(st->tools, 9u);
                // Connected well before the hung server's timeout: nobody waited for it.
                EXPECT_LT(connected_at[name] - t0, 3500ms) << name;
            }
            auto hung = h->status("hung");
            EXPECT_EQ(hung->phase, Phase::error);
            EXPECT_NE(hung->last_error.find("did not finish starting within 4000 ms"), std::string::npos)
                << hung->last_error;
            EXPECT_GE(error_at["hung"] - t0, 3900ms);
            EXPECT_LT(error_at["hung"] - t0, 5000ms);  // at its timeout, not after closing it
            auto exits = h->status("exits");
            EXPECT_EQ(exits->phase, Phase::error);
            EXPECT_NE(exits->last_error.find("status 3"), std::string::npos) << exits->last_error;
            EXPECT_NE(exits->stderr_tail.find("fatal: bad token"), std::string::npos) << exits->stderr_tail;
            EXPECT_EQ(exits->reconnect_attempt, 0);  // a failed first start is final

            // The crash loop stops after the attempt limit.
            auto gave_up = co_await wait_phase(h->pool, "crashloop", Phase::error, 30s);
            CO_ASSERT_TRUE(gave_up);
            auto crash = h->status("crashloop");
            EXPECT_NE(crash->last_error.find("gave up after 3 reconnect attempts"), std::string::npos)
                << crash->last_error;
            EXPECT_EQ(std::count(phases["crashloop"].begin(), phases["crashloop"].end(), Phase::reconnecting), 3);
            EXPECT_EQ(crash->tools, 0u);
            EXPECT_FALSE(h->tool_index().exposed_name("crashloop", "echo"));
            // Every healthy server still answers.
            for (int i = 0; i < 7; ++i) {
                auto name = "ok" + std::to_string(i);
                json::object add;
                add["a"] = i;
                add["b"] = 1;
                auto ok = co_await h->pool->call_tool(name, "add", add, no_options);
                CO_ASSERT_TRUE(ok.has_value());
                EXPECT_EQ(ok->content.at(0).text(), std::to_string(i + 1));
            }
            co_await h->shutdown();
            for (const auto& st : h->status()) EXPECT_EQ(st.phase, Phase::disconnected) << st.name;
        },
        90s);
}

class HostEra : public ::testing::TestWithParam<std::string> {};

TEST_P(HostEra, ServerKilledDuringACallFailsItFastThenComesBack) {
    TempDir dir;
    const auto pid_file = dir.path / "pid";
    auto cfg = config_of(
        {{"demo", sh_entry("echo $$ > " + pid_file.string() + "; exec " + demo_server() + " " + GetParam())}});
    run(
        [&]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            auto h = Host::create(ex, cfg, fast_options());
            h->start();
            co_await h->wait_until_settled(20s);
            CO_ASSERT_EQ(h->status("demo")->phase, Phase::connected);
            const int pid = read_pid(pid_file);
            CO_ASSERT_TRUE(pid > 0);
            auto sub = co_await h->pool->subscribe_resource("demo", "demo://counter");
            CO_ASSERT_TRUE(sub.has_value());
            std::vector<std::string> updated;
            h->events().subscribe([&](const Event& e) {
                if (e.kind == Event::Kind::resource_updated) updated.push_back(e.uri);
            });

            // Kill the server while a slow call is running.
            asio::co_spawn(
                ex,
                [pid]() -> awaitable<void> {
                    co_await sleep_for(300ms);
                    ::kill(pid, SIGKILL);
                },
                asio::detached);
            const auto t0 = clock::now();
            auto r = co_await h->execute_tool(tool_call("c1", "slow", R"({"seconds": 20, "steps": 20})"));
            const auto elapsed = clock::now() - t0;
            EXPECT_EQ(r.status, llm::ToolExecutionResult::Status::failed) << r.text();
            EXPECT_TRUE(r.is_error);
            EXPECT_NE(r.text().find("disconnected during the call"), std::string::npos) << r.text();
            EXPECT_LT(elapsed, 300ms + 1s);

            // It comes back (a new process), with its tools, and later calls succeed.
            auto back = co_await wait_phase(h->pool, "demo", Phase::connected, 20s);
            CO_ASSERT_TRUE(back);
            EXPECT_NE(read_pid(pid_file), pid);
            EXPECT_EQ(h->status("demo")->reconnects, 1);
            EXPECT_TRUE(h->tool_index().find("echo"));
            auto ok = co_await h->execute_tool(tool_call("c2", "echo", R"({"message": "after"})"));
            EXPECT_EQ(ok.status, llm::ToolExecutionResult::Status::ok) << ok.text();
            EXPECT_EQ(ok.text(), "after");
            // The subscription was restored on the new process.
            auto bump = co_await h->execute_tool(tool_call("c3", "bump", "{}"));
            EXPECT_EQ(bump.text(), "counter = 1");
            for (int i = 0; i < 200 && updated.empty(); ++i) co_await sleep_for(10ms);
            EXPECT_EQ(updated, std::vector<std::string>{"demo://counter"});
            co_await h->shutdown();
        },
        60s);
}

INSTANTIATE_TEST_SUITE_P(Eras, HostEra, ::testing::Values("--modern-only", "--legacy-only"),
                         [](const auto& info) { return info.param == "--modern-only" ? "Modern" : "Legacy"; });

TEST_P(HostEra, ToolListChangesRebuildTheIndex) {
    auto cfg = config_of({{"demo", demo_entry(q(GetParam()) + R"(, "--dynamic-tools")")}});
    run(
        [&]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            auto h = Host::create(ex, cfg, fast_options());
            int tools_changed = 0;
            h->events().subscribe([&](const Event& e) {
                if (e.kind == Event::Kind::tools_changed) ++tools_changed;
            });
            h->start();
            co_await h->wait_until_settled(20s);
            EXPECT_EQ(h->tool_index().size(), 10u);
            EXPECT_FALSE(h->tool_index().find("extra"));
            const int before = tools_changed;
            auto added = co_await h->execute_tool(tool_call("1", "toggle_extra", "{}"));
            EXPECT_EQ(added.text(), "extra added");
            for (int i = 0; i < 300 && !h->tool_index().find("extra"); ++i) co_await sleep_for(10ms);
            CO_ASSERT_TRUE(h->tool_index().find("extra") != nullptr);
            EXPECT_GT(tools_changed, before);
            auto extra = co_await h->execute_tool(tool_call("2", "extra", "{}"));
            EXPECT_EQ(extra.text(), "extra");
            auto removed = co_await h->execute_tool(tool_call("3", "toggle_extra", "{}"));
            EXPECT_EQ(removed.text(), "extra removed");
            for (int i = 0; i < 300 && h->tool_index().find("extra"); ++i) co_await sleep_for(10ms);
            EXPECT_FALSE(h->tool_index().find("extra"));
            EXPECT_EQ(h->tool_index().size(), 10u);
            co_await h->shutdown();
        },
        60s);
}

TEST(Host, SameToolsOnTwoServersArePrefixedInEitherConnectOrder) {
    for (int order = 0; order < 2; ++order) {
        // The delayed server connects last.
        const std::string delayed = "sleep 0.7; exec " + demo_server();
        auto cfg = config_of({{"a", order == 0 ? sh_entry(delayed) : demo_entry()},
                              {"b", order == 0 ? demo_entry(R"("--legacy-only")") : sh_entry(delayed)}});
        run(
            [&]() -> awaitable<void> {
                auto ex = co_await asio::this_coro::executor;
                auto h = Host::create(ex, cfg, fast_options());
                std::vector<std::string> connect_order;
                h->events().subscribe([&](const Event& e) {
                    if (e.kind == Event::Kind::phase_changed && e.phase == Phase::connected)
                        connect_order.push_back(e.server);
                });
                h->start();
                co_await h->wait_until_settled(20s);
                EXPECT_EQ(connect_order,
                          (order == 0 ? std::vector<std::string>{"b", "a"} : std::vector<std::string>{"a", "b"}));
                const auto& index = h->tool_index();
                EXPECT_FALSE(index.find("echo"));
                CO_ASSERT_TRUE(index.find("a__echo") != nullptr);
                CO_ASSERT_TRUE(index.find("b__echo") != nullptr);
                EXPECT_EQ(index.find("a__echo")->server, "a");
                EXPECT_EQ(index.find("b__echo")->server, "b");
                EXPECT_EQ(index.size(), 18u);
                auto r = co_await h->execute_tool(tool_call("x", "b__echo", R"({"message": "via b"})"));
                EXPECT_EQ(r.server, "b");
                EXPECT_EQ(r.text(), "via b");
                co_await h->shutdown();
            },
            60s);
    }
}

// A gateway's stateless requests each get a context of the same options; they take the index a keeper context holds
// instead of working it out (Context::share_index_of), so that index must follow every change a fresh one would see.
TEST(Host, AContextMadeLikeAnotherTakesItsIndexOnlyWhenItHasNoViewOfItsOwn) {
    auto cfg = config_of({{"a", demo_entry()}});
    run(
        [&]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            auto h = Host::create(ex, cfg, fast_options());
            h->start();
            co_await h->wait_until_settled(20s);
            auto keeper = host::Context::create(h->pool, host::ContextOptions{});
            for (int i = 0; i < 2000 && !keeper->tools().find("echo"); ++i) co_await sleep_for(10ms);
            CO_ASSERT_TRUE(keeper->tools().find("echo") != nullptr);
            auto like = host::Context::create(h->pool, host::ContextOptions{});
            like->share_index_of(*keeper);
            EXPECT_EQ(like->tool_index().get(), keeper->tool_index().get());
            EXPECT_TRUE(like->tools().find("echo"));
            // A tool switched off here: this context keeps an index of its own.
            auto own = host::Context::create(h->pool, host::ContextOptions{});
            own->set_tool_enabled("a", "echo", false);
            own->share_index_of(*keeper);
            EXPECT_FALSE(own->tools().find("echo"));
            EXPECT_TRUE(keeper->tools().find("echo"));
            // A reload that removes the server: a context made while the old server still stops no longer sees it.
            bool applied = false;
            asio::co_spawn(ex, h->apply(host::Config{}), [&](std::exception_ptr) { applied = true; });
            co_await asio::post(ex, asio::use_awaitable);  // the reload runs up to its wait for the stop
            CO_ASSERT_FALSE(applied);
            auto fresh = host::Context::create(h->pool, host::ContextOptions{});
            fresh->share_index_of(*keeper);
            EXPECT_FALSE(fresh->tools().find("echo"));
            for (int i = 0; i < 500 && !applied; ++i) co_await sleep_for(10ms);
            EXPECT_TRUE(applied);
            co_await h->shutdown();
        },
        60s);
}

constexpr int calls = 10'000;

TEST(Host, TenThousandConcurrentCallsAcrossFiveServersAreEachAnsweredOnce) {
    std::vector<std::pair<std::string, std::string>> entries;
    for (int i = 0; i < 5; ++i)
        entries.push_back({"s" + std::to_string(i), demo_entry(i % 2 ? R"("--legacy-only")" : "")});
    run(
        [&]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            auto h = Host::create(ex, config_of(entries), fast_options());
            h->start();
            co_await h->wait_until_settled(20s);
            std::vector<int> answered(calls, 0);
            std::vector<int> wrong;
            int done = 0;
            auto all_done = std::make_shared<core::OneShotEvent>();
            for (int i = 0; i < calls; ++i) {
                const auto name = "s" + std::to_string(i % 5) + "__echo";
                const auto message = "call-" + std::to_string(i);
                json::object args;
                args["message"] = message;
                auto call = tool_call("id-" + std::to_string(i), name, json::serialize(args));
                asio::co_spawn(
                    ex,
                    [h, call, i, message, &answered, &wrong]() -> awaitable<void> {
                        auto r = co_await h->execute_tool(call);
                        ++answered[i];
                        if (r.status != llm::ToolExecutionResult::Status::ok || r.text() != message ||
                            r.tool_call_id != call.id || r.server != "s" + std::to_string(i % 5))
                            wrong.push_back(i);
                    },
                    [&done, all_done](std::exception_ptr) {
                        if (++done == calls) all_done->set();
                    });
            }
            EXPECT_EQ(h->active_calls(), static_cast<std::size_t>(calls));
            auto finished = co_await all_done->wait_for(100s);
            CO_ASSERT_TRUE(finished);
            EXPECT_TRUE(wrong.empty()) << wrong.size() << " wrong answers, first " << wrong.front();
            EXPECT_EQ(std::count(answered.begin(), answered.end(), 1), calls);
            EXPECT_EQ(h->active_calls(), 0u);
            co_await h->shutdown();
        },
        120s);
}

TEST(Host, ShutdownWaitsForActiveCallsThenCancelsTheRest) {
    TempDir dir;
    auto cfg = config_of({{"demo", demo_entry()}});
    run(
        [&]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            auto options = fast_options();
            options.shutdown_deadline = 1500ms;
            auto h = Host::create(ex, cfg, options);
            h->start();
            co_await h->wait_until_settled(20s);
            std::optional<llm::ToolExecutionResult> quick, slow;
            asio::co_spawn(
                ex,
                [h, &quick]() -> awaitable<void> {
                    quick = co_await h->execute_tool(tool_call("q", "slow", R"({"seconds": 0.5, "steps": 1})"));
                },
                asio::detached);
            asio::co_spawn(
                ex,
                [h, &slow]() -> awaitable<void> {
                    slow = co_await h->execute_tool(tool_call("s", "slow", R"({"seconds": 30, "steps": 30})"));
                },
                asio::detached);
            co_await sleep_for(100ms);
            EXPECT_EQ(h->active_calls(), 2u);
            const auto t0 = clock::now();
            co_await h->shutdown();
            const auto took = clock::now() - t0;
            CO_ASSERT_TRUE(quick.has_value());
            CO_ASSERT_TRUE(slow.has_value());
            EXPECT_EQ(quick->status, llm::ToolExecutionResult::Status::ok) << quick->text();
            EXPECT_EQ(slow->status, llm::ToolExecutionResult::Status::cancelled) << slow->text();
            EXPECT_GE(took, 1400ms);
            // The server itself saw the cancellation (its stderr says so).
            EXPECT_NE(h->status("demo")->stderr_tail.find("slow: cancelled"), std::string::npos)
                << h->status("demo")->stderr_tail;
            EXPECT_LT(took, 6s);
            EXPECT_TRUE(h->tool_index().empty());
            // No new calls after shutdown.
            auto after = co_await h->execute_tool(tool_call("a", "echo", R"({"message": "x"})"));
            EXPECT_TRUE(after.is_error);
            EXPECT_NE(after.text().find("shutting down"), std::string::npos);
        },
        60s);
}

TEST(Host, ApplyConnectsAddedClosesRemovedRestartsChangedAndLeavesTheRestRunning) {
    auto before = config_of({{"keep", demo_entry()}, {"drop", demo_entry()}, {"change", demo_entry()}});
    auto after =
        config_of({{"keep", demo_entry()}, {"change", demo_entry(R"("--legacy-only")")}, {"added", demo_entry()}});
    run(
        [&]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            auto h = Host::create(ex, before, fast_options());
            h->start();
            co_await h->wait_until_settled(20s);
            auto keep_session = co_await h->pool->session("keep");
            CO_ASSERT_TRUE(keep_session.has_value());
            std::optional<llm::ToolExecutionResult> in_flight;
            asio::co_spawn(
                ex,
                [h, &in_flight]() -> awaitable<void> {
                    in_flight = co_await h->execute_tool(tool_call("k", "keep__slow", R"({"seconds": 1, "steps": 2})"));
                },
                asio::detached);
            co_await sleep_for(100ms);
            co_await h->apply(after);
            co_await h->wait_until_settled(20s);
            EXPECT_FALSE(h->status("drop"));
            EXPECT_EQ(h->status("added")->phase, Phase::connected);
            EXPECT_EQ(h->status("change")->phase, Phase::connected);
            EXPECT_EQ(h->status("change")->era, mcp::Era::legacy);
            auto keep_again = co_await h->pool->session("keep");
            EXPECT_EQ(keep_again->get(), keep_session->get());  // untouched
            for (int i = 0; i < 300 && !in_flight; ++i) co_await sleep_for(10ms);
            CO_ASSERT_TRUE(in_flight.has_value());
            EXPECT_EQ(in_flight->status, llm::ToolExecutionResult::Status::ok) << in_flight->text();
            EXPECT_TRUE(h->tool_index().find("added__echo"));
            EXPECT_FALSE(h->tool_index().find("drop__echo"));
            co_await h->shutdown();
        },
        60s);
}

TEST(Host, LazyServersStartForACallAndStopAfterItAndMalformedArgumentsComeBackAsErrors) {
    auto cfg = config_of({{"lazy", R"({"command": )" + q(demo_server()) + R"(, "lazy": true})"}});
    run(
        [&]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            auto h = Host::create(ex, cfg, fast_options());
            h->start();
            co_await h->wait_until_settled(5s);
            EXPECT_EQ(h->status("lazy")->phase, Phase::dormant);
            EXPECT_TRUE(h->tool_index().empty());  // the main context never lists a lazy server's tools
            auto r = co_await h->execute_tool(tool_call("1", "lazy__echo", R"({"message": "wake"})"));
            EXPECT_EQ(r.text(), "wake");
            // Leased for the call only (keepWarmSeconds 0): stopped again after it.
            EXPECT_TRUE(co_await wait_phase(h->pool, "lazy", Phase::dormant, 5s)) << h->status("lazy")->lifecycle();
            EXPECT_EQ(h->status("lazy")->lifecycle(), "dormant");
            auto bad = co_await h->execute_tool(tool_call("2", "lazy__echo", R"({"message": )"));
            EXPECT_EQ(bad.status, llm::ToolExecutionResult::Status::bad_arguments);
            EXPECT_NE(bad.text().find("not valid JSON"), std::string::npos) << bad.text();
            auto unknown = co_await h->execute_tool(tool_call("3", "nope", "{}"));
            EXPECT_EQ(unknown.status, llm::ToolExecutionResult::Status::unknown_tool);
            EXPECT_NE(unknown.text().find("no tool \"nope\""), std::string::npos) << unknown.text();
            co_await h->shutdown();
        },
        60s);
}

TEST_P(HostEra, ResourcesCacheSubscriptionsAttachmentsAndPrompts) {
    auto cfg = config_of({{"demo", demo_entry(q(GetParam()))}});
    run(
        [&]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            auto h = Host::create(ex, cfg, fast_options());
            std::vector<std::string> updated;
            h->events().subscribe([&](const Event& e) {
                if (e.kind == Event::Kind::resource_updated) updated.push_back(e.uri);
            });
            h->start();
            co_await h->wait_until_settled(20s);
            EXPECT_EQ(h->main->resources().size(), 13u);
            EXPECT_EQ(h->main->resource_templates().size(), 1u);
            auto listing = co_await h->pool->list_resources("demo");
            CO_ASSERT_TRUE(listing.has_value());
            EXPECT_EQ(listing->resources.size(), 13u);

            // Subscribed: cached until the server says it changed (legacy; a modern server says ttlMs 0 for it).
            auto sub = co_await h->pool->subscribe_resource("demo", "demo://counter");
            CO_ASSERT_TRUE(sub.has_value());
            auto first = co_await h->pool->read_resource("demo", "demo://counter");
            CO_ASSERT_TRUE(first.has_value());
            EXPECT_EQ(h->pool->content_cache().size(), GetParam() == "--legacy-only" ? 1u : 0u);
            auto bump = co_await h->execute_tool(tool_call("b", "bump", "{}"));
            EXPECT_EQ(bump.text(), "counter = 1");
            for (int i = 0; i < 200 && updated.empty(); ++i) co_await sleep_for(10ms);
            EXPECT_EQ(updated, std::vector<std::string>{"demo://counter"});
            EXPECT_EQ(h->pool->content_cache().size(), 0u);  // invalidated
            auto second = co_await h->pool->read_resource("demo", "demo://counter");
            CO_ASSERT_TRUE(second.has_value());
            EXPECT_NE(second->contents.at(0).text, first->contents.at(0).text);

            // Attachments: loaded, taken by the next message, then cleared.
            auto a = co_await h->main->attach_resource("demo", "demo://greeting/Ann");
            auto b = co_await h->main->attach_resource("demo", "demo://no-such-thing");
            EXPECT_NE(a, b);
            EXPECT_FALSE(h->main->attachments().any_loading());
            auto taken = h->main->consume_attachments();
            CO_ASSERT_EQ(taken.size(), 2u);
            CO_ASSERT_TRUE(taken[0].content.has_value());
            EXPECT_EQ(taken[0].content->contents.at(0).text.value_or(""), "Hello, Ann!");
            EXPECT_FALSE(taken[1].content.has_value());
            EXPECT_FALSE(taken[1].error.empty());
            EXPECT_TRUE(h->main->attachments().items().empty());

            // Prompts and completion.
            auto prompts = h->main->prompts();
            EXPECT_EQ(prompts.size(), 3u);
            EXPECT_EQ(prompts.at(0).server, "demo");
            std::map<std::string, std::string> args{{"name", "Ann"}};
            auto p = co_await h->pool->get_prompt("demo", "greet", args);
            CO_ASSERT_TRUE(p.has_value());
            EXPECT_FALSE(p->messages.empty());
            json::object ref;
            ref["type"] = "ref/prompt";
            ref["name"] = "greet";
            std::map<std::string, std::string> no_context;
            auto c = co_await h->pool->complete("demo", ref, "name", "A", no_context);
            CO_ASSERT_TRUE(c.has_value());
            EXPECT_EQ(c->values, std::vector<std::string>{"Alice"});
            co_await h->shutdown();
        },
        60s);
}

TEST_P(HostEra, ReadsAskTheServerUnlessItSaidTheyStayFresh) {
    const bool modern = GetParam() == "--modern-only";
    auto cfg = config_of({{"demo", demo_entry(q(GetParam()))}});
    run(
        [&]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            auto h = Host::create(ex, cfg, fast_options());
            h->start();
            co_await h->wait_until_settled(20s);
            // The counter says nothing of freshness (legacy) or ttlMs 0 (modern): never kept, so a read after bump
            // sees it, whoever reads.
            auto before = co_await h->pool->read_resource("demo", "demo://counter");
            CO_ASSERT_TRUE(before.has_value());
            EXPECT_EQ(before->contents.at(0).text.value_or(""), "0");
            auto bump = co_await h->execute_tool(tool_call("b", "bump", "{}"));
            EXPECT_EQ(bump.text(), "counter = 1");
            auto after = co_await h->pool->read_resource("demo", "demo://counter");
            CO_ASSERT_TRUE(after.has_value());
            EXPECT_EQ(after->contents.at(0).text.value_or(""), "1");
            EXPECT_FALSE(h->pool->cached_resource("demo", "demo://counter"));

            // The readme: a modern server says ttlMs 60000, so automatic reads may be answered from the cache; a
            // person's (fresh) read asks the server and stores its answer anew. A legacy server says nothing: kept
            // nowhere.
            auto readme = co_await h->pool->read_resource("demo", "demo://text/readme", host::ReadMode::fresh);
            CO_ASSERT_TRUE(readme.has_value());
            auto kept = h->pool->cached_resource("demo", "demo://text/readme");
            EXPECT_EQ(bool(kept), modern);
            if (kept) {
                co_await sleep_for(200ms);
                EXPECT_GE(h->pool->cached_resource("demo", "demo://text/readme")->age, 200ms);
                auto again = co_await h->pool->read_resource("demo", "demo://text/readme", host::ReadMode::fresh);
                CO_ASSERT_TRUE(again.has_value());
                EXPECT_LT(h->pool->cached_resource("demo", "demo://text/readme")->age, 150ms);
            }
            co_await h->shutdown();
        },
        60s);
}

TEST_P(HostEra, SubscriptionsAreCountedAndTheLastHolderUnsubscribes) {
    auto cfg = config_of({{"demo", demo_entry(q(GetParam()))}});
    run(
        [&]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            auto h = Host::create(ex, cfg, fast_options());
            int updates = 0;
            h->events().subscribe([&](const Event& e) {
                if (e.kind == Event::Kind::resource_updated) ++updates;
            });
            h->start();
            co_await h->wait_until_settled(20s);
            const auto bump_and_wait = [&]() -> awaitable<int> {
                const int seen = updates;
                co_await h->execute_tool(tool_call("b", "bump", "{}"));
                for (int i = 0; i < 50 && updates == seen; ++i) co_await sleep_for(10ms);
                co_return updates - seen;
            };
            auto step1 = co_await h->pool->subscribe_resource("demo", "demo://counter");
            CO_ASSERT_TRUE(step1.has_value());
            auto step2 = co_await h->pool->subscribe_resource("demo", "demo://counter");
            CO_ASSERT_TRUE(step2.has_value());
            // Subscribed: kept until the server says it changed (a legacy server; a modern one says ttlMs 0 for
            // it, never to be kept).
            auto read = co_await h->pool->read_resource("demo", "demo://counter");
            CO_ASSERT_TRUE(read.has_value());
            EXPECT_EQ(bool(h->pool->cached_resource("demo", "demo://counter")), GetParam() == "--legacy-only");
            const int first = co_await bump_and_wait();
            EXPECT_EQ(first, 1);
            EXPECT_FALSE(h->pool->cached_resource("demo", "demo://counter"));  // dropped by the update
            // One holder lets go: the other still hears of changes.
            auto step3 = co_await h->pool->unsubscribe_resource("demo", "demo://counter");
            CO_ASSERT_TRUE(step3.has_value());
            const int second = co_await bump_and_wait();
            EXPECT_EQ(second, 1);
            // The last one: the server is told, and says no more.
            auto step4 = co_await h->pool->unsubscribe_resource("demo", "demo://counter");
            CO_ASSERT_TRUE(step4.has_value());
            const int third = co_await bump_and_wait();
            EXPECT_EQ(third, 0);
            co_await h->shutdown();
        },
        60s);
}

TEST_P(HostEra, AServersLogMessagesAreKeptAtTheLevelItIsAskedFor) {
    auto cfg = config_of({{"demo", demo_entry(q(GetParam()))}});
    run(
        [&]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            auto h = Host::create(ex, cfg, fast_options());
            h->start();
            co_await h->wait_until_settled(20s);
            const auto slow = [&]() -> awaitable<void> {
                auto r = co_await h->execute_tool(tool_call("s", "slow", R"({"seconds": 0.1, "steps": 2})"));
                EXPECT_EQ(r.text(), "done after 2 steps");
                co_await sleep_for(100ms);  // a message may follow the result
            };
            auto step5 = co_await h->pool->set_log_level("demo", "info");
            CO_ASSERT_TRUE(step5.has_value());
            EXPECT_EQ(h->status("demo")->log_level, "info");
            co_await slow();
            auto logs = h->pool->recent_logs("demo");
            CO_ASSERT_EQ(logs.size(), 2u);
            EXPECT_EQ(mcp::string_field(logs[0].params.as_object(), "level"), "info");
            EXPECT_EQ(std::string(logs[0].params.at("data").as_string()), "slow: step 1 of 2 done");
            EXPECT_EQ(mcp::string_field(logs[1].params.as_object(), "level"), "notice");
            // From warning up: neither info nor notice comes any more.
            auto step6 = co_await h->pool->set_log_level("demo", "warning");
            CO_ASSERT_TRUE(step6.has_value());
            co_await slow();
            EXPECT_EQ(h->pool->recent_logs("demo").size(), 2u);
            auto bad = co_await h->pool->set_log_level("demo", "loud");
            EXPECT_FALSE(bad.has_value());
            co_await h->shutdown();
        },
        60s);
}

TEST(Host, ListChangesLogMessagesAndProgressFromTheOfficialEverythingServer) {
    auto cmd = everything_command();
    ASSERT_FALSE(cmd.empty());
    json::array args;
    for (std::size_t i = 1; i < cmd.size(); ++i) args.emplace_back(cmd[i]);
    auto cfg =
        config_of({{"everything", R"({"command": )" + q(cmd[0]) + R"(, "args": )" + json::serialize(args) + "}"}});
    run(
        [&]() -> awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            auto h = Host::create(ex, cfg, fast_options());
            int resources_changed = 0, logs = 0, progress = 0;
            h->events().subscribe([&](const Event& e) {
                if (e.kind == Event::Kind::resources_changed && e.server == "everything") ++resources_changed;
                if (e.kind == Event::Kind::log_message) ++logs;
                if (e.kind == Event::Kind::progress && e.call_id == "long") ++progress;
            });
            h->start();
            co_await h->wait_until_settled(30s);
            CO_ASSERT_EQ(h->status("everything")->phase, Phase::connected);
            const auto before = h->main->resources().size();
            const int changed_before = resources_changed;

            // The tool registers a session resource: the server sends notifications/resources/list_changed.
            auto r = co_await h->execute_tool(tool_call(
                "gz", "gzip-file-as-resource",
                R"({"name": "hello.gz", "data": "data:text/plain;base64,SGVsbG8=", "outputType": "resourceLink"})"));
            EXPECT_EQ(r.status, llm::ToolExecutionResult::Status::ok) << r.text();
            EXPECT_NE(r.text().find("Resource link: "), std::string::npos) << r.text();
            for (int i = 0; i < 300 && h->main->resources().size() == before; ++i) co_await sleep_for(10ms);
            EXPECT_EQ(h->main->resources().size(), before + 1);
            EXPECT_GT(resources_changed, changed_before);
            bool found = false;
            for (const auto& res : h->main->resources())
                found = found || res.resource.uri.find("hello.gz") != std::string::npos;
            EXPECT_TRUE(found);

            // Progress of a tool call is raised as an event with the call's id.
            auto p = co_await h->execute_tool(
                tool_call("long", "trigger-long-running-operation", R"({"duration": 1, "steps": 3})"));
            EXPECT_EQ(p.status, llm::ToolExecutionResult::Status::ok) << p.text();
            EXPECT_EQ(progress, 3);

            // Server log messages are raised as events.
            auto t = co_await h->execute_tool(tool_call("log", "toggle-simulated-logging", "{}"));
            EXPECT_EQ(t.status, llm::ToolExecutionResult::Status::ok) << t.text();
            for (int i = 0; i < 600 && logs == 0; ++i) co_await sleep_for(10ms);
            EXPECT_GT(logs, 0);
            co_await h->shutdown();
        },
        90s);
}

}  // namespace
}  // namespace switchboard::test
