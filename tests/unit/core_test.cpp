// The base library: task group (cancel, join, exceptions), one-shot event, text helpers.
#include <switchboard/core/as_tuple.hpp>
#include <switchboard/core/json_number.hpp>
#include <switchboard/core/one_shot_event.hpp>
#include <switchboard/core/scope_exit.hpp>
#include <switchboard/core/spawn.hpp>
#include <switchboard/core/task_group.hpp>
#include <switchboard/core/text.hpp>
#include <switchboard/core/wakeup.hpp>

#include "coro_test.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/version.hpp>
#include <boost/asio/this_coro.hpp>

#include <cmath>

namespace switchboard::core {
namespace {

namespace asio = boost::asio;
using asio::awaitable;
using namespace std::chrono_literals;

awaitable<void> sleep_for(std::chrono::milliseconds d) {
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(as_tuple_awaitable);
}

TEST(TaskGroup, JoinWaitsForEveryTask) {
    asio::io_context ctx;
    test::run(ctx, [&]() -> awaitable<void> {
        TaskGroup group(co_await asio::this_coro::executor);
        int finished = 0;
        for (int i = 1; i <= 3; ++i)
            group.spawn(
                [&finished, i]() -> awaitable<void> {
                    co_await sleep_for(std::chrono::milliseconds(10 * i));
                    ++finished;
                },
                "sleeper");
        EXPECT_EQ(group.size(), 3u);
        co_await group.join();
        EXPECT_EQ(finished, 3);
        EXPECT_EQ(group.size(), 0u);
        co_await group.join();  // nothing running: returns at once
    });
}

TEST(TaskGroup, CancelStopsLongTasksAndRefusesNewOnes) {
    asio::io_context ctx;
    test::run(ctx, [&]() -> awaitable<void> {
        TaskGroup group(co_await asio::this_coro::executor);
        bool reached_end = false, cleaned_up = false;
        group.spawn(
            [&]() -> awaitable<void> {
                ScopeExit guard([&] { cleaned_up = true; });
                co_await sleep_for(1h);
                co_await sleep_for(1h);  // throws: the task was cancelled
                reached_end = true;
            },
            "long");
        co_await sleep_for(10ms);
        const auto t0 = std::chrono::steady_clock::now();
        co_await group.shutdown();
        EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
        EXPECT_FALSE(reached_end);
        EXPECT_TRUE(cleaned_up);
        EXPECT_TRUE(group.closed());
        EXPECT_FALSE(group.spawn([]() -> awaitable<void> { co_return; }, "late"));
    });
}

// A cancel after one task has ended (its entry erased by a post, or not yet) stops the task still running and leaves
// the group empty: the ended one's co_spawn must not be reached again.
TEST(TaskGroup, CancelAfterATaskEndedLeavesTheEndedOneAlone) {
    asio::io_context ctx;
    test::run(ctx, [&]() -> awaitable<void> {
        TaskGroup group(co_await asio::this_coro::executor);
        bool long_cancelled = false;
        group.spawn([]() -> awaitable<void> { co_await sleep_for(1ms); }, "short");
        group.spawn(
            [&]() -> awaitable<void> {
                ScopeExit guard([&] { long_cancelled = true; });
                co_await sleep_for(1h);
                co_await sleep_for(1h);
            },
            "long");
        co_await sleep_for(20ms);  // "short" has ended; no spawn since
        EXPECT_EQ(group.size(), 1u);
        co_await group.shutdown();
        co_await sleep_for(10ms);  // what the cancellation posted has run
        EXPECT_TRUE(long_cancelled);
        EXPECT_EQ(group.size(), 0u);
    });
}

// start(): the task's first steps run before start() returns (one that never suspends has ended by then); its handle
// cancels that one task; the group's cancel() and join() cover it like a spawned one.
TEST(TaskGroup, StartRunsAtOnceAndItsHandleCancelsThatTaskOnly) {
    asio::io_context ctx;
    test::run(ctx, [&]() -> awaitable<void> {
        TaskGroup group(co_await asio::this_coro::executor);
        int steps = 0;
        bool a_cancelled = false, b_done = false, c_cancelled = false;
        OneShotEvent b_go;
        group.start(keep_alive([&]() -> awaitable<void> {
                        ++steps;
                        co_return;
                    }),
                    "at once");
#if BOOST_VERSION == 108100
        EXPECT_EQ(steps, 1);  // ran inline (other Boost versions fall back to co_spawn, which posts)
#endif
        auto a = group.start(keep_alive([&]() -> awaitable<void> {
                                 ScopeExit guard([&] { a_cancelled = true; });
                                 ++steps;
                                 co_await sleep_for(1h);
                                 co_await sleep_for(1h);
                             }),
                             "a");
        group.start(keep_alive([&]() -> awaitable<void> {
                        co_await b_go.wait();
                        b_done = true;
                    }),
                    "b");
        for (int i = 0; i < 100 && steps < 2; ++i) co_await sleep_for(1ms);
        EXPECT_EQ(steps, 2);
        auto sa = a.lock();
        CO_ASSERT_TRUE(sa);
        sa->emit(asio::cancellation_type::terminal);
        sa.reset();
        for (int i = 0; i < 1000 && !a.expired(); ++i) co_await sleep_for(1ms);
        EXPECT_TRUE(a_cancelled);
        EXPECT_TRUE(a.expired());  // ended, and its entry is gone
        EXPECT_FALSE(b_done);      // the other one was not cancelled: it still waits
        EXPECT_EQ(group.size(), 1u);
        b_go.set();
        group.start(keep_alive([&]() -> awaitable<void> {
                        ScopeExit guard([&] { c_cancelled = true; });
                        co_await sleep_for(1h);
                        co_await sleep_for(1h);
                    }),
                    "c");
        for (int i = 0; i < 1000 && group.size() > 1; ++i) co_await sleep_for(1ms);
        EXPECT_TRUE(b_done);
        EXPECT_EQ(group.size(), 1u);  // c
        co_await group.shutdown();
        EXPECT_TRUE(c_cancelled);
        EXPECT_TRUE(group.start(keep_alive([]() -> awaitable<void> { co_return; }), "late").expired());
    });
}

TEST(TaskGroup, AnExceptionEndsOnlyItsTask) {
    asio::io_context ctx;
    test::run(ctx, [&]() -> awaitable<void> {
        TaskGroup group(co_await asio::this_coro::executor);
        bool other_done = false;
        group.spawn(
            []() -> awaitable<void> {
                throw std::runtime_error("boom");
                co_return;
            },
            "thrower");
        group.spawn(
            [&]() -> awaitable<void> {
                co_await sleep_for(20ms);
                other_done = true;
            },
            "other");
        co_await group.join();
        EXPECT_TRUE(other_done);
    });
}

TEST(OneShotEvent, WakesEveryWaiterAndHonoursDeadlines) {
    asio::io_context ctx;
    test::run(ctx, [&]() -> awaitable<void> {
        OneShotEvent ev;
        EXPECT_FALSE(co_await ev.wait_for(5ms));
        int woken = 0;
        auto ex = co_await asio::this_coro::executor;
        for (int i = 0; i < 3; ++i)
            spawn_logged(
                ex,
                [&]() -> awaitable<void> {
                    co_await ev.wait();
                    ++woken;
                },
                "waiter");
        co_await sleep_for(5ms);
        EXPECT_EQ(woken, 0);
        ev.set();
        co_await sleep_for(5ms);
        EXPECT_EQ(woken, 3);
        EXPECT_TRUE(co_await ev.wait_for(1h));
    });
}

TEST(Wakeup, WakeNowResumesTheWaiterInsideTheCallAndWakeQueuesIt) {
    asio::io_context ctx;
    test::run(ctx, [&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        Wakeup w(ex);
        int resumed = 0;
        boost::system::error_code last = asio::error::timed_out;
        auto waiter = [&]() -> awaitable<void> {
            for (int i = 0; i < 2; ++i) {
                auto [ec] = co_await w.async_wait(as_tuple_awaitable);
                last = ec;
                ++resumed;
            }
        };
        spawn_logged(ex, waiter, "waiter");
        co_await sleep_for(1ms);
        CO_ASSERT_TRUE(w.waiting());
        w.wake_now();
        EXPECT_EQ(resumed, 1);  // already: no event-loop turn in between
        EXPECT_FALSE(last);
        CO_ASSERT_TRUE(w.waiting());  // the waiter ran on to its next wait inside wake_now()
        w.wake();
        EXPECT_EQ(resumed, 1);  // queued
        EXPECT_FALSE(w.waiting());
        co_await sleep_for(1ms);
        EXPECT_EQ(resumed, 2);
        w.wake_now();  // nobody waits: nothing happens
        w.wake();
        EXPECT_EQ(resumed, 2);
    });
}

// A waiter on another executor (here a strand) is queued to it: never resumed inline, outside its strand.
TEST(Wakeup, AWaiterOnAnotherExecutorIsNotResumedInline) {
    asio::io_context ctx;
    test::run(ctx, [&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        Wakeup w(ex);
        bool resumed = false;
        asio::co_spawn(
            asio::make_strand(ctx),
            [&]() -> awaitable<void> {
                co_await w.async_wait(as_tuple_awaitable);
                resumed = true;
            },
            asio::detached);
        co_await sleep_for(1ms);
        CO_ASSERT_TRUE(w.waiting());
        w.wake_now();
        EXPECT_FALSE(resumed);
        co_await sleep_for(1ms);
        EXPECT_TRUE(resumed);
    });
}

TEST(Wakeup, ACancelledWaiterCompletesWithOperationAborted) {
    asio::io_context ctx;
    test::run(ctx, [&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        Wakeup w(ex);
        asio::cancellation_signal signal;
        boost::system::error_code got;
        bool done = false;
        asio::co_spawn(
            ex,
            [&]() -> awaitable<void> {
                auto [ec] = co_await w.async_wait(as_tuple_awaitable);
                got = ec;
                done = true;
            },
            asio::bind_cancellation_slot(signal.slot(), asio::detached));
        co_await sleep_for(1ms);
        CO_ASSERT_TRUE(w.waiting());
        signal.emit(asio::cancellation_type::terminal);
        EXPECT_FALSE(done);  // queued, not inside emit()
        co_await sleep_for(1ms);
        EXPECT_TRUE(done);
        EXPECT_EQ(got, asio::error::operation_aborted);
        EXPECT_FALSE(w.waiting());
        signal.emit(asio::cancellation_type::terminal);  // the slot no longer points at the Wakeup: harmless
    });
}

// The waiting coroutine owns the Wakeup that holds its handler (as a request owns its Pending): destroying the
// io_context must still unwind it. Without the Wakeup's service this cycle leaked (LeakSanitizer in the ASan run).
TEST(Wakeup, AWaiterStillThereWhenTheIoContextGoesIsUnwound) {
    bool unwound = false;
    {
        asio::io_context ctx;
        bool waiting = false;
        asio::co_spawn(
            ctx,
            [&unwound, &waiting]() -> awaitable<void> {
                ScopeExit mark([&unwound] { unwound = true; });
                auto w = std::make_shared<Wakeup>(co_await asio::this_coro::executor);
                waiting = true;  // the wait below starts in the same step
                co_await w->async_wait(as_tuple_awaitable);
                ADD_FAILURE() << "never woken, never resumed";
            },
            asio::detached);
        for (int i = 0; i < 100 && !waiting; ++i) ctx.run_one_for(10ms);
        EXPECT_TRUE(waiting);
        EXPECT_FALSE(unwound);
    }
    EXPECT_TRUE(unwound);
}

TEST(StartInline, ATaskThatNeverSuspendsFinishesInsideTheCall) {
    asio::io_context ctx;
    test::run(ctx, [&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        asio::cancellation_signal signal;
        int done = 0;
        std::exception_ptr error;
        auto on_done = [&](std::exception_ptr e) {
            ++done;
            error = e;
        };
        start_inline(
            ex, []() -> awaitable<void> { co_return; }(), signal.slot(), on_done);
#if BOOST_VERSION == 108100  // other versions fall back to co_spawn, which queues it
        EXPECT_EQ(done, 1);
#endif
        co_await sleep_for(1ms);
        EXPECT_EQ(done, 1);
        EXPECT_FALSE(error);

        // One that waits finishes later, from the event loop.
        start_inline(ex, sleep_for(2ms), signal.slot(), on_done);
        EXPECT_EQ(done, 1);
        co_await sleep_for(10ms);
        EXPECT_EQ(done, 2);

        // An exception reaches `done`.
        start_inline(
            ex,
            []() -> awaitable<void> {
                throw std::runtime_error("boom");
                co_return;
            }(),
            signal.slot(), on_done);
        co_await sleep_for(1ms);
        EXPECT_EQ(done, 3);
        EXPECT_TRUE(error);
        signal.emit(asio::cancellation_type::terminal);  // after the tasks ended: nothing to cancel, nothing breaks
    });
}

// As jsonrpc::Connection uses it: the signal lives in state that only `done` holds, so the signal goes when the task
// does, right after its last resumption (ASan checks that nothing touches it afterwards).
TEST(StartInline, TheSignalMayGoWithTheTask) {
    asio::io_context ctx;
    test::run(ctx, [&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        struct State {
            asio::cancellation_signal signal;
        };
        bool done = false;
        {
            auto state = std::make_shared<State>();
            start_inline(ex, sleep_for(2ms), state->signal.slot(), [state, &done](std::exception_ptr) { done = true; });
        }
        co_await sleep_for(10ms);
        EXPECT_TRUE(done);
        {
            auto state = std::make_shared<State>();
            start_inline(ex, sleep_for(1h), state->signal.slot(), [state, &done](std::exception_ptr) { done = false; });
            state->signal.emit(asio::cancellation_type::terminal);
        }
        co_await sleep_for(10ms);
        EXPECT_FALSE(done);  // cancelled, and `done` ran
    });
}

TEST(StartInline, TheSlotCancelsTheTask) {
    asio::io_context ctx;
    test::run(ctx, [&]() -> awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        asio::cancellation_signal signal;
        bool done = false, reached_end = false;
        std::exception_ptr error;
        auto task = [](bool& end) -> awaitable<void> {
            asio::steady_timer t(co_await asio::this_coro::executor, 1h);
            co_await t.async_wait(asio::use_awaitable);  // throws operation_aborted when cancelled
            end = true;
        };
        start_inline(ex, task(reached_end), signal.slot(), [&](std::exception_ptr e) {
            done = true;
            error = e;
        });
        co_await sleep_for(1ms);
        EXPECT_FALSE(done);
        const auto t0 = std::chrono::steady_clock::now();
        signal.emit(asio::cancellation_type::terminal);
        while (!done && std::chrono::steady_clock::now() - t0 < 5s) co_await sleep_for(1ms);
        EXPECT_TRUE(done);
        EXPECT_TRUE(error);
        EXPECT_FALSE(reached_end);
    });
}

TEST(RunAll, RunsConcurrently) {
    asio::io_context ctx;
    test::run(ctx, [&]() -> awaitable<void> {
        std::vector<awaitable<void>> tasks;
        for (int i = 0; i < 5; ++i) tasks.push_back(sleep_for(100ms));
        const auto t0 = std::chrono::steady_clock::now();
        co_await run_all(std::move(tasks));
        const auto took = std::chrono::steady_clock::now() - t0;
        EXPECT_GE(took, 100ms);
        EXPECT_LT(took, 450ms);  // not 5 × 100 ms one after another
    });
}

TEST(Text, Helpers) {
    EXPECT_EQ(size_text(512), "512 bytes");
    EXPECT_EQ(size_text(4096), "4.0 KiB");
    EXPECT_EQ(size_text(64u * 1024 * 1024), "64 MiB");
    EXPECT_EQ(size_text(1536u * 1024), "1.5 MiB");
    EXPECT_EQ(ascii_lower("Content-Type: ÄB"), "content-type: Äb");
    EXPECT_TRUE(iequals("MCP-Session-Id", "mcp-session-id"));
    EXPECT_FALSE(iequals("a", "ab"));
    // Only letters fold: bytes 0x20 apart that are not letters differ ('@' and '`', '[' and '{', '-' and CR).
    EXPECT_TRUE(iequals("x-Trace_ID.1", "X-TRACE_id.1"));
    EXPECT_FALSE(iequals("a@b", "a`b"));
    EXPECT_FALSE(iequals("[", "{"));
    EXPECT_FALSE(iequals("a-b", "a\rb"));
    EXPECT_FALSE(iequals("\xc4", "\xe4"));  // not ASCII letters: compared as bytes
    EXPECT_TRUE(icontains("Bearer-TOKEN-x", "token"));
    // The plain search first, then the case-blind one: the same answers as the case-blind search alone.
    EXPECT_TRUE(icontains("application/json, text/event-stream", "text/event-stream"));
    EXPECT_TRUE(icontains("Application/JSON", "application/json"));
    EXPECT_TRUE(icontains("text/html, */*;q=0.8", "*/*"));
    EXPECT_FALSE(icontains("application/json", "*/*"));
    EXPECT_FALSE(icontains("application/json", "application/jsonx"));
    EXPECT_FALSE(icontains("text/plain", "TEXT/HTML"));
    EXPECT_TRUE(icontains("a", ""));
    EXPECT_FALSE(icontains("", ""));
    EXPECT_FALSE(icontains("", "a"));
    EXPECT_EQ(shorten("héllo", 2), "h…");  // never cuts inside "é"
    EXPECT_EQ(first_line("one\ntwo"), "one");
    EXPECT_TRUE(glob_match("github__*", "github__create_issue"));
    EXPECT_TRUE(glob_match("*_issue", "github__create_issue"));
    EXPECT_TRUE(glob_match("e?ho", "echo"));
    EXPECT_TRUE(glob_match("*", ""));
    EXPECT_FALSE(glob_match("echo", "echo2"));
    EXPECT_FALSE(glob_match("a*b*c", "aXbXd"));
    EXPECT_TRUE(glob_match("a*b*c", "aXbXbc"));
    EXPECT_TRUE(is_valid_utf8("plain, é, 漢, 😀"));
    EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong "/"
    EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // a surrogate
    EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // past U+10FFFF
    EXPECT_FALSE(is_valid_utf8("cut \xE6\xBC"));      // truncated
    EXPECT_EQ(to_valid_utf8("a\xFF"
                            "b\xE6\xBC"
                            "c"),
              "a\uFFFD"
              "b\uFFFD\uFFFD"
              "c");
    EXPECT_EQ(to_valid_utf8("ok é"), "ok é");
}

TEST(JsonNumber, OutsideIntegersAreClampedOrRefusedNeverCastOutOfRange) {
    namespace json = boost::json;
    EXPECT_EQ(json_integer(json::value(42)), 42);
    EXPECT_EQ(json_integer(json::value(2.9)), 2);
    EXPECT_EQ(json_integer(json::value(1e300)), INT64_MAX);
    EXPECT_EQ(json_integer(json::value(-1e300)), INT64_MIN);
    EXPECT_EQ(json_integer(json::value(18446744073709551615ull)), INT64_MAX);
    EXPECT_EQ(json_integer(json::value(std::nan(""))), std::nullopt);
    EXPECT_EQ(json_integer(json::value("7")), std::nullopt);
    EXPECT_EQ(json_exact_integer(json::value(5000.0)), 5000);
    EXPECT_EQ(json_exact_integer(json::value(1.5)), std::nullopt);
    EXPECT_EQ(json_exact_integer(json::value(9223372036854775808.0)), std::nullopt);
    EXPECT_EQ(json_exact_integer(json::value(-9223372036854775808.0)), INT64_MIN);
    EXPECT_EQ(json_exact_integer(json::value(18446744073709551615ull)), std::nullopt);
    EXPECT_EQ(clamp_to_int64(1e19), INT64_MAX);
    EXPECT_EQ(clamp_to_int64(std::nan("")), 0);
}

}  // namespace
}  // namespace switchboard::core
