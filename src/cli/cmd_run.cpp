// `switchboard run "TASK"`: one task, no questions asked. The answer goes to stdout, progress (tool calls and their
// one-line results) to stderr. Tools run only when --allow-tools or --yes allows them; the model is told about the
// others. Sampling requests are declined unless --allow-sampling, elicitations are declined.
//
// Exit status: 0 done, 1 error, 3 turn limit, 130 cancelled (Ctrl-C).
#include "agent_session.hpp"

#include <switchboard/agent/server_requests.hpp>

#include <fmt/format.h>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>

namespace switchboard::cli {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

namespace {

int exit_status(agent::StopReason r) {
    switch (r) {
    case agent::StopReason::done: return 0;
    case agent::StopReason::max_turns: return 3;
    case agent::StopReason::cancelled: return 130;
    case agent::StopReason::error: return 1;
    }
    return 1;
}

agent::ServerRequestOptions server_request_options(std::shared_ptr<llm::Client> llm, const AgentOptions& options) {
    agent::ServerRequestOptions o;
    o.llm = llm;
    if (options.allow_sampling) {
        o.approve_sampling = [](const std::string& server, const json::object&) -> awaitable<bool> {
            fmt::print(stderr, "switchboard: server \"{}\" uses the model (sampling, allowed by --allow-sampling)\n",
                       server);
            co_return true;
        };
    } else {
        o.approve_sampling = [](const std::string& server, const json::object&) -> awaitable<bool> {
            fmt::print(stderr,
                       "switchboard: server \"{}\" asked to use the model (sampling): declined (--allow-sampling "
                       "allows it)\n",
                       server);
            co_return false;
        };
    }
    o.elicit = [](const std::string& server, const json::object& params) -> awaitable<agent::ElicitationAnswer> {
        const auto* m = params.if_contains("message");
        fmt::print(stderr, "switchboard: server \"{}\" asked the user{}{}: declined (run asks no questions)\n", server,
                   m && m->is_string() ? ": " : "", m && m->is_string() ? std::string(m->get_string()) : "");
        co_return agent::ElicitationAnswer{};
    };
    o.roots = roots_of(options);
    return o;
}

// `run --agent NAME`: that agent (or skill) on the task, in its fork, as the main conversation would call it.
awaitable<agent::RunResult> run_named(agent::ForkEnvironment env, std::string name, std::string task,
                                      agent::Observer& observer) {
    const agent::Definition* definition = nullptr;
    for (const auto& d : env.definitions)
        if (d.name == name && (!definition || d.kind == agent::Definition::Kind::agent)) definition = &d;
    if (!definition) {
        agent::RunResult r;
        r.stop = agent::StopReason::error;
        r.error = fmt::format("no agent or skill \"{}\" (see `switchboard agents`)", name);
        co_return r;
    }
    auto fork = co_await agent::run_fork(*definition, std::move(task), env, observer, 1);
    if (!fork.error.empty()) {
        fork.run.stop = agent::StopReason::error;
        fork.run.error = fork.error;
    }
    co_return fork.run;
}

}  // namespace

awaitable<int> run_task(const host::Config& config, const GlobalOptions& g, AgentOptions options, std::string task) {
    auto ex = co_await asio::this_coro::executor;
    auto setup = agent_setup(config, options, ex);
    if (!setup) co_return 1;
    auto llm = setup->llm;
    auto session = setup->session;
    session->title_hint = task;
    host::PoolOptions pool_options;
    pool_options.handlers = agent::make_server_request_handlers(server_request_options(llm, options));

    co_return co_await with_host(config, Settle::all, std::move(pool_options), [&](Host& h) -> awaitable<int> {
        report_failures(*h.pool);
        agent::LoopOptions loop;
        loop.max_turns = options.max_turns;
        auto definitions = co_await all_definitions(h.pool);
        auto& conversation = session->start(h, llm, loop, options, std::move(definitions));
        session->offer_tool_search(h);
        agent::Observer observer;
        observer.on_tool_start = [](const llm::ToolCall& call, const std::string& server) {
            fmt::print(stderr, "{}\n", tool_start_line(call, server));
        };
        observer.on_tool_end = [](const agent::ToolCallRecord& record, const llm::ToolExecutionResult& result) {
            if (record.server.empty() || record.denied) fmt::print(stderr, "→ {} {}\n", record.name, record.arguments);
            fmt::print(stderr, "{}\n", tool_end_line(record, result, 1));
        };
        observer.on_task = [session](const llm::ToolCall& call, const std::string& server, const mcp::TaskProgress& t) {
            fmt::print(stderr, "{}\n", task_status_line(t));
            session->track_task(call, server, t);
        };
        observer.on_notice = [](std::string_view text) { fmt::print(stderr, "switchboard: {}\n", text); };
        observer.on_messages = [session](std::span<const llm::Message> m, std::span<const json::object> meta) {
            session->persist(m, meta);
        };

        // Ctrl-C cancels the run: the model's stream is closed and running tool calls are cancelled on their servers.
        asio::cancellation_signal cancel;
        asio::signal_set signals(ex, SIGINT, SIGTERM);
        signals.async_wait([&cancel](boost::system::error_code ec, int) {
            if (!ec) cancel.emit(asio::cancellation_type::terminal);
        });
        // A resumed conversation's tasks that were running when Switchboard stopped: their results first.
        const bool resumed_tasks =
            co_await asio::co_spawn(ex, session->finish_running_tasks(h, observer),
                                    asio::bind_cancellation_slot(cancel.slot(), asio::use_awaitable));
        agent::RunResult result;  // one co_await per statement (GCC 12)
        if (task.empty() && !resumed_tasks) {
            // `run --resume ID` alone: nothing was left running, so there is nothing to answer.
            signals.cancel();
            fmt::print(stderr, "switchboard: conversation {} has no running tasks to finish; give a task to go on "
                               "with it\n",
                       session->id());
            co_return 2;
        }
        if (task.empty()) {
            // The model answers with the tasks' results, as `chat --resume` does, with no new message.
            result = co_await asio::co_spawn(ex, conversation.run(observer),
                                             asio::bind_cancellation_slot(cancel.slot(), asio::use_awaitable));
        } else if (options.agent.empty()) {
            result = co_await asio::co_spawn(ex, conversation.send(task, observer),
                                             asio::bind_cancellation_slot(cancel.slot(), asio::use_awaitable));
        } else {
            result = co_await asio::co_spawn(
                ex, run_named(session->fork_environment(), options.agent, task, observer),
                asio::bind_cancellation_slot(cancel.slot(), asio::use_awaitable));
        }
        signals.cancel();

        if (result.stop == agent::StopReason::error)
            fmt::print(stderr, "switchboard: the model failed: {}\n", result.error);
        if (result.stop == agent::StopReason::max_turns)
            fmt::print(stderr, "switchboard: stopped after {} model turns (--max-turns)\n", result.turns);
        if (result.stop == agent::StopReason::cancelled) fmt::print(stderr, "switchboard: cancelled\n");
        if (g.json) {
            json::array calls;
            for (const auto& c : result.tool_calls) calls.push_back(c.to_json());
            json::object out{{"answer", result.answer},
                             {"conversationId", session->id()},
                             {"turns", result.turns},
                             {"stopReason", agent::to_string(result.stop)},
                             {"toolCalls", std::move(calls)},
                             {"usage", json::object{{"promptTokens", result.usage.prompt_tokens},
                                                    {"completionTokens", result.usage.completion_tokens}}}};
            if (!result.error.empty()) out["error"] = result.error;
            if (!result.trace_id.empty()) out["traceId"] = result.trace_id;
            print_json(std::move(out));
        } else if (!result.answer.empty()) {
            fmt::print("{}{}", result.answer, result.answer.back() == '\n' ? "" : "\n");
        }
        co_return exit_status(result.stop);
    });
}

}  // namespace switchboard::cli
